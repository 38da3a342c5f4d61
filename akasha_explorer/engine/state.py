"""The in-memory mirror the engine computes on (SPEC §1): plain numpy arrays, no store.

:class:`NodeTable` holds one row per node (Turn) in ingest order — vectors, salience and the
dynamic state of SPEC §3 — plus one row per message (vector, node, time). Messages of a
node are contiguous, so per-node maxima are one ``np.maximum.reduceat``.
:class:`EdgeStore` (:mod:`.edges`) holds the directed COACT edges (stored weight, last update time,
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

from .edges import EdgeStore
from .growth import grow

__all__ = ["F64", "EdgeStore", "NodeTable", "NodeVectors"]

F64 = NDArray[np.float64]
"""A float64 array: the type of the engine's scores and times."""


class NodeTable:
    """Node and message arrays in ingest order (see module docstring).

    Public attributes are views of the first ``n`` nodes / ``m`` messages:
    ``vec`` (n, dim) float32 L2-normalised node vectors (a :class:`NodeVectors`: a node
    whose vector is byte for byte its one message's vector shares that row of ``msg_vec``
    instead of holding a copy — issue 14); ``ts``, ``sigma``, ``strength``,
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
        self._own = np.zeros(0, np.int64)
        """Per node: its row in ``_ovec``, or -1 when its vector is its message's."""
        self._ovec = np.zeros((0, self.dim), np.float32)
        self.k_own = 0
        self._own_rows: NDArray[np.int64] | None = None
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
        self._msg_sum = np.zeros(self.dim, np.float64)
        self._summed = 0
        """Nodes whose messages ``_msg_sum`` holds (the rest are added when it is read)."""
        self._neighbors: tuple[NDArray[np.int64], NDArray[np.int64]] | None = None

    # -- views -------------------------------------------------------------------------
    @property
    def vec(self) -> NodeVectors:
        return NodeVectors(self)

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

    @property
    def msg_sum(self) -> NDArray[np.float64]:
        """Sum of all stored message unit vectors (the salience centroid before
        normalising): each node's messages summed in order, node after node, as
        :meth:`add_node` adds them — nodes bulk-loaded since the last read are summed now
        (in blocks; the open does not pay for it)."""
        n0, n = self._summed, self.n
        step = 8192
        for a in range(n0, n, step):
            b = min(n, a + step)
            first, counts = self._first_msg[a:b], self._n_msg[a:b].astype(np.int64)
            lo, hi = int(first[0]), int(first[-1] + counts[-1])
            blk = self._msg_vec[lo:hi].astype(np.float64)
            per_node = blk
            if int(counts.max()) > 1:
                at = first - lo
                per_node = blk[at]
                for k in range(1, int(counts.max())):
                    more = np.flatnonzero(counts > k)
                    per_node[more] += blk[at[more] + k]
            per_node[0] += self._msg_sum  # then a reduction over axis 0: row after row
            self._msg_sum = np.add.reduce(per_node, axis=0)
        self._summed = n
        return self._msg_sum

    # -- growth --------------------------------------------------------------------------
    def _reserve(self, nodes: int, msgs: int) -> None:
        need = self.n + nodes
        if need > self._own.shape[0]:
            self._own = grow(self._own, need)
            self._f64 = {k: grow(v, need) for k, v in self._f64.items()}
            self._recall = grow(self._recall, need)
            self._assistant_only = grow(self._assistant_only, need)
            self._alive = grow(self._alive, need)
            self._replayed = grow(self._replayed, need)
            self._session = grow(self._session, need)
            self._first_msg = grow(self._first_msg, need)
            self._n_msg = grow(self._n_msg, need)
        need_m = self.m + msgs
        if need_m > self._msg_vec.shape[0]:
            self._msg_vec = grow(self._msg_vec, need_m)
            self._msg_node = grow(self._msg_node, need_m)
            self._msg_ts = grow(self._msg_ts, need_m)
            self._msg_alive = grow(self._msg_alive, need_m)

    def reserve(self, nodes: int, msgs: int) -> None:
        """Make room for ``nodes`` more nodes and ``msgs`` more messages (a bulk load
        reserves once instead of growing by doubling)."""
        self._reserve(nodes, msgs)

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
        """Append one node with its messages; returns its row. ``uid`` must be new or
        forgotten (:meth:`kill`: its message uids too) — the uid then names the new row."""
        if self._taken(uid):
            raise ValueError(f"node {uid!r} is already in the mirror")
        mv = np.asarray(msg_vectors, dtype=np.float32).reshape(-1, self.dim)
        k = mv.shape[0]
        if k == 0 or k != len(msg_ts) or k != len(msg_uids):
            raise ValueError("a node needs >= 1 message and one ts/uid per message vector")
        self._reserve(1, k)
        i, j = self.n, self.m
        v = np.asarray(vector, dtype=np.float32).ravel()
        self._own[i] = -1 if k == 1 and _same_bytes(v, mv[0]) else self._add_own(v[None, :])
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
        if self._summed == i:  # caught up: add this one now (else the next read does)
            self._msg_sum += mv.astype(np.float64).sum(axis=0)
            self._summed = i + 1
        self.uid.append(uid)
        self.index[uid] = i
        self.n += 1
        self.m += k
        self._neighbors = None
        self._own_rows = None
        return i

    def _add_own(self, vectors: NDArray[np.float32]) -> int:
        """Append node vectors that are not a message's; returns the first one's row."""
        k = self.k_own
        self._ovec = grow(self._ovec, k + vectors.shape[0])
        self._ovec[k : k + vectors.shape[0]] = vectors
        self.k_own = k + vectors.shape[0]
        return k

    def add_nodes(
        self,
        uids: Sequence[str],
        *,
        ts: ArrayLike,
        session: Sequence[str],
        vectors: ArrayLike,
        sigma: ArrayLike,
        strength: ArrayLike,
        resource: ArrayLike,
        assistant_only: ArrayLike,
        n_msg: ArrayLike,
        msg_vectors: ArrayLike,
        msg_ts: ArrayLike,
        msg_uids: Sequence[str],
        strength_ts: ArrayLike,
        resource_ts: ArrayLike,
        recall_count: ArrayLike,
        replayed: ArrayLike,
    ) -> NDArray[np.int64]:
        """Append many nodes at once (the mirror's bulk load, issue 14): the same table as
        :meth:`add_node` called for each in order — :attr:`msg_sum` included, bit for bit
        (summed when first read) —
        without a Python step per node. Node ``k`` has the next ``n_msg[k]`` messages.
        Returns the new rows.

        >>> t = NodeTable(dim=1)
        >>> t.add_nodes(["a", "b"], ts=[1.0, 2.0], session=["s", "s"], vectors=[[1.0], [1.0]],
        ...             sigma=[0, 0], strength=[1, 1], resource=[1, 1],
        ...             assistant_only=[False, False], n_msg=[1, 2],
        ...             msg_vectors=[[1.0], [1.0], [1.0]], msg_ts=[1.0, 2.0, 2.0],
        ...             msg_uids=["a", "b", "b:1"], strength_ts=[1.0, 2.0],
        ...             resource_ts=[1.0, 2.0], recall_count=[0, 0],
        ...             replayed=[False, False]).tolist()
        [0, 1]
        >>> t.first_msg.tolist(), t.msg_node.tolist(), t.k_own   # "a" shares its message's
        ([0, 1], [0, 1, 1], 1)
        """
        n, m0, n0 = len(uids), self.m, self.n
        counts = np.asarray(n_msg, np.int64).ravel()
        mv = np.asarray(msg_vectors, np.float32).reshape(-1, self.dim)
        vec = np.asarray(vectors, np.float32).reshape(-1, self.dim)
        m = mv.shape[0]
        if counts.shape[0] != n or vec.shape[0] != n or (n and int(counts.min()) < 1) \
                or int(counts.sum()) != m or len(msg_uids) != m:
            raise ValueError("add_nodes needs one vector and >= 1 message per node, and one "
                             "vector / ts / uid per message")
        if len(set(uids)) != n or any(self._taken(u) for u in uids):
            raise ValueError("add_nodes: a node uid is repeated or already in the mirror")
        if len(set(msg_uids)) != m or any(self._msg_taken(u) for u in msg_uids):
            raise ValueError("add_nodes: a message uid is repeated or already in the mirror")
        if n == 0:
            return np.zeros(0, np.int64)
        self._reserve(n, m)
        rows = np.arange(n0, n0 + n, dtype=np.int64)
        f = self._f64
        for name, value in (("ts", ts), ("sigma", sigma), ("strength", strength),
                            ("strength_ts", strength_ts), ("resource", resource),
                            ("resource_ts", resource_ts)):
            f[name][n0 : n0 + n] = np.asarray(value, np.float64)
        self._recall[n0 : n0 + n] = np.asarray(recall_count, np.int64)
        self._assistant_only[n0 : n0 + n] = np.asarray(assistant_only, bool)
        self._alive[n0 : n0 + n] = True
        self._replayed[n0 : n0 + n] = np.asarray(replayed, bool)
        code = self.session_code
        for name in dict.fromkeys(session):
            if name not in code:
                code[name] = len(self.sessions)
                self.sessions.append(name)
        self._session[n0 : n0 + n] = np.fromiter((code[x] for x in session), np.int32, n)
        first = m0 + np.cumsum(counts) - counts
        self._first_msg[n0 : n0 + n] = first
        self._n_msg[n0 : n0 + n] = counts
        self._msg_vec[m0 : m0 + m] = mv
        self._msg_node[m0 : m0 + m] = np.repeat(rows, counts)
        self._msg_ts[m0 : m0 + m] = np.asarray(msg_ts, np.float64)
        self._msg_alive[m0 : m0 + m] = True
        self.msg_index.update(zip(msg_uids, range(m0, m0 + m), strict=True))
        self.msg_uid.extend(msg_uids)
        own = np.full(n, -1, np.int64)
        step = 8192
        for a in range(0, n, step):  # in blocks: no full-size temporaries
            b = min(n, a + step)
            shared = (counts[a:b] == 1) & (vec[a:b].view(np.uint32)
                                           == mv[first[a:b] - m0].view(np.uint32)).all(axis=1)
            mine = np.flatnonzero(~shared)
            if mine.size:
                start = self._add_own(vec[a:b][mine])
                own[a + mine] = start + np.arange(mine.size)
        self._own[n0 : n0 + n] = own
        self.uid.extend(uids)
        self.index.update(zip(uids, rows.tolist(), strict=True))
        self.n += n
        self.m += m
        self._neighbors = None
        self._own_rows = None
        return rows

    def cosines(self, q: ArrayLike) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """``(cos_node, cos_msg)`` of every node with the unit query ``q`` (SPEC §4 stage 1):
        one pass over the message vectors, plus the node vectors that are not a message's.

        The numbers are those of ``np.einsum("ij,j->i", vec, q)`` and
        :meth:`cos_msg_max` of the message cosines, bit for bit: a shared node row is the
        same bytes, and each einsum row is summed on its own (decision 15 of
        :mod:`.recall`).

        >>> t = NodeTable(dim=2)
        >>> _ = t.add_node("a", ts=0.0, session="s", vector=[0.6, 0.8], sigma=0.0,
        ...                strength=1.0, resource=1.0, assistant_only=False,
        ...                msg_vectors=[[1.0, 0.0], [0.0, 1.0]], msg_ts=[0.0, 0.0],
        ...                msg_uids=["a:0", "a:1"])
        >>> [x.tolist() for x in t.cosines(np.array([1.0, 0.0], np.float32))]
        [[0.6000000238418579], [1.0]]
        """
        qv = np.asarray(q, np.float32).ravel()
        raw = np.einsum("ij,j->i", self.msg_vec, qv)
        cos_node = raw[self.first_msg].astype(np.float64)
        if self.k_own:
            if self._own_rows is None:
                self._own_rows = np.flatnonzero(self._own[: self.n] >= 0)
            mine = self._own_rows
            own_cos = np.einsum("ij,j->i", self._ovec[: self.k_own], qv)
            cos_node[mine] = own_cos[self._own[mine]]
        return cos_node, self.cos_msg_max(raw)

    def nbytes(self) -> int:
        """Bytes held by the node and message arrays (capacity included; not the uid lists
        and dicts)."""
        arrays: list[NDArray[Any]] = [self._own, self._ovec, *self._f64.values(), self._recall,
                  self._assistant_only, self._alive, self._replayed, self._session,
                  self._first_msg, self._n_msg, self._msg_vec, self._msg_node, self._msg_ts,
                  self._msg_alive]
        return sum(int(a.nbytes) for a in arrays)

    def _taken(self, uid: str) -> bool:
        """Whether ``uid`` names a live node (a forgotten one's uid may be stored again:
        ``allow_forgotten``)."""
        i = self.index.get(uid)
        return i is not None and bool(self._alive[i])

    def _msg_taken(self, uid: str) -> bool:
        j = self.msg_index.get(uid)
        return j is not None and bool(self._msg_alive[j])

    def kill(self, i: int) -> None:
        """Mask node ``i`` and its messages (forget); rows stay so indices stay valid."""
        self._alive[i] = False
        a, k = int(self._first_msg[i]), int(self._n_msg[i])
        self._msg_sum = self.msg_sum - self._msg_vec[a : a + k].astype(np.float64).sum(axis=0)
        self._msg_alive[a : a + k] = False
        self._msg_vec[a : a + k] = 0.0
        if self._own[i] >= 0:
            self._ovec[self._own[i]] = 0.0
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


