"""The design's stories (seeds/000_5061ac324af17640.txt, ch. 15–21) on hand-built mirrors.

Vectors are built so that ``cos(q, node)`` is what the story says: with ``q = e0`` a node
``c · e0 + sqrt(1 − c²) · u`` (``u ⟂ e0``) has cosine ``c``; nodes of one episode share
their ``u`` so they are also similar to each other.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from akasha_explorer.config import DAY, Settings
from akasha_explorer.engine.bm25 import LexicalHits
from akasha_explorer.engine.dynamics import edge_eff
from akasha_explorer.engine.recall import plan_writeback, recall
from akasha_explorer.engine.state import EdgeStore, NodeTable
from akasha_explorer.engine.toy import toy_edges, toy_nodes, unit
from akasha_explorer.engine.writeback import apply_plan, compute_plan

S = Settings.profile("v1")  # these tests pin the V1-faithful engine (the v1 profile)
DIM = 24
Q = np.eye(DIM, dtype=np.float32)[0]


def vec(c: float, u: np.ndarray) -> np.ndarray:
    u = u.copy()
    u[0] = 0.0
    return c * np.eye(DIM)[0] + math.sqrt(1 - c * c) * unit(u)


def episode(rng: np.random.Generator, cosines: list[float], spread: float = 0.3) -> list:
    base = rng.standard_normal(DIM)
    return [vec(c, base + spread * rng.standard_normal(DIM)) for c in cosines]


def rank_of(t, uid: str) -> int:
    return t.ranking().index(uid)


# -- ch. 18: 鱼石脂 — far in time, near in life ------------------------------------------------
def test_far_node_tied_to_several_seeds_outranks_the_top_dense_item() -> None:
    rng = np.random.default_rng(18)
    day = 40 * DAY
    seeds = episode(rng, [0.80, 0.78, 0.77, 0.76])           # 引流条 / 换药 / 麻药 / 出血
    far = vec(0.52, rng.standard_normal(DIM))                # 鱼石脂, another direction
    # closer to the query than 鱼石脂 (it is no dense top-10 item), but no dense seed either
    fillers = episode(rng, [0.66, 0.64, 0.62, 0.60, 0.58, 0.56, 0.63, 0.61, 0.59, 0.57, 0.55,
                            0.65], spread=2.0)
    vecs = [*seeds, far, *fillers]
    ts = [day + 60.0 * k for k in range(4)] + [day - 5 * 3600.0] + [
        day - 20 * DAY + 3600.0 * k for k in range(12)]
    nodes = toy_nodes(vecs, ts=ts)
    nodes.strength_ts[:] = day
    triples = [(s, 4, 1.5) for s in range(4)]                # every seed -> 鱼石脂, thick edges
    triples += [(s, d, 0.5) for s in range(4) for d in range(4) if s != d]
    triples += [(4, s, 0.3) for s in range(4)]
    edges = toy_edges(triples, last_ts=day - 3600.0)
    t = recall(nodes, edges, Q, LexicalHits.empty(), now=day + 600.0, settings=S)
    assert t.seeds.uids == ["n0", "n1", "n2", "n3"]
    assert "n4" not in t.micro.uids                          # outside the 30-minute window
    assert min(abs(ts[4] - ts[k]) for k in range(4)) > S.NEARBY_SECONDS
    assert "n4" not in t.dense.uids
    assert "n4" not in t.graph.seed_uids
    assert "n4" in t.activation.uids
    ex = t.explain("n4")
    assert ex["source"] == "Graph"
    assert ex["path"] == "1hop"
    assert ex["graph_paths"] == 4
    top_dense = t.dense.uids[0]
    assert top_dense == "n0"
    assert rank_of(t, "n4") < rank_of(t, top_dense)
    assert ex["score"] > t.explain(top_dense)["score"]


# -- ch. 16 / 21: 消防栓 — a weak accidental edge starves --------------------------------------
def test_weakly_tied_node_stays_out_and_its_edge_fades() -> None:
    rng = np.random.default_rng(16)
    day1, day7 = 1 * DAY, 7 * DAY
    cos = [0.85, 0.80, 0.82, 0.78, 0.76, 0.79, 0.81, 0.77, 0.75, 0.83]  # 火锅, 拉肚子, 诺氟沙星…
    relevant = episode(rng, cos)
    hydrant = vec(0.2, rng.standard_normal(DIM))             # 快递放消防栓
    ts = [day1 + 600.0 * k for k in range(10)] + [day1 + 900.0]
    nodes = toy_nodes([*relevant, hydrant], ts=ts)
    triples = [(i, j, 1.0) for i in range(10) for j in range(10) if i != j]
    triples.append((1, 10, 0.61))                            # 拉肚子 -> 消防栓, once
    edges = toy_edges(triples, last_ts=day1 + 3 * 3600.0)
    t = recall(nodes, edges, Q, LexicalHits.empty(), now=day7, settings=S)
    assert "n10" not in t.micro.uids                         # cos 0.2: no dense anchor
    assert "n10" in t.graph.uids                             # ripple does reach it …
    assert "n10" not in t.activation.uids                    # … but it is not in the top 8
    assert rank_of(t, "n10") >= S.ACTIVATION_K
    # write-back with the turn that asked: the weak edge is not strengthened
    cur = nodes.add_node("turn", ts=day7, session="s", vector=Q, sigma=0.0, strength=2.1,
                         resource=1.0, assistant_only=False, msg_vectors=[Q], msg_ts=[day7],
                         msg_uids=["turn:m"])
    plan = plan_writeback(t, nodes, edges, cur, now=day7, settings=S)
    assert (1, 10) not in set(zip(plan.edges.src, plan.edges.dst, strict=True))
    apply_plan(plan, nodes, edges)
    e = edges.find(1, 10)
    assert edges.w[e] <= 0.61                                # at most depressed, never grown
    last = float(edges.last_ts[e])
    assert float(edge_eff(edges.w[e], last, last + 38 * DAY, S.EDGE_TAU)) < 0.05


# -- ch. 15: anti-hub ------------------------------------------------------------------------
def _hub_world(with_edges: bool) -> tuple[NodeTable, EdgeStore, LexicalHits]:
    rng = np.random.default_rng(15)
    t0 = 30 * DAY
    topic = episode(rng, [0.80, 0.78, 0.77])
    hub = vec(0.40, rng.standard_normal(DIM))                # "你好啊"
    fillers = [vec(0.0, rng.standard_normal(DIM)) for _ in range(100)]
    ts = [t0, t0 + 60, t0 + 120, t0 + 180] + [t0 - 10 * DAY - 600.0 * k for k in range(100)]
    nodes = toy_nodes([*topic, hub, *fillers], ts=ts)
    nodes.strength_ts[:] = t0
    triples = [(3, 4 + k, 0.3) for k in range(100)] if with_edges else []
    edges = toy_edges(triples, last_ts=t0 - DAY)
    hits = LexicalHits((), (3,), (5.0,), nodes.m)             # the hub is a lexical hit
    return nodes, edges, hits


def test_hub_with_fan_100_is_suppressed() -> None:
    nodes, edges, hits = _hub_world(with_edges=True)
    assert int(edges.fan(nodes.n)[3]) == 100
    t = recall(nodes, edges, Q, hits, now=30 * DAY + 300, settings=S)
    assert t.seeds.source[-1] == "FTS"
    assert t.seeds.uids[-1] == "n3"
    assert "n3" not in t.activation.uids
    k = t.suppressed.uids.index("n3")
    assert t.suppressed.reasons[k] == "below_threshold"
    ex = t.explain("n3")
    assert ex["fan_penalty"] == pytest.approx(101 ** 0.1)
    # the same node without its hundred edges is activated
    nodes2, edges2, hits2 = _hub_world(with_edges=False)
    t2 = recall(nodes2, edges2, Q, hits2, now=30 * DAY + 300, settings=S)
    assert "n3" in t2.activation.uids
    assert t2.explain("n3")["score"] > 3 * ex["score"]


def test_assistant_only_node_is_penalised() -> None:
    rng = np.random.default_rng(5)
    v = vec(0.8, rng.standard_normal(DIM))
    other = vec(0.3, rng.standard_normal(DIM))
    # n0 / n1: the same text, once said by the user, once an assistant-only monologue
    nodes = toy_nodes([v, v, other, other, vec(0.7, rng.standard_normal(DIM))],
                      ts=[0, 0, 5 * DAY, 5 * DAY + 60, 60],
                      assistant_only=[False, True, False, True, False])
    edges = toy_edges([(4, 2, 1.0), (4, 3, 1.0)], last_ts=5 * DAY)
    t = recall(nodes, edges, Q, LexicalHits.empty(), now=6 * DAY,
               settings=S.replace(DENSE_TOP_K=3))      # graph seeds: n0, n1, n4
    user, assistant = t.explain("n0"), t.explain("n1")
    assert assistant["role"] == S.ASSISTANT_ONLY_PENALTY
    assert user["role"] == 1.0
    assert assistant["score_settle"] == pytest.approx(0.12 * user["score_settle"])
    assert "n2" in t.graph.uids
    assert "n3" not in t.graph.uids


# -- [ours] switches ---------------------------------------------------------------------------
def _topic_store() -> NodeTable:
    rng = np.random.default_rng(9)
    base = rng.standard_normal(DIM)
    base[0] = 0.0
    vecs = [unit(base + 0.4 * rng.standard_normal(DIM)) * np.r_[0.0, np.ones(DIM - 1)]
            for _ in range(20)]
    return toy_nodes(vecs, ts=[3600.0 * k for k in range(20)])


def test_relevance_floor_lets_an_unrelated_query_activate_nothing() -> None:
    nodes = _topic_store()
    edges = toy_edges([(k, k + 1, 1.0) for k in range(19)], last_ts=20 * 3600.0)
    t_v1 = recall(nodes, edges, Q, LexicalHits.empty(), now=DAY, settings=S)
    assert t_v1.seeds.fallback
    assert len(t_v1.activation) > 0
    t = recall(nodes, edges, Q, LexicalHits.empty(), now=DAY,
               settings=S.replace(RELEVANCE_FLOOR=True))
    assert not t.relevant
    assert len(t.activation) == 0
    assert len(t.ripple) == 0
    assert set(t.suppressed.reasons) == {"no_relevant_seed"}
    assert len(t.dense) == S.DENSE_TOP_K                          # the accuracy floor stays
    # a related query still activates with the floor on
    t2 = recall(nodes, edges, nodes.vec[3], LexicalHits.empty(), now=DAY,
                settings=S.replace(RELEVANCE_FLOOR=True))
    assert t2.relevant
    assert "n3" in t2.activation.uids


def test_salience_switch_off_means_sigma_has_no_effect_anywhere() -> None:
    rng = np.random.default_rng(3)
    ep = episode(rng, [0.8, 0.7, 0.65, 0.5, 0.62, 0.3])
    sig_a = [0.0, 0.9, 0.95, 0.2, 0.85, 0.99]
    sig_b = [0.5, 0.1, 0.0, 0.9, 0.3, 0.0]
    a = toy_nodes(ep, ts=[60.0 * k for k in range(6)], sigma=sig_a)
    b = toy_nodes(ep, ts=[60.0 * k for k in range(6)], sigma=sig_b)
    edges = [(0, 1, 0.5), (2, 3, 1.0), (4, 5, 0.2)]
    off = S.replace(USE_SALIENCE=False)
    ta = recall(a, toy_edges(edges), Q, LexicalHits.empty(), now=600.0, settings=off)
    tb = recall(b, toy_edges(edges), Q, LexicalHits.empty(), now=600.0, settings=off)
    assert ta.to_json() == tb.to_json()
    assert set(ta.micro.sigma) == {0.0}
    assert set(ta.settle.gain_sigma) == {1.0}
    on_a = recall(a, toy_edges(edges), Q, LexicalHits.empty(), now=600.0, settings=S)
    on_b = recall(b, toy_edges(edges), Q, LexicalHits.empty(), now=600.0, settings=S)
    assert on_a.to_json() != on_b.to_json()
    assert "BlackHole" in on_a.seeds.source
    assert "BlackHole" not in ta.seeds.source


# -- heterosynaptic depression ----------------------------------------------------------------
def test_depression_wears_a_hubs_unused_edges_faster_than_a_loyal_pairs() -> None:
    # rows: 0 hub H, 1..10 its changing partners, 11 L, 12 P (the loyal pair), 13/14 old
    nodes = toy_nodes(np.eye(15), ts=[0.0] * 15)
    h, l_, p, old_h, old_l = 0, 11, 12, 13, 14
    edges = toy_edges([(h, old_h, 1.0), (l_, old_l, 1.0)], last_ts=0.0)
    rounds = 20
    for r in range(rounds):
        now = 3600.0 * (r + 1)
        act = [h, 1 + r % 10] + ([l_, p] if r % 5 == 0 else [])
        cur = nodes.add_node(f"t{r}", ts=now, session="s", vector=np.eye(15)[r % 15],
                             sigma=0.0, strength=2.1, resource=1.0, assistant_only=False,
                             msg_vectors=[np.eye(15)[r % 15]], msg_ts=[now],
                             msg_uids=[f"t{r}:m"])
        plan = compute_plan(nodes, edges, act, [1.0] * len(act), [0.5] * len(act), cur,
                            now=now, settings=S)
        apply_plan(plan, nodes, edges)
    w = lambda s, d: float(edges.w[edges.find(s, d)])  # noqa: E731
    assert w(h, old_h) == pytest.approx(0.95 ** rounds)          # hub active every round
    assert w(l_, old_l) == pytest.approx(0.95 ** (rounds // 5))  # loyal node active 4 times
    assert w(h, old_h) < w(l_, old_l)
    assert w(l_, p) > max(w(h, x) for x in range(1, 11))         # the loyal edge holds
