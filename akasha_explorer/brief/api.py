"""Memory methods for agent-facing output: expand, health (issue: agent-facing recall
output). Mixed into :class:`~akasha_explorer.memory.Memory`."""

from __future__ import annotations

from typing import Any

__all__ = ["BriefMixin"]


class BriefMixin:
    """Context / expand / health part of the Memory facade."""

    def _after_recall(self, trace: Any) -> None:
        """Hook run by ``Memory.recall`` on every trace before it is returned."""
