"""The one exception tree of akasha_explorer.

::

    AkashaError
     ├── InvalidInput          bad file / record / argument; nothing was written
     ├── InvalidSettings       unknown setting name, wrong type, value outside its range
     ├── NotFound              no such node, session, anchor, review item, trace …
     ├── StoreError            the store folder itself
     │    ├── StoreLocked       another process holds the writer lock
     │    ├── SchemaMismatch    store schema newer than this code / no migration path
     │    ├── ModelMismatch     store built with another embedding model
     │    ├── ReadOnlyStore     a write on a store opened read-only
 │    ├── DiskFull          not enough free space for a write; nothing was changed
     │    └── IntegrityError    stored bytes no longer match their sha256 / stores disagree
     └── TraceMismatch         replaying a trace did not reproduce it

Every message says what happened and what to do next.
"""

from __future__ import annotations

__all__ = [
    "AkashaError",
    "DiskFull",
    "IntegrityError",
    "InvalidInput",
    "InvalidSettings",
    "ModelMismatch",
    "NotFound",
    "ReadOnlyStore",
    "SchemaMismatch",
    "StoreError",
    "StoreLocked",
    "TraceMismatch",
]


class AkashaError(Exception):
    """Base class of every error this package raises on purpose."""


class InvalidInput(AkashaError, ValueError):
    """Input refused before anything was written. ``where`` names file/line/record."""

    def __init__(self, message: str, *, where: str | None = None) -> None:
        self.where = where
        super().__init__(f"{where}: {message}" if where else message)


class InvalidSettings(AkashaError, ValueError):
    """A setting name or value is not valid."""


class NotFound(AkashaError, KeyError):
    """The thing asked for does not exist in this store."""

    def __str__(self) -> str:  # KeyError would repr() the message
        return str(self.args[0]) if self.args else ""


class StoreError(AkashaError):
    """Problem with the store folder itself."""


class StoreLocked(StoreError):
    """Another process holds the writer lock of the store."""


class SchemaMismatch(StoreError):
    """The store's schema version cannot be used by this code."""


class ModelMismatch(StoreError):
    """The store was built with another embedding model or dimension."""


class ReadOnlyStore(StoreError):
    """A write was attempted on a store opened read-only."""


class DiskFull(StoreError):
    """The disk holding the store has too little free space for a write; the write was
    refused (or rolled back) whole, nothing was changed."""


class IntegrityError(StoreError):
    """Stored bytes or stores disagree with what was recorded."""


class TraceMismatch(AkashaError):
    """Replaying a stored trace did not reproduce it."""
