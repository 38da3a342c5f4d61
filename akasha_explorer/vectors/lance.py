"""The one thin layer over LanceDB: the ``messages`` and ``turns`` tables (SPEC §1).

LanceDB is the truth: every raw message verbatim with its sha256, plus the vectors. Each
``add`` is a new version and fragment, so callers append in batches; :meth:`optimize`
compacts and, with ``cleanup=True``, deletes old versions (needed after ``forget`` so the
forgotten text leaves the disk).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import logging
import threading
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import lancedb
import numpy as np
import pyarrow as pa
from numpy.typing import NDArray

from .._fs import WRITE_FACTOR, disk_full, ensure_free
from .._locks import ordered_lock
from ..errors import DiskFull, ReadOnlyStore

__all__ = ["LANCE_CACHE_BYTES", "VectorDB", "lance_session", "messages_schema", "sql_str",
           "turns_schema"]

log = logging.getLogger(__name__)


def sql_str(value: str) -> str:
    """A SQL string literal for LanceDB filters (single quotes doubled).

    >>> sql_str("it's")
    "'it''s'"
    """
    return "'" + value.replace("'", "''") + "'"


def messages_schema(dim: int) -> pa.Schema:
    """Arrow schema of the ``messages`` table."""
    return pa.schema([
        pa.field("uid", pa.string(), nullable=False),
        pa.field("node", pa.string(), nullable=False),
        pa.field("session", pa.string(), nullable=False),
        pa.field("seq", pa.int64(), nullable=False),
        pa.field("ord", pa.int64(), nullable=False),
        pa.field("ts", pa.float64(), nullable=False),
        pa.field("role", pa.string(), nullable=False),
        pa.field("speaker", pa.string()),
        pa.field("text", pa.string(), nullable=False),
        pa.field("sha256", pa.string(), nullable=False),
        pa.field("source", pa.string()),
        pa.field("ext_id", pa.string()),
        pa.field("meta", pa.string()),
        pa.field("flags", pa.list_(pa.string())),
        pa.field("sigma", pa.float64()),
        pa.field("terms", pa.list_(pa.string())),
        pa.field("vector", pa.list_(pa.float32(), dim)),
    ])


def turns_schema(dim: int) -> pa.Schema:
    """Arrow schema of the ``turns`` table."""
    return pa.schema([
        pa.field("uid", pa.string(), nullable=False),
        pa.field("session", pa.string(), nullable=False),
        pa.field("ord", pa.int64(), nullable=False),
        pa.field("ts", pa.float64(), nullable=False),
        pa.field("message_uids", pa.list_(pa.string())),
        pa.field("vector", pa.list_(pa.float32(), dim)),
    ])


LANCE_RESERVE = 4 << 20
"""Bytes kept free for a LanceDB write beyond its data (manifests, transaction files)."""


@contextlib.contextmanager
def _dropping_versions(path: Any) -> Iterator[None]:
    """A cleanup of every older version (``cleanup_older_than=0``) without LanceDB's
    warning about readers of those versions — only the writer-lock holder calls it, and
    read-only opens are refused while it holds the store — and a full disk as DiskFull."""
    with warnings.catch_warnings(), _full_disk(path):
        warnings.filterwarnings("ignore", message=r"optimize\(cleanup_older_than=0\)")
        yield


@contextlib.contextmanager
def _full_disk(path: Any) -> Iterator[None]:
    """LanceDB's "No space left on device" (a RuntimeError or OSError) as DiskFull."""
    try:
        yield
    except (OSError, RuntimeError) as e:
        if disk_full(e):
            raise DiskFull(f"the disk of {path} is full: {e}; free some space and retry") from e
        raise


def vectors_column(table: pa.Table, name: str = "vector") -> NDArray[np.float32]:
    """The fixed-size-list vector column as an (n, dim) float32 array (no Python loop)."""
    col = table.column(name).combine_chunks()
    if len(col) == 0:
        return np.zeros((0, col.type.list_size), np.float32)
    flat = col.flatten().to_numpy(zero_copy_only=False)
    return np.ascontiguousarray(flat.reshape(len(col), col.type.list_size), dtype=np.float32)


LANCE_CACHE_BYTES = 16 << 20
"""The cap of LanceDB's metadata cache and of its index cache (one process-wide session).
Unbounded by default, the metadata cache keeps every version's manifest a table was read
or written at: measured, 400 small appends grew the process's C heap by 63 MB (160 KB
each; 33 KB each with :meth:`VectorDB.tidy` every 64) — the soak's agent at 10k turns
grew 160 MB per 1,000 ``add_turn`` calls; with this cap, 0.7 KB each. Reads of a compact
store do not notice (ten turns' messages: 2.9 ms either way on the demo, 3.4–3.7 ms at
10k turns)."""

