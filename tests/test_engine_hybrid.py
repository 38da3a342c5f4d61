"""The default profile's departures from V1 (issue 13), each against hand-computed values on
hand-built mirrors, and the profiles themselves: fused relevance, neighbour context, the
floor and its seeds, graph candidates settled on RWR's scale, unseen query terms."""

from __future__ import annotations

import math

import numpy as np
import pytest

from akasha_explorer.config import PROFILES, Settings
from akasha_explorer.engine.bm25 import LexicalHits, Postings, select_terms
from akasha_explorer.engine.hybrid import floor_items, hybrid_seeds, relevance
from akasha_explorer.engine.recall import recall
from akasha_explorer.engine.ripple import graph_expand
from akasha_explorer.engine.toy import toy_edges, toy_nodes
from akasha_explorer.errors import InvalidSettings

V2 = Settings()
V1 = Settings.profile("v1")
Q = np.array([1.0, 0.0], np.float32)


def _nodes(cos: list[float], sessions: list[str] | None = None, **kw: object):
    vecs = [[c, math.sqrt(max(0.0, 1 - c * c))] for c in cos]
    return toy_nodes(vecs, sessions=sessions, **kw)


def _cos(nodes) -> np.ndarray:
    return nodes.vec.astype(np.float64) @ Q.astype(np.float64)


# -- profiles ----------------------------------------------------------------------------------
def test_profiles_are_named_presets_and_every_departure_is_marked_ours() -> None:
    assert Settings() == Settings.profile("v2")
    v1 = Settings.profile("v1")
    fields = {f.name: f for f in Settings.__dataclass_fields__.values()}
    assert set(V2.diff(v1)) == set(PROFILES["v1"])
    for name in PROFILES["v1"]:
        assert fields[name].metadata["ours"], f"{name} departs from V1 but is not [ours]"
    assert v1.profile_name() == ("v1", {})
    assert V2.profile_name() == ("v2", {})
    assert v1.replace(CONTEXT_NEIGHBOR=0.25).profile_name() == ("v1", {"CONTEXT_NEIGHBOR": 0.25})
    with pytest.raises(InvalidSettings, match="unknown profile"):
        Settings.profile("v3")
    # a dict from before profiles existed fills what it lacks from the profile asked for
    assert Settings.from_dict({"EDGE_CAP": 2.0}, profile="v1") == v1
    assert Settings.from_dict({}) == V2


def test_v1_profile_is_the_v1_engine() -> None:
    """Same mirror and query: the v1 profile gives V1's dense floor, seeds and scores;
    the default profile gives the fused floor."""
    nodes = _nodes([0.9, 0.8, 0.1, 0.7], sessions=["a", "a", "a", "b"])
    t1 = recall(nodes, toy_edges([]), Q, LexicalHits.empty(), now=1e6, settings=V1)
    assert t1.first_block() is t1.floor
    assert t1.floor.uids == t1.dense.uids == ["n0", "n1", "n3", "n2"]
    assert t1.relevance.rows == [] and set(t1.seeds.source) == {"Dense"}
    assert t1.floor.scores == pytest.approx(_cos(nodes)[[0, 1, 3, 2]].tolist())
    t2 = recall(nodes, toy_edges([]), Q, LexicalHits.empty(), now=1e6, settings=V2)
    assert t2.relevance.rows and "Context" in t2.floor.sources[-1]   # n2 follows n1
    assert t2.floor.scores == pytest.approx(t2.relevance.score[: len(t2.floor)])
    assert t2.seeds.uids[: len(t2.floor)] == t2.floor.uids


