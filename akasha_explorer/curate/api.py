"""Memory methods for anchors, triples, episodes, the review queue, curation and forget
(SPEC §6). Mixed into :class:`~akasha_explorer.memory.Memory`; logic lives in this package."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["CurateMixin"]


class CurateMixin:
    """Anchors / review / curation / forget part of the Memory facade."""

    def _after_ingest(self, node_uids: Sequence[str]) -> None:
        """Hook run by the ingest pipeline after new nodes reached both stores
        (extraction of anchors, mentions, triples, episode membership)."""
