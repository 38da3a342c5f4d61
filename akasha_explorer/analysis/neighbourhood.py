"""Turns and their co-activation neighbourhood at a time ``now``: what the notebook panels
draw, as plain values (uids, numbers, texts) read from a store's mirror — the panels turn
them into pictures and never read a store themselves.

A :class:`Neighbourhood` answers: the text that names a turn, its state and decayed
strength at ``now``, its Leiden community, the co-activation edges touching some turns
(effective weights at ``now``, strongest first), their neighbours, the turns of a session,
the newest turns before a time, the whole memory as a map (:meth:`~Neighbourhood.atlas`).
``Memory.neighbourhood`` makes one.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ..engine.dynamics import edge_eff, strength_eff
from .adapters import node_names
from .atlas import ATLAS_MIN_WEIGHT, ATLAS_PER_NODE, Atlas, atlas

if TYPE_CHECKING:
    from ..store.store import Store

__all__ = ["Neighbourhood"]


class Neighbourhood:
    """Node and edge projections of one store at time ``now`` (default: its newest message).

    ``communities`` maps node uid → community id; when not given they are computed once on
    first use (:meth:`communities`).
    """

    def __init__(self, store: Store, *, now: float | None = None,
                 communities: dict[str, int] | None = None) -> None:
        self.store = store
        self.now = float(store.last_ts() if now is None else now)
        self._comm = communities
        self._text: dict[str, str] | None = None

    # -- texts -----------------------------------------------------------------------------------
    def texts(self) -> dict[str, str]:
        """Node uid → the text that names it: its first user message, else its first
        message (every live node) — a message flagged ``injection`` names it by the marker
        the agent's context shows in its place (``[withheld: flagged as injection]``), so
        no label, tooltip or list of a panel shows what the context withholds."""
        if self._text is None:
            self._text = node_names(self.store)
        return self._text

    def text(self, uid: str) -> str:
        """The text that names node ``uid`` ('' for an unknown node)."""
        return self.texts().get(uid, "")

    def lines(self, uids: Sequence[str]) -> dict[str, str]:
        """Node uid → its messages as the agent's context block shows them
        (:func:`~akasha_explorer.brief.context.item_line`: a message flagged as injection
        or failing its sha256 check as its ``[withheld: …]`` marker); unknown or forgotten
        nodes left out. For a view of a recall that lists turns the agent is not sent
        beside those it is."""
        from ..brief.api import messages_of
        from ..brief.context import item_line
        live = [u for u in dict.fromkeys(uids) if self.store.has_node(u)]
        return {u: item_line(rows)[0] for u, rows in messages_of(self.store, live).items()}

    # -- communities -----------------------------------------------------------------------------
    def communities(self) -> dict[str, int]:
        """Node uid → Leiden community of the co-activation graph at ``now``, from the
        store's analytics (the ``"nodes"`` graph view; communities numbered by size,
        largest first). Computed once per :class:`Neighbourhood`."""
        if self._comm is None:
            from .api import graph_view
            nodes = graph_view(self.store, "nodes", now=self.now).nodes
            self._comm = dict(zip(nodes["id"].astype(str), nodes["community"].astype(int),
                                  strict=True))
        return self._comm

    # -- nodes -----------------------------------------------------------------------------------
    def has(self, uid: str) -> bool:
        """Whether ``uid`` is a live node."""
        return self.store.has_node(uid)

    def strength(self, uids: Sequence[str]) -> np.ndarray:
        """Decayed strength at ``now`` (0..STRENGTH_CAP) of each node (:class:`NotFound`
        for a uid the store never held).

        Settings read: ``STRENGTH_TAU``."""
        n = self.store.mirror.nodes
        rows = np.array([n.index[u] if u in n.index else self.store.row(u) for u in uids],
                        np.int64)
        if not rows.size:
            return np.zeros(0)
        return np.asarray(strength_eff(n.strength[rows], n.strength_ts[rows], self.now,
                                       self.store.settings.STRENGTH_TAU), np.float64)

    def info(self, uid: str) -> dict[str, Any]:
        """One node as plain values: uid, session, ts, community (None: none), strength
        (stored), strength_eff (at ``now``), sigma, resource, recall_count,
        assistant_only, text. Raises :class:`NotFound` for a node it does not hold."""
        n = self.store.mirror.nodes
        r = self.store.row(uid)
        return {"uid": uid, "session": n.sessions[int(n.session[r])], "ts": float(n.ts[r]),
                "community": self.communities().get(uid),
                "strength": float(n.strength[r]),
                "strength_eff": float(self.strength([uid])[0]), "sigma": float(n.sigma[r]),
                "resource": float(n.resource[r]), "recall_count": int(n.recall_count[r]),
                "assistant_only": bool(n.assistant_only[r]), "text": self.text(uid)}

    def time_of(self, uid: str) -> float:
        """The time of node ``uid`` (:class:`NotFound` for one it does not hold)."""
        return float(self.store.mirror.nodes.ts[self.store.row(uid)])

    def times(self) -> np.ndarray:
        """The times of every live node, in row (ingest) order."""
        n = self.store.mirror.nodes
        return np.asarray(n.ts[n.alive[: n.n]])

    def session_nodes(self, session: str) -> list[str] | None:
        """The live nodes of ``session`` in time order (None: no such session)."""
        n = self.store.mirror.nodes
        code = n.session_code.get(session)
        if code is None:
            return None
        rows = np.flatnonzero((n.session[: n.n] == code) & n.alive[: n.n])
        rows = rows[np.lexsort((rows, n.ts[rows]))]
        return [n.uid[r] for r in rows.tolist()]

    def newest(self, before: float, k: int) -> list[str]:
        """The ``k`` newest live nodes at or before ``before``, newest first."""
        n = self.store.mirror.nodes
        vis = np.flatnonzero(n.alive[: n.n] & (n.ts <= before))
        return [n.uid[r] for r in vis[np.lexsort((vis, -n.ts[vis]))][:k].tolist()]

    # -- edges -----------------------------------------------------------------------------------
    def _w_eff(self, ids: np.ndarray) -> np.ndarray:
        e = self.store.mirror.edges
        return np.asarray(edge_eff(e.w[ids], e.last_ts[ids], self.now,
                                   self.store.settings.EDGE_TAU), np.float64)

    def incident(self, uids: Sequence[str]) -> list[tuple[str, str, float]]:
        """Every alive COACT edge touching ``uids``: (src, dst, w_eff), strongest first.

        Settings read: ``EDGE_TAU``."""
        n, e = self.store.mirror.nodes, self.store.mirror.edges
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
                    per_node: int | None = None) -> list[tuple[str, str, float]]:
        """The COACT edges between ``uids`` with ``w_eff > min_w``, strongest first.

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
        return inside

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

    # -- the whole map ---------------------------------------------------------------------------
    def atlas(self, *, level: str = "auto", community: int | None = None,
              min_weight: float = ATLAS_MIN_WEIGHT, per_node: int = ATLAS_PER_NODE) -> Atlas:
        """The whole memory as a map at ``now``: every turn (or, above ``TURNS_MAX`` live
        turns, every community) at a fixed place, with its size, group, time, label and
        strongest edges; ``community=k`` drills into one community
        (:func:`~akasha_explorer.analysis.atlas.atlas`; the layout is cached per store
        version)."""
        return atlas(self.store, now=self.now, level=level, community=community,
                     min_weight=min_weight, per_node=per_node, texts=self.texts)
