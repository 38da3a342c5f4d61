"""SPEC §4 formulas against hand-computed values (stages 1–4), on hand-built mirrors."""

from __future__ import annotations

import math

import numpy as np
import pytest

from akasha_explorer.config import DAY, Settings
from akasha_explorer.engine.bm25 import LexicalHits
from akasha_explorer.engine.recall import recall
from akasha_explorer.engine.ripple import (
    cross_matrix,
    graph_expand,
    initial_energy,
    micrograph_rows,
    node_state,
    path_info,
    rwr,
    transition,
)
from akasha_explorer.engine.seeds import select_seeds, top_k
from akasha_explorer.engine.settle import groups, settle
from akasha_explorer.engine.toy import toy_edges, toy_nodes, unit
from akasha_explorer.engine.trace import GraphExpand, ItemList, MicroGraph, SeedTable

S = Settings.profile("v1")  # these tests pin the V1-faithful engine (the v1 profile)
f32 = lambda x: float(np.float32(x))  # noqa: E731  (cosines are float32 dot products)


# -- stage 1 -------------------------------------------------------------------------------
def _cos_nodes(cos: list[float]) -> tuple[np.ndarray, object]:
    """Nodes in 2-d whose cosine with q = [1, 0] is exactly the given float32 values."""
    vecs = [[c, math.sqrt(max(0.0, 1 - c * c))] for c in cos]
    nodes = toy_nodes(vecs)
    return nodes.vec.astype(np.float64) @ np.array([1.0, 0.0]), nodes


def test_dense_seeds_threshold_and_order() -> None:
    cos, nodes = _cos_nodes([0.5, 0.9, 0.7, 0.67, 0.68])
    t = select_seeds(nodes, toy_edges([]), cos, cos, np.ones(5, bool), LexicalHits.empty(),
                     settings=S)
    assert t.uids == ["n1", "n2", "n4"]          # > 0.675, best first
    assert t.source == ["Dense"] * 3
    assert not t.fallback
    assert t.relevant
    assert t.energy == t.energy_boosted == [1.0] * 3


def test_dense_fallback_top_k() -> None:
    cos, nodes = _cos_nodes([0.1 * k for k in range(6)])
    t = select_seeds(nodes, toy_edges([]), cos, cos, np.ones(6, bool), LexicalHits.empty(),
                     settings=S.replace(DENSE_TOP_K=3))
    assert t.uids == ["n5", "n4", "n3"]
    assert t.source == ["Dense(FB)"] * 3
    assert t.fallback
    assert not t.relevant


def test_fts_boost_fts_only_cap_and_first_occurrence() -> None:
    cos, nodes = _cos_nodes([0.9, 0.1, 0.2, 0.3, 0.4])
    # message rows == node rows here; node 0 hit twice, node 4 invisible
    hits = LexicalHits((), (3, 0, 0, 4, 1, 2), (6.0, 5.0, 4.0, 3.0, 2.0, 1.0), 5)
    vis = np.array([True, True, True, True, False])
    t = select_seeds(nodes, toy_edges([(0, 1, 1.0), (2, 0, 1.0), (0, 3, 1.0)]), cos, cos, vis,
                     hits, settings=S.replace(FTS_ONLY_MAX=2))
    assert t.uids == ["n0", "n3", "n1"]          # n2 over FTS_ONLY_MAX, n4 invisible
    assert t.source == ["Dense+FTS", "FTS", "FTS"]
    assert t.bm25_rank == [2, 1, 5]
    assert t.energy_boosted == [1.3, 1.0, 1.0]   # boosted once, not twice
    assert t.fan == [3, 1, 1]
    assert t.energy_fan == pytest.approx([1.3 / 2.0, 1 / math.sqrt(2), 1 / math.sqrt(2)])
    capped = select_seeds(nodes, toy_edges([]), cos, cos, vis, hits,
                          settings=S.replace(FTS_BOOST=2.0))
    assert capped.energy_boosted[0] == 1.5       # min(FTS_BOOST_CAP, e * FTS_BOOST)


def test_blackhole_seeds() -> None:
    cos, nodes = _cos_nodes([0.9, 0.65, 0.62, 0.61, 0.7])
    nodes.sigma[:] = [0.0, 0.85, 0.9, 0.79, 0.95]
    t = select_seeds(nodes, toy_edges([]), cos, cos, np.ones(5, bool), LexicalHits.empty(),
                     settings=S.replace(BLACKHOLE_MAX=1))
    assert list(zip(t.uids, t.source, strict=True)) == [
        ("n0", "Dense"), ("n4", "Dense"), ("n1", "BlackHole")]
    off = select_seeds(nodes, toy_edges([]), cos, cos, np.ones(5, bool), LexicalHits.empty(),
                       settings=S.replace(USE_SALIENCE=False))
    assert "BlackHole" not in off.source
    assert off.sigma == [0.0, 0.0]