def _same_bytes(a: NDArray[np.float32], b: NDArray[np.float32]) -> bool:
    return a.shape == b.shape and a.tobytes() == b.tobytes()


class NodeVectors:
    """The node vectors of a :class:`NodeTable` as a read-only ``(n, dim)`` float32
    array-like: ``vec[i]``, ``vec[rows]``, ``vec[a:b]`` and ``np.asarray(vec)`` give plain
    arrays. A node whose vector is its one message's reads that row of ``msg_vec``.

    >>> t = NodeTable(dim=2)
    >>> _ = t.add_node("a", ts=0.0, session="s", vector=[0.0, 1.0], sigma=0.0,
    ...                strength=1.0, resource=1.0, assistant_only=False,
    ...                msg_vectors=[[0.0, 1.0]], msg_ts=[0.0], msg_uids=["a"])
    >>> t.vec.shape, t.vec[0].tolist(), t.vec[[0, 0]].shape, t.k_own
    ((1, 2), [0.0, 1.0], (2, 2), 0)
    """

    ndim = 2
    dtype = np.dtype(np.float32)

    def __init__(self, table: NodeTable) -> None:
        self._t = table

    @property
    def shape(self) -> tuple[int, int]:
        return (self._t.n, self._t.dim)

    def __len__(self) -> int:
        return self._t.n

    def rows(self, rows: ArrayLike) -> NDArray[np.float32]:
        """The vectors of the given node rows, as a new ``(len(rows), dim)`` array."""
        t = self._t
        r = np.asarray(rows, np.int64).ravel()
        if r.size and (int(r.min()) < 0 or int(r.max()) >= t.n):
            raise IndexError(f"node row out of range (n={t.n})")
        own = t._own[r]
        out = np.empty((r.shape[0], t.dim), np.float32)
        mine = own >= 0
        out[mine] = t._ovec[own[mine]]
        out[~mine] = t._msg_vec[t._first_msg[r[~mine]]]
        return out

    def __getitem__(self, key: Any) -> NDArray[np.float32]:
        if isinstance(key, int | np.integer):
            i = int(key) + (self._t.n if int(key) < 0 else 0)
            return self.rows([i])[0]
        if isinstance(key, tuple):
            return np.asarray(self)[key]
        return self.rows(np.arange(self._t.n, dtype=np.int64)[key])

    def __iter__(self) -> Any:
        return iter(np.asarray(self))

    def __array__(self, dtype: Any = None, copy: Any = None) -> NDArray[Any]:
        out = self.rows(np.arange(self._t.n, dtype=np.int64))
        return out if dtype is None else out.astype(dtype)

    def astype(self, dtype: Any) -> NDArray[Any]:
        """A materialised copy in ``dtype``."""
        return np.asarray(self).astype(dtype)

    def __matmul__(self, other: ArrayLike) -> NDArray[Any]:
        return np.asarray(self) @ np.asarray(other)
