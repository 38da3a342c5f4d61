"""SPEC §7 views: the memory graph projected at a given ``now`` into plain tables.

A :class:`GraphView` is two pandas frames — ``nodes`` (column ``id`` first, one row per
node, every attribute) and ``edges`` (``source``, ``target``, ``weight`` first) — plus
whether the edges are directed. :meth:`GraphView.to_igraph` and
:meth:`GraphView.to_networkx` turn it into the objects the algorithms and the exporters
use. The projections here read plain arrays and rows (the engine mirror, Kuzu rows as
dicts); they never write and never read the clock.

Three views:

- :func:`coact_view` — turns and their co-activation (COACT) edges, weighted by the
  effective weight ``w · exp(−(now − last_ts)/EDGE_TAU)`` (SPEC §3), visible nodes only
  (alive and ``ts <= now``);
- :func:`anchor_view` — anchors, joined when a turn mentions both (``co_mentions``) or a
  triple links them (``triples``);
- :func:`bipartite_view` — turns and the anchors they mention.

>>> from akasha_explorer.config import Settings
>>> from akasha_explorer.engine.toy import toy_edges, toy_nodes
>>> nodes = toy_nodes([[1, 0], [0, 1], [1, 1]])
>>> v = coact_view(nodes, toy_edges([(0, 1, 1.0), (1, 0, 0.5)], last_ts=120.0),
...                now=120.0, settings=Settings())
>>> v.edges[["source", "target", "weight"]].values.tolist()
[['n0', 'n1', 1.0], ['n1', 'n0', 0.5]]
>>> v.undirected().edges["weight"].tolist(), v.nodes["degree"].tolist()
([1.5], [1, 1, 0])
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import igraph as ig
import networkx as nx
import numpy as np
import pandas as pd
import scipy.sparse as sp
from numpy.typing import NDArray

from ..config import Settings
from ..engine.dynamics import edge_eff, long_term, resource_eff, strength_eff
from ..engine.state import EdgeStore, NodeTable

__all__ = [
    "VIEWS",
    "GraphView",
    "adjacency",
    "anchor_view",
    "backbone",
    "bipartite_view",
    "coact_arrays",
    "coact_view",
    "iso_time",
    "preview",
    "renumber",
    "with_communities",
]

VIEWS = ("nodes", "anchors", "bipartite")
"""Names of the views (``--view`` on the command line)."""

PREVIEW_CHARS = 160
LABEL_CHARS = 24


def iso_time(ts: float) -> str:
    """UTC ISO 8601 time of epoch seconds.

    >>> iso_time(0.0)
    '1970-01-01T00:00:00+00:00'
    """
    return dt.datetime.fromtimestamp(float(ts), dt.UTC).isoformat(timespec="seconds")


def preview(text: str, limit: int = PREVIEW_CHARS) -> str:
    """``text`` with runs of whitespace collapsed, cut to ``limit`` characters (``…``).
    Only for display: stored text is never altered.

    >>> preview("a  b\\n c", 10), preview("abcdef", 4)
    ('a b c', 'abc…')
    """
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


@dataclass(frozen=True)
class GraphView:
    """One projection of the memory graph (see the module docstring).

    ``nodes`` has a unique string ``id`` column first; ``edges`` has ``source`` and
    ``target`` (node ids) and a positive ``weight`` first. ``directed`` says whether
    ``source → target`` is meaningful; ``now`` is the time the weights were read at.
    """

    name: str
    nodes: pd.DataFrame
    edges: pd.DataFrame
    directed: bool
    now: float | None = None

    def __repr__(self) -> str:
        kind = "directed" if self.directed else "undirected"
        return (f"<GraphView {self.name}: {len(self.nodes)} nodes, {len(self.edges)} "
                f"{kind} edges>")

    def positions(self) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
        """Node positions (into ``nodes``) of every edge's source and target."""
        pos = pd.Index(self.nodes["id"])
        return (pos.get_indexer(self.edges["source"]).astype(np.int64),
                pos.get_indexer(self.edges["target"]).astype(np.int64))

    def undirected(self) -> GraphView:
        """The same view with ``a → b`` and ``b → a`` folded into one edge: weights and
        counts summed, times the latest (``last_ts``) and earliest (``start``)."""
        if not self.directed:
            return self
        e = self.edges
        if e.empty:
            return replace(self, directed=False)
        pos = pd.Index(self.nodes["id"])
        s, t = pos.get_indexer(e["source"]), pos.get_indexer(e["target"])
        lo, hi = np.minimum(s, t), np.maximum(s, t)
        ids = self.nodes["id"].to_numpy()
        key = pd.DataFrame({"source": ids[lo], "target": ids[hi]})
        agg: dict[str, str] = {}
        for c in e.columns:
            if c in ("source", "target"):
                continue
            if c in ("last_ts",):
                agg[c] = "max"
            elif c in ("start",):
                agg[c] = "min"
            elif pd.api.types.is_numeric_dtype(e[c]) and not pd.api.types.is_bool_dtype(e[c]):
                agg[c] = "sum"
            else:
                agg[c] = "first"
        both = pd.concat([key, e.drop(columns=["source", "target"]).reset_index(drop=True)],
                         axis=1)
        folded = both.groupby(["source", "target"], sort=False, as_index=False).agg(agg)
        return replace(self, edges=folded.reset_index(drop=True), directed=False)

    def to_igraph(self, *, attributes: bool = True) -> ig.Graph:
        """An ``igraph.Graph`` (vertex i = ``nodes`` row i): vertex attribute ``name`` =
        id plus every node column, edge attributes from every edge column. With
        ``attributes=False`` only ``name`` and ``weight`` (what the algorithms need)."""
        s, t = self.positions()
        g = ig.Graph(n=len(self.nodes), edges=np.column_stack([s, t]).tolist(),
                     directed=self.directed)
        g.vs["name"] = self.nodes["id"].tolist()
        if not attributes:
            g.es["weight"] = self.edges["weight"].astype(np.float64).tolist()
            return g
        for c in self.nodes.columns:
            if c != "id":
                g.vs[c] = _plain_list(self.nodes[c])
        for c in self.edges.columns:
            if c not in ("source", "target"):
                g.es[c] = _plain_list(self.edges[c])
        return g

    def to_networkx(self, *, xml: bool = False) -> nx.Graph:
        """A ``networkx.DiGraph`` (directed views) or ``Graph`` with every attribute as a
        plain Python value (no numpy scalars, no NaN: missing values are left out; one
        type per attribute). ``xml`` also replaces characters XML cannot hold."""
        from ..export.sanitize import records

        g: nx.Graph = nx.DiGraph() if self.directed else nx.Graph()
        g.graph.update({"view": self.name, "now": float(self.now or 0.0)})
        g.add_nodes_from(records(self.nodes, key="id", xml=xml))
        g.add_edges_from((a, b, d) for (a, b), d in records(self.edges,
                                                             key=("source", "target"), xml=xml))
        return g


