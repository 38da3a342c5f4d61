"""SPEC §7 personalized PageRank (HippoRAG-style): an explorer tool and a recall method.

:func:`personalized_pagerank` is igraph's ``personalized_pagerank`` (PRPACK) over a view
or graph with edge weights, from a reset distribution over seed nodes: the stationary
distribution of a walk that follows an edge with probability ``damping`` (chosen in
proportion to its weight) and jumps back to the seeds otherwise.

:func:`ppr_recall` is ``Memory.recall(..., method="ppr")``: the *same* seeds and dense
items as Akasha's stage 1 and 4 (taken from the engine's own
:func:`~akasha_explorer.engine.recall.recall` on the same inputs, so they cannot drift;
reset mass = each seed's energy after the FTS boost), then PageRank over the
co-activation graph of the nodes visible at ``now`` with effective weights (SPEC §3)
instead of RWR + graph_expand. It
returns a :class:`PPRTrace` — a :class:`~akasha_explorer.engine.trace.RecallTrace` whose
groups hold the PageRank order — so both methods compare side by side (``ranking()``,
``to_frame()``, ``activation``, ``dense``).

Decisions: the score of an item is its PageRank divided by the largest one (brightness
in [0, 1], the top item 1.0; the raw value is ``ppr`` in :class:`PPRTable` and
``current`` in the frame); activation = the top ``ACTIVATION_K`` with a positive score
(none when ``RELEVANCE_FLOOR`` is on and stage 1 found no relevant seed); the ranking
keeps ``max(24, 3 · max(10, RIPPLE_LIMIT))`` items; ripple_items = that ranking without
the dense items; ``PPR_DIRECTED`` off walks every COACT edge both ways (HippoRAG's graph
is undirected), on follows ``A → T`` only.

>>> import igraph as ig
>>> path = ig.Graph([(0, 1), (1, 2)]); path.es["weight"] = [1.0, 1.0]
>>> [round(x, 4) for x in personalized_pagerank(path, {0: 1.0}, damping=0.5).tolist()]
[0.5833, 0.3333, 0.0833]
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import igraph as ig
import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..config import Settings
from ..engine.bm25 import LexicalHits
from ..engine.dynamics import edge_eff
from ..engine.recall import recall
from ..engine.seeds import top_k
from ..engine.state import EdgeStore, NodeTable
from ..engine.trace import (
    FRAME_COLUMNS,
    GraphExpand,
    ItemList,
    MicroGraph,
    RecallTrace,
    Settlement,
)
from ..errors import InvalidInput
from .views import GraphView

__all__ = ["PPRTable", "PPRTrace", "personalized_pagerank", "ppr_recall"]


def personalized_pagerank(graph: GraphView | ig.Graph,
                          reset: Mapping[Any, float] | ArrayLike, *, damping: float = 0.5,
                          directed: bool = False, weight: str = "weight") -> NDArray[np.float64]:
    """PageRank of every vertex (vertex order, sums to 1) personalised on ``reset``.

    Parameters
    ----------
    graph
        A :class:`~.views.GraphView` (vertex i = ``nodes`` row i) or an igraph graph with
        a ``weight`` edge attribute (missing: all 1).
    reset
        Restart mass: a mapping from vertex id (view id / igraph ``name``) or position to
        a weight, or one non-negative value per vertex. Normalised to sum 1.
    damping
        Probability of following an edge (HippoRAG uses 0.5); ``1 − damping`` restarts.
    directed
        Follow edge directions (directed graphs only); else every edge goes both ways.

    >>> import igraph as ig
    >>> star = ig.Graph.Star(4); star.es["weight"] = [1.0, 1.0, 3.0]
    >>> p = personalized_pagerank(star, [1, 0, 0, 0], damping=0.85)
    >>> round(float(p.sum()), 6), bool(p[3] > p[1]), bool(np.isclose(p[1], p[2]))
    (1.0, True, True)
    """
    g = graph.to_igraph(attributes=False) if isinstance(graph, GraphView) else graph
    n = g.vcount()
    if n == 0:
        return np.zeros(0, np.float64)
    if isinstance(reset, Mapping):
        vec = np.zeros(n, np.float64)
        names = {v: i for i, v in enumerate(g.vs["name"])} if "name" in g.vs.attributes() else {}
        for key, val in reset.items():
            pos = names.get(key, key)
            if not isinstance(pos, int | np.integer) or not 0 <= int(pos) < n:
                raise InvalidInput(f"PageRank seed {key!r} is not a vertex of the graph")
            vec[int(pos)] += float(val)
    else:
        vec = np.asarray(reset, np.float64).ravel()
        if vec.shape[0] != n:
            raise InvalidInput(f"reset has {vec.shape[0]} values for {n} vertices")
    if not np.all(np.isfinite(vec)) or (vec < 0).any() or vec.sum() <= 0:
        raise InvalidInput("reset must be non-negative with a positive sum: name at least "
                           "one seed")
    if not 0.0 <= damping < 1.0:
        raise InvalidInput(f"damping must be in [0, 1), got {damping}")
    weights = g.es[weight] if weight in g.es.attributes() else None
    pr = g.personalized_pagerank(directed=directed, damping=damping,
                                 reset=(vec / vec.sum()).tolist(), weights=weights,
                                 implementation="prpack")
    return np.asarray(pr, np.float64)


@dataclass
class PPRTable:
    """The PageRank part of a :class:`PPRTrace`: the ranked nodes (best first) with their
    raw PageRank ``ppr``, the reset mass ``reset`` (0 for non-seeds), ``cos_node``,
    ``cos_msg``, ``fan`` and seed label (``""`` for a node reached by the walk), plus
    the walk's parameters and the size of the graph it ran on."""

    damping: float = 0.5
    directed: bool = False
    graph_nodes: int = 0
    graph_edges: int = 0
    reached: int = 0
    rows: list[int] = field(default_factory=list)
    uids: list[str] = field(default_factory=list)
    ppr: list[float] = field(default_factory=list)
    score: list[float] = field(default_factory=list)
    reset: list[float] = field(default_factory=list)
    cos_node: list[float] = field(default_factory=list)
    cos_msg: list[float] = field(default_factory=list)
    sigma: list[float] = field(default_factory=list)
    fan: list[int] = field(default_factory=list)
    seed_source: list[str] = field(default_factory=list)


