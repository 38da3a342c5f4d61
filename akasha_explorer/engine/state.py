"""The in-memory mirror the engine computes on (SPEC §1): plain numpy arrays, no store.

:class:`NodeTable` holds one row per node (Turn) in ingest order — vectors, salience and the
dynamic state of SPEC §3 — plus one row per message (vector, node, time). Messages of a
node are contiguous, so per-node maxima are one ``np.maximum.reduceat``.
:class:`EdgeStore` holds the directed COACT edges (stored weight, last update time,
co-activation count) with per-node out/in adjacency for one-hop reads.

Both grow in place (amortised doubling) and never reorder rows, so an index handed out
stays valid for the life of the mirror. Forgotten rows are masked (``alive``), not removed.
The adapters in :mod:`akasha_explorer.memory` fill these from Kuzu/LanceDB on open and write
every change through the journal; nothing here touches a file.

>>> import numpy as np
>>> nodes = NodeTable(dim=2)
>>> i = nodes.add_node("s:0", ts=10.0, session="s", vector=[1.0, 0.0], sigma=0.0,
...                    strength=2.1, resource=1.0, assistant_only=False,
...                    msg_vectors=[[1.0, 0.0]], msg_ts=[10.0], msg_uids=["s:0"])
>>> nodes.n, nodes.m, nodes.index["s:0"]
(1, 1, 0)
>>> edges = EdgeStore()
>>> e = edges.upsert(0, 1, w=0.1, last_ts=10.0, co_count=1)
>>> edges.find(0, 1) == e, edges.find(1, 0)
(True, -1)
>>> edges.fan(2).tolist()
[1, 1]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = ["EdgeStore", "NodeTable"]


def _grow(arr: NDArray[Any], need: int) -> NDArray[Any]:
    """Return ``arr`` with room for ``need`` rows (doubling), keeping its contents."""
    if need <= arr.shape[0]:
        return arr
    cap = max(need, 2 * arr.shape[0], 16)
    out = np.zeros((cap, *arr.shape[1:]), dtype=arr.dtype)
    out[: arr.shape[0]] = arr
    return out


class NodeTable:
    """Node and message arrays in ingest order (see module docstring).

    Public attributes are views of the first ``n`` nodes / ``m`` messages:
    ``vec`` (n, dim) float32 L2-normalised node vectors; ``ts``, ``sigma``, ``strength``,
    ``strength_ts``, ``resource``, ``resource_ts`` float64; ``recall_count`` int64;
    ``assistant_only``, ``alive``, ``replayed`` bool; ``session`` int32 codes into
    ``sessions``; ``first_msg``/``n_msg`` locate a node's messages; ``msg_vec`` (m, dim),
    ``msg_node``, ``msg_ts``, ``msg_alive``. ``uid``/``msg_uid`` are lists and ``index`` /
    ``msg_index`` map uids to rows.
    """

    _NODE_F64 = ("ts", "sigma", "strength", "strength_ts", "resource", "resource_ts")

    def __init__(self, dim: int) -> None:
        self.dim = int(dim)
        self.n = 0
        self.m = 0
        self.uid: list[str] = []
        self.index: dict[str, int] = {}
        self.msg_uid: list[str] = []
        self.msg_index: dict[str, int] = {}
        self.sessions: list[str] = []
        self.session_code: dict[str, int] = {}
        self._vec = np.zeros((0, self.dim), np.float32)
        self._f64 = {k: np.zeros(0, np.float64) for k in self._NODE_F64}
        self._recall = np.zeros(0, np.int64)
        self._assistant_only = np.zeros(0, bool)
        self._alive = np.zeros(0, bool)
        self._replayed = np.zeros(0, bool)
        self._session = np.zeros(0, np.int32)
        self._first_msg = np.zeros(0, np.int64)
        self._n_msg = np.zeros(0, np.int32)
        self._msg_vec = np.zeros((0, self.dim), np.float32)
        self._msg_node = np.zeros(0, np.int64)
        self._msg_ts = np.zeros(0, np.float64)
        self._msg_alive = np.zeros(0, bool)
        self.msg_sum = np.zeros(self.dim, np.float64)
        """Sum of all stored message unit vectors (the salience centroid before normalising)."""
        self._neighbors: tuple[NDArray[np.int64], NDArray[np.int64]] | None = None

    # -- views -------------------------------------------------------------------------
    @property
    def vec(self) -> NDArray[np.float32]:
        return self._vec[: self.n]

    @property
    def ts(self) -> NDArray[np.float64]:
        return self._f64["ts"][: self.n]

    @property
    def sigma(self) -> NDArray[np.float64]:
        return self._f64["sigma"][: self.n]

    @property
    def strength(self) -> NDArray[np.float64]:
        return self._f64["strength"][: self.n]

    @property
    def strength_ts(self) -> NDArray[np.float64]:
        return self._f64["strength_ts"][: self.n]

    @property
    def resource(self) -> NDArray[np.float64]:
        return self._f64["resource"][: self.n]

    @property
    def resource_ts(self) -> NDArray[np.float64]:
        return self._f64["resource_ts"][: self.n]

    @property
    def recall_count(self) -> NDArray[np.int64]:
        return self._recall[: self.n]

    @property
    def assistant_only(self) -> NDArray[np.bool_]:
        return self._assistant_only[: self.n]

    @property
    def alive(self) -> NDArray[np.bool_]:
        return self._alive[: self.n]

    @property
    def replayed(self) -> NDArray[np.bool_]:
        return self._replayed[: self.n]

    @property
    def session(self) -> NDArray[np.int32]:
        return self._session[: self.n]

    @property
    def first_msg(self) -> NDArray[np.int64]:
        return self._first_msg[: self.n]

    @property
    def n_msg(self) -> NDArray[np.int32]:
        return self._n_msg[: self.n]

    @property
    def msg_vec(self) -> NDArray[np.float32]:
        return self._msg_vec[: self.m]

    @property
    def msg_node(self) -> NDArray[np.int64]:
        return self._msg_node[: self.m]

    @property
    def msg_ts(self) -> NDArray[np.float64]:
        return self._msg_ts[: self.m]

    @property
    def msg_alive(self) -> NDArray[np.bool_]:
        return self._msg_alive[: self.m]

    # -- growth --------------------------------------------------------------------------
    def _reserve(self, nodes: int, msgs: int) -> None:
        need = self.n + nodes
        if need > self._vec.shape[0]:
            self._vec = _grow(self._vec, need)
            self._f64 = {k: _grow(v, need) for k, v in self._f64.items()}
            self._recall = _grow(self._recall, need)
            self._assistant_only = _grow(self._assistant_only, need)
            self._alive = _grow(self._alive, need)
            self._replayed = _grow(self._replayed, need)
            self._session = _grow(self._session, need)
            self._first_msg = _grow(self._first_msg, need)
            self._n_msg = _grow(self._n_msg, need)
        need_m = self.m + msgs
        if need_m > self._msg_vec.shape[0]:
            self._msg_vec = _grow(self._msg_vec, need_m)
            self._msg_node = _grow(self._msg_node, need_m)
            self._msg_ts = _grow(self._msg_ts, need_m)
            self._msg_alive = _grow(self._msg_alive, need_m)

    def add_node(
        self,
        uid: str,
        *,
        ts: float,
        session: str,
        vector: ArrayLike,
        sigma: float,
        strength: float,
        resource: float,
        assistant_only: bool,
        msg_vectors: ArrayLike,
        msg_ts: Sequence[float],
        msg_uids: Sequence[str],
        strength_ts: float | None = None,
        resource_ts: float | None = None,
        recall_count: int = 0,
        replayed: bool = False,
    ) -> int:
        """Append one node with its messages; returns its row. ``uid`` must be new."""
        if uid in self.index:
            raise ValueError(f"node {uid!r} is already in the mirror")
        mv = np.asarray(msg_vectors, dtype=np.float32).reshape(-1, self.dim)
        k = mv.shape[0]
        if k == 0 or k != len(msg_ts) or k != len(msg_uids):
            raise ValueError("a node needs >= 1 message and one ts/uid per message vector")
        self._reserve(1, k)
        i, j = self.n, self.m
        self._vec[i] = np.asarray(vector, dtype=np.float32)
        f = self._f64
        f["ts"][i] = ts
        f["sigma"][i] = sigma
        f["strength"][i] = strength
        f["strength_ts"][i] = ts if strength_ts is None else strength_ts
        f["resource"][i] = resource
        f["resource_ts"][i] = ts if resource_ts is None else resource_ts
        self._recall[i] = recall_count
        self._assistant_only[i] = assistant_only
        self._alive[i] = True
        self._replayed[i] = replayed
        if session not in self.session_code:
            self.session_code[session] = len(self.sessions)
            self.sessions.append(session)
        self._session[i] = self.session_code[session]
        self._first_msg[i] = j
        self._n_msg[i] = k
        self._msg_vec[j : j + k] = mv
        self._msg_node[j : j + k] = i
        self._msg_ts[j : j + k] = np.asarray(msg_ts, dtype=np.float64)
        self._msg_alive[j : j + k] = True
        for off, mu in enumerate(msg_uids):
            self.msg_index[mu] = j + off
        self.msg_uid.extend(msg_uids)
        self.msg_sum += mv.astype(np.float64).sum(axis=0)
        self.uid.append(uid)
        self.index[uid] = i
        self.n += 1
        self.m += k
        self._neighbors = None
        return i

    def kill(self, i: int) -> None:
        """Mask node ``i`` and its messages (forget); rows stay so indices stay valid."""
        self._alive[i] = False
        a, k = int(self._first_msg[i]), int(self._n_msg[i])
        self.msg_sum -= self._msg_vec[a : a + k].astype(np.float64).sum(axis=0)
        self._msg_alive[a : a + k] = False
        self._msg_vec[a : a + k] = 0.0
        self._vec[i] = 0.0
        self._neighbors = None

    def neighbors(self) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
        """``(prev, next)``: for each node, the row of the alive node just before / after
        it in its session (by time, then row), or -1. Cached until a node is added or
        killed; dead nodes have no neighbours and are no one's.

        >>> t = NodeTable(dim=1)
        >>> for k, (s, ts) in enumerate([("a", 5.0), ("b", 1.0), ("a", 2.0), ("a", 9.0)]):
        ...     _ = t.add_node(f"u{k}", ts=ts, session=s, vector=[1.0], sigma=0.0,
        ...                    strength=1.0, resource=1.0, assistant_only=False,
        ...                    msg_vectors=[[1.0]], msg_ts=[ts], msg_uids=[f"u{k}:0"])
        >>> [x.tolist() for x in t.neighbors()]
        [[2, -1, -1, 0], [3, -1, 0, -1]]
        """
        if self._neighbors is None:
            n = self.n
            prev = np.full(n, -1, np.int64)
            nxt = np.full(n, -1, np.int64)
            rows = np.flatnonzero(self.alive)
            order = rows[np.lexsort((rows, self.ts[rows], self.session[rows]))]
            same = self.session[order[1:]] == self.session[order[:-1]]
            a, b = order[:-1][same], order[1:][same]
            nxt[a], prev[b] = b, a
            self._neighbors = (prev, nxt)
        return self._neighbors

    def set_state(self, i: int, *, strength: float, strength_ts: float, resource: float,
                  resource_ts: float, recall_count: int) -> None:
        """Overwrite the dynamic state of node ``i`` (absolute values)."""
        f = self._f64
        f["strength"][i] = strength
        f["strength_ts"][i] = strength_ts
        f["resource"][i] = resource
        f["resource_ts"][i] = resource_ts
        self._recall[i] = recall_count

    def state_row(self, i: int) -> dict[str, float | int]:
        """The dynamic state of node ``i`` as plain Python numbers."""
        f = self._f64
        return {"strength": float(f["strength"][i]), "strength_ts": float(f["strength_ts"][i]),
                "resource": float(f["resource"][i]), "resource_ts": float(f["resource_ts"][i]),
                "recall_count": int(self._recall[i])}

    def set_replayed(self, i: int, value: bool = True) -> None:
        """Mark node ``i`` as replayed (or not)."""
        self._replayed[i] = value

    def cos_msg_max(self, msg_cos: NDArray[np.floating[Any]]) -> NDArray[np.float64]:
        """Per-node max of a per-message array (messages are contiguous per node).

        Nodes rarely have more than a few messages, so up to 4 it takes the max with a
        few vectorised gathers (much faster than ``reduceat``; the result is the same).

        >>> t = NodeTable(dim=1)
        >>> for k, mv in enumerate([[[1.0]], [[1.0], [1.0]]]):
        ...     _ = t.add_node(f"u{k}", ts=0.0, session="s", vector=[1.0], sigma=0.0,
        ...                    strength=1.0, resource=1.0, assistant_only=False,
        ...                    msg_vectors=mv, msg_ts=[0.0] * len(mv),
        ...                    msg_uids=[f"u{k}:{j}" for j in range(len(mv))])
        >>> t.cos_msg_max(np.array([0.1, 0.2, 0.3])).tolist()
        [0.1, 0.3]
        """
        if self.n == 0:
            return np.zeros(0, np.float64)
        mc = np.asarray(msg_cos)
        n_msg = self.n_msg
        top = int(n_msg.max())
        if top > 4:
            return np.maximum.reduceat(np.asarray(mc, np.float64), self.first_msg)
        first = self.first_msg
        out = mc[first]
        for k in range(1, top):
            more = np.flatnonzero(n_msg > k)
            out[more] = np.maximum(out[more], mc[first[more] + k])
        return out.astype(np.float64)


class EdgeStore:
    """Directed COACT edges with O(1) lookup and per-node adjacency.

    Arrays (views of the first ``count`` edges): ``src``, ``dst`` int64; ``w`` (stored
    weight, not decayed) and ``last_ts`` float64; ``co_count`` int64. ``out_edges(i)`` and
    ``in_edges(i)`` return edge ids sorted by the other end's row (canonical: independent of
    creation order). ``fan(n)`` counts
    in + out edges per node. Edges are removed only by :meth:`drop_node` (forget) and
    :meth:`drop_edge` (undoing a person's link).
    """

    def __init__(self) -> None:
        self.count = 0
        self._src = np.zeros(0, np.int64)
        self._dst = np.zeros(0, np.int64)
        self._w = np.zeros(0, np.float64)
        self._last = np.zeros(0, np.float64)
        self._co = np.zeros(0, np.int64)
        self._alive = np.zeros(0, bool)
        self._key: dict[int, int] = {}
        self._out: list[NDArray[np.int64]] = []
        self._out_n: list[int] = []
        self._in: list[NDArray[np.int64]] = []
        self._in_n: list[int] = []
        self._fan = np.zeros(0, np.int64)

    @staticmethod
    def _k(s: int, d: int) -> int:
        return (int(s) << 32) | int(d)

    @property
    def src(self) -> NDArray[np.int64]:
        return self._src[: self.count]

    @property
    def dst(self) -> NDArray[np.int64]:
        return self._dst[: self.count]

    @property
    def w(self) -> NDArray[np.float64]:
        return self._w[: self.count]

    @property
    def last_ts(self) -> NDArray[np.float64]:
        return self._last[: self.count]

    @property
    def co_count(self) -> NDArray[np.int64]:
        return self._co[: self.count]

    @property
    def alive(self) -> NDArray[np.bool_]:
        return self._alive[: self.count]

    def n_alive(self) -> int:
        """Number of edges not removed by forget."""
        return int(self.alive.sum())

    def _ensure_node(self, i: int) -> None:
        while len(self._out) <= i:
            self._out.append(np.zeros(4, np.int64))
            self._out_n.append(0)
            self._in.append(np.zeros(4, np.int64))
            self._in_n.append(0)
        if self._fan.shape[0] <= i:
            self._fan = _grow(self._fan, i + 1)

    @staticmethod
    def _push(lists: list[NDArray[np.int64]], counts: list[int], i: int, e: int,
              other: NDArray[np.int64]) -> None:
        """Insert edge ``e`` into node ``i``'s list, kept sorted by the other end's row.

        A canonical order (not creation order) makes every sum and tie-break over a node's
        edges independent of how the mirror was built — replayed live, or loaded from Kuzu
        in whatever order it returns rows — so traces reproduce exactly after a reopen.
        """
        arr, c = lists[i], counts[i]
        if c == arr.shape[0]:
            arr = _grow(arr, c + 1)
            lists[i] = arr
        pos = int(np.searchsorted(other[arr[:c]], other[e], side="right"))
        if pos < c:
            arr[pos + 1 : c + 1] = arr[pos:c]
        arr[pos] = e
        counts[i] = c + 1

    def find(self, s: int, d: int) -> int:
        """Edge id of ``s -> d`` or -1."""
        return self._key.get(self._k(s, d), -1)

    def upsert(self, s: int, d: int, *, w: float, last_ts: float, co_count: int) -> int:
        """Set ``s -> d`` to absolute values, creating it if needed; returns the edge id."""
        e = self._key.get(self._k(s, d), -1)
        if e < 0:
            if s == d:
                raise ValueError("COACT self-loops are not allowed")
            e = self.count
            need = e + 1
            if need > self._src.shape[0]:
                self._src = _grow(self._src, need)
                self._dst = _grow(self._dst, need)
                self._w = _grow(self._w, need)
                self._last = _grow(self._last, need)
                self._co = _grow(self._co, need)
                self._alive = _grow(self._alive, need)
            self._src[e], self._dst[e], self._alive[e] = s, d, True
            self._key[self._k(s, d)] = e
            self._ensure_node(max(s, d))
            self._push(self._out, self._out_n, s, e, self._dst)
            self._push(self._in, self._in_n, d, e, self._src)
            self._fan[s] += 1
            self._fan[d] += 1
            self.count += 1
        self._w[e] = w
        self._last[e] = last_ts
        self._co[e] = co_count
        return e

    def set_weight(self, e: int, w: float) -> None:
        """Overwrite the stored weight of edge ``e`` (used by heterosynaptic depression)."""
        self._w[e] = w

    def out_edges(self, i: int) -> NDArray[np.int64]:
        """Edge ids leaving node ``i`` (alive ones only), by destination row."""
        if i >= len(self._out):
            return np.zeros(0, np.int64)
        ids = self._out[i][: self._out_n[i]]
        return ids[self._alive[ids]]

    def in_edges(self, i: int) -> NDArray[np.int64]:
        """Edge ids entering node ``i`` (alive ones only), by source row."""
        if i >= len(self._in):
            return np.zeros(0, np.int64)
        ids = self._in[i][: self._in_n[i]]
        return ids[self._alive[ids]]

    def _many(self, lists: list[NDArray[np.int64]], counts: list[int],
              rows: ArrayLike) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
        rs = np.asarray(rows, dtype=np.int64).ravel()
        parts: list[NDArray[np.int64]] = []
        lens = np.zeros(rs.shape[0], np.int64)
        top = len(lists)
        for k, i in enumerate(rs.tolist()):
            if i < top:
                c = counts[i]
                if c:
                    parts.append(lists[i][:c])
                    lens[k] = c
        if not parts:
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        ids = np.concatenate(parts)
        owner = np.repeat(np.arange(rs.shape[0], dtype=np.int64), lens)
        keep = self._alive[ids]
        return ids[keep], owner[keep]

    def out_edges_many(self, rows: ArrayLike) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
        """Alive out-edges of several nodes at once: ``(edge ids, position in rows)``.

        Edge ids come grouped by ``rows`` order, each group by the other end's row.

        >>> es = EdgeStore(); _ = es.upsert(0, 1, w=1.0, last_ts=0.0, co_count=1)
        >>> _ = es.upsert(2, 1, w=1.0, last_ts=0.0, co_count=1)
        >>> [a.tolist() for a in es.out_edges_many([2, 0, 5])]
        [[1, 0], [0, 1]]
        """
        return self._many(self._out, self._out_n, rows)

    def in_edges_many(self, rows: ArrayLike) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
        """Alive in-edges of several nodes at once: ``(edge ids, position in rows)``.

        >>> es = EdgeStore(); _ = es.upsert(0, 1, w=1.0, last_ts=0.0, co_count=1)
        >>> _ = es.upsert(2, 1, w=1.0, last_ts=0.0, co_count=1)
        >>> [a.tolist() for a in es.in_edges_many([1])]
        [[0, 1], [0, 0]]
        """
        return self._many(self._in, self._in_n, rows)

    def fan_of(self, rows: ArrayLike) -> NDArray[np.int64]:
        """Number of COACT edges (in + out) of the given node rows (0 for unknown rows).

        >>> es = EdgeStore(); _ = es.upsert(0, 1, w=1.0, last_ts=0.0, co_count=1)
        >>> es.fan_of([1, 0, 7]).tolist()
        [1, 1, 0]
        """
        rs = np.asarray(rows, dtype=np.int64).ravel()
        out = np.zeros(rs.shape[0], np.int64)
        ok = rs < self._fan.shape[0]
        out[ok] = self._fan[rs[ok]]
        return out

    def set_weights(self, ids: ArrayLike, w: ArrayLike) -> None:
        """Overwrite the stored weights of several edges (vectorised :meth:`set_weight`).

        >>> es = EdgeStore(); e = es.upsert(0, 1, w=1.0, last_ts=0.0, co_count=1)
        >>> es.set_weights([e], [0.95]); es.w.tolist()
        [0.95]
        """
        self._w[np.asarray(ids, dtype=np.int64)] = np.asarray(w, dtype=np.float64)

    def fan(self, n: int) -> NDArray[np.int64]:
        """Number of COACT edges (in + out) of each of the first ``n`` nodes."""
        out = np.zeros(n, np.int64)
        k = min(n, self._fan.shape[0])
        out[:k] = self._fan[:k]
        return out

    def drop_node(self, i: int) -> list[int]:
        """Remove every edge touching node ``i`` (forget); returns the removed edge ids."""
        gone = sorted({*self.out_edges(i).tolist(), *self.in_edges(i).tolist()})
        for e in gone:
            s, d = int(self._src[e]), int(self._dst[e])
            self._alive[e] = False
            self._key.pop(self._k(s, d), None)
            self._fan[s] -= 1
            self._fan[d] -= 1
        return gone

    def drop_edge(self, s: int, d: int) -> int:
        """Remove ``s -> d``; returns its id, or -1 when there is no such edge.

        >>> es = EdgeStore()
        >>> e = es.upsert(0, 1, w=0.5, last_ts=0.0, co_count=1)
        >>> es.drop_edge(0, 1), es.find(0, 1), es.out_edges(0).tolist(), es.fan(2).tolist()
        (0, -1, [], [0, 0])
        """
        e = self._key.pop(self._k(s, d), -1)
        if e >= 0:
            self._alive[e] = False
            self._fan[s] -= 1
            self._fan[d] -= 1
        return e

    def load(self, src: ArrayLike, dst: ArrayLike, w: ArrayLike, last_ts: ArrayLike,
             co_count: ArrayLike) -> None:
        """Bulk-load edges into an empty store (on open) — vectorised, no per-edge Python.

        Gives the same store as upserting the edges one by one (adjacency sorted by the
        other end's row). A repeated (src, dst) pair keeps its last values.

        >>> es = EdgeStore()
        >>> es.load([2, 0, 0], [1, 1, 2], [0.5, 1.0, 0.2], [0.0, 0.0, 0.0], [1, 1, 1])
        >>> es.in_edges(1).tolist(), es.out_edges(0).tolist(), es.fan(3).tolist()
        ([1, 0], [1, 2], [2, 2, 2])
        """
        if self.count:
            raise ValueError("load() needs an empty EdgeStore; use upsert() to add edges")
        s = np.asarray(src, np.int64).ravel()
        d = np.asarray(dst, np.int64).ravel()
        ww = np.asarray(w, np.float64).ravel()
        lt = np.asarray(last_ts, np.float64).ravel()
        cc = np.asarray(co_count, np.int64).ravel()
        if not (s.shape == d.shape == ww.shape == lt.shape == cc.shape):
            raise ValueError("src, dst, w, last_ts and co_count must have the same length")
        if s.size and bool((s == d).any()):
            raise ValueError("COACT self-loops are not allowed")
        key = (s << 32) | d
        _, last = np.unique(key[::-1], return_index=True)  # last occurrence of each pair
        keep = np.sort(s.size - 1 - last)
        s, d, ww, lt, cc, key = s[keep], d[keep], ww[keep], lt[keep], cc[keep], key[keep]
        m = s.size
        self._src, self._dst, self._w, self._last, self._co = s.copy(), d.copy(), ww, lt, cc
        self._alive = np.ones(m, bool)
        self.count = m
        self._key = dict(zip(key.tolist(), range(m), strict=True))
        n = int(max(s.max(), d.max())) + 1 if m else 0
        if n:
            self._ensure_node(n - 1)
        self._fan = _grow(np.zeros(0, np.int64), max(n, 1))
        self._fan[:n] = np.bincount(s, minlength=n) + np.bincount(d, minlength=n)
        for lists, counts, own, other in ((self._out, self._out_n, s, d),
                                          (self._in, self._in_n, d, s)):
            order = np.lexsort((other, own))
            bounds = np.searchsorted(own[order], np.arange(n + 1))
            for i in np.flatnonzero(np.diff(bounds)).tolist():
                a, b = int(bounds[i]), int(bounds[i + 1])
                lists[i] = order[a:b].copy()
                counts[i] = b - a