def adjacency(view: GraphView) -> tuple[sp.csr_matrix, int]:
    """``(A, n)``: the symmetric ``n × n`` CSR of the view's weights (``a → b`` and
    ``b → a`` summed), vertex order = ``view.nodes``.

    >>> v = GraphView("x", pd.DataFrame({"id": ["a", "b"]}), pd.DataFrame(
    ...     {"source": ["a", "b"], "target": ["b", "a"], "weight": [1.0, 0.5]}), True)
    >>> adjacency(v)[0].toarray().tolist()
    [[0.0, 1.5], [1.5, 0.0]]
    """
    n = len(view.nodes)
    s, t = view.positions()
    w = view.edges["weight"].to_numpy(np.float64) if len(view.edges) else np.zeros(0)
    a = sp.coo_matrix((np.concatenate([w, w]), (np.concatenate([s, t]), np.concatenate([t, s]))),
                      shape=(n, n)).tocsr()
    a.sum_duplicates()
    return a, n


def backbone(a: sp.csr_matrix, per_node: int) -> sp.csr_matrix:
    """``a`` keeping each node's ``per_node`` strongest edges (an edge stays when it is
    among the strongest of either end); symmetric.

    >>> import scipy.sparse as sp
    >>> a = sp.csr_matrix(np.array([[0, 3, 1], [3, 0, 2], [1, 2, 0]], float))
    >>> backbone(a, 1).toarray().tolist()     # 0-1 is 0's and 1's best, 1-2 is 2's
    [[0.0, 3.0, 0.0], [3.0, 0.0, 2.0], [0.0, 2.0, 0.0]]
    """
    coo = a.tocoo()
    order = np.lexsort((coo.col, -coo.data, coo.row))
    r = coo.row[order]
    start = np.searchsorted(r, r, side="left")
    rank = np.arange(r.size) - start
    keep = order[rank < per_node]
    m = sp.coo_matrix((np.ones(keep.size), (coo.row[keep], coo.col[keep])), shape=a.shape).tocsr()
    mask = ((m + m.T) > 0).astype(np.float64)
    return a.multiply(mask).tocsr()


