"""Graph analytics (SPEC §7): adapters project a store at a given ``now`` into plain
views, and algorithms are pure functions over them.

- :mod:`.views` — :class:`~.views.GraphView` (node/edge frames → igraph, networkx) of the
  co-activation graph, the anchor graph and the turn–anchor bipartite graph;
- :mod:`.ppr` — personalized PageRank, and the ``"ppr"`` recall method;
- :mod:`.communities` — Leiden communities and their description;
- :mod:`.surprises` — bridges, indirect-strong pairs, knowledge gaps, semantic mismatches;
- :mod:`.adapters` — what reads from / writes to a store;
- :mod:`.api` — the Memory methods (the ``akasha`` commands are in
  :mod:`akasha_explorer.cli.analysis`).
"""