def test_top_k_ties_to_lower_row() -> None:
    assert top_k([1.0, 3.0, 3.0, 2.0, 3.0], 2).tolist() == [1, 2]
    assert top_k(np.ones(200), 3).tolist() == [0, 1, 2]


# -- stage 2a ------------------------------------------------------------------------------
def test_micrograph_rows_window_and_gate() -> None:
    ts = np.array([0.0, 1800.0, 3300.0, 100.0, 5000.0, 3500.0])
    cos = np.array([0.9, 0.5, 0.5, 0.2, 0.5, 0.5])
    vis = np.array([True, True, True, True, True, False])
    rows = micrograph_rows([0], ts, cos, vis, window=1800.0, min_cos=0.28)
    assert rows.tolist() == [0, 1]   # 1800 s is inside; 3300 s out; cos 0.2 out; invisible out
    rows = micrograph_rows([4, 0], ts, cos, vis, window=1800.0, min_cos=0.28)
    assert rows.tolist() == [4, 0, 1, 2]


def test_state_by_hand() -> None:
    state = node_state(np.array([0.5, 0.0]), np.array([0.2, 1.0]), np.array([0.8, 1.0]),
                       [8, 0], settings=S)
    assert state[0] == pytest.approx(math.exp(1.4 * 0.5 + 0.2) * 0.8 / 3.0)
    assert state[1] == pytest.approx(math.e)


def test_e0_by_hand() -> None:
    e0 = initial_energy([1.3, 1.0], [3, 0], 4)
    raw = np.array([1.3 / 2.0, 1.0, 0.0, 0.0])
    assert e0 == pytest.approx(raw / raw.sum())
    assert e0.sum() == pytest.approx(1.0)


def test_cross_is_effective_weight_of_incoming_edge() -> None:
    edges = toy_edges([(3, 1, 1.0), (1, 3, 0.5), (1, 9, 2.0)], last_ts=0.0)
    c, i, j = cross_matrix([1, 3], edges, S.EDGE_TAU, tau=S.EDGE_TAU)
    # cross[i, j] = w_eff(j -> i): cross[0, 1] = edge 3 -> 1
    assert c[0, 1] == pytest.approx(math.exp(-1))
    assert c[1, 0] == pytest.approx(0.5 * math.exp(-1))
    assert c[0, 0] == c[1, 1] == 0.0
    assert sorted(zip(i.tolist(), j.tolist(), strict=True)) == [(0, 1), (1, 0)]


def test_transition_top_edges_per_column_and_normalisation() -> None:
    v = np.array([[1, 0], [0.8, 0.6], [0.6, 0.8], [0, 1]], float)
    state = np.array([1.0, 2.0, 1.0, 1.0])
    cross = np.zeros((4, 4))
    cross[3, 0] = 0.5                       # edge 0 -> 3
    raw, p = transition(v, state, cross, cross_boost=36.0, top_edges=2)
    sim = np.maximum(v @ v.T, 0)
    np.fill_diagonal(sim, 0)
    full = sim * state[:, None] * (1 + 36 * cross)
    # column 0 (from node 0): 0.8*2=1.6, 0.6, 0*19=0 -> keeps rows 1, 2
    assert raw[:, 0].tolist() == pytest.approx([0.0, 1.6, 0.6, 0.0])
    assert p[:, 0].tolist() == pytest.approx([0.0, 1.6 / 2.2, 0.6 / 2.2, 0.0])
    assert (np.count_nonzero(raw, axis=0) <= 2).all()
    for j in range(4):
        kept = np.sort(full[:, j])[-2:]
        assert np.sort(raw[:, j])[-2:] == pytest.approx(kept)
    assert p.sum(axis=0) == pytest.approx(np.ones(4))


def _three_nodes() -> tuple[object, np.ndarray]:
    # a = seed; b, c gated in; sim(a, b) = 0.6, sim(a, c) = 0, sim(b, c) = 0.48
    nodes = toy_nodes([[1, 0, 0], [0.6, 0.8, 0], [0, 0.6, 0.8]], strength=[0, 0, 0],
                      ts=[0, 60, 120])
    return nodes, unit([0.8, 0.1, 0.5])


