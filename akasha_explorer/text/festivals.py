"""Festivals and calendar phrases → time spans, for :mod:`.timewords` (**[ours]**
``TIME_PRIOR``): 国庆, 春节, 中秋, 元旦, 五一, Labor Day, Christmas, Thanksgiving…, each the
span people mean by it, in a given year and time zone.

The lunar festivals (春节, 端午, 中秋) move every year: their dates for 1990–2060 are in
:data:`LUNAR` (astronomical facts, checked against the ``lunardate`` package; outside
those years they name no window). The others are fixed dates or a weekday of a month
(Labor Day: the first Monday of September — the US holiday, as the English name is used
there; 劳动节 / 五一: 1–5 May).

>>> import datetime as dt
>>> [d.isoformat() for d in span("国庆", 2026)]
['2026-10-01', '2026-10-08']
>>> [d.isoformat() for d in span("mid-autumn", 2026)]
['2026-09-24', '2026-09-27']
>>> [d.isoformat() for d in span("labor day", 2023)]
['2023-09-02', '2023-09-05']
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable

__all__ = ["FESTIVALS", "LUNAR", "span"]

_LUNAR_TEXT = """
    1990:0127,0528,1003 1991:0215,0616,0922 1992:0204,0605,0911 1993:0123,0624,0930
    1994:0210,0613,0920 1995:0131,0602,0909 1996:0219,0620,0927 1997:0207,0609,0916
    1998:0128,0530,1005 1999:0216,0618,0924 2000:0205,0606,0912 2001:0124,0625,1001
    2002:0212,0615,0921 2003:0201,0604,0911 2004:0122,0622,0928 2005:0209,0611,0918
    2006:0129,0531,1006 2007:0218,0619,0925 2008:0207,0608,0914 2009:0126,0528,1003
    2010:0214,0616,0922 2011:0203,0606,0912 2012:0123,0623,0930 2013:0210,0612,0919
    2014:0131,0602,0908 2015:0219,0620,0927 2016:0208,0609,0915 2017:0128,0530,1004
    2018:0216,0618,0924 2019:0205,0607,0913 2020:0125,0625,1001 2021:0212,0614,0921
    2022:0201,0603,0910 2023:0122,0622,0929 2024:0210,0610,0917 2025:0129,0531,1006
    2026:0217,0619,0925 2027:0206,0609,0915 2028:0126,0528,1003 2029:0213,0616,0922
    2030:0203,0605,0912 2031:0123,0624,1001 2032:0211,0612,0919 2033:0131,0601,0908
    2034:0219,0620,0927 2035:0208,0610,0916 2036:0128,0530,1004 2037:0215,0618,0924
    2038:0204,0607,0913 2039:0124,0527,1002 2040:0212,0614,0920 2041:0201,0603,0910
    2042:0122,0622,0928 2043:0210,0611,0917 2044:0130,0531,1005 2045:0217,0619,0925
    2046:0206,0608,0915 2047:0126,0529,1004 2048:0214,0615,0922 2049:0202,0604,0911
    2050:0123,0623,0930 2051:0211,0613,0919 2052:0201,0601,0907 2053:0219,0620,0926
    2054:0208,0610,0916 2055:0128,0530,1005 2056:0215,0617,0924 2057:0204,0606,0913
    2058:0124,0625,1002 2059:0212,0614,0921 2060:0202,0603,0909
