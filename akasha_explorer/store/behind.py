"""``add_turn``'s write-behind and the store's one door to Kuzu (issues 28 and 50).

A stored turn costs Kuzu a transaction whatever its size (measured on the demo store, with
the extraction: 162 ms for 1 turn, 204 ms for 32), so ``add_turn`` stores the messages and
vectors in LanceDB, the turn's graph rows in the journal — fsync'ed with its write-back,
before it is acknowledged — and the mirror, which every recall reads. The graph gets the
waiting rows in **one** transaction with their extraction (:meth:`WriteBehind.fold`):
when a reader asks for the graph caught up (:meth:`WriteBehind.caught_up`, what
``Store.graph`` is), at a checkpoint and close, when :data:`FOLD_AFTER` turns wait, or in
``akasha serve`` when no ``add_turn`` came for a while. A kill before the fold loses
nothing: the next read-write open writes the journal's waiting rows (Kuzu's Meta
``graph_seq`` says which are in) before loading the mirror (:meth:`WriteBehind.open`).

:class:`WriteBehind` owns the store's :class:`~akasha_explorer.graphdb.GraphDB`: every
reader of the store gets it through one of two doors, and chooses which by name —

- ``store.graph`` → :meth:`caught_up`: the turns waiting are written first (in the
  caller's thread), so the explorer, the anchors desk, a forget, an export see them;
- ``store.graph_as_is`` → :attr:`db`: the graph as it is, for reads that are right
  without the waiting turns (the anchor lexicon, a mention list, the tombstones, the query
  log, the mirror's load) — what keeps ``add_turn`` and ``context`` off Kuzu's write path.

``GraphDB`` itself never folds: a statement is a statement, in whichever thread runs it.

**Threads and locks** (the whole table: ``docs/threads.md``). A fold may run in any thread
(a server's ``akasha-fold``). It takes ``store.fold`` (one fold, one LanceDB compaction
step or one mirror reload at a time), then holds the connection (``graph.connection``,
:meth:`GraphDB.exclusive <akasha_explorer.graphdb.GraphDB.exclusive>`) until the waiting
list is cut, so no reader sees a turn both in the graph and still waiting; the list itself
is appended and cut under ``store.behind``. The thread that folds reads the graph caught
up without folding again (its extraction reads it), and so does a thread inside a
transaction of its own. Nothing here ever waits for a lock that comes earlier in
:data:`~akasha_explorer._locks.LOCK_ORDER` than one it holds.
"""

from __future__ import annotations

import contextlib
import json
import logging
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from .._locks import ordered_lock
from .._timing import phase
from ..config import Settings
from ..graphdb import GraphDB
from ..graphdb import turns as gt
from ..graphdb.kuzu_db import EXTRACT_PENDING_KEY, GRAPH_SEQ_KEY
from .journal import GRAPH_RECORD, Journal

__all__ = ["FOLD_AFTER", "FOLD_BEHIND_MAX", "WriteBehind"]

log = logging.getLogger(__name__)

FOLD_AFTER = 32
"""Stored turns whose graph rows may wait in the journal before the next ``add_turn``
writes them all (:meth:`WriteBehind.fold`). Measured on the demo store, a fold with its
extraction: 1 turn 162 ms, 8 turns 170 ms, 32 turns 204 ms, 63 turns 446 ms — 32 costs a
turn as little as 64 and holds the store half as long."""
FOLD_BEHIND_MAX = 4 * FOLD_AFTER
"""Stored turns that may wait while a fold is left to another thread
(:attr:`WriteBehind.fold_soon`): past it, the ``add_turn`` that finds them folds them
itself (the turns come faster than the server's thread writes them)."""

Rows = dict[str, Any]


def _turns_of(records: list[tuple[int, Rows]]) -> int:
    return sum(len(r["Turn"]["uid"]) for _, r in records)


