"""The package's locks and the one order they are taken in (issue 50; the table of threads
and what each lock guards is ``docs/threads.md``).

Every lock that more than one thread of a served store takes is made by
:func:`ordered_lock` under a name of :data:`LOCK_ORDER`. A thread may take a lock only
when every lock it holds comes *before* it in that order (or is the same re-entrant lock
again): with one total order no two threads can each hold what the other waits for.

Normally :func:`ordered_lock` returns a plain ``threading.Lock`` / ``RLock`` — no cost. With
``$AKASHA_LOCK_CHECK=1`` (the test suite sets it for every test and every process it
starts) it returns a :class:`CheckedLock`, which keeps the locks each thread holds and
raises :class:`LockOrderError` at the first acquire that breaks the order, naming both
locks — the deadlock that would need two threads and bad luck is caught by one thread in
order, every time.

>>> fold, conn = CheckedLock("store.fold", reentrant=True), CheckedLock("graph.connection", False)
>>> with fold, conn:      # in order
...     pass
>>> with conn:
...     fold.acquire()
Traceback (most recent call last):
...
akasha_explorer._locks.LockOrderError: store.fold taken while holding graph.connection: ...
"""

from __future__ import annotations

import logging
import os
import threading
from typing import Any

__all__ = ["CHECK_ENV", "LOCK_ORDER", "CheckedLock", "LockOrderError", "held", "ordered_lock"]

log = logging.getLogger(__name__)

LOCK_ORDER: tuple[str, ...] = (
    "link.recall",
    "server.request",
    "server.turns",
    "store.fold",
    "graph.connection",
    "store.behind",
    "store.journal",
    "vectors.compacting",
    "vectors.versions",
    "embed.model",
    "embed.queue",
    "store.vector_cache",
    "server.clients",
    "recalls.files",
    "recalls.queue",
)
"""Every shared lock, in the one order a thread may take them (first first). What each
guards and which threads take it: ``docs/threads.md``."""

RANK = {name: k for k, name in enumerate(LOCK_ORDER)}

CHECK_ENV = "AKASHA_LOCK_CHECK"
"""Set to ``1`` to check the order at every acquire (:class:`CheckedLock`)."""

_held = threading.local()


class LockOrderError(AssertionError):
    """A lock taken out of :data:`LOCK_ORDER` (a deadlock waiting for the wrong moment)."""


def _stack() -> list[CheckedLock]:
    s: list[CheckedLock] | None = getattr(_held, "locks", None)
    if s is None:
        s = _held.locks = []
    return s


def held() -> list[str]:
    """The names of the checked locks this thread holds, oldest first (empty unless
    checking)."""
    return [lk.name for lk in _stack()]


class CheckedLock:
    """A lock (re-entrant or not) that refuses to be taken out of :data:`LOCK_ORDER` by
    the thread taking it; usable with ``threading.Condition`` like the lock it wraps."""

    def __init__(self, name: str, reentrant: bool) -> None:
        self.name = name
        self.rank = RANK[name]
        self.reentrant = reentrant
        self._inner: Any = threading.RLock() if reentrant else threading.Lock()
        self._owner: int | None = None
        self._depth = 0

    def __repr__(self) -> str:
        return f"<CheckedLock {self.name} owner={self._owner} depth={self._depth}>"

    def _check(self) -> None:
        me = threading.get_ident()
        if self._owner == me:
            if self.reentrant:
                return
            raise LockOrderError(f"{self.name} taken again by the thread holding it "
                                 "(not re-entrant: it would wait for itself)")
        later = [lk.name for lk in _stack() if lk.rank >= self.rank]
        if later:
            err = LockOrderError(
                f"{self.name} taken while holding {', '.join(later)}: the order is "
                f"{' < '.join(LOCK_ORDER)} (docs/threads.md)")
            log.error("%s", err)
            raise err

    def acquire(self, blocking: bool = True, timeout: float = -1) -> bool:
        if blocking:   # a try-lock cannot wait, so it cannot deadlock
            self._check()
        got = bool(self._inner.acquire(blocking, timeout))
        if got:
            self._took()
        return got

    def _took(self) -> None:
        me = threading.get_ident()
        if self._owner != me:
            self._owner = me
            _stack().append(self)
        self._depth += 1

    def release(self) -> None:
        self._depth -= 1
        if self._depth == 0:
            self._owner = None
            s = _stack()
            for k in range(len(s) - 1, -1, -1):
                if s[k] is self:
                    del s[k]
                    break
        self._inner.release()

    def __enter__(self) -> CheckedLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()

    def locked(self) -> bool:
        return self._owner is not None

    # -- threading.Condition's protocol (a wait lets the lock go whole, then takes it back)
    def _is_owned(self) -> bool:
        return self._owner == threading.get_ident()

    def _release_save(self) -> tuple[Any, int]:
        depth = self._depth
        self._depth, self._owner = 0, None
        s = _stack()
        for k in range(len(s) - 1, -1, -1):
            if s[k] is self:
                del s[k]
                break
        if self.reentrant:   # every level of this thread's holding let go at once
            return (self._inner._release_save(), depth)
        self._inner.release()
        return (None, depth)

    def _acquire_restore(self, saved: tuple[Any, int]) -> None:
        state, depth = saved
        self._check()
        if self.reentrant:
            self._inner._acquire_restore(state)
        else:
            self._inner.acquire()
        self._owner = threading.get_ident()
        _stack().append(self)
        self._depth = depth


def ordered_lock(name: str, *, reentrant: bool = False) -> Any:
    """A new lock named ``name`` (one of :data:`LOCK_ORDER`): a plain ``threading`` lock,
    or a :class:`CheckedLock` when ``$AKASHA_LOCK_CHECK`` is ``1``."""
    if name not in RANK:
        raise ValueError(f"lock {name!r} is not in LOCK_ORDER (akasha_explorer/_locks.py); "
                         "place it there, and in docs/threads.md")
    if os.environ.get(CHECK_ENV) == "1":
        return CheckedLock(name, reentrant)
    return threading.RLock() if reentrant else threading.Lock()