def _plain_list(col: pd.Series) -> list[Any]:
    return [None if (isinstance(v, float) and v != v) else v for v in col.tolist()]


# -- co-activation view ------------------------------------------------------------------
def coact_arrays(nodes: NodeTable, edges: EdgeStore, *, now: float, tau: float,
                 visible: NDArray[np.bool_] | None = None,
                 ) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.float64],
                            NDArray[np.int64]]:
    """``(src rows, dst rows, effective weights, edge ids)`` of the alive COACT edges
    between visible nodes at ``now`` (SPEC §3; ``visible`` defaults to alive nodes with
    ``ts <= now``). Pure: reads the mirror arrays only.

    >>> from akasha_explorer.engine.toy import toy_edges, toy_nodes
    >>> s, d, w, e = coact_arrays(toy_nodes([[1, 0], [0, 1]]),
    ...                           toy_edges([(0, 1, 2.0)], last_ts=0.0), now=60.0, tau=60.0)
    >>> s.tolist(), d.tolist(), round(float(w[0]), 4)
    ([0], [1], 0.7358)
    """
    vis = (nodes.alive & (nodes.ts <= now)) if visible is None else visible & nodes.alive
    ids = np.flatnonzero(edges.alive)
    src, dst = edges.src[ids], edges.dst[ids]
    ok = (src < nodes.n) & (dst < nodes.n)
    ok[ok] = vis[src[ok]] & vis[dst[ok]]
    ids, src, dst = ids[ok], src[ok], dst[ok]
    w = np.asarray(edge_eff(edges.w[ids], edges.last_ts[ids], now, tau), np.float64)
    return src, dst, w, ids


def _node_texts(nodes: NodeTable, rows: NDArray[np.int64], texts: Mapping[str, str] | None,
                msg_role: Sequence[str] | None) -> list[str]:
    """Preview of each node: its first user message, else its first message."""
    if texts is None:
        return [""] * rows.size
    out = []
    for i in rows.tolist():
        a, k = int(nodes.first_msg[i]), int(nodes.n_msg[i])
        pick = a
        if msg_role is not None:
            pick = next((j for j in range(a, a + k) if msg_role[j] == "user"), a)
        out.append(preview(texts.get(nodes.msg_uid[pick], "")))
    return out


def _node_flags(nodes: NodeTable, rows: NDArray[np.int64],
                msg_flags: Sequence[Sequence[str]] | None) -> list[str]:
    if msg_flags is None:
        return [""] * rows.size
    out = []
    for i in rows.tolist():
        a, k = int(nodes.first_msg[i]), int(nodes.n_msg[i])
        out.append(",".join(sorted({f for j in range(a, a + k) for f in msg_flags[j]})))
    return out