_session: Any = None
_session_lock = threading.Lock()


def lance_session() -> Any:
    """The process's LanceDB session (its caches capped at :data:`LANCE_CACHE_BYTES`)."""
    global _session
    with _session_lock:
        if _session is None:
            _session = lancedb.Session(index_cache_size_bytes=LANCE_CACHE_BYTES,
                                       metadata_cache_size_bytes=LANCE_CACHE_BYTES)
        return _session


class VectorDB:
    """LanceDB folder with the ``messages`` and ``turns`` tables."""

    def __init__(self, path: Path | str, dim: int, *, read_only: bool = False) -> None:
        self.path = path
        self.dim = dim
        self.read_only = read_only
        self._db = lancedb.connect(str(path), session=lance_session())
        names = set(self._db.list_tables().tables)
        if not read_only:
            if "messages" not in names:
                self._db.create_table("messages", schema=messages_schema(dim))
            if "turns" not in names:
                self._db.create_table("turns", schema=turns_schema(dim))
        self.messages = self._db.open_table("messages")
        self.turns = self._db.open_table("turns")
        self._versions = 0
        self._versions_lock = ordered_lock("vectors.versions")
        self._compacting = ordered_lock("vectors.compacting")
        """Held by :meth:`merge_fragments`, :meth:`tidy` and :meth:`optimize`: one rewrite
        of the tables' files at a time (a server merges in its own thread)."""

    @property
    def versions(self) -> int:
        """Versions this handle wrote since it opened or last compacted (:meth:`tidy`).
        Thread-safety: any thread (a write counts under ``vectors.versions``, and a
        compaction takes back only the versions it saw: a write beside it still counts)."""
        return self._versions

    def _wrote(self) -> None:
        with self._versions_lock:
            self._versions += 1

    def _compacted(self, seen: int) -> None:
        with self._versions_lock:
            self._versions = max(0, self._versions - seen)

    def _check_write(self) -> None:
        if self.read_only:
            raise ReadOnlyStore(f"the vector store {self.path} is open read-only")

    def add(self, table: str, data: pa.Table) -> None:
        """Append rows (one new version); no-op for an empty table. A full disk is
        :class:`~akasha_explorer.errors.DiskFull` (LanceDB commits a version whole or not)."""
        self._check_write()
        if data.num_rows:
            ensure_free(self.path, LANCE_RESERVE + WRITE_FACTOR * data.nbytes,
                        f"adding {data.num_rows} rows to {table}")
            with _full_disk(self.path):
                getattr(self, table).add(data)
            self._wrote()

    def read(self, table: str, columns: Sequence[str] | None = None,
             where: str | None = None) -> pa.Table:
        """All rows (optionally filtered with a SQL ``where``) as a pyarrow Table."""
        t = getattr(self, table)
        if where is None and columns is None:
            return t.to_arrow()
        q = t.search()
        if where is not None:
            q = q.where(where)
        if columns is not None:
            q = q.select(list(columns))
        return q.limit(None).to_arrow()

    def update_columns(self, table: str, key: str, data: pa.Table) -> None:
        """Overwrite some columns of existing rows, matched on ``key`` (one new version; the
        other columns are kept as they are). LanceDB rewrites the matched rows whole, so the
        free space asked for is their size (vectors included); a full disk is
        :class:`~akasha_explorer.errors.DiskFull`."""
        self._check_write()
        if data.num_rows:
            row_bytes = 4 * self.dim + 512   # a vector and its text, roughly
            ensure_free(self.path, LANCE_RESERVE + WRITE_FACTOR * data.num_rows * row_bytes,
                        f"rewriting {data.num_rows} rows of {table}")
            with _full_disk(self.path):
                getattr(self, table).merge_insert(key).when_matched_update_all().execute(data)
            self._wrote()

    def delete(self, table: str, where: str) -> None:
        """Delete the rows matching ``where`` (a new version with a deletion file)."""
        self._check_write()
        with _full_disk(self.path):
            getattr(self, table).delete(where)
        self._wrote()

    def count(self, table: str) -> int:
        return int(getattr(self, table).count_rows())

    def tidy(self) -> None:
        """Merge both tables' fragments and delete every older version's files — what a
        stream of small appends (``add_turn``: a fragment and a version each) needs, or
        reads slow down and the folder grows. Measured on the demo store, 300 ``add_turn``
        calls without it: a read of ten turns' messages 4.3 → 28.6 ms, the folder 2.6 →
        15.7 MB; with it every 64 turns: ≤ 9 ms and 4.2 MB (a pause of ~125 ms, ~200 ms at
        10k turns: it rewrites the small fragments). Only for the process holding the
        writer lock (a reader of an older version would lose its files; read-only opens
        are refused while a writer holds the store). Files no version names (a failed
        write's) are left for :meth:`optimize` with ``cleanup=True``."""
        self._check_write()
        with self._compacting, _dropping_versions(self.path):
            seen = self._versions
            for t in (self.messages, self.turns):
                t.optimize(cleanup_older_than=dt.timedelta(0))
        self._compacted(seen)

    def merge_fragments(self) -> None:
        """The first half of :meth:`tidy`: merge both tables' small fragments into new files,
        deleting none — safe beside this process's readers and writers of the tables (a
        server runs it in its own thread; measured: 1,620 merges beside 150 ``add_turn`` +
        ``context`` calls, every row there, no error). On the demo store after 64 turns:
        merging ~60–75 ms, the version cleanup after it ~20 ms."""
        self._check_write()
        with self._compacting, _full_disk(self.path):
            for t in (self.messages, self.turns):
                t.optimize()

    def optimize(self, *, cleanup: bool = False) -> None:
        """Compact fragments; ``cleanup=True`` also deletes every older version's files
        and leaves no deleted row in any data file (what ``forget`` needs).

        Compaction rewrites a fragment only when enough of it was deleted (lance: 10 %)
        or it is small beside others; below that, a deleted row stays in its data file,
        masked by a deletion file — measured: a forgotten speaker name was still in the
        current data file. So after the cleanup, a table whose latest version still has
        a deletion file is rewritten from its own rows (one new version, every data file
        fresh) and cleaned up again."""
        self._check_write()
        with self._compacting:
            self._optimize(cleanup)

    def _optimize(self, cleanup: bool) -> None:
        seen = self._versions
        for t in (self.messages, self.turns):
            with _dropping_versions(self.path) if cleanup else _full_disk(self.path):
                if not cleanup:
                    t.optimize()
                    continue
                t.optimize(cleanup_older_than=dt.timedelta(0), delete_unverified=True)
                if self.deletion_files(t) > 0:
                    data = t.to_arrow()
                    ensure_free(self.path, LANCE_RESERVE + WRITE_FACTOR * data.nbytes,
                                "rewriting a table without its deleted rows")
                    t.add(data, mode="overwrite")
                    t.optimize(cleanup_older_than=dt.timedelta(0), delete_unverified=True)
        if cleanup:
            self._remove_stray_writes()
        self._compacted(seen)

    def _remove_stray_writes(self) -> None:
        """Delete the temporary files a killed write left in the tables' data folders
        (``.tmp…``: LanceDB writes a data file under a temporary name, then renames it).
        No version names them and LanceDB's cleanup leaves them; a kill during ``forget``
        left one behind (the forgotten rows were in no file, but the folder held a file
        its version does not count). Only under the writer lock, between writes."""
        for name in ("messages", "turns"):
            data = Path(self.path) / f"{name}.lance" / "data"
            if not data.is_dir():
                continue
            for f in data.iterdir():
                if f.name.startswith(".tmp") and f.is_file():
                    log.warning("%s: removing %s, a data file a killed write left", name, f)
                    f.unlink(missing_ok=True)

    @staticmethod
    def deletion_files(table: Any) -> int:
        """How many deletion files the latest version of ``table`` has (rows deleted but
        still in a data file)."""
        meta = table.list_versions()[-1].get("metadata", {})
        return int(meta.get("total_deletion_files", 0) or 0)

    def search(self, table: str, q: NDArray[np.float32], k: int) -> pa.Table:
        """Plain top-``k`` vector search (cosine) — the baseline the engine is compared to."""
        return (getattr(self, table).search(np.asarray(q, np.float32))
                .distance_type("cosine").limit(k).select(["uid", "_distance"]).to_arrow())

    def close(self) -> None:
        close = getattr(self._db, "close", None)   # (not every lancedb release has it)
        if close is not None:
            with contextlib.suppress(Exception):
                close()


def rows_to_dicts(table: pa.Table) -> list[dict[str, Any]]:
    """Rows of a small Arrow table as dicts."""
    return table.to_pylist()