def test_one_rwr_step_and_paths_on_three_nodes_by_hand() -> None:
    p = np.array([[0, 0.6 / 1.08, 0], [1, 0, 1], [0, 0.48 / 1.08, 0]])
    e0 = np.array([1.0, 0, 0])
    steps = rwr(p, e0, alpha=0.2, steps=2)
    assert steps[0] == pytest.approx([0.2, 0.8, 0.0])
    assert steps[1] == pytest.approx([0.2 + 0.8 * 0.8 * 0.6 / 1.08, 0.16,
                                      0.8 * 0.8 * 0.48 / 1.08])
    code, seed, bridge, c0, c1, c2 = path_info(p, e0, np.array([True, False, False]),
                                               alpha=0.2)
    assert c0 == pytest.approx([0.2, 0, 0])
    assert c1 == pytest.approx([0, 0.16, 0])
    assert c2 == pytest.approx([0.64 * 0.6 / 1.08, 0, 0.64 * 0.48 / 1.08])
    assert code.tolist() == [2, 1, 2]      # the seed's own energy comes back via b (V1)
    assert seed.tolist() == [0, 0, 0]
    assert bridge.tolist() == [1, -1, 1]


def test_recall_micrograph_and_settlement_by_hand() -> None:
    nodes, q = _three_nodes()
    t = recall(nodes, toy_edges([]), q, LexicalHits.empty(), now=200.0, settings=S)
    m, s = t.micro, t.settle
    cos = [f32(0.8 / math.sqrt(0.9)), f32(0.6 * f32(0.8 / math.sqrt(0.9)))]
    assert m.uids == ["n0", "n1", "n2"]
    assert m.is_seed == [True, False, False]
    assert m.state == [1.0, 1.0, 1.0]                     # σ = 0, long = 0, r = 1, fan = 0
    assert m.e0 == [1.0, 0.0, 0.0]
    assert m.current[0] == pytest.approx([0.2, 0.8, 0.0])
    cur = [0.2 + 0.64 * 0.6 / 1.08, 0.16, 0.64 * 0.48 / 1.08]
    assert m.current[1] == pytest.approx(cur)
    assert m.path == ["2hop", "1hop", "2hop"]
    assert m.path_seed == ["n0", "n0", "n0"]
    assert m.path_bridge == ["n1", None, "n1"]
    direct = np.maximum(0, np.array(m.cos_node))
    assert direct[0] == pytest.approx(cos[0], abs=1e-6)
    ripple = np.array(cur) * 3.0
    dterm = np.array([0.5, 0.18, 0.18]) * direct
    strong, weak = np.maximum(ripple, dterm), np.minimum(ripple, dterm)
    base = strong + weak * np.maximum(0, 1 - strong)
    score = base * np.array([0.62, 0.86, 0.62])
    assert s.w_d == [0.5, 0.18, 0.18]
    assert s.state_norm == [1.0, 1.0, 1.0]
    assert s.ripple == pytest.approx(ripple)
    assert s.content_base == pytest.approx(base)
    assert s.gain_sigma == s.gain_long == s.gain_edge == [1.0, 1.0, 1.0]
    assert s.score == pytest.approx(score)
    # bridge promotion: b = max(b, 0.62 · child, 0.24 · direct_b + 0.08 · state_norm_b)
    promoted = max(score[1], 0.62 * score[0], 0.62 * score[2], 0.24 * direct[1] + 0.08)
    assert s.score_final[1] == pytest.approx(promoted)
    assert s.source == ["Dense", "Bridge", ""]
    assert s.path[1] == "bridge"
    assert s.promoted_by[1] == ["n0", "n2"]
    assert t.activation.uids == ["n0", "n1"]           # n2 only carried energy
    assert t.to_frame().set_index("uid").loc["n2", "kind"] == "carrier"
    assert t.dense.uids == ["n0", "n1", "n2"]