@dataclass
class PPRTrace(RecallTrace):
    """A :class:`~akasha_explorer.engine.trace.RecallTrace` of ``method="ppr"``: seeds as
    Akasha's stage 1, the groups from PageRank (see the module docstring), ``ppr`` the
    ranked table; the micrograph, graph_expand and settlement parts stay empty.
    ``PPRTrace.from_json(t.to_json()) == t``."""

    method: str = "ppr"
    ppr: PPRTable = field(default_factory=PPRTable)

    def _rows(self) -> list[dict[str, Any]]:
        p = self.ppr
        dense, ripple = set(self.dense.uids), set(self.ripple.uids)
        active = set(self.activation.uids)
        reasons = dict(zip(self.suppressed.uids, self.suppressed.reasons, strict=True))
        rows = []
        for k, u in enumerate(p.uids):
            r: dict[str, Any] = dict.fromkeys(FRAME_COLUMNS, math.nan)
            seed = bool(p.seed_source[k])
            r.update({
                "uid": u, "row": p.rows[k], "kind": "seed" if seed else "walk",
                "source": p.seed_source[k] or "PPR", "path": "seed" if seed else "walk",
                "seed": None, "bridge": None, "cos_node": p.cos_node[k],
                "cos_msg": p.cos_msg[k], "sigma": p.sigma[k], "fan": p.fan[k],
                "direct": max(0.0, p.cos_node[k]), "current": p.ppr[k],
                "score": p.score[k], "activated": u in active, "in_ripple": u in ripple,
                "in_dense": u in dense, "suppressed_reason": reasons.get(u, "")})
            rows.append(r)
        return rows


_GRAPHS: weakref.WeakKeyDictionary[EdgeStore, tuple[tuple[int, ...], ig.Graph,
                                                     NDArray[np.int64]]] = (
    weakref.WeakKeyDictionary())


def _coact_graph(nodes: NodeTable, edges: EdgeStore) -> tuple[ig.Graph, NDArray[np.int64]]:
    """The igraph structure of every alive COACT edge (one vertex per mirror row), and the
    edge ids in igraph edge order — cached per edge store until an edge or node is added
    or removed (building a 380k-edge igraph takes ~0.5 s; setting weights ~10 ms)."""
    key = (nodes.n, edges.count, edges.n_alive())
    hit = _GRAPHS.get(edges)
    if hit is not None and hit[0] == key:
        return hit[1], hit[2]
    ids = np.flatnonzero(edges.alive)
    g = ig.Graph(n=nodes.n, edges=np.column_stack([edges.src[ids], edges.dst[ids]]).tolist(),
                 directed=True)
    _GRAPHS[edges] = (key, g, ids)
    return g, ids


