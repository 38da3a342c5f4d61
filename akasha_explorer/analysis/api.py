"""Memory methods for graph views, personalized PageRank, communities, surprises and
export (SPEC §7, §9). Mixed into :class:`~akasha_explorer.memory.Memory`."""

from __future__ import annotations

from typing import Any

from ..errors import InvalidInput

__all__ = ["AnalysisMixin"]


class AnalysisMixin:
    """Analytics / export part of the Memory facade."""

    def _recall_method(self, method: str, q: Any, lexical: Any, *, now: float,
                       settings: Any, query: str, session: str | None) -> Any:
        """Recall by another method than Akasha's own (``Memory.recall(method=...)``)."""
        raise InvalidInput(f"unknown recall method {method!r}; known: akasha")
