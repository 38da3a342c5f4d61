"""The :class:`Store`: one open memory store folder and everything it owns.

A store folder holds::

    akasha.json      manifest: settings, embedding model + dimension, tokenizer, format
    graph.kuzu       Kuzu: turns (pointers + dynamic state), sessions, anchors, edges, logs
    vectors/         LanceDB: the raw messages verbatim (+ sha256) and node vectors
    journal.jsonl    write-ahead journal of committed state changes (SPEC §1 write path)
    writer.lock      the one-writer lock

A :class:`Store` owns the open parts — the writer lock, the manifest and settings, the
Kuzu graph behind its write-behind (:attr:`Store.behind`, :mod:`.behind`: ``store.graph``
caught up, ``store.graph_as_is`` as it is), the LanceDB adapter (:attr:`Store.vectors`),
the journal, the in-memory mirror the engine computes on — and the parts that serve one
job each: the lexical index (``store.index``, :mod:`.lexical`), the embedding model and
its kept vectors (``store.embeddings``, :mod:`.embedding`), the query log
(``store.queries``, :mod:`.querylog`) and the caches of stored text and session tails
(``store.stored``, :mod:`.texts`). The Store itself keeps the lifecycle, the write path
(checkpoint, commit, journaled changes, ingest batches), migration and lookups of nodes
and messages. The areas (ingest, extract, curate, analysis, brief, export, doctor) are
functions or small classes that take a ``Store``, the way sqlite-utils' ``Table`` takes
its ``Database``; :class:`~akasha_explorer.memory.Memory` is the facade a person uses, and
``mem.store`` is its Store.

Thread-safety: a Store is the request path's — one caller at a time (a server holds its
request lock around every call) — except where a method says otherwise: the fold, the
LanceDB compaction steps and the embedding calls may run in other threads
(``docs/threads.md`` has the table).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import logging
import os
import shutil
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

from .._timing import phase
from ..config import VECTOR_SETTINGS, Settings
from ..embed import Embedder, store_embedder
from ..engine.recall import plan_writeback
from ..engine.trace import RecallTrace
from ..engine.writeback import WritebackPlan, apply_plan
from ..errors import (
    DiskFull,
    IntegrityError,
    InvalidInput,
    InvalidSettings,
    ModelMismatch,
    NotFound,
    ReadOnlyStore,
    StoreError,
    StoreLocked,
)
from ..graphdb import SCHEMA_VERSION, GraphDB, dump, logs
from ..graphdb import turns as gt
from ..graphdb.kuzu_db import graph_lock
from ..model import Message, NodeState, SessionInfo
from ..text.indexing import TERM_SOURCE_COLUMNS, stored_terms
from ..vectors import VectorDB
from ..vectors import queries as vq
from . import edgecache, folder
from .behind import WriteBehind
from .channels import AnchorChannel
from .embedding import EmbeddingCache
from .journal import Journal
from .lexical import LexicalIndex
from .lock import WriterLock
from .manifest import Manifest, tokenizer_id
from .mirror import Mirror
from .querylog import QueryLog
from .recalled import RecallRecords
from .texts import StoredText

if TYPE_CHECKING:
    from ..extract.base import Extractor

__all__ = ["CACHE_DIR", "TIDY_AFTER", "Store"]

TIDY_AFTER = 128
"""LanceDB versions (two per ``add_turn``: messages and node vector) after which a fold or
a checkpoint compacts the vector store (:meth:`VectorDB.tidy
<akasha_explorer.vectors.lance.VectorDB.tidy>`) — SPEC §1 "checkpoints also compact
LanceDB". Each small fragment costs a read of the messages about 0.08 ms; a compaction
rewrites the small fragments (~125 ms on the demo store, ~200 ms at 10k turns)."""
CACHE_DIR = "cache"
"""The store's folder of derived files (:attr:`Store.cache_dir`)."""

log = logging.getLogger(__name__)


