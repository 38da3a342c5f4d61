"""The store folder: manifest, writer lock, write-ahead journal (SPEC §1 write path)."""

from .journal import Journal
from .lock import WriterLock
from .manifest import Manifest

__all__ = ["Journal", "Manifest", "WriterLock"]
