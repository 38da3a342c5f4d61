"""``MemoryAPI``: what a memory answers, local or served.

:class:`~akasha_explorer.memory.Memory` (a store folder opened in this process) and
:class:`~akasha_explorer.server.client.RemoteMemory` (a store served by ``akasha serve``,
``akasha_explorer.connect(url)``) both satisfy :class:`MemoryAPI`, and mypy holds them to
it (each module ends with a check that it conforms). Code that should work with either —
the notebook panels, an agent framework's adapter — types its memory as ``MemoryAPI``.

The protocol is the served surface (every method marked ``@reads`` / ``@writes``, see
:mod:`akasha_explorer.served`; ``tests/test_protocol.py`` holds the two lists equal) plus
``path``, ``read_only``, ``settings``, ``neighbourhood()`` and ``close()``. What only a
local store can do stays on ``Memory`` alone: ``ingest``, ``extract``, ``doctor``,
``mem.store`` (the store's parts). Curation methods of a local memory also take
``by=`` (the audit actor); a served memory records the caller's token name instead, so
``by`` is not part of the protocol.
"""

from __future__ import annotations

import builtins
import datetime as dt
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, Self

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

    from .analysis.atlas import Atlas
    from .analysis.search import SearchHits
    from .analysis.views import GraphView
    from .brief.context import ContextBlock
    from .brief.expand import Expansion
    from .config import Settings
    from .curate.review import ReviewItem
    from .engine.trace import RecallTrace
    from .engine.writeback import WritebackPlan
    from .model import (
        Anchor,
        AnchorDetail,
        AuditEntry,
        Episode,
        Label,
        MentionedAnchor,
        Message,
        NodeState,
        SessionInfo,
        Triple,
    )

__all__ = ["AnchorsAPI", "LabelsAPI", "MemoryAPI", "NeighbourhoodAPI", "ReviewAPI"]


class ReviewAPI(Protocol):
    """``mem.review``: the review queue (:class:`~akasha_explorer.curate.review.ReviewDesk`)."""

    def __call__(self, status: str | None = "pending", kind: str | None = None,
                 limit: int | None = None) -> builtins.list[ReviewItem]: ...

    def list(self, *, status: str | None = "pending", kind: str | None = None,
             limit: int | None = None) -> builtins.list[ReviewItem]: ...

    def get(self, uid: str) -> ReviewItem: ...

    def approve(self, uid: str, *, why: str | None = None) -> str: ...

    def reject(self, uid: str, *, why: str | None = None) -> str: ...

    def edit(self, uid: str, *, why: str | None = None, **changes: Any) -> str: ...


class AnchorsAPI(Protocol):
    """``mem.anchors``: entity anchors (:class:`~akasha_explorer.curate.desks.AnchorDesk`)."""

    def __call__(self, search: str | None = None, *, kind: str | None = None,
                 status: str | None = "active") -> builtins.list[Anchor]: ...

    def list(self, search: str | None = None, *, kind: str | None = None,
             status: str | None = "active") -> builtins.list[Anchor]: ...

    def get(self, uid: str) -> AnchorDetail: ...

    def of(self, node: str) -> builtins.list[MentionedAnchor]: ...

    def rename(self, uid: str, name: str, *, why: str | None = None) -> str: ...

    def merge(self, keep: str, absorb: str, *, why: str | None = None) -> str: ...

    def split(self, uid: str, aliases: Sequence[str], *, name: str | None = None,
              why: str | None = None) -> tuple[str, str]: ...

    def add_alias(self, uid: str, surface: str, *, why: str | None = None) -> str: ...

    def remove_alias(self, uid: str, surface: str, *, why: str | None = None) -> str: ...

    def attach(self, uid: str, msg: str, start: int, end: int, *,
               why: str | None = None) -> str: ...

    def detach(self, uid: str, msg: str, start: int, *, why: str | None = None) -> str: ...


class LabelsAPI(Protocol):
    """``mem.labels``: labelled queries (:class:`~akasha_explorer.curate.desks.LabelDesk`)."""

    def __call__(self, query: str | None = None) -> builtins.list[Label]: ...

    def list(self, query: str | None = None) -> builtins.list[Label]: ...

    def add(self, query: str, node_id: str, relevant: bool = True) -> str: ...

    def remove(self, query: str, node_id: str) -> bool: ...

    def load(self, source: str | Path | Iterable[dict[str, Any]]) -> int: ...


class NeighbourhoodAPI(Protocol):
    """``mem.neighbourhood()``: turns and their co-activation neighbourhood at ``now``
    (:class:`~akasha_explorer.analysis.neighbourhood.Neighbourhood`)."""

    now: float

    def texts(self) -> dict[str, str]: ...

    def text(self, uid: str) -> str: ...

    def lines(self, uids: Sequence[str]) -> dict[str, str]: ...

    def communities(self) -> dict[str, int]: ...

    def has(self, uid: str) -> bool: ...

    def strength(self, uids: Sequence[str]) -> np.ndarray: ...

    def info(self, uid: str) -> dict[str, Any]: ...

    def time_of(self, uid: str) -> float: ...

    def times(self) -> np.ndarray: ...

    def session_nodes(self, session: str) -> builtins.list[str] | None: ...

    def newest(self, before: float, k: int) -> builtins.list[str]: ...

    def incident(self, uids: Sequence[str]) -> builtins.list[tuple[str, str, float]]: ...

    def edges_among(self, uids: Sequence[str], *, min_w: float = 0.0,
                    per_node: int | None = None) -> builtins.list[tuple[str, str, float]]: ...

    def neighbours(self, uids: Sequence[str], *, exclude: Iterable[str] = (),
                   limit: int | None = None) -> builtins.list[str]: ...

    def atlas(self, *, level: str = "auto", community: int | None = None,
              min_weight: float = 0.01, per_node: int = 5) -> Atlas: ...


