"""The logs and queues in Kuzu: the query log, the audit log and review items — one named
function per statement the package runs on them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pyarrow as pa

from .kuzu_db import GraphDB

__all__ = [
    "QUERY_COLUMNS",
    "REVIEW_SCHEMA",
    "add_audit",
    "add_queries",
    "add_review_items",
    "audit_entry",
    "audit_log",
    "mark_query_committed",
    "mark_undone",
    "pending_review_count",
    "query_committed",
    "query_log",
    "review_items",
    "review_uids_among",
]

QUERY_COLUMNS = ("uid", "ts", "query", "session", "method", "n_seeds", "n_pool", "n_activated",
                 "n_dense", "n_ripple", "empty", "committed", "latency_ms", "seeds", "items")
"""Columns of a QueryLog row (the Kuzu table's order)."""

REVIEW_SCHEMA = pa.schema([
    ("uid", pa.string()), ("kind", pa.string()), ("status", pa.string()),
    ("subject", pa.string()), ("payload", pa.string()), ("confidence", pa.float64()),
    ("created_ts", pa.float64()), ("decided_ts", pa.float64()), ("decided_by", pa.string()),
    ("why", pa.string())])
"""Arrow schema of ReviewItem rows (column order = the Kuzu table)."""


# -- query log -----------------------------------------------------------------------------------
def query_log(g: GraphDB, limit: int | None = None) -> list[dict[str, Any]]:
    """QueryLog rows with every column (:data:`QUERY_COLUMNS`): all of them, or the newest
    ``limit`` by time. Rows still in the journal are not here (see ``Store.query_log``)."""
    q = "MATCH (q:QueryLog) RETURN " + ", ".join(f"q.{c} AS {c}" for c in QUERY_COLUMNS)
    if limit is None:
        return g.rows(q)
    return g.rows(q + " ORDER BY q.ts DESC LIMIT $n", {"n": int(limit)})


def add_queries(g: GraphDB, rows: Sequence[dict[str, Any]]) -> None:
    """Copy query-log rows (dicts with :data:`QUERY_COLUMNS`) into QueryLog."""
    if rows:
        g.copy("QueryLog", pa.table({c: [q[c] for q in rows] for c in QUERY_COLUMNS}))


def query_committed(g: GraphDB, uid: str) -> bool | None:
    """Whether QueryLog row ``uid`` is marked written back (None: no such row)."""
    rows = g.rows("MATCH (q:QueryLog {uid: $u}) RETURN q.committed AS c", {"u": uid})
    return None if not rows else bool(rows[0]["c"])


def mark_query_committed(g: GraphDB, uid: str) -> None:
    """Mark the QueryLog row ``uid`` as written back."""
    g.execute("MATCH (q:QueryLog {uid: $u}) SET q.committed = true", {"u": uid})


# -- audit log -----------------------------------------------------------------------------------
def add_audit(g: GraphDB, row: dict[str, Any]) -> None:
    """Write one AuditLog row (``uid``, ``ts``, ``actor``, ``action``, ``target``, ``why``,
    ``before``, ``after``; not undone)."""
    g.execute("CREATE (x:AuditLog {uid: $uid, ts: $ts, actor: $actor, action: $action, "
              "target: $target, why: $why, before: $before, after: $after, undone: false})", row)


def audit_entry(g: GraphDB, uid: str) -> dict[str, Any] | None:
    """``before``, ``undone``, ``action`` and ``target`` of one audit entry (None: none)."""
    rows = g.rows("MATCH (x:AuditLog {uid: $u}) RETURN x.before AS before, x.undone AS undone, "
                  "x.action AS action, x.target AS target", {"u": uid})
    return rows[0] if rows else None


def mark_undone(g: GraphDB, uid: str) -> None:
    """Mark the audit entry ``uid`` as undone."""
    g.execute("MATCH (x:AuditLog {uid: $u}) SET x.undone = true", {"u": uid})


def audit_log(g: GraphDB, *, target: str | None = None, limit: int | None = None
              ) -> list[dict[str, Any]]:
    """Audit entries (uid, ts, actor, action, target, why, after, undone), newest first."""
    q = "MATCH (x:AuditLog) "
    params: dict[str, Any] = {}
    if target is not None:
        q += "WHERE x.target = $t "
        params["t"] = target
    q += ("RETURN x.uid AS uid, x.ts AS ts, x.actor AS actor, x.action AS action, "
          "x.target AS target, x.why AS why, x.after AS after, x.undone AS undone "
          "ORDER BY x.ts DESC")
    if limit:
        q += f" LIMIT {int(limit)}"
    return g.rows(q, params)


# -- review items --------------------------------------------------------------------------------
def review_items(g: GraphDB, *, status: str | None, kind: str | None,
                 limit: int | None = None) -> list[dict[str, Any]]:
    """ReviewItem rows (every column, without the ``r.`` prefix) filtered by status and
    kind (None: any), oldest first."""
    q = ("MATCH (r:ReviewItem) WHERE ($s IS NULL OR r.status = $s) AND "
         "($k IS NULL OR r.kind = $k) RETURN r.* ORDER BY r.created_ts, r.uid")
    if limit:
        q += f" LIMIT {int(limit)}"
    return [{k.split(".", 1)[1]: v for k, v in r.items()}
            for r in g.rows(q, {"s": status, "k": kind})]


def review_uids_among(g: GraphDB, uids: Sequence[str]) -> set[str]:
    """Which of ``uids`` are ReviewItem uids already."""
    return {r["u"] for r in g.rows("MATCH (r:ReviewItem) WHERE r.uid IN $u RETURN r.uid AS u",
                                   {"u": list(uids)})}


def add_review_items(g: GraphDB, rows: Sequence[dict[str, Any]]) -> None:
    """Copy review items (dicts with the :data:`REVIEW_SCHEMA` columns) into ReviewItem."""
    if rows:
        g.copy("ReviewItem", pa.Table.from_pylist(list(rows), schema=REVIEW_SCHEMA))


def pending_review_count(g: GraphDB) -> int:
    """How many review items are pending."""
    return int(g.rows("MATCH (r:ReviewItem) WHERE r.status = 'pending' "
                      "RETURN count(r) AS c")[0]["c"])
