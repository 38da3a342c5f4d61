"""The store folder: manifest, writer lock, write-ahead journal (SPEC §1 write path), the
in-memory mirror, and :class:`~.store.Store`, which owns them all for one open folder.

``Store`` is imported on first use (``akasha_explorer.store.Store``): the graph and vector
adapters import this package's journal and free-space helpers, and ``Store`` imports them.
"""

from typing import Any

from .journal import Journal
from .lock import WriterLock
from .manifest import Manifest

__all__ = ["Journal", "Manifest", "Store", "WriterLock"]


def __getattr__(name: str) -> Any:
    if name == "Store":
        from .store import Store
        return Store
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
