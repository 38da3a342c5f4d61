"""The query log of a store (``store.queries``): a row per logged recall, journaled at the
recall and written to Kuzu with the next checkpoint, with the recall's record as it was
made (:mod:`.recalled`) and whether it was written back.

Thread-safety: the request path's (the caller holds the store); the rows Kuzu holds are
read as they are (``store.graph_as_is``): query-log rows come with checkpoints, not with
the turns waiting for a fold.
"""

from __future__ import annotations

import logging
from typing import Any, Protocol

from ..engine.trace import RecallTrace
from ..errors import DiskFull
from ..graphdb import GraphDB, logs
from .journal import Journal
from .mirror import Mirror
from .recalled import RecallRecords

__all__ = ["QueryLog"]

log = logging.getLogger(__name__)


class _LoggingStore(Protocol):
    """What :class:`QueryLog` reads of its store."""

    mirror: Mirror
    journal: Journal
    recalls: RecallRecords

    @property
    def graph_as_is(self) -> GraphDB: ...

    def check_open(self) -> None: ...


class QueryLog:
    """One store's query log (see the module docstring)."""

    def __init__(self, store: _LoggingStore) -> None:
        self._store = store

    def log(self, row: dict[str, Any], trace: RecallTrace | None = None) -> str | None:
        """Queue a query-log row (journaled; Kuzu gets it at the next checkpoint) and keep
        ``trace`` as that recall's record (``store.recalls``). Returns the row's uid, or
        None when the disk is full (logged: the recall itself is fine)."""
        s = self._store
        try:
            s.mirror.log_query(s.journal, row)
        except DiskFull as e:
            log.warning("recall %r: not written to the query log: %s",
                        str(row.get("query", ""))[:60], e)
            return None
        uid = str(row["uid"])
        if trace is not None:
            try:
                s.recalls.save(uid, trace)
            except OSError as e:  # a view of the recall, not the memory: the row is kept
                log.warning("recall %r: not kept as made: %s", trace.query[:60], e)
        return uid

    def committed(self, log_uid: str) -> bool:
        """Whether the recall of query-log row ``log_uid`` was written back (False: not
        yet, or no such row)."""
        got = self._store.mirror.query_committed(log_uid)
        if got is not None:
            return got
        return bool(logs.query_committed(self._store.graph_as_is, log_uid))

    def recall(self, log_uid: str) -> RecallTrace:
        """The recall of query-log row ``log_uid`` as it was made and delivered (its
        record, :mod:`.recalled`), with ``log_uid`` set and ``written_back`` saying
        whether, to which node, by whom and when it was written back (``{"committed":
        False}`` when not). Raises :class:`~akasha_explorer.errors.NotFound` when no record
        is kept."""
        s = self._store
        s.check_open()
        trace = s.recalls.load(log_uid)
        done = self.committed(log_uid)
        trace.written_back = ({"committed": True, **(s.recalls.written(log_uid) or {})}
                              if done else {"committed": False})
        return trace

    def rows(self, *, limit: int | None = None) -> list[dict[str, Any]]:
        """The query log, oldest first: the rows Kuzu holds and those still waiting in the
        journal for a checkpoint, each once (every column of
        :data:`~akasha_explorer.graphdb.logs.QUERY_COLUMNS`); ``limit``: only the newest
        ``limit`` rows."""
        m = self._store.mirror
        rows = logs.query_log(self._store.graph_as_is, limit=limit)
        marks = m.committed_queries   # written back since Kuzu got the row
        for r in rows:
            if r["uid"] in marks:
                r["committed"] = True
        seen = {r["uid"] for r in rows}
        rows += [dict(r) for r in m.pending_queries if r["uid"] not in seen]
        rows.sort(key=lambda r: (float(r.get("ts") or 0.0), str(r["uid"])))
        return rows if limit is None else rows[-limit:] if limit > 0 else []