# -- fused relevance -----------------------------------------------------------------------------
def test_relevance_by_hand() -> None:
    """lexical = bm25 / best; dense = (cos - zero) / (top - zero) with zero the
    FUSION_POOL-th best; base = lexical + w * dense; context = beta * best neighbour base."""
    cos = [1.0, 0.6, 0.2, 0.0]
    nodes = _nodes(cos, sessions=["s", "s", "t", "t"], ts=[0, 60, 0, 60])
    lex = LexicalHits((), (2, 3), (6.0, 3.0), 4)
    cfg = V2.replace(FUSION_POOL=3, FUSION_DENSE_WEIGHT=0.5, CONTEXT_NEIGHBOR=0.5)
    rel, norm = relevance(nodes, _cos(nodes), np.ones(4, bool), lex, settings=cfg)
    by = {u: k for k, u in enumerate(rel.uids)}
    dense = {"n0": 1.0, "n1": (0.6 - 0.2) / (1.0 - 0.2), "n2": 0.0, "n3": 0.0}
    lexical = {"n0": 0.0, "n1": 0.0, "n2": 1.0, "n3": 0.5}
    base = {u: lexical[u] + 0.5 * dense[u] for u in dense}
    ctx = {"n0": 0.5 * base["n1"], "n1": 0.5 * base["n0"], "n2": 0.5 * base["n3"],
           "n3": 0.5 * base["n2"]}
    for u in dense:
        k = by[u]
        assert rel.dense[k] == pytest.approx(dense[u], abs=1e-6)
        assert rel.lexical[k] == pytest.approx(lexical[u])
        assert rel.base[k] == pytest.approx(base[u], abs=1e-6)
        assert rel.context[k] == pytest.approx(ctx[u], abs=1e-6)
        assert rel.score[k] == pytest.approx(base[u] + ctx[u], abs=1e-6)
    top = max(base[u] + ctx[u] for u in base)
    assert norm.max() == pytest.approx(1.0)
    assert norm[2] == pytest.approx((base["n2"] + ctx["n2"]) / top)
    assert rel.context_from[by["n3"]] == "n2" and rel.context_from[by["n2"]] == "n3"
    assert rel.score == sorted(rel.score, reverse=True)
    assert (rel.bm25_top, rel.dense_top) == (6.0, pytest.approx(1.0))
    assert (rel.dense_weight, rel.cjk_share) == (0.5, 0.0)       # no query vector given


def test_a_store_of_one_turn_has_a_floor() -> None:
    nodes = _nodes([0.4])
    t = recall(nodes, toy_edges([]), Q, LexicalHits.empty(), now=1e6, settings=V2)
    assert t.floor.uids == ["n0"] and t.floor.sources == ["Dense(FB)"]


def test_relevance_ignores_invisible_and_forgotten_nodes() -> None:
    nodes = _nodes([0.9, 0.8, 0.7], sessions=["s", "s", "s"])
    nodes.kill(1)                                   # forgotten: no hit, no neighbour
    vis = nodes.alive.copy()
    lex = LexicalHits((), (1, 2), (5.0, 1.0), 3)     # a hit on the forgotten message
    rel, norm = relevance(nodes, _cos(nodes), vis, lex, settings=V2)
    assert "n1" not in rel.uids and norm[1] == 0.0
    assert rel.bm25_top == 1.0                     # the forgotten hit is not the best
    prev, nxt = nodes.neighbors()
    assert nxt[0] == 2 and prev[2] == 0            # n0 and n2 are neighbours now


def test_floor_labels_and_seed_energies() -> None:
    nodes = _nodes([0.9, 0.3, 0.2, 0.6], sessions=["s", "s", "s", "t"])
    cos = _cos(nodes)
    lex = LexicalHits((), (1,), (4.0,), 4)
    rel, _ = relevance(nodes, cos, np.ones(4, bool), lex, settings=V2)
    floor = floor_items(rel, cos, settings=V2)
    src = dict(zip(floor.uids, floor.sources, strict=True))
    assert src["n0"].startswith("Dense+")          # cos 0.9 > DENSE_SEED_MIN (+ its neighbour)
    assert src["n1"].startswith("FTS")             # a BM25 hit
    assert src["n3"] == "Dense(FB)"                # a weak dense match only
    assert "Context" in src["n2"]                  # all it has is its neighbour n1
    seeds = hybrid_seeds(nodes, toy_edges([]), cos, cos, np.ones(4, bool), lex, rel, floor,
                         settings=V2)
    assert seeds.uids == floor.uids and seeds.relevant and not seeds.fallback
    assert seeds.energy == pytest.approx(floor.direct)
    assert max(seeds.energy) == pytest.approx(V2.SEED_ENERGY)
    assert seeds.bm25_rank[seeds.uids.index("n1")] == 1


