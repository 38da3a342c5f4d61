"""Append-only, fsync'ed journal: the durability point of every commit (SPEC §1).

Each record is one JSON line written whole and (by default) ``fdatasync``'ed. A write that
fails — a full disk — is cut off again and raises :class:`~akasha_explorer.errors.DiskFull`:
a record is in the journal whole or not at all.
Each record is applied once, in order, on the state Kuzu holds: a checkpoint records the
last folded ``seq`` in Kuzu in the same transaction, and a load skips records up to it.
Records carry absolute new values, except heterosynaptic depression, journaled as its
sources and factor (**[ours]**, a departure from SPEC §1's "absolute values, not deltas":
a hub's out-edges made records of up to 200 KB; see ``Mirror.journal_plan``). A torn
last line (crash mid-write) was never acknowledged and is ignored; so is anything after
it — and it is cut off before the next append, so records written after a crash never sit
behind it. A checkpoint folds the records into Kuzu and then truncates the file.

Record kinds: ``commit`` (a write-back: node state, edges), ``query`` (a query-log row) and
``graph`` (:data:`GRAPH_RECORD`: the graph rows of turns ``add_turn`` stored, written to
Kuzu later — :meth:`Store.fold_graph <akasha_explorer.store.Store.fold_graph>`; Kuzu's
Meta ``graph_seq`` says which are in, and a read-write open writes the rest first).

**Preallocated** (issue 14). An ``fdatasync`` after an append that grows the file must
also commit the new size through the file system's own journal, and on a disk other
processes write to it waits for their metadata too: measured here 0.2–4 ms at the median,
10 ms at p99. So the file is grown :data:`CHUNK` bytes of zeros at a time (one ``fsync``)
and records are written over the zeros: the ``fdatasync`` of a record then flushes data
only (~0.2 ms). JSON lines never hold a NUL byte, so the records end at the first NUL.

Thread-safety: any thread; every method holds the journal's lock (``store.journal``), so a
server's fold thread may ``sync`` while a request appends.

>>> import tempfile, pathlib
>>> j = Journal(pathlib.Path(tempfile.mkdtemp()) / "journal.jsonl")
>>> j.append({"kind": "commit", "x": 1}); j.append({"kind": "commit", "x": 2})
1
2
>>> [r["x"] for r in j.read()], j.path.stat().st_size == CHUNK
([1, 2], True)
>>> j.truncate(); j.read()
[]
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
from pathlib import Path
from typing import Any, BinaryIO

from .._fs import disk_full, fsync_dir, os_error
from .._locks import ordered_lock
from .._timing import phase
from ..errors import DiskFull

__all__ = ["GRAPH_RECORD", "Journal"]

log = logging.getLogger(__name__)


GRAPH_RECORD = "graph"
"""The kind of a journal record that holds stored turns' graph rows (module docstring)."""

CHUNK = 1 << 20
"""Bytes of zeros the journal file grows by (see the module docstring)."""


