"""The one thin layer over Kuzu (embedded graph database).

Everything the package asks of Kuzu goes through :class:`GraphDB`: Cypher with parameters,
bulk ``COPY`` from Arrow tables, explicit transactions, and the schema version. Kuzu-isms
stay here so a fork (e.g. ``ladybug``) can replace this file:

- ``COPY … FROM`` reads a *variable of the calling frame*; we pass pyarrow Tables (pandas 3
  DataFrames crash kuzu 0.11.3).
- ``UNWIND … MERGE`` of relationships hits an internal assertion in 0.11.3: new rels are
  created by ``COPY``, existing ones changed by ``UNWIND … MATCH … SET``.
- A ``COPY`` into a non-empty rel table rewrites that table's CSR node group at ``COMMIT``:
  measured on the demo store, 32 rows into NEXT, IN_SESSION, MENTIONS or IN_EPISODE cost
  the commit 20–33 ms and 0.8–1.25 MB of page writes each, whatever the row count (a fold's
  ``COMMIT``: ~1,500 page writes, only 4 fdatasyncs — not fsync-bound). Rels made by
  ``CREATE`` instead move the same writes to the next ``CHECKPOINT``; ``LOAD FROM … MATCH
  (a:T {pk: _c0}), (b:U {pk: _c1}) CREATE`` is planned as a cartesian product (a 512 MB
  buffer pool ran out on 50 rows at 5,000 nodes), ``UNWIND … MATCH … CREATE`` scans (~2 ms a
  rel at 20k nodes), one statement per rel costs ~0.5 ms. A WAL holding only committed
  ``CREATE``/``SET`` transactions can be deleted before an open (no ``.shadow`` file): the
  database opens at its last checkpoint, consistent and writable (measured; the data file
  is written only by checkpoints and ``COPY`` commits).
- Each statement costs about a millisecond, so hot paths never issue per-row statements.
  Many rows are changed with ``LOAD FROM`` an Arrow table (:meth:`GraphDB.load_from`), not
  ``UNWIND`` of a parameter list: measured at 100k turns / 3M COACT edges, 20,000 Turn
  updates took 0.09 s against ~5.6 s, 20,000 COACT updates 1.2 s against ~7.6 s.
- Deleting every row of a big rel table is slow (3M COACT edges: 22 s); :meth:`replace`
  drops and re-creates a rel table instead (the same ``CREATE`` as ``schema.cypher``; 3M
  edges rewritten in ~2.5 s).
- kuzu 0.11.3's WAL replay after a SIGKILL loses parts of *committed* transactions: the
  rows of a ``COPY`` vanished while the ``DELETE`` and ``MERGE … SET`` of the same
  transaction were replayed (measured in the crash harness: a checkpoint's COACT rewrite
  came back with zero edges, an extraction without its episodes and aliases). Two guards:
  every commit is followed by ``CHECKPOINT`` (the replay is needed only if a kill lands in
  that window), and every ``COPY`` of a transaction is written to a redo folder
  (``graph.kuzu.redo``, Arrow IPC, fsync'ed) before ``COMMIT`` and removed after the
  checkpoint. The next read-write open checks the transaction's sequence number in Meta:
  committed → rows missing from a ``COPY`` are inserted again (a ``replace`` restores the
  table exactly); not committed → the folder is dropped. :attr:`GraphDB.redone` says
  what was restored.
- kuzu 0.11.3 aborts the process when a write meets a full disk (ENOSPC): every write
  checks the free space it may need first (:mod:`.._fs`) and is refused whole with
  :class:`~akasha_explorer.errors.DiskFull`; writes outside a transaction run as checked
  auto-commits followed by ``CHECKPOINT``, so the WAL is empty between writes.
- :func:`graph_lock` names the process holding Kuzu's own lock on the file.
- One thread at a time uses the connection: every statement holds its lock
  (``graph.connection`` of :data:`~akasha_explorer._locks.LOCK_ORDER`), a transaction
  holds it from ``BEGIN`` to its checkpoint, and :meth:`GraphDB.exclusive` lets a caller
  keep it across the Python work around one (a server's fold, in its own thread). A
  statement only runs: it never waits for anything but the connection (what the store
  writes behind is the store's: :mod:`akasha_explorer.store.behind`). What the request
  path reads on every call is kept instead of read: Meta values (:meth:`GraphDB.meta_get`;
  an open transaction's writes reach other threads at its commit) and :meth:`GraphDB.memo`
  values (the tombstones). No second connection: stop 36 tried reads on one beside a
  fold's transaction and met Kuzu's "Timeout waiting for active transactions to leave the
  system before checkpointing". The whole thread model: ``docs/threads.md``.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import re
import threading
from collections.abc import Callable, Iterator, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

import kuzu
import pyarrow as pa

from .._fs import GRAPH_RESERVE, WRITE_FACTOR, disk_full, ensure_free
from .._locks import ordered_lock
from .._proc import trim_heap
from .._timing import phase
from ..errors import DiskFull, ReadOnlyStore, SchemaMismatch, StoreError, StoreLocked
from .migrations import MIGRATIONS, SCHEMA_VERSION
from .redo import RedoFolder, RedoOp
from .reopen import REOPEN_AFTER, REOPEN_GROWTH, ReopenPolicy

__all__ = ["EXTRACT_PENDING_KEY", "GRAPH_SEQ_KEY", "LAST_CONTEXT_KEY", "TX_SEQ", "GraphDB",
           "graph_lock"]

log = logging.getLogger(__name__)

TX_SEQ = "tx_seq"
"""Meta key: sequence number of the last committed transaction that had a redo folder."""
EXTRACT_PENDING_KEY = "extract_pending"
"""Meta key: the nodes (JSON list) an ingest wrote whose extraction has not committed yet."""
GRAPH_SEQ_KEY = "graph_seq"
"""Meta key: the newest journal record of stored turns (``add_turn``'s write-behind) whose
rows the graph holds."""
LAST_CONTEXT_KEY = "brief.last_context"
"""Meta key: the handle map of the last context block, as versions before stop 41 saved it
(now a file in the store's cache folder, :mod:`akasha_explorer.brief.api`); nothing reads
it, and a forget that names it drops it."""


_WRITES = re.compile(r"\b(CREATE|MERGE|SET|DELETE|COPY|DROP|ALTER|INSTALL|LOAD)\b")
"""Cypher keywords of a statement that writes (our Cypher writes keywords in capitals)."""
_ROW_BYTES = 256
"""Bytes assumed per row of an ``UNWIND`` batch when checking free space."""
SMALL_INSERT_ROWS = 512
"""Node rows up to which :meth:`GraphDB.copy` inserts by ``LOAD FROM … CREATE`` instead of
``COPY`` (see ``GraphDB._small_insert``; equal cost at ~1,000 rows)."""


def graph_lock(path: Path) -> tuple[str, int] | None:
    """Who holds Kuzu's own lock on the database file ``path``: ``("write", pid)`` for a
    read-write open, ``("read", pid)`` for a read-only one, None when nobody (or only this
    process). Kuzu 0.11 takes a POSIX ``fcntl`` lock on the file (write lock read-write,
    read lock read-only); ``F_GETLK`` asks for the holder without taking anything."""
    import fcntl
    import struct

    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        probe = struct.pack("hhqqi", fcntl.F_WRLCK, 0, 0, 0, 0)
        typ, _, _, _, pid = struct.unpack("hhqqi", fcntl.fcntl(fd, fcntl.F_GETLK, probe))
    except OSError:
        return None
    finally:
        os.close(fd)
    if typ == fcntl.F_WRLCK:
        return "write", pid
    if typ == fcntl.F_RDLCK:
        return "read", pid
    return None


def _rel_table_ddl(table: str) -> str | None:
    """The ``CREATE REL TABLE`` statement of ``table`` in ``schema.cypher`` (None if absent).

    >>> _rel_table_ddl("COACT")
    'CREATE REL TABLE COACT(FROM Turn TO Turn, weight DOUBLE, last_ts DOUBLE, co_count INT64)'
    """
    head = f"CREATE REL TABLE {table}("
    return next((s for s in _schema_statements() if s.startswith(head)), None)


def _one(result: kuzu.QueryResult | list[kuzu.QueryResult]) -> kuzu.QueryResult:
    """The result of one statement (Kuzu returns a list for a multi-statement query,
    which this layer never sends)."""
    if isinstance(result, list):
        raise StoreError(f"one Cypher statement at a time, not {len(result)}")
    return result


def _schema_statements() -> list[str]:
    text = resources.files(__package__).joinpath("schema.cypher").read_text("utf-8")
    body = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("//"))
    return [s.strip() for s in body.split(";") if s.strip()]


def buffer_pool_bytes() -> int:
    """Kuzu's buffer pool: ``$AKASHA_KUZU_BUFFER_POOL_MB`` if set, else Kuzu's default (0:
    80 % of RAM). Measured at 100k nodes / 3M edges (issue 14): the pool holds ~80 MB after
    a checkpoint's COACT rewrite, and a rewrite does not fit in 256 MB ("Buffer manager
    exception: … the buffer pool is full") — so no smaller default; the memory a checkpoint
    leaves is the C heap's (``Store.checkpoint`` hands it back).

    >>> buffer_pool_bytes() >= 0
    True
    """
    env = os.environ.get("AKASHA_KUZU_BUFFER_POOL_MB", "").strip()
    if not env:
        return 0
    try:
        return max(0, int(env)) << 20
    except ValueError:
        raise StoreError(f"AKASHA_KUZU_BUFFER_POOL_MB={env!r} is not a whole number of MB"
                         ) from None


class GraphDB:
    """A Kuzu database file opened read-write or read-only, with its schema ensured."""

    def __init__(self, path: Path, *, read_only: bool = False,
                 reopen_after: int = REOPEN_AFTER, reopen_growth: int = REOPEN_GROWTH) -> None:
        self.path = Path(path)
        self.reopen = ReopenPolicy(reopen_after, reopen_growth)
        """When this database is closed and opened again (:meth:`reopen_if_due`)."""
        self.read_only = read_only
        if not read_only and not self.path.exists():
            ensure_free(self.path.parent, GRAPH_RESERVE, "creating the graph")
        try:
            self._db = self._open_db()
        except RuntimeError as e:
            msg = str(e)
            if "lock" in msg.lower():
                raise StoreLocked(
                    f"the graph {self.path} is held by another process ({msg}); close it or "
                    "wait for it to finish") from e
            if "shadow" in msg.lower() and read_only:
                raise StoreError(
                    f"the graph {self.path} has a checkpoint a crash or a full disk interrupted "
                    f"({msg}); Kuzu finishes it only in a read-write open — run `akasha doctor "
                    f"{self.path.parent} --repair` once (with some free space), then read "
                    "again") from e
            if disk_full(e):
                raise DiskFull(f"cannot open the graph {self.path}: the disk is full ({msg}); "
                               "free some space and retry") from e
            raise StoreError(f"cannot open the graph {self.path}: {msg}") from e
        self._conn = kuzu.Connection(self._db)
        self.reopened = 0
        """Times the database was closed and opened again to give back Kuzu's memory."""
        self._use = ordered_lock("graph.connection", reentrant=True)
        """Held by every statement, and by a transaction from ``BEGIN`` to its checkpoint:
        one thread at a time uses the connection (:meth:`exclusive`)."""
        self._tx_owner: int | None = None   # the thread inside the open transaction
        self._meta: dict[str, str | None] = {}     # committed Meta values read or written
        self._meta_tx: dict[str, str | None] = {}  # the open transaction's Meta writes
        self._memo: dict[str, Any] = {}            # see memo()
        self._tx_bytes = 0
        self._redo: list[RedoOp] = []
        self._redo_folder = RedoFolder(self.path)
        self._node_props: dict[str, list[str]] = {}   # node table -> its properties, in order
        self._rels: frozenset[str] | None = None       # the rel tables' names (read once)
        self.redone: dict[str, int] = {}
        """Rows restored from the redo folder at open (table -> rows), empty normally."""
        if not read_only:
            self._ensure_schema()
            self._recover()
        self.schema_version = self._read_version()
        if self.schema_version != SCHEMA_VERSION:
            raise SchemaMismatch(
                f"graph schema version {self.schema_version} at {self.path}, this code needs "
                f"{SCHEMA_VERSION}; open it read-write once with this version to migrate "
                "(e.g. `akasha doctor STORE --repair`)")

    @property
    def reopen_after(self) -> int:
        """:data:`~.reopen.REOPEN_AFTER` for this database (settable)."""
        return self.reopen.after

    @reopen_after.setter
    def reopen_after(self, value: int) -> None:
        self.reopen.after = value

    @property
    def reopen_growth(self) -> int:
        """:data:`~.reopen.REOPEN_GROWTH` for this database (settable)."""
        return self.reopen.growth

    @reopen_growth.setter
    def reopen_growth(self, value: int) -> None:
        self.reopen.growth = value

    # -- threads ---------------------------------------------------------------------------
    @property
    def _in_tx(self) -> bool:
        """Whether *this thread* is inside the open transaction."""
        return self._tx_owner == threading.get_ident()

    @property
    def in_transaction(self) -> bool:
        """Whether the calling thread is inside the open transaction (a statement it runs
        joins it). Thread-safety: any thread, lock-free."""
        return self._in_tx

    @contextlib.contextmanager
    def exclusive(self) -> Iterator[None]:
        """Hold the connection for this block: another thread's statement waits until it
        ends (a transaction holds it anyway; this lets a caller keep it across the Python
        work around one, e.g. a fold and its bookkeeping). Never wait inside it for
        another thread that reads the graph (the mirror's load reads the edges in a thread
        of its own) nor for a lock that comes before ``graph.connection``.
        Thread-safety: any thread; takes ``graph.connection``."""
        with self._use:
            yield

    def memo(self, key: str, load: Callable[[], Any]) -> Any:
        """A value read from the graph once and kept until :meth:`forget_memo` (the writer
        of what it reads calls it; a value read inside a transaction is not kept): what
        the request path reads on every call (the tombstones) without a statement, and so
        without waiting for a fold another thread is writing. Thread-safety: any thread;
        ``load`` runs holding ``graph.connection``."""
        try:
            return self._memo[key]
        except KeyError:
            pass
        with self._use:
            if key not in self._memo:
                value = load()
                if self._in_tx:   # may hold this transaction's uncommitted writes
                    return value
                self._memo[key] = value
            return self._memo[key]

    def forget_memo(self, key: str) -> None:
        """Drop a :meth:`memo` value (its rows are being written)."""
        self._memo.pop(key, None)

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

    def _need(self, extra: int = 0) -> None:
        """Refuse a graph write the disk may not hold (see :mod:`.._fs`): the
        reserve plus :data:`WRITE_FACTOR` times the data of this transaction so far."""
        self._tx_bytes += extra
        ensure_free(self.path.parent, GRAPH_RESERVE + WRITE_FACTOR * self._tx_bytes,
                    "a write to the graph")

    def execute(self, query: str, params: dict[str, Any] | None = None) -> Any:
        """Run one Cypher statement with parameters; returns Kuzu's QueryResult.

        A statement that writes (``CREATE``, ``MERGE``, ``SET``, ``DELETE`` …) outside a
        :meth:`transaction` runs in one of its own, so that every write is checked for
        free space first and checkpointed after (Kuzu's WAL stays empty between writes:
        nothing is left for a close to write on a full disk)."""
        with self._use:
            if not self.read_only and _WRITES.search(query):
                if "Meta" in query:   # a Meta write not by meta_set: its cache is unsure
                    self._meta.clear()
                    self._meta_tx.clear()
                return self._write(query, params)
            return self._run(query, params)

    def _write(self, query: str, params: dict[str, Any] | None) -> Any:
        """One writing statement (the caller holds the connection): inside the open
        transaction, its bytes counted; outside, a checked auto-commit."""
        if not self._in_tx:
            return self._autocommit(lambda: self._run(query, params), len(query))
        self._need(len(query) + 64 * len(params or {}))
        return self._run(query, params)

    def _open_db(self) -> kuzu.Database:
        return kuzu.Database(str(self.path), read_only=self.read_only,
                             buffer_pool_size=buffer_pool_bytes())

    def _checkpoint(self) -> None:
        """Fold Kuzu's WAL into the file; every :data:`REOPEN_AFTER` of them, or once the
        process grew :data:`REOPEN_GROWTH` since the first, the next write first reopens
        the database (:meth:`reopen_if_due`)."""
        self._conn.execute("CHECKPOINT")
        self.reopen.checkpointed()

    @property
    def reopen_due(self) -> bool:
        """Whether the next write (or :meth:`reopen_if_due`) reopens the database first."""
        return not self.read_only and self.reopen.due

    def reopen_if_due(self) -> None:
        """Close and open the database again once :data:`REOPEN_AFTER` checkpoints ran
        since it was opened, or the process grew :data:`REOPEN_GROWTH` since its first
        checkpoint, and hand the freed C heap back to the system (``malloc_trim``) —
        called before a write and by the store once its checkpoint is done (so the pages
        an ingest's replay touched are not kept until the next write), outside a
        transaction, when no result of an earlier statement is being read (every reader
        here takes its rows whole), and the WAL is empty (every write is checkpointed).
        Readers in other processes cannot slip in meanwhile: a read-only open of the store
        is refused while ``writer.lock`` is held (:class:`~akasha_explorer.store.store.Store`)."""
        if not self.reopen_due or self._in_tx:
            return
        with self._use:
            if not self.reopen_due:   # another thread reopened it meanwhile
                return
            self.reopen.reset()
            with contextlib.suppress(Exception):
                self._conn.close()
            self._db.close()
            try:
                self._db = self._open_db()
            except RuntimeError as e:
                raise StoreError(
                    f"the graph {self.path} was closed to give back Kuzu's memory and could "
                    f"not be opened again ({e}); nothing acknowledged is lost (the journal "
                    "holds it): close the store and open it again") from e
            self._conn = kuzu.Connection(self._db)
            self.reopened += 1
        trim_heap()

    def _autocommit(self, write: Any, nbytes: int) -> Any:
        """One write outside a :meth:`transaction`: checked for free space first, Kuzu's
        own auto-commit, then ``CHECKPOINT`` (the WAL stays empty between writes)."""
        self._check_write()
        self.reopen_if_due()
        self._tx_bytes = 0
        self._need(nbytes)
        out = write()
        self._checkpoint()
        return out

    def _run(self, query: str, params: dict[str, Any] | None) -> Any:
        with self._full_disk_is_diskfull():
            return self._conn.execute(query, params or {})

    @contextlib.contextmanager
    def _full_disk_is_diskfull(self) -> Iterator[None]:
        """Kuzu's RuntimeError for a full disk, raised as :class:`DiskFull`; the rest as is."""
        try:
            yield
        except RuntimeError as e:
            if disk_full(e):
                raise DiskFull(f"the disk of {self.path} is full: {e}") from e
            raise

    def rows(self, query: str, params: dict[str, Any] | None = None) -> list[dict[str, Any]]:
        """Run a query and return its rows as dicts (small results only)."""
        with self._use:
            res = _one(self._conn.execute(query, params or {}))
            cols = res.get_column_names()
            out = []
            while res.has_next():
                out.append(dict(zip(cols, res.get_next(), strict=True)))
        return out

    def arrow(self, query: str, params: dict[str, Any] | None = None) -> pa.Table:
        """Run a query and return the whole result as a pyarrow Table."""
        with self._use:
            res = _one(self._conn.execute(query, params or {}))
            return res.get_as_arrow(chunk_size=1_000_000)

    def copy(self, table: str, data: pa.Table) -> None:
        """Bulk-insert ``data`` into ``table`` with ``COPY`` (columns in schema order;
        for rel tables the first two columns are the FROM and TO primary keys)."""
        self._check_write()
        with self._use:
            if data.num_rows == 0:
                return
            if not table.isidentifier():
                raise ValueError(f"bad table name {table!r}")
            if not self._in_tx:
                self._autocommit(lambda: self._copy(table, data), data.nbytes)
                return
            self._need(data.nbytes)
            self._redo.append(("copy", table, data))
            self._copy(table, data)

    def _copy(self, table: str, data: pa.Table) -> None:
        props = self._small_insert(table, data)
        if props is not None:  # ``CREATE`` per row: a few rows cost a third of a COPY
            _load_src = data.rename_columns([f"_c{i}" for i in range(data.num_columns)])
            sets = ", ".join(f"`{p}`: _c{i}" for i, p in enumerate(props))
            with self._full_disk_is_diskfull():
                self._conn.execute(f"LOAD FROM _load_src CREATE (:{table} {{{sets}}})")
            return
        _copy_src = data  # Kuzu scans this local variable by name
        with self._full_disk_is_diskfull():
            self._conn.execute(f"COPY {table} FROM _copy_src")

    def _small_insert(self, table: str, data: pa.Table) -> list[str] | None:
        """The property names ``data``'s columns fill, in order, when its rows are better
        inserted by ``LOAD FROM … CREATE`` than by ``COPY`` (None: use ``COPY``).

        A ``COPY`` into a node table costs about the same for 1 row as for 1,000 (measured
        on the demo store, with its commit and checkpoint: 33–36 ms for 1 Turn, 9 ms by
        ``CREATE``; equal at 1,024 rows) — the cost of an ``add_turn``'s few new rows. Rel
        tables stay on ``COPY``: there ``CREATE`` moved the same cost into the checkpoint
        (measured: 80 vs 82 ms for a turn's rels; the module docstring says why). A column
        of Arrow's null type (no values to infer a type from) stays on ``COPY``, which takes
        it from the schema."""
        if data.num_rows > SMALL_INSERT_ROWS or any(pa.types.is_null(f.type) for f in data.schema):
            return None
        props = self._node_props.get(table)
        if props is None:
            if table in self._rel_tables():
                return None
            props = [r["name"] for r in self.rows(f"CALL table_info('{table}') RETURN *")]
            self._node_props[table] = props
        return props if len(props) == data.num_columns else None

    def replace(self, table: str, data: pa.Table) -> None:
        """Make ``table`` hold exactly ``data`` (delete every row, then ``COPY``); inside a
        transaction, like :meth:`copy`, restorable from the redo folder."""
        self._check_write()
        with self._use:
            if not table.isidentifier():
                raise ValueError(f"bad table name {table!r}")
            if not self._in_tx:  # a delete and a copy: all or nothing
                with self.transaction():
                    self.replace(table, data)
                return
            self._need(data.nbytes)
            self._delete_all(table)
            self._redo.append(("replace", table, data))
            if data.num_rows:
                self._copy(table, data)

    def _delete_all(self, table: str) -> None:
        if table in self._rel_tables():
            ddl = _rel_table_ddl(table)
            if ddl is not None:  # as schema.cypher makes it; far faster than deleting rows
                self._conn.execute(f"DROP TABLE {table}")
                self._conn.execute(ddl)
            else:
                self._conn.execute(f"MATCH ()-[e:{table}]->() DELETE e")
        else:
            self._conn.execute(f"MATCH (x:{table}) DETACH DELETE x")

    def _rel_tables(self) -> frozenset[str]:
        """The rel tables' names, read once: tables are made only by the schema and its
        migrations at open (:meth:`replace` re-creates one under its own name). Asked of
        Kuzu at every ``copy``, it cost a fold 13 statements (~12 ms on the demo store)."""
        if self._rels is None:
            self._rels = frozenset(
                r["name"] for r in self.rows("CALL show_tables() WHERE type = 'REL' RETURN name"))
        return self._rels

    def load_from(self, query: str, data: pa.Table) -> None:
        """Run ``LOAD FROM <data> <query>``: ``query`` reads the Arrow table's columns by
        name (e.g. ``MATCH (t:Turn {uid: u}) SET t.strength = s``). One statement for any
        number of rows, and far cheaper per row than :meth:`unwind` (module docstring)."""
        self._check_write()
        with self._use:
            if data.num_rows == 0:
                return
            if not self._in_tx:
                self._autocommit(lambda: self._load_from(query, data), data.nbytes)
                return
            self._need(data.nbytes)
            self._load_from(query, data)

    def _load_from(self, query: str, data: pa.Table) -> None:
        _load_src = data  # Kuzu scans this local variable by name
        with self._full_disk_is_diskfull():
            self._conn.execute(f"LOAD FROM _load_src {query}")

    def unwind(self, query: str, rows: Sequence[dict[str, Any]], batch: int = 5000) -> None:
        """Run ``UNWIND $rows AS r <query>`` in batches (one statement per batch)."""
        self._check_write()
        with self._use:
            if not rows:
                return
            stmt = f"UNWIND $rows AS r {query}"
            for i in range(0, len(rows), batch):
                part = {"rows": list(rows[i:i + batch])}
                if not self._in_tx:
                    self._autocommit(functools.partial(self._run, stmt, part),
                                     _ROW_BYTES * len(part["rows"]))
                    continue
                self._need(_ROW_BYTES * len(part["rows"]))
                self._run(stmt, part)

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
        with self._use:   # until the checkpoint: no other thread's statement in between
            self.reopen_if_due()
            self._tx_bytes = 0
            self._need()  # before BEGIN: a refused write changes nothing
            self._conn.execute("BEGIN TRANSACTION")
            self._tx_owner = threading.get_ident()
            self._redo, self._meta_tx = [], {}
            try:
                yield
                if self._redo:
                    seq = int(self.meta_get(TX_SEQ, "0") or 0) + 1
                    self.meta_set(TX_SEQ, str(seq))
                    with phase("kuzu_commit"):
                        self._redo_folder.write(seq, self._redo)
                self._need()  # the COMMIT and CHECKPOINT write it all once more
            except BaseException:
                self._tx_owner = None
                self._redo, self._meta_tx = [], {}
                with contextlib.suppress(Exception):
                    self._conn.execute("ROLLBACK")
                raise
            self._tx_owner = None
            redo, self._redo = self._redo, []
            with phase("kuzu_commit"):
                self._conn.execute("COMMIT")
                self._meta.update(self._meta_tx)
                self._meta_tx = {}
                self._checkpoint()
                if redo:
                    self._redo_folder.drop()

    # -- redo (see the module docstring and .redo) ------------------------------------------
    @property
    def redo_path(self) -> Path:
        """The redo folder of the transaction in flight (absent between transactions)."""
        return self._redo_folder.path

    def _recover(self) -> None:
        """At a read-write open: finish or drop a transaction a crash left a redo folder for."""
        folder = self._redo_folder
        got = folder.read()
        if got is None or int(self.meta_get(TX_SEQ, "0") or 0) != got[0]:
            folder.drop()   # never published whole, or its transaction never committed
            return
        restored: dict[str, int] = {}
        self._conn.execute("BEGIN TRANSACTION")
        try:
            for kind, table, data in got[1]:
                n = self._restore(kind, table, data)
                if n:
                    restored[table] = restored.get(table, 0) + n
        except BaseException as e:
            with contextlib.suppress(Exception):
                self._conn.execute("ROLLBACK")
            if isinstance(e, Exception):
                raise StoreError(
                    f"cannot restore the interrupted transaction in {self.redo_path} ({e}); "
                    "the graph may lack its rows — move that folder away to open the store "
                    "without it, then run `akasha doctor`") from e
            raise
        self._conn.execute("COMMIT")
        self._conn.execute("CHECKPOINT")
        folder.drop()
        self.redone = restored
        if restored:
            log.warning("graph %s: kuzu's WAL replay lost rows of a committed transaction; "
                        "restored from its redo folder: %s", self.path,
                        ", ".join(f"{t} {n}" for t, n in sorted(restored.items())))

    def _restore(self, kind: str, table: str, data: pa.Table) -> int:
        """Make a committed COPY hold again; returns how many rows had to be re-inserted."""
        cols = data.column_names
        if table in self._rel_tables():  # COPY columns: from, to, then properties in order
            conn = self.rows(f"CALL show_connection('{table}') RETURN *")[0]
            src, dst = conn["source table primary key"], conn["destination table primary key"]
            props = [r["name"] for r in self.rows(f"CALL table_info('{table}') RETURN *")]
            have = self.arrow(f"MATCH (a)-[e:{table}]->(b) RETURN a.{src} AS _f, b.{dst} AS _t"
                              + "".join(f", e.{c} AS _p{i}"
                                        for i, c in enumerate(props[: len(cols) - 2])))
        else:  # COPY columns: the properties in schema order; compare primary keys
            info = self.rows(f"CALL table_info('{table}') RETURN *")
            pos = next(k for k, r in enumerate(info) if r["primary key"])
            have = self.arrow(f"MATCH (x:{table}) RETURN x.{info[pos]['name']} AS _k")
            cols = [cols[pos]]
        want = list(zip(*(data.column(c).to_pylist() for c in cols), strict=True))
        got = list(zip(*(have.column(i).to_pylist() for i in range(len(cols))), strict=True)) \
            if have.num_rows else []
        if kind == "replace":
            if sorted(map(repr, got)) == sorted(map(repr, want)):
                return 0
            self._delete_all(table)
            if data.num_rows:
                self._copy(table, data)
            return data.num_rows
        present = set(map(repr, got))
        missing = [i for i, row in enumerate(want) if repr(row) not in present]
        if missing:
            self._copy(table, data.take(missing))
        return len(missing)

    # -- meta ------------------------------------------------------------------------------
    def meta_get(self, key: str, default: str | None = None) -> str | None:
        """A value of the Meta table (``default`` when absent). Values read or written are
        kept (every Meta write goes through :meth:`meta_set` / :meth:`meta_delete`; a
        transaction's writes count for other threads once it commits), so a caller on the
        request path reads none from Kuzu."""
        if self._in_tx and key in self._meta_tx:
            value = self._meta_tx[key]
        elif key in self._meta:
            value = self._meta[key]
        else:
            with self._use:
                rows = self.rows("MATCH (m:Meta {key: $k}) RETURN m.value AS v", {"k": key})
                value = rows[0]["v"] if rows else None
                if not self._in_tx:
                    self._meta[key] = value
        return default if value is None else value

    def meta_set(self, key: str, value: str) -> None:
        """Set a value of the Meta table."""
        self._meta_write(key, value, "MERGE (m:Meta {key: $k}) SET m.value = $v", {"v": value})

    def meta_delete(self, key: str) -> None:
        """Remove a value from the Meta table."""
        self._meta_write(key, None, "MATCH (m:Meta {key: $k}) DELETE m", {})

    def _meta_write(self, key: str, value: str | None, stmt: str,
                    params: dict[str, Any]) -> None:
        self._check_write()
        with self._use:
            self._write(stmt, {"k": key, **params})
            (self._meta_tx if self._in_tx else self._meta)[key] = value

    def count(self, label: str) -> int:
        """Number of nodes with ``label`` (or rels, for a rel table name)."""
        if not label.isidentifier():
            raise ValueError(f"bad table name {label!r}")
        q = (f"MATCH ()-[e:{label}]->() RETURN count(e) AS c" if label in self._rel_tables()
             else f"MATCH (n:{label}) RETURN count(n) AS c")
        return int(self.rows(q)[0]["c"])

    def close(self) -> None:
        """Close the connection and the database (Kuzu checkpoints on a clean close)."""
        with self._use:
            with contextlib.suppress(Exception):
                self._conn.close()
            with contextlib.suppress(Exception):
                self._db.close()
