"""The store folder: manifest, writer lock, write-ahead journal (SPEC §1 write path), the
in-memory mirror, and :class:`~.store.Store`, which owns them all for one open folder.

The store sits above the query layer (``graphdb/``, ``vectors/``), which imports nothing
of it: both take their file-system helpers from :mod:`akasha_explorer._fs`.
"""

from .journal import Journal
from .lock import WriterLock
from .manifest import Manifest
from .store import Store

__all__ = ["Journal", "Manifest", "Store", "WriterLock"]
