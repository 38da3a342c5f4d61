"""Recall health: read-only indicators from the query log (issue 9; Mnemosyne recall_health).

:func:`recall_health` summarises query-log rows (Kuzu ``QueryLog`` plus the rows still
waiting in the mirror for the next checkpoint) and the mirror's edges:

- how many recalls activated nothing (empty-activation rate);
- the distribution of scores — the top-1 score of each recall and every activated item's
  score — overall and per time window, so a drift shows as a trend;
- the source mix of activated items and of seeds (``Dense``, ``Dense(FB)``, ``FTS``,
  ``BlackHole``, ``Bridge`` = the RWR bridge, ``Graph``; a combined label such as
  ``Dense(FB)+FTS`` counts for each part);
- latency percentiles (the engine's time, without the query embedding);
- edge count and its growth — the query log has no edge-count column, so growth per window
  is read from the edges' last-write times (``edges_touched``: edges written in that
  window, a lower bound on how many changed);
- the top hubs by fan (COACT edges in + out) with how often they appear among activated
  items (a hub that shows up in most recalls crowds the rest out).

Times are the recalls' ``now`` (the time a recall was asked *for*), windows are aligned to
multiples of ``window`` seconds since the epoch (UTC days by default).

>>> h = recall_health([], edge_count=0, node_count=0)
>>> h["queries"], h["empty_rate"], h["windows"]
(0, None, [])
"""

from __future__ import annotations

import datetime as dt
import json
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

__all__ = ["SOURCES", "format_health", "recall_health"]

SOURCES = ("Dense", "Dense(FB)", "FTS", "BlackHole", "Bridge", "Graph")
"""Source labels of the engine, in the order they are reported."""


def _pct(values: Sequence[float], qs: Sequence[int] = (10, 50, 90)) -> dict[str, float] | None:
    if not values:
        return None
    arr = np.asarray(values, float)
    return {f"p{q}": round(float(np.percentile(arr, q)), 4) for q in qs}


def _sources(labels: Iterable[str]) -> dict[str, int]:
    c: Counter[str] = Counter()
    for label in labels:
        for part in str(label).split("+"):
            if part:
                c[part] += 1
    known = {s: c.pop(s, 0) for s in SOURCES}
    return {**known, **dict(sorted(c.items()))}


def _loads(value: Any) -> list[Any]:
    if not value:
        return []
    return list(json.loads(value)) if isinstance(value, str) else list(value)


def _iso(ts: float) -> str:
    return dt.datetime.fromtimestamp(ts, dt.UTC).isoformat(timespec="seconds")