def test_settlement_terms_by_hand() -> None:
    mg = MicroGraph(
        rows=[0, 1], uids=["a", "b"], is_seed=[True, False], cos_node=[0.8, -0.3],
        cos_msg=[0.8, 0.1], sigma=[0.5, 0.0], long=[0.5, 1.0], resource_eff=[0.9, 1.0],
        fan=[9, 0], assistant_only=[False, True], state=[2.0, 4.0], cross_i=[0, 1],
        cross_j=[1, 0], cross_w=[1.7, 0.3], e0=[1.0, 0.0], current=[[0.5, 0.5], [0.3, 0.2]],
        path=["direct", "1hop"], path_seed=[None, "a"], path_bridge=[None, None])
    s = settle(mg, SeedTable(rows=[0], source=["Dense"]), settings=S)
    assert s.direct == [0.8, 0.0]
    assert s.state_norm == [0.5, 1.0]
    assert s.ripple == pytest.approx([0.3 * 3 * 0.5, 0.2 * 3 * 1.0])
    assert s.strong == pytest.approx([0.45, 0.6])
    assert s.weak == pytest.approx([0.4, 0.0])
    assert s.content_base == pytest.approx([0.45 + 0.4 * 0.55, 0.6])
    assert s.edge == [1.7, 0.3]
    assert s.gain_sigma == [1.4, 1.0]
    assert s.gain_long == [1.3, 1.6]
    assert s.gain_edge == [1.5, 1.15]
    assert s.hop == [1.0, 0.86]
    assert s.role == [1.0, 0.12]
    assert s.fan_penalty == pytest.approx([10 ** 0.1, 1.0])
    a = 0.67 * 1.4 * 1.3 * 1.5 * 0.9 * 1.0 * 1.0 / 10 ** 0.1
    b = 0.6 * 1.0 * 1.6 * 1.15 * 1.0 * 0.86 * 0.12
    assert s.score == pytest.approx([a, b])
    assert s.source == ["Dense", ""]


# -- stage 2b ------------------------------------------------------------------------------
def test_graph_expand_signal_and_score_by_hand() -> None:
    # rows: s1, s2 (graph seeds), n, h, x (a non-seed source into n), z (assistant-only)
    nodes = toy_nodes(np.eye(6), strength=[2.1, 2.1, 1.5, 3.0, 2.1, 2.1],
                      resource=[1, 1, 1, 0.5, 1, 1],
                      assistant_only=[False, False, False, False, False, True])
    now = 10 * DAY
    nodes.strength_ts[:] = now
    nodes.resource_ts[:] = now
    edges = toy_edges([(0, 2, 1.0), (0, 3, 0.5), (1, 2, 0.8), (4, 2, 0.2), (0, 1, 0.7),
                       (1, 5, 3.0)], last_ts=now)
    cos_node = np.array([0.9, 0.2, 0.3, 0.1, 0.0, 0.5])
    cos_msg = np.array([0.95, 0.9, 0.0, 0.0, 0.0, 0.0])
    g = graph_expand(nodes, edges, cos_node, cos_msg, np.ones(6, bool), now=now,
                     settings=S.replace(DENSE_TOP_K=2))
    assert g.seed_uids == ["n0", "n1"]
    assert g.seed_out == pytest.approx([2.2, 3.8])   # s1 -> s2 counts in out(s1)
    # s1 -> n: 1 / sqrt(2.2 · 2.0); s1 -> h: 0.5 / sqrt(2.2 · 0.5); s2 -> n: 0.8 / sqrt(3.8 · 2)
    es = {(a, b): v for a, b, v in zip(g.pair_seed, g.pair_nbr, g.pair_edge_signal,
                                      strict=True)}
    assert es == pytest.approx({("n0", "n2"): 1 / math.sqrt(4.4),
                                ("n0", "n3"): 0.5 / math.sqrt(1.1),
                                ("n1", "n2"): 0.8 / math.sqrt(7.6)})
    assert ("n1", "n5") not in es                      # assistant-only neighbour skipped
    cs = {(a, b): v for a, b, v in zip(g.pair_seed, g.pair_nbr, g.pair_candidate_signal,
                                      strict=True)}
    assert cs[("n1", "n2")] == pytest.approx(0.8 / math.sqrt(7.6) * 0.25)   # max(0.25, 0.2)
    sig_n = 0.9 / math.sqrt(4.4) + 0.25 * 0.8 / math.sqrt(7.6)
    sig_h = 0.9 * 0.5 / math.sqrt(1.1)
    score_n = 6.0 * sig_n * (1 + math.log(2)) * (0.25 + 0.3) * (1 + 0.15 * 0.5) * 1.0
    score_h = 6.0 * sig_h * 1.0 * (0.25 + 0.1) * (1 + 0.15 * 1.0) * 0.5
    got = dict(zip(g.uids, zip(g.signal, g.paths, g.score_graph, strict=True), strict=True))
    assert got["n2"] == pytest.approx((sig_n, 2, score_n))
    assert got["n3"] == pytest.approx((sig_h, 1, score_h))
    assert g.best_seed == ["n0", "n0"]
    assert g.selected == [True, True]