class Journal:
    """The journal file of one store."""

    def __init__(self, path: Path, *, fsync: bool = True) -> None:
        self.path = Path(path)
        self.fsync = fsync
        self._fh: BinaryIO | None = None
        self.seq = 0
        self.pending = 0
        """Records appended since the last truncate (what a checkpoint will fold)."""
        self._good_end: int | None = None
        """Byte offset after the last complete record :meth:`read` found."""
        self._data_end = 0
        """Byte offset of the first NUL (the end of what was written) when read."""
        self._end = 0
        """Where the next record goes (while the file is open for appending)."""
        self._lock = ordered_lock("store.journal", reentrant=True)

    def scan(self) -> tuple[list[dict[str, Any]], int, int, int]:
        """``(records, torn, good_end, data_end)``: every complete record in order, how
        many lines after them are cut short or unreadable, the byte offset after the last
        good record and the offset where the written bytes end (the first NUL)."""
        if not self.path.exists():
            return [], 0, 0, 0
        raw = self.path.read_bytes()
        stop = raw.find(b"\0")
        data = raw if stop < 0 else raw[:stop]
        lines = data.split(b"\n")
        out: list[dict[str, Any]] = []
        end = 0
        for line in lines[:-1]:
            try:
                out.append(json.loads(line))
            except ValueError:
                break
            end += len(line) + 1
        torn = len(lines) - 1 - len(out) + (1 if lines[-1] else 0)
        return out, torn, end, len(data)

    def read(self) -> list[dict[str, Any]]:
        """Every complete record in order (a torn tail is dropped with a warning)."""
        with self._lock:
            return self._read()

    def _read(self) -> list[dict[str, Any]]:
        out, torn, end, data_end = self.scan()
        if torn:
            log.warning("journal %s: dropping a torn or unreadable record after record %d",
                        self.path, len(out))
        self._good_end, self._data_end = end, data_end
        if out:
            self.seq = max(self.seq, int(out[-1].get("seq", 0)))
        self.pending = len(out)
        return out

    def _open(self) -> None:
        new = not self.path.exists()
        if self._good_end is None:  # appending without a read: find where the records end
            self._read()
        assert self._good_end is not None
        self._fh = open(self.path, "r+b" if not new else "w+b", buffering=0)  # noqa: SIM115
        if new:
            fsync_dir(self.path.parent)
        fd = self._fh.fileno()
        self._end = self._good_end
        if self._data_end > self._end:
            # a crash's torn tail: zero it, or every record appended after it would be
            # unreadable (and dropped, acknowledged commits included) on the next load
            os.pwrite(fd, bytes(self._data_end - self._end), self._end)
            os.fdatasync(fd)
            self._data_end = self._end

    def _reserve(self, fd: int, need: int) -> None:
        """Grow the file with zeros so that ``need`` more bytes fit after the records."""
        size = os.fstat(fd).st_size
        if self._end + need <= size:
            return
        new = size + CHUNK * -(-(self._end + need - size) // CHUNK)
        try:
            os.pwrite(fd, bytes(new - size), size)
            os.fsync(fd)  # the size too
        except OSError:
            with contextlib.suppress(OSError):
                os.ftruncate(fd, size)
            raise

    def append(self, record: dict[str, Any], *, sync: bool | None = None) -> int:
        """Append one record (adds ``seq``); returns its sequence number."""
        with self._lock:
            return self._append(record, sync)

    def _append(self, record: dict[str, Any], sync: bool | None) -> int:
        if self._fh is None:
            self._open()
        assert self._fh is not None
        record = {"seq": self.seq + 1, **record}
        data = (json.dumps(record, ensure_ascii=False, separators=(",", ":"),
                           allow_nan=False) + "\n").encode("utf-8")
        fd = self._fh.fileno()
        start = self._end
        try:
            self._reserve(fd, len(data))
            done = 0
            while done < len(data):  # a write may take only part of the record
                done += os.pwrite(fd, data[done:], start + done)
            if self.fsync if sync is None else sync:
                with phase("journal_fsync"):
                    os.fdatasync(fd)
        except OSError as e:  # all or nothing: zero what this record wrote, then say so
            with contextlib.suppress(OSError):
                size = os.fstat(fd).st_size
                os.pwrite(fd, bytes(max(0, min(len(data), size - start))), start)
            if disk_full(e):
                raise DiskFull(f"the disk of {self.path.parent} is full: the journal record "
                               "was not written and nothing was changed; free some space and "
                               "retry") from e
            raise os_error(e, self.path, "append to the journal") from e
        self._end = start + len(data)
        self.seq += 1
        self.pending += 1
        return self.seq

    def sync(self) -> None:
        """fsync whatever was appended without it."""
        with self._lock:
            if self._fh is not None:
                os.fdatasync(self._fh.fileno())

    def truncate(self) -> None:
        """Empty the journal after a checkpoint (atomic rename of an empty file)."""
        with self._lock:
            self.close()
            tmp = self.path.with_suffix(".tmp")
            with open(tmp, "wb") as fh:
                os.fsync(fh.fileno())
            os.replace(tmp, self.path)
            fsync_dir(self.path.parent)
            self.pending = 0
            self._good_end = self._data_end = self._end = 0

    def close(self) -> None:
        """Close the file handle (appending reopens it)."""
        with self._lock:
            if self._fh is not None:
                self._fh.close()
                self._fh = None
                self._good_end = self._data_end = self._end  # where the next append goes
