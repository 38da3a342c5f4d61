"""The :class:`Memory` facade: one memory store folder, opened for reading or writing.

Open with :func:`open`; ``with akasha_explorer.open(path) as mem: ...`` closes it
(checkpointing the journal into Kuzu) at the end.

``Memory`` holds one :class:`~akasha_explorer.store.Store` (``mem.store``: the folder's
open parts — ``graph``, ``vectors``, ``mirror``, ``journal``, ``manifest``, the embedder,
the lexical index — and the write path) and is otherwise thin: each method hands the store
to the area that does the work — :mod:`.recalls` (a recall's composition),
:mod:`.ingest.pipeline`, :mod:`.extract.pipeline`, :mod:`.curate` (its desks
``mem.anchors``, ``mem.review``, ``mem.labels``, and :mod:`.curate.forget`),
:mod:`.analysis.api`, :mod:`.export.api`, :mod:`.brief.api`, :mod:`.doctor`.

The methods a served store answers too are marked ``@reads`` / ``@writes``
(:mod:`.served`); together they are :class:`~akasha_explorer.protocol.MemoryAPI`, which
:class:`~akasha_explorer.server.client.RemoteMemory` satisfies as well. ``docs/design.md``
draws the whole map.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import recalls
from .analysis import api as analysis
from .brief import api as brief
from .config import Settings
from .curate import api as curate
from .curate.desks import AnchorDesk, LabelDesk
from .curate.review import ReviewDesk
from .engine.trace import RecallTrace
from .engine.writeback import WritebackPlan
from .errors import InvalidInput
from .ingest import importers, pipeline
from .model import (  # (at run time: the server reads these signatures' types)
    AuditEntry,
    Episode,
    IngestReport,
    Message,
    NodeState,
    RawMessage,
    SessionInfo,
    Triple,
)
from .protocol import MemoryAPI
from .served import namespace, reads, writes
from .store.store import Store

if TYPE_CHECKING:
    import pandas as pd

    from .analysis.neighbourhood import Neighbourhood
    from .analysis.search import SearchHits
    from .analysis.views import GraphView
    from .brief.context import ContextBlock
    from .brief.expand import Expansion
    from .brief.tokens import Tokenizer
    from .doctor import DoctorReport
    from .embed import Embedder
    from .extract.pipeline import ExtractReport

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
    the store's parts are reached through it (``mem.store.mirror``,
    ``mem.store.graph`` …) by scripts and tests that need them.
    """

    def __init__(self, path: str | Path, settings: Settings | None = None, *,
                 read_only: bool = False, embedder: Embedder | None = None) -> None:
        self.store = Store(path, settings, read_only=read_only, embedder=embedder)
        """The open store folder this memory works on."""

    # -- the store -------------------------------------------------------------------------------
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

    # -- lifecycle -------------------------------------------------------------------------------
    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        mode = "read-only" if self.read_only else "read-write"
        m = self.store.mirror   # live ones: a forgotten node or a pruned edge keeps its slot
        return (f"<Memory {self.path} ({mode}): {int(m.nodes.alive.sum())} nodes, "
                f"{m.edges.n_alive()} edges>")

    def close(self) -> None:
        """Checkpoint the journal into Kuzu (writers) and release every file and lock."""
        self.store.close()

    @writes
    def checkpoint(self) -> dict[str, float]:
        """Fold the journal into Kuzu in bulk (SPEC §1 write path); returns what it did
        (edges, nodes, queries, whether the COACT table was rewritten, seconds)."""
        return self.store.checkpoint()

    @writes
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
    @reads
    def node(self, uid: str) -> NodeState:
        """Dynamic state of one node (mirror values, i.e. including uncheckpointed commits)."""
        return self.store.node_state(uid)

    @reads
    def has_node(self, uid: str) -> bool:
        """Whether ``uid`` is a live node of the store."""
        return self.store.has_node(uid)

    @reads
    def node_of_message(self, msg_uid: str) -> str | None:
        """The node a message belongs to (None: no such message)."""
        return self.store.node_of_message(msg_uid)

    @reads
    def messages(self, node: str, *, verify: bool = True) -> list[Message]:
        """The verbatim messages of a node, in order; raises :class:`IntegrityError` when a
        message's bytes no longer match its sha256 and ``verify`` is on."""
        return self.store.messages(node, verify=verify)

    @reads
    def sessions(self) -> list[SessionInfo]:
        """Sessions with their time range and node count, oldest first."""
        return self.store.sessions()

    @reads
    def last_ts(self) -> float:
        """Time of the newest message (0.0 for an empty store)."""
        return self.store.last_ts()

    @reads
    def stats(self) -> dict[str, Any]:
        """Counts and facts about the store (what ``akasha stats`` prints)."""
        return self.store.stats()

    @reads
    def query_log(self, *, limit: int | None = None) -> list[dict[str, Any]]:
        """The query log, oldest first — checkpointed rows and those still in the journal,
        each once; ``limit``: only the newest ``limit`` rows."""
        return self.store.queries.rows(limit=limit)

    def neighbourhood(self, *, now: float | None = None,
                      communities: dict[str, int] | None = None) -> Neighbourhood:
        """Turns and their co-activation neighbourhood at ``now`` (default: the newest
        message's time) as plain values — what the notebook panels draw
        (:class:`~akasha_explorer.analysis.neighbourhood.Neighbourhood`)."""
        from .analysis.neighbourhood import Neighbourhood
        return Neighbourhood(self.store, now=now, communities=communities)

    @reads
    def search(self, text: str, *, now: float | None = None) -> SearchHits:
        """Search by meaning and by words at ``now`` (default: the newest message's time):
        the dense items of a dry-run recall and the BM25 hits of the same lexical pass,
        fused by reciprocal rank (:func:`~akasha_explorer.analysis.search.search`).
        Nothing is written."""
        from .analysis.search import search
        return search(self.store, text, now=self.last_ts() if now is None else float(now))

    # -- recall (SPEC §4) ------------------------------------------------------------------------
    @reads
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

    @reads
    def plan_writeback(self, trace: RecallTrace, current_node: str, *,
                       reinforce: bool = False) -> WritebackPlan:
        """The write-back :meth:`commit` would apply (SPEC §4 stage 5), as a dry run: the
        plan for ``current_node`` at ``trace.now``, set on ``trace.writeback`` and returned;
        nothing is written."""
        return self.store.plan_writeback(trace, current_node, reinforce=reinforce)

    @writes
    def commit(self, trace: RecallTrace, current_node: str, *,
               reinforce: bool = False, by: str = "user") -> WritebackPlan:
        """Write a recall back (SPEC §4 stage 5) with ``current_node`` as the turn it served.

        The plan is computed at ``trace.now`` from the current state, applied to the mirror
        and appended to the journal in one record (all or nothing); Kuzu gets it at the next
        checkpoint. A recall is written back once: committing the same trace again, or any
        trace of the same logged recall (e.g. one :meth:`logged_recall` returned), is
        refused. ``by`` is kept with the recall's record.
        """
        return self.store.commit(trace, current_node, reinforce=reinforce, by=by)

    @reads
    def why_not(self, trace: RecallTrace, node: str) -> dict[str, Any]:
        """Why turn ``node`` is not (or is) in what ``trace`` delivered: the last stage it
        reached (``delivered``, ``activated``, ``groups``, ``settlement``,
        ``micrograph``, ``graph_expand``, ``seeds``, ``not_reached``, ``invisible``), a
        one-sentence ``reason`` and the ``numbers`` behind it — its scores against the
        threshold or the last item taken, its cosines against the dense pool, the query
        words it lacks (:meth:`RecallTrace.why_not
        <akasha_explorer.engine.trace.RecallTrace.why_not>`). A dry run."""
        return self.store.why_not(trace, node)

    @reads
    def logged_recall(self, log_uid: str) -> RecallTrace:
        """A logged recall (a row of :meth:`query_log`) as it was made and delivered — not
        recalled again: the trace the agent received, with ``log_uid`` and
        ``written_back`` (``{"committed": False}``, or ``True`` with the ``node`` it was
        written to, ``by`` whom and ``at`` what time). Kept for the newest recalls of a
        writable store, and dropped by a forget (:mod:`akasha_explorer.store.recalled`);
        raises :class:`~akasha_explorer.errors.NotFound` otherwise."""
        return self.store.queries.recall(log_uid)

    @writes
    def add_turn(self, user: str | None, assistant: str | None, *, session: str,
                 ts: float | None = None, recall: RecallTrace | None = None,
                 reinforce: bool = False, turn_id: str | None = None, by: str = "user",
                 user_speaker: str | None = None, assistant_speaker: str | None = None
                 ) -> tuple[str, RecallTrace | None]:
        """The live agent loop: recall on the user text (unless given), store the turn
        verbatim as a new node, then write the recall back with that node as current.

        Everything is checked before anything is written (the texts, the session, the
        time, and that ``recall`` can still be committed). ``turn_id`` (the caller's own id
        for this turn, kept as the first message's source id) makes a retry safe: when the
        session already holds a turn with that id, nothing is written and its node is
        returned, with no trace. ``user_speaker`` and ``assistant_speaker`` are the names
        the messages are stored under (who said them; the panels show them, the role when
        there is none). Returns the new node's uid and the trace (None for an
        assistant-only turn).

        The turn is durable when this returns (the journal is fsync'ed) and every recall
        sees it; its graph rows and extraction reach Kuzu with other turns' in one
        transaction before anything else reads the graph (:meth:`Store.fold_graph
        <akasha_explorer.store.Store.fold_graph>`).
        """
        from .ingest.validate import check_session, check_text, check_ts
        self.store.check_write()
        if user is None and assistant is None:
            raise InvalidInput("add_turn needs a user or an assistant text")
        check_session(session, "add_turn")
        when = check_ts(_wall() if ts is None else ts, "add_turn ts")
        texts = [(role, text, who) for role, text, who in
                 (("user", user, user_speaker), ("assistant", assistant, assistant_speaker))
                 if text is not None]
        for k, (_role, text, who) in enumerate(texts):
            check_text(text, f"add_turn message {k}")
            if who is not None:
                check_text(who, f"add_turn message {k}", field="speaker")
        if turn_id is not None:
            check_text(turn_id, "add_turn", field="turn_id")
            done = self.store.stored.turn_with_id(session, turn_id)
            if done is not None:
                return done, None
        if recall is not None:
            self.store.check_commit(recall)
        if recall is None and user is not None:
            recall = self.recall(user, now=when, session=session)
        seq = self.store.stored.next_seq(session)
        raws = [RawMessage(session, seq + k, when, role, text, speaker=who, source="add_turn",
                           ext_id=None if turn_id is None else
                           (turn_id if k == 0 else f"{turn_id}/{role}"))
                for k, (role, text, who) in enumerate(texts)]
        # new words, not a re-import; the graph's rows wait in the journal (Store.fold_graph)
        pipeline.ingest(self.store, importers.as_imported(raws), progress=False,
                        allow_forgotten=True, behind=True)
        uid = raws[0].uid
        if recall is not None:
            self.commit(recall, uid, reinforce=reinforce, by=by)
        return uid, recall

    @reads
    def replay_trace(self, trace: RecallTrace) -> RecallTrace:
        """Recompute ``trace`` from the stored state at ``trace.now`` with the settings it
        recorded, by the method that made it (Akasha's engine, or e.g. ``"ppr"``); raises
        :class:`TraceMismatch` naming the first difference."""
        return recalls.replay(self.store, trace)

    # -- agent-facing output (brief) -------------------------------------------------------------
    @reads
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

    @reads
    def expand(self, handle_or_node_id: str | int, around: int | None = None, *,
               trace: RecallTrace | ContextBlock | None = None) -> Expansion:
        """The verbatim messages of a node and up to ``around`` neighbouring turns each side
        of it in its session (default ``EXPAND_AROUND``), sha256-checked: ``verified`` is
        True only if every message matches. ``handle_or_node_id`` is a node uid or a handle
        like ``"[3]"``, resolved against ``trace``, else the last recall of this memory,
        else the last saved context block (:mod:`akasha_explorer.brief.api`)."""
        return brief.expand(self.store, handle_or_node_id, around, trace=trace)

    @reads
    def health(self, *, window: float | None = None, windows: int = 14,
               top_hubs: int = 10) -> dict[str, Any]:
        """Recall health from the query log (see :mod:`akasha_explorer.brief.health`):
        empty-activation rate, score trends per window, source mix, latency percentiles,
        edge growth, top hubs by fan. ``window`` defaults to ``HEALTH_WINDOW`` seconds."""
        return brief.health(self.store, window=window, windows=windows, top_hubs=top_hubs)

    # -- curation desks (SPEC §6) ----------------------------------------------------------------
    @property
    @namespace(AnchorDesk)
    def anchors(self) -> AnchorDesk:
        """The entity anchors: ``mem.anchors()`` lists them (``mem.anchors("lan")``
        searches names and aliases); ``.get(uid)``, ``.of(node)``, and the edits
        ``.rename``, ``.merge``, ``.split``, ``.add_alias``, ``.remove_alias``, ``.attach``,
        ``.detach`` (:class:`~akasha_explorer.curate.desks.AnchorDesk`)."""
        return AnchorDesk(self.store)

    @property
    @namespace(ReviewDesk)
    def review(self) -> ReviewDesk:
        """The review queue: ``mem.review()`` lists pending items;
        ``mem.review.approve(uid, why=...)`` / ``.reject`` / ``.edit`` decide
        (:class:`~akasha_explorer.curate.review.ReviewDesk`)."""
        return ReviewDesk(self.store)

    @property
    @namespace(LabelDesk)
    def labels(self) -> LabelDesk:
        """The labelled queries, the memory's own test set: ``mem.labels()`` lists them;
        ``mem.labels.add(query, node_id)`` (``relevant=False``: should not come up),
        ``.remove``, ``.load(file)`` (:class:`~akasha_explorer.curate.desks.LabelDesk`);
        :meth:`evaluate` scores recall on them."""
        return LabelDesk(self.store)

    @reads
    def triples(self, *, anchor: str | None = None, status: str | None = None
                ) -> list[Triple]:
        """Triples (optionally of one anchor as subject or object, or with one status),
        oldest first, with subject / object names and provenance."""
        return curate.triples(self.store, anchor=anchor, status=status)

    @reads
    def episodes(self, *, kind: str | None = None, session: str | None = None
                 ) -> list[Episode]:
        """Episodes with their node uids, in time order."""
        return curate.episodes(self.store, kind=kind, session=session)

    @writes
    def set_episodes(self, kind: str, groups: Sequence[Sequence[str]],
                     labels: Sequence[str] | None = None) -> int:
        """Replace every episode of ``kind`` with ``groups`` of node uids (the hook that
        turns co-activation communities into episodes, SPEC §6/§7). Returns the count."""
        return curate.set_episodes(self.store, kind, groups, labels)

    @reads
    def audit(self, *, target: str | None = None, limit: int | None = None
              ) -> list[AuditEntry]:
        """The audit log, newest first: who did what, when and why (with the ops)."""
        return curate.audit(self.store, target=target, limit=limit)

    @writes
    def undo(self, audit_uid: str, *, why: str | None = None, by: str = "user") -> str:
        """Reverse one audit entry (itself recorded, so an undo can be undone).

        Undoing an approved suggested link removes the two edges it made (or puts back the
        weights they had) only while no recall has written to them since; after that the
        link is the memory's own and the undo is refused."""
        return curate.undo(self.store, audit_uid, why=why, by=by)

    @writes
    def forget(self, *, node: str | None = None, session: str | None = None,
               anchor: str | None = None, why: str | None = None,
               by: str = "user") -> dict[str, Any]:
        """Remove a node, a session or an anchor with everything it owns, including
        LanceDB's older versions and Kuzu's free pages; records that it happened (ids and
        counts, not the text). See :mod:`akasha_explorer.curate.forget`."""
        from .curate.forget import forget
        return forget(self.store, node=node, session=session, anchor=anchor, by=by, why=why)

    # -- evaluation ------------------------------------------------------------------------------
    @reads
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
                               "mem.labels.add(query, node_id) or mem.labels.load(file)")
        return evaluate(self.store, labelled, now=self.last_ts() if now is None else float(now),
                        settings=settings or self.settings, methods=methods, k=k)

    @reads
    def compare_methods(self, query: str, *, now: float | None = None,
                        methods: Sequence[str] | None = None, k: int = 10,
                        settings: Settings | None = None,
                        include: Sequence[str] = ()) -> pd.DataFrame:
        """One query through context / akasha / dense / bm25 / rrf / ppr side by side: one
        row per node in some method's top ``k`` (and per node of ``include``, wherever it
        ranks) with its text as the agent's context shows it (withheld messages as their
        marker), its rank in each method that ranked it (None: BM25 did not score it, the
        agent is not sent it, …; ``context`` is what the agent receives) and each method's
        evidence (source, graph path, matched words, cos_msg, where it fell out). A dry run
        (:func:`akasha_explorer.analysis.methods.compare_methods`)."""
        from .analysis.methods import compare_methods
        return compare_methods(self.store, query,
                               now=self.last_ts() if now is None else float(now),
                               settings=settings or self.settings, methods=methods, k=k,
                               include=include)

    # -- analysis and export (SPEC §7, §9) -------------------------------------------------------
    @reads
    def graph_view(self, view: str = "nodes", *, now: float | None = None,
                   resolution: float | None = None, seed: int | None = None) -> GraphView:
        """A projection of the store (SPEC §7): ``"nodes"`` (turns + co-activation edges
        at ``now``), ``"anchors"`` or ``"bipartite"``, with Leiden communities filled.
        ``.nodes`` / ``.edges`` are pandas frames; ``.to_igraph()`` / ``.to_networkx()``
        give the graph objects."""
        return analysis.graph_view(self.store, view, now=now, resolution=resolution, seed=seed)

    @reads
    def ppr(self, seeds: str | list[str], *, view: str = "nodes", now: float | None = None,
            damping: float | None = None, top: int = 20) -> pd.DataFrame:
        """What do these seeds reach? Personalized PageRank (SPEC §7) from node uids —
        or anchors (uid, name or alias: their mentioning turns in the nodes view) — over
        a view at ``now``; the ``top`` nodes, best first, with ``ppr``, ``rank``, whether
        each is a seed, and its label, text, session, time and community."""
        return analysis.ppr(self.store, seeds, view=view, now=now, damping=damping, top=top)

    @reads
    def communities(self, view: str = "nodes", *, now: float | None = None,
                    resolution: float | None = None, seed: int | None = None,
                    save: bool = False) -> pd.DataFrame:
        """Leiden communities of a view (SPEC §7), one row per community, largest first
        (labelled by distinctive terms for turns). ``save=True`` (nodes view, writable
        store) keeps them as episodes of kind ``community`` (replacing the previous ones)."""
        return analysis.communities(self.store, view, now=now, resolution=resolution,
                                    seed=seed, save=save)

    @reads
    def surprises(self, *, now: float | None = None, resolution: float | None = None,
                  seed: int | None = None, top: int = 10, queue: bool = True) -> pd.DataFrame:
        """Surprise discovery (SPEC §7): cross-community bridges, indirect-strong pairs,
        knowledge gaps and lived-vs-semantic mismatches, each with the numbers behind it.
        With ``queue`` (and a writable store) the best ``SUGGEST_MAX`` indirect pairs go
        on the review queue as ``suggested_link`` items (once per pair); column
        ``review_uid`` names them (:func:`akasha_explorer.analysis.api.surprises`)."""
        return analysis.surprises(self.store, now=now, resolution=resolution, seed=seed,
                                  top=top, queue=queue)

    @reads
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
        """Check that the stores agree (see :mod:`akasha_explorer.doctor` for every
        check) and return a :class:`~akasha_explorer.doctor.DoctorReport`.

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


def _conforms(mem: Memory) -> MemoryAPI:
    """mypy holds ``Memory`` to :class:`~akasha_explorer.protocol.MemoryAPI` here."""
    return mem
