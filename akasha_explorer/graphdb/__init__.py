"""Kuzu adapter: schema file, migrations and the thin :class:`GraphDB` layer."""

from .kuzu_db import GraphDB
from .migrations import SCHEMA_VERSION

__all__ = ["SCHEMA_VERSION", "GraphDB"]
