"""LanceDB adapter: the ``messages`` and ``turns`` tables."""

from .lance import VectorDB, messages_schema, sql_str, turns_schema, vectors_column

__all__ = ["VectorDB", "messages_schema", "sql_str", "turns_schema", "vectors_column"]