"""
LUNAR: dict[int, tuple[dt.date, dt.date, dt.date]] = {
    int(y): tuple(dt.date(int(y), int(md[:2]), int(md[2:])) for md in v.split(","))  # type: ignore[misc]
    for y, v in (item.split(":") for item in _LUNAR_TEXT.split())
}
"""Per year: the dates of 春节 (Spring Festival), 端午 (Dragon Boat) and 中秋 (Mid-Autumn)."""

D = dt.timedelta(days=1)


def _nth_weekday(year: int, month: int, weekday: int, n: int) -> dt.date:
    """The ``n``-th ``weekday`` (0 = Monday) of a month; ``n = -1``: the last one."""
    if n > 0:
        first = dt.date(year, month, 1)
        return first + ((weekday - first.weekday()) % 7 + 7 * (n - 1)) * D
    last = dt.date(year + (month == 12), month % 12 + 1, 1) - D
    return last - ((last.weekday() - weekday) % 7) * D


def _lunar(k: int, before: int, after: int) -> Callable[[int], tuple[dt.date, dt.date] | None]:
    def f(year: int) -> tuple[dt.date, dt.date] | None:
        days = LUNAR.get(year)
        return None if days is None else (days[k] - before * D, days[k] + after * D)
    return f


def _fixed(month: int, day: int, days: int, before: int = 0
           ) -> Callable[[int], tuple[dt.date, dt.date] | None]:
    def f(year: int) -> tuple[dt.date, dt.date]:
        a = dt.date(year, month, day) - before * D
        return a, a + (days + before) * D
    return f


def _weekday(month: int, weekday: int, n: int, before: int, after: int
             ) -> Callable[[int], tuple[dt.date, dt.date] | None]:
    def f(year: int) -> tuple[dt.date, dt.date]:
        d = _nth_weekday(year, month, weekday, n)
        return d - before * D, d + after * D
    return f


_SPRING = _lunar(0, 1, 7)        # 除夕 to the seventh day
_NATIONAL = _fixed(10, 1, 7)     # 1–7 October
FESTIVALS: dict[str, Callable[[int], tuple[dt.date, dt.date] | None]] = {
    "国庆": _NATIONAL, "国庆节": _NATIONAL, "十一假期": _NATIONAL, "十一长假": _NATIONAL,
    "十一黄金周": _NATIONAL, "十一期间": _NATIONAL, "十一放假": _NATIONAL,
    "national day": _NATIONAL, "golden week": _NATIONAL,
    "春节": _SPRING, "过年": _SPRING, "chinese new year": _SPRING, "lunar new year": _SPRING,
    "spring festival": _SPRING,
    "除夕": _lunar(0, 1, 0),
    "中秋": _lunar(2, 1, 2), "中秋节": _lunar(2, 1, 2), "mid-autumn": _lunar(2, 1, 2),
    "mid autumn": _lunar(2, 1, 2), "moon festival": _lunar(2, 1, 2),
    "端午": _lunar(1, 1, 2), "端午节": _lunar(1, 1, 2), "dragon boat": _lunar(1, 1, 2),
    "元旦": _fixed(1, 1, 1, before=1), "new year's day": _fixed(1, 1, 1, before=1),
    "new year's eve": _fixed(12, 31, 1), "跨年": _fixed(12, 31, 2),
    "五一": _fixed(5, 1, 5), "劳动节": _fixed(5, 1, 5), "may day": _fixed(5, 1, 5),
    "清明": _fixed(4, 3, 4), "清明节": _fixed(4, 3, 4),
    "labor day": _weekday(9, 0, 1, 2, 1), "labour day": _weekday(9, 0, 1, 2, 1),
    "memorial day": _weekday(5, 0, -1, 2, 1),
    "thanksgiving": _weekday(11, 3, 4, 0, 4), "感恩节": _weekday(11, 3, 4, 0, 4),
    "mother's day": _weekday(5, 6, 2, 0, 1), "母亲节": _weekday(5, 6, 2, 0, 1),
    "father's day": _weekday(6, 6, 3, 0, 1), "父亲节": _weekday(6, 6, 3, 0, 1),
    "christmas": _fixed(12, 24, 3), "圣诞": _fixed(12, 24, 3), "圣诞节": _fixed(12, 24, 3),
    "平安夜": _fixed(12, 24, 1),
    "halloween": _fixed(10, 31, 1), "万圣节": _fixed(10, 31, 1),
    "valentine's day": _fixed(2, 14, 1), "情人节": _fixed(2, 14, 1),
    "independence day": _fixed(7, 4, 1), "fourth of july": _fixed(7, 4, 1),
    "4th of july": _fixed(7, 4, 1), "july 4th": _fixed(7, 4, 1),
}
"""Festival names (normalised: case folded) → the span ``[first day, day after)`` of a
year."""


def span(name: str, year: int) -> tuple[dt.date, dt.date] | None:
    """The days ``[start, end)`` festival ``name`` covers in ``year`` (None: unknown name,
    or a lunar festival outside :data:`LUNAR`)."""
    f = FESTIVALS.get(name)
    return None if f is None else f(year)
