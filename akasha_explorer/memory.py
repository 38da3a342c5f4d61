"""The :class:`Memory` facade: one memory store folder, opened for reading or writing.

Open with :func:`open`; ``with akasha_explorer.open(path) as mem: ...`` closes it
(checkpointing the journal into Kuzu) at the end.

``Memory`` holds one :class:`~akasha_explorer.store.Store` (``mem.store``: the folder's
open parts and the write path) and is otherwise thin: each method hands the store to the
area that does the work — :mod:`.ingest.pipeline`, :mod:`.extract.pipeline`,
:mod:`.curate.api` (and :mod:`.curate.review`, :mod:`.curate.forget`), :mod:`.analysis.api`,
:mod:`.export.api`, :mod:`.brief.api`, :mod:`.store.doctor`. A recall is composed here:
the store's lexical pass, the engine (or another method), the messages the trace shows
(brief), and one query-log row. ``docs/design.md`` draws the whole map.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from . import recalls
from .analysis import api as analysis
from .brief import api as brief
from .config import Settings
from .curate import api as curate
from .engine.bm25 import LexicalHits, Postings
from .engine.trace import RecallTrace
from .engine.writeback import WritebackPlan
from .errors import InvalidInput
from .ingest import importers, pipeline
from .model import (  # (at run time: the server reads these signatures' types)
    Anchor,
    AnchorDetail,
    AuditEntry,
    Episode,
    IngestReport,
    Label,
    MentionedAnchor,
    Message,
    NodeState,
    RawMessage,
    SessionInfo,
    Triple,
)
from .store.store import Store

if TYPE_CHECKING:
    import pandas as pd

    from .analysis.neighbourhood import Neighbourhood
    from .analysis.search import SearchHits
    from .analysis.views import GraphView
    from .brief.context import ContextBlock
    from .brief.expand import Expansion
    from .brief.tokens import Tokenizer
    from .curate.review import ReviewDesk
    from .doctor import DoctorReport
    from .embed import Embedder
    from .extract.base import Extractor
    from .extract.pipeline import ExtractReport
    from .graphdb import GraphDB
    from .store.journal import Journal
    from .store.manifest import Manifest
    from .store.mirror import Mirror
    from .vectors import VectorDB

__all__ = ["Memory", "open"]


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


class Memory:
    """A memory store: ingest, recall, curate, analyse, export. See :func:`open`.

    Every method delegates to :attr:`store` and the areas (see the module docstring);
    the store's parts are readable here too (:attr:`graph`, :attr:`vectors`,
    :attr:`mirror`, :attr:`journal`, :attr:`settings` …) for scripts and tests.
    """

    def __init__(self, path: str | Path, settings: Settings | None = None, *,
                 read_only: bool = False, embedder: Embedder | None = None) -> None:
        self.store = Store(path, settings, read_only=read_only, embedder=embedder)
        """The open store folder this memory works on."""

    # -- the store's parts -----------------------------------------------------------------------
    @property
    def path(self) -> Path:
        """The store folder."""
        return self.store.path

    @property
    def read_only(self) -> bool:
        """Whether the store is open read-only."""
        return self.store.read_only

    @property
    def settings(self) -> Settings:
        """The store's settings (recorded in its manifest)."""
        return self.store.settings

    @property
    def manifest(self) -> Manifest:
        """The store's manifest (:class:`~akasha_explorer.store.Manifest`)."""
        return self.store.manifest

    @property
    def dim(self) -> int:
        """The embedding dimension."""
        return self.store.dim

    @property
    def graph(self) -> GraphDB:
        """The Kuzu adapter (``mem.store.graph``)."""
        return self.store.graph

    @property
    def vectors(self) -> VectorDB:
        """The LanceDB adapter (``mem.store.vectors``)."""
        return self.store.vectors

    @property
    def journal(self) -> Journal:
        """The write-ahead journal (``mem.store.journal``)."""
        return self.store.journal

    @property
    def mirror(self) -> Mirror:
        """The in-memory mirror the engine computes on (``mem.store.mirror``)."""
        return self.store.mirror

    @property
    def extractor(self) -> Extractor | None:
        """The extractor run at ingest (None: the offline rule-based default)."""
        return self.store.extractor

    @extractor.setter
    def extractor(self, value: Extractor | None) -> None:
        self.store.extractor = value

    @property
    def embedder(self) -> Embedder:
        """The store's embedding model (loaded on first use)."""
        return self.store.embedder

    # -- lifecycle -------------------------------------------------------------------------------
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
        self.store.close()

    def announce(self, **info: object) -> None:
        """Say something about this writer in the store's lock file (``url=``: where the
        store is served, so a process refused the store can connect there instead)."""
        self.store.announce(**info)

    def checkpoint(self) -> dict[str, float]:
        """Fold the journal into Kuzu in bulk (SPEC §1 write path); returns what it did
        (edges, nodes, queries, whether the COACT table was rewritten, seconds)."""
        return self.store.checkpoint()

    def migrate(self, profile: str, **changes: Any) -> dict[str, tuple[Any, Any]]:
        """Switch the store to settings ``profile`` (``"v1"``, ``"v2"``), keeping what the
        store set apart from its own profile (model, index options…) and ``changes`` on top.
        The lexical terms are rebuilt if their rules changed; edges, node state and raw
        messages stay as they are. Returns ``{setting: (old, new)}`` for what changed.

        A store keeps the settings it was built with (SPEC: it replays the same); this is
        the one deliberate way to change them. A value outside its range (``akasha
        settings``) raises :class:`InvalidSettings` and nothing is written; values an older
        version stored outside their ranges are replaced (``changes`` or the profile's).
        """
        return self.store.migrate(profile, **changes)

    def terms_by_uid(self, settings: Settings | None = None) -> dict[str, list[str]]:
        """Lexical terms of every stored message under the term rules of ``settings`` (default:
        the store's) — computed from the stored text, nothing is written."""
        return self.store.terms_by_uid(settings)

    def embed_query(self, text: str) -> np.ndarray:
        """L2-normalised query vector."""
        return self.store.embed_query(text)

    # -- ingest ----------------------------------------------------------------------------------
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
        self.store.check_write()
        imp = importers.as_imported(source, format=format, session=session)
        return pipeline.ingest(self.store, imp, replay=replay, progress=progress,
                               allow_forgotten=allow_forgotten)

    def extract(self, node_uids: Sequence[str]) -> ExtractReport:
        """Run extraction for stored nodes (done at ingest when ``Settings.EXTRACT``)."""
        from .extract.pipeline import extract_nodes
        self.store.check_write()
        return extract_nodes(self.store, node_uids, self.store.extractor)

    # -- reading ---------------------------------------------------------------------------------
    def node(self, uid: str) -> NodeState:
        """Dynamic state of one node (mirror values, i.e. including uncheckpointed commits)."""
        return self.store.node_state(uid)

    def has_node(self, uid: str) -> bool:
        """Whether ``uid`` is a live node of the store."""
        return self.store.has_node(uid)

    def node_of_message(self, msg_uid: str) -> str | None:
        """The node a message belongs to (None: no such message)."""
        return self.store.node_of_message(msg_uid)

    def messages(self, node: str, *, verify: bool = True) -> list[Message]:
        """The verbatim messages of a node, in order; raises :class:`IntegrityError` when a
        message's bytes no longer match its sha256 and ``verify`` is on."""
        return self.store.messages(node, verify=verify)

    def sessions(self) -> list[SessionInfo]:
        """Sessions with their time range and node count, oldest first."""
        return self.store.sessions()

    def last_ts(self) -> float:
        """Time of the newest message (0.0 for an empty store)."""
        return self.store.last_ts()

    def stats(self) -> dict[str, Any]:
        """Counts and facts about the store (what ``akasha stats`` prints)."""
        return self.store.stats()

    def query_log(self, *, limit: int | None = None) -> list[dict[str, Any]]:
        """The query log, oldest first — checkpointed rows and those still in the journal,
        each once; ``limit``: only the newest ``limit`` rows."""
        return self.store.query_log(limit=limit)

    def neighbourhood(self, *, now: float | None = None,
                      communities: dict[str, int] | None = None) -> Neighbourhood:
        """Turns and their co-activation neighbourhood at ``now`` (default: the newest
        message's time) as plain values — what the notebook panels draw
        (:class:`~akasha_explorer.analysis.neighbourhood.Neighbourhood`)."""
        from .analysis.neighbourhood import Neighbourhood
        return Neighbourhood(self.store, now=now, communities=communities)

    # -- lexical ---------------------------------------------------------------------------------
    def lexical(self, text: str, *, now: float, msg_mask: np.ndarray | None = None,
                settings: Settings | None = None) -> LexicalHits:
        """Query terms and BM25 hits of ``text`` as of ``now`` (SPEC §4 stage 1)."""
        return self.store.lexical(text, now=now, msg_mask=msg_mask, settings=settings)

    def lexical_terms(self, query_terms: Sequence[str], *, now: float,
                      msg_mask: np.ndarray | None = None, settings: Settings | None = None,
                      exclude: Collection[str] = ()) -> LexicalHits:
        """:meth:`lexical` for already tokenised query terms (``exclude``: terms not to use,
        the query's relative time words)."""
        return self.store.lexical_terms(query_terms, now=now, msg_mask=msg_mask,
                                        settings=settings, exclude=exclude)

    @staticmethod
    def time_windows(text: str, *, now: float, settings: Settings, relative: bool = False
                     ) -> list[tuple[float, float, str]]:
        """The time windows ``text`` names at ``now`` (``(start, end, phrase)``), when
        ``TIME_PRIOR`` is on; none otherwise (:mod:`akasha_explorer.text.timewords`).
        ``relative=True``: only those named relative to now (最近, last week)."""
        return Store.time_windows(text, now=now, settings=settings, relative=relative)

    def postings(self, settings: Settings | None = None) -> Postings:
        """The lexical index of the mirror's messages under the term rules of ``settings``
        (default: the store's own); see :meth:`Store.postings
        <akasha_explorer.store.Store.postings>`."""
        return self.store.postings(settings)

    def search(self, text: str, *, now: float | None = None) -> SearchHits:
        """Search by meaning and by words at ``now`` (default: the newest message's time):
        the dense items of a dry-run recall and the BM25 hits of the same lexical pass,
        fused by reciprocal rank (:func:`~akasha_explorer.analysis.search.search`).
        Nothing is written."""
        from .analysis.search import search
        return search(self.store, text, now=self.last_ts() if now is None else float(now))

    # -- recall (SPEC §4) ------------------------------------------------------------------------
    def recall(self, query: str, *, now: float | None = None, session: str | None = None,
               settings: Settings | None = None, method: str = "akasha",
               log: bool = True) -> RecallTrace:
        """Recall for ``query`` at ``now`` (default: the wall clock) — a dry run.

        Reads only, plus one query-log entry (skipped on a read-only store or with
        ``log=False``). ``settings`` runs the recall with other constants (an experiment;
        the store keeps its own). ``method="akasha"`` is the engine of SPEC §4; other
        methods (e.g. ``"ppr"``) are in :data:`akasha_explorer.recalls.RECALL_METHODS`.
        Pass the trace to :meth:`commit` to write it back.
        """
        return recalls.recall(self.store, query, now=now, session=session, settings=settings,
                              method=method, log=log)

    def plan_writeback(self, trace: RecallTrace, current_node: str, *,
                       reinforce: bool = False) -> WritebackPlan:
        """The write-back :meth:`commit` would apply (SPEC §4 stage 5), as a dry run: the
        plan for ``current_node`` at ``trace.now``, set on ``trace.writeback`` and returned;
        nothing is written."""
        return self.store.plan_writeback(trace, current_node, reinforce=reinforce)

    def commit(self, trace: RecallTrace, current_node: str, *,
               reinforce: bool = False) -> WritebackPlan:
        """Write a recall back (SPEC §4 stage 5) with ``current_node`` as the turn it served.

        The plan is computed at ``trace.now`` from the current state, applied to the mirror
        and appended to the journal in one record (all or nothing); Kuzu gets it at the next
        checkpoint. A trace can be committed once.
        """
        return self.store.commit(trace, current_node, reinforce=reinforce)

    def add_turn(self, user: str | None, assistant: str | None, *, session: str,
                 ts: float | None = None, recall: RecallTrace | None = None,
                 reinforce: bool = False, turn_id: str | None = None
                 ) -> tuple[str, RecallTrace | None]:
        """The live agent loop: recall on the user text (unless given), store the turn
        verbatim as a new node, then write the recall back with that node as current.

        Everything is checked before anything is written (the texts, the session, the
        time, and that ``recall`` can still be committed). ``turn_id`` (the caller's own id
        for this turn, kept as the first message's source id) makes a retry safe: when the
        session already holds a turn with that id, nothing is written and its node is
        returned, with no trace. Returns the new node's uid and the trace (None for an
        assistant-only turn).
        """
        from .ingest.validate import check_session, check_text, check_ts
        self.store.check_write()
        if user is None and assistant is None:
            raise InvalidInput("add_turn needs a user or an assistant text")
        check_session(session, "add_turn")
        when = check_ts(_wall() if ts is None else ts, "add_turn ts")
        texts = [(role, text) for role, text in (("user", user), ("assistant", assistant))
                 if text is not None]
        for k, (_role, text) in enumerate(texts):
            check_text(text, f"add_turn message {k}")
        if turn_id is not None:
            check_text(turn_id, "add_turn", field="turn_id")
            done = self.store.turn_with_id(session, turn_id)
            if done is not None:
                return done, None
        if recall is not None:
            self.store.check_commit(recall)
        if recall is None and user is not None:
            recall = self.recall(user, now=when, session=session)
        seq = self.store.next_seq(session)
        raws = [RawMessage(session, seq + k, when, role, text, source="add_turn",
                           ext_id=None if turn_id is None else
                           (turn_id if k == 0 else f"{turn_id}/{role}"))
                for k, (role, text) in enumerate(texts)]
        self.ingest(raws, progress=False, allow_forgotten=True)  # new words, not a re-import
        uid = raws[0].uid
        if recall is not None:
            self.commit(recall, uid, reinforce=reinforce)
        return uid, recall

    def replay_trace(self, trace: RecallTrace) -> RecallTrace:
        """Recompute ``trace`` from the stored state at ``trace.now`` with the settings it
        recorded, by the method that made it (Akasha's engine, or e.g. ``"ppr"``); raises
        :class:`TraceMismatch` naming the first difference."""
        return recalls.replay(self.store, trace)

    # -- agent-facing output (brief) -------------------------------------------------------------
    def context(self, query: str, *, budget_tokens: int | None = None,
                style: str = "brief", now: float | None = None, session: str | None = None,
                tokenizer: Tokenizer | None = None, tz: str | dt.tzinfo | None = None,
                log: bool = True) -> ContextBlock:
        """Recall ``query`` (a dry run, see :meth:`recall`) and build its context block
        (:func:`~akasha_explorer.brief.context.build_context`). The budget defaults to the
        store's ``CONTEXT_BUDGET``. On a writable store the block's handle map is saved, so
        ``expand("[n]")`` resolves in a later process too."""
        from .brief.context import build_context
        trace = self.recall(query, now=now, session=session, log=log)
        block = build_context(trace, budget_tokens or self.settings.CONTEXT_BUDGET, style,
                              tokenizer=tokenizer, floor_items=self.settings.CONTEXT_FLOOR_ITEMS,
                              tz=tz)
        brief.save_handles(self.store, block)
        return block

    def expand(self, handle_or_node_id: str | int, around: int | None = None, *,
               trace: RecallTrace | ContextBlock | None = None) -> Expansion:
        """The verbatim messages of a node and up to ``around`` neighbouring turns each side
        of it in its session (default ``EXPAND_AROUND``), sha256-checked: ``verified`` is
        True only if every message matches. ``handle_or_node_id`` is a node uid or a handle
        like ``"[3]"``, resolved against ``trace``, else the last recall of this memory,
        else the last saved context block (:mod:`akasha_explorer.brief.api`)."""
        return brief.expand(self.store, handle_or_node_id, around, trace=trace)

    def health(self, *, window: float | None = None, windows: int = 14,
               top_hubs: int = 10) -> dict[str, Any]:
        """Recall health from the query log (see :mod:`akasha_explorer.brief.health`):
        empty-activation rate, score trends per window, source mix, latency percentiles,
        edge growth, top hubs by fan. ``window`` defaults to ``HEALTH_WINDOW`` seconds."""
        return brief.health(self.store, window=window, windows=windows, top_hubs=top_hubs)

    # -- anchors, triples, episodes, curation (SPEC §6) ------------------------------------------
    def anchors(self, search: str | None = None, *, kind: str | None = None,
                status: str | None = "active") -> list[Anchor]:
        """Anchors (default: active ones) with aliases and mention counts, most mentioned
        first; ``search`` matches names and aliases after normalisation."""
        return curate.anchors(self.store, search, kind=kind, status=status)

    def anchor(self, uid: str) -> AnchorDetail:
        """One anchor with its aliases, mentions (node, message, span, surface) and triples."""
        return curate.anchor(self.store, uid)

    def anchors_of(self, node: str) -> list[MentionedAnchor]:
        """The anchors node ``node`` mentions, one row per mention, in text order."""
        return curate.anchors_of(self.store, node)

    def triples(self, *, anchor: str | None = None, status: str | None = None
                ) -> list[Triple]:
        """Triples (optionally of one anchor as subject or object, or with one status),
        oldest first, with subject / object names and provenance."""
        return curate.triples(self.store, anchor=anchor, status=status)

    def episodes(self, *, kind: str | None = None, session: str | None = None
                 ) -> list[Episode]:
        """Episodes with their node uids, in time order."""
        return curate.episodes(self.store, kind=kind, session=session)

    def set_episodes(self, kind: str, groups: Sequence[Sequence[str]],
                     labels: Sequence[str] | None = None) -> int:
        """Replace every episode of ``kind`` with ``groups`` of node uids (the hook that
        turns co-activation communities into episodes, SPEC §6/§7). Returns the count."""
        return curate.set_episodes(self.store, kind, groups, labels)

    @property
    def review(self) -> ReviewDesk:
        """The review queue: ``mem.review()`` lists pending items;
        ``mem.review.approve(uid, why=...)`` / ``.reject`` / ``.edit`` decide
        (:class:`~akasha_explorer.curate.review.ReviewDesk`)."""
        from .curate.review import ReviewDesk
        return ReviewDesk(self.store)

    def rename_anchor(self, uid: str, name: str, *, why: str | None = None,
                      by: str = "user") -> str:
        """Rename an anchor (the new name also becomes an alias); returns the audit uid."""
        return curate.rename_anchor(self.store, uid, name, why=why, by=by)

    def merge_anchors(self, keep: str, absorb: str, *, why: str | None = None,
                      by: str = "user") -> str:
        """Move every alias, mention and fact of ``absorb`` onto ``keep``."""
        return curate.merge_anchors(self.store, keep, absorb, why=why, by=by)

    def split_anchor(self, uid: str, aliases: Sequence[str], *, name: str | None = None,
                     why: str | None = None, by: str = "user") -> tuple[str, str]:
        """Move ``aliases`` (with their mentions and facts) to a new anchor; returns
        ``(new anchor uid, audit uid)``."""
        return curate.split_anchor(self.store, uid, aliases, name=name, why=why, by=by)

    def add_alias(self, uid: str, surface: str, *, why: str | None = None,
                  by: str = "user") -> str:
        """Add an alias (stored verbatim; matched after normalisation)."""
        return curate.add_alias(self.store, uid, surface, why=why, by=by)

    def remove_alias(self, uid: str, surface: str, *, why: str | None = None,
                     by: str = "user") -> str:
        """Remove an alias (its mentions stay)."""
        return curate.remove_alias(self.store, uid, surface, why=why, by=by)

    def attach_mention(self, uid: str, msg: str, start: int, end: int, *,
                       why: str | None = None, by: str = "user") -> str:
        """Say that ``text[start:end]`` of message ``msg`` names anchor ``uid``."""
        return curate.attach_mention(self.store, uid, msg, start, end, why=why, by=by)

    def detach_mention(self, uid: str, msg: str, start: int, *, why: str | None = None,
                       by: str = "user") -> str:
        """Remove the mention of anchor ``uid`` at ``start`` in message ``msg``."""
        return curate.detach_mention(self.store, uid, msg, start, why=why, by=by)

    def audit(self, *, target: str | None = None, limit: int | None = None
              ) -> list[AuditEntry]:
        """The audit log, newest first: who did what, when and why (with the ops)."""
        return curate.audit(self.store, target=target, limit=limit)

    def undo(self, audit_uid: str, *, why: str | None = None, by: str = "user") -> str:
        """Reverse one audit entry (itself recorded, so an undo can be undone).

        Undoing an approved suggested link removes the two edges it made (or puts back the
        weights they had) only while no recall has written to them since; after that the
        link is the memory's own and the undo is refused."""
        return curate.undo(self.store, audit_uid, why=why, by=by)

    def forget(self, *, node: str | None = None, session: str | None = None,
               anchor: str | None = None, why: str | None = None,
               by: str = "user") -> dict[str, Any]:
        """Remove a node, a session or an anchor with everything it owns, including
        LanceDB's older versions and Kuzu's free pages; records that it happened (ids and
        counts, not the text). See :mod:`akasha_explorer.curate.forget`."""
        from .curate.forget import forget
        return forget(self.store, node=node, session=session, anchor=anchor, by=by, why=why)

    # -- labelled queries: the memory's own test set ---------------------------------------------
    def label(self, query: str, node_id: str, relevant: bool = True, *,
              by: str = "user") -> str:
        """Say that node ``node_id`` should come up for ``query`` (``relevant=False``: that
        it should not). Stored in the store (exported, imported and forgotten with it); one
        label per pair, so labelling again replaces the verdict. Returns the label's uid
        (:mod:`akasha_explorer.curate.labels`)."""
        from .curate.labels import label
        return label(self.store, query, node_id, relevant, by=by)

    def unlabel(self, query: str, node_id: str) -> bool:
        """Remove the label of ``node_id`` for ``query``; False when there was none."""
        from .curate.labels import unlabel
        return unlabel(self.store, query, node_id)

    def labels(self, query: str | None = None) -> list[Label]:
        """Every label, oldest first; ``query``: only that query's."""
        from .curate.labels import labels
        return labels(self.store, query)

    def load_labels(self, source: str | Path | Sequence[dict[str, Any]], *,
                    by: str = "import") -> int:
        """Add labels from a JSON Lines file or a list of ``{"query", "node", "relevant"}``
        dicts, all or none; returns how many."""
        from .curate.labels import load_labels
        return load_labels(self.store, source, by=by)

    def evaluate(self, *, methods: Sequence[str] | None = None, k: int = 10,
                 now: float | None = None, settings: Settings | None = None) -> dict[str, Any]:
        """Score the recall methods on the store's labelled queries (:meth:`labels`): per
        method ``recall@k``, ``hit@k``, ``mrr`` and ``false@k`` (queries with a node labelled
        not relevant in the top k), and each query's ranks. ``now`` defaults to the newest
        message's time; ``settings`` scores other constants (a what-if). A dry run: nothing
        is logged or written (:func:`akasha_explorer.analysis.methods.evaluate`)."""
        from .analysis.methods import evaluate
        from .curate.labels import labelled_set
        labelled = labelled_set(self.labels())
        if not labelled:
            raise InvalidInput(f"{self.path} has no labelled queries; add some with "
                               "mem.label(query, node_id) or mem.load_labels(file)")
        return evaluate(self.store, labelled, now=self.last_ts() if now is None else float(now),
                        settings=settings or self.settings, methods=methods, k=k)

    def compare_methods(self, query: str, *, now: float | None = None,
                        methods: Sequence[str] | None = None, k: int = 10,
                        settings: Settings | None = None,
                        include: Sequence[str] = ()) -> pd.DataFrame:
        """One query through context / akasha / dense / bm25 / rrf / ppr side by side: one
        row per node in some method's top ``k`` (and per node of ``include``, wherever it
        ranks) with its rank in each, and the terms that
        explain a disagreement (source, graph path, matched words, cos_msg). A dry run
        (:func:`akasha_explorer.analysis.methods.compare_methods`)."""
        from .analysis.methods import compare_methods
        return compare_methods(self.store, query,
                               now=self.last_ts() if now is None else float(now),
                               settings=settings or self.settings, methods=methods, k=k,
                               include=include)

    # -- analysis and export (SPEC §7, §9) -------------------------------------------------------
    def graph_view(self, view: str = "nodes", *, now: float | None = None,
                   resolution: float | None = None, seed: int | None = None) -> GraphView:
        """A projection of the store (SPEC §7): ``"nodes"`` (turns + co-activation edges
        at ``now``), ``"anchors"`` or ``"bipartite"``, with Leiden communities filled.
        ``.nodes`` / ``.edges`` are pandas frames; ``.to_igraph()`` / ``.to_networkx()``
        give the graph objects."""
        return analysis.graph_view(self.store, view, now=now, resolution=resolution, seed=seed)

    def ppr(self, seeds: str | list[str], *, view: str = "nodes", now: float | None = None,
            damping: float | None = None, top: int = 20) -> pd.DataFrame:
        """What do these seeds reach? Personalized PageRank (SPEC §7) from node uids —
        or anchors (uid, name or alias: their mentioning turns in the nodes view) — over
        a view at ``now``; the ``top`` nodes, best first, with ``ppr``, ``rank``, whether
        each is a seed, and its label, text, session, time and community."""
        return analysis.ppr(self.store, seeds, view=view, now=now, damping=damping, top=top)

    def communities(self, view: str = "nodes", *, now: float | None = None,
                    resolution: float | None = None, seed: int | None = None,
                    save: bool = False) -> pd.DataFrame:
        """Leiden communities of a view (SPEC §7), one row per community, largest first
        (labelled by distinctive terms for turns). ``save=True`` (nodes view, writable
        store) keeps them as episodes of kind ``community`` (replacing the previous ones)."""
        return analysis.communities(self.store, view, now=now, resolution=resolution,
                                    seed=seed, save=save)

    def surprises(self, *, now: float | None = None, resolution: float | None = None,
                  seed: int | None = None, top: int = 10, queue: bool = True) -> pd.DataFrame:
        """Surprise discovery (SPEC §7): cross-community bridges, indirect-strong pairs,
        knowledge gaps and lived-vs-semantic mismatches, each with the numbers behind it.
        With ``queue`` (and a writable store) the best ``SUGGEST_MAX`` indirect pairs go
        on the review queue as ``suggested_link`` items (once per pair); column
        ``review_uid`` names them (:func:`akasha_explorer.analysis.api.surprises`)."""
        return analysis.surprises(self.store, now=now, resolution=resolution, seed=seed,
                                  top=top, queue=queue)

    def export(self, path: str | Path, *, format: str, view: str = "nodes",
               now: float | None = None, resolution: float | None = None,
               seed: int | None = None) -> Path:
        """Export a view (graphml, gexf, json, parquet, csv, html) or the whole store
        (``format="store"``: raw messages + graph state, see
        :mod:`akasha_explorer.export.store`; :func:`~akasha_explorer.export.store.import_store`
        reads it back). Returns the file or folder written."""
        from .export.api import export
        return export(self.store, path, format=format, view=view, now=now,
                      resolution=resolution, seed=seed)

    # -- store health ----------------------------------------------------------------------------
    def doctor(self, repair: bool = False) -> DoctorReport:
        """Check that the stores agree (see :mod:`akasha_explorer.store.doctor` for every
        check) and return a :class:`~akasha_explorer.store.doctor.DoctorReport`.

        With ``repair=True`` (writable stores only) fix what a crash can leave — messages of
        an interrupted ingest, a torn or already-folded journal, stale temporary files,
        nodes whose data LanceDB lost, an interrupted extraction — then check again:
        ``report.repairs`` says what was done, ``report.remaining`` what is left.
        A writable store is checkpointed first.
        """
        from . import doctor
        return doctor.run(self.store, fix=repair)


def _wall() -> float:
    return dt.datetime.now(dt.UTC).timestamp()
