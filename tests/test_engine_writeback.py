"""SPEC §4 stage 5: write-back deltas, depression, idempotent apply, re-apply by uid."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from akasha_explorer.config import DAY, Settings
from akasha_explorer.engine.state import EdgeStore, NodeTable
from akasha_explorer.engine.toy import toy_edges, toy_nodes
from akasha_explorer.engine.writeback import WritebackPlan, apply_plan, compute_plan
from akasha_explorer.errors import InvalidInput, NotFound

S = Settings()
NOW = 100 * DAY
A, B, T, X, Y = 0, 1, 2, 3, 4


def _mirror() -> tuple[NodeTable, EdgeStore]:
    nodes = toy_nodes(np.eye(5), strength=[2.1, 3.0, 2.1, 2.1, 2.1],
                      resource=[0.5, 1.0, 1.0, 1.0, 1.0])
    nodes.strength_ts[:] = [NOW - 7 * DAY, NOW, NOW, NOW, NOW]
    nodes.resource_ts[:] = [NOW - 1800.0, NOW, NOW, NOW, NOW]
    edges = EdgeStore()
    edges.upsert(A, T, w=1.0, last_ts=NOW - 14 * DAY, co_count=4)
    edges.upsert(A, X, w=0.4, last_ts=NOW - DAY, co_count=1)
    edges.upsert(T, Y, w=0.2, last_ts=NOW - DAY, co_count=1)
    edges.upsert(X, A, w=0.9, last_ts=NOW - DAY, co_count=1)
    return nodes, edges


def _edge(plan: WritebackPlan, src: int, dst: int) -> dict[str, object]:
    e = plan.edges
    k = next(i for i in range(len(e.src)) if (e.src[i], e.dst[i]) == (src, dst))
    return {f: getattr(e, f)[k] for f in ("kind", "delta", "new", "w_eff_before", "w_after",
                                          "co_before", "co_after", "boost")}


def test_node_updates_by_hand() -> None:
    nodes, edges = _mirror()
    p = compute_plan(nodes, edges, [A, B], [1.0, 0.5], [0.8, 0.3], T, now=NOW, settings=S)
    nu = p.nodes
    s_eff = 2.1 / math.e
    assert nu.strength_eff[0] == pytest.approx(s_eff)
    assert nu.strength_after[0] == pytest.approx(s_eff + 0.18 * 1.0 * (1 - s_eff / 3.0))
    assert nu.strength_after[1] == pytest.approx(3.0)              # at the cap
    r_eff = 1 - 0.5 / math.e
    assert nu.resource_eff[0] == pytest.approx(r_eff)
    assert nu.resource_after[0] == pytest.approx(r_eff * (1 - 0.35))
    assert nu.resource_after[1] == pytest.approx(1 - 0.35 * 0.5)
    assert nu.recall_before == [0, 0]
    assert nu.recall_after == [1, 1]


def test_edge_deltas_by_hand() -> None:
    nodes, edges = _mirror()
    p = compute_plan(nodes, edges, [A, B], [1.0, 0.5], [0.8, 0.3], T, now=NOW, settings=S)
    assert p.edges.kind == ["causal", "anti", "causal", "anti", "pair", "pair"]
    at = _edge(p, A, T)                      # existing, idle 14 days
    w_eff = math.exp(-1)
    assert at["delta"] == 1.0
    assert at["new"] is False
    assert at["w_eff_before"] == pytest.approx(w_eff)
    assert at["w_after"] == pytest.approx(w_eff + 0.12 * 1.0 * (1 - w_eff / 2.0))
    assert (at["co_before"], at["co_after"]) == (4, 5)
    assert _edge(p, T, A)["w_after"] == pytest.approx(0.12 * 0.35)   # new edges start at LR·Δ
    assert _edge(p, B, T)["w_after"] == pytest.approx(0.12 * 0.5)
    assert _edge(p, T, B)["w_after"] == pytest.approx(0.12 * 0.35 * 0.5)
    pair = 0.12 * math.sqrt(0.5)
    assert _edge(p, A, B)["w_after"] == pytest.approx(pair)
    assert _edge(p, B, A)["w_after"] == pytest.approx(pair)
    assert _edge(p, A, B)["co_after"] == 1


def test_heterosynaptic_depression_by_hand() -> None:
    nodes, edges = _mirror()
    p = compute_plan(nodes, edges, [A, B], [1.0, 0.5], [0.8, 0.3], T, now=NOW, settings=S)
    d = p.depressed
    # A's other out-edge and T's; not A -> T (strengthened), not X -> A (X strengthened none)
    assert list(zip(d.src, d.dst, strict=True)) == [(A, X), (T, Y)]
    assert d.w_before == [0.4, 0.2]
    assert d.w_after == pytest.approx([0.38, 0.19])
    assert d.src_uid == ["n0", "n2"]
    assert d.dst_uid == ["n3", "n4"]
    apply_plan(p, nodes, edges)
    assert edges.w[edges.find(A, X)] == pytest.approx(0.38)
    assert edges.last_ts[edges.find(A, X)] == NOW - DAY       # last_ts untouched
    assert edges.w[edges.find(X, A)] == 0.9


def test_reinforce_boost_on_stdp_edges_only() -> None:
    nodes, edges = _mirror()
    p = compute_plan(nodes, edges, [A, B], [1.0, 0.5], [0.3, 0.9], T, now=NOW, settings=S,
                     reinforce=True)
    assert _edge(p, A, T)["boost"] == pytest.approx(1 + 2 * 0.5)     # direct 0.3 / 0.6
    assert _edge(p, B, T)["delta"] == pytest.approx(0.5 * 3.0)       # direct ≥ 0.6: full boost
    assert _edge(p, T, B)["delta"] == pytest.approx(0.35 * 0.5 * 3.0)
    assert _edge(p, A, B)["delta"] == pytest.approx(math.sqrt(0.5))  # pairs unboosted
    assert p.reinforce
    assert p.reinforce_boost == 3.0


def test_current_node_activated_skips_self_and_chains_updates() -> None:
    nodes, edges = _mirror()
    p = compute_plan(nodes, edges, [A, T], [1.0, 0.5], [0.8, 0.8], T, now=NOW, settings=S)
    pairs = list(zip(p.edges.src, p.edges.dst, p.edges.kind, strict=True))
    assert (T, T, "causal") not in pairs
    hits = [k for k, (s, d, _) in enumerate(pairs) if (s, d) == (A, T)]
    assert len(hits) == 2                       # causal, then the A <-> T pair
    first, second = hits
    assert p.edges.w_eff_before[second] == p.edges.w_after[first]
    assert p.edges.co_after[second] == p.edges.co_after[first] + 1
    apply_plan(p, nodes, edges)
    e = edges.find(A, T)
    assert edges.w[e] == p.edges.w_after[second]
    assert edges.co_count[e] == 6


def test_plan_json_round_trip_and_reapply_by_uid_on_a_rebuilt_mirror() -> None:
    nodes, edges = _mirror()
    p = compute_plan(nodes, edges, [A, B], [1.0, 0.5], [0.8, 0.3], T, now=NOW, settings=S)
    text = p.to_json()
    q = WritebackPlan.from_json(text)
    assert q == p
    assert q.to_json() == text
    # a "rebuilt" mirror: same nodes in another row order, edges loaded in another order
    order = [4, 3, 2, 1, 0]
    n2 = NodeTable(dim=5)
    for i in order:
        n2.add_node(nodes.uid[i], ts=float(nodes.ts[i]), session="s", vector=nodes.vec[i],
                    sigma=0.0, strength=float(nodes.strength[i]),
                    strength_ts=float(nodes.strength_ts[i]), resource=float(nodes.resource[i]),
                    resource_ts=float(nodes.resource_ts[i]), assistant_only=False,
                    msg_vectors=nodes.vec[i:i + 1], msg_ts=[0.0], msg_uids=[f"m{i}"])
    e2 = EdgeStore()
    for e in reversed(range(edges.count)):
        s, d = n2.index[nodes.uid[edges.src[e]]], n2.index[nodes.uid[edges.dst[e]]]
        e2.upsert(s, d, w=float(edges.w[e]), last_ts=float(edges.last_ts[e]),
                  co_count=int(edges.co_count[e]))
    apply_plan(p, nodes, edges)
    apply_plan(q, n2, e2)
    for i, u in enumerate(nodes.uid):
        assert nodes.state_row(i) == n2.state_row(n2.index[u])
    for e in range(edges.count):
        s, d = int(edges.src[e]), int(edges.dst[e])
        e_2 = e2.find(n2.index[nodes.uid[s]], n2.index[nodes.uid[d]])
        assert (edges.w[e], edges.last_ts[e], edges.co_count[e]) == (
            e2.w[e_2], e2.last_ts[e_2], e2.co_count[e_2])


def test_errors_say_what_to_do() -> None:
    nodes, edges = _mirror()
    with pytest.raises(InvalidInput, match="add the turn first"):
        compute_plan(nodes, edges, [A], [1.0], [1.0], 99, now=NOW, settings=S)
    p = compute_plan(nodes, edges, [A], [1.0], [1.0], T, now=NOW, settings=S)
    other = toy_nodes(np.eye(5), prefix="z")
    with pytest.raises(NotFound, match="not in the mirror"):
        apply_plan(p, other, toy_edges([]))


def _state(nodes: NodeTable, edges: EdgeStore) -> tuple[object, ...]:
    return (nodes.strength.copy(), nodes.strength_ts.copy(), nodes.resource.copy(),
            nodes.resource_ts.copy(), nodes.recall_count.copy(), edges.src.copy(),
            edges.dst.copy(), edges.w.copy(), edges.last_ts.copy(), edges.co_count.copy())


def _random_mirror(seed: int, n: int) -> tuple[NodeTable, EdgeStore]:
    rng = np.random.default_rng(seed)
    nodes = toy_nodes(rng.standard_normal((n, 4)), ts=np.sort(rng.uniform(0, 30 * DAY, n)),
                      strength=rng.uniform(0, 3, n), resource=rng.uniform(0, 1, n))
    k = int(rng.integers(0, n * 3))
    src, dst = rng.integers(0, n, k), rng.integers(0, n, k)
    keep = src != dst
    edges = toy_edges(zip(src[keep].tolist(), dst[keep].tolist(),
                          rng.uniform(0, 2, int(keep.sum())).tolist(), strict=True),
                      last_ts=10 * DAY)
    return nodes, edges


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(2, 12), data=st.data())
def test_applying_a_plan_twice_equals_once(seed: int, n: int, data: st.DataObject) -> None:
    rows = data.draw(st.lists(st.integers(0, n - 1), unique=True, max_size=8))
    scores = data.draw(st.lists(st.floats(0.0, 20.0), min_size=len(rows), max_size=len(rows)))
    current = data.draw(st.integers(0, n - 1))
    reinforce = data.draw(st.booleans())
    once_n, once_e = _random_mirror(seed, n)
    twice_n, twice_e = _random_mirror(seed, n)
    args = (rows, scores, [0.5] * len(rows), current)
    p1 = compute_plan(once_n, once_e, *args, now=40 * DAY, settings=S, reinforce=reinforce)
    p2 = compute_plan(twice_n, twice_e, *args, now=40 * DAY, settings=S, reinforce=reinforce)
    assert p1 == p2
    apply_plan(p1, once_n, once_e)
    apply_plan(p2, twice_n, twice_e)
    apply_plan(WritebackPlan.from_json(p2.to_json()), twice_n, twice_e)   # the journal replay
    for a, b in zip(_state(once_n, once_e), _state(twice_n, twice_e), strict=True):
        assert np.array_equal(a, b)
    assert (once_e.w <= S.EDGE_CAP).all()
