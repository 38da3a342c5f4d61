"""The one thin layer over Kuzu (embedded graph database).

Everything the package asks of Kuzu goes through :class:`GraphDB`: Cypher with parameters,
bulk ``COPY`` from Arrow tables, explicit transactions, and the schema version. Kuzu-isms
stay here so a fork (e.g. ``ladybug``) can replace this file:

- ``COPY … FROM`` reads a *variable of the calling frame*; we pass pyarrow Tables (pandas 3
  DataFrames crash kuzu 0.11.3).
- ``UNWIND … MERGE`` of relationships hits an internal assertion in 0.11.3: new rels are
  created by ``COPY``, existing ones changed by ``UNWIND … MATCH … SET``.
- Each statement costs about a millisecond, so hot paths never issue per-row statements.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

import kuzu
import pyarrow as pa

from ..errors import ReadOnlyStore, SchemaMismatch, StoreError, StoreLocked
from .migrations import MIGRATIONS, SCHEMA_VERSION

__all__ = ["GraphDB"]

log = logging.getLogger(__name__)


def _schema_statements() -> list[str]:
    text = resources.files(__package__).joinpath("schema.cypher").read_text("utf-8")
    body = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("//"))
    return [s.strip() for s in body.split(";") if s.strip()]


class GraphDB:
    """A Kuzu database file opened read-write or read-only, with its schema ensured."""

    def __init__(self, path: Path, *, read_only: bool = False) -> None:
        self.path = Path(path)
        self.read_only = read_only
        try:
            self._db = kuzu.Database(str(self.path), read_only=read_only)
        except RuntimeError as e:
            msg = str(e)
            if "lock" in msg.lower():
                raise StoreLocked(
                    f"the graph {self.path} is held by another process ({msg}); close it or "
                    "wait for it to finish") from e
            raise StoreError(f"cannot open the graph {self.path}: {msg}") from e
        self._conn = kuzu.Connection(self._db)
        self._in_tx = False
        if not read_only:
            self._ensure_schema()
        self.schema_version = self._read_version()
        if self.schema_version != SCHEMA_VERSION:
            raise SchemaMismatch(
                f"graph schema version {self.schema_version} at {self.path}, this code needs "
                f"{SCHEMA_VERSION}; open it read-write once with this version to migrate")

    # -- schema --------------------------------------------------------------------------
    def _tables(self) -> set[str]:
        return {r["name"] for r in self.rows("CALL show_tables() RETURN name")}

    def _read_version(self) -> int:
        if "Meta" not in self._tables():
            return 0
        rows = self.rows("MATCH (m:Meta {key: 'schema_version'}) RETURN m.value AS v")
        return int(rows[0]["v"]) if rows else 0

    def _ensure_schema(self) -> None:
        version = self._read_version()
        if version == 0 and not self._tables():
            for stmt in _schema_statements():
                self._conn.execute(stmt)
            self.meta_set("schema_version", str(SCHEMA_VERSION))
            return
        if version > SCHEMA_VERSION:
            raise SchemaMismatch(
                f"graph schema version {version} at {self.path} is newer than this code "
                f"({SCHEMA_VERSION}); upgrade akasha-explorer")
        while version < SCHEMA_VERSION:
            steps = MIGRATIONS.get(version)
            if steps is None:
                raise SchemaMismatch(f"no migration from graph schema version {version}")
            log.info("migrating graph schema %s -> %s", version, version + 1)
            for stmt in steps:
                self._conn.execute(stmt)
            version += 1
            self.meta_set("schema_version", str(version))

    # -- statements ----------------------------------------------------------------------
    def _check_write(self) -> None:
        if self.read_only:
            raise ReadOnlyStore(f"the graph {self.path} is open read-only")

    def execute(self, query: str, params: dict[str, Any] | None = None) -> Any:
        """Run one Cypher statement with parameters; returns Kuzu's QueryResult."""
        return self._conn.execute(query, params or {})

    def rows(self, query: str, params: dict[str, Any] | None = None) -> list[dict[str, Any]]:
        """Run a query and return its rows as dicts (small results only)."""
        res = self._conn.execute(query, params or {})
        cols = res.get_column_names()
        out = []
        while res.has_next():
            out.append(dict(zip(cols, res.get_next(), strict=True)))
        return out

    def arrow(self, query: str, params: dict[str, Any] | None = None) -> pa.Table:
        """Run a query and return the whole result as a pyarrow Table."""
        res = self._conn.execute(query, params or {})
        return res.get_as_arrow(chunk_size=1_000_000)

    def copy(self, table: str, data: pa.Table) -> None:
        """Bulk-insert ``data`` into ``table`` with ``COPY`` (columns in schema order;
        for rel tables the first two columns are the FROM and TO primary keys)."""
        self._check_write()
        if data.num_rows == 0:
            return
        if not table.isidentifier():
            raise ValueError(f"bad table name {table!r}")
        _copy_src = data  # Kuzu scans this local variable by name
        self._conn.execute(f"COPY {table} FROM _copy_src")

    def unwind(self, query: str, rows: Sequence[dict[str, Any]], batch: int = 5000) -> None:
        """Run ``UNWIND $rows AS r <query>`` in batches (one statement per batch)."""
        self._check_write()
        for i in range(0, len(rows), batch):
            self._conn.execute(f"UNWIND $rows AS r {query}", {"rows": list(rows[i:i + batch])})

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        """All-or-nothing block: commits on success, rolls back on any exception.

        After the commit the WAL is folded into the database file (``CHECKPOINT``): kuzu
        0.11.3's WAL replay after a SIGKILL is not trustworthy — measured here, a committed
        ``DETACH DELETE`` replayed into a rel table that lost an unrelated node's
        IN_SESSION link (visible to ``count``/``EXISTS`` but not to ``OPTIONAL MATCH``), and
        a committed transaction of rel deletes was dropped whole. A checkpointed commit never
        needs the replay.
        """
        self._check_write()
        if self._in_tx:
            yield
            return
        self._conn.execute("BEGIN TRANSACTION")
        self._in_tx = True
        try:
            yield
        except BaseException:
            self._in_tx = False
            with contextlib.suppress(Exception):
                self._conn.execute("ROLLBACK")
            raise
        self._in_tx = False
        self._conn.execute("COMMIT")
        self._conn.execute("CHECKPOINT")

    # -- meta ------------------------------------------------------------------------------
    def meta_get(self, key: str, default: str | None = None) -> str | None:
        """A value of the Meta table (``default`` when absent)."""
        rows = self.rows("MATCH (m:Meta {key: $k}) RETURN m.value AS v", {"k": key})
        return rows[0]["v"] if rows else default

    def meta_set(self, key: str, value: str) -> None:
        """Set a value of the Meta table."""
        self._check_write()
        self._conn.execute("MERGE (m:Meta {key: $k}) SET m.value = $v", {"k": key, "v": value})

    def count(self, label: str) -> int:
        """Number of nodes with ``label`` (or rels, for a rel table name)."""
        if not label.isidentifier():
            raise ValueError(f"bad table name {label!r}")
        rels = {r["name"] for r in self.rows("CALL show_tables() WHERE type = 'REL' RETURN name")}
        q = (f"MATCH ()-[e:{label}]->() RETURN count(e) AS c" if label in rels
             else f"MATCH (n:{label}) RETURN count(n) AS c")
        return int(self.rows(q)[0]["c"])

    def close(self) -> None:
        """Close the connection and the database (Kuzu checkpoints on a clean close)."""
        with contextlib.suppress(Exception):
            self._conn.close()
        with contextlib.suppress(Exception):
            self._db.close()
