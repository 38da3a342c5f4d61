"""Time words in a query → time windows (SPEC §4 stage 1, **[ours]** ``TIME_PRIOR``).

A query that says *when* — "last week", "in May 2023", "October 13, 2023", 最近, 上个月,
去年, 3月, 国庆, 中秋, Christmas, last weekend, 9月底, 去年9月, 上周三, last Friday, 两周前,
three days ago, 前几天, 上上周, 大前天, 9号 — names a span of time; the engine can prefer
the turns inside it. This module only reads the words: :func:`time_windows` returns
``(start, end, phrase)`` windows in epoch seconds, relative to the recall's ``now`` (never
the wall clock). English and Chinese; anything it does not recognise gives no window.
Calendar spans (a month, a year, a day — yesterday, 前天, a weekday of this or last week,
the 9th —, a festival, a weekend, the end of a month) are taken in the store's time zone
(``tz``: the ``TIME_ZONE`` setting; UTC by default); the looser relative ones ("recently",
"last week", "two weeks ago": one unit of slack either side for days and weeks, half a
unit for months — not years, an event told long after it happened; "a few" / 几 count two
to six) are rolling spans back from
``now``. A festival (:mod:`.festivals`), a month part or a day of the month is the latest
one that began at or before ``now`` unless a year is named (去年国庆, 2025年9月底, 去年9月).

>>> now = 1_700_000_000.0                       # 2023-11-14 22:13 UTC
>>> [(w.phrase, _day(w.start), _day(w.end)) for w in time_windows("what did I do last week?", now)]
[('last week', '2023-10-31', '2023-11-14')]
>>> [(w.phrase, _day(w.start), _day(w.end)) for w in time_windows("Camping in June?", now)]
[('in june', '2023-06-01', '2023-07-01')]
>>> [(w.phrase, _day(w.start)) for w in time_windows("去年圣诞节和最近", now)]
[('去年圣诞节', '2022-12-24'), ('最近', '2023-10-31')]
>>> [(w.phrase, _day(w.start), _day(w.end)) for w in time_windows("上周末和9月底", now)]
[('上周末', '2023-11-11', '2023-11-13'), ('9月底', '2023-09-21', '2023-10-01')]
>>> from akasha_explorer.config import time_zone
>>> t = time_windows("what did I do over national day?", now, tz=time_zone("+08:00"))[0]
>>> t.phrase, dt.datetime.fromtimestamp(t.start, time_zone("+08:00")).isoformat()
('national day', '2023-10-01T00:00:00+08:00')
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable
from dataclasses import dataclass

from ..config import DAY
from ..errors import InvalidInput
from .festivals import FESTIVALS
from .festivals import span as festival_span

__all__ = ["TimeWindow", "parse_time", "time_windows"]

_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august",
           "september", "october", "november", "december")
_MON = "|".join(_MONTHS)
_ZH_NUM = {"一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8,
           "九": 9}
"""Chinese digits (:func:`_zh_int` reads the tens)."""


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


def _ts(d: dt.date, tz: dt.tzinfo) -> float:
    return dt.datetime(d.year, d.month, d.day, tzinfo=tz).timestamp()


def _days(a: dt.date, b: dt.date, tz: dt.tzinfo) -> tuple[float, float]:
    return _ts(a, tz), _ts(b, tz)


def _month_end(year: int, month: int) -> dt.date:
    return dt.date(year + (month == 12), month % 12 + 1, 1)


def _month(year: int, month: int, tz: dt.tzinfo = dt.UTC) -> tuple[float, float]:
    return _days(dt.date(year, month, 1), _month_end(year, month), tz)


def _year(year: int, tz: dt.tzinfo = dt.UTC) -> tuple[float, float]:
    return _days(dt.date(year, 1, 1), dt.date(year + 1, 1, 1), tz)


_PART_DAYS = {"early": (1, 11), "mid": (11, 21), "late": (21, 32)}
_PARTS = {"初": "early", "上旬": "early", "中": "mid", "中旬": "mid", "底": "late",
          "末": "late", "下旬": "late", "early": "early", "beginning of": "early",
          "the beginning of": "early", "start of": "early", "the start of": "early",
          "mid": "mid", "the middle of": "mid", "middle of": "mid", "late": "late",
          "end of": "late", "the end of": "late"}


def _month_part(year: int, month: int, part: str) -> tuple[dt.date, dt.date]:
    a, b = _PART_DAYS[part]
    end = _month_end(year, month)
    return dt.date(year, month, a), min(end, dt.date(year, month, 1) + dt.timedelta(days=b - 1))


def _latest(spans: list[tuple[dt.date, dt.date]], today: dt.date
            ) -> tuple[dt.date, dt.date] | None:
    """The latest span that began on or before ``today`` (else the earliest)."""
    begun = [x for x in spans if x[0] <= today]
    return max(begun) if begun else (min(spans) if spans else None)


def _weekend(today: dt.date, back: int) -> tuple[dt.date, dt.date]:
    """The weekend ``back`` weekends before the current week's (0: this week's, if begun;
    Monday starts a week). On a Saturday or Sunday, 周末 / "the weekend" is that one."""
    monday = today - dt.timedelta(days=today.weekday())
    sat = monday + dt.timedelta(days=5) - dt.timedelta(days=7 * back)
    return sat, sat + dt.timedelta(days=2)


def _last_month_named(month: int, now: dt.datetime) -> int:
    """The year of the latest ``month`` that began at or before ``now``."""
    return now.year if month <= now.month else now.year - 1


def _relative(now: float, tz: dt.tzinfo = dt.UTC) -> dict[str, tuple[float, float]]:
    d = dt.datetime.fromtimestamp(now, tz)
    today = d.date()
    this_month = _month(d.year, d.month, tz)
    py, pm = d.year - (d.month == 1), (d.month - 2) % 12 + 1
    prev = _month(py, pm, tz)
    ppy, ppm = d.year - (d.month <= 2), (d.month - 3) % 12 + 1
    before_prev = _month(ppy, ppm, tz)
    recent = (now - 14 * DAY, now)
    days_back = {k: _days(today - dt.timedelta(days=k), today - dt.timedelta(days=k - 1), tz)
                 for k in (1, 2, 3)}   # yesterday, 前天, 大前天: calendar days
    latest_weekend = _days(*_weekend(today, 0 if today.weekday() >= 5 else 1), tz)
    last_weekend = _days(*_weekend(today, 1), tz)
    month_end = _latest([_month_part(py, pm, "late"), _month_part(d.year, d.month, "late")],
                        today)
    assert month_end is not None
    weekends = {
        "weekend": latest_weekend, "the weekend": latest_weekend,
        "this weekend": latest_weekend, "周末": latest_weekend, "这周末": latest_weekend,
        "这个周末": latest_weekend, "本周末": latest_weekend,
        "last weekend": last_weekend, "上周末": last_weekend, "上个周末": last_weekend,
        "月底": _days(*month_end, tz), "月末": _days(*month_end, tz),
        "上个月底": _days(*_month_part(py, pm, "late"), tz),
        "上月底": _days(*_month_part(py, pm, "late"), tz),
        "月初": _days(*_month_part(d.year, d.month, "early"), tz),
        "月中": _days(*_month_part(d.year, d.month, "mid"), tz),
        **dict.fromkeys(("上个月初", "上月初"), _days(*_month_part(py, pm, "early"), tz)),
        **dict.fromkeys(("上个月中", "上月中"), _days(*_month_part(py, pm, "mid"), tz)),
        "the end of the month": _days(*month_end, tz),
        "end of the month": _days(*month_end, tz),
    }
    return {
        "today": (now - DAY, now), "今天": (now - DAY, now),
        "yesterday": days_back[1], "last night": (now - 2 * DAY, now - DAY / 4),
        "昨天": days_back[1], "昨晚": (now - 2 * DAY, now - DAY / 4),
        "前天": days_back[2], "the day before yesterday": days_back[2],
        "day before yesterday": days_back[2], "大前天": days_back[3],
        "this morning": (now - DAY, now), "this afternoon": (now - DAY, now),
        "this evening": (now - DAY, now), "tonight": (now - DAY, now),
        "今早": (now - DAY, now), "今晚": (now - DAY, now),
        "recently": recent, "lately": recent, "these days": recent, "最近": recent,
        "近来": recent, "这几天": (now - 7 * DAY, now), "这阵子": recent,
        "this week": (now - 7 * DAY, now), "这周": (now - 7 * DAY, now),
        "本周": (now - 7 * DAY, now), "last week": (now - 14 * DAY, now),
        "上周": (now - 14 * DAY, now), "上星期": (now - 14 * DAY, now),
        "上个星期": (now - 14 * DAY, now), "上礼拜": (now - 14 * DAY, now),
        "上个礼拜": (now - 14 * DAY, now), "这礼拜": (now - 7 * DAY, now),
        "这个礼拜": (now - 7 * DAY, now), **dict.fromkeys(
            ("the week before last", "上上周", "上上星期", "上上个星期", "上上个礼拜"),
            (now - 21 * DAY, now - 7 * DAY)),
        "this month": this_month, "这个月": this_month, "上上个月": before_prev,
        "上上月": before_prev, "the month before last": before_prev,
        "本月": this_month, "last month": prev, "上个月": prev, "上月": prev,
        "this year": _year(d.year, tz), "今年": _year(d.year, tz),
        "last year": _year(d.year - 1, tz), "去年": _year(d.year - 1, tz),
        "前年": _year(d.year - 2, tz), **weekends,
    }


_REL_WORDS = sorted(_relative(0.0), key=len, reverse=True)
"""The words :func:`_relative` gives a span for, longest first: a regex takes the first
alternative that matches, so 上个月底 is read before 上个月 and "last weekend" before
"last week"."""
_EN_REL = re.compile(r"\b(" + "|".join(re.escape(w) for w in _REL_WORDS if w.isascii())
                     + r")\b")
_ZH_REL = re.compile("|".join(re.escape(w) for w in _REL_WORDS if not w.isascii()))
_FESTIVAL = re.compile(
    r"(?:(去年|今年|明年|前年)的?|\b(last|this|next)\s+)?("
    + "|".join(re.escape(k) for k in sorted(FESTIVALS, key=len, reverse=True))
    + r")(?:,?\s+((?:19|20|21)\d\d)\b)?")
_YEAR_WORDS = {"去年": -1, "今年": 0, "明年": 1, "前年": -2}
_EN_PART = re.compile(rf"\b(the beginning of|beginning of|the start of|start of|the end of|"
                      rf"end of|the middle of|middle of|early|mid|late)[\s-]+({_MON})"
                      rf"(?:,?\s+(\d{{4}}))?\b")
_EN_DATE = re.compile(rf"\b({_MON})\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+(\d{{4}})\b|"
                      rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+({_MON}),?\s+(\d{{4}})\b")
_EN_MONTH = re.compile(rf"\b(?:in\s+)?({_MON})(?:\s+(?:of\s+)?(\d{{4}}))?\b")
_EN_YEAR = re.compile(r"\bin\s+((?:19|20|21)\d\d)\b")
_ZH_MONTH = re.compile(r"(?:(\d{4})年|(去年|今年|前年)的?)?"
                       r"(十[一二]|[一二三四五六七八九十]|1[0-2]|[1-9])月"
                       r"(?:(\d{1,2})[号日]|(上旬|中旬|下旬|初|中|底|末))?")
_NUMBER = r"\d{1,2}|[一二两三四五六七八九十]{1,3}"
_EN_AGO = re.compile(r"\b(a few|a couple of|a couple|couple of|several|an?|one|two|three|four|"
                     r"five|six|seven|eight|nine|ten|eleven|twelve|\d{1,2})\s+"
                     r"(day|week|month)s?\s+ago\b")
_ZH_AGO = re.compile(rf"(?:({_NUMBER}|几|半)\s*(天|周|个星期|星期|个礼拜|礼拜|个月)"
                     rf"(?:以前|之前|前))|前(?:几|些)天")
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_EN_WEEKDAY = re.compile(rf"\b(last|this past|this|on)\s+({'|'.join(_WEEKDAYS)})\b")
_ZH_WEEKDAY = re.compile("(上上|上|这|本)个?(?:周|星期|礼拜)([一二三四五六日天])")
_ZH_DAY = re.compile(r"(?<![\d月./-])(\d{1,2})号(?![线楼房床门口车院机位店码])")
_EN_NUMBERS = {w: k for k, w in enumerate(("zero", "one", "two", "three", "four", "five", "six",
                                          "seven", "eight", "nine", "ten", "eleven", "twelve"))}
_FEW = (2, 6)
"""What "a few" / "several" / 几 / 前几天 count (days, weeks…)."""
_UNITS = {"day": DAY, "天": DAY, "week": 7 * DAY, "周": 7 * DAY, "星期": 7 * DAY,
          "礼拜": 7 * DAY, "month": 30 * DAY, "月": 30 * DAY}
"""The units of "N … ago". Not years: "I moved here 4 years ago" is told long after, so a
window on when a turn was *said* would miss it."""


def _zh_int(text: str) -> int | None:
    """A Chinese or Arabic number up to 99 (三 → 3, 两 → 2, 十二 → 12, 二十 → 20, 15 → 15).

    >>> [_zh_int(x) for x in ("三", "两", "十二", "二十", "二十五", "15", "百")]
    [3, 2, 12, 20, 25, 15, None]
    """
    if text.isdigit():
        return int(text)
    if "十" in text:
        a, _, b = text.partition("十")
        tens = 1 if not a else _ZH_NUM.get(a)
        ones = 0 if not b else _ZH_NUM.get(b)
        return None if tens is None or ones is None else 10 * tens + ones
    return _ZH_NUM.get(text)


def _ago(now: float, lo: float, hi: float, unit: str) -> tuple[float, float]:
    """The rolling window "``lo``–``hi`` ``unit``s ago": one unit of slack either side for
    days and weeks (three days ago: 2–4 days back), half a unit for months."""
    size = _UNITS[unit]
    slack = size if size <= 7 * DAY else size / 2
    return now - hi * size - slack, min(now, now - lo * size + slack)


def time_windows(text: str, now: float, tz: dt.tzinfo | None = None) -> list[TimeWindow]:
    """The time windows ``text`` names, relative to ``now``, calendar spans in time zone
    ``tz`` (default UTC; see the module docstring); in the order found, without repeats
    (a span named twice keeps its first phrase), a phrase inside a longer one not again
    (上周末 is no 上周)."""
    tz = tz or dt.UTC
    low = text.casefold()
    out: dict[tuple[float, float], TimeWindow] = {}
    d_now = dt.datetime.fromtimestamp(now, tz)
    today = d_now.date()
    taken: list[tuple[int, int]] = []

    def free(m: re.Match[str]) -> bool:
        return not any(a < m.end() and m.start() < b for a, b in taken)

    def add(m: re.Match[str], span: tuple[float, float] | None, relative: bool = False
            ) -> None:
        taken.append(m.span())
        if span is not None and span not in out and span[0] < span[1]:
            out[span] = TimeWindow(span[0], span[1], m.group(0).strip(), relative)

    for m in _EN_DATE.finditer(low):
        mon, day, year = ((m.group(1), m.group(2), m.group(3)) if m.group(1)
                          else (m.group(5), m.group(4), m.group(6)))
        try:
            a = dt.date(int(year), _MONTHS.index(mon) + 1, int(day))
        except ValueError:
            continue
        add(m, _days(a, a + dt.timedelta(days=1), tz))
    for m in _FESTIVAL.finditer(low):
        if not free(m) or (m.group(3).isascii() and not _word_edges(low, m.start(3), m.end())):
            continue
        years = [today.year - 1, today.year]
        if m.group(4):
            years = [int(m.group(4))]
        elif m.group(1):
            years = [today.year + _YEAR_WORDS[m.group(1)]]
        elif m.group(2) == "this":
            years = [today.year]
        elif m.group(2) == "next":
            years = [today.year + 1]
        spans = [x for x in (festival_span(m.group(3), y) for y in years) if x is not None]
        got = _latest(spans, today) if len(years) > 1 else (spans[0] if spans else None)
        add(m, None if got is None else _days(*got, tz))
    for m in _EN_PART.finditer(low):
        if not free(m):
            continue
        month = _MONTHS.index(m.group(2)) + 1
        year = int(m.group(3)) if m.group(3) else _last_month_named(month, d_now)
        add(m, _days(*_month_part(year, month, _PARTS[m.group(1)]), tz))
    for m in _EN_MONTH.finditer(low):
        if not free(m):
            continue
        if m.group(1) == "may" and not (m.group(0).startswith("in") or m.group(2)):
            continue  # "may" is mostly the verb
        month = _MONTHS.index(m.group(1)) + 1
        year = int(m.group(2)) if m.group(2) else _last_month_named(month, d_now)
        add(m, _month(year, month, tz))
    for m in _EN_YEAR.finditer(low):
        if free(m):
            add(m, _year(int(m.group(1)), tz))
    for m in _ZH_MONTH.finditer(low):
        if not free(m):
            continue
        month = _zh_int(m.group(3)) or 0   # the pattern admits 1–12 only
        year = (int(m.group(1)) if m.group(1) else
                today.year + _YEAR_WORDS[m.group(2)] if m.group(2) else
                _last_month_named(month, d_now))
        if m.group(4):
            try:
                a = dt.date(year, month, int(m.group(4)))
            except ValueError:
                continue
            add(m, _days(a, a + dt.timedelta(days=1), tz))
        elif m.group(5):
            add(m, _days(*_month_part(year, month, _PARTS[m.group(5)]), tz))
        else:
            add(m, _month(year, month, tz))
    for m in _EN_AGO.finditer(low):
        if free(m):
            word = m.group(1)
            lo, hi = (_FEW if word in ("a few", "several") else
                      (2, 2) if "couple" in word else
                      (1, 1) if word in ("a", "an") else
                      (int(word),) * 2 if word.isdigit() else (_EN_NUMBERS[word],) * 2)
            add(m, _ago(now, lo, hi, m.group(2)), relative=True)
    for m in _ZH_AGO.finditer(low):
        if not free(m):
            continue
        if m.group(1) is None:                                   # 前几天, 前些天
            add(m, _ago(now, *_FEW, "天"), relative=True)
            continue
        unit = m.group(2).removeprefix("个")
        count = _zh_int(m.group(1))
        span = (_ago(now, *_FEW, unit) if m.group(1) == "几" else
                _ago(now, 0.5, 0.5, unit) if m.group(1) == "半" else
                None if count is None else _ago(now, count, count, unit))
        if span is not None:
            add(m, span, relative=True)
    monday = today - dt.timedelta(days=today.weekday())
    for m in _EN_WEEKDAY.finditer(low):
        if not free(m):
            continue
        wd = _WEEKDAYS.index(m.group(2))
        if m.group(1) == "this":                                 # this week's
            day = monday + dt.timedelta(days=wd)
        else:   # last / this past: the latest before today; on: on or before today
            back = (today.weekday() - wd) % 7
            day = today - dt.timedelta(days=back or (7 if m.group(1) != "on" else 0))
        add(m, _days(day, day + dt.timedelta(days=1), tz), relative=True)
    for m in _ZH_WEEKDAY.finditer(low):
        if free(m):
            wd = "一二三四五六日天".index(m.group(2))
            weeks = {"上上": 2, "上": 1}.get(m.group(1), 0)
            day = monday + dt.timedelta(days=min(wd, 6) - 7 * weeks)
            add(m, _days(day, day + dt.timedelta(days=1), tz), relative=True)
    for m in _ZH_DAY.finditer(low):
        if not free(m):
            continue
        nth = int(m.group(1))
        first = today.replace(day=1)
        for _ in range(3):    # this month's, else the latest month that has that day
            try:
                date: dt.date | None = first.replace(day=nth)
            except ValueError:
                date = None
            if date is not None and date <= today:
                add(m, _days(date, date + dt.timedelta(days=1), tz))
                break
            first = (first - dt.timedelta(days=1)).replace(day=1)
    rel = _relative(now, tz)
    for pattern in (_EN_REL, _ZH_REL):
        for m in pattern.finditer(low):
            if free(m):
                add(m, rel[m.group(0)], relative=True)
    return sorted(out.values(), key=lambda w: _first(low, w.phrase))


def _word_edges(text: str, a: int, b: int) -> bool:
    """No latin letter just before ``a`` or just after ``b``."""
    return not ((a > 0 and text[a - 1].isalnum()) or (b < len(text) and text[b].isalnum()))


def _first(text: str, phrase: str) -> int:
    i = text.find(phrase)
    return len(text) if i < 0 else i


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
