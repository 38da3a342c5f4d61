"""The recalls a store made, kept as they were made: ``STORE/recalls/``.

A query-log row says what a recall found (its seeds and the items written back); this
folder keeps the whole :class:`~akasha_explorer.engine.trace.RecallTrace` of the newest
:data:`KEEP` logged recalls, as it was made and delivered (``<log uid>.json.gz``), and, once
one is written back, the plan it wrote and who wrote it to which node and when
(``<log uid>.written.json``; :meth:`RecallRecords.load` puts the plan back in the trace —
a commit writes a few hundred bytes, not the whole trace again: ~4 ms of an agent's
``add_turn``; and it is written by the same thread as the records). So a
person can step through the recall an agent actually received — not a re-run on today's
state, which the commits since have changed — and see that it was already written back.

What the files are, and are not:

- **a view, not the truth.** The journal and Kuzu are the memory; a recall's record is
  written after its query-log row, by a thread of its own once it waited :data:`DELAY`
  (serialising a trace cost 3–5 ms on the demo store and ~20 ms at 10k turns with the
  standard library's encoder — not the agent's to wait for, nor the response's to share
  the cores with; the thread still holds the GIL the agent's recall needs, so it encodes
  with orjson straight from the record: ~1 ms at 10k turns, most of it gzip, which lets
  the GIL go; measured in ``akasha bench scale``'s live loop at 10k, p50 13.4 → 9.1–9.8
  ms, 7.4 ms with no records at all), without an fsync; a
  record a kill caught before it was written is missing, and a missing record only means
  :meth:`RecallRecords.load` says so. Every read of the folder waits for the
  records queued before it (:meth:`RecallRecords.flush`). Whether a recall was written
  back is the query-log row's ``committed`` flag (what a commit checks); ``.written.json``
  adds who, where, when;
- **bounded**: the oldest records beyond :data:`KEEP`, or beyond :data:`KEEP_BYTES` in
  all (written-back plans included), are removed as new ones come (a trace grows with
  the memory's co-activation edges: ~40 KB a record on the demo, ~185 KB on a 10k-turn
  store after 2,000 agent loops — 512 of those would be 95 MB);
- **forgotten with what they quote**: a trace holds verbatim messages and node ids, so a
  forget removes every record (:meth:`RecallRecords.clear`) — the rows of the query log stay,
  redacted as before;
- **not exported**: ``format="store"`` exports the memory, not this folder.

>>> import tempfile, pathlib
>>> from akasha_explorer.engine.trace import RecallTrace
>>> rec = RecallRecords(pathlib.Path(tempfile.mkdtemp()))
>>> rec.save("q-1", RecallTrace.empty())
>>> rec.load("q-1").query, rec.written("q-1")
('', None)
>>> rec.mark_written("q-1", node="s:3", by="user", at=1.0)
>>> rec.written("q-1")
{'node': 's:3', 'by': 'user', 'at': 1.0}
>>> rec.load("q-1").writeback is None   # the plan, when the commit gives one
True
"""

from __future__ import annotations

import gzip
import json
import logging
import os
import re
import threading
import time
from pathlib import Path
from typing import Any

from .._locks import ordered_lock
from ..engine._codec import dumps, dumps_view, from_plain
from ..engine.trace import RecallTrace
from ..engine.writeback import WritebackPlan
from ..errors import NotFound

__all__ = ["DELAY", "FOLDER", "KEEP", "KEEP_BYTES", "RecallRecords"]

FOLDER = "recalls"
"""The folder in the store that keeps the records."""

KEEP = 512
"""Logged recalls whose whole trace is kept (the newest); about 40 KB each on the demo."""

KEEP_BYTES = 32 * 1024 * 1024
"""Most bytes the kept records take in all (the newest first; the newest one is always
kept)."""

DELAY = 0.1
"""Seconds a recall's record waits before the writer thread serialises it: the response
that carries the recall goes out first."""

log = logging.getLogger(__name__)

_UID = re.compile(r"^q-[0-9a-f]{1,64}$")