def coact_view(
    nodes: NodeTable,
    edges: EdgeStore,
    *,
    now: float,
    settings: Settings,
    texts: Mapping[str, str] | None = None,
    msg_role: Sequence[str] | None = None,
    msg_flags: Sequence[Sequence[str]] | None = None,
    visible: NDArray[np.bool_] | None = None,
    communities: Callable[[GraphView], NDArray[np.int64]] | None = None,
) -> GraphView:
    """The co-activation graph of turns at ``now`` (directed, as stored: ``A → T``).

    Node columns: ``id``, ``row`` (mirror row), ``label``, ``text`` (preview of the first
    user message; empty without ``texts``), ``session``, ``ts``, ``time`` (ISO),
    ``sigma``, ``strength`` (stored), ``strength_eff``, ``long``, ``resource``
    (stored), ``resource_eff``, ``recall_count``, ``assistant_only``, ``n_messages``,
    ``flags`` (comma-joined gate flags), ``degree`` (distinct neighbours), ``in_degree``,
    ``out_degree``, ``w_in``, ``w_out``, ``w_degree`` (effective weight sums) and
    ``community`` (−1 for a node without edges, or when ``communities`` is None).
    Edge columns: ``source``, ``target``, ``weight`` (effective at ``now``), ``w``
    (stored), ``last_ts``, ``co_count``, ``age_days`` (since ``last_ts``) and ``start``
    (the later of the two turns' times: the edge cannot be older than either turn).

    ``communities`` maps the finished view to one community id per node (e.g.
    ``lambda v: leiden(v)``); ids are renumbered by size, largest first.
    """
    vis = (nodes.alive & (nodes.ts <= now)) if visible is None else visible & nodes.alive
    rows = np.flatnonzero(vis)
    src, dst, w, ids = coact_arrays(nodes, edges, now=now, tau=settings.EDGE_TAU,
                                    visible=vis)
    uid = np.asarray(nodes.uid, dtype=object)
    ts = nodes.ts
    edge_frame = pd.DataFrame({
        "source": uid[src] if src.size else np.zeros(0, object),
        "target": uid[dst] if dst.size else np.zeros(0, object),
        "weight": w,
        "w": edges.w[ids].astype(np.float64),
        "last_ts": edges.last_ts[ids].astype(np.float64),
        "co_count": edges.co_count[ids].astype(np.int64),
        "age_days": np.maximum(0.0, now - edges.last_ts[ids]) / 86400.0,
        "start": np.maximum(ts[src], ts[dst]) if src.size else np.zeros(0),
    })
    n = nodes.n
    w_out = np.bincount(src, weights=w, minlength=n)
    w_in = np.bincount(dst, weights=w, minlength=n)
    out_deg = np.bincount(src, minlength=n)
    in_deg = np.bincount(dst, minlength=n)
    lo, hi = np.minimum(src, dst), np.maximum(src, dst)
    pairs = np.unique(lo * np.int64(n) + hi) if src.size else np.zeros(0, np.int64)
    deg = (np.bincount(pairs // n, minlength=n) + np.bincount(pairs % n, minlength=n)
           if pairs.size else np.zeros(n, np.int64))
    cfg = settings
    s_eff = np.asarray(strength_eff(nodes.strength[rows], nodes.strength_ts[rows], now,
                                    cfg.STRENGTH_TAU), np.float64)
    texts_ = _node_texts(nodes, rows, texts, msg_role)
    node_frame = pd.DataFrame({
        "id": uid[rows] if rows.size else np.zeros(0, object),
        "row": rows.astype(np.int64),
        "label": [t[:LABEL_CHARS] for t in texts_],
        "text": texts_,
        "session": [nodes.sessions[int(c)] for c in nodes.session[rows]],
        "ts": ts[rows].astype(np.float64),
        "time": [iso_time(t) for t in ts[rows]],
        "sigma": nodes.sigma[rows].astype(np.float64),
        "strength": nodes.strength[rows].astype(np.float64),
        "strength_eff": s_eff,
        "long": np.asarray(long_term(s_eff, cfg.STRENGTH_CAP), np.float64),
        "resource": nodes.resource[rows].astype(np.float64),
        "resource_eff": np.asarray(resource_eff(nodes.resource[rows], nodes.resource_ts[rows],
                                                now, cfg.RESOURCE_TAU), np.float64),
        "recall_count": nodes.recall_count[rows].astype(np.int64),
        "assistant_only": nodes.assistant_only[rows].astype(bool),
        "n_messages": nodes.n_msg[rows].astype(np.int64),
        "flags": _node_flags(nodes, rows, msg_flags),
        "degree": deg[rows].astype(np.int64),
        "in_degree": in_deg[rows].astype(np.int64),
        "out_degree": out_deg[rows].astype(np.int64),
        "w_in": w_in[rows],
        "w_out": w_out[rows],
        "w_degree": (w_in + w_out)[rows],
        "community": np.full(rows.size, -1, np.int64),
    })
    view = GraphView("nodes", node_frame, edge_frame, directed=True, now=float(now))
    return with_communities(view, communities)


def with_communities(view: GraphView,
                     communities: Callable[[GraphView], NDArray[np.int64]] | None,
                     ) -> GraphView:
    """``view`` with its ``community`` column filled by ``communities(view)``: ids
    renumbered by size (0 = largest; ties by first member), −1 for nodes without edges."""
    if communities is None or view.nodes.empty:
        return view
    memb = np.asarray(communities(view), np.int64)
    memb = renumber(memb)
    isolated = view.nodes["degree"].to_numpy() == 0
    memb[isolated] = -1
    frame = view.nodes.copy()
    frame["community"] = memb
    return replace(view, nodes=frame)


def renumber(membership: Sequence[int] | NDArray[np.int64]) -> NDArray[np.int64]:
    """Community ids renumbered 0, 1, … by size (largest first; ties by first member).

    >>> renumber([5, 5, 2, 9, 9, 9]).tolist()
    [1, 1, 2, 0, 0, 0]
    """
    m = np.asarray(membership, np.int64)
    if m.size == 0:
        return m
    labels, first, counts = np.unique(m, return_index=True, return_counts=True)
    order = np.lexsort((first, -counts))
    new = np.empty(labels.size, np.int64)
    new[order] = np.arange(labels.size)
    return new[np.searchsorted(labels, m)]


# -- anchor views ------------------------------------------------------------------------
_ANCHOR_COLS = ("id", "label", "kind", "status", "created_ts", "note", "n_mentions",
                "n_turns", "first_ts", "last_ts", "degree", "w_degree", "community")
_GONE = ("merged", "rejected", "forgotten", "deleted")


def _anchor_frame(anchors: Sequence[Mapping[str, Any]],
                  mentions: Sequence[Mapping[str, Any]],
                  turn_ts: Mapping[str, float]) -> pd.DataFrame:
    keep = [a for a in anchors if (a.get("status") or "") not in _GONE]
    n_m: dict[str, int] = {}
    turns: dict[str, set[str]] = {}
    for m in mentions:
        a = m["anchor"]
        n_m[a] = n_m.get(a, 0) + 1
        turns.setdefault(a, set()).add(m["turn"])
    rows = []
    for a in keep:
        u = a["uid"]
        tt = [turn_ts[t] for t in turns.get(u, ()) if t in turn_ts]
        rows.append({
            "id": u, "label": a.get("name") or u, "kind": a.get("kind") or "",
            "status": a.get("status") or "", "created_ts": float(a.get("created_ts") or 0.0),
            "note": a.get("note") or "", "n_mentions": n_m.get(u, 0),
            "n_turns": len(turns.get(u, ())), "first_ts": min(tt) if tt else 0.0,
            "last_ts": max(tt) if tt else 0.0, "degree": 0, "w_degree": 0.0, "community": -1})
    return pd.DataFrame(rows, columns=list(_ANCHOR_COLS)).astype(
        {"n_mentions": np.int64, "n_turns": np.int64, "degree": np.int64,
         "w_degree": np.float64, "community": np.int64, "created_ts": np.float64,
         "first_ts": np.float64, "last_ts": np.float64})


def _fill_degree(view: GraphView) -> GraphView:
    e = view.edges
    ids = view.nodes["id"]
    if e.empty:
        return view
    ends = pd.concat([e[["source", "weight"]].rename(columns={"source": "id"}),
                      e[["target", "weight"]].rename(columns={"target": "id"})])
    g = ends.groupby("id")["weight"]
    frame = view.nodes.copy()
    frame["degree"] = ids.map(g.size()).fillna(0).astype(np.int64).to_numpy()
    frame["w_degree"] = ids.map(g.sum()).fillna(0.0).astype(np.float64).to_numpy()
    return replace(view, nodes=frame)


def anchor_view(
    anchors: Sequence[Mapping[str, Any]],
    mentions: Sequence[Mapping[str, Any]],
    facts: Sequence[Mapping[str, Any]],
    *,
    turn_ts: Mapping[str, float],
    now: float | None = None,
    communities: Callable[[GraphView], NDArray[np.int64]] | None = None,
) -> GraphView:
    """The anchor graph (undirected): two anchors are joined when a turn mentions both
    (``co_mentions`` = number of such turns) or a triple links them (``triples``, with its
    ``predicates``); ``weight = co_mentions + triples``.

    ``anchors``: rows with ``uid, name, kind, status, created_ts, note`` (merged or
    rejected anchors are left out); ``mentions``: ``turn, anchor`` (one per mention);
    ``facts``: ``triple, predicate, status, subject, object`` (rejected or superseded
    triples are left out). Only turns in ``turn_ts`` (visible at ``now``) count. Empty
    inputs give an empty view, not an error.

    >>> v = anchor_view([{"uid": "a"}, {"uid": "b"}],
    ...                 [{"turn": "t", "anchor": "a"}, {"turn": "t", "anchor": "b"}],
    ...                 [{"triple": "x", "predicate": "friend_of", "status": "approved",
    ...                   "subject": "a", "object": "b"}], turn_ts={"t": 1.0})
    >>> v.edges[["source", "target", "weight", "co_mentions", "triples", "predicates"]
    ...         ].values.tolist()
    [['a', 'b', 2.0, 1, 1, 'friend_of']]
    """
    ms = [m for m in mentions if m["turn"] in turn_ts]
    nodes = _anchor_frame(anchors, ms, turn_ts)
    known = set(nodes["id"])
    by_turn: dict[str, set[str]] = {}
    for m in ms:
        if m["anchor"] in known:
            by_turn.setdefault(m["turn"], set()).add(m["anchor"])
    pair: dict[tuple[str, str], dict[str, Any]] = {}

    def slot(a: str, b: str) -> dict[str, Any]:
        k = (a, b) if a < b else (b, a)
        return pair.setdefault(k, {"co_mentions": 0, "triples": 0, "predicates": set()})

    for group in by_turn.values():
        g = sorted(group)
        for i, a in enumerate(g):
            for b in g[i + 1:]:
                slot(a, b)["co_mentions"] += 1
    for f in facts:
        subj, obj = f.get("subject"), f.get("object")
        if (f.get("status") or "") in ("rejected", "superseded") or subj == obj:
            continue
        if subj in known and obj in known:
            s = slot(str(subj), str(obj))
            s["triples"] += 1
            s["predicates"].add(f.get("predicate") or "")
    edges = pd.DataFrame(
        [{"source": a, "target": b, "weight": float(d["co_mentions"] + d["triples"]),
          "co_mentions": d["co_mentions"], "triples": d["triples"],
          "predicates": ",".join(sorted(d["predicates"]))} for (a, b), d in sorted(pair.items())],
        columns=["source", "target", "weight", "co_mentions", "triples", "predicates"],
    ).astype({"weight": np.float64, "co_mentions": np.int64, "triples": np.int64})
    view = _fill_degree(GraphView("anchors", nodes, edges, directed=False, now=now))
    return with_communities(view, communities)


def bipartite_view(
    turns: pd.DataFrame,
    anchors: Sequence[Mapping[str, Any]],
    mentions: Sequence[Mapping[str, Any]],
    *,
    now: float | None = None,
    communities: Callable[[GraphView], NDArray[np.int64]] | None = None,
) -> GraphView:
    """Turns and the anchors they mention (undirected, ``turn — anchor``); ``weight`` =
    number of mentions. ``turns`` is a :func:`coact_view` node frame (only turns with a
    mention are kept, with their columns); anchor rows get the anchor columns. Column
    ``type`` is ``"turn"`` or ``"anchor"`` (igraph's bipartite ``type`` is
    ``type == "anchor"``). Missing values are left empty (NaN / "").

    >>> import pandas as pd
    >>> t = pd.DataFrame({"id": ["t1", "t2"], "ts": [1.0, 2.0]})
    >>> v = bipartite_view(t, [{"uid": "a", "name": "A"}],
    ...                    [{"turn": "t1", "anchor": "a"}, {"turn": "t1", "anchor": "a"}])
    >>> v.edges.values.tolist(), v.nodes["type"].tolist()
    ([['t1', 'a', 2.0, 2]], ['turn', 'anchor'])
    """
    turn_ids = set(turns["id"]) if not turns.empty else set()
    ms = [m for m in mentions if m["turn"] in turn_ids]
    ts = dict(zip(turns["id"], turns["ts"], strict=True)) if not turns.empty else {}
    anchor_frame = _anchor_frame(anchors, ms, ts)
    known = set(anchor_frame["id"])
    count: dict[tuple[str, str], int] = {}
    for m in ms:
        if m["anchor"] in known:
            k = (m["turn"], m["anchor"])
            count[k] = count.get(k, 0) + 1
    edges = pd.DataFrame([{"source": t, "target": a, "weight": float(c), "mentions": c}
                          for (t, a), c in sorted(count.items())],
                         columns=["source", "target", "weight", "mentions"]).astype(
                             {"weight": np.float64, "mentions": np.int64})
    used = {t for t, _ in count}
    tf = turns[turns["id"].isin(used)].copy()
    tf["type"] = "turn"
    af = anchor_frame.rename(columns={"last_ts": "anchor_last_ts"}).copy()
    af["type"] = "anchor"
    tf = tf.drop(columns=[c for c in ("degree", "community", "in_degree", "out_degree",
                                      "w_in", "w_out", "w_degree") if c in tf.columns])
    af = af.drop(columns=["degree", "community", "w_degree"])
    frame = pd.concat([tf, af], ignore_index=True, sort=False)
    cols = ["id", "type", *[c for c in frame.columns if c not in ("id", "type")]]
    frame = frame[cols]
    frame["degree"] = 0
    frame["w_degree"] = 0.0
    frame["community"] = -1
    view = _fill_degree(GraphView("bipartite", frame.reset_index(drop=True), edges,
                                  directed=False, now=now))
    return with_communities(view, communities)
