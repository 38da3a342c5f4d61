"""SPEC §3 time dynamics: hand-computed values and hypothesis properties."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from akasha_explorer.config import DAY, Settings
from akasha_explorer.engine.dynamics import (
    bounded_add,
    edge_eff,
    long_term,
    over_budget_edges,
    resource_eff,
    strength_eff,
)

S = Settings()
finite = st.floats(allow_nan=False, allow_infinity=False)


def test_bounded_add_by_hand() -> None:
    # v + δ · max(0, 1 − v / c)
    assert float(bounded_add(0.0, 0.12, 2.0)) == pytest.approx(0.12)
    assert float(bounded_add(1.0, 0.5, 2.0)) == pytest.approx(1.0 + 0.5 * 0.5)
    assert float(bounded_add(1.5, 0.4, 2.0)) == pytest.approx(1.5 + 0.4 * 0.25)
    assert float(bounded_add(2.0, 1.0, 2.0)) == 2.0
    # a step larger than the cap is clamped ([ours])
    assert float(bounded_add(0.5, 9.0, 2.0)) == 2.0


def test_decays_by_hand() -> None:
    assert float(edge_eff(1.0, 0.0, S.EDGE_TAU, S.EDGE_TAU)) == pytest.approx(math.exp(-1))
    # the design's numbers (ch. 21): 0.36 idle 0.6 d -> 0.345, 0.61 idle 38 d -> 0.040
    assert float(edge_eff(0.36, 0.0, 0.6 * DAY, S.EDGE_TAU)) == pytest.approx(0.3449, abs=1e-4)
    assert float(edge_eff(0.61, 0.0, 38 * DAY, S.EDGE_TAU)) == pytest.approx(0.0404, abs=1e-4)
    assert float(strength_eff(2.1, 0.0, 7 * DAY, S.STRENGTH_TAU)) == pytest.approx(2.1 / math.e)
    assert float(resource_eff(0.5, 0.0, 1800.0, S.RESOURCE_TAU)) == pytest.approx(
        1 - 0.5 / math.e)
    assert float(long_term(1.5, 3.0)) == 0.5
    assert float(long_term(6.0, 3.0)) == 1.0


def test_no_growth_looking_back_in_time() -> None:
    assert float(edge_eff(1.0, 100.0, 50.0, S.EDGE_TAU)) == 1.0
    assert float(resource_eff(0.3, 100.0, 50.0, S.RESOURCE_TAU)) == pytest.approx(0.3)


def test_vectorised() -> None:
    out = bounded_add(np.array([0.0, 1.0]), np.array([0.5, 0.5]), 2.0)
    assert np.allclose(out, [0.5, 1.25])


@given(v=st.floats(0.0, 2.0), delta=st.floats(0.0, 1e6), cap=st.floats(0.1, 10.0))
def test_bounded_add_never_exceeds_cap(v: float, delta: float, cap: float) -> None:
    v = min(v, cap)
    out = float(bounded_add(v, delta, cap))
    assert out <= cap
    assert out >= v


@given(w=st.floats(0.0, 2.0), last=st.floats(-1e8, 1e8), t1=st.floats(-1e8, 1e8),
       dt=st.floats(0.0, 1e8))
def test_edge_weight_decays_monotonically(w: float, last: float, t1: float, dt: float) -> None:
    a = float(edge_eff(w, last, t1, S.EDGE_TAU))
    b = float(edge_eff(w, last, t1 + dt, S.EDGE_TAU))
    assert 0.0 <= b <= a <= w


@given(s=st.floats(0.0, 3.0), last=st.floats(-1e8, 1e8), t1=st.floats(-1e8, 1e8),
       dt=st.floats(0.0, 1e8))
def test_strength_decays_monotonically(s: float, last: float, t1: float, dt: float) -> None:
    a = float(strength_eff(s, last, t1, S.STRENGTH_TAU))
    b = float(strength_eff(s, last, t1 + dt, S.STRENGTH_TAU))
    assert 0.0 <= b <= a <= s


@given(r=st.floats(0.0, 1.0), last=st.floats(-1e7, 1e7), t1=st.floats(-1e7, 1e7),
       dt=st.floats(0.0, 1e7))
def test_resource_recovers_toward_one(r: float, last: float, t1: float, dt: float) -> None:
    a = float(resource_eff(r, last, t1, S.RESOURCE_TAU))
    b = float(resource_eff(r, last, t1 + dt, S.RESOURCE_TAU))
    assert r - 1e-12 <= a <= b <= 1.0
    far = float(resource_eff(r, last, max(last, t1) + 1e6, S.RESOURCE_TAU))
    assert far == pytest.approx(1.0)


@given(st.integers(0, 2**32 - 1), st.integers(1, 12))
def test_over_budget_edges_matches_ranking_every_turn(seed: int, budget: int) -> None:
    """The budget cut equals ranking every turn's live edges by hand (strongest first, the
    lower (src, dst) rows first among equals): an edge goes when either end ranks it at ``budget`` or
    later; afterwards no turn has more than ``budget`` edges."""
    rng = np.random.default_rng(seed)
    n, m = int(rng.integers(2, 30)), int(rng.integers(0, 200))
    src = rng.integers(0, n, m)
    dst = (src + rng.integers(1, n, m)) % n                 # no self-loops (doctor's rule)
    weff = rng.choice([0.01, 0.1, 0.5, 1.0], m)           # ties on purpose
    alive = rng.random(m) < 0.8
    by_end: dict[int, list[int]] = {}
    for e in np.flatnonzero(alive).tolist():
        for end in (int(src[e]), int(dst[e])):
            by_end.setdefault(end, []).append(e)
    gone = set()
    for ids in by_end.values():
        gone |= set(sorted(ids, key=lambda e: (-weff[e], src[e], dst[e], e))[budget:])
    got = over_budget_edges(src, dst, weff, alive, budget)
    assert got.tolist() == sorted(gone)
    kept = alive.copy()
    kept[got] = False
    for end in range(n):
        assert int(((src == end) | (dst == end))[kept].sum()) <= budget
