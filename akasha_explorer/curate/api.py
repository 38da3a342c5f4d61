"""Memory methods for anchors, triples, episodes, the review queue, curation and forget
(SPEC §6). Mixed into :class:`~akasha_explorer.memory.Memory`; logic lives in
:mod:`akasha_explorer.extract` and this package."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..extract.base import Extractor
    from ..extract.pipeline import ExtractReport

__all__ = ["CurateMixin"]


class CurateMixin:
    """Anchors / review / curation / forget part of the Memory facade."""

    extractor: Extractor | None = None
    """The extractor run at ingest (None: the offline rule-based default)."""

    def _after_ingest(self, node_uids: Sequence[str]) -> None:
        """Hook run by the ingest pipeline after new nodes reached both stores
        (extraction of anchors, mentions, triples, episode membership)."""
        if node_uids and self.settings.EXTRACT:  # type: ignore[attr-defined]
            self.extract(node_uids)

    def extract(self, node_uids: Sequence[str]) -> ExtractReport:
        """Run extraction for stored nodes (done at ingest; see :mod:`~akasha_explorer.
        extract.pipeline`). Returns what was added."""
        from ..extract.pipeline import extract_nodes
        self._check_write()  # type: ignore[attr-defined]
        return extract_nodes(self, node_uids, self.extractor)  # type: ignore[arg-type]