def _summary(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    items = [_loads(r.get("items")) for r in rows]
    seeds = [_loads(r.get("seeds")) for r in rows]
    top1 = [float(max(x[1] for x in it)) for it in items if it]
    scores = [float(x[1]) for it in items for x in it]
    lat = [float(r["latency_ms"]) for r in rows if r.get("latency_ms") is not None]
    empty = sum(bool(r.get("empty")) for r in rows)
    n = len(rows)
    return {
        "queries": n,
        "empty": empty,
        "empty_rate": round(empty / n, 4) if n else None,
        "committed": sum(bool(r.get("committed")) for r in rows),
        "top1_score": _pct(top1),
        "item_score": _pct(scores),
        "latency_ms": _pct(lat, (50, 90, 99)),
        "item_sources": _sources(x[2] for it in items for x in it),
        "seed_sources": _sources(x[1] for s in seeds for x in s),
    }


def recall_health(rows: Sequence[Mapping[str, Any]], *, edge_count: int, node_count: int,
                  edge_last_ts: Sequence[float] | np.ndarray = (),
                  fan: Mapping[str, int] | None = None,
                  node_info: Mapping[str, Mapping[str, Any]] | None = None,
                  window: float = 86400.0, windows: int = 14, top_hubs: int = 10
                  ) -> dict[str, Any]:
    """Health indicators of query-log ``rows`` (see the module docstring).

    ``edge_last_ts`` are the last-write times of the alive COACT edges, ``fan`` maps node
    uid to its fan, ``node_info`` adds fields per hub (session, recall_count, strength).
    Returns a JSON-ready dict; ``windows`` caps the per-window list to the latest ones.

    >>> rows = [{"ts": 10.0, "empty": False, "latency_ms": 4.0, "seeds": '[["a","Dense"]]',
    ...          "items": '[["a",0.9,"Dense"],["b",0.3,"Graph"]]', "method": "akasha"},
    ...         {"ts": 20.0, "empty": True, "latency_ms": 2.0, "seeds": "[]", "items": "[]",
    ...          "method": "akasha"}]
    >>> h = recall_health(rows, edge_count=5, node_count=3, window=100.0)
    >>> h["empty_rate"], h["top1_score"]["p50"], h["item_sources"]["Graph"]
    (0.5, 0.9, 1)
    """
    if window <= 0:
        raise ValueError("window must be positive")
    rows = sorted(rows, key=lambda r: (float(r["ts"]), str(r.get("uid", ""))))
    out: dict[str, Any] = _summary(rows)
    out["first_ts"] = _iso(float(rows[0]["ts"])) if rows else None
    out["last_ts"] = _iso(float(rows[-1]["ts"])) if rows else None
    out["methods"] = dict(sorted(Counter(str(r.get("method") or "") for r in rows).items()))
    last = np.asarray(edge_last_ts, float)
    out["edges"] = {"count": int(edge_count), "nodes": int(node_count),
                    "per_node": round(edge_count / node_count, 3) if node_count else None}
    buckets: dict[int, list[Mapping[str, Any]]] = {}
    for r in rows:
        buckets.setdefault(int(np.floor(float(r["ts"]) / window)), []).append(r)
    win = []
    for b in sorted(buckets)[-windows:] if windows > 0 else []:
        start, end = b * window, (b + 1) * window
        s = _summary(buckets[b])
        s["edges_touched"] = int(((last >= start) & (last < end)).sum())
        win.append({"start": _iso(start), "end": _iso(end), **s})
    out["window_seconds"] = window
    out["windows"] = win
    hits: Counter[str] = Counter()
    for r in rows:
        hits.update({x[0] for x in _loads(r.get("items"))})
    hubs = sorted((fan or {}).items(), key=lambda kv: (-kv[1], kv[0]))[:top_hubs]
    info = node_info or {}
    out["top_hubs"] = [{"node": u, "fan": int(f), **dict(info.get(u, {})),
                        "activated_in": hits.get(u, 0),
                        "activated_rate": round(hits.get(u, 0) / len(rows), 4) if rows else None}
                       for u, f in hubs]
    out["notes"] = ["edge growth per window is edges_touched (edges whose last write falls in "
                    "the window); the query log records no edge count",
                    "latency is the engine's recall time, without embedding the query"]
    return out


def _fmt_pct(p: Mapping[str, float] | None, digits: int = 3) -> str:
    if not p:
        return "-"
    return "  ".join(f"{k} {v:.{digits}f}" for k, v in p.items())


def _fmt_mix(mix: Mapping[str, int]) -> str:
    total = sum(mix.values())
    if not total:
        return "-"
    return " · ".join(f"{k} {v} ({100 * v / total:.0f}%)" for k, v in mix.items() if v)


def format_health(h: Mapping[str, Any]) -> str:
    """The health dict as lines for a person (what ``akasha health`` prints).

    >>> print(format_health(recall_health([], edge_count=0, node_count=0)).splitlines()[0])
    recall health: no recall logged yet (recall with logging on, e.g. Memory.recall)
    """
    if not h["queries"]:
        return ("recall health: no recall logged yet (recall with logging on, e.g. "
                f"Memory.recall)\nedges: {h['edges']['count']} on {h['edges']['nodes']} nodes")
    methods = ", ".join(f"{k}={v}" for k, v in h["methods"].items())
    e = h["edges"]
    lines = [
        f"recall health: {h['queries']} recalls from {h['first_ts']} to {h['last_ts']} "
        f"({methods})",
        f"empty activation  {h['empty']}/{h['queries']} = {100 * h['empty_rate']:.1f}%",
        f"top-1 score       {_fmt_pct(h['top1_score'])}",
        f"item scores       {_fmt_pct(h['item_score'])}",
        f"latency ms        {_fmt_pct(h['latency_ms'], 1)}",
        f"activated from    {_fmt_mix(h['item_sources'])}",
        f"seeds from        {_fmt_mix(h['seed_sources'])}",
        f"edges             {e['count']} on {e['nodes']} nodes ({e['per_node']} per node)",
        f"windows of {h['window_seconds'] / 3600:g} h (latest {len(h['windows'])}):",
        f"  {'start':<20} {'recalls':>7} {'empty':>6} {'top1 p50':>8} {'item p50':>8} "
        f"{'ms p50':>7} {'edges touched':>13}",
    ]
    for w in h["windows"]:
        t1 = w["top1_score"]["p50"] if w["top1_score"] else float("nan")
        it = w["item_score"]["p50"] if w["item_score"] else float("nan")
        ms = w["latency_ms"]["p50"] if w["latency_ms"] else float("nan")
        lines.append(f"  {w['start'][:19]:<20} {w['queries']:>7} {100 * w['empty_rate']:>5.0f}% "
                     f"{t1:>8.3f} {it:>8.3f} {ms:>7.1f} {w['edges_touched']:>13}")
    lines.append("top hubs by fan:")
    for hub in h["top_hubs"]:
        extra = "  ".join(f"{k} {v}" for k, v in hub.items()
                          if k not in ("node", "fan", "activated_in", "activated_rate"))
        lines.append(f"  {hub['node']:<28} fan {hub['fan']:>4}  activated in "
                     f"{hub['activated_in']}/{h['queries']}  {extra}".rstrip())
    return "\n".join(lines)
