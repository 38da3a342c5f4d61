"""The :class:`Memory` facade: one memory store folder, opened for reading or writing.

A store folder holds::

    akasha.json      manifest: settings, embedding model + dimension, tokenizer, format
    graph.kuzu       Kuzu: turns (pointers + dynamic state), sessions, anchors, edges, logs
    vectors/         LanceDB: the raw messages verbatim (+ sha256) and node vectors
    journal.jsonl    write-ahead journal of committed state changes (SPEC §1 write path)
    writer.lock      the one-writer lock

Open with :func:`open`; ``with akasha_explorer.open(path) as mem: ...`` closes it
(checkpointing the journal into Kuzu) at the end.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import logging
import sys
import time
import uuid
from collections.abc import Collection, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .analysis.api import AnalysisMixin
from .brief.api import BriefMixin
from .config import Settings
from .curate.api import CurateMixin
from .embed import Embedder, make_embedder
from .engine.bm25 import LexicalHits, Postings, bm25_rank, select_terms
from .engine.recall import plan_writeback
from .engine.recall import recall as engine_recall
from .engine.trace import RecallTrace
from .engine.writeback import WritebackPlan, apply_plan
from .errors import (
    DiskFull,
    InvalidInput,
    InvalidSettings,
    ModelMismatch,
    NotFound,
    ReadOnlyStore,
    StoreError,
    StoreLocked,
    TraceMismatch,
)
from .graphdb import SCHEMA_VERSION, GraphDB, chains
from .graphdb.kuzu_db import graph_lock
from .ingest import importers, pipeline
from .model import IngestReport, Message, NodeState, RawMessage
from .store import Journal, Manifest, WriterLock, folder
from .store.api import StoreMixin
from .store.manifest import tokenizer_id
from .store.mirror import Mirror
from .text.timewords import time_windows
from .text.tokenize import TermRules, terms
from .vectors import VectorDB, sql_str

__all__ = ["Memory", "open"]

log = logging.getLogger(__name__)
log_ = log  # (recall() has a parameter named log)


def open(path: str | Path, settings: Settings | None = None, *, read_only: bool = False,
         embedder: Embedder | None = None) -> Memory:
    """Open the memory store at ``path``, creating it on first use.

    ``settings`` apply when the store is created; an existing store keeps the settings it
    was built with, and passing different ones raises :class:`InvalidSettings` (use
    ``recall(..., settings=...)`` for a dry-run experiment). ``embedder`` replaces the
    sentence-transformers model (it must match the store's model name and dimension).

    One process at a time may open a store for writing: another one gets
    :class:`~akasha_explorer.errors.StoreLocked` at once, naming the holder (pid, host,
    since). Read-only opens from other processes are refused the same way while a writer
    holds the store — Kuzu 0.11 lets many processes read a database or one write it, never
    both (LanceDB alone would allow it) — and work as soon as the writer closes; any
    number of read-only opens may run together.
    """
    return Memory(Path(path), settings, read_only=read_only, embedder=embedder)


class Memory(CurateMixin, AnalysisMixin, BriefMixin, StoreMixin):
    """A memory store: ingest, recall, curate, analyse, export. See :func:`open`.

    The facade is split by area: this module holds opening, ingest, reading and recall;
    :class:`~akasha_explorer.curate.api.CurateMixin` anchors, review and forget;
    :class:`~akasha_explorer.analysis.api.AnalysisMixin` views, communities and export;
    :class:`~akasha_explorer.brief.api.BriefMixin` context, expand and health;
    :class:`~akasha_explorer.store.api.StoreMixin` doctor and repair.
    """

    def __init__(self, path: Path, settings: Settings | None = None, *,
                 read_only: bool = False, embedder: Embedder | None = None) -> None:
        self.path = folder.store_path(path)
        self.read_only = read_only
        self._embedder = embedder
        self._lock: WriterLock | None = None
        self._closed = False
        exists = Manifest.path(self.path).is_file()
        if read_only and not exists:
            raise StoreError(folder.describe(self.path))
        made = not self.path.exists()
        if not read_only:
            if exists:
                self._lock = WriterLock(self.path)
                self._lock.acquire()
            else:  # a new store, or a half-made one an interrupted creation left
                self._lock, exists = folder.claim(self.path)
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
            if not exists and self._lock is not None \
                    and not Manifest.path(self.path).is_file():  # no half-made store left
                folder.abandon(self.path, self._lock, made=made)
                self._lock = None
            self._release()
            raise

    def _open(self, settings: Settings | None, exists: bool) -> None:
        if exists:
            self.manifest = Manifest.read(self.path)
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
            emb = self._embedder or make_embedder(settings.EMBED_MODEL, settings.EMBED_CJK_DIMS)
            self._embedder = emb
            self.manifest = Manifest(settings=settings, model=emb.name, dim=emb.dim,
                                     tokenizer=tokenizer_id(settings))
        self.settings: Settings = self.manifest.settings
        self.dim = self.manifest.dim
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
            self._reindex()
            stale_terms = False
        self.mirror = Mirror(self.dim)
        self.mirror.load(self.graph, self.vectors, self.journal)
        if stale_terms:  # read-only: index the terms in memory, leave the files alone
            log.warning("store %s was indexed with other term rules (%s); using terms rebuilt "
                        "in memory — open it once for writing to migrate it", self.path,
                        self.manifest.tokenizer)
            self.mirror.set_terms(self.terms_by_uid(self.settings))
        if self.mirror.orphan_messages:
            log.warning("store %s: %d messages without a node (an interrupted ingest); "
                        "re-run that ingest or `akasha doctor --repair`", self.path,
                        len(self.mirror.orphan_messages))
        self._hashes: dict[str, str] | None = None
        self._texts: dict[str, str] | None = None
        self._other_postings: dict[TermRules, tuple[Any, Postings]] = {}

    # -- term rules and profiles ----------------------------------------------------------------
    def terms_by_uid(self, settings: Settings | None = None) -> dict[str, list[str]]:
        """Lexical terms of every stored message under the term rules of ``settings`` (default:
        the store's) — computed from the stored text, nothing is written."""
        settings = settings or self.settings
        rows = self.vectors.read("messages", columns=pipeline.TERM_SOURCE_COLUMNS).to_pydict()
        return dict(zip(rows["uid"], pipeline.stored_terms(rows, settings), strict=True))

    def _reindex(self) -> None:
        """Migration: rebuild the stored lexical terms under the store's rules, then record
        them in the manifest (a crash in between re-runs it on the next open)."""
        t0 = time.perf_counter()
        n = pipeline.reindex_terms(self.vectors, self.settings)
        old = self.manifest.tokenizer
        self.manifest.tokenizer = tokenizer_id(self.settings)
        self.manifest.write(self.path)
        log.warning("store %s: lexical terms of %d messages rebuilt for the term rules %s "
                    "(were %s) in %.1fs", self.path, n, self.manifest.tokenizer, old or "?",
                    time.perf_counter() - t0)

    def migrate(self, profile: str, **changes: Any) -> dict[str, tuple[Any, Any]]:
        """Switch the store to settings ``profile`` (``"v1"``, ``"v2"``), keeping what the
        store set apart from its own profile (model, index options…) and ``changes`` on top.
        The lexical terms are rebuilt if their rules changed; edges, node state and raw
        messages stay as they are. Returns ``{setting: (old, new)}`` for what changed.

        A store keeps the settings it was built with (SPEC: it replays the same); this is
        the one deliberate way to change them.
        """
        self._check_write()
        base, own = self.settings.profile_name()
        new = Settings.profile(profile, **{**own, **changes})
        if new.EMBED_MODEL != self.settings.EMBED_MODEL or (
                new.EMBED_CJK_DIMS != self.settings.EMBED_CJK_DIMS):
            raise ModelMismatch("migrate cannot change the embedding model (every vector would "
                                "have to be recomputed); build a new store for another model")
        diff = self.settings.diff(new)
        if not diff:
            return {}
        self.checkpoint()
        self.manifest.settings = new
        self.settings = new
        self.manifest.write(self.path)
        if self.manifest.tokenizer != tokenizer_id(new):
            self._reindex()
            self.mirror.set_terms(self.terms_by_uid(new))
        self.journal.fsync = new.JOURNAL_FSYNC
        log.info("store %s migrated from profile %s to %s", self.path, base, profile)
        return diff

    # -- lifecycle -----------------------------------------------------------------------------
    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        mode = "read-only" if self.read_only else "read-write"
        return (f"<Memory {self.path} ({mode}): {self.mirror.nodes.n} nodes, "
                f"{self.mirror.edges.count} edges>")

    def close(self) -> None:
        """Checkpoint the journal into Kuzu (writers) and release every file and lock."""
        if self._closed:
            return
        try:
            if not self.read_only and hasattr(self, "mirror"):
                self._checkpoint_or_defer()
        finally:
            self._closed = True
            for part in ("journal", "graph", "vectors"):
                obj = getattr(self, part, None)
                if obj is not None:
                    obj.close()
            self._release()

    def announce(self, **info: object) -> None:
        """Say something about this writer in the store's lock file (``url=``: where the
        store is served, so a process refused the store can connect there instead)."""
        self._check_write()
        assert self._lock is not None
        self._lock.annotate(**info)

    def _release(self) -> None:
        if self._lock is not None:
            self._lock.release()
            self._lock = None

    def _check_open(self) -> None:
        if self._closed:
            raise StoreError(f"store {self.path} is closed")

    def _check_write(self) -> None:
        self._check_open()
        if self.read_only:
            raise ReadOnlyStore(f"store {self.path} is open read-only; open it without "
                                "read_only=True to change it")

    def checkpoint(self) -> dict[str, float]:
        """Fold the journal into Kuzu in bulk and compact LanceDB (SPEC §1)."""
        self._check_write()
        if not (self.mirror.dirty_edges or self.mirror.dirty_nodes
                or self.mirror.pending_queries or self.journal.pending):
            return {"edges": 0.0, "nodes": 0.0, "queries": 0.0, "rewrite": 0.0, "seconds": 0.0}
        return self.mirror.checkpoint(self.graph, self.journal)

    # -- embedder ------------------------------------------------------------------------------
    @property
    def embedder(self) -> Embedder:
        """The store's embedding model (loaded on first use)."""
        if self._embedder is None:
            s = self.settings
            emb = make_embedder(s.EMBED_MODEL, s.EMBED_CJK_DIMS)
            self.manifest.check_model(emb.name, emb.dim, self.path)
            self._embedder = emb
        return self._embedder

    def embed_query(self, text: str) -> np.ndarray:
        """L2-normalised query vector."""
        return self.embedder.encode([text])[0]

    @staticmethod
    def _progress(progress: bool | None) -> bool:
        return sys.stderr.isatty() if progress is None else progress

    # -- ingest --------------------------------------------------------------------------------
    def ingest(self, source: str | Path | Sequence[Any] | importers.Imported, *,
               format: str = "auto", replay: bool = False, session: str | None = None,
               progress: bool | None = None, allow_forgotten: bool = False) -> IngestReport:
        """Ingest a file (any supported format), an :class:`Imported`, a list of
        :class:`RawMessage`, or a plain ``[{"role", "content"}]`` list (needs ``session``).

        Re-ingesting the same input is a no-op; a refused batch leaves the store unchanged.
        With ``replay=True`` the graph grows the way a live agent grows it (SPEC §2).
        Messages forgotten earlier (:meth:`forget` keeps their ids, never their text) are
        skipped and reported, so re-importing a cumulative export does not bring them back;
        ``allow_forgotten=True`` stores them again.
        """
        self._check_write()
        if isinstance(source, importers.Imported):
            imp = source
        elif isinstance(source, str | Path):
            imp = importers.load(source, format=format, session=session)
        elif source and all(isinstance(m, RawMessage) for m in source):
            imp = importers.Imported("messages", "raw", list(source))
        else:
            if session is None:
                raise InvalidInput("a plain message list needs session=...")
            imp = importers.read_messages(source, session=session)
        return pipeline.ingest(self, imp, replay=replay, progress=progress,
                               allow_forgotten=allow_forgotten)

    def _stored_hashes(self) -> dict[str, str]:
        if self._hashes is None:
            t = self.vectors.read("messages", columns=["uid", "sha256"]).to_pydict()
            self._hashes = dict(zip(t["uid"], t["sha256"], strict=True))
            for u in self.mirror.orphan_messages:  # a torn ingest: rows to be replaced
                self._hashes.pop(u, None)
        return self._hashes

    def _text_hashes(self) -> dict[str, str]:
        """Normalised text -> first message uid (near-duplicate links)."""
        from .text.tokenize import normalize
        out: dict[str, str] = {}
        for uid, text in self._all_texts().items():
            out.setdefault(normalize(" ".join(text.split())), uid)
        return out

    def _all_texts(self) -> dict[str, str]:
        if self._texts is None:
            t = self.vectors.read("messages", columns=["uid", "text"]).to_pydict()
            orphans = set(self.mirror.orphan_messages)
            self._texts = {u: x for u, x in zip(t["uid"], t["text"], strict=True)
                           if u not in orphans}
        return self._texts

    def _node_of_message(self, msg_uid: str) -> str | None:
        j = self.mirror.nodes.msg_index.get(msg_uid)
        return None if j is None else self.mirror.nodes.uid[int(self.mirror.nodes.msg_node[j])]

    def _write_stores(self, messages: Any, turns: Any, graph_batch: dict[str, Any]) -> None:
        """LanceDB first, then one Kuzu transaction (see ingest.pipeline). The free space
        the whole batch needs is checked first: a batch the disk cannot hold is refused
        before anything is written (:mod:`.store.space`)."""
        from .store.space import GRAPH_RESERVE, WRITE_FACTOR, ensure_free
        ensure_free(self.path, GRAPH_RESERVE + WRITE_FACTOR * (messages.nbytes + turns.nbytes),
                    f"storing {messages.num_rows} messages")
        orphans = self.mirror.orphan_messages
        if orphans:  # a torn ingest's rows, of this input or another (node vectors too)
            torn = self.vectors.read("messages", columns=["node"],
                                     where=pipeline.orphan_filter(orphans)).column("node")
            self.vectors.delete("messages", pipeline.orphan_filter(orphans))
            self.vectors.delete("turns", pipeline.orphan_filter(
                sorted(set(torn.to_pylist()) | set(messages.column("node").to_pylist()))))
            self.mirror.orphan_messages = []
        self.vectors.add("messages", messages)
        self.vectors.add("turns", turns)
        with self.graph.transaction():
            if graph_batch["Session"] is not None:
                self.graph.copy("Session", graph_batch["Session"])
            if graph_batch["session_updates"]:
                self.graph.unwind("MATCH (s:Session {uid: r.s}) SET s.last_ts = "
                                  "CASE WHEN r.t > s.last_ts THEN r.t ELSE s.last_ts END, "
                                  "s.first_ts = CASE WHEN r.f < s.first_ts THEN r.f "
                                  "ELSE s.first_ts END", graph_batch["session_updates"])
            self.graph.copy("Turn", graph_batch["Turn"])
            chains.relink(self.graph, graph_batch["next_drop"], graph_batch["next_add"])
            self.graph.copy("IN_SESSION", graph_batch["IN_SESSION"])
            if graph_batch["ReviewItem"] is not None:
                self.graph.copy("ReviewItem", graph_batch["ReviewItem"])
            if graph_batch.get("unforget"):  # stored again on purpose: lift the tombstones
                self.graph.execute("MATCH (f:Forgotten) WHERE f.uid IN $u DELETE f",
                                   {"u": graph_batch["unforget"]})
            if self.settings.EXTRACT:  # cleared with the extraction's own commit
                self.graph.meta_set("extract_pending", pipeline.json_list(
                    graph_batch["Turn"].column("uid").to_pylist()))
        if self._hashes is not None:
            self._hashes.update(zip(messages.column("uid").to_pylist(),
                                    messages.column("sha256").to_pylist(), strict=True))
        if self._texts is not None:
            self._texts.update(zip(messages.column("uid").to_pylist(),
                                   messages.column("text").to_pylist(), strict=True))

    # -- reading -------------------------------------------------------------------------------
    def node(self, uid: str) -> NodeState:
        """Dynamic state of one node (mirror values, i.e. including uncheckpointed commits)."""
        i = self._row(uid)
        n = self.mirror.nodes
        return NodeState(uid=uid, session=n.sessions[int(n.session[i])], ts=float(n.ts[i]),
                         sigma=float(n.sigma[i]), strength=float(n.strength[i]),
                         strength_ts=float(n.strength_ts[i]), resource=float(n.resource[i]),
                         resource_ts=float(n.resource_ts[i]),
                         recall_count=int(n.recall_count[i]),
                         assistant_only=bool(n.assistant_only[i]))

    def _row(self, uid: str) -> int:
        i = self.mirror.nodes.index.get(uid)
        if i is None or not self.mirror.nodes.alive[i]:
            raise NotFound(f"no node {uid!r} in {self.path}; `akasha stats` lists what is there")
        return i

    def messages(self, node: str, *, verify: bool = True) -> list[Message]:
        """The verbatim messages of a node, in order; raises :class:`IntegrityError` when a
        message's bytes no longer match its sha256 and ``verify`` is on."""
        from .errors import IntegrityError
        i = self._row(node)
        n = self.mirror.nodes
        a, k = int(n.first_msg[i]), int(n.n_msg[i])
        uids = n.msg_uid[a:a + k]
        rows = self.vectors.read("messages", where="node = " + sql_str(node)).to_pylist()
        by_uid = {r["uid"]: r for r in rows}
        out = [_message(by_uid[u]) for u in uids if u in by_uid]
        if verify:
            bad = [m.uid for m in out if not m.verified]
            if bad:
                raise IntegrityError(f"message(s) {', '.join(bad)} no longer match their sha256; "
                                     "run `akasha doctor` on the store")
        return out

    def sessions(self) -> list[dict[str, Any]]:
        """Sessions with their time range and node count, oldest first."""
        return self.graph.rows(
            "MATCH (s:Session) OPTIONAL MATCH (t:Turn)-[:IN_SESSION]->(s) RETURN s.uid AS session, "
            "s.source AS source, s.first_ts AS first_ts, s.last_ts AS last_ts, count(t) AS nodes "
            "ORDER BY first_ts, session")

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
            "review_pending": int(self.graph.rows(
                "MATCH (r:ReviewItem) WHERE r.status = 'pending' RETURN count(r) AS c")[0]["c"]),
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

    # -- lexical -------------------------------------------------------------------------------
    def lexical(self, text: str, *, now: float, msg_mask: np.ndarray | None = None,
                settings: Settings | None = None) -> LexicalHits:
        """Query terms and BM25 hits of ``text`` as of ``now`` (SPEC §4 stage 1)."""
        s = settings or self.settings
        rules = TermRules.of(s)
        q = terms(text, rules=rules)
        time_terms = {t for w in self.time_windows(text, now=now, settings=s, relative=True)
                      for t in terms(w[2], rules=rules)}
        return self.lexical_terms(q, now=now, msg_mask=msg_mask, settings=s,
                                  exclude=time_terms)

    def lexical_terms(self, query_terms: Sequence[str], *, now: float,
                      msg_mask: np.ndarray | None = None, settings: Settings | None = None,
                      exclude: Collection[str] = ()) -> LexicalHits:
        """:meth:`lexical` for already tokenised query terms (``exclude``: terms not to use,
        the query's relative time words)."""
        s = settings or self.settings
        n = self.mirror.nodes
        alive = n.msg_alive if msg_mask is None else msg_mask
        postings = self.postings(s)
        sel = select_terms(query_terms, postings, n.msg_ts, alive, now=now,
                           min_idf=s.FTS_MIN_IDF, unseen_idf=s.FTS_UNSEEN_IDF,
                           max_terms=s.FTS_MAX_TOKENS, min_len=TermRules.of(s).min_len,
                           causal=s.CAUSAL_IDF, skip_unseen=s.FTS_SKIP_UNSEEN, exclude=exclude,
                           min_docs=s.FTS_MIN_IDF_DOCS)
        top = max(s.FTS_TOP_K, s.FUSION_POOL) if s.HYBRID else s.FTS_TOP_K
        return bm25_rank(sel, postings, n.msg_ts, alive, now=now, k1=s.BM25_K1,
                         b=s.BM25_B, top_k=top, causal=s.CAUSAL_IDF)

    @staticmethod
    def time_windows(text: str, *, now: float, settings: Settings, relative: bool = False
                     ) -> list[tuple[float, float, str]]:
        """The time windows ``text`` names at ``now`` (``(start, end, phrase)``), when
        ``TIME_PRIOR`` is on; none otherwise (:mod:`akasha_explorer.text.timewords`).
        ``relative=True``: only those named relative to now (最近, last week)."""
        if settings.TIME_PRIOR <= 0 or not settings.HYBRID:
            return []
        return [(w.start, w.end, w.phrase) for w in time_windows(text, now)
                if w.relative or not relative]

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

    # -- recall (SPEC §4) ----------------------------------------------------------------------
    def recall(self, query: str, *, now: float | None = None, session: str | None = None,
               settings: Settings | None = None, method: str = "akasha",
               log: bool = True) -> RecallTrace:
        """Recall for ``query`` at ``now`` (default: the wall clock) — a dry run.

        Reads only, plus one query-log entry (skipped on a read-only store or with
        ``log=False``). ``settings`` runs the recall with other constants (an experiment;
        the store keeps its own). ``method="akasha"`` is the engine of SPEC §4; other
        methods (e.g. ``"ppr"``) come from the analysis mixin. Pass the trace to
        :meth:`commit` to write it back.
        """
        self._check_open()
        s = settings or self.settings
        when = _wall() if now is None else float(now)
        if not 0.0 <= when < 253_402_300_800.0:  # NaN, ±inf, negative, past year 9999
            raise InvalidInput(f"now={now!r} is not a time; give epoch seconds or use "
                               "mem.last_ts()")
        q = self.embed_query(query)
        t0 = time.perf_counter()
        lex = self.lexical(query, now=when, settings=s)
        if method == "akasha":
            trace = engine_recall(self.mirror.nodes, self.mirror.edges, q, lex, now=when,
                                  settings=s, query=query, session=session,
                                  windows=self.time_windows(query, now=when, settings=s))
        else:
            trace = self._recall_method(method, q, lex, now=when, settings=s, query=query,
                                        session=session)
        latency = (time.perf_counter() - t0) * 1000.0
        self._after_recall(trace)
        if log and not self.read_only:
            row = _query_row(trace, latency, method)
            try:
                self.mirror.log_query(self.journal, row)
            except DiskFull as e:  # the recall itself is fine: say so, do not fail it
                log_.warning("recall %r: not written to the query log: %s", query[:60], e)
            else:
                trace._log_uid = row["uid"]  # type: ignore[attr-defined]  # not serialised
        return trace

    def commit(self, trace: RecallTrace, current_node: str, *,
               reinforce: bool = False) -> WritebackPlan:
        """Write a recall back (SPEC §4 stage 5) with ``current_node`` as the turn it served.

        The plan is computed at ``trace.now`` from the current state, applied to the mirror
        and appended to the journal in one record (all or nothing); Kuzu gets it at the next
        checkpoint. A trace can be committed once.
        """
        self._check_write()
        if trace.writeback is not None and trace.writeback.applied:
            raise InvalidInput("this trace was already committed; recall again to write again")
        row = self._row(current_node)
        m = self.mirror
        plan = plan_writeback(trace, m.nodes, m.edges, row, now=trace.now,
                              settings=self.settings, reinforce=reinforce)
        try:
            with self._journaled():
                apply_plan(plan, m.nodes, m.edges)
                m.journal_plan(self.journal, plan)
        except BaseException:
            trace.writeback = None  # not committed: it can be committed again
            raise
        try:
            self._mark_committed(getattr(trace, "_log_uid", None))
        except DiskFull as e:  # the commit is durable; only the log's flag waits
            log_.warning("commit: the query log row was not marked committed: %s", e)
        if self.journal.pending >= self.settings.CHECKPOINT_EVERY:
            self._checkpoint_or_defer()
        return plan

    @contextlib.contextmanager
    def _journaled(self) -> Iterator[None]:
        """A change applied to the mirror and appended to the journal, all or nothing:
        when the append fails (a full disk), the mirror is loaded again from what is
        durable — the stores and the journal — so the failed change is nowhere, and the
        error says so. A trace whose commit failed can be committed again."""
        try:
            yield
        except BaseException:
            self._reload_mirror()
            raise

    def _reload_mirror(self) -> None:
        """Rebuild the mirror from the stores and the journal (see :meth:`_journaled`)."""
        self.journal.close()
        fresh = Mirror(self.dim)
        fresh.load(self.graph, self.vectors, self.journal)
        self.mirror = fresh

    def _checkpoint_or_defer(self) -> None:
        """A checkpoint that may wait: the journal holds every acknowledged change, so a
        disk too full for Kuzu defers it (logged) instead of failing the call."""
        try:
            self.checkpoint()
        except DiskFull as e:
            log_.warning("store %s: checkpoint deferred (the journal keeps every change): %s",
                         self.path, e)

    def _mark_committed(self, log_uid: str | None) -> None:
        if log_uid is None:
            return
        for row in self.mirror.pending_queries:
            if row["uid"] == log_uid:
                row["committed"] = True
                return
        self.graph.execute("MATCH (q:QueryLog {uid: $u}) SET q.committed = true", {"u": log_uid})

    def add_turn(self, user: str | None, assistant: str | None, *, session: str,
                 ts: float | None = None, recall: RecallTrace | None = None,
                 reinforce: bool = False) -> tuple[str, RecallTrace | None]:
        """The live agent loop: recall on the user text (unless given), store the turn
        verbatim as a new node, then write the recall back with that node as current.

        Returns the new node's uid and the trace (None for an assistant-only turn).
        """
        self._check_write()
        from .ingest.validate import check_ts
        when = check_ts(_wall() if ts is None else ts, "add_turn ts")
        if recall is None and user is not None:
            recall = self.recall(user, now=when, session=session)
        seq = self._next_seq(session)
        raws = []
        if user is not None:
            raws.append(RawMessage(session, seq, when, "user", user, source="add_turn"))
        if assistant is not None:
            raws.append(RawMessage(session, seq + len(raws), when, "assistant", assistant,
                                   source="add_turn"))
        if not raws:
            raise InvalidInput("add_turn needs a user or an assistant text")
        for k, r in enumerate(raws):
            from .ingest.validate import check_text
            check_text(r.text, f"add_turn message {k}")
        self.ingest(raws, progress=False, allow_forgotten=True)  # new words, not a re-import
        uid = raws[0].uid
        if recall is not None:
            self.commit(recall, uid, reinforce=reinforce)
        return uid, recall

    def _next_seq(self, session: str) -> int:
        rows = self.vectors.read("messages", columns=["seq"],
                                 where="session = " + sql_str(session)).column("seq").to_pylist()
        return (max(rows) + 1) if rows else 0

    def replay_trace(self, trace: RecallTrace) -> RecallTrace:
        """Recompute ``trace`` from the stored state at ``trace.now`` with the settings it
        recorded, by the method that made it (Akasha's engine, or e.g. ``"ppr"``); raises
        :class:`TraceMismatch` naming the first difference."""
        self._check_open()
        # a trace recorded before profiles existed lacks their settings: it was a v1 recall
        s = Settings.from_dict(trace.settings, profile="v2" if "HYBRID" in trace.settings
                               else "v1")
        lex = self.lexical(trace.query, now=trace.now, settings=s)
        q = np.asarray(trace.q, np.float32)
        method = getattr(trace, "method", "akasha")
        if method == "akasha":
            r = trace.relevance
            windows = [(a, b, p) for (a, b), p in zip(r.windows, r.window_phrases, strict=True)]
            again = engine_recall(self.mirror.nodes, self.mirror.edges, q, lex, now=trace.now,
                                  settings=s, query=trace.query, session=trace.session,
                                  windows=windows)
        else:
            again = self._recall_method(method, q, lex, now=trace.now, settings=s,
                                        query=trace.query, session=trace.session)
        a, b = trace.to_dict(), again.to_dict()
        for part in ("writeback", "messages"):  # messages: text attached by recall, not computed
            a.pop(part, None)
            b.pop(part, None)
        if a != b:
            where = _first_difference(a, b)
            raise TraceMismatch(f"replaying the trace of {trace.query!r} differs at {where}; the "
                                "store changed since it was recorded (commits, ingest, forget)")
        return again

    def _replay_rows(self, rows: Iterable[int], *, progress: bool | None = None) -> int:
        """Replay recall + write-back for node rows (see :mod:`akasha_explorer.replay`)."""
        from .replay import replay_rows
        with self._journaled():  # a replay step whose journal record failed is undone
            return replay_rows(self, list(rows), progress=self._progress(progress))


def _message(r: dict[str, Any]) -> Message:
    import json
    return Message(uid=r["uid"], node=r["node"], session=r["session"], seq=int(r["seq"]),
                   ts=float(r["ts"]), role=r["role"], speaker=r["speaker"], text=r["text"],
                   sha256=r["sha256"], flags=tuple(r["flags"] or ()), source=r["source"] or "",
                   ext_id=r["ext_id"], meta=json.loads(r["meta"]) if r["meta"] else {})


def _wall() -> float:
    return dt.datetime.now(dt.UTC).timestamp()


def _query_row(trace: RecallTrace, latency_ms: float, method: str) -> dict[str, Any]:
    """A QueryLog row: V1 inspector counts plus the activated items."""
    from .store.mirror import dumps
    a = trace.activation
    c = trace.counts
    return {"uid": f"q-{uuid.uuid4().hex[:16]}", "ts": trace.now, "query": trace.query,
            "session": trace.session, "method": method, "n_seeds": c["seeds"],
            "n_pool": c["pool"], "n_activated": c["activated"], "n_dense": c["dense"],
            "n_ripple": c["ripple"], "empty": c["activated"] == 0, "committed": False,
            "latency_ms": latency_ms,
            "seeds": dumps([[u, s] for u, s in zip(trace.seeds.uids, trace.seeds.source,
                                                   strict=True)]),
            "items": dumps([[u, sc, so] for u, sc, so in zip(a.uids, a.scores, a.sources,
                                                             strict=True)])}


def _first_difference(a: Any, b: Any, path: str = "trace") -> str:
    if type(a) is not type(b):
        return path
    if isinstance(a, dict):
        for k in sorted(set(a) | set(b)):
            if a.get(k) != b.get(k):
                return _first_difference(a.get(k), b.get(k), f"{path}.{k}")
    elif isinstance(a, list):
        if len(a) != len(b):
            return f"{path} (length {len(a)} vs {len(b)})"
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            if x != y:
                return _first_difference(x, y, f"{path}[{i}]")
    return f"{path} ({a!r} vs {b!r})"


def _iso(ts: float) -> str:
    return dt.datetime.fromtimestamp(ts, dt.UTC).isoformat(timespec="seconds")


def _du(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())

