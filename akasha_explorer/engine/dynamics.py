"""Time dynamics of SPEC §3: bounded growth and the three decays.

All functions are pure and vectorised (scalars or numpy arrays in, same out); ``now`` is
always a parameter — the engine never reads the wall clock. A time difference that would
be negative (a recall "in the past" of a value) is clamped to zero, so a value never grows
by looking back in time.

>>> round(float(bounded_add(1.0, 0.5, 2.0)), 6)
1.25
>>> round(float(edge_eff(0.61, 0.0, 38 * 86400.0, 14 * 86400.0)), 3)
0.04
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = ["bounded_add", "edge_eff", "edges_to_prune", "long_term", "over_budget_edges",
           "prunable_edges", "resource_eff", "strength_eff"]

Float = NDArray[np.float64] | float


def _dt(now: ArrayLike, ts: ArrayLike) -> NDArray[np.float64]:
    return np.maximum(0.0, np.asarray(now, dtype=np.float64) - np.asarray(ts, dtype=np.float64))


def bounded_add(v: ArrayLike, delta: ArrayLike, cap: float) -> Float:
    """SPEC §3: ``v + delta * max(0, 1 - v / cap)``, then at most ``cap``.

    The SPEC formula alone stays below ``cap`` only while ``delta <= cap``; scores above 1
    (normal: "brightness, not probability") times a reinforce boost can make the step
    larger, so the result is also clamped to ``cap`` (**[ours]**; a value already above
    ``cap`` is left where it is). Never exceeds ``cap`` for ``v <= cap``, ``delta >= 0``.

    >>> float(bounded_add(0.0, 0.3, 2.0))
    0.3
    >>> float(bounded_add(2.0, 5.0, 2.0))
    2.0
    """
    v = np.asarray(v, dtype=np.float64)
    out = v + np.asarray(delta, dtype=np.float64) * np.maximum(0.0, 1.0 - v / cap)
    return np.minimum(out, np.maximum(cap, v))


def edge_eff(w: ArrayLike, last_ts: ArrayLike, now: ArrayLike, tau: float) -> Float:
    """SPEC §3: effective edge weight ``w * exp(-(now - last_ts) / EDGE_TAU)``.

    >>> float(edge_eff(1.0, 0.0, 14 * 86400.0, 14 * 86400.0)) == float(np.exp(-1))
    True
    """
    return np.asarray(w, dtype=np.float64) * np.exp(-_dt(now, last_ts) / tau)


def prunable_edges(w: ArrayLike, last_ts: ArrayLike, alive: ArrayLike, now: float,
                   tau: float, below: float) -> NDArray[np.int64]:
    """SPEC §3 **[ours]**, v2: the live edges whose ``w_eff`` at ``now`` is below ``below``
    (``EDGE_PRUNE_BELOW``; 0 prunes nothing) — dropped at a checkpoint. ``w_eff`` only
    decays while an edge is not used, so an edge below it at ``now`` stays below it.

    >>> day = 86400.0
    >>> prunable_edges([0.12, 0.12, 1.0], [0.0, 60 * day, 0.0], [True, True, True],
    ...                now=70 * day, tau=14 * day, below=1e-3).tolist()
    [0]
    >>> prunable_edges([0.12], [0.0], [True], now=1e9, tau=14 * day, below=0.0).tolist()
    []
    """
    if below <= 0:
        return np.zeros(0, np.int64)
    return _decayed(np.asarray(edge_eff(w, last_ts, now, tau)), alive, below)


def _decayed(weff: NDArray[np.float64], alive: ArrayLike, below: float) -> NDArray[np.int64]:
    return np.flatnonzero(np.asarray(alive, bool) & (weff < below)).astype(np.int64)


def over_budget_edges(src: ArrayLike, dst: ArrayLike, weff: ArrayLike, alive: ArrayLike,
                      budget: int) -> NDArray[np.int64]:
    """SPEC §3 **[ours]**, v2: the live edges outside the ``budget`` strongest of either of
    their end points (``EDGE_BUDGET``; 0: no budget) — dropped at a checkpoint, so no turn
    keeps more than ``budget`` co-activation edges. Strength is ``weff`` (``w_eff`` at the
    store's time); among equals (the pairs of one write-back often are) the edge of the
    lower ``(src, dst)`` rows stays — not the lower id, which a reopen or a compaction
    gives anew, so a store cuts the same edges whether or not it was reopened.

    >>> # node 0 has four edges; with a budget of 2 its two weakest go
    >>> over_budget_edges([0, 0, 0, 0, 1], [1, 2, 3, 4, 2], [0.5, 0.1, 0.9, 0.1, 0.3],
    ...                   [True] * 5, budget=2).tolist()
    [1, 3]
    >>> over_budget_edges([0, 0], [1, 2], [0.5, 0.1], [True, True], budget=0).tolist()
    []
    """
    ids = np.flatnonzero(np.asarray(alive, bool)).astype(np.int64)
    if budget <= 0 or not ids.size:
        return np.zeros(0, np.int64)
    s, d = np.asarray(src, np.int64)[ids], np.asarray(dst, np.int64)[ids]
    over = np.bincount(np.concatenate([s, d])) > budget
    if not over.any():
        return np.zeros(0, np.int64)
    # only the end points over the budget rank their edges (elsewhere every edge is kept)
    at_s, at_d = over[s], over[d]
    ends = np.concatenate([s[at_s], d[at_d]])
    edge = np.concatenate([ids[at_s], ids[at_d]])
    strength = np.asarray(weff, np.float64)
    s_all, d_all = np.asarray(src, np.int64), np.asarray(dst, np.int64)
    pair = (s_all[edge] << 32) | d_all[edge]
    order = np.lexsort((edge, pair, -strength[edge], ends))
    ends, edge = ends[order], edge[order]
    first = np.r_[0, np.flatnonzero(np.diff(ends)) + 1]
    rank = np.arange(ends.size) - np.repeat(first, np.diff(np.r_[first, ends.size]))
    return np.unique(edge[rank >= budget]).astype(np.int64)


def edges_to_prune(src: ArrayLike, dst: ArrayLike, w: ArrayLike, last_ts: ArrayLike,
                   alive: ArrayLike, now: float, *, tau: float, below: float, budget: int
                   ) -> NDArray[np.int64]:
    """What a checkpoint drops (SPEC §3, v2): the edges decayed below ``below``
    (:func:`prunable_edges`), then those over each end point's ``budget`` among the rest
    (:func:`over_budget_edges`); sorted edge ids.

    >>> day = 86400.0
    >>> edges_to_prune([0, 0, 0], [1, 2, 3], [1.0, 0.5, 0.12], [0.0, 0.0, -90 * day],
    ...                [True] * 3, 0.0, tau=14 * day, below=1e-3, budget=1).tolist()
    [1, 2]
    """
    if budget <= 0:
        return prunable_edges(w, last_ts, alive, now, tau, below)
    weff = np.asarray(edge_eff(w, last_ts, now, tau))   # once: O(edges) at every checkpoint
    gone = _decayed(weff, alive, below) if below > 0 else np.zeros(0, np.int64)
    rest = np.array(alive, bool, copy=True)
    rest[gone] = False
    return np.union1d(gone, over_budget_edges(src, dst, weff, rest, budget)).astype(np.int64)


def strength_eff(strength: ArrayLike, strength_ts: ArrayLike, now: ArrayLike, tau: float) -> Float:
    """SPEC §3: decayed strength ``strength * exp(-(now - strength_ts) / STRENGTH_TAU)``.

    >>> round(float(strength_eff(3.0, 0.0, 7 * 86400.0, 7 * 86400.0)), 4)
    1.1036
    """
    return np.asarray(strength, dtype=np.float64) * np.exp(-_dt(now, strength_ts) / tau)


def long_term(strength_effective: ArrayLike, cap: float) -> Float:
    """SPEC §3: ``long = min(1, strength_eff / 3.0)``.

    >>> float(long_term(1.5, 3.0)), float(long_term(4.0, 3.0))
    (0.5, 1.0)
    """
    return np.minimum(1.0, np.asarray(strength_effective, dtype=np.float64) / cap)


def resource_eff(resource: ArrayLike, resource_ts: ArrayLike, now: ArrayLike, tau: float) -> Float:
    """SPEC §3: resource recovers toward 1: ``1 - (1 - r) * exp(-(now - ts) / RESOURCE_TAU)``.

    >>> round(float(resource_eff(0.65, 0.0, 1800.0, 1800.0)), 4)
    0.8712
    """
    r = np.asarray(resource, dtype=np.float64)
    return 1.0 - (1.0 - r) * np.exp(-_dt(now, resource_ts) / tau)
