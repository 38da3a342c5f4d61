"""The mirror's bulk load from Kuzu + LanceDB (SPEC §1 "rebuilt from the two stores on
open"; issue 14): column at a time, no Python step per edge and none per node beyond
building the uid lists.

- Turns (Kuzu, in ``ord`` order) are matched to their messages and node vectors (LanceDB)
  with Arrow ``index_in``; a node without messages or vector in LanceDB is left out, as is a
  message no loaded node names (a torn ingest: :attr:`Mirror.orphan_messages`).
- Nodes, messages and lexical postings go in with :meth:`NodeTable.add_nodes` and
  :meth:`Postings.add_many` — the same arrays a node-by-node build gives, bit for bit.
- COACT edges are read with their end points' ``ord`` (integers, cheaper than uids) — or
  taken from the file a writer's close left (:mod:`.edgecache`) — while LanceDB is read
  (its two tables at once), mapped to rows through an ``ord`` table and bulk-loaded into
  the :class:`EdgeStore`; a store whose ords are not unique falls back to uids.
- The verbatim texts (with speaker and sha256) are kept per message row for the agent's
  context (:meth:`Mirror.message_rows`): the live loop reads no LanceDB.

The loader fills any object with the mirror's arrays (:class:`Target`, which
:class:`~.mirror.Mirror` is); the mirror calls it (``Mirror.load``), so the dependency
goes one way: ``mirror`` imports ``bulkload``, never the reverse.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, MutableSequence, Sequence
from typing import Any, Protocol

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..engine.bm25 import Postings
from ..engine.state import EdgeStore, NodeTable
from ..graphdb import turns as gt
from ..graphdb.kuzu_db import GraphDB
from ..vectors import VectorDB, vectors_column
from ..vectors import queries as vq
from . import edgecache
from .columns import Column, TermLists
from .heap import release_freed_memory
from .journal import Journal

__all__ = ["MESSAGE_COLUMNS", "TURN_COLUMNS", "Target", "load_mirror"]

log = logging.getLogger(__name__)

MESSAGE_COLUMNS = ("uid", "node", "ts", "role", "speaker", "text", "sha256", "flags", "terms",
                   "vector")
"""The LanceDB message columns the mirror holds."""
TURN_COLUMNS = ("uid", "ord", "session", "ts", "message_uids", "assistant_only", "sigma",
                "strength", "strength_ts", "resource", "resource_ts", "recall_count", "replayed")
"""The Turn properties (Kuzu) the mirror loads."""
BLOCK = 16_384
"""Nodes added per :meth:`NodeTable.add_nodes` call (bounds the temporary copies)."""


class Target(Protocol):
    """What :func:`load_mirror` fills: an empty :class:`~.mirror.Mirror`'s arrays and the
    two methods it calls (see the attributes of ``Mirror`` for what each holds)."""

    nodes: NodeTable
    edges: EdgeStore
    postings: Postings
    ord: list[int]
    next_ord: int
    orphan_messages: list[str]
    msg_flags: list[tuple[str, ...]]
    msg_role: list[str]
    msg_terms: MutableSequence[list[str]]
    msg_text: MutableSequence[str | None]
    msg_speaker: MutableSequence[str | None]
    msg_sha: MutableSequence[str | None]

    def set_loaded_edges(self, edges: EdgeStore) -> None: ...

    def apply_record(self, rec: dict[str, Any]) -> None: ...


def _ints(col: pa.ChunkedArray | pa.Array, fill: int = -1) -> np.ndarray:
    if col.null_count:
        col = pc.fill_null(col, fill)
    return col.to_numpy(zero_copy_only=False).astype(np.int64, copy=False)


def _consecutive(rows: np.ndarray, start: int | None = None, size: int | None = None) -> bool:
    """Whether ``rows`` are ``r, r + 1, …`` (from ``start``, ``size`` of them, if given)."""
    if size is not None and rows.size != size:
        return False
    if not rows.size:
        return True
    if start is not None and int(rows[0]) != start:
        return False
    return int(rows[-1]) - int(rows[0]) == rows.size - 1 and bool((np.diff(rows) == 1).all())


def _vectors(col: pa.ChunkedArray, rows: np.ndarray) -> np.ndarray:
    """The vectors at ``rows`` of a fixed-size-list column as an (n, dim) float32 array:
    a slice when the rows are consecutive (the usual case: LanceDB holds rows in ingest
    order, as Kuzu's ``ord`` does), so only these rows are copied."""
    if rows.size and _consecutive(rows):
        part = col.slice(int(rows[0]), int(rows.size))
    else:
        part = col.take(pa.array(rows, pa.int64()))
    return vectors_column(pa.table({"vector": part}))


class _Task(threading.Thread):
    """``fn()`` in a thread while the main thread reads on; :meth:`result` waits for it
    and re-raises what it raised."""

    def __init__(self, fn: Callable[[], Any]) -> None:
        super().__init__(daemon=True)
        self.fn = fn
        self.value: Any = None
        self.error: BaseException | None = None
        self.start()

    def run(self) -> None:
        try:
            self.value = self.fn()
        except BaseException as e:  # re-raised by the main thread
            self.error = e

    def result(self) -> Any:
        self.join()
        if self.error is not None:
            raise self.error
        value, self.value = self.value, None
        return value


def _read_edges(graph: GraphDB, ords: np.ndarray, cached: pa.Table | None
                ) -> tuple[pa.Table, EdgeStore | None]:
    """Every COACT edge by ord (``cached``, or read from Kuzu), bulk-loaded as if every
    turn becomes a mirror row, in ``ord`` order."""
    table = gt.coact_edges(graph, key="ord") if cached is None else cached
    return table, _edge_store(ords, ords, table)


def load_mirror(m: Target, graph: GraphDB, vectors: VectorDB, journal: Journal, *,
                cached: pa.Table | None = None,
                waiting: Sequence[dict[str, list[Any]]] = ()) -> int:
    """Fill an empty mirror from the stores, then re-apply the journal tail; returns how
    many journal records were applied. ``cached``: the COACT edges by ord as Kuzu holds
    them (:mod:`.edgecache`), read instead of Kuzu's when they name as many Turns.
    ``waiting``: the Turn columns of stored turns the graph does not hold yet (the journal's
    write-behind records, :meth:`Store.fold_graph
    <akasha_explorer.store.Store.fold_graph>`), loaded after the graph's. ``graph`` is read
    as it is (``store.graph_as_is``; the COACT edges in a thread of its own, which takes
    only the connection): a load never waits for a fold, so it may run holding the store's
    ``store.fold`` lock (``Store.reload_mirror``)."""
    t0 = time.perf_counter()
    turns = gt.turns(graph, TURN_COLUMNS)
    if waiting:
        more = [pa.table({c: w[c] for c in TURN_COLUMNS}).cast(turns.schema) for w in waiting]
        turns = pa.concat_tables([turns, *more])
    all_ords = _ints(turns.column("ord"), -1)
    if cached is not None and edgecache.turns_of(cached) != turns.num_rows:
        cached = None
    edges = _Task(lambda: _read_edges(graph, all_ords, cached))
    node_vectors = _Task(lambda: vq.turns(vectors, ["uid", "vector"]))  # LanceDB reads both
    try:                                                                 # tables at once
        msgs = vq.messages(vectors, MESSAGE_COLUMNS)
        _load_nodes(m, turns, msgs, node_vectors.result())
    finally:
        node_vectors.join()
        table, store = edges.result()
    if store is None or len(m.ord) != all_ords.size:  # some turn was left out
        store = _edge_store(np.asarray(m.ord, np.int64), all_ords, table)
    if store is None:  # ords repeated (not made by this code): go by uid
        log.warning("Turn ords are not unique; loading COACT edges by uid")
        e = gt.coact_edges(graph, key="uid")
        uids = pa.array(m.nodes.uid, pa.string())
        store = _loaded(_ints(pc.index_in(e.column("s"), value_set=uids)),
                        _ints(pc.index_in(e.column("d"), value_set=uids)), e)
    m.set_loaded_edges(store)
    del turns, table, msgs
    release_freed_memory()
    applied = 0
    done = int(graph.meta_get("journal_seq", "0") or 0)
    for rec in journal.read():
        if int(rec.get("seq", 0)) > done:
            m.apply_record(rec)
            applied += 1
    journal.seq = max(journal.seq, done)
    log.info("mirror loaded: %d nodes, %d messages, %d edges (%s), %d journal records in "
             "%.2fs", m.nodes.n, m.nodes.m, m.edges.count,
             "Kuzu" if cached is None else edgecache.FILE, applied, time.perf_counter() - t0)
    return applied


def _edge_store(ords: np.ndarray, all_ords: np.ndarray, e: pa.Table) -> EdgeStore | None:
    """The edges of ``e`` (end points by ord) over mirror rows whose ords are ``ords``;
    None when the stored ords (``all_ords``) are not unique."""
    if all_ords.size and (int(all_ords.min()) < 0
                          or np.unique(all_ords).size != all_ords.size):
        return None
    n = ords.size
    if not n or (int(ords[0]) == 0 and int(ords[-1]) == n - 1
                 and bool((np.diff(ords) == 1).all())):
        def rows(col: pa.ChunkedArray) -> np.ndarray:  # the usual store: row = ord
            o = _ints(col, -1)
            return np.where(o < n, o, -1)
    else:
        lookup = np.full(int(all_ords.max()) + 2 if all_ords.size else 1, -1, np.int64)
        lookup[ords] = np.arange(n, dtype=np.int64)

        def rows(col: pa.ChunkedArray) -> np.ndarray:
            o = _ints(col, -1)
            return lookup[np.where((o >= 0) & (o < lookup.shape[0]), o, lookup.shape[0] - 1)]

    return _loaded(rows(e.column("s")), rows(e.column("d")), e)


def _loaded(si: np.ndarray, di: np.ndarray, e: pa.Table) -> EdgeStore:
    ok = (si >= 0) & (di >= 0)
    cols = [e.column(c).to_numpy() for c in ("w", "t", "c")]
    if not bool(ok.all()):
        si, di, *cols = (a[ok] for a in (si, di, *cols))
    store = EdgeStore()
    store.load(si, di, *cols)
    return store


def _load_nodes(m: Target, turns: pa.Table, msgs: pa.Table, tv: pa.Table) -> None:
    tuid = turns.column("uid")
    m.orphan_messages = sorted(pc.filter(msgs.column("uid"), pc.invert(pc.is_in(
        msgs.column("node"), value_set=tuid))).to_pylist())
    listed = turns.column("message_uids")
    counts = _ints(pc.list_value_length(listed), 0)
    owner = np.repeat(np.arange(turns.num_rows, dtype=np.int64), counts)
    mrow = _ints(pc.index_in(pc.list_flatten(listed), value_set=msgs.column("uid")))
    have = mrow >= 0
    if have.any():  # a message named twice (a damaged store): its first node keeps it
        _, first = np.unique(mrow[have], return_index=True)
        once = np.zeros(int(have.sum()), bool)
        once[first] = True
        have[np.flatnonzero(have)[~once]] = False
    n_msg = np.bincount(owner[have], minlength=turns.num_rows)
    trow = _ints(pc.index_in(tuid, value_set=tv.column("uid")))
    load = (n_msg > 0) & (trow >= 0)
    for k in np.flatnonzero(~load).tolist():
        log.warning("node %s has no messages/vector in LanceDB; not loaded", tuid[k].as_py())
    idx = np.flatnonzero(load)
    rows = mrow[have & load[owner]]  # LanceDB message rows in mirror order
    n_msg = n_msg[idx]
    all_ords = _ints(turns.column("ord"), 0)
    m.ord = all_ords[idx].tolist()
    m.next_ord = int(all_ords.max()) + 1 if all_ords.size else 0
    if not idx.size:
        return
    tt = turns if idx.size == turns.num_rows else turns.take(pa.array(idx))
    t: dict[str, Any] = {c: tt.column(c).to_numpy() for c in (
        "ts", "sigma", "strength", "strength_ts", "resource", "resource_ts", "recall_count",
        "assistant_only", "replayed")}
    t["uid"], t["session"] = tt.column("uid").to_pylist(), tt.column("session").to_pylist()
    mt = msgs.select(["uid", "ts", "role", "speaker", "text", "sha256", "flags", "terms"])
    if not _consecutive(rows, 0, msgs.num_rows):
        mt = mt.take(pa.array(rows))
    m.nodes.reserve(int(idx.size), int(rows.size))
    _add_node_blocks(m, t, n_msg, (tv.column("vector"), trow[idx]),
                     (msgs.column("vector"), rows), mt.column("ts").to_numpy(),
                     mt.column("uid").to_pylist())
    _index_terms(m, mt.column("terms"))
    role = pc.dictionary_encode(mt.column("role")).combine_chunks()
    names = role.dictionary.to_pylist()  # one string object per role
    m.msg_role = [names[k] for k in role.indices.to_numpy(zero_copy_only=False).tolist()]
    m.msg_flags = [tuple(f) if f else () for f in mt.column("flags").to_pylist()]
    m.msg_text = Column(mt.column("text"))
    m.msg_speaker = Column(mt.column("speaker"))
    m.msg_sha = Column(mt.column("sha256"))


def _add_node_blocks(m: Target, t: dict[str, Any], n_msg: np.ndarray,
                     nvec: tuple[pa.ChunkedArray, np.ndarray],
                     mvec: tuple[pa.ChunkedArray, np.ndarray], msg_ts: np.ndarray,
                     msg_uid: list[str]) -> None:
    """Nodes in blocks of :data:`BLOCK`; ``nvec`` / ``mvec``: the LanceDB vector column
    and the rows of it in mirror order (copied a block at a time)."""
    first = np.concatenate([[0], np.cumsum(n_msg)])
    for a in range(0, n_msg.shape[0], BLOCK):
        b = min(n_msg.shape[0], a + BLOCK)
        ma, mb = int(first[a]), int(first[b])
        m.nodes.add_nodes(
            t["uid"][a:b], ts=t["ts"][a:b], session=t["session"][a:b],
            vectors=_vectors(nvec[0], nvec[1][a:b]),
            sigma=t["sigma"][a:b], strength=t["strength"][a:b], resource=t["resource"][a:b],
            assistant_only=t["assistant_only"][a:b], n_msg=n_msg[a:b],
            msg_vectors=_vectors(mvec[0], mvec[1][ma:mb]), msg_ts=msg_ts[ma:mb],
            msg_uids=msg_uid[ma:mb],
            strength_ts=t["strength_ts"][a:b], resource_ts=t["resource_ts"][a:b],
            recall_count=t["recall_count"][a:b], replayed=t["replayed"][a:b])


def _index_terms(m: Target, terms: pa.ChunkedArray) -> None:
    """Postings and the per-message term lists (each distinct term one string object)."""
    lengths = _ints(pc.list_value_length(terms), 0)
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    flat = pc.list_flatten(terms)
    if len(flat):
        enc = pc.dictionary_encode(flat).combine_chunks()
        ids = enc.indices.to_numpy(zero_copy_only=False).astype(np.int64)
        names = enc.dictionary.to_pylist()
    else:
        ids, names = np.zeros(0, np.int64), []
    m.postings.add_many(0, offsets, ids, names)
    m.msg_terms = TermLists(offsets, ids, names)