def test_graph_expand_per_seed_limit_decay_and_visibility() -> None:
    nodes = toy_nodes(np.eye(12))
    now = 28 * DAY
    triples = [(0, k, float(k)) for k in range(1, 11)]
    edges = toy_edges(triples, last_ts=now - 14 * DAY)
    cos = np.zeros(12)
    cos[0] = 1.0
    vis = np.ones(12, bool)
    vis[10] = False
    g = graph_expand(nodes, edges, cos, cos, vis, now=now,
                     settings=S.replace(DENSE_TOP_K=1, GRAPH_PER_SEED=3, GRAPH_LIMIT=2))
    # out(s) over visible neighbours only, decayed by e^-1
    assert g.seed_out == pytest.approx([sum(range(1, 10)) / math.e])
    assert g.pair_nbr == ["n9", "n8", "n7"]            # best 3; n10 invisible
    assert g.pair_w_eff == pytest.approx([9 / math.e, 8 / math.e, 7 / math.e])
    assert g.selected == [False, True, True]           # top GRAPH_LIMIT by score_graph


@pytest.mark.parametrize("years", [20.0, 26.0, 1000.0])
def test_graph_expand_stays_finite_when_the_weights_decayed_to_almost_nothing(
        years: float) -> None:
    """Decades after the last write-back (here 20 and 26 years, EDGE_TAU = 14 days) an
    effective weight is ~1e-160 to ~1e-300: out · in underflows to 0 and the edge signal
    was w / 0 = inf, so the trace held inf and every recall failed; it is 1 again."""
    nodes = toy_nodes([[1, 0], [0, 1]])
    edges = toy_edges([(0, 1, 2.0)], last_ts=0.0)
    cos = np.array([1.0, 0.0])
    for cfg in (S, Settings()):
        g = graph_expand(nodes, edges, cos, cos, np.ones(2, bool), now=years * 365.25 * DAY,
                         settings=cfg.replace(DENSE_TOP_K=1))
        assert all(math.isfinite(x) for x in [*g.pair_edge_signal, *g.score_graph])
        assert g.pair_edge_signal == pytest.approx([1.0]) or g.pair_edge_signal == []  # 0: gone


# -- stage 4 -------------------------------------------------------------------------------
def _groups(score_micro: list[float], sources: list[str], graph_scores: list[float],
            settings: Settings, relevant: bool = True):
    m = len(score_micro)
    mg = MicroGraph(rows=list(range(m)), uids=[f"m{i}" for i in range(m)])
    from akasha_explorer.engine.trace import Settlement
    sett = Settlement(score_final=score_micro, source=sources, direct=[0.5] * m)
    g = GraphExpand(uids=[f"g{i}" for i in range(len(graph_scores))],
                    rows=[100 + i for i in range(len(graph_scores))],
                    score_graph=graph_scores, cos_node=[0.1] * len(graph_scores),
                    selected=[True] * len(graph_scores))
    vec = np.arange(200 * 2, dtype=np.float32).reshape(200, 2)
    return groups(mg, sett, g, ItemList(uids=["m1"]), vec, relevant=relevant, settings=settings)


def test_activation_threshold_merge_and_reasons() -> None:
    a, r, s = _groups([0.5, 0.3, 0.1, 0.2], ["Dense", "FTS", "Dense", "Bridge"], [0.05, 0.9],
                      S.replace(ACTIVATION_K=3))
    assert a.uids == ["g1", "m0", "m1"]
    assert a.sources == ["Graph", "Dense", "FTS"]
    assert dict(zip(s.uids, s.reasons, strict=True)) == {
        "g0": "over_k", "m3": "soft_hit", "m2": "below_threshold"}
    assert r.uids == ["g1", "m0", "m3", "g0"]          # m1 is a dense item: not shown
    floor = _groups([0.5, 0.3], ["Dense", "FTS"], [0.05, 0.9], S.replace(RELEVANCE_FLOOR=True))
    assert floor[0].uids == ["g1", "m0", "m1"]         # g0 (0.05) now needs the threshold
    assert floor[2].reasons == ["below_threshold"]
    gate = _groups([0.5], ["Dense(FB)"], [0.9], S.replace(RELEVANCE_FLOOR=True),
                   relevant=False)
    assert gate[0].uids == []
    assert set(gate[2].reasons) == {"no_relevant_seed"}
