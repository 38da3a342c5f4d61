"""Named reads and writes of the two LanceDB tables (``messages``, ``turns``): the only
place outside :mod:`.lance` that builds a LanceDB filter. Everything the package asks of
LanceDB beyond opening and closing goes through a function here."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa
from numpy.typing import NDArray

from .lance import VectorDB, sql_str

__all__ = [
    "add_messages",
    "add_turns",
    "delete_messages",
    "delete_messages_of_nodes",
    "delete_turns",
    "messages",
    "messages_of_nodes",
    "messages_of_session",
    "messages_with_uids",
    "search_turns",
    "turns",
    "turns_with_uids",
    "uids_filter",
    "update_message_terms",
]


def uids_filter(column: str, values: Sequence[str]) -> str:
    """A LanceDB filter matching rows whose ``column`` is one of ``values``.

    >>> uids_filter("uid", ["a", "it's"])
    "uid IN ('a', 'it''s')"
    """
    return f"{column} IN (" + ", ".join(sql_str(u) for u in values) + ")"


def messages(v: VectorDB, columns: Sequence[str] | None = None) -> pa.Table:
    """Every stored message (all columns, or ``columns``)."""
    return v.read("messages", columns=columns)


def messages_with_uids(v: VectorDB, uids: Sequence[str],
                       columns: Sequence[str] | None = None) -> pa.Table:
    """The messages whose uid is one of ``uids`` (one filter: callers keep it short)."""
    return v.read("messages", columns=columns, where=uids_filter("uid", uids))


def messages_of_nodes(v: VectorDB, nodes: Sequence[str], columns: Sequence[str] | None = None,
                      *, batch: int | None = None) -> pa.Table:
    """The messages of the nodes ``nodes`` (``batch``: at most this many nodes per filter)."""
    if batch is None or len(nodes) <= batch:
        return v.read("messages", columns=columns, where=uids_filter("node", nodes))
    parts = [v.read("messages", columns=columns,
                    where=uids_filter("node", nodes[i:i + batch]))
             for i in range(0, len(nodes), batch)]
    return pa.concat_tables(parts)


def messages_of_session(v: VectorDB, session: str,
                        columns: Sequence[str] | None = None) -> pa.Table:
    """The messages of session ``session``."""
    return v.read("messages", columns=columns, where="session = " + sql_str(session))


def messages_of_sessions(v: VectorDB, sessions: Sequence[str],
                         columns: Sequence[str] | None = None) -> pa.Table:
    """The messages of every session of ``sessions`` (one scan)."""
    return v.read("messages", columns=columns, where=uids_filter("session", sessions))


def turns(v: VectorDB, columns: Sequence[str] | None = None) -> pa.Table:
    """Every stored node vector row (all columns, or ``columns``)."""
    return v.read("turns", columns=columns)


def turns_with_uids(v: VectorDB, uids: Sequence[str]) -> pa.Table:
    """The node vector rows whose uid is one of ``uids``."""
    return v.read("turns", where=uids_filter("uid", uids))


def add_messages(v: VectorDB, data: pa.Table) -> None:
    """Append message rows (one new version)."""
    v.add("messages", data)


def add_turns(v: VectorDB, data: pa.Table) -> None:
    """Append node vector rows (one new version)."""
    v.add("turns", data)


def delete_messages(v: VectorDB, uids: Sequence[str], *, batch: int = 500) -> None:
    """Delete the messages ``uids`` (``batch`` uids per delete)."""
    for i in range(0, len(uids), batch):
        v.delete("messages", uids_filter("uid", uids[i:i + batch]))


def delete_messages_of_nodes(v: VectorDB, nodes: Sequence[str], *, batch: int = 200) -> None:
    """Delete every message of the nodes ``nodes`` and their node vectors (``batch`` nodes
    per delete)."""
    for i in range(0, len(nodes), batch):
        part = nodes[i:i + batch]
        v.delete("messages", uids_filter("node", part))
        v.delete("turns", uids_filter("uid", part))


def delete_turns(v: VectorDB, uids: Sequence[str], *, batch: int = 500) -> None:
    """Delete the node vector rows ``uids`` (``batch`` uids per delete)."""
    for i in range(0, len(uids), batch):
        v.delete("turns", uids_filter("uid", uids[i:i + batch]))


def update_message_terms(v: VectorDB, data: pa.Table) -> None:
    """Overwrite the ``terms`` column of the messages in ``data`` (columns ``uid``,
    ``terms``), matched on uid."""
    v.update_columns("messages", "uid", data)


def search_turns(v: VectorDB, q: NDArray[np.float32], k: int) -> pa.Table:
    """LanceDB's own top-``k`` cosine search over node vectors (``uid``, ``_distance``)."""
    return v.search("turns", q, k)