def test_a_weak_query_has_no_relevant_seed() -> None:
    nodes = _nodes([0.3, 0.2, 0.1])
    t = recall(nodes, toy_edges([]), Q, LexicalHits.empty(), now=1e6,
               settings=V2.replace(RELEVANCE_FLOOR=True))
    assert not t.relevant and t.seeds.fallback
    assert all("Dense(FB)" in s or "Context" in s for s in t.seeds.source)
    assert t.activation.uids == [] and t.floor.uids     # the floor is still given


def test_neighbour_context_reaches_the_reply_next_to_a_match() -> None:
    """The answer is often the line after the one that matches the question."""
    nodes = _nodes([0.95, 0.05, 0.4, 0.4, 0.4, 0.4], sessions=["s", "s", "x", "y", "z", "w"])
    cos = _cos(nodes)
    without = recall(nodes, toy_edges([]), Q, LexicalHits.empty(), now=1e6,
                     settings=V2.replace(CONTEXT_NEIGHBOR=0.0, DENSE_TOP_K=2))
    with_ctx = recall(nodes, toy_edges([]), Q, LexicalHits.empty(), now=1e6,
                      settings=V2.replace(DENSE_TOP_K=2))
    assert "n1" not in without.floor.uids
    assert with_ctx.floor.uids == ["n0", "n1"]
    assert cos[1] < cos[2]


def test_context_reaches_two_turns_along_the_session() -> None:
    """CONTEXT_HOPS = 2: the turn two places from a match takes CONTEXT_NEIGHBOR² of its
    relevance (a fault found two replies after the question), three places nothing; at 1
    only the neighbours take context. Other sessions take none."""
    nodes = _nodes([1.0, 0.0, 0.0, 0.0, 0.0], sessions=["s", "s", "s", "s", "t"],
                   ts=[0, 60, 120, 180, 0])
    lex = LexicalHits((), (0,), (2.0,), 5)
    ctx = {}
    for hops in (1, 2):
        rel, _ = relevance(nodes, _cos(nodes), np.ones(5, bool), lex,
                           settings=V2.replace(CONTEXT_HOPS=hops, CONTEXT_NEIGHBOR=0.5))
        got = dict(zip(rel.uids, zip(rel.context, rel.context_from, strict=True), strict=True))
        ctx[hops] = {u: got.get(u, (0.0, None)) for u in ("n1", "n2", "n3", "n4")}
    base = 1.0 + V2.FUSION_DENSE_WEIGHT * 1.0     # n0 alone matches: lexical 1, dense 1
    assert ctx[2]["n1"] == (pytest.approx(0.5 * base), "n0")
    assert ctx[2]["n2"] == (pytest.approx(0.25 * base), "n0")
    assert ctx[1]["n2"][0] == 0.0 and ctx[2]["n3"][0] == 0.0 and ctx[2]["n4"][0] == 0.0


