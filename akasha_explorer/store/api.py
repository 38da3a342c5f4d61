"""Memory methods for store health: doctor and repair (reliability). Mixed into
:class:`~akasha_explorer.memory.Memory`."""

from __future__ import annotations

__all__ = ["StoreMixin"]


class StoreMixin:
    """Doctor / repair part of the Memory facade."""
