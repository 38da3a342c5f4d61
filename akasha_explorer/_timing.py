"""Where the time of one served call goes (issue 28): named phases, measured only while a
call is being timed, at the bottom of the package (it imports nothing of ours).

A server that times its calls (``akasha serve`` with ``$AKASHA_TIMINGS`` naming a file, see
:mod:`akasha_explorer.server.http`) opens a :func:`recording` per request; code anywhere below
marks its parts with :func:`phase`. Phases nest and are **exclusive**: the time of an inner
phase is taken out of the one around it, so a record's phases add up to the time they
cover. Without an open record a phase costs one context-variable lookup.

>>> import time
>>> rec = {}
>>> with recording(rec):
...     with phase("outer"):
...         with phase("inner"):
...             time.sleep(0.01)
>>> sorted(rec), rec["inner"] >= 0.01 > rec["outer"]
(['inner', 'outer'], True)
>>> with phase("nobody listens"):
...     pass
"""

from __future__ import annotations

import contextlib
import contextvars
import time
from collections.abc import Iterator

__all__ = ["phase", "recording"]

_current: contextvars.ContextVar[tuple[dict[str, float], list[float]] | None] = \
    contextvars.ContextVar("akasha_timing", default=None)
"""The open record of this call and the stack of its running phases' inner time."""


@contextlib.contextmanager
def recording(rec: dict[str, float]) -> Iterator[dict[str, float]]:
    """Time the phases run inside this block (this thread or context, and the worker
    threads it hands work to with its context) into ``rec`` (seconds per phase, added)."""
    token = _current.set((rec, []))
    try:
        yield rec
    finally:
        _current.reset(token)


@contextlib.contextmanager
def phase(name: str) -> Iterator[None]:
    """Add this block's time, less that of the phases inside it, to ``name`` of the open
    record (nothing when no record is open)."""
    cur = _current.get()
    if cur is None:
        yield
        return
    rec, stack = cur
    stack.append(0.0)
    t0 = time.perf_counter()
    try:
        yield
    finally:
        spent = time.perf_counter() - t0
        inner = stack.pop()
        rec[name] = rec.get(name, 0.0) + spent - inner
        if stack:
            stack[-1] += spent