def ppr_recall(nodes: NodeTable, edges: EdgeStore, q: ArrayLike, lexical: LexicalHits, *,
               now: float, settings: Settings, query: str = "", session: str | None = None,
               visible: ArrayLike | None = None, filler: ArrayLike | None = None,
               asks: ArrayLike | None = None) -> PPRTrace:
    """Recall by personalized PageRank from Akasha's stage-1 seeds (module docstring).

    Settings read: ``PPR_DAMPING``, ``PPR_DIRECTED``, ``EDGE_TAU``, ``USE_SALIENCE``, the
    grouping ones (``ACTIVATION_K``, ``RELEVANCE_FLOOR``, ``RIPPLE_LIMIT``,
    ``RIPPLE_LIMIT_FLOOR``, ``RIPPLE_LIMIT_MULT``, ``RIPPLE_MIN_ITEMS``), and those of stage
    1 through :func:`~akasha_explorer.engine.recall.recall` (``filler``: the turns it
    demotes, as there).

    >>> from akasha_explorer.engine.toy import toy_edges, toy_nodes
    >>> nodes = toy_nodes([[1, 0], [0.9, 0.1], [0, 1], [0.1, 1]])
    >>> t = ppr_recall(nodes, toy_edges([(0, 2, 1.0)], last_ts=180.0), [1.0, 0.0],
    ...                LexicalHits.empty(), now=180.0, settings=Settings.profile("v1"))
    >>> t.seeds.uids, t.ranking()[:3], t.activation.scores[0]
    (['n0', 'n1'], ['n0', 'n1', 'n2'], 1.0)
    """
    cfg = settings
    vis = nodes.alive & (nodes.ts <= now)
    if visible is not None:
        vis = vis & np.asarray(visible, bool)
    # stages 1 and dense_items exactly as Akasha computes them: run the engine itself
    base = recall(nodes, edges, q, lexical, now=now, settings=cfg, visible=vis, query=query,
                  session=session, filler=filler, asks=asks)
    table = PPRTable(damping=cfg.PPR_DAMPING, directed=cfg.PPR_DIRECTED)
    if base.n_visible == 0:
        return PPRTrace(**_fields(base), ppr=table)
    seeds, dense = base.seeds, base.dense
    qv = np.asarray(base.q, np.float32)
    g, ids = _coact_graph(nodes, edges)
    src, dst = edges.src[ids], edges.dst[ids]
    w = np.asarray(edge_eff(edges.w[ids], edges.last_ts[ids], now, cfg.EDGE_TAU), np.float64)
    seen = vis[src] & vis[dst]
    w[~seen] = 0.0          # an invisible node is cut off: no mass reaches it
    g.es["weight"] = w.tolist()
    reset = np.zeros(nodes.n, np.float64)
    np.add.at(reset, np.asarray(seeds.rows, np.int64), seeds.energy_boosted)
    full = personalized_pagerank(g, reset, damping=cfg.PPR_DAMPING, directed=cfg.PPR_DIRECTED)
    full[~vis] = 0.0
    limit = max(cfg.RIPPLE_MIN_ITEMS, cfg.RIPPLE_LIMIT_MULT * max(cfg.RIPPLE_LIMIT_FLOOR,
                                                                  cfg.RIPPLE_LIMIT))
    ranked = top_k(full, limit, vis & (full > 0))
    cos_node = np.einsum("ij,j->i", nodes.vec[ranked], qv).astype(np.float64)
    cos_msg = np.array([float(np.einsum("ij,j->i", nodes.msg_vec[a: a + k], qv).max())
                        for a, k in zip(nodes.first_msg[ranked].tolist(),
                                        nodes.n_msg[ranked].tolist(), strict=True)])
    top = float(full[ranked[0]]) if ranked.size else 1.0
    label = dict(zip(seeds.rows, seeds.source, strict=True))
    fan = edges.fan_of(ranked)
    table = PPRTable(
        damping=cfg.PPR_DAMPING, directed=cfg.PPR_DIRECTED, graph_nodes=int(vis.sum()),
        graph_edges=int(seen.sum()), reached=int((full > 0).sum()), rows=ranked.tolist(),
        uids=[nodes.uid[i] for i in ranked.tolist()], ppr=full[ranked].tolist(),
        score=(full[ranked] / top).tolist(), reset=(reset / reset.sum())[ranked].tolist(),
        cos_node=cos_node.tolist(), cos_msg=cos_msg.tolist(),
        sigma=[float(nodes.sigma[i]) if cfg.USE_SALIENCE else 0.0 for i in ranked.tolist()],
        fan=fan.tolist(), seed_source=[label.get(i, "") for i in ranked.tolist()])
    gate = seeds.relevant or not cfg.RELEVANCE_FLOOR
    k_act = cfg.ACTIVATION_K if gate else 0
    items = [ItemList(), ItemList()]
    for k in range(ranked.size):
        grp = items[0] if k < k_act else items[1]
        _push(grp, table, k)
        if grp is items[1]:
            grp.reasons.append("over_k" if gate else "no_relevant_seed")
    act, sup = items
    ripple = ItemList()
    dense_set = set(base.first_block().uids)  # ripple items leave out the first block
    for k, u in enumerate(table.uids):
        if u not in dense_set:
            _push(ripple, table, k)
    counts = {"seeds": len(seeds.rows), "pool": table.reached, "graph": 0,
              "activated": len(act), "dense": len(dense), "ripple": len(ripple),
              "suppressed": len(sup)}
    fields_ = _fields(base)
    fields_.update(micro=MicroGraph(), graph=GraphExpand(), settle=Settlement(),
                   activation=act, ripple=ripple, suppressed=sup, counts=counts)
    return PPRTrace(**fields_, ppr=table)


def _push(items: ItemList, table: PPRTable, k: int) -> None:
    items.uids.append(table.uids[k])
    items.rows.append(table.rows[k])
    items.scores.append(table.score[k])
    items.sources.append(table.seed_source[k] or "PPR")
    items.direct.append(max(0.0, table.cos_node[k]))


def _fields(t: RecallTrace) -> dict[str, Any]:
    return {k: getattr(t, k) for k in RecallTrace.__dataclass_fields__}