class Store:
    """One memory store folder, opened for reading or writing (see the module docstring).

    ``settings`` apply when the store is created; an existing store keeps the settings it
    was built with and refuses different ones (:class:`InvalidSettings`). ``embedder``
    replaces the sentence-transformers model (it must match the store's model name and
    dimension). One process at a time may open a store for writing; see
    :func:`akasha_explorer.open`.
    """

    def __init__(self, path: str | Path, settings: Settings | None = None, *,
                 read_only: bool = False, embedder: Embedder | None = None) -> None:
        self.path = folder.store_path(path)
        self.read_only = read_only
        self.lock: WriterLock | None = None
        """The writer lock this store holds (None: read-only, or closed)."""
        self.extractor: Extractor | None = None
        """The extractor run at ingest (None: the offline rule-based default)."""
        self.last_trace: RecallTrace | None = None
        """The last recall made through this store (the trace context handles resolve
        against; see :mod:`akasha_explorer.brief.api`)."""
        self.recalls = RecallRecords(self.path)
        """The newest logged recalls as they were made (``recalls/``, see
        :mod:`.recalled`)."""
        self._embedder = embedder   # until the manifest is read (then self.embeddings)
        self._journaled = False  # inside a journaled() block (the outermost reloads)
        self._anchor_edits = 0   # see anchor_version
        self.anchor_channel = AnchorChannel()
        """Anchors as a recall channel (aliases, mentions), kept until they change."""
        self.derived: dict[str, Any] = {}
        """Values an area derives from this store and keeps while it is open, under the
        area's own key (the atlas layout of a store version); a forget empties it
        (:meth:`clear_derived`)."""
        self.index = LexicalIndex(self)
        """The lexical index (:mod:`.lexical`)."""
        self.queries = QueryLog(self)
        """The query log (:mod:`.querylog`)."""
        self.stored = StoredText(self)
        """The caches of stored text and session tails (:mod:`.texts`)."""
        self._closed = False
        exists = Manifest.path(self.path).is_file()
        if read_only and not exists:
            raise StoreError(folder.describe(self.path))
        made = not self.path.exists()
        if not read_only:
            if exists:
                self.lock = WriterLock(self.path)
                self.lock.acquire()
            else:  # a new store, or a half-made one an interrupted creation left
                self.lock, exists = folder.claim(self.path)
        try:
            try:
                self._open(settings, exists)
            except OSError as e:
                raise folder.os_error(e, self.path, "open the store") from e
        except BaseException:
            for obj in (getattr(self, "_graph", None), getattr(self, "vectors", None)):
                if obj is not None:
                    obj.close()
            if not exists and self.lock is not None \
                    and not Manifest.path(self.path).is_file():  # no half-made store left
                folder.abandon(self.path, self.lock, made=made)
                self.lock = None
            self._release()
            raise

    def _open(self, settings: Settings | None, exists: bool) -> None:
        if exists:
            self.manifest = Manifest.read(self.path)
            if self.manifest.invalid:
                log.warning("%s", self.manifest.invalid_note(self.path))
            if settings is not None:
                built = self.manifest.settings.EMBED_MODEL
                if built != settings.EMBED_MODEL:
                    raise ModelMismatch(
                        f"store {self.path} was built with embedding model {built!r}; refusing "
                        f"to mix in vectors from {settings.EMBED_MODEL!r}. Open it without "
                        "settings (it keeps its own) or build a new store for the other model")
                diff = self.manifest.settings.diff(settings)
                if diff:
                    shown = ", ".join(f"{k}={a!r} (you passed {b!r})" for k, (a, b) in diff.items())
                    raise InvalidSettings(
                        f"store {self.path} was built with {shown}; a store keeps its settings so "
                        "it replays the same — pass settings=... to recall() for a dry-run "
                        "experiment, switch its profile with `akasha migrate STORE --profile "
                        "v1|v2` (mem.migrate), or build a new store")
            if self._embedder is not None:
                self.manifest.check_model(self._embedder.name, self._embedder.dim, self.path)
        else:
            settings = settings or Settings()
            emb = self._embedder or store_embedder(settings)
            self._embedder = emb
            self.manifest = Manifest(settings=settings, model=emb.name, dim=emb.dim,
                                     tokenizer=tokenizer_id(settings))
        self.settings: Settings = self.manifest.settings
        self.embeddings = EmbeddingCache(self.manifest, self.path, read_only=self.read_only,
                                         embedder=self._embedder)
        """The embedding model and the vectors it keeps (:mod:`.embedding`)."""
        self._embedder = None
        self.dim = self.manifest.dim
        if self.read_only:
            # refused before Kuzu is asked: a writer in another process may be between
            # closing and opening its graph again (GraphDB.REOPEN_AFTER), and a reader let
            # in then would lock it out
            writer = WriterLock(self.path)
            if writer.held() and writer.holder().get("pid") != os.getpid():
                raise writer.graph_busy(read_only=True, detail="writer.lock is held",
                                        holder=graph_lock(self.path / "graph.kuzu"))
        try:
            self._graph = graph = GraphDB(self.path / "graph.kuzu", read_only=self.read_only)
        except StoreLocked as e:  # say who holds it (see store.lock)
            detail = str(e.__cause__ or e).splitlines()[0]
            raise WriterLock(self.path).graph_busy(
                read_only=self.read_only, detail=detail,
                holder=graph_lock(self.path / "graph.kuzu")) from e
        token = graph.meta_get(edgecache.TOKEN_KEY)
        if token and not self.read_only:  # first thing: from now on Kuzu may change, so the
            graph.meta_set(edgecache.TOKEN_KEY, "")  # edges file is trusted by this open only
        self.vectors = VectorDB(self.path / "vectors", self.dim, read_only=self.read_only)
        if not exists:
            self.manifest.write(self.path)  # last: a half-created folder has no manifest
        if not self.read_only:
            folder.finish(self.path)  # (also a marker a kill left after the manifest)
        self.journal = Journal(self.path / "journal.jsonl", fsync=self.settings.JOURNAL_FSYNC)
        self.behind = WriteBehind(graph, self.journal, self.settings)
        """The turns waiting for the graph, and the graph's one door (:mod:`.behind`)."""
        del self._graph
        stale_terms = exists and self.manifest.tokenizer != tokenizer_id(self.settings)
        if stale_terms and not self.read_only:
            self.reindex()
            stale_terms = False
        waiting = self.behind.open(self.path, read_only=self.read_only)
        self.mirror = Mirror(self.dim)
        cached = edgecache.read(self.path, token=token, journal_seq=graph.meta_get("journal_seq"))
        self.mirror.load(graph, self.vectors, self.journal, cached_edges=cached, waiting=waiting)
        if stale_terms:  # read-only: index the terms in memory, leave the files alone
            log.warning("store %s was indexed with other term rules (%s); using terms rebuilt "
                        "in memory — open it once for writing to migrate it", self.path,
                        self.manifest.tokenizer)
            self.mirror.set_terms(self.terms_by_uid(self.settings))
        if self.mirror.orphan_messages:
            log.warning("store %s: %d messages without a node (an interrupted ingest); "
                        "re-run that ingest or `akasha doctor --repair`", self.path,
                        len(self.mirror.orphan_messages))

    # -- lifecycle -------------------------------------------------------------------------------
    @property
    def closed(self) -> bool:
        """Whether :meth:`close` ran."""
        return self._closed

    def close(self, *, checkpoint: bool = True) -> None:
        """Checkpoint the journal into Kuzu (writers; ``checkpoint=False`` leaves it for the
        next open to re-apply) and release every file and lock. Closing twice is a no-op.
        Thread-safety: the caller holds the store; a fold of another thread ends first."""
        if self._closed:
            return
        try:
            if checkpoint and not self.read_only and hasattr(self, "mirror"):
                self.checkpoint_or_defer()
                self._save_edges()
        finally:
            behind = getattr(self, "behind", None)
            if behind is not None:
                behind.close()   # a fold another thread is writing ends first
            self._closed = True
            if hasattr(self, "embeddings"):
                self.embeddings.closed = True
            recalls = getattr(self, "recalls", None)
            if recalls is not None:
                recalls.close()   # the records still queued are written
            for obj in (getattr(self, "journal", None), behind and behind.db,
                        getattr(self, "vectors", None)):
                if obj is not None:
                    obj.close()
            self._release()

    def _save_edges(self) -> None:
        """Leave the COACT edges for the next open (:mod:`.edgecache`) when every change is
        in Kuzu and the store has ``EDGE_CACHE_MIN_EDGES`` edges or more; a smaller store
        loses an old file. A failure only logs: the next open reads Kuzu."""
        m, folder, g = self.mirror, self.path, self.graph_as_is
        try:
            ids = np.flatnonzero(m.edges.alive)
            clean = not (m.dirty_edges or m.dirty_nodes or m.pending_queries
                         or self.journal.pending)
            if not clean or ids.size < max(1, self.settings.EDGE_CACHE_MIN_EDGES):
                edgecache.remove(folder)
                return
            e = m.edges
            token = edgecache.write(
                folder, np.asarray(m.ord, np.int64), e.src[ids], e.dst[ids], e.w[ids],
                e.last_ts[ids], e.co_count[ids], journal_seq=g.meta_get("journal_seq"),
                turns=g.count("Turn"))
            g.meta_set(edgecache.TOKEN_KEY, token)
        except (OSError, StoreError) as e:
            log.warning("store %s: COACT edges not cached for the next open (it reads them "
                        "from Kuzu): %s", folder, e)

    @property
    def cache_dir(self) -> Path:
        """``STORE/cache/``: files an area derives from the store to skip recomputing them
        on the next open (the atlas layout); never exported, removed by a forget, safe to
        delete."""
        return self.path / CACHE_DIR

    def clear_derived(self) -> None:
        """Forget every derived value, in memory and in :attr:`cache_dir` (a writer only
        touches the folder): what a forget runs, so no forgotten turn survives in one."""
        self.derived.clear()
        if not self.read_only and self.cache_dir.exists():
            shutil.rmtree(self.cache_dir, ignore_errors=True)

    def _release(self) -> None:
        if self.lock is not None:
            self.lock.release()
            self.lock = None

    def check_open(self) -> None:
        """Raise :class:`StoreError` when the store is closed."""
        if self._closed:
            raise StoreError(f"store {self.path} is closed")

    def check_write(self) -> None:
        """Raise when the store is closed or open read-only (:class:`ReadOnlyStore`)."""
        self.check_open()
        if self.read_only:
            raise ReadOnlyStore(f"store {self.path} is open read-only; open it without "
                                "read_only=True to change it")

    # -- the graph's two doors (see .behind) -----------------------------------------------------
    @property
    def graph(self) -> GraphDB:
        """The Kuzu graph with every stored turn in it: turns still waiting in the journal
        (``add_turn``'s write-behind) are written first, in this thread
        (:meth:`WriteBehind.caught_up <akasha_explorer.store.behind.WriteBehind.caught_up>`).
        What the explorer, the desks, a forget and an export read. Thread-safety: may wait
        for a fold of another thread; never use it holding the graph's connection."""
        return self.behind.caught_up()

    @graph.setter
    def graph(self, db: GraphDB) -> None:
        """Swap in another database (a forget's rebuild, a compaction): anchors may differ."""
        self.behind.db = db
        self._anchor_edits += 1

    @property
    def graph_as_is(self) -> GraphDB:
        """The Kuzu graph as it is, without writing the turns waiting in the journal: for
        reads that are right without them (the anchor lexicon, a mention list, tombstones,
        the query log) — what keeps ``add_turn`` and ``context`` off Kuzu's write path.
        Thread-safety: any thread; its statements wait only for the connection."""
        return self.behind.db

    @property
    def anchor_version(self) -> int:
        """Moves with every write of anchors, aliases or mentions — a curation edit, a
        forget, an extraction, a fold (:attr:`WriteBehind.folds
        <akasha_explorer.store.behind.WriteBehind.folds>`), a graph swapped in: the recall's
        anchor channel reloads when it moves. Thread-safety: any thread, lock-free."""
        return self._anchor_edits + self.behind.folds

    def anchors_changed(self) -> None:
        """Note a write of anchors, aliases or mentions (see :attr:`anchor_version`)."""
        self._anchor_edits += 1

    # -- the write path (SPEC §1) ----------------------------------------------------------------
    def announce(self, **info: object) -> None:
        """Add to what the writer lock file says about this writer (``url=``: where the
        store is served, so a process refused the store can connect there instead)."""
        self.check_write()
        assert self.lock is not None
        self.lock.annotate(**info)

    def checkpoint(self) -> dict[str, float]:
        """Fold the journal into Kuzu in bulk (SPEC §1 write path; see
        :meth:`Mirror.checkpoint <akasha_explorer.store.mirror.Mirror.checkpoint>`).
        Thread-safety: the caller holds the store; it folds first (``store.fold``)."""
        self.check_write()
        self.fold_graph()  # the commits' edges name the turns waiting
        if not (self.mirror.dirty_edges or self.mirror.dirty_nodes
                or self.mirror.pending_queries or self.journal.pending):
            out = {"edges": 0.0, "nodes": 0.0, "queries": 0.0, "rewrite": 0.0, "pruned": 0.0,
                   "compacted": 0.0, "seconds": 0.0}
        else:
            s = self.settings
            out = self.mirror.checkpoint(self.graph_as_is, self.journal,
                                         prune_below=s.EDGE_PRUNE_BELOW, tau=s.EDGE_TAU,
                                         budget=s.EDGE_BUDGET)
        self._tidy()
        self.graph_as_is.reopen_if_due()   # Kuzu's memory back now, not at the next write
        return out

    @property
    def tidy_due(self) -> bool:
        """Whether :data:`TIDY_AFTER` LanceDB versions were written since the last
        compaction."""
        return self.vectors.versions >= TIDY_AFTER

    def tidy(self) -> None:
        """Compact LanceDB if :attr:`tidy_due` (a fold and a checkpoint do it themselves;
        a server whose thread folds with ``tidy=False`` calls this under its request lock,
        after :meth:`merge_fragments` outside it)."""
        self.check_write()
        self._tidy()

    def merge_fragments(self) -> None:
        """The part of :meth:`tidy` that may run beside this store's readers and writers
        (:meth:`VectorDB.merge_fragments
        <akasha_explorer.vectors.lance.VectorDB.merge_fragments>`), if :attr:`tidy_due`:
        what is left for :meth:`tidy` is deleting the old versions' files.
        Thread-safety: any thread (a server's fold thread); takes ``store.fold``."""
        self.check_write()
        self._compact_vectors(self.vectors.merge_fragments, "fragments not merged")

    def _tidy(self) -> None:
        """Compact LanceDB once :data:`TIDY_AFTER` versions were written since the last
        time (a fold, a checkpoint)."""
        self._compact_vectors(self.vectors.tidy, "not compacted")

    def _compact_vectors(self, step: Callable[[], None], failed: str) -> None:
        """Run a step of LanceDB's compaction if :attr:`tidy_due`, never beside a fold (its
        extraction reads LanceDB). A full disk leaves it for the next time."""
        if not self.tidy_due:
            return
        with self.behind.paused(), phase("tidy"):
            try:
                step()
            except DiskFull as e:
                log.warning("store %s: LanceDB %s: %s", self.path, failed, e)

    def checkpoint_or_defer(self) -> None:
        """A checkpoint that may wait: the journal holds every acknowledged change, so a
        disk too full for Kuzu defers it (logged) instead of failing the call."""
        try:
            self.checkpoint()
        except DiskFull as e:
            log.warning("store %s: checkpoint deferred (the journal keeps every change): %s",
                        self.path, e)

    def compact(self) -> dict[str, int]:
        """Checkpoint, then compact both stores: LanceDB's fragments merged and every older
        version's files deleted (what each ingest's versions leave; a reader that holds an
        older version must reopen), and the Kuzu file rebuilt from its live rows (the pages
        the checkpoints' COACT rewrites freed are not given back otherwise). Returns the
        store's bytes on disk before and after (the recall records queued for their writer
        thread written first, so that none lands between the two measures)."""
        self.check_write()
        self.recalls.flush()
        before = _du(self.path)
        self.checkpoint()
        self.vectors.optimize(cleanup=True)  # the writer lock: no other reader holds a version
        self.graph = dump.rebuild(self.graph_as_is)   # (checkpointed: nothing waits)
        return {"bytes_before": before, "bytes_after": _du(self.path)}

    @contextlib.contextmanager
    def journaled(self) -> Iterator[None]:
        """A change applied to the mirror and appended to the journal, all or nothing:
        when the append fails (a full disk), the mirror is loaded again from what is
        durable — the stores and the journal — so the failed change is nowhere, and the
        error says so. Nested blocks leave it to the outermost (one reload)."""
        if self._journaled:
            yield
            return
        self._journaled = True
        try:
            yield
        except BaseException:
            self.reload_mirror()
            raise
        finally:
            self._journaled = False

    def write_plan(self, plan: WritebackPlan, *, replayed: Sequence[int] = (),
                   sync: bool | None = None, query: str | None = None) -> None:
        """The one write path of dynamic state (SPEC §1): ``plan`` applied to the mirror
        and appended to the journal as one record, all or nothing (:meth:`journaled`) —
        what a commit, a replay step and a confirmed link each write. ``replayed``: node
        rows the record also marks replayed; ``sync``: fsync the journal (default: the
        store's ``JOURNAL_FSYNC``); ``query``: the query-log row of the recall written
        back, marked committed by the same record."""
        m = self.mirror
        with self.journaled():
            apply_plan(plan, m.nodes, m.edges)
            for i in replayed:
                m.nodes.set_replayed(i)
            m.journal_plan(self.journal, plan, replayed=replayed, sync=sync, query=query)
            if query:
                m.mark_query(query)

    def reload_mirror(self) -> None:
        """Rebuild the mirror from the stores and the journal (see :meth:`journaled`; the
        turns waiting for the graph come from their journal records, as the graph's own).
        Thread-safety: the caller holds the store; no fold runs meanwhile (``store.fold``:
        one of another thread ends first), and the load reads the graph as it is — in a
        thread of its own for the edges, which takes only the connection."""
        fresh = Mirror(self.dim)
        with self.behind.paused():   # a fold of another thread cannot move turns meanwhile
            self.journal.close()
            fresh.load(self.graph_as_is, self.vectors, self.journal,
                       waiting=[r["Turn"] for _, r in self.behind.records()])
        self.mirror = fresh

    def plan_writeback(self, trace: RecallTrace, current_node: str, *,
                       reinforce: bool = False) -> WritebackPlan:
        """The write-back plan of ``trace`` with ``current_node`` as the turn it served,
        computed at ``trace.now`` from the current state and set on ``trace.writeback`` —
        a dry run: nothing is applied (SPEC §4 stage 5)."""
        self.check_open()
        m = self.mirror
        return plan_writeback(trace, m.nodes, m.edges, self.row(current_node), now=trace.now,
                              settings=self.settings, reinforce=reinforce)

    def commit(self, trace: RecallTrace, current_node: str, *,
               reinforce: bool = False, by: str = "user",
               sync: bool | None = None) -> WritebackPlan:
        """Write ``trace`` back with ``current_node`` as current: the plan is applied to the
        mirror and appended to the journal in one record (all or nothing) that also marks
        the trace's query-log row committed, and a checkpoint run every
        ``CHECKPOINT_EVERY`` commits. A recall is written back once: a second commit of the
        same trace — or of any trace naming the same query-log row — is refused. ``by`` is
        kept with the recall's record (:meth:`logged_recall`). ``sync=False``: the journal
        is not fsync'ed — the caller calls ``journal.sync()`` before it says the commit is
        done (several commits, one fsync: a server's group commit)."""
        self.check_write()
        self.check_commit(trace)
        with phase("commit"):
            plan = self.plan_writeback(trace, current_node, reinforce=reinforce)
        try:
            with phase("commit"):
                self.write_plan(plan, query=trace.log_uid, sync=sync)
        except BaseException:
            trace.writeback = None  # not committed: it can be committed again
            raise
        if trace.log_uid:
            at = time.time()
            trace.written_back = {"committed": True, "node": current_node, "by": by, "at": at}
            try:  # the record takes the plan written: the recall as it was delivered
                self.recalls.mark_written(trace.log_uid, node=current_node, by=by, at=at,
                                          plan=plan)
            except OSError as e:  # the commit is durable; only who and where is not kept
                log.warning("commit: not kept with the recall's record: %s", e)
        if self.journal.pending >= self.settings.CHECKPOINT_EVERY:
            self.checkpoint_or_defer()
        return plan

    def check_commit(self, trace: RecallTrace) -> None:
        """Raise unless ``trace`` can be written back now: not committed yet, and every
        node it activated still alive (a forget since the recall makes it stale)."""
        if trace.writeback is not None and trace.writeback.applied:
            raise InvalidInput("this trace was already committed; recall again to write again")
        if trace.log_uid and self.queries.committed(trace.log_uid):
            raise InvalidInput(f"the recall {trace.log_uid} was already written back (its "
                               "query-log row says so); a recall is written back once — "
                               "recall again to write again")
        n = self.mirror.nodes
        gone = [u for u in trace.activation.uids
                if (i := n.index.get(u)) is None or not n.alive[i]]
        if gone:
            raise InvalidInput(f"this recall names {len(gone)} turn(s) that are gone since it "
                               f"was made ({gone[0]!r}: forgotten?); recall again")

    # -- ingest batches and the turns waiting for the graph (.behind) ------------------------------
    def write_ingest(self, messages: pa.Table, turns: pa.Table, rows: dict[str, Any], *,
                     behind: bool = False) -> None:
        """Store one ingest batch: LanceDB first (messages, then node vectors; a torn
        ingest's rows replaced), then the graph rows (``rows``, from the ingest pipeline)
        in one Kuzu transaction (:func:`~akasha_explorer.graphdb.turns.write_ingest_batch`)
        — or, ``behind=True``, appended to the journal, to be written with the
        extraction by :meth:`fold_graph`. The caches follow (:attr:`stored`). The free space
        the whole batch needs is checked first: a batch the disk cannot hold is refused
        before anything is written (:mod:`akasha_explorer._fs`). Thread-safety: the caller
        holds the store."""
        from .._fs import GRAPH_RESERVE, WRITE_FACTOR, ensure_free
        ensure_free(self.path, GRAPH_RESERVE + WRITE_FACTOR * (messages.nbytes + turns.nbytes),
                    f"storing {messages.num_rows} messages")
        orphans = self.mirror.orphan_messages
        if orphans:  # a torn ingest's rows, of this input or another (node vectors too)
            torn = vq.messages_with_uids(self.vectors, orphans, ["node"]).column("node")
            nodes = sorted(set(torn.to_pylist()) | set(messages.column("node").to_pylist()))
            vq.delete_messages(self.vectors, orphans, batch=len(orphans))  # one delete each
            vq.delete_turns(self.vectors, nodes, batch=max(1, len(nodes)))
            self.mirror.orphan_messages = []
            self.stored.drop_tails()
        with phase("lance"):
            vq.add_messages(self.vectors, messages)
            vq.add_turns(self.vectors, turns)
        self.stored.added(messages)
        if behind:   # journaled, fsync'ed by the caller's commit (or journal.sync())
            if self.behind.add(rows):
                self.fold_graph()
        else:
            self.behind.write_graph(rows)

    def fold_graph(self, *, tidy: bool = True) -> int:
        """Write the turns waiting in the journal to the graph, with their extraction, in one
        Kuzu transaction (:meth:`WriteBehind.fold
        <akasha_explorer.store.behind.WriteBehind.fold>`); returns how many were written.
        ``tidy=False`` leaves LanceDB's compaction (:meth:`tidy`) to the caller: it deletes
        files a reader of another thread may be reading, so a server runs it under its
        request lock. Thread-safety: any thread (a server's fold thread); takes
        ``store.fold``, then the connection."""
        n = self.behind.fold()
        if tidy and n:
            self._tidy()
        return n

    @property
    def graph_behind(self) -> int:
        """How many stored turns' graph rows wait in the journal (:meth:`fold_graph`).
        Thread-safety: any thread."""
        return self.behind.count

    def waiting_messages(self) -> list[int]:
        """The mirror's rows of the messages of turns whose graph rows wait
        (:meth:`fold_graph`): the recall's anchor channel finds their aliases itself."""
        n = self.mirror.nodes
        out: list[int] = []
        for _, r in self.behind.records():
            for u in r["Turn"]["uid"]:
                i = n.index.get(u)
                if i is not None and n.alive[i]:
                    a = int(n.first_msg[i])
                    out.extend(range(a, a + int(n.n_msg[i])))
        return out

    # -- settings and term rules -----------------------------------------------------------------
    def terms_by_uid(self, settings: Settings | None = None) -> dict[str, list[str]]:
        """Lexical terms of every stored message under the term rules of ``settings`` (default:
        the store's) — computed from the stored text, nothing is written."""
        settings = settings or self.settings
        rows = vq.messages(self.vectors, TERM_SOURCE_COLUMNS).to_pydict()
        return dict(zip(rows["uid"], stored_terms(rows, settings), strict=True))

    def reindex(self) -> None:
        """Migration: rebuild the stored lexical terms under the store's rules, then record
        them in the manifest (a crash in between re-runs it on the next open)."""
        t0 = time.perf_counter()
        rows = vq.messages(self.vectors, TERM_SOURCE_COLUMNS).to_pydict()
        new = stored_terms(rows, self.settings)  # the raw text is read, never written
        vq.update_message_terms(self.vectors, pa.table({
            "uid": pa.array(rows["uid"], pa.string()),
            "terms": pa.array(new, pa.list_(pa.string()))}))
        n = len(new)
        old = self.manifest.tokenizer
        self.manifest.tokenizer = tokenizer_id(self.settings)
        self.manifest.write(self.path)
        log.warning("store %s: lexical terms of %d messages rebuilt for the term rules %s "
                    "(were %s) in %.1fs", self.path, n, self.manifest.tokenizer, old or "?",
                    time.perf_counter() - t0)

    def migrate(self, profile: str, **changes: Any) -> dict[str, tuple[Any, Any]]:
        """Switch to settings ``profile``, keeping what the store set apart from its own
        profile and ``changes`` on top (see :meth:`Memory.migrate
        <akasha_explorer.memory.Memory.migrate>`). Returns ``{setting: (old, new)}``.

        Values outside their ranges are refused (:class:`InvalidSettings`) before anything
        is written. Stored values this version refuses (:attr:`Manifest.invalid
        <akasha_explorer.store.manifest.Manifest.invalid>`) are replaced — by ``changes`` or
        the profile's — and listed with the stored value as ``old``. The settings that made
        the store's vectors (:data:`~akasha_explorer.config.VECTOR_SETTINGS`) stay as they
        are: a profile does not change them, and ``changes`` to them are refused."""
        self.check_write()
        base, own = self.settings.profile_name()
        kept = {k: getattr(self.settings, k) for k in VECTOR_SETTINGS}
        new = Settings.profile(profile, **{**own, **kept, **changes})
        if any(getattr(new, k) != v for k, v in kept.items()):
            raise ModelMismatch("migrate cannot change the embedding model (every vector would "
                                "have to be recomputed); build a new store for another model")
        diff = self.settings.diff(new)
        diff.update({k: (v, getattr(new, k)) for k, (v, _) in self.manifest.invalid.items()})
        if not diff:
            return {}
        self.checkpoint()
        self.manifest.settings = new
        self.manifest.invalid = {}
        self.settings = new
        self.manifest.write(self.path)
        if self.manifest.tokenizer != tokenizer_id(new):
            self.reindex()
            self.mirror.set_terms(self.terms_by_uid(new))
        self.journal.fsync = new.JOURNAL_FSYNC
        self.behind.settings = new
        if "EMBED_DTYPE" in diff:   # the model in the profile's dtype from the next call on
            self.embeddings.reset()
        log.info("store %s migrated from profile %s to %s", self.path, base, profile)
        return diff

    @property
    def embedder(self) -> Embedder:
        """The store's embedding model (loaded on first use; :attr:`embeddings`)."""
        return self.embeddings.embedder

    # -- nodes and messages ----------------------------------------------------------------------
    def row(self, uid: str) -> int:
        """The mirror row of live node ``uid``; raises :class:`NotFound`."""
        i = self.mirror.nodes.index.get(uid)
        if i is None or not self.mirror.nodes.alive[i]:
            raise NotFound(f"no node {uid!r} in {self.path}; `akasha stats` lists what is there")
        return i

    def has_node(self, uid: str) -> bool:
        """Whether ``uid`` is a live node."""
        i = self.mirror.nodes.index.get(uid)
        return i is not None and bool(self.mirror.nodes.alive[i])

    def node_of_message(self, msg_uid: str) -> str | None:
        """The node a message belongs to (None: no such message)."""
        j = self.mirror.nodes.msg_index.get(msg_uid)
        return None if j is None else self.mirror.nodes.uid[int(self.mirror.nodes.msg_node[j])]

    def node_state(self, uid: str) -> NodeState:
        """Dynamic state of one node (mirror values, i.e. including uncheckpointed commits)."""
        i = self.row(uid)
        n = self.mirror.nodes
        return NodeState(uid=uid, session=n.sessions[int(n.session[i])], ts=float(n.ts[i]),
                         sigma=float(n.sigma[i]), strength=float(n.strength[i]),
                         strength_ts=float(n.strength_ts[i]), resource=float(n.resource[i]),
                         resource_ts=float(n.resource_ts[i]),
                         recall_count=int(n.recall_count[i]),
                         assistant_only=bool(n.assistant_only[i]))

    def messages(self, node: str, *, verify: bool = True) -> list[Message]:
        """The verbatim messages of a node, in order; raises :class:`IntegrityError` when a
        message's bytes no longer match its sha256 and ``verify`` is on."""
        i = self.row(node)
        n = self.mirror.nodes
        a, k = int(n.first_msg[i]), int(n.n_msg[i])
        uids = n.msg_uid[a:a + k]
        rows = vq.messages_of_nodes(self.vectors, [node]).to_pylist()
        by_uid = {r["uid"]: r for r in rows}
        out = [message_of(by_uid[u]) for u in uids if u in by_uid]
        if verify:
            bad = [m.uid for m in out if not m.verified]
            if bad:
                raise IntegrityError(f"message(s) {', '.join(bad)} no longer match their sha256; "
                                     "run `akasha doctor` on the store")
        return out

    def sessions(self) -> list[SessionInfo]:
        """Sessions with their time range and node count, oldest first."""
        return gt.sessions(self.graph)

    def last_ts(self) -> float:
        """Time of the newest message (0.0 for an empty store)."""
        n = self.mirror.nodes
        return float(n.msg_ts[n.msg_alive].max()) if n.m and n.msg_alive.any() else 0.0

    def stats(self) -> dict[str, Any]:
        """Counts and facts about the store (what ``akasha stats`` prints)."""
        n, e = self.mirror.nodes, self.mirror.edges
        flags: dict[str, int] = {}
        for j, f in enumerate(self.mirror.msg_flags):
            if n.msg_alive[j]:
                for name in f:
                    flags[name] = flags.get(name, 0) + 1
        alive = n.alive
        ts = n.ts[alive]
        return {
            "path": str(self.path),
            "sessions": int(self.graph.count("Session")),
            "messages": int(n.msg_alive.sum()),
            "nodes": int(alive.sum()),
            "assistant_only_nodes": int((n.assistant_only & alive).sum()),
            "replayed_nodes": int((n.replayed & alive).sum()),
            "edges": int(e.n_alive()),
            "next_edges": int(self.graph.count("NEXT")),
            "flags": dict(sorted(flags.items())),
            "review_pending": logs.pending_review_count(self.graph),
            "queries_logged": int(self.graph.count("QueryLog")) + len(self.mirror.pending_queries),
            "first_ts": _iso(float(ts.min())) if ts.size else None,
            "last_ts": _iso(float(ts.max())) if ts.size else None,
            "model": self.manifest.model,
            "dim": self.dim,
            "tokenizer": self.manifest.tokenizer,
            "schema_version": SCHEMA_VERSION,
            "graph_schema_version": self.graph.schema_version,
            "journal_pending": self.journal.pending,
            "orphan_messages": len(self.mirror.orphan_messages),
            "disk_bytes": _du(self.path),
        }

    def why_not(self, trace: RecallTrace, uid: str) -> dict[str, Any]:
        """Where node ``uid`` fell out of ``trace`` (:meth:`RecallTrace.why_not`), with
        what the store knows of it: its time, whether it is alive, its cosines with the
        query and its messages' lexical terms (under the store's term rules)."""
        self.check_open()
        n = self.mirror.nodes
        i = n.index.get(uid) if isinstance(uid, str) else None
        if i is None:
            raise NotFound(f"no node {uid!r}; a node uid looks like 'session:seq'")
        qv = np.asarray(trace.q, np.float32)
        a, k = int(n.first_msg[i]), int(n.n_msg[i])
        # this node's rows only, summed per row as NodeTable.cosines sums every row
        cos_node = np.einsum("ij,j->i", n.vec[[i]], qv)[0]
        cos_msg = np.einsum("ij,j->i", n.msg_vec[a:a + k], qv).max()
        terms = sorted({t for j in range(a, a + k) for t in self.mirror.msg_terms[j]})
        return trace.why_not(uid, {"row": i, "ts": float(n.ts[i]), "alive": bool(n.alive[i]),
                                   "cos_node": float(cos_node), "cos_msg": float(cos_msg),
                                   "terms": terms})


def message_of(r: dict[str, Any]) -> Message:
    """A :class:`~akasha_explorer.model.Message` from a stored message row."""
    return Message(uid=r["uid"], node=r["node"], session=r["session"], seq=int(r["seq"]),
                   ts=float(r["ts"]), role=r["role"], speaker=r["speaker"], text=r["text"],
                   sha256=r["sha256"], flags=tuple(r["flags"] or ()), source=r["source"] or "",
                   ext_id=r["ext_id"], meta=json.loads(r["meta"]) if r["meta"] else {})


def _iso(ts: float) -> str:
    return dt.datetime.fromtimestamp(ts, dt.UTC).isoformat(timespec="seconds")


def _du(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())
