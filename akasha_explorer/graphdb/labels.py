"""Labelled queries in Kuzu (the ``Label`` table): a query, a node, and whether that node
should come up for it — the store's own recall test set. One named function per statement
the package runs on them; values travel as parameters."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

from ..model import Label
from .kuzu_db import GraphDB

__all__ = ["LABEL_COLUMNS", "delete_labels", "label_uid", "labels", "set_labels"]

LABEL_COLUMNS = ("uid", "query", "node", "relevant", "ts", "by")
"""Columns of a Label row (the Kuzu table's order)."""


def label_uid(query: str, node: str) -> str:
    """The uid of the label of ``node`` for ``query``: one label per pair, so labelling a
    pair again replaces its verdict.

    >>> label_uid("阿岚的生日", "s:0") == label_uid("阿岚的生日", "s:0") != label_uid("x", "s:0")
    True
    """
    h = hashlib.sha256(query.encode("utf-8") + b"\x00" + node.encode("utf-8")).hexdigest()
    return f"l-{h[:20]}"


def set_labels(g: GraphDB, rows: Sequence[dict[str, Any]]) -> None:
    """Create or replace Label rows (dicts with :data:`LABEL_COLUMNS`) in one transaction."""
    if rows:
        with g.transaction():
            g.unwind("MERGE (l:Label {uid: r.uid}) SET l.query = r.query, l.node = r.node, "
                     "l.relevant = r.relevant, l.ts = r.ts, l.by = r.by", list(rows))


def labels(g: GraphDB, *, query: str | None = None) -> list[Label]:
    """Labels, oldest first; ``query``: only that query's."""
    return [Label(**r) for r in g.rows(
        "MATCH (l:Label) WHERE $q IS NULL OR l.query = $q RETURN "
        + ", ".join(f"l.{c} AS {c}" for c in LABEL_COLUMNS)
        + " ORDER BY l.ts, l.uid", {"q": query})]


def delete_labels(g: GraphDB, uids: Sequence[str]) -> int:
    """Delete the Label rows ``uids``; returns how many there were."""
    if not uids:
        return 0
    n = int(g.rows("MATCH (l:Label) WHERE l.uid IN $u RETURN count(l) AS c",
                   {"u": list(uids)})[0]["c"])
    g.execute("MATCH (l:Label) WHERE l.uid IN $u DELETE l", {"u": list(uids)})
    return n