# -- graph candidates on RWR's scale -------------------------------------------------------------
def test_graph_settle_by_hand() -> None:
    """energy = RIPPLE_GAIN * sum_s share_s * edge_signal(s, n); content_base = noisy-OR
    with DIRECT_W_OTHER * direct; then the gains and HOP_1."""
    nodes = _nodes([1.0, 0.8, 0.0, 0.0], strength=[2.1, 2.1, 2.1, 3.0])
    edges = toy_edges([(0, 2, 1.0), (1, 2, 1.0), (0, 3, 0.5)])
    cos = _cos(nodes)
    direct = np.array([1.0, 0.5, 0.2, 0.0])
    cfg = V2.replace(DENSE_TOP_K=2)
    g = graph_expand(nodes, edges, cos, cos, np.ones(4, bool), now=180.0, settings=cfg,
                     graph_seeds=[0, 1], direct=direct)
    share = {0: 1.0 / 1.5, 1: 0.5 / 1.5}
    out0, out1 = 1.5, 1.0
    in2, in3 = 2.0, 0.5
    esig = {(0, 2): 1.0 / math.sqrt(out0 * in2), (1, 2): 1.0 / math.sqrt(out1 * in2),
            (0, 3): 0.5 / math.sqrt(out0 * in3)}
    energy = {2: 3.0 * (share[0] * esig[(0, 2)] + share[1] * esig[(1, 2)]),
              3: 3.0 * share[0] * esig[(0, 3)]}
    for k, row in enumerate(g.rows):
        e = energy[row]
        d = cfg.DIRECT_W_OTHER * direct[row]
        strong, weak = max(e, d), min(e, d)
        base = strong + weak * max(0.0, 1.0 - strong)
        age = 180.0 - nodes.strength_ts[row]
        long = min(1.0, nodes.strength[row] * math.exp(-age / cfg.STRENGTH_TAU) / 3.0)
        edge = {2: 1.0, 3: 0.5}[row] * math.exp(-180.0 / cfg.EDGE_TAU)   # decayed to now
        fan = {2: 2, 3: 1}[row]
        score = (base * (1 + cfg.GAIN_LONG * long) * (1 + cfg.GAIN_EDGE * edge) * cfg.HOP_1
                 / (1 + fan) ** cfg.FAN_EXP)
        assert g.energy[k] == pytest.approx(e)
        assert g.content_base[k] == pytest.approx(base)
        assert g.score_graph[k] == pytest.approx(score)
    v1 = graph_expand(nodes, edges, cos, cos, np.ones(4, bool), now=180.0,
                      settings=V1.replace(DENSE_TOP_K=2), graph_seeds=[0, 1])
    assert v1.energy == [] and v1.content_base == []


# -- lexical -----------------------------------------------------------------------------------
def test_unseen_query_terms_take_no_place() -> None:
    """V1 gave a term no message holds IDF 6.0, so a long query's unseen words filled
    FTS_MAX_TOKENS and the words that match were dropped as over_max."""
    p = Postings()
    p.add(0, ["spire", "lan"])
    p.add(1, ["coffee"])
    ts, alive = np.zeros(2), np.ones(2, bool)
    query = ["nowhere", "never", "spire", "coffee"]
    kw = dict(now=1.0, min_idf=0.0, unseen_idf=6.0, max_terms=2, min_len=1)
    v1 = {t.term: t.reason for t in select_terms(query, p, ts, alive, **kw)}
    v2 = {t.term: t.reason for t in select_terms(query, p, ts, alive, skip_unseen=True, **kw)}
    assert v1 == {"nowhere": "", "never": "", "spire": "over_max", "coffee": "over_max"}
    assert v2 == {"nowhere": "unseen", "never": "unseen", "spire": "", "coffee": ""}


# -- time words ---------------------------------------------------------------------------------
def test_time_words_name_windows() -> None:
    from akasha_explorer.text.timewords import time_windows

    now = 1_700_000_000.0                           # 2023-11-14 22:13 UTC
    day = 86400.0
    got = {w.phrase: (w.start, w.end) for w in time_windows(
        "What did I do last week, and in May 2023? 最近呢？去年呢？", now)}
    assert got["last week"] == (now - 14 * day, now)
    assert "最近" not in got                          # the same window, named once
    assert got["in may 2023"] == (1682899200.0, 1685577600.0)      # 2023-05-01 .. 06-01
    assert got["去年"] == (1640995200.0, 1672531200.0)               # 2022
    assert time_windows("you may go now", now) == []              # "may" the verb
    assert time_windows("nothing about time", now) == []
    (w,) = time_windows("on October 13, 2023", now)
    assert w.end - w.start == day
    (w,) = time_windows("阿岚10月2号生日", now)
    assert w.phrase == "10月2号" and w.end - w.start == day


