"""What if: two recalls of one query — the baseline and one under changed constants or at
another time — compared item by item (issue 16). Pure: traces in, plain values out; the
recalls themselves are dry runs a caller made (``mem.recall(..., settings=…, log=False)``).

:func:`diff_traces` says which items entered the top ``k`` (Akasha's candidates by final
score, or what an agent receives: the context order,
:func:`~akasha_explorer.analysis.methods.context_order`), which left, which moved, and for
each the score terms that changed most (of every settlement term of
:meth:`RecallTrace.explain`). :data:`WHATIF_SETTINGS` are the constants the WhatIf panel
offers.

>>> from akasha_explorer.engine.trace import RecallTrace
>>> d = diff_traces(RecallTrace.empty(), RecallTrace.empty())
>>> d.entered, d.left, d.moved, len(d.frame)
([], [], [], 0)
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from ..engine.trace import FRAME_COLUMNS, RecallTrace
from .methods import context_order

__all__ = ["ORDERS", "TERMS", "WHATIF_SETTINGS", "WhatIfDiff", "changed_settings", "diff_traces"]

WHATIF_SETTINGS = (
    "STRENGTH_TAU", "EDGE_TAU", "RESOURCE_TAU", "DENSE_SEED_MIN", "FTS_MIN_IDF",
    "FUSION_DENSE_WEIGHT", "CONTEXT_NEIGHBOR", "TIME_PRIOR", "CROSS_BOOST", "RWR_STEPS",
    "RWR_ALPHA", "GRAPH_LIMIT", "ACTIVATION_THRESHOLD", "ACTIVATION_K", "RELEVANCE_FLOOR",
    "USE_SALIENCE",
)
"""The constants that move a recall most (SPEC §3–4), in the order the panel shows them."""

TERMS = tuple(c for c in FRAME_COLUMNS if c not in (
    "uid", "row", "kind", "source", "path", "seed", "bridge", "activated", "in_ripple",
    "in_dense", "suppressed_reason"))
"""The numeric score terms compared per item."""


@dataclass
class WhatIfDiff:
    """The difference between a baseline recall and a what-if recall of the same query.

    ``frame``: one row per item in either top ``k`` — ``uid``, ``change`` (entered, left,
    up, down, same), ``rank_before`` / ``rank_after`` (1-based, None: not in that top
    ``k``), ``score_before`` / ``score_after``, ``source_before`` / ``source_after`` and
    ``terms`` (the score terms that changed, ``name before→after``); ``settings``: the
    constants that differ (``{name: (before, after)}``); ``now``: the two times."""

    frame: pd.DataFrame
    entered: list[str] = field(default_factory=list)
    left: list[str] = field(default_factory=list)
    moved: list[str] = field(default_factory=list)
    settings: dict[str, tuple[Any, Any]] = field(default_factory=dict)
    now: tuple[float, float] = (0.0, 0.0)

    def summary(self, units: dict[str, tuple[float, str]] | None = None) -> str:
        """One line: how many entered, left, moved, and which constants changed — in the
        ``units`` a panel shows them in (``{name: (seconds per unit, unit)}``), else as
        stored.

        >>> d = WhatIfDiff(pd.DataFrame(), ["a"], [], [], {"EDGE_TAU": (86400.0, 172800.0)})
        >>> d.summary()
        '1 entered, 0 left, 0 moved · EDGE_TAU 86400 → 172800'
        >>> d.summary({"EDGE_TAU": (86400.0, "days")})
        '1 entered, 0 left, 0 moved · EDGE_TAU 1 → 2 days'
        """
        head = f"{len(self.entered)} entered, {len(self.left)} left, {len(self.moved)} moved"
        units = units or {}
        ch = []
        for k, (a, b) in self.settings.items():
            scale, unit = units.get(k, (1.0, ""))
            a, b = ((x / scale if isinstance(x, int | float) and not isinstance(x, bool)
                     else x) for x in (a, b))
            ch.append(f"{k} {_fmt(a)} → {_fmt(b)}" + (f" {unit}" if unit else ""))
        if self.now[0] != self.now[1]:
            ch.append(f"now {self.now[1] - self.now[0]:+.0f} s")
        return head + (" · " + ", ".join(ch) if ch else "")


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.6g}"
    return str(v)


def changed_settings(before: dict[str, Any], after: dict[str, Any]) -> dict[str, tuple[Any, Any]]:
    """The settings that differ between two settings dicts (``trace.settings``).

    >>> changed_settings({"A": 1, "B": 2}, {"A": 1, "B": 3})
    {'B': (2, 3)}
    """
    return {k: (before.get(k), after.get(k)) for k in sorted(set(before) | set(after))
            if before.get(k) != after.get(k)}


def _num(v: Any) -> float | None:
    if isinstance(v, bool) or v is None:
        return None
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(f) else f


def _terms(a: dict[str, Any], b: dict[str, Any], *, most: int = 4, tol: float = 1e-9) -> str:
    """The ``most`` score terms that changed most (relative to their size), biggest first."""
    out = []
    for t in TERMS:
        x, y = _num(a.get(t)), _num(b.get(t))
        if (x is None and y is None) or t == "score":
            continue
        if x is None or y is None or abs(x - y) > tol * max(1.0, abs(x), abs(y)):
            rel = 1.0 if x is None or y is None else abs(x - y) / max(abs(x), abs(y), 1e-12)
            text = f"{t} {'–' if x is None else f'{x:.3g}'}→{'–' if y is None else f'{y:.3g}'}"
            out.append((rel, text))
    out.sort(key=lambda p: -p[0])
    return ", ".join(text for _, text in out[:most])


ORDERS = ("akasha", "context")
"""What :func:`diff_traces` compares: Akasha's candidates by final score, or the order an
agent receives (the fused first block leads it, so graph constants move it less)."""


def _order(trace: RecallTrace, order: str) -> list[str]:
    if order == "akasha":
        return trace.ranking()
    if order == "context":
        return context_order(trace)
    raise ValueError(f"order={order!r}: use one of {', '.join(ORDERS)}")


def diff_traces(base: RecallTrace, variant: RecallTrace, *, k: int = 10,
                order: str = "akasha") -> WhatIfDiff:
    """Compare the top ``k`` of two recalls (see the module docstring) in ``order``
    (:data:`ORDERS`)."""
    a, b = _order(base, order)[:k], _order(variant, order)[:k]
    pa, pb = {u: i + 1 for i, u in enumerate(a)}, {u: i + 1 for i, u in enumerate(b)}
    rows: list[dict[str, Any]] = []
    for u in list(dict.fromkeys(b + a)):
        ea, eb = base.explain(u), variant.explain(u)
        ra, rb = pa.get(u), pb.get(u)
        if ra is None:
            change = "entered"
        elif rb is None:
            change = "left"
        else:
            change = "up" if rb < ra else "down" if rb > ra else "same"
        rows.append({"uid": u, "change": change, "rank_before": ra, "rank_after": rb,
                     "score_before": _num(ea.get("score")), "score_after": _num(eb.get("score")),
                     "source_before": ea.get("source") or "",
                     "source_after": eb.get("source") or "",
                     "terms": _terms(ea, eb)})
    frame = pd.DataFrame(rows, columns=["uid", "change", "rank_before", "rank_after",
                                        "score_before", "score_after", "source_before",
                                        "source_after", "terms"])
    frame[["rank_before", "rank_after"]] = frame[["rank_before", "rank_after"]].astype("Int64")
    return WhatIfDiff(frame=frame,
                      entered=[r["uid"] for r in rows if r["change"] == "entered"],
                      left=[r["uid"] for r in rows if r["change"] == "left"],
                      moved=[r["uid"] for r in rows if r["change"] in ("up", "down")],
                      settings=changed_settings(base.settings, variant.settings),
                      now=(base.now, variant.now))
