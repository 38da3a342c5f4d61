"""The values a setting admits: a :class:`Range` of numbers, a :class:`Rule` for text, and
the :class:`Relation` two settings must keep (:mod:`akasha_explorer.config` declares one of
them with every setting; ``akasha settings`` and ``docs/reference.md`` show it).

Every problem is said in one line naming the setting, the value and what it admits:

>>> r = Range(0, 1, lo_open=True)
>>> str(r), r.problem("EDGE_LR", -5.0)
('(0, 1]', 'EDGE_LR=-5.0 is outside its range (0, 1]')
>>> r.problem("EDGE_LR", 0.12) is None, r.problem("EDGE_LR", float("nan")) is None
(True, False)
>>> Range(1, 10**6, whole=True).problem("DENSE_POOL", 2.5)
'DENSE_POOL=2.5 is not a whole number; its range is [1, 1_000_000]'
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

__all__ = ["BOOL", "Range", "Relation", "Rule", "stemmers"]


def _show(value: Any) -> str:
    """``repr(value)`` kept to one short line (a huge int is not spelled out).

    >>> _show(10**400), len(_show("x" * 100))
    ('<an int of 401 digits>', 81)
    """
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 100:
        return f"<an int of {len(str(value)) if value.bit_length() < 10_000 else 'many'} digits>"
    text = repr(value)
    return text if len(text) <= 80 else text[:80] + "…"


def _end(x: float) -> str:
    """One end of a range as it is shown: ``inf``, a whole number (``1_000_000``), or a float.

    >>> _end(math.inf), _end(-1.0), _end(1000), _end(1_000_000), _end(0.5)
    ('inf', '-1', '1000', '1_000_000', '0.5')
    """
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    if float(x).is_integer():
        return f"{int(x):_}" if abs(x) >= 10_000 else str(int(x))
    return repr(float(x))


@dataclass(frozen=True)
class Range:
    """Numbers from ``lo`` to ``hi``, each end closed (``[``) or open (``(``); an infinite
    end means no bound on that side. Only finite numbers are admitted, and never a bool.
    ``whole`` (set for int settings by :mod:`~akasha_explorer.config`) admits ints only."""

    lo: float = -math.inf
    hi: float = math.inf
    lo_open: bool = False
    hi_open: bool = False
    whole: bool = False

    def __str__(self) -> str:
        left = "(" if self.lo_open or math.isinf(self.lo) else "["
        right = ")" if self.hi_open or math.isinf(self.hi) else "]"
        return f"{left}{_end(self.lo)}, {_end(self.hi)}{right}"

    def admits(self, x: float) -> bool:
        """Whether the number ``x`` lies inside (finite, between the ends)."""
        if not isinstance(x, int) and not math.isfinite(x):
            return False
        above = x > self.lo if self.lo_open else x >= self.lo
        below = x < self.hi if self.hi_open else x <= self.hi
        return above and below

    def problem(self, name: str, value: Any) -> str | None:
        """The one-line refusal of ``value`` for setting ``name``, None when admitted."""
        if isinstance(value, bool) or not isinstance(value, int | float):
            return f"{name}={_show(value)} is not a number; its range is {self}"
        if self.whole and not isinstance(value, int):
            return f"{name}={_show(value)} is not a whole number; its range is {self}"
        if not self.whole and isinstance(value, int):
            try:
                value = float(value)
            except OverflowError:
                return f"{name}={_show(value)} is outside its range {self}"
        if not self.admits(value):
            return f"{name}={_show(value)} is outside its range {self}"
        return None

    def inside(self, lo: float, hi: float, step: float) -> tuple[float, float]:
        """``[lo, hi]`` narrowed to this range (an open end kept ``step`` inside), for a
        slider that must not offer a value the setting refuses.

        >>> Range(0, 1, lo_open=True).inside(-1.0, 5.0, 0.05)
        (0.05, 1)
        """
        a = max(lo, self.lo + step if self.lo_open else self.lo)
        b = min(hi, self.hi - step if self.hi_open else self.hi)
        return a, b


@dataclass(frozen=True)
class Rule:
    """Text settings: ``text`` says what is admitted, ``test`` decides, ``detail`` (called
    on a refusal) may list the admitted values."""

    text: str
    test: Callable[[str], bool]
    detail: Callable[[], str] | None = None

    def __str__(self) -> str:
        return self.text

    def problem(self, name: str, value: Any) -> str | None:
        """The one-line refusal of ``value`` for setting ``name``, None when admitted."""
        if not isinstance(value, str):
            return f"{name}={_show(value)} is not text; its range is {self}"
        if not self.test(value):
            more = f" ({self.detail()})" if self.detail else ""
            return f"{name}={_show(value)} is outside its range: {self}{more}"
        return None


@dataclass(frozen=True)
class _Bool:
    def __str__(self) -> str:
        return "True or False"

    def problem(self, name: str, value: Any) -> str | None:
        return None if isinstance(value, bool) else f"{name}={_show(value)} is not True or False"


BOOL = _Bool()
"""The range of a switch."""


@dataclass(frozen=True)
class Relation:
    """A rule two settings keep together (``names``), written as ``text``; ``test`` takes
    their values in that order."""

    names: tuple[str, str]
    text: str
    test: Callable[[Any, Any], bool]

    def problem(self, a: Any, b: Any) -> str | None:
        """The one-line refusal of the pair ``(a, b)``, None when they keep the rule."""
        if self.test(a, b):
            return None
        x, y = self.names
        return f"{x}={_show(a)} with {y}={_show(b)} breaks the rule {self.text}"


@lru_cache(maxsize=1)
def stemmers() -> tuple[str, ...]:
    """The Snowball languages PyStemmer offers (``FTS_STEM``)."""
    import Stemmer

    return tuple(Stemmer.algorithms())
