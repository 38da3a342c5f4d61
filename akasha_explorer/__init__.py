"""akasha_explorer: a Jupyter-first explorer and engine for long-term agent memory.

*The message is the only truth; to remember is to recommend.*

>>> import akasha_explorer
>>> callable(akasha_explorer.open)
True
"""

from .config import Settings
from .errors import (
    AkashaError,
    DiskFull,
    IntegrityError,
    InvalidInput,
    InvalidSettings,
    ModelMismatch,
    NotFound,
    ReadOnlyStore,
    SchemaMismatch,
    StoreError,
    StoreLocked,
    TraceMismatch,
)
from .memory import Memory, open
from .model import IngestReport, Message, NodeState, RawMessage
from .protocol import MemoryAPI
from .server.client import RemoteMemory, connect

__version__ = "0.1.0"

__all__ = [
    "AkashaError",
    "DiskFull",
    "IngestReport",
    "IntegrityError",
    "InvalidInput",
    "InvalidSettings",
    "Memory",
    "MemoryAPI",
    "Message",
    "ModelMismatch",
    "NodeState",
    "NotFound",
    "RawMessage",
    "ReadOnlyStore",
    "RemoteMemory",
    "SchemaMismatch",
    "Settings",
    "StoreError",
    "StoreLocked",
    "TraceMismatch",
    "__version__",
    "connect",
    "open",
]