class MemoryAPI(Protocol):
    """A memory, local or served (see the module docstring). Each method is documented
    on :class:`~akasha_explorer.memory.Memory`."""

    @property
    def path(self) -> Path: ...

    @property
    def read_only(self) -> bool: ...

    @property
    def settings(self) -> Settings: ...

    def __enter__(self) -> Self: ...

    def __exit__(self, *exc: object) -> None: ...

    def close(self) -> None: ...

    # -- reading
    def stats(self) -> dict[str, Any]: ...

    def sessions(self) -> builtins.list[SessionInfo]: ...

    def node(self, uid: str) -> NodeState: ...

    def has_node(self, uid: str) -> bool: ...

    def node_of_message(self, msg_uid: str) -> str | None: ...

    def messages(self, node: str, *, verify: bool = True) -> builtins.list[Message]: ...

    def last_ts(self) -> float: ...

    def query_log(self, *, limit: int | None = None) -> builtins.list[dict[str, Any]]: ...

    def neighbourhood(self, *, now: float | None = None,
                      communities: dict[str, int] | None = None) -> NeighbourhoodAPI: ...

    def search(self, text: str, *, now: float | None = None) -> SearchHits: ...

    # -- recall, the agent loop and what the agent receives
    def recall(self, query: str, *, now: float | None = None, session: str | None = None,
               settings: Settings | None = None, method: str = "akasha",
               log: bool = True) -> RecallTrace: ...

    def plan_writeback(self, trace: RecallTrace, current_node: str, *,
                       reinforce: bool = False) -> WritebackPlan: ...

    def commit(self, trace: RecallTrace, current_node: str, *,
               reinforce: bool = False) -> WritebackPlan: ...

    def add_turn(self, user: str | None, assistant: str | None, *, session: str,
                 ts: float | None = None, recall: RecallTrace | None = None,
                 reinforce: bool = False, turn_id: str | None = None,
                 user_speaker: str | None = None, assistant_speaker: str | None = None
                 ) -> tuple[str, RecallTrace | None]: ...

    def logged_recall(self, log_uid: str) -> RecallTrace: ...

    def why_not(self, trace: RecallTrace, node: str) -> dict[str, Any]: ...

    def replay_trace(self, trace: RecallTrace) -> RecallTrace: ...

    def context(self, query: str, *, budget_tokens: int | None = None,
                style: str = "brief", now: float | None = None, session: str | None = None,
                tz: str | dt.tzinfo | None = None, log: bool = True) -> ContextBlock: ...

    def expand(self, handle_or_node_id: str | int, around: int | None = None, *,
               trace: RecallTrace | ContextBlock | None = None) -> Expansion: ...

    def health(self, *, window: float | None = None, windows: int = 14,
               top_hubs: int = 10) -> dict[str, Any]: ...

    # -- curation
    @property
    def anchors(self) -> AnchorsAPI: ...

    @property
    def review(self) -> ReviewAPI: ...

    @property
    def labels(self) -> LabelsAPI: ...

    def triples(self, *, anchor: str | None = None, status: str | None = None
                ) -> builtins.list[Triple]: ...

    def episodes(self, *, kind: str | None = None, session: str | None = None
                 ) -> builtins.list[Episode]: ...

    def set_episodes(self, kind: str, groups: Sequence[Sequence[str]],
                     labels: Sequence[str] | None = None) -> int: ...

    def audit(self, *, target: str | None = None, limit: int | None = None
              ) -> builtins.list[AuditEntry]: ...

    def undo(self, audit_uid: str, *, why: str | None = None) -> str: ...

    def forget(self, *, node: str | None = None, session: str | None = None,
               anchor: str | None = None, why: str | None = None) -> dict[str, Any]: ...

    # -- evaluation, analysis, export, upkeep
    def evaluate(self, *, methods: Sequence[str] | None = None, k: int = 10,
                 now: float | None = None, settings: Settings | None = None
                 ) -> dict[str, Any]: ...

    def compare_methods(self, query: str, *, now: float | None = None,
                        methods: Sequence[str] | None = None, k: int = 10,
                        settings: Settings | None = None,
                        include: Sequence[str] = ()) -> pd.DataFrame: ...

    def graph_view(self, view: str = "nodes", *, now: float | None = None,
                   resolution: float | None = None, seed: int | None = None) -> GraphView: ...

    def ppr(self, seeds: str | list[str], *, view: str = "nodes", now: float | None = None,
            damping: float | None = None, top: int = 20) -> pd.DataFrame: ...

    def communities(self, view: str = "nodes", *, now: float | None = None,
                    resolution: float | None = None, seed: int | None = None,
                    save: bool = False) -> pd.DataFrame: ...

    def surprises(self, *, now: float | None = None, resolution: float | None = None,
                  seed: int | None = None, top: int = 10, queue: bool = True
                  ) -> pd.DataFrame: ...

    def export(self, path: str | Path, *, format: str, view: str = "nodes",
               now: float | None = None, resolution: float | None = None,
               seed: int | None = None) -> Path: ...

    def checkpoint(self) -> dict[str, float]: ...

    def migrate(self, profile: str, **changes: Any) -> dict[str, tuple[Any, Any]]: ...
