"""The :class:`Store`: one open memory store folder and everything it owns.

A store folder holds::

    akasha.json      manifest: settings, embedding model + dimension, tokenizer, format
    graph.kuzu       Kuzu: turns (pointers + dynamic state), sessions, anchors, edges, logs
    vectors/         LanceDB: the raw messages verbatim (+ sha256) and node vectors
    journal.jsonl    write-ahead journal of committed state changes (SPEC §1 write path)
    writer.lock      the one-writer lock

A :class:`Store` owns the open parts — the writer lock, the manifest and settings, the
Kuzu adapter (:attr:`Store.graph`), the LanceDB adapter (:attr:`Store.vectors`), the
journal, the in-memory mirror the engine computes on, and the caches of stored text — and
offers what the areas need as public methods: lifecycle and the write path (checkpoint,
commit, journaled changes), lookups of nodes and messages, the lexical index, the query
log. The areas (ingest, extract, curate, analysis, brief, export, doctor) are functions or
small classes that take a ``Store``, the way sqlite-utils' ``Table`` takes its
``Database``; :class:`~akasha_explorer.memory.Memory` is the facade a person uses, and
``mem.store`` is its Store.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import json
import logging
import os
import shutil
import threading
import time
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

from .._timing import phase
from ..config import VECTOR_SETTINGS, Settings, time_zone
from ..embed import Embedder, store_embedder
from ..engine.bm25 import LexicalHits, Postings, TermGroup, bm25_rank, select_terms
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
from ..graphdb import SCHEMA_VERSION, GraphDB, chains, dump, logs
from ..graphdb import turns as gt
from ..graphdb.kuzu_db import EXTRACT_PENDING_KEY, GRAPH_SEQ_KEY, graph_lock
from ..model import Message, NodeState, RawMessage, SessionInfo
from ..text.gates import is_noise
from ..text.indexing import TERM_SOURCE_COLUMNS, index_text, stored_terms
from ..text.timewords import time_windows
from ..text.tokenize import TermRules, is_identifier, normalize, terms
from ..text.transcript import user_lines
from ..vectors import VectorDB
from ..vectors import queries as vq
from . import edgecache, folder
from .channels import AnchorChannel, query_groups
from .journal import GRAPH_RECORD, Journal
from .lock import WriterLock
from .manifest import Manifest, tokenizer_id
from .mirror import Mirror
from .recalled import RecallRecords

if TYPE_CHECKING:
    from ..extract.base import Extractor

__all__ = ["CACHE_DIR", "FOLD_AFTER", "FOLD_BEHIND_MAX", "PREPARED_VECTORS", "QUERY_VECTORS",
           "TIDY_AFTER", "Store"]

QUERY_VECTORS = 256
"""How many query vectors a store keeps (:meth:`Store.embed_query`)."""
PREPARED_VECTORS = 256
"""How many message vectors :meth:`Store.prepare_turn` keeps waiting for their ingest."""
FOLD_AFTER = 32
"""Stored turns whose graph rows may wait in the journal before the next ``add_turn``
writes them all (:meth:`Store.fold_graph`). Measured on the demo store, a fold with its
extraction: 1 turn 162 ms, 8 turns 170 ms, 32 turns 204 ms, 63 turns 446 ms — 32 costs a
turn as little as 64 and holds the store half as long."""
FOLD_BEHIND_MAX = 4 * FOLD_AFTER
"""Stored turns that may wait while a fold is left to another thread (:attr:`Store.fold_soon`):
past it, the ``add_turn`` that finds them folds them itself (the turns come faster than the
server's thread writes them)."""
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
        self._embedder = embedder
        self._journaled = False  # inside a journaled() block (the outermost reloads)
        self._query_vecs: dict[str, np.ndarray] = {}  # text -> vector, newest last
        self._text_vecs: dict[str, np.ndarray] = {}  # index text -> vector (prepare_turn)
        self._vec_lock = threading.Lock()  # the two caches: prepare_turn runs in any thread
        self._fold_lock = threading.RLock()  # one fold at a time, whichever thread calls it
        self.anchor_channel = AnchorChannel()
        """Anchors as a recall channel (aliases, mentions), kept until they change."""
        self.derived: dict[str, Any] = {}
        """Values an area derives from this store and keeps while it is open, under the
        area's own key (the atlas layout of a store version); a forget empties it
        (:meth:`clear_derived`)."""
        self._tails: dict[str, tuple[int, dict[str, str]]] = {}
        """Per session read so far: the next seq and the nodes by turn id, ever stored
        (:meth:`session_tails` hands out a view of the live ones)."""
        self.fold_extract: Callable[[list[str]], Any] | None = None
        """How :meth:`fold_graph` extracts the turns it writes (set by the ingest area, which
        owns extraction; None: they stay in Meta ``extract_pending`` for the next ingest)."""
        self._behind: list[tuple[int, dict[str, Any]]] = []
        """Stored turns whose graph rows wait in the journal: ``(journal seq, rows)``
        (:meth:`fold_graph`); appended by an ingest, cut by a fold (under
        ``_behind_lock``: the fold may run in another thread)."""
        self._behind_lock = threading.Lock()
        self._in_fold = 0   # how many of _behind's first records a fold is writing now
        self.fold_soon: Callable[[], Any] | None = None
        """Set by a server: called instead of :meth:`fold_graph` when :data:`FOLD_AFTER`
        turns wait (it wakes the server's own thread, which folds them while the requests go
        on); None: the ``add_turn`` that finds them folds them."""
        self._closed = False
        self._hashes: dict[str, str] | None = None
        self._texts: dict[str, str] | None = None
        self._other_postings: dict[TermRules, tuple[Any, Postings]] = {}
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
            for part in ("graph", "vectors"):
                obj = getattr(self, part, None)
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
            self.graph = GraphDB(self.path / "graph.kuzu", read_only=self.read_only)
        except StoreLocked as e:  # say who holds it (see store.lock)
            detail = str(e.__cause__ or e).splitlines()[0]
            raise WriterLock(self.path).graph_busy(
                read_only=self.read_only, detail=detail,
                holder=graph_lock(self.path / "graph.kuzu")) from e
        self.vectors = VectorDB(self.path / "vectors", self.dim, read_only=self.read_only)
        if not exists:
            self.manifest.write(self.path)  # last: a half-created folder has no manifest
        if not self.read_only:
            folder.finish(self.path)  # (also a marker a kill left after the manifest)
        self.journal = Journal(self.path / "journal.jsonl", fsync=self.settings.JOURNAL_FSYNC)
        stale_terms = exists and self.manifest.tokenizer != tokenizer_id(self.settings)
        if stale_terms and not self.read_only:
            self.reindex()
            stale_terms = False
        waiting = self._fold_journal() if not self.read_only else self._journal_only()
        self.mirror = Mirror(self.dim)
        token = self.graph.meta_get(edgecache.TOKEN_KEY)
        cached = edgecache.read(self.path, token=token,
                                journal_seq=self.graph.meta_get("journal_seq"))
        self.mirror.load(self.graph, self.vectors, self.journal, cached_edges=cached,
                         waiting=waiting)
        if token and not self.read_only:  # from now on Kuzu may change: the file is stale
            self.graph.meta_set(edgecache.TOKEN_KEY, "")
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
        next open to re-apply) and release every file and lock. Closing twice is a no-op."""
        if self._closed:
            return
        try:
            if checkpoint and not self.read_only and hasattr(self, "mirror"):
                self.checkpoint_or_defer()
                self._save_edges()
        finally:
            with self._fold_lock:   # a fold another thread is writing ends first
                self._closed = True
            recalls = getattr(self, "recalls", None)
            if recalls is not None:
                recalls.close()   # the records still queued are written
            for part in ("journal", "graph", "vectors"):
                obj = getattr(self, part, None)
                if obj is not None:
                    obj.close()
            self._release()

    def _save_edges(self) -> None:
        """Leave the COACT edges for the next open (:mod:`.edgecache`) when every change is
        in Kuzu and the store has ``EDGE_CACHE_MIN_EDGES`` edges or more; a smaller store
        loses an old file. A failure only logs: the next open reads Kuzu."""
        m, folder = self.mirror, self.path
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
                e.last_ts[ids], e.co_count[ids], journal_seq=self.graph.meta_get("journal_seq"),
                turns=self.graph.count("Turn"))
            self.graph.meta_set(edgecache.TOKEN_KEY, token)
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

    # -- the write path (SPEC §1) ----------------------------------------------------------------
    def announce(self, **info: object) -> None:
        """Add to what the writer lock file says about this writer (``url=``: where the
        store is served, so a process refused the store can connect there instead)."""
        self.check_write()
        assert self.lock is not None
        self.lock.annotate(**info)

    def checkpoint(self) -> dict[str, float]:
        """Fold the journal into Kuzu in bulk (SPEC §1 write path; see
        :meth:`Mirror.checkpoint <akasha_explorer.store.mirror.Mirror.checkpoint>`)."""
        self.check_write()
        self.fold_graph()  # the commits' edges name the turns waiting
        if not (self.mirror.dirty_edges or self.mirror.dirty_nodes
                or self.mirror.pending_queries or self.journal.pending):
            out = {"edges": 0.0, "nodes": 0.0, "queries": 0.0, "rewrite": 0.0, "pruned": 0.0,
                   "compacted": 0.0, "seconds": 0.0}
        else:
            s = self.settings
            out = self.mirror.checkpoint(self.graph, self.journal,
                                         prune_below=s.EDGE_PRUNE_BELOW, tau=s.EDGE_TAU,
                                         budget=s.EDGE_BUDGET)
        self._tidy()
        self.graph.reopen_if_due()   # Kuzu's memory back now, not at the next write
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
        what is left for :meth:`tidy` is deleting the old versions' files."""
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
        with self._fold_lock, phase("tidy"):
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
        self.graph = dump.rebuild(self.graph)
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
        turns waiting for the graph come from their journal records, as the graph's own)."""
        self.journal.close()
        fresh = Mirror(self.dim)
        with self._fold_lock:   # a fold of another thread cannot move turns meanwhile (not
            # the graph's connection: the load reads it from a thread of its own)
            fresh.load(self.graph, self.vectors, self.journal,
                       waiting=[r["Turn"] for _, r in self._behind])
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
        if "EMBED_DTYPE" in diff:   # the model in the profile's dtype from the next call on
            self._embedder = None
            with self._vec_lock:
                self._query_vecs.clear()
                self._text_vecs.clear()
        log.info("store %s migrated from profile %s to %s", self.path, base, profile)
        return diff

    # -- embedder --------------------------------------------------------------------------------
    @property
    def embedder(self) -> Embedder:
        """The store's embedding model (loaded on first use)."""
        if self._embedder is None:
            emb = store_embedder(self.settings)
            self.manifest.check_model(emb.name, emb.dim, self.path)
            self._embedder = emb
        return self._embedder

    def embed_query(self, text: str) -> np.ndarray:
        """L2-normalised query vector. The last :data:`QUERY_VECTORS` are kept, so a query
        recalled again (a what-if, a time slider, a labelled set) is not embedded again."""
        with self._vec_lock:
            v = self._query_vecs.pop(text, None)
        if v is None:
            with phase("embed"):
                v = self.embedder.encode([text])[0]
            v.setflags(write=False)
        with self._vec_lock:
            while len(self._query_vecs) >= QUERY_VECTORS:
                self._query_vecs.pop(next(iter(self._query_vecs)))
            self._query_vecs[text] = v
        return v

    def embed_batch(self, texts: Sequence[str], *, batch_size: int = 64,
                    progress: bool = False) -> np.ndarray:
        """The vectors of an ingest batch's index texts: those :meth:`prepare_turn`
        computed (each taken once: several turns written together find theirs) or a recent
        query's (:meth:`embed_query`: an agent's user text was its recall's query first),
        the rest from the model in one call."""
        with self._vec_lock:
            ready = [self._known_vector(t, take=True) for t in texts]
        todo = [i for i, v in enumerate(ready) if v is None]
        if len(todo) == len(texts):
            with phase("embed"):
                return self.embedder.encode(texts, batch_size=batch_size, progress=progress)
        if todo:
            with phase("embed"):
                vecs = self.embedder.encode([texts[i] for i in todo], batch_size=batch_size)
            for i, v in zip(todo, vecs, strict=True):
                ready[i] = v
        return np.stack([np.asarray(v) for v in ready])

    def _known_vector(self, text: str, *, take: bool = False) -> np.ndarray | None:
        """The vector of ``text`` if :meth:`prepare_turn` or :meth:`embed_query` made it
        (``take``: a prepared one is used once). The caller holds ``_vec_lock``. A user's
        text is embedded once per agent loop — as the query of its recall, then reused as
        its message's vector (the model's vector of the same text, made alone rather than
        in a batch: equal to ~1e-7 in float32, to a cosine of ~0.99998 in bfloat16) —
        not twice: ~8–10 ms of the model per loop."""
        v = self._text_vecs.pop(text, None) if take else self._text_vecs.get(text)
        return self._query_vecs.get(text) if v is None else v

    def prepare_turn(self, user: str | None, assistant: str | None, *, when: float) -> None:
        """Embed what :meth:`Memory.add_turn <akasha_explorer.memory.Memory.add_turn>` of
        this turn will need — the query vector of ``user`` and the vectors of the turn's
        messages, computed the same way ingest does — so a server can do it *before* taking
        the store (the model is the slow part of a turn). Thread-safe; a no-op for a store
        that is closed or read-only; the vectors are used once and a few are kept."""
        if self._closed or self.read_only:
            return
        s = self.settings
        raws = [RawMessage("prepare", k, when, role, text, source="add_turn")
                for k, (role, text) in enumerate(
                    (r, t) for r, t in (("user", user), ("assistant", assistant))
                    if t is not None)]
        texts = tuple(index_text(m, s) for m in raws)
        if user is not None:
            self.embed_query(user)
        with self._vec_lock:
            todo = [t for t in texts if self._known_vector(t) is None]
        if not todo:
            return
        with phase("embed"):
            vecs = self.embedder.encode(todo, batch_size=s.EMBED_BATCH)
        with self._vec_lock:
            self._text_vecs.update(zip(todo, vecs, strict=True))
            while len(self._text_vecs) > PREPARED_VECTORS:
                self._text_vecs.pop(next(iter(self._text_vecs)))

    def check_commit(self, trace: RecallTrace) -> None:
        """Raise unless ``trace`` can be written back now: not committed yet, and every
        node it activated still alive (a forget since the recall makes it stale)."""
        if trace.writeback is not None and trace.writeback.applied:
            raise InvalidInput("this trace was already committed; recall again to write again")
        if trace.log_uid and self.query_committed(trace.log_uid):
            raise InvalidInput(f"the recall {trace.log_uid} was already written back (its "
                               "query-log row says so); a recall is written back once — "
                               "recall again to write again")
        n = self.mirror.nodes
        gone = [u for u in trace.activation.uids
                if (i := n.index.get(u)) is None or not n.alive[i]]
        if gone:
            raise InvalidInput(f"this recall names {len(gone)} turn(s) that are gone since it "
                               f"was made ({gone[0]!r}: forgotten?); recall again")

    def session_tails(self, sessions: Sequence[str]
                      ) -> dict[str, tuple[int, Mapping[str, str]]]:
        """For each of ``sessions``: the seq its next message gets (:meth:`next_seq`) and its
        live nodes by the ``turn_id`` their first message carries (:meth:`turn_with_id`).
        Read from LanceDB once per session (many sessions in one read), then kept and
        extended by each ingest (``add_turn`` reads no table: ~10 ms less). The live nodes
        are a view checked on lookup (:class:`_LiveIds`), not a filtered copy: filtering a
        session of 5,000 turns took 2 ms, on every ``add_turn``."""
        todo = sorted(set(sessions) - set(self._tails))
        if todo:
            with phase("lookup"):
                rows = vq.messages_of_sessions(self.vectors, todo,
                                               ["session", "seq", "node", "ext_id"]).to_pydict()
            for sid in todo:
                self._tails[sid] = (self._forgotten_tail(sid), {})
            self._extend_tails(rows)
        out: dict[str, tuple[int, Mapping[str, str]]] = {}
        for sid in sessions:
            seq, ids = self._tails[sid]
            out[sid] = (seq, _LiveIds(ids, self.has_node))
        return out

    def _forgotten_tail(self, session: str) -> int:
        """One past the highest seq of ``session``'s messages the mirror still names though
        they were forgotten in this process: their ids are not given out again while it
        runs (the mirror keeps a forgotten node's row; a new node of the same id would
        collide with it). After a reopen a forgotten id may be stored again (its tombstone
        is lifted with it)."""
        n = self.mirror.nodes
        code = n.session_code.get(session)
        if code is None:
            return 0
        rows = np.flatnonzero((n.session[: n.n] == code) & ~n.alive[: n.n])
        seqs = [chains.first_seq(n.msg_uid[j]) for i in rows.tolist()
                for j in range(int(n.first_msg[i]), int(n.first_msg[i]) + int(n.n_msg[i]))]
        return max(seqs) + 1 if seqs else 0

    def _extend_tails(self, rows: dict[str, list[Any]]) -> None:
        """Add stored messages (``session``, ``seq``, ``node``, ``ext_id`` columns) to the
        kept tails of the sessions :meth:`session_tails` has read."""
        for s, q, node, ext in zip(rows["session"], rows["seq"], rows["node"], rows["ext_id"],
                                   strict=True):
            got = self._tails.get(s)
            if got is None:
                continue
            seq, ids = got
            if ext is not None and ext not in ids:
                ids[ext] = str(node)
            self._tails[s] = (max(seq, int(q) + 1), ids)

    def turn_with_id(self, session: str, turn_id: str) -> str | None:
        """The live node of ``session`` whose first message carries the caller's id
        ``turn_id`` (``add_turn``'s retry key), or None."""
        return self.session_tails([session])[session][1].get(turn_id)

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

    def next_seq(self, session: str) -> int:
        """The seq a new message of ``session`` gets (one past the highest stored)."""
        return self.session_tails([session])[session][0]

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

    # -- caches of stored text -------------------------------------------------------------------
    def stored_hashes(self) -> dict[str, str]:
        """Message uid -> sha256 of every stored message (cached; a torn ingest's rows, to be
        replaced, left out)."""
        if self._hashes is None:
            t = vq.messages(self.vectors, ["uid", "sha256"]).to_pydict()
            self._hashes = dict(zip(t["uid"], t["sha256"], strict=True))
            for u in self.mirror.orphan_messages:  # a torn ingest: rows to be replaced
                self._hashes.pop(u, None)
        return self._hashes

    def texts(self) -> dict[str, str]:
        """Message uid -> verbatim text of every stored message (cached; a torn ingest's
        rows left out)."""
        if self._texts is None:
            t = vq.messages(self.vectors, ["uid", "text"]).to_pydict()
            orphans = set(self.mirror.orphan_messages)
            self._texts = {u: x for u, x in zip(t["uid"], t["text"], strict=True)
                           if u not in orphans}
        return self._texts

    def text_hashes(self) -> dict[str, str]:
        """Normalised text -> first message uid (near-duplicate links)."""
        out: dict[str, str] = {}
        for uid, text in self.texts().items():
            out.setdefault(normalize(" ".join(text.split())), uid)
        return out

    def forget_cached(self, msg_uids: Collection[str] | None = None) -> None:
        """Drop ``msg_uids`` from the text and hash caches (None: drop both caches whole, to
        be read again on first use)."""
        self._tails.clear()  # a forget deletes messages: the sessions' tails are read again
        if msg_uids is None:
            self._hashes = None
            self._texts = None
            return
        for u in msg_uids:
            for cache in (self._texts, self._hashes):
                if cache is not None:
                    cache.pop(u, None)

    def write_ingest(self, messages: pa.Table, turns: pa.Table, rows: dict[str, Any], *,
                     behind: bool = False) -> None:
        """Store one ingest batch: LanceDB first (messages, then node vectors; a torn
        ingest's rows replaced), then the graph rows (``rows``, from the ingest pipeline)
        in one Kuzu transaction (:func:`~akasha_explorer.graphdb.turns.write_ingest_batch`)
        — or, ``behind=True``, appended to the journal, to be written with the
        extraction by :meth:`fold_graph`. The caches follow. The free space the whole batch
        needs is checked first: a batch the disk cannot hold is refused before anything is
        written (:mod:`.space`)."""
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
            self._tails.clear()
        with phase("lance"):
            vq.add_messages(self.vectors, messages)
            vq.add_turns(self.vectors, turns)
        self._extend_tails(messages.select(["session", "seq", "node", "ext_id"]).to_pydict())
        if behind:
            with phase("journal"):  # fsync'ed by the caller's commit (or journal.sync())
                seq = self.journal.append({"kind": GRAPH_RECORD, "rows": rows}, sync=False)
            with self._behind_lock:
                self._behind.append((seq, rows))
                self.graph.catch_up = self.fold_graph
                waiting = self._turns_of(self._behind[self._in_fold:])   # not being written
            if waiting >= FOLD_AFTER:
                if self.fold_soon is not None and waiting < FOLD_BEHIND_MAX:
                    self.fold_soon()
                else:
                    self.fold_graph()
        else:
            self._write_graph(rows)
        if self._hashes is not None:
            self._hashes.update(zip(messages.column("uid").to_pylist(),
                                    messages.column("sha256").to_pylist(), strict=True))
        if self._texts is not None:
            self._texts.update(zip(messages.column("uid").to_pylist(),
                                   messages.column("text").to_pylist(), strict=True))

    def _write_graph(self, rows: dict[str, Any], *, seq: int | None = None,
                     extract: bool = False) -> list[str]:
        """Write ``rows`` (one batch's or several merged) in one Kuzu transaction, leaving
        their nodes in Meta ``extract_pending`` — or, ``extract=True``, extracting them in
        the same transaction (with :attr:`fold_extract`; without one they stay pending).
        ``seq``: the newest journal record they came from (Meta ``graph_seq``). Returns the
        nodes written."""
        uids = list(rows["Turn"]["uid"])
        extract = extract and self.settings.EXTRACT and self.fold_extract is not None
        with phase("kuzu"), self.graph.transaction():
            batch = gt.graph_batch(self.graph, rows)
            batch["unforget"] = rows.get("unforget", [])
            pending = None
            if self.settings.EXTRACT and not extract:  # added to what a crash may have left
                try:
                    before = json.loads(self.graph.meta_get(EXTRACT_PENDING_KEY, "") or "[]")
                except ValueError:
                    before = []
                pending = json.dumps(list(dict.fromkeys([*before, *uids])), ensure_ascii=False,
                                     separators=(",", ":"))
            gt.write_ingest_batch(self.graph, batch, extract_pending=pending)
            if extract:
                assert self.fold_extract is not None
                with phase("extract"):
                    self.fold_extract(uids)
            if seq is not None:
                self.graph.meta_set(GRAPH_SEQ_KEY, str(seq))
        return uids

    def fold_graph(self, *, tidy: bool = True) -> int:
        """Write the graph rows of the turns waiting in the journal (``add_turn``'s
        write-behind) and their extraction in **one** Kuzu transaction; returns how many
        turns were written.

        A stored turn costs Kuzu a transaction whatever its size (measured on the demo
        store, with the extraction: 162 ms for 1 turn, 204 ms for 32), so ``add_turn``
        stores the messages and vectors in LanceDB, the turn's graph rows in the journal —
        fsync'ed with its write-back, before it is acknowledged — and the mirror, which
        every recall reads; the graph gets them here: before any other statement reaches
        the graph (:attr:`GraphDB.catch_up`), at a checkpoint, at close, when
        :data:`FOLD_AFTER` turns wait, or when a server is idle. What a recall reads from
        the graph without waiting (the anchor lexicon, the query log, tombstones) misses
        the waiting turns' mentions until then. A kill before the fold loses nothing: the
        next read-write open writes the journal's waiting rows (Meta ``graph_seq`` says
        which are in) before loading the mirror.

        Any thread may fold (a server's own, :attr:`fold_soon`): the fold holds the graph's
        connection (:meth:`GraphDB.exclusive
        <akasha_explorer.graphdb.kuzu_db.GraphDB.exclusive>`), never the caller's lock, and
        the request path reads nothing from Kuzu while nothing changed (the Meta values and
        the tombstones are kept, the anchors reload after a commit). ``tidy=False`` leaves
        LanceDB's compaction (:meth:`tidy`) to the caller: it deletes files a reader of
        another thread may be reading, so a server runs it under its request lock."""
        with self._fold_lock:  # a second caller waits, then finds nothing left to write
            if self._closed or not self._behind:
                return 0
            # the connection is this thread's until the waiting list is cut: another
            # thread's statement (a recall's anchors) waits, so it never sees the turns
            # both in the graph and still waiting
            with self.graph.exclusive():
                with self._behind_lock:
                    todo = list(self._behind)
                    self._in_fold = len(todo)
                    self.graph.catch_up = None
                try:
                    self.journal.sync()  # the graph never holds a turn the journal may lose
                    uids = self._write_graph(gt.merge_graph_rows([r for _, r in todo]),
                                             seq=todo[-1][0], extract=True)
                except BaseException:
                    with self._behind_lock:
                        self._in_fold = 0
                        self.graph.catch_up = self.fold_graph
                    raise
                with self._behind_lock:
                    self._in_fold = 0
                    self._behind = self._behind[len(todo):]
                    if self._behind:   # stored while this fold wrote
                        self.graph.catch_up = self.fold_graph
            if tidy:
                self._tidy()
            return len(uids)

    @property
    def graph_behind(self) -> int:
        """How many stored turns' graph rows wait in the journal (:meth:`fold_graph`)."""
        return self._turns_of(self._behind)

    @staticmethod
    def _turns_of(records: list[tuple[int, dict[str, Any]]]) -> int:
        return sum(len(r["Turn"]["uid"]) for _, r in records)

    def waiting_messages(self) -> list[int]:
        """The mirror's rows of the messages of turns whose graph rows wait
        (:meth:`fold_graph`): the recall's anchor channel finds their aliases itself."""
        n = self.mirror.nodes
        out: list[int] = []
        for _, r in self._behind:
            for u in r["Turn"]["uid"]:
                i = n.index.get(u)
                if i is not None and n.alive[i]:
                    a = int(n.first_msg[i])
                    out.extend(range(a, a + int(n.n_msg[i])))
        return out

    def _journal_records(self) -> list[tuple[int, dict[str, Any]]]:
        """The journal's write-behind records the graph does not hold (after Meta
        ``graph_seq`` and the last checkpoint)."""
        done = int(self.graph.meta_get(GRAPH_SEQ_KEY, "0") or 0)
        since = int(self.graph.meta_get("journal_seq", "0") or 0)
        self.journal.seq = max(self.journal.seq, done)  # a seq the graph names is never reused
        return [(int(r["seq"]), r["rows"]) for r in self.journal.read()
                if r.get("kind") == GRAPH_RECORD and int(r.get("seq", 0)) > max(done, since)]

    def _fold_journal(self) -> list[dict[str, list[Any]]]:
        """At a read-write open: write the graph rows of turns a kill left in the journal
        only; their extraction waits in Meta ``extract_pending`` for the next ingest (the
        extractor is not the store's to run). Returns no waiting turns: the graph has them."""
        todo = self._journal_records()
        if todo:
            uids = self._write_graph(gt.merge_graph_rows([r for _, r in todo]), seq=todo[-1][0])
            log.warning("store %s: %d acknowledged turns were in the journal only (the last "
                        "process ended before writing them to the graph); written now",
                        self.path, len(uids))
        return []

    def _journal_only(self) -> list[dict[str, list[Any]]]:
        """At a read-only open: the Turn columns of turns in the journal only — the mirror
        (every recall) has them; the graph (anchors, sessions, the explorer) has them once
        a writer opens the store."""
        todo = self._journal_records()
        if todo:
            log.warning("store %s: %d stored turns are in the journal only (the writer ended "
                        "before writing them to the graph); recalls see them, the graph's "
                        "views do not until the store is opened for writing", self.path,
                        sum(len(r["Turn"]["uid"]) for _, r in todo))
        return [r["Turn"] for _, r in todo]

    # -- the query log ---------------------------------------------------------------------------
    def log_query(self, row: dict[str, Any], trace: RecallTrace | None = None) -> str | None:
        """Queue a query-log row (journaled; Kuzu gets it at the next checkpoint) and keep
        ``trace`` as that recall's record (:attr:`recalls`). Returns the row's uid, or
        None when the disk is full (logged: the recall itself is fine)."""
        try:
            self.mirror.log_query(self.journal, row)
        except DiskFull as e:
            log.warning("recall %r: not written to the query log: %s",
                        str(row.get("query", ""))[:60], e)
            return None
        uid = str(row["uid"])
        if trace is not None:
            try:
                self.recalls.save(uid, trace)
            except OSError as e:  # a view of the recall, not the memory: the row is kept
                log.warning("recall %r: not kept as made: %s", trace.query[:60], e)
        return uid

    def query_committed(self, log_uid: str) -> bool:
        """Whether the recall of query-log row ``log_uid`` was written back (False: not
        yet, or no such row)."""
        got = self.mirror.query_committed(log_uid)
        if got is not None:
            return got
        with self.graph.stale_ok():  # query-log rows come with checkpoints, not with turns
            return bool(logs.query_committed(self.graph, log_uid))

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

    def logged_recall(self, log_uid: str) -> RecallTrace:
        """The recall of query-log row ``log_uid`` as it was made and delivered (its
        record, :mod:`.recalled`), with ``log_uid`` set and ``written_back`` saying
        whether, to which node, by whom and when it was written back (``{"committed":
        False}`` when not). Raises :class:`NotFound` when no record is kept."""
        self.check_open()
        trace = self.recalls.load(log_uid)
        done = self.query_committed(log_uid)
        trace.written_back = ({"committed": True, **(self.recalls.written(log_uid) or {})}
                              if done else {"committed": False})
        return trace

    def query_log(self, *, limit: int | None = None) -> list[dict[str, Any]]:
        """The query log, oldest first: the rows Kuzu holds and those still waiting in the
        journal for a checkpoint, each once (every column of
        :data:`~akasha_explorer.graphdb.logs.QUERY_COLUMNS`); ``limit``: only the newest
        ``limit`` rows."""
        rows = logs.query_log(self.graph, limit=limit)
        marks = self.mirror.committed_queries   # written back since Kuzu got the row
        for r in rows:
            if r["uid"] in marks:
                r["committed"] = True
        seen = {r["uid"] for r in rows}
        rows += [dict(r) for r in self.mirror.pending_queries if r["uid"] not in seen]
        rows.sort(key=lambda r: (float(r.get("ts") or 0.0), str(r["uid"])))
        return rows if limit is None else rows[-limit:] if limit > 0 else []

    # -- the lexical index (SPEC §4 stage 1) -----------------------------------------------------
    def postings(self, settings: Settings | None = None) -> Postings:
        """The lexical index of the mirror's messages under the term rules of ``settings``
        (default: the store's own, kept up to date by every write). Other rules — a dry run
        under another profile — get an index built from the stored text on first use and
        kept until the store's messages change."""
        rules = TermRules.of(settings or self.settings)
        if rules == TermRules.of(self.settings):
            return self.mirror.postings
        n = self.mirror.nodes
        key = (rules, n.m, int(n.msg_alive.sum()))
        cached = self._other_postings.get(rules)
        if cached is None or cached[0] != key:
            by_uid = self.terms_by_uid(settings)
            p = Postings()
            for j, uid in enumerate(n.msg_uid):
                p.add(j, by_uid.get(uid, []) if n.msg_alive[j] else [])
            cached = (key, p)
            self._other_postings[rules] = cached
        return cached[1]

    def lexical(self, text: str, *, now: float, msg_mask: np.ndarray | None = None,
                settings: Settings | None = None) -> LexicalHits:
        """Query terms and BM25 hits of ``text`` as of ``now`` (SPEC §4 stage 1).

        Settings read: the term rules (``FTS_MIN_TOKEN_LEN`` …, see ``TermRules``),
        ``TIME_PRIOR`` and ``HYBRID`` (relative time words are not terms),
        ``QUERY_USER_LINES`` (a transcript is searched by the user's lines:
        :func:`~akasha_explorer.text.transcript.user_lines`; its time words are read from
        every line) and those of :meth:`lexical_terms`."""
        s = settings or self.settings
        rules = TermRules.of(s)
        relative = self.time_windows(text, now=now, settings=s, relative=True)
        said = (user_lines(text) or "") if s.QUERY_USER_LINES else ""
        text = said or text
        q = terms(text, rules=rules)
        time_terms = {t for w in relative for t in terms(w[2], rules=rules)}
        alive = self.mirror.nodes.msg_alive if msg_mask is None else msg_mask
        groups, replaced, alone = query_groups(self, text, now=now, settings=s, alive=alive,
                                               time_words=[w[2] for w in relative])
        hits = self.lexical_terms(q, now=now, msg_mask=msg_mask, settings=s,
                                  exclude=time_terms, groups=groups, replaced=replaced,
                                  mentions=alone)
        return dataclasses.replace(hits, searched=said) if said else hits

    def lexical_terms(self, query_terms: Sequence[str], *, now: float,
                      msg_mask: np.ndarray | None = None, settings: Settings | None = None,
                      exclude: Collection[str] = (), groups: Sequence[TermGroup] = (),
                      replaced: Collection[str] = (), mentions: Mapping[str, str] | None = None
                      ) -> LexicalHits:
        """:meth:`lexical` for already tokenised query terms (``exclude``: terms not to use,
        the query's relative time words; ``mentions``: the terms that are the only form of
        an anchor the query names, each with the alias as written, for the block's note).

        Settings read: ``FTS_MIN_IDF``, ``FTS_UNSEEN_IDF``, ``FTS_MAX_TOKENS``,
        ``CAUSAL_IDF``, ``FTS_SKIP_UNSEEN``, ``FTS_MIN_IDF_DOCS``, ``FTS_TOP_K``
        (``FUSION_POOL`` with ``HYBRID``), ``BM25_K1``, ``BM25_B``, ``BM25_LEN_CAP``,
        ``UNNAMED_IDENTIFIERS`` (with ``UNNAMED_FACTOR``) and the term rules' minimum
        length."""
        s = settings or self.settings
        n = self.mirror.nodes
        alive = n.msg_alive if msg_mask is None else msg_mask
        postings = self.postings(s)
        sel = select_terms(query_terms, postings, n.msg_ts, alive, now=now,
                           min_idf=s.FTS_MIN_IDF, unseen_idf=s.FTS_UNSEEN_IDF,
                           max_terms=s.FTS_MAX_TOKENS, min_len=TermRules.of(s).min_len,
                           causal=s.CAUSAL_IDF, skip_unseen=s.FTS_SKIP_UNSEEN, exclude=exclude,
                           min_docs=s.FTS_MIN_IDF_DOCS, replaced=replaced)
        top = max(s.FTS_TOP_K, s.FUSION_POOL) if s.HYBRID else s.FTS_TOP_K
        names = ([t.term for t in sel if is_identifier(t.term)]
                 if s.UNNAMED_IDENTIFIERS and s.UNNAMED_FACTOR < 1.0 else ())
        return bm25_rank(sel, postings, n.msg_ts, alive, now=now, k1=s.BM25_K1,
                         b=s.BM25_B, top_k=top, causal=s.CAUSAL_IDF, groups=groups,
                         len_cap=s.BM25_LEN_CAP, names=names, mentions=mentions)

    def filler_mask(self, query: str, settings: Settings) -> np.ndarray | None:
        """The nodes a recall of ``query`` demotes as filler (``FILLER_FACTOR``:
        :meth:`Mirror.filler_nodes <akasha_explorer.store.mirror.Mirror.filler_nodes>`), or
        None — the setting is off, or the query is itself a greeting or filler."""
        if not settings.HYBRID or settings.FILLER_FACTOR >= 1.0 or is_noise(query):
            return None
        return self.mirror.filler_nodes()

    def asking_mask(self, settings: Settings) -> np.ndarray | None:
        """The messages that ask something, whose relevance the next turn (the answer)
        takes (``ANSWER_HANDOFF``: :meth:`Mirror.asking_messages
        <akasha_explorer.store.mirror.Mirror.asking_messages>`), or None when the setting
        is off."""
        if not settings.HYBRID or settings.ANSWER_HANDOFF <= 0:
            return None
        return self.mirror.asking_messages()

    @staticmethod
    def time_windows(text: str, *, now: float, settings: Settings, relative: bool = False
                     ) -> list[tuple[float, float, str]]:
        """The time windows ``text`` names at ``now`` (``(start, end, phrase)``), when
        ``TIME_PRIOR`` is on; none otherwise (:mod:`akasha_explorer.text.timewords`).
        ``relative=True``: only those named relative to now (最近, last week)."""
        if settings.TIME_PRIOR <= 0 or not settings.HYBRID:
            return []
        return [(w.start, w.end, w.phrase)
                for w in time_windows(text, now, tz=time_zone(settings.TIME_ZONE))
                if w.relative or not relative]


class _LiveIds(Mapping[str, str]):
    """A session's nodes by turn id (:meth:`Store.session_tails`), the live ones only: a
    lookup checks its node, iterating checks them all."""

    def __init__(self, ids: dict[str, str], live: Callable[[str], bool]) -> None:
        self._ids = ids
        self._live = live

    def __getitem__(self, turn_id: str) -> str:
        node = self._ids[turn_id]
        if not self._live(node):
            raise KeyError(turn_id)
        return node

    def __iter__(self) -> Iterator[str]:
        return (k for k, node in list(self._ids.items()) if self._live(node))

    def __len__(self) -> int:
        return sum(1 for _ in self)


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
