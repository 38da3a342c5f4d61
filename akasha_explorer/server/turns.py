"""Group commit of ``add_turn`` (issue 28): the turns that wait for the store while it is
busy are written together, in one ingest and one journal fsync.

A stored turn costs mostly fixed work per write, not per turn: a LanceDB append, a journal
fsync (the Kuzu transaction of its graph rows and extraction — 70–90 ms — waits in the
journal for the next fold, :meth:`Store.fold_graph
<akasha_explorer.store.Store.fold_graph>`). So when eight agents store turns at
once, each one waiting for the store to write alone makes the eighth wait for seven whole
writes. Here the caller that finds no write in progress *leads*: once it holds the store it
takes every turn queued by then (at most one per session, so a session's turns are stored
one after another exactly as they came; at most :data:`MAX_BATCH`) and writes them as one
batch; the others sleep until their turn is written, or until they are asked to lead the
next batch.

One batch, for turns that all passed their checks (the retry key, the recall still valid):

1. each turn without a recall is recalled on its user text (as ``Memory.add_turn`` does);
2. their messages are ingested in **one** ingest (one LanceDB append; their graph rows
   journaled for the next fold, which extracts them) — a refused batch changes nothing,
   and then each turn is stored on its own, so one bad turn gets its own error and the
   others theirs;
3. each recall is written back (:meth:`Store.commit <akasha_explorer.store.Store.commit>`
   with ``sync=False``) and the journal is fsync'ed **once**, before any caller is
   answered: an acknowledged turn is durable, as before.

A batch of one is the same steps as ``Memory.add_turn`` (its retry key looked up once).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .._locks import ordered_lock
from .._timing import phase
from ..engine.trace import RecallTrace
from ..errors import AkashaError, InvalidInput
from ..ingest import importers, pipeline
from ..memory import Memory
from ..model import RawMessage

__all__ = ["MAX_BATCH", "PendingTurn", "TurnWriter"]

MAX_BATCH = 32
"""Most turns written in one batch."""


@dataclass(eq=False)
class PendingTurn:
    """One ``add_turn`` waiting to be written (its arguments checked) and, once written,
    its outcome: ``(node, trace written back, retried)`` or the error."""

    user: str | None
    assistant: str | None
    session: str
    ts: float
    recall: RecallTrace | None = None
    reinforce: bool = False
    turn_id: str | None = None
    by: str = "user"
    """Who stores it (the caller's principal: kept with the recall written back)."""
    speakers: tuple[str | None, str | None] = (None, None)
    """The names the user and the assistant message are stored under."""
    wake: threading.Event = field(default_factory=threading.Event)
    done: bool = False
    result: tuple[str, RecallTrace | None, bool] | None = None
    error: BaseException | None = None

    def outcome(self) -> tuple[str, RecallTrace | None, bool]:
        """The result, or raise the error."""
        if self.error is not None:
            raise self.error
        assert self.result is not None
        return self.result

    def messages(self, seq: int) -> list[RawMessage]:
        """The turn's messages from ``seq`` on (what ``Memory.add_turn`` stores)."""
        texts = [(r, t, w) for r, t, w in (("user", self.user, self.speakers[0]),
                                           ("assistant", self.assistant, self.speakers[1]))
                 if t is not None]
        tid = self.turn_id
        return [RawMessage(self.session, seq + k, self.ts, role, text, speaker=who,
                           source="add_turn",
                           ext_id=None if tid is None else (tid if k == 0 else f"{tid}/{role}"))
                for k, (role, text, who) in enumerate(texts)]


class TurnWriter:
    """The queue of turns waiting for the store, and the batches written from it (see the
    module docstring). ``run(fn)`` runs ``fn`` holding the store (the service's lock)."""

    def __init__(self, mem: Memory, run: Callable[[Callable[[], Any]], Any]) -> None:
        self.mem = mem
        self._run = run
        self._lock = ordered_lock("server.turns")
        self._queue: list[PendingTurn] = []
        self._busy = False
        self.last_write = time.monotonic()
        """When the last batch was written (``time.monotonic``; the server's idle fold)."""

    def write(self, turn: PendingTurn) -> tuple[str, RecallTrace | None, bool]:
        """Store ``turn`` — in a batch this caller leads, or one another caller leads — and
        return its outcome."""
        with self._lock:
            self._queue.append(turn)
            lead = not self._busy
            self._busy = True
        if not lead:
            with phase("batch_wait"):
                turn.wake.wait()
        if turn.done:
            return turn.outcome()
        batch: list[PendingTurn] = []
        try:
            self._run(lambda: self._write(self._take(batch)))
        except BaseException as e:  # the store closing: nothing of this batch was written
            for t in batch or [turn]:
                if not t.done and t.result is None:
                    t.error = e
        finally:
            with self._lock:
                if turn in self._queue:     # never taken (the store refused first)
                    self._queue.remove(turn)
                if self._queue:
                    self._queue[0].wake.set()   # it leads the next batch
                else:
                    self._busy = False
            for t in batch or [turn]:
                t.done = True
                t.wake.set()
        return turn.outcome()

    def _take(self, into: list[PendingTurn]) -> list[PendingTurn]:
        """The turns of the next batch (the leader's first), at most one per session."""
        with self._lock:
            sessions: set[str] = set()
            keep: list[PendingTurn] = []
            for t in self._queue:
                if t.session in sessions or len(into) >= MAX_BATCH:
                    keep.append(t)
                else:
                    into.append(t)
                    sessions.add(t.session)
            self._queue = keep
        return into

    def _write(self, batch: list[PendingTurn]) -> None:
        store = self.mem.store
        tails = store.stored.tails([t.session for t in batch])
        ready = [t for t in batch if self._check(t, tails[t.session][1])]
        if not ready:
            return
        for t in ready:
            if t.recall is None and t.user is not None:
                t.recall = self.mem.recall(t.user, now=t.ts, session=t.session)
        raws = [m for t in ready for m in t.messages(tails[t.session][0])]
        try:
            self._ingest(raws)
        except InvalidInput:   # refused whole, nothing written: each on its own
            for t in ready:
                self._one(t)
            return
        for t, first in zip(ready, _firsts(raws, ready), strict=True):
            try:
                if t.recall is not None:
                    store.commit(t.recall, first, reinforce=t.reinforce, by=t.by, sync=False)
                t.result = (first, t.recall, False)
            except AkashaError as e:  # stored, not written back (as Memory.add_turn)
                t.error = e
        with phase("journal_fsync"):
            store.journal.sync()
        self.last_write = time.monotonic()

    def _ingest(self, raws: list[RawMessage]) -> None:
        """Ingest the batch's messages in one LanceDB append, their graph rows and
        extraction left in the journal for one later Kuzu transaction (``add_turn``'s
        write-behind, :meth:`Store.fold_graph <akasha_explorer.store.Store.fold_graph>`);
        when it fails the mirror is loaded again from what is durable."""
        store = self.mem.store
        try:
            with phase("ingest"):
                pipeline.ingest(store, importers.as_imported(raws), progress=False,
                                allow_forgotten=True, behind=True)
        except InvalidInput:
            raise       # refused before anything was written
        except BaseException:
            store.stored.forget()
            store.reload_mirror()
            raise

    def _check(self, t: PendingTurn, ids: Mapping[str, str]) -> bool:
        """A retried ``turn_id`` (one of the session's ``ids``) answered with its first
        node; a recall that can no longer be written back refused. False: the turn is
        answered already."""
        try:
            done = None if t.turn_id is None else ids.get(t.turn_id)
            if done is not None:
                t.result = (done, None, True)
                return False
            if t.recall is not None:
                self.mem.store.check_commit(t.recall)
        except AkashaError as e:
            t.error = e
            return False
        return True

    def _one(self, t: PendingTurn) -> None:
        try:
            node, used = self.mem.add_turn(t.user, t.assistant, session=t.session, ts=t.ts,
                                           recall=t.recall, reinforce=t.reinforce,
                                           turn_id=t.turn_id, by=t.by,
                                           user_speaker=t.speakers[0],
                                           assistant_speaker=t.speakers[1])
            t.result = (node, used, False)
        except AkashaError as e:
            t.error = e


def _firsts(raws: list[RawMessage], turns: list[PendingTurn]) -> list[str]:
    """The node uid of each turn: the uid of its first message."""
    out, k = [], 0
    for t in turns:
        out.append(raws[k].uid)
        k += (t.user is not None) + (t.assistant is not None)
    return out