class RecallRecords:
    """The records of one store's logged recalls (see the module docstring)."""

    def __init__(self, store_path: Path, keep: int = KEEP,
                 keep_bytes: int = KEEP_BYTES) -> None:
        self.dir = store_path / FOLDER
        self.keep = keep
        self.keep_bytes = keep_bytes
        self._saved = 0
        self._cv = threading.Condition(ordered_lock("recalls.queue"))
        self._queued: dict[str, tuple[RecallTrace, float]] = {}  # uid -> (trace, when queued)
        self._marks: dict[str, tuple[dict[str, Any], WritebackPlan | None]] = {}  # written
        self._busy = False       # the writer holds a record it took from the queue
        self._hurry = 0          # callers waiting in flush(): no record waits its delay
        self._cleared = 0        # clears so far: a record taken before a clear is dropped
        self._io = ordered_lock("recalls.files")   # the folder: one writer of files at a time
        self._writer: threading.Thread | None = None
        self._closed = False

    def _path(self, log_uid: str, suffix: str) -> Path:
        if not isinstance(log_uid, str) or not _UID.match(log_uid):
            raise NotFound(f"{log_uid!r} is not a query-log uid (q-…); `mem.query_log()` "
                           "lists them")
        return self.dir / f"{log_uid}{suffix}"

    def save(self, log_uid: str, trace: RecallTrace) -> None:
        """Keep ``trace`` as the record of query-log row ``log_uid``: queued for the
        writer thread, which replaces the file whole (a reader sees the old record or the
        new one, never half of one). After :meth:`close` it is written at once."""
        self._path(log_uid, ".json.gz")   # a bad uid is refused here, not in the thread
        with self._cv:
            if not self._closed:
                self._queued[log_uid] = (trace, time.monotonic())
                self._wake()
                return
        with self._io:
            self._write(log_uid, self._encode(trace))

    def _wake(self) -> None:
        """Start the writer thread if it is not running, and wake it (holding ``_cv``)."""
        if self._writer is None or not self._writer.is_alive():
            self._writer = threading.Thread(target=self._write_queued, daemon=True,
                                            name=f"akasha-recalls-{self.dir.parent.name}")
            self._writer.start()
        self._cv.notify_all()

    @staticmethod
    def _encode(trace: RecallTrace) -> bytes:
        # level 1: a third of level 5's time on a recall's trace (1.2 vs 3.2 ms), 10 % bigger;
        # the text of trace.to_json(), without its copy (the GIL this thread holds is the
        # agent's: 1 ms a record on a 10k-turn store)
        return gzip.compress(dumps_view(trace), 1)

    def _replace(self, log_uid: str, suffix: str, data: bytes) -> None:
        """Replace one file of the folder whole, by a rename (the caller holds ``_io``)."""
        self.dir.mkdir(exist_ok=True)
        target = self._path(log_uid, suffix)
        tmp = target.with_name(target.name + ".tmp")
        tmp.write_bytes(data)
        os.replace(tmp, target)

    def _write(self, log_uid: str, data: bytes) -> None:
        """Write one record's file (the caller holds ``_io``), pruning now and then."""
        self._replace(log_uid, ".json.gz", data)
        self._saved += 1
        if self._saved % 32 == 1:
            self._prune()

    def _write_queued(self) -> None:
        """The writer thread: who wrote a recall back (at once), and the queued records,
        oldest first, each once it waited :data:`DELAY` (sooner when the queue is long, a
        reader waits or the store closes), until closed and empty."""
        while True:
            mark: tuple[dict[str, Any], WritebackPlan | None] | None = None
            with self._cv:
                while True:
                    if self._marks:
                        uid = next(iter(self._marks))
                        mark = self._marks.pop(uid)
                        break
                    if not self._queued:
                        if self._closed:
                            return
                        self._cv.wait()
                        continue
                    uid, (trace, at) = next(iter(self._queued.items()))
                    left = at + DELAY - time.monotonic()
                    if left <= 0 or self._closed or self._hurry or len(self._queued) > 32:
                        del self._queued[uid]
                        break
                    self._cv.wait(left)
                cleared, self._busy = self._cleared, True
            try:
                data = (self._encode(trace) if mark is None
                        else self._encode_mark(*mark))
                with self._io:
                    if cleared == self._cleared:   # no forget since it was taken
                        if mark is None:
                            self._write(uid, data)
                        else:
                            self._write_mark(uid, data)
            except Exception as e:  # a view of the recall, not the memory
                log.warning("recall %s: not kept as made: %s", uid, e)
            finally:
                with self._cv:
                    self._busy = False
                    self._cv.notify_all()

    def flush(self) -> None:
        """Wait until every record queued so far is written (or dropped by a clear)."""
        with self._cv:
            self._hurry += 1
            self._cv.notify_all()
            try:
                self._cv.wait_for(lambda: not self._queued and not self._marks
                                  and not self._busy)
            finally:
                self._hurry -= 1

    def close(self) -> None:
        """Write what is queued and stop the writer thread (idempotent); later records are
        written at once."""
        with self._cv:
            self._closed = True
            writer = self._writer
            self._cv.notify_all()
        if writer is not None and writer is not threading.current_thread():
            writer.join()

    def load(self, log_uid: str) -> RecallTrace:
        """The trace of query-log row ``log_uid`` as it was made; raises
        :class:`~akasha_explorer.errors.NotFound` when none is kept."""
        path = self._path(log_uid, ".json.gz")
        self.flush()
        try:
            data = gzip.decompress(path.read_bytes()).decode("utf-8")
        except FileNotFoundError:
            raise NotFound(
                f"the recall {log_uid} was not kept as it was made: only the newest {self.keep} "
                "logged recalls of a writable store are, and a forget removes them all "
                "(its query-log row still says what it found)") from None
        except (OSError, EOFError, UnicodeDecodeError, gzip.BadGzipFile) as e:
            raise NotFound(f"the record of recall {log_uid} cannot be read ({e})") from None
        trace = RecallTrace.from_json(data)
        trace.log_uid = log_uid
        plan = self._written(log_uid).get("plan")
        if trace.writeback is None and isinstance(plan, dict):
            trace.writeback = from_plain(WritebackPlan, plan)
        return trace

    def mark_written(self, log_uid: str, *, node: str, by: str, at: float,
                     plan: WritebackPlan | None = None) -> None:
        """Say that the recall of ``log_uid`` was written back with ``node`` as the turn it
        served, by ``by``, at wall-clock time ``at``, writing ``plan`` (kept beside the
        trace; :meth:`load` puts it back). Queued for the writer thread like a record
        (encoding the plan cost a commit ~2 ms on a 10k-turn store); every read waits
        for it. After :meth:`close` it is written at once."""
        self._path(log_uid, ".written.json")
        done: dict[str, Any] = {"node": node, "by": by, "at": float(at)}
        with self._cv:
            if not self._closed:
                self._marks[log_uid] = (done, plan)
                self._wake()
                return
        with self._io:
            self._write_mark(log_uid, self._encode_mark(done, plan))

    @staticmethod
    def _encode_mark(done: dict[str, Any], plan: WritebackPlan | None) -> bytes:
        return dumps({**done, "plan": plan} if plan is not None else done).encode("utf-8")

    def _write_mark(self, log_uid: str, data: bytes) -> None:
        """Write one ``.written.json`` whole (the caller holds ``_io``)."""
        self._replace(log_uid, ".written.json", data)

    def _written(self, log_uid: str) -> dict[str, Any]:
        try:
            got = json.loads(self._path(log_uid, ".written.json").read_text("utf-8"))
        except (OSError, ValueError):
            return {}
        return got if isinstance(got, dict) else {}

    def written(self, log_uid: str) -> dict[str, Any] | None:
        """Who wrote the recall of ``log_uid`` back, to which node, when (None: not
        recorded)."""
        self.flush()
        got = self._written(log_uid)
        return {k: v for k, v in got.items() if k != "plan"} or None

    def prune(self) -> int:
        """Remove the oldest records beyond :attr:`keep` or :attr:`keep_bytes`; returns
        how many went."""
        self.flush()
        with self._io:
            return self._prune()

    def _prune(self) -> int:
        found = []
        try:
            for p in self.dir.glob("q-*.json.gz"):
                try:
                    st = p.stat()
                except FileNotFoundError:   # gone meanwhile (not by us: we hold _io)
                    continue
                # a written-back record's plan counts too (its depressions: ~50 KB at 10k)
                written = self.dir / f"{p.name.removesuffix('.json.gz')}.written.json"
                try:
                    size = st.st_size + written.stat().st_size
                except FileNotFoundError:
                    size = st.st_size
                found.append((st.st_mtime_ns, p.name, size, p))
        except OSError:
            return 0
        found.sort(reverse=True)   # newest first
        total, n_kept = 0, 0
        for _, _, size, _ in found:
            if n_kept and (n_kept >= self.keep or total + size > self.keep_bytes):
                break
            total, n_kept = total + size, n_kept + 1
        for *_, p in found[n_kept:]:
            uid = p.name.removesuffix(".json.gz")
            for f in (p, self.dir / f"{uid}.written.json"):
                f.unlink(missing_ok=True)
        return len(found) - n_kept

    def clear(self) -> int:
        """Remove every record (a forget: a record may quote what was forgotten); returns
        how many recalls' records went (those still queued are dropped)."""
        with self._io:
            with self._cv:
                self._cleared += 1
                dropped = set(self._queued)
                self._queued.clear()
                self._marks.clear()
            if not self.dir.is_dir():
                return len(dropped)
            for p in self.dir.iterdir():
                if p.name.endswith(".json.gz"):
                    dropped.add(p.name.removesuffix(".json.gz"))
                p.unlink(missing_ok=True)
            return len(dropped)
