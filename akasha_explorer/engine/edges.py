"""The COACT edges of the in-memory mirror (SPEC §1): :class:`EdgeStore`, plain numpy
arrays, no store.

Layout (issue 14: 3M edges in ~170 MB, where an edge dict and per-node arrays took
~1.5 GB and most of a 12 s open). Most edges are *indexed*: their ids sorted by
``(src, dst)`` with a row pointer per node (CSR), so a node's out-edges are one slice (its
in-edges likewise, sorted by ``(dst, src)``) and ``(src, dst)`` is found by binary search
in the sorted keys — no Python object per edge. Edges created since (:meth:`upsert`) are
the *later* ones, ids ``upto .. count - 1``: a dict finds them by pair, and sorted key
arrays (brought up to date on the next read, so a replay of many upserts sorts once) give
them to node reads, which merge the two parts in the canonical order. When there are more
than ``compact_min`` later edges and a 32nd as many as indexed ones, the index is rebuilt
over every alive edge (measured: 0.05 s at 600k edges, 0.6 s at 3.3M); reads do not
change. After a bulk :meth:`load` the ids are
in ``(src, dst)`` order and the out-index needs no id array.

>>> es = EdgeStore()
>>> es.load([0, 2], [1, 0], [0.5, 1.0], [0.0, 0.0], [1, 1])
>>> _ = es.upsert(0, 2, w=0.2, last_ts=1.0, co_count=1)
>>> es.out_edges(0).tolist(), es.find(2, 0), es.fan(3).tolist()
([0, 2], 1, [3, 1, 2])
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .growth import grow

__all__ = ["EdgeStore"]

TAIL = 1024
"""Later edges kept unsorted (found by comparison) before they join the sorted run."""

I64 = NDArray[np.int64]


def _own(a: NDArray[Any]) -> NDArray[Any]:
    """``a`` itself when it is a writable array of its own, else a copy (the store
    changes its arrays in place; what it was given stays as it was)."""
    return a if a.flags.owndata and a.flags.writeable and a.flags.c_contiguous else a.copy()


def _ranges(lo: I64, hi: I64) -> tuple[I64, I64]:
    """``(positions, owner)``: the concatenated ranges ``lo[k] .. hi[k] - 1`` and the
    ``k`` each position came from."""
    lens = hi - lo
    owner = np.repeat(np.arange(lo.shape[0], dtype=np.int64), lens)
    pos = np.arange(int(lens.sum()), dtype=np.int64) + np.repeat(lo - (np.cumsum(lens) - lens),
                                                                 lens)
    return pos, owner


def _merge(ids: I64, owner: I64, lens: I64, later: I64, lown: I64, other: I64
           ) -> tuple[I64, I64]:
    """Insert the ``later`` edge ids (owners ``lown``, sorted by owner then ``other``) into
    ``ids`` (grouped by owner, runs of ``lens``, each sorted by ``other``) after the equal
    ones — reading ``other`` only in the runs that get an insert."""
    starts = np.cumsum(lens) - lens
    runs = np.unique(lown)
    sub, sub_run = _ranges(starts[runs], starts[runs] + lens[runs])
    at = np.searchsorted((runs[sub_run] << 32) | other[ids[sub]], (lown << 32) | other[later],
                         side="right")
    end = starts[lown] + lens[lown]
    where = np.minimum(np.where(at < sub.shape[0], sub[np.minimum(at, sub.shape[0] - 1)]
                                if sub.size else end, end), end)
    return np.insert(ids, where, later), np.insert(owner, where, lown)


class EdgeStore:
    """Directed COACT edges with fast lookup and per-node adjacency, in compact arrays.

    Arrays (views of the first ``count`` edges): ``src``, ``dst`` int64; ``w`` (stored
    weight, not decayed) and ``last_ts`` float64; ``co_count`` int64. ``out_edges(i)`` and
    ``in_edges(i)`` return edge ids sorted by the other end's row (canonical: independent of
    creation order). ``fan(n)`` counts in + out edges per node. Edges are removed only by
    :meth:`drop_node` (forget) and :meth:`drop_edge` (undoing a person's link). Ids never
    change. The layout is in the module docstring.
    """

    def __init__(self, *, compact_min: int = 4096, tail: int = TAIL) -> None:
        self.compact_min = compact_min
        self.tail = tail
        self.count = 0
        self._src = np.zeros(0, np.int64)
        self._dst = np.zeros(0, np.int64)
        self._w = np.zeros(0, np.float64)
        self._last = np.zeros(0, np.float64)
        self._co = np.zeros(0, np.int64)
        self._alive = np.zeros(0, bool)
        self._fan = np.zeros(0, np.int64)
        # the index; _oids None: the k-th indexed edge has id k
        self._nidx = 0
        self._okey = np.zeros(0, np.int64)
        self._oids: I64 | None = None
        self._optr = np.zeros(1, np.int64)
        self._iptr = np.zeros(1, np.int64)
        self._iids = np.zeros(0, np.int64)
        # the later edges: ids upto .. count - 1; sorted (key, id) for those below _sorted
        self._upto = 0
        self._sorted = 0
        self._key: dict[int, int] = {}
        self._lkey = (np.zeros(0, np.int64), np.zeros(0, np.int64))  # out, in keys
        self._lids = (np.zeros(0, np.int64), np.zeros(0, np.int64))
        self.version = 0
        """Counts changes of which edges exist (creation, removal): an id found at one
        version is still the id of that pair while the version stays."""

    @staticmethod
    def _k(s: int, d: int) -> int:
        return (int(s) << 32) | int(d)

    @property
    def src(self) -> I64:
        return self._src[: self.count]

    @property
    def dst(self) -> I64:
        return self._dst[: self.count]

    @property
    def w(self) -> NDArray[np.float64]:
        return self._w[: self.count]

    @property
    def last_ts(self) -> NDArray[np.float64]:
        return self._last[: self.count]

    @property
    def co_count(self) -> I64:
        return self._co[: self.count]

    @property
    def alive(self) -> NDArray[np.bool_]:
        return self._alive[: self.count]

    def n_alive(self) -> int:
        """Number of edges not removed by forget."""
        return int(self.alive.sum())

    def nbytes(self) -> int:
        """Bytes held by the edge arrays and indexes (capacity included)."""
        arrays: list[NDArray[Any]] = [
            self._src, self._dst, self._w, self._last, self._co, self._alive, self._fan,
            self._okey, self._optr, self._iptr, self._iids, *self._lkey, *self._lids]
        if self._oids is not None:
            arrays.append(self._oids)
        return sum(int(a.nbytes) for a in arrays)

    # -- lookup ------------------------------------------------------------------------
    def _indexed(self, pos: I64) -> I64:
        return pos if self._oids is None else self._oids[pos]

    def find(self, s: int, d: int) -> int:
        """Edge id of ``s -> d`` or -1."""
        key = self._k(s, d)
        e = self._key.get(key)
        if e is not None:
            return e
        if self._nidx:
            p = int(np.searchsorted(self._okey, key))
            if p < self._nidx and int(self._okey[p]) == key:
                e = p if self._oids is None else int(self._oids[p])
                if self._alive[e]:
                    return e
        return -1

    def find_many(self, src: ArrayLike, dst: ArrayLike) -> I64:
        """:meth:`find` for several pairs at once (-1 where there is no alive edge).

        >>> es = EdgeStore(); es.load([0, 1], [1, 2], [1.0, 1.0], [0.0, 0.0], [1, 1])
        >>> _ = es.upsert(2, 0, w=1.0, last_ts=0.0, co_count=1)
        >>> es.find_many([1, 2, 0], [2, 0, 2]).tolist()
        [1, 2, -1]
        """
        s = np.asarray(src, np.int64).ravel()
        d = np.asarray(dst, np.int64).ravel()
        out = np.full(s.shape[0], -1, np.int64)
        if not s.size:
            return out
        keys = (s << 32) | d
        if self._nidx:  # search the sources' slices of the index, not all of it (3M keys)
            nb = self._optr.shape[0] - 1
            us = np.unique(s[(s >= 0) & (s < nb)])
            pos, _ = _ranges(self._optr[us], self._optr[us + 1])
            if pos.size:
                sub = self._okey[pos]  # sorted: slices of a sorted array, in source order
                p = np.minimum(np.searchsorted(sub, keys), pos.shape[0] - 1)
                e = self._indexed(pos[p])
                hit = (sub[p] == keys) & self._alive[e]
                out[hit] = e[hit]
        if self._key:
            get = self._key.get
            for k, key in enumerate(keys.tolist()):
                later = get(key)
                if later is not None:
                    out[k] = later
        return out

    # -- changes -----------------------------------------------------------------------
    def upsert(self, s: int, d: int, *, w: float, last_ts: float, co_count: int) -> int:
        """Set ``s -> d`` to absolute values, creating it if needed; returns the edge id."""
        e = self.find(s, d)
        if e < 0:
            if s == d:
                raise ValueError("COACT self-loops are not allowed")
            e = self.count
            self._room(e + 1, max(s, d) + 1)
            self._src[e], self._dst[e], self._alive[e] = s, d, True
            self._key[self._k(s, d)] = e
            self._fan[s] += 1
            self._fan[d] += 1
            self._created(e + 1)
        self._w[e] = w
        self._last[e] = last_ts
        self._co[e] = co_count
        return e

    def upsert_many(self, src: ArrayLike, dst: ArrayLike, *, w: ArrayLike, last_ts: ArrayLike,
                    co_count: ArrayLike, found: tuple[int, ArrayLike] | None = None) -> I64:
        """:meth:`upsert` of several edges in order (a pair given twice ends with its last
        values, as one by one); returns their ids. ``found``: ``(version, ids)`` of an
        earlier :meth:`find_many` of the same pairs, used when :attr:`version` has not
        changed since (no edge was created or removed), instead of looking them up again.

        >>> es = EdgeStore()
        >>> es.upsert_many([0, 1, 0], [1, 0, 1], w=[0.1, 0.2, 0.3], last_ts=[0, 0, 1],
        ...                co_count=[1, 1, 2]).tolist(), es.w.tolist(), es.count
        ([0, 1, 0], [0.3, 0.2], 2)
        """
        s = np.asarray(src, np.int64).ravel()
        d = np.asarray(dst, np.int64).ravel()
        ww = np.asarray(w, np.float64).ravel()
        lt = np.asarray(last_ts, np.float64).ravel()
        cc = np.asarray(co_count, np.int64).ravel()
        if not (s.shape == d.shape == ww.shape == lt.shape == cc.shape):
            raise ValueError("src, dst, w, last_ts and co_count must have the same length")
        if found is not None and found[0] == self.version:
            ids = np.array(found[1], np.int64).ravel()
            if ids.shape != s.shape:
                raise ValueError("found ids must match src and dst")
        else:
            ids = self.find_many(s, d)
        new = np.flatnonzero(ids < 0)
        if new.size:
            ids[new] = self._create(s[new], d[new])
        _, last = np.unique(ids[::-1], return_index=True)
        last = ids.shape[0] - 1 - last  # each edge's last position
        e = ids[last]
        self._w[e], self._last[e], self._co[e] = ww[last], lt[last], cc[last]
        return ids

    def _create(self, s: I64, d: I64) -> I64:
        """Create the edges ``s -> d`` that do not exist yet, each pair once, in the order
        of their first occurrence (the ids :meth:`upsert` one by one gives); returns the
        id of every pair. Values are set by the caller."""
        if bool((s == d).any()):
            raise ValueError("COACT self-loops are not allowed")
        keys = (s << 32) | d
        uk, first, inv = np.unique(keys, return_index=True, return_inverse=True)
        order = np.argsort(first, kind="stable")  # first occurrences in input order
        e0, k = self.count, int(uk.shape[0])
        id_of = np.empty(k, np.int64)
        id_of[order] = np.arange(e0, e0 + k, dtype=np.int64)
        need = e0 + k
        cs, cd = s[first[order]], d[first[order]]
        self._room(need, int(max(cs.max(), cd.max())) + 1)
        self._src[e0:need], self._dst[e0:need], self._alive[e0:need] = cs, cd, True
        self._key.update(zip(uk[order].tolist(), range(e0, need), strict=True))
        np.add.at(self._fan, cs, 1)
        np.add.at(self._fan, cd, 1)
        self._created(need)
        return id_of[inv.ravel()]

    def _room(self, need: int, top: int) -> None:
        """Grow the edge arrays to hold ``need`` edges and the fan counts to ``top`` nodes."""
        if need > self._src.shape[0]:
            self._src, self._dst = grow(self._src, need), grow(self._dst, need)
            self._w, self._last = grow(self._w, need), grow(self._last, need)
            self._co, self._alive = grow(self._co, need), grow(self._alive, need)
        if self._fan.shape[0] < top:
            self._fan = grow(self._fan, top)

    def _created(self, count: int) -> None:
        """The edges up to ``count`` now exist (their ends set): count them, and rebuild
        the index once the later edges are many (see the module docstring)."""
        self.count = count
        self.version += 1
        if self.count - self._upto > max(self.compact_min, self._nidx // 32):
            self._reindex()

    def set_weight(self, e: int, w: float) -> None:
        """Overwrite the stored weight of edge ``e`` (used by heterosynaptic depression)."""
        self._w[e] = w

    def set_weights(self, ids: ArrayLike, w: ArrayLike) -> None:
        """Overwrite the stored weights of several edges (vectorised :meth:`set_weight`).

        >>> es = EdgeStore(); e = es.upsert(0, 1, w=1.0, last_ts=0.0, co_count=1)
        >>> es.set_weights([e], [0.95]); es.w.tolist()
        [0.95]
        """
        self._w[np.asarray(ids, dtype=np.int64)] = np.asarray(w, dtype=np.float64)

    def _kill(self, e: int) -> None:
        s, d = int(self._src[e]), int(self._dst[e])
        self._alive[e] = False
        self.version += 1
        if self._key.get(self._k(s, d)) == e:
            del self._key[self._k(s, d)]
        self._fan[s] -= 1
        self._fan[d] -= 1

    def prune(self, e: int) -> None:
        """Remove edge ``e`` (by id) but keep it in its ends' :meth:`fan` — a pruned edge
        (SPEC §3, v2) was invisible to recall except through the fan counts, which stay as
        they were (a pair linked again later counts once more).

        >>> es = EdgeStore(); e = es.upsert(0, 1, w=1e-9, last_ts=0.0, co_count=4)
        >>> es.prune(e); es.n_alive(), es.find(0, 1), es.fan_of([0, 1]).tolist()
        (0, -1, [1, 1])
        """
        if self._alive[e]:
            self._kill(e)
            self._fan[self._src[e]] += 1
            self._fan[self._dst[e]] += 1

    def add_fan(self, rows: ArrayLike, counts: ArrayLike) -> None:
        """Count ``counts`` more edges in the fan of each of ``rows`` (the pruned edges a
        store records, added on open)."""
        rs = np.asarray(rows, np.int64).ravel()
        if rs.size:
            self._room(0, int(rs.max()) + 1)
            np.add.at(self._fan, rs, np.asarray(counts, np.int64).ravel())

    def drop_node(self, i: int) -> list[int]:
        """Remove every edge touching node ``i`` (forget); returns the removed edge ids."""
        gone = sorted({*self.out_edges(i).tolist(), *self.in_edges(i).tolist()})
        for e in gone:
            self._kill(e)
        return gone

    def drop_edge(self, s: int, d: int) -> int:
        """Remove ``s -> d``; returns its id, or -1 when there is no such edge.

        >>> es = EdgeStore()
        >>> e = es.upsert(0, 1, w=0.5, last_ts=0.0, co_count=1)
        >>> es.drop_edge(0, 1), es.find(0, 1), es.out_edges(0).tolist(), es.fan(2).tolist()
        (0, -1, [], [0, 0])
        """
        e = self.find(s, d)
        if e >= 0:
            self._kill(e)
        return e

    # -- node reads --------------------------------------------------------------------
    def _later(self, out: bool, *, every: bool = False) -> tuple[I64, I64]:
        """Sorted keys and ids of the later edges below ``_sorted``; the edges after it (the
        *tail*) are merged in once there are more than ``tail`` of them (or ``every``):
        merging costs a copy of the sorted run, which a commit's ~70 new edges at 3M
        edges made ~0.3 ms of every commit."""
        if self.count - self._sorted > (0 if every else self.tail):
            new = np.arange(max(self._sorted, self._upto), self.count, dtype=np.int64)
            s, d = self._src[new], self._dst[new]
            keys, ids = [], []
            for k, (a, b) in enumerate(((s, d), (d, s))):
                nk = (a << 32) | b
                order = np.argsort(nk, kind="stable")
                nk, nid = nk[order], new[order]
                at = np.searchsorted(self._lkey[k], nk, side="right")
                keys.append(np.insert(self._lkey[k], at, nk))
                ids.append(np.insert(self._lids[k], at, nid))
            self._lkey, self._lids = (keys[0], keys[1]), (ids[0], ids[1])
            self._sorted = self.count
        k = 0 if out else 1
        return self._lkey[k], self._lids[k]

    def _tail(self, rs: I64, out: bool) -> tuple[I64, I64]:
        """Ids of the unsorted later edges (see :meth:`_later`) of the rows ``rs`` and the
        position in ``rs`` of each, found by comparing every tail edge with the rows."""
        tail = np.arange(max(self._sorted, self._upto), self.count, dtype=np.int64)
        if not tail.size:
            return tail, tail
        order = np.argsort(rs, kind="stable")
        srt = rs[order]
        end = (self._src if out else self._dst)[tail]
        pos, which = _ranges(np.searchsorted(srt, end, "left"),
                             np.searchsorted(srt, end, "right"))
        return tail[which], order[pos]

    def _many(self, rows: ArrayLike, out: bool) -> tuple[I64, I64]:
        rs = np.asarray(rows, dtype=np.int64).ravel()
        ptr = self._optr if out else self._iptr
        nb = ptr.shape[0] - 1
        inb = (rs >= 0) & (rs < nb)
        r = np.where(inb, rs, 0)
        lo = np.where(inb, ptr[r], 0)
        hi = np.where(inb, ptr[np.minimum(r + 1, nb)], 0)
        pos, owner = _ranges(lo, hi)
        ids = self._indexed(pos) if out else self._iids[pos]
        if self.count > self._upto:
            lkey, lids = self._later(out)
            ok = rs >= 0
            base = np.where(ok, rs, 0) << 32
            llo = np.where(ok, np.searchsorted(lkey, base), 0)
            lhi = np.where(ok, np.searchsorted(lkey, base + (1 << 32)), 0)
            lpos, lown = _ranges(llo, lhi)
            lid = lids[lpos]
            other = self._dst if out else self._src
            tid, town = self._tail(rs, out)
            if tid.size:  # by owner, then the other end (ids of a pair: older first)
                lid, lown = np.concatenate([lid, tid]), np.concatenate([lown, town])
                order = np.lexsort((lid, other[lid], lown))
                lid, lown = lid[order], lown[order]
            if lid.size:
                ids, owner = _merge(ids, owner, hi - lo, lid, lown, other)
        keep = self._alive[ids]
        return ids[keep], owner[keep]

    def out_edges(self, i: int) -> I64:
        """Edge ids leaving node ``i`` (alive ones only), by destination row."""
        return self._many([int(i)], True)[0]

    def in_edges(self, i: int) -> I64:
        """Edge ids entering node ``i`` (alive ones only), by source row."""
        return self._many([int(i)], False)[0]

    def out_edges_many(self, rows: ArrayLike) -> tuple[I64, I64]:
        """Alive out-edges of several nodes at once: ``(edge ids, position in rows)``.

        Edge ids come grouped by ``rows`` order, each group by the other end's row.

        >>> es = EdgeStore(); _ = es.upsert(0, 1, w=1.0, last_ts=0.0, co_count=1)
        >>> _ = es.upsert(2, 1, w=1.0, last_ts=0.0, co_count=1)
        >>> [a.tolist() for a in es.out_edges_many([2, 0, 5])]
        [[1, 0], [0, 1]]
        """
        return self._many(rows, True)

    def in_edges_many(self, rows: ArrayLike) -> tuple[I64, I64]:
        """Alive in-edges of several nodes at once: ``(edge ids, position in rows)``.

        >>> es = EdgeStore(); _ = es.upsert(0, 1, w=1.0, last_ts=0.0, co_count=1)
        >>> _ = es.upsert(2, 1, w=1.0, last_ts=0.0, co_count=1)
        >>> [a.tolist() for a in es.in_edges_many([1])]
        [[0, 1], [0, 0]]
        """
        return self._many(rows, False)

    def fan_of(self, rows: ArrayLike) -> I64:
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

    def fan(self, n: int) -> I64:
        """Number of COACT edges (in + out) of each of the first ``n`` nodes."""
        out = np.zeros(n, np.int64)
        k = min(n, self._fan.shape[0])
        out[:k] = self._fan[:k]
        return out

    # -- bulk ------------------------------------------------------------------------------
    def load(self, src: ArrayLike, dst: ArrayLike, w: ArrayLike, last_ts: ArrayLike,
             co_count: ArrayLike) -> None:
        """Bulk-load edges into an empty store (on open) — vectorised, no per-edge Python.

        The edges get ids in ``(src, dst)`` order; reads give what upserting them one by
        one gives. A repeated (src, dst) pair keeps its last values.

        >>> es = EdgeStore()
        >>> es.load([2, 0, 0], [1, 1, 2], [0.5, 1.0, 0.2], [0.0, 0.0, 0.0], [1, 1, 1])
        >>> es.in_edges(1).tolist(), es.out_edges(0).tolist(), es.fan(3).tolist()
        ([0, 2], [0, 1], [2, 2, 2])
        >>> es.find(2, 1), float(es.w[es.find(0, 2)])
        (2, 0.2)
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
        if s.size and (int(s.min()) < 0 or int(d.min()) < 0
                       or int(max(s.max(), d.max())) >= 1 << 31):
            raise ValueError("node rows must be in [0, 2**31)")
        key = (s << 32) | d
        if not bool((key[1:] > key[:-1]).all()):  # not (empty or) sorted and unique:
            order = np.argsort(key, kind="stable")  # equal keys stay in input order,
            key = key[order]
            last = np.r_[key[1:] != key[:-1], True]  # so each one's last is its last
            keep = order[last]
            key = key[last]
            s, d = key >> 32, key & 0xFFFFFFFF
            ww, lt, cc = ww[keep], lt[keep], cc[keep]
        m = s.size
        self.version += 1
        self._src, self._dst, self._w, self._last, self._co = (
            _own(s), _own(d), _own(ww), _own(lt), _own(cc))
        self._alive = np.ones(m, bool)
        self.count = m
        n = int(max(s.max(), d.max())) + 1 if m else 0
        self._fan = grow(np.zeros(0, np.int64), max(n, 1))
        self._fan[:n] = np.bincount(s, minlength=n) + np.bincount(d, minlength=n)
        self._index(np.arange(m, dtype=np.int64), key)

    def dead(self) -> int:
        """Ids held by removed edges (their slots are kept until :meth:`compact`)."""
        return self.count - self.n_alive()

    def compact(self) -> I64:
        """Give the alive edges new ids ``0 ..`` in ``(src, dst)`` order, as :meth:`load`
        does, freeing the slots of removed ones; values and the fan (pruned edges still
        counted) stay. Returns the new id of every old id (-1: removed). Every id held
        elsewhere must be mapped (the mirror compacts right after a checkpoint, when it
        holds none but which edges Kuzu has); :attr:`version` changes.

        >>> es = EdgeStore()
        >>> es.load([0, 0, 1], [1, 2, 2], [0.5, 0.1, 0.3], [0.0, 0.0, 0.0], [1, 1, 1])
        >>> es.prune(0); _ = es.upsert(2, 0, w=0.9, last_ts=1.0, co_count=1)
        >>> es.compact().tolist(), es.count, es.find(2, 0), es.fan(3).tolist()
        ([-1, 0, 1, 2], 3, 2, [3, 2, 3])
        """
        keep = np.flatnonzero(self.alive)
        src, dst = self._src[keep], self._dst[keep]
        keep = keep[np.argsort((src << 32) | dst, kind="stable")]  # pairs are unique
        remap = np.full(self.count, -1, np.int64)
        remap[keep] = np.arange(keep.shape[0], dtype=np.int64)
        fan, version = self._fan.copy(), self.version
        values = (self._src[keep], self._dst[keep], self._w[keep], self._last[keep],
                  self._co[keep])
        self.count = 0
        self.load(*values)
        self._fan = grow(self._fan, fan.shape[0])
        self._fan[: fan.shape[0]] = fan
        self.version = version + 1
        return remap

    def _index(self, ids: I64, key: I64, in_ids: I64 | None = None) -> None:
        """Index the edges ``ids`` (alive, sorted by ``key`` = ``(src << 32) | dst``); every
        edge is then indexed or dead. ``in_ids``: the same edges by ``(dst, src)``, when
        the caller has them (else sorted here)."""
        s = self._src[ids]
        n = self._fan.shape[0]
        self._nidx = int(ids.shape[0])
        self._okey = key
        identity = self._nidx == self.count and bool((ids == np.arange(self._nidx)).all())
        self._oids = None if identity else ids
        self._optr = np.searchsorted(s, np.arange(n + 1, dtype=np.int64)).astype(np.int64)
        if in_ids is None:
            d = self._dst[ids]
            in_ids = ids[np.argsort((d << 32) | s)]  # keys unique: by (dst, src)
        self._iids = in_ids
        self._iptr = np.searchsorted(self._dst[in_ids], np.arange(n + 1, dtype=np.int64)
                                     ).astype(np.int64)
        self._upto = self._sorted = self.count
        self._key = {}
        empty = np.zeros(0, np.int64)
        self._lkey, self._lids = (empty, empty), (empty, empty)

    def _reindex(self) -> None:
        """Index every alive edge (see the module docstring); reads stay as they were. The
        index and the later edges are each sorted already, so both orders are one merge
        of two sorted runs (a stable sort does that in linear time), dead edges dropped."""
        self._later(True, every=True)  # both orders of the later edges up to date
        idx = np.arange(self._nidx, dtype=np.int64)
        runs = []
        for k, (ids, a, b) in enumerate(((self._indexed(idx), self._src, self._dst),
                                         (self._iids, self._dst, self._src))):
            key = np.concatenate([(a[ids] << 32) | b[ids], self._lkey[k]])
            ids = np.concatenate([ids, self._lids[k]])
            order = np.argsort(key, kind="stable")
            key, ids = key[order], ids[order]
            keep = self._alive[ids]
            runs.append((ids[keep], key[keep]))
        self._index(runs[0][0], runs[0][1], in_ids=runs[1][0])
