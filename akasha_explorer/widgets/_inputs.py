"""The query and time boxes the issue-16 panels share: read them, or say what is wrong."""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

import ipywidgets as W

from ..errors import InvalidInput
from ..text.timewords import parse_time

if TYPE_CHECKING:
    from ..protocol import MemoryAPI

__all__ = ["ALL", "as_date", "days_of", "read_query", "unset_to_none"]

ALL = "all"
"""Dropdown value meaning "no filter" (ipywidgets shows a None value as an empty box)."""


def unset_to_none(value: str) -> str | None:
    """A filter dropdown's value as the API wants it (ALL → None).

    >>> unset_to_none(ALL), unset_to_none("person")
    (None, 'person')
    """
    return None if value == ALL else value


def read_query(mem: MemoryAPI, query_box: W.Text, when_box: W.Text | None,
               query: str | None = None, now: str | float | None = None) -> tuple[str, float]:
    """Put ``query`` / ``now`` (when given) in the boxes, then read them: the query text and
    the time (``last``: the newest message; ``now``: the wall clock; ISO 8601; epoch
    seconds). Raises :class:`InvalidInput` when the query is empty or the time unreadable."""
    if query is not None:
        query_box.value = query
    if now is not None and when_box is not None:
        when_box.value = str(now)
    text = query_box.value.strip()
    if not text:
        raise InvalidInput("type a query first")
    raw = when_box.value.strip() if when_box is not None else "last"
    got = parse_time(raw or "last", mem.last_ts)
    return text, time.time() if got is None else float(got)


def as_date(d: dt.date | str) -> dt.date:
    """A date from a date or an ISO 8601 day.

    >>> as_date("2026-09-01"), as_date(dt.date(2026, 9, 2))
    (datetime.date(2026, 9, 1), datetime.date(2026, 9, 2))
    """
    return d if isinstance(d, dt.date) else dt.date.fromisoformat(d)


def days_of(ts: Sequence[float], *, default: float) -> list[dt.date]:
    """Every day (UTC) from the earliest to the latest of ``ts``; the day of ``default``
    when there is none — what a panel's time slider offers.

    >>> days_of([1788220800.0, 1788393600.0], default=0.0)
    [datetime.date(2026, 9, 1), datetime.date(2026, 9, 2), datetime.date(2026, 9, 3)]
    >>> days_of([], default=1788220800.0)
    [datetime.date(2026, 9, 1)]
    """
    lo = min(ts, default=default)
    hi = max(ts, default=default)
    d0 = dt.datetime.fromtimestamp(float(lo), dt.UTC).date()
    d1 = dt.datetime.fromtimestamp(float(hi), dt.UTC).date()
    return [d0 + dt.timedelta(days=k) for k in range((d1 - d0).days + 1)]
