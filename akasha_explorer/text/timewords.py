"""Time words in a query → time windows (SPEC §4 stage 1, **[ours]** ``TIME_PRIOR``).

A query that says *when* — "last week", "in May 2023", "October 13, 2023", 最近, 上个月,
去年, 3月 — names a span of time; the engine can prefer the turns inside it. This module only
reads the words: :func:`time_windows` returns ``(start, end, phrase)`` windows in epoch
seconds, relative to the recall's ``now`` (never the wall clock). English and Chinese;
anything it does not recognise gives no window. Calendar spans (a month, a year, a day)
are taken in UTC; relative ones ("recently", "last week") are rolling spans ending at
``now``, so no time zone is needed.

>>> now = 1_700_000_000.0                       # 2023-11-14 22:13 UTC
>>> [(w.phrase, _day(w.start), _day(w.end)) for w in time_windows("what did I do last week?", now)]
[('last week', '2023-10-31', '2023-11-14')]
>>> [(w.phrase, _day(w.start), _day(w.end)) for w in time_windows("Camping in June?", now)]
[('in june', '2023-06-01', '2023-07-01')]
>>> [(w.phrase, _day(w.start)) for w in time_windows("去年圣诞节和最近", now)]
[('去年', '2022-01-01'), ('最近', '2023-10-31')]
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable
from dataclasses import dataclass

from ..config import DAY
from ..errors import InvalidInput

__all__ = ["TimeWindow", "parse_time", "time_windows"]

_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august",
           "september", "october", "november", "december")
_MON = "|".join(_MONTHS)
_ZH_NUM = {"一": 1, "二": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9,
           "十": 10, "十一": 11, "十二": 12}


@dataclass(frozen=True)
class TimeWindow:
    """A span of time a query names: ``[start, end)`` in epoch seconds, and the words.
    ``relative`` words (最近, last week, yesterday) say when *from now*: they name no topic
    and match nothing a message says about itself, so they are no lexical terms; dates
    (May 2023, 10月2号) may be written in messages and stay terms."""

    start: float
    end: float
    phrase: str
    relative: bool = False


def _day(ts: float) -> str:
    return dt.datetime.fromtimestamp(ts, dt.UTC).strftime("%Y-%m-%d")


def _month(year: int, month: int) -> tuple[float, float]:
    a = dt.datetime(year, month, 1, tzinfo=dt.UTC)
    b = dt.datetime(year + (month == 12), month % 12 + 1, 1, tzinfo=dt.UTC)
    return a.timestamp(), b.timestamp()


def _year(year: int) -> tuple[float, float]:
    return (dt.datetime(year, 1, 1, tzinfo=dt.UTC).timestamp(),
            dt.datetime(year + 1, 1, 1, tzinfo=dt.UTC).timestamp())


def _last_month_named(month: int, now: dt.datetime) -> int:
    """The year of the latest ``month`` that began at or before ``now``."""
    return now.year if month <= now.month else now.year - 1


def _relative(now: float) -> dict[str, tuple[float, float]]:
    d = dt.datetime.fromtimestamp(now, dt.UTC)
    this_month = _month(d.year, d.month)
    prev = _month(d.year - (d.month == 1), (d.month - 2) % 12 + 1)
    recent = (now - 14 * DAY, now)
    return {
        "today": (now - DAY, now), "今天": (now - DAY, now),
        "yesterday": (now - 2 * DAY, now - DAY), "last night": (now - 2 * DAY, now - DAY / 4),
        "昨天": (now - 2 * DAY, now - DAY), "昨晚": (now - 2 * DAY, now - DAY / 4),
        "前天": (now - 3 * DAY, now - 2 * DAY),
        "recently": recent, "lately": recent, "these days": recent, "最近": recent,
        "近来": recent, "这几天": (now - 7 * DAY, now), "这阵子": recent,
        "this week": (now - 7 * DAY, now), "这周": (now - 7 * DAY, now),
        "本周": (now - 7 * DAY, now), "last week": (now - 14 * DAY, now),
        "上周": (now - 14 * DAY, now), "上星期": (now - 14 * DAY, now),
        "上个星期": (now - 14 * DAY, now), "this month": this_month, "这个月": this_month,
        "本月": this_month, "last month": prev, "上个月": prev, "上月": prev,
        "this year": _year(d.year), "今年": _year(d.year), "last year": _year(d.year - 1),
        "去年": _year(d.year - 1), "前年": _year(d.year - 2),
    }


_EN_REL = re.compile(r"\b(today|yesterday|last night|recently|lately|these days|this week|"
                     r"last week|this month|last month|this year|last year)\b")
_ZH_REL = re.compile("今天|昨天|昨晚|前天|最近|近来|这几天|这阵子|这周|本周|上个星期|上星期|上周|"
                     "这个月|本月|上个月|上月|今年|去年|前年")
_EN_DATE = re.compile(rf"\b({_MON})\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+(\d{{4}})\b|"
                      rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+({_MON}),?\s+(\d{{4}})\b")
_EN_MONTH = re.compile(rf"\b(?:in\s+)?({_MON})(?:\s+(?:of\s+)?(\d{{4}}))?\b")
_EN_YEAR = re.compile(r"\bin\s+((?:19|20|21)\d\d)\b")
_ZH_MONTH = re.compile(r"(?:(\d{4})年)?(十[一二]|[一二三四五六七八九十]|1[0-2]|[1-9])月"
                       r"(?:(\d{1,2})[号日])?")


def time_windows(text: str, now: float) -> list[TimeWindow]:
    """The time windows ``text`` names, relative to ``now`` (see the module docstring);
    in the order found, without repeats (a span named twice keeps its first phrase)."""
    low = text.casefold()
    out: dict[tuple[float, float], TimeWindow] = {}
    d_now = dt.datetime.fromtimestamp(now, dt.UTC)

    def add(span: tuple[float, float], phrase: str, relative: bool = False) -> None:
        if span not in out and span[0] < span[1]:
            out[span] = TimeWindow(span[0], span[1], phrase, relative)

    taken: list[tuple[int, int]] = []
    for m in _EN_DATE.finditer(low):
        mon, day, year = ((m.group(1), m.group(2), m.group(3)) if m.group(1)
                          else (m.group(5), m.group(4), m.group(6)))
        try:
            a = dt.datetime(int(year), _MONTHS.index(mon) + 1, int(day), tzinfo=dt.UTC)
        except ValueError:
            continue
        add((a.timestamp(), a.timestamp() + DAY), m.group(0).strip())
        taken.append(m.span())
    for m in _EN_MONTH.finditer(low):
        if any(a <= m.start() < b for a, b in taken):
            continue
        if m.group(1) == "may" and not (m.group(0).startswith("in") or m.group(2)):
            continue  # "may" is mostly the verb
        month = _MONTHS.index(m.group(1)) + 1
        year = int(m.group(2)) if m.group(2) else _last_month_named(month, d_now)
        add(_month(year, month), m.group(0).strip())
    for m in _EN_YEAR.finditer(low):
        add(_year(int(m.group(1))), m.group(0))
    rel = _relative(now)
    for pattern in (_EN_REL, _ZH_REL):
        for m in pattern.finditer(low):
            add(rel[m.group(0)], m.group(0), relative=True)
    for m in _ZH_MONTH.finditer(text):
        raw = m.group(2)
        month = int(raw) if raw.isdigit() else _ZH_NUM[raw]
        year = int(m.group(1)) if m.group(1) else _last_month_named(month, d_now)
        if m.group(3):
            try:
                a = dt.datetime(year, month, int(m.group(3)), tzinfo=dt.UTC)
            except ValueError:
                continue
            add((a.timestamp(), a.timestamp() + DAY), m.group(0))
        else:
            add(_month(year, month), m.group(0))
    return list(out.values())


def parse_time(value: str | None, last: Callable[[], float] | None = None) -> float | None:
    """A point in time as a person types it (``akasha --now``, a panel's "now" box): ISO
    8601 (a missing offset means UTC), epoch seconds, ``now`` (the wall clock: None) or
    ``last`` (``last()``: a store's newest message time). ``None`` means the wall clock.

    >>> parse_time("2026-09-03T21:14:05+08:00"), parse_time("1788441245"), parse_time("now")
    (1788441245.0, 1788441245.0, None)
    >>> parse_time("last", lambda: 5.0)
    5.0
    """
    if value is None or value == "now":
        return None
    if value == "last":
        if last is None:
            raise InvalidInput("--now last needs a store")
        return last()
    try:
        t = float(value)
    except ValueError:
        pass
    else:
        if not 0.0 <= t < 253_402_300_800.0:  # NaN, ±inf, negative, past year 9999
            raise InvalidInput(f"--now {value!r} is not a time; use ISO 8601, epoch seconds, "
                               "'now' or 'last'")
        return t
    try:
        d = dt.datetime.fromisoformat(value)
    except ValueError:
        raise InvalidInput(f"cannot parse --now {value!r}; use ISO 8601, epoch seconds, "
                           "'now' or 'last'") from None
    return (d if d.tzinfo else d.replace(tzinfo=dt.UTC)).timestamp()