class WriteBehind:
    """The turns whose graph rows wait in ``journal``, and the graph ``db`` they are
    written to (see the module docstring). ``settings``: the store's (``EXTRACT``)."""

    def __init__(self, db: GraphDB, journal: Journal, settings: Settings) -> None:
        self.db = db
        """The graph as it is (``store.graph_as_is``); replaced whole by a forget or a
        compaction (``store.graph = …``)."""
        self.journal = journal
        self.settings = settings
        self.fold_soon: Callable[[], Any] | None = None
        """Set by a server: called instead of :meth:`fold` when :data:`FOLD_AFTER` turns
        wait (it wakes the server's own thread, which folds them while the requests go
        on); None: the ``add_turn`` that finds them folds them."""
        self.fold_extract: Callable[[list[str]], Any] | None = None
        """How :meth:`fold` extracts the turns it writes (set by the ingest area, which owns
        extraction; None: they stay in Meta ``extract_pending`` for the next ingest)."""
        self.folds = 0
        """Folds committed: each one wrote mentions and anchors (the store's
        ``anchor_version`` counts them), counted while the fold still holds the
        connection, so a reader that sees the turns in the graph sees the count moved."""
        self.closed = False
        self._fold_lock = ordered_lock("store.fold", reentrant=True)
        self._lock = ordered_lock("store.behind")
        self._waiting: list[tuple[int, Rows]] = []
        """``(journal seq, graph rows)`` of each write-behind batch not in the graph."""
        self._in_fold = 0   # how many of _waiting's first records a fold is writing now
        self._folder: int | None = None   # the thread folding now

    # -- the two doors ---------------------------------------------------------------------
    def caught_up(self) -> GraphDB:
        """The graph with every waiting turn in it: they are folded first, in this thread
        — unless this thread is the one folding, or is inside a transaction of its own
        (it caught up when the transaction began). Thread-safety: any thread; it may wait
        for a fold of another thread, so never call it holding the graph's connection."""
        if self._waiting and self._folder != threading.get_ident() \
                and not self.db.in_transaction:
            self.fold()
        return self.db

    # -- what waits --------------------------------------------------------------------------
    @property
    def count(self) -> int:
        """How many stored turns' graph rows wait in the journal. Thread-safety: any
        thread."""
        with self._lock:
            return _turns_of(self._waiting)

    def records(self) -> list[tuple[int, Rows]]:
        """A copy of the waiting records, oldest first. Thread-safety: any thread."""
        with self._lock:
            return list(self._waiting)

    def add(self, rows: Rows) -> bool:
        """Journal one ingest batch's graph rows (not fsync'ed: the caller's commit is) and
        keep them waiting; True when the caller should :meth:`fold` now (too many wait and
        no server thread takes them, or the server's falls behind). Thread-safety: the
        caller holds the store (appends are the request path's)."""
        with phase("journal"):
            seq = self.journal.append({"kind": GRAPH_RECORD, "rows": rows}, sync=False)
        with self._lock:
            self._waiting.append((seq, rows))
            waiting = _turns_of(self._waiting[self._in_fold:])   # not being written
        if waiting < FOLD_AFTER:
            return False
        if self.fold_soon is not None and waiting < FOLD_BEHIND_MAX:
            self.fold_soon()
            return False
        return True

    @contextlib.contextmanager
    def paused(self) -> Iterator[None]:
        """No fold runs during the block (another thread's waits for it to end; one
        running now ends first): what a mirror reload and LanceDB's compaction need.
        Thread-safety: any thread; takes ``store.fold``."""
        with self._fold_lock:
            yield

    # -- writing -----------------------------------------------------------------------------
    def fold(self) -> int:
        """Write the graph rows of the turns waiting in the journal and their extraction in
        **one** Kuzu transaction; returns how many turns were written (0: none waited, or
        the store is closed). Thread-safety: any thread (a second caller waits, then finds
        nothing left); takes ``store.fold``, then ``graph.connection`` until the waiting
        list is cut, then ``store.behind`` for the cut."""
        with self._fold_lock:
            if self.closed or not self._waiting:
                return 0
            self._folder = threading.get_ident()
            try:
                with self.db.exclusive():
                    with self._lock:
                        todo = list(self._waiting)
                        self._in_fold = len(todo)
                    try:
                        self.journal.sync()  # the graph never holds a turn the journal may lose
                        uids = self.write_graph(gt.merge_graph_rows([r for _, r in todo]),
                                                seq=todo[-1][0], extract=True)
                    finally:
                        with self._lock:
                            self._in_fold = 0
                    with self._lock:
                        self._waiting = self._waiting[len(todo):]
                    self.folds += 1
            finally:
                self._folder = None
            return len(uids)

    def write_graph(self, rows: Rows, *, seq: int | None = None,
                    extract: bool = False) -> list[str]:
        """Write ``rows`` (one batch's or several merged) in one Kuzu transaction, leaving
        their nodes in Meta ``extract_pending`` — or, ``extract=True``, extracting them in
        the same transaction (with :attr:`fold_extract`; without one they stay pending).
        ``seq``: the newest journal record they came from (Meta ``graph_seq``). Returns the
        nodes written. Thread-safety: the caller holds the store, or is the fold."""
        g = self.db
        uids = list(rows["Turn"]["uid"])
        extract = extract and self.settings.EXTRACT and self.fold_extract is not None
        with phase("kuzu"), g.transaction():
            batch = gt.graph_batch(g, rows)
            batch["unforget"] = rows.get("unforget", [])
            pending = None
            if self.settings.EXTRACT and not extract:  # added to what a crash may have left
                try:
                    before = json.loads(g.meta_get(EXTRACT_PENDING_KEY, "") or "[]")
                except ValueError:
                    before = []
                pending = json.dumps(list(dict.fromkeys([*before, *uids])), ensure_ascii=False,
                                     separators=(",", ":"))
            gt.write_ingest_batch(g, batch, extract_pending=pending)
            if extract:
                assert self.fold_extract is not None
                with phase("extract"):
                    self.fold_extract(uids)
            if seq is not None:
                g.meta_set(GRAPH_SEQ_KEY, str(seq))
        return uids

    def close(self) -> None:
        """No fold after this one (a fold of another thread ends first). Thread-safety:
        any thread; takes ``store.fold``."""
        with self._fold_lock:
            self.closed = True

    # -- at open -----------------------------------------------------------------------------
    def open(self, path: Path, *, read_only: bool) -> list[dict[str, list[Any]]]:
        """The journal's write-behind records the graph does not hold (a kill came before
        their fold): a writer writes them now (their extraction waits in Meta
        ``extract_pending`` for the next ingest — the extractor is not the store's to run)
        and returns none; a reader returns their Turn columns for the mirror (every recall
        sees them; the graph's views do not until a writer opens the store). Thread-safety:
        the opening thread, before the store is shared."""
        todo = self._journal_records()
        if not todo:
            return []
        turns = _turns_of(todo)
        if read_only:
            log.warning("store %s: %d stored turns are in the journal only (the writer ended "
                        "before writing them to the graph); recalls see them, the graph's "
                        "views do not until the store is opened for writing", path, turns)
            return [r["Turn"] for _, r in todo]
        self.write_graph(gt.merge_graph_rows([r for _, r in todo]), seq=todo[-1][0])
        log.warning("store %s: %d acknowledged turns were in the journal only (the last "
                    "process ended before writing them to the graph); written now", path, turns)
        return []

    def _journal_records(self) -> list[tuple[int, Rows]]:
        """The journal's write-behind records the graph does not hold (after Meta
        ``graph_seq`` and the last checkpoint)."""
        done = int(self.db.meta_get(GRAPH_SEQ_KEY, "0") or 0)
        since = int(self.db.meta_get("journal_seq", "0") or 0)
        self.journal.seq = max(self.journal.seq, done)  # a seq the graph names is never reused
        return [(int(r["seq"]), r["rows"]) for r in self.journal.read()
                if r.get("kind") == GRAPH_RECORD and int(r.get("seq", 0)) > max(done, since)]
