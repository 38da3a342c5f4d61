"""The Kuzu side of a forget's scrub (see :mod:`akasha_explorer.curate.redact`): read every
row a person's words can reach outside the forgotten nodes themselves — query log, audit
log, review items, anchor notes, labelled queries, the saved context block — and delete or
redact the ones the caller picked. Values travel as parameters, never spliced into Cypher."""

from __future__ import annotations

from typing import Any

from .kuzu_db import GraphDB

__all__ = ["REDACTABLE_COLUMNS", "REDACTED", "delete_rows", "redact", "text_rows"]

REDACTED = "redacted"
"""What a redacted field holds afterwards."""

REDACTABLE_COLUMNS: dict[str, tuple[str, ...]] = {
    "QueryLog": ("query", "session", "seeds", "items"),
    "AuditLog": ("target", "why", "before", "after", "action"),
    "ReviewItem": ("subject", "payload", "why"),
    "Anchor": ("note",),
    "Label": ("query", "node"),
}
"""Per table, the string columns that may quote what a person wrote or name a node."""


def text_rows(g: GraphDB, table: str) -> list[dict[str, Any]]:
    """``uid`` and the :data:`REDACTABLE_COLUMNS` of every row of ``table``."""
    cols = REDACTABLE_COLUMNS[table]
    return g.rows(f"MATCH (x:{table}) RETURN x.uid AS uid, "
                  + ", ".join(f"x.{c} AS {c}" for c in cols))


def delete_rows(g: GraphDB, table: str, uids: list[str]) -> None:
    """Delete the rows ``uids`` of ``table`` (with their rels)."""
    if uids:
        if table not in REDACTABLE_COLUMNS:
            raise ValueError(f"not a scrubbed table: {table!r}")
        g.execute(f"MATCH (x:{table}) WHERE x.uid IN $u DETACH DELETE x", {"u": uids})


def redact(g: GraphDB, table: str, columns: tuple[str, ...], uids: list[str]) -> None:
    """Set ``columns`` of the rows ``uids`` of ``table`` to :data:`REDACTED`."""
    if uids and columns:
        if not set(columns) <= set(REDACTABLE_COLUMNS.get(table, ())):
            raise ValueError(f"not scrubbed columns of {table}: {columns!r}")
        sets = ", ".join(f"x.{c} = $r" for c in columns)
        g.execute(f"MATCH (x:{table}) WHERE x.uid IN $u SET {sets}", {"u": uids, "r": REDACTED})