def test_time_prior_lifts_the_turns_inside_the_window() -> None:
    nodes = _nodes([0.8, 0.8, 0.8], sessions=["a", "b", "c"], ts=[0.0, 1000.0, 2000.0])
    lex = LexicalHits.empty()
    cfg = V2.replace(CONTEXT_NEIGHBOR=0.0, TIME_PRIOR=0.0, TIME_FLOOR=0.0)
    off = recall(nodes, toy_edges([]), Q, lex, now=3000.0, settings=cfg,
                 windows=[(900.0, 1100.0, "then")])
    on = recall(nodes, toy_edges([]), Q, lex, now=3000.0, settings=cfg.replace(TIME_PRIOR=0.5),
                windows=[(900.0, 1100.0, "then")])
    assert off.floor.uids == ["n0", "n1", "n2"]     # all tied: each is the best there is
    assert on.floor.uids[0] == "n1"
    k = on.relevance.uids.index("n1")
    assert on.relevance.in_time[k] and on.relevance.window_phrases == ["then"]
    assert on.relevance.score[k] == pytest.approx(1.5 * off.relevance.score[0])


def test_a_query_that_names_only_a_time_ranks_the_whole_window_first() -> None:
    """No lexical term matched: every node inside the window ranks above every node
    outside, however near the query's vector the outside ones are ("What did I do last
    weekend?" is near every "what did I do" turn), in their own order among themselves and
    at least ``TIME_FLOOR``. A query with a matching word is not lifted so."""
    nodes = _nodes([0.95, 0.9, 0.3, 0.1, 0.85], sessions=list("abcde"),
                   ts=[0.0, 100.0, 1000.0, 1050.0, 2000.0])
    window = [(900.0, 1100.0, "last weekend")]
    cfg = V2.replace(CONTEXT_NEIGHBOR=0.0)
    rel, _ = relevance(nodes, _cos(nodes), np.ones(5, bool), LexicalHits.empty(),
                       settings=cfg, windows=window)
    assert rel.uids[:2] == ["n2", "n3"]                 # inside: n2 nearer, so first
    assert min(rel.score[:2]) > max(rel.score[2:])
    assert rel.score[1] - rel.score[2] >= cfg.TIME_FLOOR - 1e-9
    off, _ = relevance(nodes, _cos(nodes), np.ones(5, bool), LexicalHits.empty(),
                       settings=cfg.replace(TIME_FLOOR=0.0), windows=window)
    assert off.uids[:3] == ["n0", "n1", "n4"]         # the nearest, the window or not
    worded, _ = relevance(nodes, _cos(nodes), np.ones(5, bool),
                          LexicalHits((), (0,), (3.0,), 5), settings=cfg, windows=window)
    assert worded.uids[:3] == ["n0", "n1", "n4"]


def test_relative_time_words_are_a_window_not_a_word(demo_store) -> None:
    """最近 names the last two weeks; it is no lexical term (a message saying 最近 is not
    about the query's time), while a date stays one."""
    import akasha_explorer as ak

    with ak.open(demo_store, read_only=True) as mem:
        t = mem.recall("最近手指的伤怎么样了", now=mem.last_ts(), log=False)
        reasons = {x.term: x.reason for x in t.seeds.terms}
        assert reasons["最近"] == "time" and reasons["手指"] == ""
        assert t.relevance.window_phrases == ["最近"]
        rel = t.relevance
        for u in t.first_block().uids[:3]:          # the floor is about the finger: it says
            said = [m["text"] for m in t.messages[u]]  # so, or answers a turn that asks it
            asked = rel.context_from[rel.uids.index(u)]
            if asked is not None and not any("手指" in x for x in said):
                said = [m.text for m in mem.messages(asked)]
            assert any("手指" in x for x in said), (u, said)
        d = mem.recall("阿岚10月2号生日", now=mem.last_ts(), log=False)
        assert "time" not in {x.reason for x in d.seeds.terms}
        assert d.relevance.window_phrases == ["10月2号"]
