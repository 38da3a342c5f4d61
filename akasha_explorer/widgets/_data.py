"""Read-only projections of a :class:`~akasha_explorer.memory.Memory` that the panels draw:
node texts and labels, node styles (colour by community, size by strength), COACT edges and
neighbours at a time ``now``, the query log. Nothing here writes to a store.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ..engine.dynamics import edge_eff, strength_eff
from ._html import community_colour, iso, short, tooltip

if TYPE_CHECKING:
    from ..memory import Memory

__all__ = ["StoreGraph", "anchors_of", "query_log"]

log = logging.getLogger(__name__)


def query_log(mem: Memory, limit: int = 200) -> list[dict[str, Any]]:
    """Logged queries, newest first: uid, ts, query, session, counts, committed (stored rows
    and those still waiting for a checkpoint)."""
    rows = mem.graph.rows(
        "MATCH (q:QueryLog) RETURN q.uid AS uid, q.ts AS ts, q.query AS query, q.session AS "
        "session, q.method AS method, q.n_activated AS n_activated, q.empty AS empty, "
        "q.committed AS committed ORDER BY q.ts DESC LIMIT $n", {"n": int(limit)})
    pending = [{k: r.get(k) for k in ("uid", "ts", "query", "session", "method",
                                      "n_activated", "empty", "committed")}
               for r in mem.mirror.pending_queries]
    out = sorted(pending + rows, key=lambda r: (-(r["ts"] or 0.0), r["uid"]))
    return out[:limit]


def anchors_of(mem: Memory, uid: str) -> list[dict[str, Any]]:
    """Anchors turn ``uid`` mentions: uid, name, kind, surface (one row per mention)."""
    rows = mem.graph.rows(
        "MATCH (t:Turn {uid: $u})-[m:MENTIONS]->(a:Anchor) RETURN a.uid AS uid, a.name AS "
        "name, a.kind AS kind, m.surface AS surface, m.span_start AS span_start "
        "ORDER BY span_start, name", {"u": uid})
    return rows


class StoreGraph:
    """Node and edge projections of one store at time ``now`` (default: its newest message).

    ``communities`` maps node uid → community id; when not given they are computed once on
    first use (:meth:`communities`).
    """

    def __init__(self, mem: Memory, *, now: float | None = None,
                 communities: dict[str, int] | None = None) -> None:
        self.mem = mem
        self.now = float(mem.last_ts() if now is None else now)
        self._comm = communities
        self._text: dict[str, str] | None = None
        self._n_msg: dict[str, int] | None = None

    # -- texts -----------------------------------------------------------------------------
    def texts(self) -> dict[str, str]:
        """Node uid → the text that names it: its first user message, else its first message."""
        if self._text is None:
            t = self.mem.vectors.read("messages", columns=["node", "seq", "role", "text"])
            d = t.to_pydict()
            order = sorted(range(len(d["node"])), key=lambda k: (d["node"][k], d["seq"][k]))
            out: dict[str, str] = {}
            user: set[str] = set()
            for k in order:
                node, role, text = d["node"][k], d["role"][k], d["text"][k]
                if node not in out or (role == "user" and node not in user):
                    out[node] = text
                    if role == "user":
                        user.add(node)
            self._text = out
        return self._text

    def text(self, uid: str) -> str:
        return self.texts().get(uid, "")

    def label(self, uid: str, n: int = 16) -> str:
        """A short canvas label (plain text; vis-network draws it, never parses it)."""
        return short(self.text(uid), n)

    # -- communities -----------------------------------------------------------------------
    def communities(self) -> dict[str, int]:
        """Node uid → Leiden community of the co-activation graph at ``now``, from the
        store's analytics (``mem.graph_view("nodes")``; communities numbered by size,
        largest first). Computed once per :class:`StoreGraph`."""
        if self._comm is None:
            nodes = self.mem.graph_view("nodes", now=self.now).nodes
            self._comm = dict(zip(nodes["id"].astype(str), nodes["community"].astype(int),
                                  strict=True))
        return self._comm

    # -- nodes -----------------------------------------------------------------------------
    def strength(self, uids: Sequence[str]) -> np.ndarray:
        """Decayed strength at ``now`` (0..STRENGTH_CAP) of each node."""
        n = self.mem.mirror.nodes
        rows = np.array([n.index[u] for u in uids], np.int64)
        if not rows.size:
            return np.zeros(0)
        return np.asarray(strength_eff(n.strength[rows], n.strength_ts[rows], self.now,
                                       self.mem.settings.STRENGTH_TAU), np.float64)

    def node(self, uid: str, *, size: float | None = None, extra: Iterable[str] = ()) -> dict:
        """vis-network dict of a node: label, escaped tooltip, community colour, size by
        decayed strength (or ``size``)."""
        n = self.mem.mirror.nodes
        r = n.index[uid]
        c = self.communities().get(uid)
        s_eff = float(self.strength([uid])[0])
        colour = community_colour(c)
        tip = tooltip(uid, f"{iso(float(n.ts[r]))} · session {n.sessions[int(n.session[r])]}",
                      f"community {c if c is not None else '–'} · strength {s_eff:.2f} · "
                      f"σ {float(n.sigma[r]):.2f} · recalled {int(n.recall_count[r])}×",
                      short(self.text(uid), 240), *extra)
        return {"id": uid, "label": self.label(uid), "title": tip,
                "size": round(size if size is not None else 6.0 + 6.0 * s_eff, 2),
                "color": {"background": colour, "border": "#555555"},
                "community": -1 if c is None else int(c)}

    def nodes(self, uids: Sequence[str], *, labels: int = 30) -> list[dict]:
        """:meth:`node` for each uid; only the ``labels`` strongest keep a canvas label (the
        rest show theirs on hover), so a big graph stays readable."""
        out = [self.node(u) for u in uids]
        if len(out) > labels:
            keep = {d["id"] for d in sorted(out, key=lambda d: (-d["size"], d["id"]))[:labels]}
            for d in out:
                if d["id"] not in keep:
                    d["label"] = ""
        return out

    # -- edges -----------------------------------------------------------------------------
    def _w_eff(self, ids: np.ndarray) -> np.ndarray:
        e = self.mem.mirror.edges
        return np.asarray(edge_eff(e.w[ids], e.last_ts[ids], self.now,
                                   self.mem.settings.EDGE_TAU), np.float64)

    def incident(self, uids: Sequence[str]) -> list[tuple[str, str, float]]:
        """Every alive COACT edge touching ``uids``: (src, dst, w_eff), strongest first."""
        n, e = self.mem.mirror.nodes, self.mem.mirror.edges
        rows = [n.index[u] for u in uids if u in n.index]
        if not rows or not e.count:
            return []
        out_ids, _ = e.out_edges_many(rows)
        in_ids, _ = e.in_edges_many(rows)
        ids = np.unique(np.concatenate([out_ids, in_ids]))
        w = self._w_eff(ids)
        order = np.lexsort((ids, -w))
        alive = n.alive
        res = []
        for k in order.tolist():
            a, b = int(e.src[ids[k]]), int(e.dst[ids[k]])
            if alive[a] and alive[b]:
                res.append((n.uid[a], n.uid[b], float(w[k])))
        return res

    def edges_among(self, uids: Sequence[str], *, min_w: float = 0.0,
                    per_node: int | None = None) -> list[dict]:
        """vis-network dicts of the COACT edges between shown nodes (width by w_eff).

        ``per_node`` keeps only each node's strongest edges (the union over nodes), so a
        dense neighbourhood stays readable; None keeps all."""
        keep = set(uids)
        inside = [(a, b, w) for a, b, w in self.incident(uids)
                  if a in keep and b in keep and w > min_w]  # strongest first
        if per_node is not None:
            count: dict[str, int] = {}
            chosen = []
            for a, b, w in inside:
                if count.get(a, 0) < per_node or count.get(b, 0) < per_node:
                    chosen.append((a, b, w))
                    count[a] = count.get(a, 0) + 1
                    count[b] = count.get(b, 0) + 1
            inside = chosen
        return [{"from": a, "to": b, "weight": w,
                 "width": round(0.5 + 1.25 * min(w, 2.0), 2),
                 "title": tooltip(f"{a} → {b}", f"w_eff {w:.3f} at {iso(self.now)}")}
                for a, b, w in inside]

    def neighbours(self, uids: Sequence[str], *, exclude: Iterable[str] = (),
                   limit: int | None = None) -> list[str]:
        """COACT neighbours of ``uids`` (either direction), strongest edge first, without
        ``exclude`` and ``uids`` themselves; at most ``limit``."""
        skip = set(exclude) | set(uids)
        out: list[str] = []
        for a, b, _w in self.incident(uids):
            for u in (a, b):
                if u not in skip:
                    skip.add(u)
                    out.append(u)
                    if limit is not None and len(out) >= limit:
                        return out
        return out

    def node_table(self, uids: Sequence[str]) -> list[dict[str, Any]]:
        """One plain row per node: uid, session, time, community, strength, σ, recall count,
        text (the machine-readable twin of what the view shows)."""
        n = self.mem.mirror.nodes
        comm = self.communities()
        s = self.strength(list(uids))
        rows = []
        for k, u in enumerate(uids):
            r = n.index[u]
            rows.append({"uid": u, "session": n.sessions[int(n.session[r])],
                         "ts": float(n.ts[r]), "time": iso(float(n.ts[r])),
                         "community": comm.get(u, -1), "strength_eff": float(s[k]),
                         "sigma": float(n.sigma[r]), "recall_count": int(n.recall_count[r]),
                         "assistant_only": bool(n.assistant_only[r]), "text": self.text(u)})
        return rows
