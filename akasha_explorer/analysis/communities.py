"""SPEC §7 Leiden communities: weighted, resolution a parameter, an explicit seed.

:func:`leiden` is a pure function of a graph (a :class:`~.views.GraphView` or an
``igraph.Graph`` with a ``weight`` edge attribute): the Reichardt–Bornholdt configuration
model (modularity with a resolution γ; γ = 1 is plain modularity, larger γ gives more,
smaller communities), from ``seed``. Direction is dropped (``a → b``
and ``b → a`` are summed): a community is a set of turns that recall each other, whichever
way. :func:`community_table` describes each community with the numbers a person checks
(size, internal vs cut weight, time span, sessions) and a label of its most distinctive
terms.

>>> import igraph as ig
>>> g = ig.Graph.Full(4) + ig.Graph.Full(4)          # two cliques ...
>>> _ = g.add_edge(0, 4)                              # ... joined by one edge
>>> g.es["weight"] = [1.0] * 12 + [0.1]
>>> leiden(g, seed=1).tolist()
[0, 0, 0, 0, 1, 1, 1, 1]
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence

import igraph as ig
import leidenalg
import numpy as np
import pandas as pd
import scipy.sparse as sp
from numpy.typing import NDArray

from .views import GraphView, adjacency, iso_time, renumber

__all__ = ["community_label", "community_table", "leiden"]


def _undirected(graph: GraphView | ig.Graph, weight: str) -> ig.Graph:
    if isinstance(graph, GraphView):
        a, n = adjacency(graph)
        up = sp.triu(a, k=1).tocoo()
        g = ig.Graph(n=n, edges=np.column_stack([up.row, up.col]).tolist())
        g.es[weight] = up.data.tolist()
    else:
        g = graph
        if g.is_directed():
            g = g.copy()
            g.to_undirected(mode="collapse", combine_edges={weight: "sum"})
    if weight not in g.es.attributes():
        g = g.copy()
        g.es[weight] = [1.0] * g.ecount()
    return g


def leiden(graph: GraphView | ig.Graph, *, resolution: float = 1.0, seed: int = 0,
           weight: str = "weight", n_iterations: int = 2) -> NDArray[np.int64]:
    """Community id of every node (vertex order), renumbered by size (0 = largest).

    Parameters
    ----------
    graph
        A view or an igraph graph; directed edges are folded (weights summed).
    resolution
        γ of the RB configuration model (``leidenalg.RBConfigurationVertexPartition``).
    seed
        Random seed: the same graph, resolution and seed give the same partition.
    n_iterations
        Leiden iterations (leidenalg's default, 2); negative runs until the partition
        stops changing — on a 10k-node store that changed modularity in the fourth
        decimal and took up to 7× longer.

    >>> import igraph as ig
    >>> ring = ig.Graph.Ring(12)
    >>> ring.es["weight"] = [1.0] * 12
    >>> len(set(leiden(ring, resolution=0.05).tolist())), len(set(leiden(ring,
    ...     resolution=3.0).tolist())) > 1
    (1, True)
    """
    g = _undirected(graph, weight)
    if g.vcount() == 0:
        return np.zeros(0, np.int64)
    part = leidenalg.find_partition(
        g, leidenalg.RBConfigurationVertexPartition, weights=weight,
        resolution_parameter=float(resolution), seed=int(seed), n_iterations=n_iterations)
    return renumber(np.asarray(part.membership, np.int64))


def community_label(member_terms: Sequence[Sequence[str]], df: Mapping[str, int], n_docs: int,
                    *, top: int = 4, sep: str = " / ") -> str:
    """The ``top`` most distinctive terms of a community: count of members holding the
    term × ``ln(n_docs / df)`` (a class TF-IDF), terms held by one member only skipped
    when the community has more than two members; joined by ``sep``.

    >>> community_label([["a", "b"], ["a", "c"], ["a", "b"]], {"a": 3, "b": 2, "c": 9}, 10)
    'a / b'
    """
    cnt: Counter[str] = Counter()
    for ts in member_terms:
        cnt.update(set(ts))
    floor = 2 if len(member_terms) > 2 else 1
    scored = sorted(((c * math.log(n_docs / max(1, df.get(t, 1))), t) for t, c in cnt.items()
                     if c >= floor and df.get(t, 1) < n_docs), key=lambda x: (-x[0], x[1]))
    return sep.join(t for _, t in scored[:top])


def community_table(view: GraphView, *, terms: Mapping[str, Sequence[str]] | None = None,
                    examples: int = 3) -> pd.DataFrame:
    """One row per community of ``view`` (its ``community`` column; −1, nodes without
    edges, is left out), largest first.

    Columns: ``community``, ``size``, ``label`` (distinctive terms of the members,
    :func:`community_label`, when ``terms`` maps node ids to what names them — the anchors
    they mention, for turns; the strongest members' labels when no term qualifies, or
    without ``terms``), ``w_internal`` (edge weight inside), ``w_cut``
    (weight of edges leaving it), ``conductance`` (``w_cut / (2 w_internal + w_cut)``),
    ``first_time``/``last_time`` (when the view has ``ts``), ``sessions`` (distinct),
    ``top_sessions`` and ``examples`` (labels of the members with the highest weighted
    degree), ``members`` (comma-joined ids).

    >>> import pandas as pd
    >>> nodes = pd.DataFrame({"id": ["a", "b", "c"], "label": ["A", "B", "C"],
    ...                       "w_degree": [2.0, 1.0, 1.0], "community": [0, 0, 1]})
    >>> edges = pd.DataFrame({"source": ["a", "a"], "target": ["b", "c"],
    ...                       "weight": [1.0, 0.5]})
    >>> t = community_table(GraphView("x", nodes, edges, directed=False))
    >>> t[["community", "size", "w_internal", "w_cut", "examples"]].values.tolist()
    [[0, 2, 1.0, 0.5, 'A | B'], [1, 1, 0.0, 0.5, 'C']]
    """
    cols = ["community", "size", "label", "w_internal", "w_cut", "conductance", "first_time",
            "last_time", "sessions", "top_sessions", "examples", "members"]
    nodes = view.nodes
    if nodes.empty or (nodes["community"] < 0).all():
        return pd.DataFrame(columns=cols)
    comm = dict(zip(nodes["id"], nodes["community"], strict=True))
    e = view.edges
    ca = e["source"].map(comm).to_numpy()
    cb = e["target"].map(comm).to_numpy()
    w = e["weight"].to_numpy(np.float64)
    inside = ca == cb
    w_in = pd.Series(w[inside]).groupby(ca[inside]).sum() if inside.any() else pd.Series(
        dtype=float)
    cut = pd.concat([pd.Series(w[~inside], index=ca[~inside]),
                     pd.Series(w[~inside], index=cb[~inside])]).groupby(level=0).sum()
    df: Counter[str] = Counter()
    if terms is not None:
        for ts in terms.values():
            df.update(set(ts))
    rows = []
    for c, grp in nodes[nodes["community"] >= 0].groupby("community", sort=True):
        strong = grp.sort_values("w_degree", ascending=False, kind="stable")
        ex = [str(x) for x in strong["label"].head(examples)]
        if terms is not None:
            label = (community_label([terms.get(i, ()) for i in grp["id"]], df, len(terms))
                     or " / ".join(ex[:2]))
        else:
            label = " / ".join(ex)
        wi, wc = float(w_in.get(c, 0.0)), float(cut.get(c, 0.0))
        row = {"community": int(c), "size": len(grp), "label": label, "w_internal": wi,
               "w_cut": wc, "conductance": wc / (2 * wi + wc) if (wi or wc) else 0.0,
               "first_time": "", "last_time": "", "sessions": 0, "top_sessions": "",
               "examples": " | ".join(ex), "members": ",".join(map(str, grp["id"]))}
        if "time" in grp:
            row["first_time"], row["last_time"] = str(grp["time"].min()), str(grp["time"].max())
        elif "first_ts" in grp and (grp["first_ts"] > 0).any():
            row["first_time"] = iso_time(float(grp.loc[grp["first_ts"] > 0, "first_ts"].min()))
            row["last_time"] = iso_time(float(grp["last_ts"].max()))
        if "session" in grp:
            vc = grp["session"].value_counts()
            row["sessions"] = len(vc)
            row["top_sessions"] = ", ".join(f"{s} ({n})" for s, n in vc.head(3).items())
        rows.append(row)
    return pd.DataFrame(rows, columns=cols)
