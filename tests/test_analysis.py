"""Analysis (SPEC §7): views, personalized PageRank, Leiden, surprises — on hand-built
graphs with known answers and on real stores (the demo, fresh stores in tmp_path)."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import igraph as ig
import networkx as nx
import numpy as np
import pandas as pd
import pytest

import akasha_explorer as ak
from akasha_explorer.analysis.communities import leiden
from akasha_explorer.analysis.ppr import PPRTrace, personalized_pagerank, ppr_recall
from akasha_explorer.analysis.surprises import (
    bridges,
    indirect_pairs,
    knowledge_gaps,
    semantic_mismatches,
)
from akasha_explorer.analysis.views import GraphView, coact_view
from akasha_explorer.config import DAY, Settings
from akasha_explorer.engine.bm25 import LexicalHits
from akasha_explorer.engine.recall import recall
from akasha_explorer.engine.toy import toy_edges, toy_nodes
from akasha_explorer.engine.trace import RecallTrace

S = Settings()


def _graph(edges: list[tuple[int, int, float]], n: int, directed: bool = False) -> ig.Graph:
    g = ig.Graph(n=n, edges=[(a, b) for a, b, _ in edges], directed=directed)
    g.es["weight"] = [w for _, _, w in edges]
    return g


def _view(edges: list[tuple[str, str, float]], ids: list[str], **cols: list) -> GraphView:
    nodes = pd.DataFrame({"id": ids, **cols})
    e = pd.DataFrame(edges, columns=["source", "target", "weight"])
    return GraphView("t", nodes, e, directed=False)


# -- personalized PageRank ---------------------------------------------------------------------
def test_ppr_path_graph_matches_the_closed_form() -> None:
    # p = (1-d) r + d P^T p on a - b - c from a, d = 1/2: p = (7/12, 1/3, 1/12)
    p = personalized_pagerank(_graph([(0, 1, 1.0), (1, 2, 1.0)], 3), {0: 1.0}, damping=0.5)
    assert p == pytest.approx([7 / 12, 1 / 3, 1 / 12], abs=1e-9)


def test_ppr_agrees_with_networkx_on_a_weighted_random_graph() -> None:
    rng = np.random.default_rng(5)
    n = 30
    pairs = {(int(a), int(b)) for a, b in rng.integers(0, n, (120, 2)) if a != b}
    edges = [(a, b, float(rng.uniform(0.01, 2.0))) for a, b in sorted(pairs)]
    reset = {3: 1.0, 17: 0.5}
    for directed in (False, True):
        g = _graph(edges, n, directed=directed)
        ours = personalized_pagerank(g, reset, damping=0.5, directed=directed)
        ref_g = nx.DiGraph() if directed else nx.Graph()
        ref_g.add_nodes_from(range(n))
        for a, b, w in edges:   # a multigraph sums parallel weights; here pairs are unique
            if ref_g.has_edge(a, b):
                ref_g[a][b]["weight"] += w
            else:
                ref_g.add_edge(a, b, weight=w)
        if directed:   # networkx sends a dangling node's mass to the personalization too
            ref = nx.pagerank(ref_g, alpha=0.5, personalization=reset, weight="weight",
                              dangling=reset, tol=1e-13, max_iter=1000)
        else:
            ref = nx.pagerank(ref_g, alpha=0.5, personalization=reset, weight="weight",
                              tol=1e-13, max_iter=1000)
        assert ours == pytest.approx([ref[i] for i in range(n)], abs=1e-7)
        assert ours.sum() == pytest.approx(1.0)


def test_ppr_weights_steer_the_walk_and_bad_seeds_are_refused() -> None:
    star = _graph([(0, 1, 1.0), (0, 2, 4.0)], 3)
    p = personalized_pagerank(star, [1.0, 0.0, 0.0], damping=0.85)
    assert p[2] == pytest.approx(4 * p[1])   # by symmetry each leaf gets mass ∝ its weight
    with pytest.raises(ak.InvalidInput):
        personalized_pagerank(star, {"nobody": 1.0})
    with pytest.raises(ak.InvalidInput):
        personalized_pagerank(star, [0.0, 0.0, 0.0])


def _toy_mirror():
    vecs = [[1, 0, 0], [0.95, 0.3, 0], [0, 1, 0], [0, 0.9, 0.4], [0, 0, 1], [0.2, 0.1, 1]]
    nodes = toy_nodes(vecs, ts=[0.0, 60.0, 120.0, 180.0, 240.0, 9e9])
    edges = toy_edges([(0, 2, 1.0), (2, 0, 0.4), (2, 3, 1.5), (1, 4, 0.2), (3, 5, 1.0)],
                      last_ts=240.0)
    return nodes, edges


def test_ppr_recall_uses_akasha_seeds_and_ranks_by_pagerank() -> None:
    nodes, edges = _toy_mirror()
    q = np.array([1.0, 0.0, 0.0], np.float32)
    lex = LexicalHits((), (4,), (2.0,), 1)   # a BM25 hit on node 4's message
    now = 300.0
    t = ppr_recall(nodes, edges, q, lex, now=now, settings=S, query="x")
    ref = recall(nodes, edges, q, lex, now=now, settings=S, query="x")
    assert t.seeds == ref.seeds
    assert "FTS" in t.seeds.source
    # node 5 is in the future: no mass, not ranked, although 3 -> 5 is an edge
    assert "n5" not in t.ranking()
    # the ranking is the PageRank order (raw values in the table, brightness = ppr / max)
    assert t.ranking() == t.ppr.uids
    assert t.ppr.ppr == sorted(t.ppr.ppr, reverse=True)
    assert t.activation.scores[0] == 1.0
    # recompute PageRank independently over the visible graph
    vis = [0, 1, 2, 3, 4]
    w = {(0, 2): 1.0, (2, 0): 0.4, (2, 3): 1.5, (1, 4): 0.2}
    g = nx.Graph()
    g.add_nodes_from(vis)
    for (a, b), x in w.items():
        x *= math.exp(-(now - 240.0) / S.EDGE_TAU)
        g.add_edge(a, b, weight=g[a][b]["weight"] + x if g.has_edge(a, b) else x)
    reset = {nodes.index[u]: e for u, e in zip(t.seeds.uids, t.seeds.energy_boosted,
                                                strict=True)}
    ref_pr = nx.pagerank(g, alpha=S.PPR_DAMPING, personalization=reset, weight="weight",
                         tol=1e-13, max_iter=1000)
    got = dict(zip(t.ppr.uids, t.ppr.ppr, strict=True))
    for i in vis:
        assert got.get(f"n{i}", 0.0) == pytest.approx(ref_pr[i], abs=1e-7)
    # JSON round trip and the frame of a comparison
    assert PPRTrace.from_json(t.to_json()) == t
    f = t.to_frame()
    assert list(f.columns) == list(ref.to_frame().columns)
    assert f["uid"].tolist() == t.ranking()
    assert set(f["kind"]) <= {"seed", "walk"}


def test_ppr_recall_relevance_floor_activates_nothing_without_relevant_seeds() -> None:
    nodes, edges = _toy_mirror()
    q = np.full(3, 1 / math.sqrt(3), np.float32)
    s = S.replace(RELEVANCE_FLOOR=True, DENSE_SEED_MIN=0.999, BLACKHOLE_MAX=0)
    t = ppr_recall(nodes, edges, q, LexicalHits.empty(), now=300.0, settings=s)
    assert not t.relevant
    assert len(t.activation) == 0
    assert set(t.suppressed.reasons) == {"no_relevant_seed"}


def test_memory_recall_ppr_side_by_side(demo_store: Path) -> None:
    with ak.open(demo_store) as mem:
        now = mem.last_ts()
        for query in ("手指换药疼不疼", "Slay the Spire A10 with Lan"):
            a = mem.recall(query, now=now)
            p = mem.recall(query, now=now, method="ppr")
            assert isinstance(p, PPRTrace)
            assert p.seeds == a.seeds
            assert p.dense == a.dense
            assert len(p.activation) == S.ACTIVATION_K
            assert set(p.seeds.uids) & set(p.ranking()[: len(p.seeds.uids)])
        rows = mem.store.mirror.pending_queries
        assert [r["method"] for r in rows][-2:] == ["akasha", "ppr"]
        with pytest.raises(ak.InvalidInput, match="known: akasha, ppr"):
            mem.recall("x", now=now, method="bogus")


def test_replay_trace_recomputes_each_method_after_a_reopen(demo_store: Path) -> None:
    """``replay_trace`` replays a trace with the method that made it (Akasha or PPR),
    exactly, from a reopened store; after a commit changed the state it says so."""
    query = "Slay the Spire A10 with Lan"
    with ak.open(demo_store) as mem:
        now = mem.last_ts() + 3600.0
        saved = {m: mem.recall(query, now=now, method=m).to_json() for m in ("akasha", "ppr")}
    with ak.open(demo_store) as mem:
        a = mem.replay_trace(RecallTrace.from_json(saved["akasha"]))
        p = mem.replay_trace(PPRTrace.from_json(saved["ppr"]))
        assert isinstance(p, PPRTrace) and not isinstance(a, PPRTrace)
        for again, was in ((a, saved["akasha"]), (p, saved["ppr"])):
            want = json.loads(was)
            assert want.pop("messages")  # the verbatim text recall attaches, not recomputed
            got = again.to_dict()
            got.pop("messages", None)
            assert json.loads(json.dumps(got)) == want
        mem.commit(a, a.activation.uids[-1])
        for trace in (RecallTrace.from_json(saved["akasha"]), PPRTrace.from_json(saved["ppr"])):
            with pytest.raises(ak.TraceMismatch, match="the store changed"):
                mem.replay_trace(trace)


def test_a_trace_recorded_before_a_setting_existed_replays_as_it_was_made(
        ro_mem: ak.Memory) -> None:
    """A trace lacks the settings added after it was recorded; replay gives each the value
    that reproduces the engine from before it (its v1 value: off), not today's default."""
    query, now = "What did the doctor say about my finger?", ro_mem.last_ts()
    then = ro_mem.settings.replace(BM25_LEN_CAP=0.0, CONTEXT_HOPS=1)
    old = ro_mem.recall(query, now=now, settings=then, log=False)
    assert old.ranking() != ro_mem.recall(query, now=now, log=False).ranking()
    record = json.loads(old.to_json())
    for name in ("BM25_LEN_CAP", "CONTEXT_HOPS"):
        del record["settings"][name]
    again = ro_mem.replay_trace(RecallTrace.from_json(json.dumps(record)))
    assert again.ranking() == old.ranking()


def _pair(mem: ak.Memory, a: str, b: str) -> list[tuple[float, float, int] | None]:
    m = mem.store.mirror
    ra, rb = m.nodes.index[a], m.nodes.index[b]
    out = []
    for s, d in ((ra, rb), (rb, ra)):
        e = m.edges.find(s, d)
        out.append(None if e < 0 else (float(m.edges.w[e]), float(m.edges.last_ts[e]),
                                       int(m.edges.co_count[e])))
    return out


def test_approving_a_suggested_link_links_the_pair_and_undo_unlinks_it(
        demo_store: Path) -> None:
    """Approval = one co-activation of the pair through the write path (both edges, Δ = 1);
    it survives a reopen, reaches Kuzu at the checkpoint, and undo removes exactly it —
    until a recall writes to the link, after which undo is refused."""
    with ak.open(demo_store) as mem:
        mem.surprises()
        item = mem.review(kind="suggested_link")[0]
        a, b = item.payload["a"], item.payload["b"]
        assert _pair(mem, a, b) == [None, None]  # a suggestion: no direct edge yet
        fan = mem.store.mirror.edges.fan(mem.store.mirror.nodes.n).copy()
        audit = mem.review.approve(item.uid, why="they are the same trip")
        made = _pair(mem, a, b)
        assert [x[0] for x in made] == [S.EDGE_LR, S.EDGE_LR]  # type: ignore[index]
        assert [x[2] for x in made] == [1, 1]  # type: ignore[index]
        assert mem.review.get(item.uid).status == "approved"
        after_fan = mem.store.mirror.edges.fan(mem.store.mirror.nodes.n)
        assert int((after_fan - fan).sum()) == 4  # two new edges, two ends each
    with ak.open(demo_store) as mem:  # journaled, checkpointed at close
        assert _pair(mem, a, b) == made
        assert mem.store.graph.rows("MATCH (x:Turn {uid: $a})-[e:COACT]-(y:Turn {uid: $b}) "
                              "RETURN count(e) AS c", {"a": a, "b": b})[0]["c"] == 2
        mem.undo(audit, why="wrong pair")
        assert _pair(mem, a, b) == [None, None]
        assert mem.review.get(item.uid).status == "pending"
        assert int(mem.store.mirror.edges.fan(mem.store.mirror.nodes.n).sum()) == int(fan.sum())
        assert mem.doctor().clean
    with ak.open(demo_store) as mem:
        assert _pair(mem, a, b) == [None, None]
        assert mem.store.graph.rows("MATCH (x:Turn {uid: $a})-[e:COACT]-(y:Turn {uid: $b}) "
                              "RETURN count(e) AS c", {"a": a, "b": b})[0]["c"] == 0
        # approve again, then let a recall write to the link: it is the memory's own now
        audit = mem.review.approve(item.uid)
        now = mem.last_ts() + 3600.0
        t = mem.recall(mem.messages(a)[0].text, now=now)
        assert a in t.activation.uids
        mem.commit(t, b)  # the causal edge a -> b is strengthened
        assert _pair(mem, a, b)[0] != made[0]
        with pytest.raises(ak.InvalidInput, match="belongs to the memory"):
            mem.undo(audit)
        assert mem.review.get(item.uid).status == "approved"  # nothing changed
        assert mem.doctor().clean


def test_explorer_ppr_from_a_node_and_from_an_anchor(demo_store: Path) -> None:
    with ak.open(demo_store, read_only=True) as mem:
        v = mem.graph_view()
        start = v.nodes.sort_values("degree").iloc[-1]["id"]
        f = mem.ppr(start, top=10)
        assert f.iloc[0]["id"] == start
        assert f.iloc[0]["seed"]
        assert f["ppr"].is_monotonic_decreasing
        assert f["rank"].tolist() == list(range(1, 11))
        # an anchor by alias: its mentioning turns are the seeds
        turns = {r["t"] for r in mem.store.graph.rows(
            "MATCH (t:Turn)-[:MENTIONS]->(a:Anchor)<-[:ALIAS_OF]-(al:Alias) "
            "WHERE al.surface = '阿岚' RETURN t.uid AS t")}
        assert turns
        g = mem.ppr("阿岚", top=len(turns) + 5)
        assert set(g[g["seed"]]["id"]) <= turns
        assert g["seed"].sum() >= 1
        with pytest.raises(ak.NotFound):
            mem.ppr("no such anchor or node")


# -- views -------------------------------------------------------------------------------------
def test_coact_view_reads_effective_weights_at_now_and_hides_the_future() -> None:
    nodes, edges = _toy_mirror()
    now = 3 * DAY
    v = coact_view(nodes, edges, now=now, settings=S)
    assert "n5" not in set(v.nodes["id"])             # ts 9e9 > now
    assert len(v.edges) == 4                          # 3 -> 5 is hidden with its node
    e = v.edges.set_index(["source", "target"])
    decay = math.exp(-(now - 240.0) / S.EDGE_TAU)
    assert e.loc[("n2", "n3"), "weight"] == pytest.approx(1.5 * decay)
    assert e.loc[("n2", "n3"), "w"] == 1.5
    u = v.undirected()
    pair = u.edges[(u.edges["source"] == "n0") & (u.edges["target"] == "n2")]
    assert pair["weight"].item() == pytest.approx(1.4 * decay)
    n = v.nodes.set_index("id")
    assert n.loc["n2", "degree"] == 2
    assert n.loc["n2", "out_degree"] == 2
    assert n.loc["n2", "in_degree"] == 1
    assert n.loc["n2", "w_degree"] == pytest.approx((1.0 + 0.4 + 1.5) * decay)
    g, h = v.to_igraph(), v.to_networkx()
    assert g.vcount() == h.number_of_nodes() == 5
    assert g.ecount() == h.number_of_edges() == 4
    assert sorted(g.es["weight"]) == pytest.approx(sorted(w for *_, w in h.edges(data="weight")))


def test_demo_views_carry_every_attribute(demo_store: Path) -> None:
    with ak.open(demo_store, read_only=True) as mem:
        v = mem.graph_view()
        a = mem.graph_view("anchors")
        b = mem.graph_view("bipartite")
        s = mem.stats()
    for col in ("text", "session", "time", "sigma", "strength", "strength_eff", "resource_eff",
                "community", "degree", "w_degree", "flags"):
        assert col in v.nodes
    assert len(v.nodes) == s["nodes"]
    assert len(v.edges) == s["edges"]
    assert (v.edges["weight"] > 0).all()
    assert v.nodes["text"].str.len().max() <= 160
    assert (v.nodes.loc[v.nodes["degree"] == 0, "community"] == -1).all()
    # anchors from the extraction area: co-mentions and triples
    assert len(a.nodes) > 10
    assert len(a.edges) > 10
    assert (a.edges["weight"] >= 1).all()
    assert (a.edges["weight"] == a.edges["co_mentions"] + a.edges["triples"]).all()
    lan = a.nodes[a.nodes["label"].isin(["岚", "阿岚"])]
    assert len(lan) == 1
    assert lan["n_mentions"].item() > 10
    assert set(b.nodes["type"]) == {"turn", "anchor"}
    bg = b.to_igraph()
    assert bg.is_bipartite()


def test_views_of_a_store_without_anchors_or_edges_are_empty(mem: ak.Memory) -> None:
    mem.ingest([{"role": "user", "content": "the weather is fine"},
                {"role": "assistant", "content": "good to hear"}], session="s", progress=False)
    mem.store.graph.execute("MATCH (a:Anchor) DETACH DELETE a")
    for name in ("anchors", "bipartite"):
        v = mem.graph_view(name)
        assert len(v.nodes) == 0
        assert len(v.edges) == 0
        assert v.to_igraph().vcount() == 0
        assert mem.communities(name).empty
    v = mem.graph_view("nodes")
    assert len(v.nodes) == 1
    assert len(v.edges) == 0
    assert v.nodes["community"].item() == -1


# -- Leiden ------------------------------------------------------------------------------------
def test_leiden_splits_two_cliques_and_follows_the_weights() -> None:
    g = ig.Graph.Full(5) + ig.Graph.Full(5)
    g.add_edge(0, 5)
    g.es["weight"] = [1.0] * 20 + [0.05]
    m = leiden(g, seed=3)
    assert len(set(m[:5])) == 1
    assert len(set(m[5:])) == 1
    assert m[0] != m[5]
    # node 10 is tied to both cliques: it joins the one its heavier edges go to
    g.add_vertex()
    g.add_edges([(10, i) for i in range(10)])
    for heavy, light in ((range(5), range(5, 10)), (range(5, 10), range(5))):
        g.es["weight"] = [1.0] * 20 + [0.05] + [
            1.0 if i in heavy else 0.1 for i in range(10)]
        m = leiden(g, seed=3)
        assert m[10] == m[heavy[0]] != m[light[0]]


def test_leiden_resolution_and_seed_on_the_demo(demo_store: Path) -> None:
    with ak.open(demo_store, read_only=True) as mem:
        v = mem.graph_view()
        low = leiden(v, resolution=0.5, seed=1)
        high = leiden(v, resolution=3.0, seed=1)
        assert (leiden(v, resolution=3.0, seed=1) == high).all()
        assert len(set(high.tolist())) > len(set(low.tolist()))
        t = mem.communities(resolution=2.0, seed=1)
    assert t["size"].tolist() == sorted(t["size"].tolist(), reverse=True)
    assert t["size"].sum() == (v.nodes["degree"] > 0).sum()
    members = [m.split(",") for m in t["members"]]
    assert len({u for ms in members for u in ms}) == t["size"].sum()


THREADS = {
    "game": r"岚|尖塔|Spire|A1[01]|Defect|Ironclad|老周|时间吞噬|铁甲|键帽",
    "injury": r"手指|引流|换药|鱼石脂|瑞金|finger|甲沟炎|头孢|dressing",
    "home": r"Home Assistant|Aqara|SONOFF|加湿|湿度|Zigbee|树莓派|Raspberry|米家|dongle",
    "project": r"星图|pathlib|Windows|UNC|v0\.3|GitHub|Markdown",
}


def _thread_of(text: str) -> str | None:
    hits = [k for k, rx in THREADS.items() if re.search(rx, text)]
    return hits[0] if len(hits) == 1 else None


def test_demo_communities_carry_thread_signal_beyond_chance(demo_store: Path) -> None:
    """Label demo turns by the README's thread keywords; the co-activation communities must
    agree with the threads (NMI) better than every one of 200 random relabellings of the
    same partition — a measured property, not a hard-coded partition."""
    with ak.open(demo_store, read_only=True) as mem:
        texts = mem.store.stored.texts()
        n = mem.store.mirror.nodes
        for view, res in (("nodes", 2.0), ("anchors", 1.0)):
            v = mem.graph_view(view, resolution=res, seed=0)
            f = v.nodes[v.nodes["community"] >= 0]
            if view == "nodes":
                lab = []
                for u in f["id"]:
                    i = n.index[u]
                    a, k = int(n.first_msg[i]), int(n.n_msg[i])
                    lab.append(_thread_of(" ".join(texts[n.msg_uid[j]] for j in range(a, a + k))))
            else:
                lab = [_thread_of(str(x)) for x in f["label"]]
            keep = [i for i, x in enumerate(lab) if x is not None]
            threads = [list(THREADS).index(lab[i]) for i in keep]
            comm = f["community"].to_numpy()[keep].tolist()
            score = ig.compare_communities(threads, comm, method="nmi")
            rng = np.random.default_rng(0)
            null = [ig.compare_communities(threads, rng.permutation(comm).tolist(), method="nmi")
                    for _ in range(200)]
            assert score > max(null), (view, score, max(null))


def test_communities_stored_as_episodes(demo_store: Path) -> None:
    with ak.open(demo_store) as mem:
        t = mem.communities(save=True)
        eps = mem.episodes(kind="community")
        assert len(eps) == len(t)
        assert sorted(sorted(e.nodes) for e in eps) == sorted(
            sorted(m.split(",")) for m in t["members"])
        again = mem.communities(save=True)        # replaces, never duplicates
        assert len(mem.episodes(kind="community")) == len(again)
        assert {e.label for e in eps} == set(t.label)


# -- surprises ---------------------------------------------------------------------------------
def test_bridge_participation_on_a_hand_built_graph() -> None:
    # two triangles (a b c), (x y z); m, a community of its own, tied to a (2.0), x (1.0)
    e = [("a", "b", 1.0), ("b", "c", 1.0), ("a", "c", 1.0), ("x", "y", 1.0), ("y", "z", 1.0),
         ("x", "z", 1.0), ("m", "a", 2.0), ("m", "x", 1.0)]
    v = _view(e, list("abcxyzm"), community=[0, 0, 0, 1, 1, 1, 2])
    out = bridges(v, min_participation=0.4, top=2)
    nodes = [s for s in out if s.extra.get("element") != "edge"]
    assert [s.subject for s in nodes] == ["m", "a"]       # w_outside 3.0, then 2.0
    assert nodes[0].numbers["participation"] == pytest.approx(1 - (2 / 3) ** 2 - (1 / 3) ** 2)
    assert nodes[0].numbers["w_outside"] == pytest.approx(3.0)
    assert nodes[0].numbers["n_communities"] == 2
    assert nodes[1].numbers["participation"] == pytest.approx(1 - (2 / 4) ** 2 - (2 / 4) ** 2)
    edge = [s for s in out if s.extra.get("element") == "edge"]
    assert [(s.subject, s.other, s.score) for s in edge] == [("m", "a", 2.0), ("m", "x", 1.0)]
    assert "m" not in {s.subject for s in bridges(v, min_participation=0.4, exclude={"m"})}


def test_indirect_pairs_need_two_paths_and_no_direct_edge() -> None:
    e = [("a", "h", 1.0), ("b", "h", 1.0), ("a", "k", 0.5), ("b", "k", 0.5), ("c", "h", 0.1),
         ("a", "b2", 1.0), ("b2", "b", 1.0), ("c", "a", 0.3)]
    v = _view(e, ["a", "b", "c", "h", "k", "b2"])
    out = indirect_pairs(v, min_via=2, top=20)
    pairs = {(s.subject, s.other) for s in out}
    assert ("a", "b") in pairs
    assert ("a", "c") not in pairs          # direct edge
    top = next(s for s in out if (s.subject, s.other) == ("a", "b"))
    assert top.numbers["n_via"] == 3
    deg = {"h": 3, "k": 2, "b2": 2}
    want = (1.0 / math.log1p(deg["h"]) + 0.5 / math.log1p(deg["k"])
            + 1.0 / math.log1p(deg["b2"]))
    assert top.numbers["adamic_adar"] == pytest.approx(want)
    assert top.numbers["two_hop"] == pytest.approx(1.0 + 0.25 + 1.0)
    assert all(s.numbers["n_via"] >= 2 for s in out)


def test_semantic_mismatch_numbers() -> None:
    base = np.eye(4, dtype=np.float32)
    vecs = np.stack([base[0], base[0] + 0.1 * base[1], base[0] + 0.1 * base[2],
                     base[0] + 0.1 * base[3], base[1], base[2]])
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    v = _view([], list("pqrsuv"), community=[0, 1, 1, 1, 0, 0])
    out = semantic_mismatches(v, vecs, k=3, min_cos=0.5)
    assert [s.subject for s in out] == ["p"]
    assert out[0].numbers["share_other"] == 1.0
    assert out[0].numbers["n_neighbours"] == 3


def test_knowledge_gaps_from_the_query_log(mem: ak.Memory) -> None:
    mem.ingest([{"role": "user", "content": "I planted tomatoes in the garden today"},
                {"role": "assistant", "content": "Nice, tomatoes love sun."},
                {"role": "user", "content": "the tomato plants need more water"}],
               session="g", progress=False)
    now = mem.last_ts() + 60
    for _ in range(2):   # cos 0.18 to the garden turns, no lexical hit: fallback seeds only
        mem.recall("What is the capital of Peru?", now=now)
    mem.recall("What is the capital of Peru?", now=now, log=False)
    mem.recall("Quantum chromodynamics lecture", now=now)
    mem.recall("how are my tomatoes", now=now)            # cos 0.76: a Dense seed
    mem.recall("How are my   TOMATOES", now=now)
    frame = mem.surprises(queue=False)
    gaps = frame[frame["kind"] == "knowledge_gap"]
    assert gaps["subject"].tolist() == ["What is the capital of Peru?"]
    nums = gaps["numbers"].item()
    assert nums["misses"] == 2
    assert nums["asked"] == 2
    mem.checkpoint()      # the log moves to Kuzu; the gap is still found
    assert knowledge_gaps(mem.query_log())[0].numbers["misses"] == 2


def test_demo_surprises_every_kind_with_numbers_and_idempotent_review_items(
        demo_store: Path) -> None:
    with ak.open(demo_store) as mem:
        now = mem.last_ts()
        for _ in range(2):
            mem.recall("What's the capital of Peru?", now=now)
        f = mem.surprises()
        assert set(f["kind"]) == {"bridge", "suggested_link", "knowledge_gap",
                                  "semantic_mismatch"}
        for r in f.itertuples():
            assert r.numbers
            assert all(isinstance(x, int | float | str) for x in r.numbers.values())
            assert r.why
        noise = {u for u, fl in zip(mem.graph_view().nodes["id"],
                                    mem.graph_view().nodes["flags"], strict=True)
                 if "noise" in fl.split(",")}
        assert not noise & set(f["subject"])
        links = f[f["kind"] == "suggested_link"]
        queued = mem.review(kind="suggested_link")
        assert len(queued) == min(len(links), mem.settings.SUGGEST_MAX)
        assert {q.uid for q in queued} <= set(links["review_uid"])
        # idempotent; a decided item stays decided and is not proposed again
        first = queued[0].uid
        mem.review.reject(first, why="not related")
        mem.surprises()
        again = mem.review(status=None, kind="suggested_link")
        assert len(again) == len(queued)
        assert next(q for q in again if q.uid == first).status == "rejected"


# -- methods side by side (issue 25, item 3) -----------------------------------------------------
INJECTED = "what did the system prompt say?"
"""A demo query that reaches the turn whose user message is an injection attempt."""


def test_compare_methods_shows_a_withheld_turn_as_the_context_does(ro_mem: ak.Memory) -> None:
    f = ro_mem.compare_methods(INJECTED, k=10)
    flagged = 0
    for r in f.to_dict(orient="records"):
        msgs = ro_mem.messages(r["uid"])
        bad = [m for m in msgs if "injection" in m.flags]
        for m in bad:
            assert m.text not in r["text"]          # the raw text never reaches the table
        for m in msgs:
            if m not in bad:
                assert m.text in r["text"]           # the rest is shown verbatim
        assert (r["withheld"] == "flagged as injection") == bool(bad), r
        assert r["text"].count("[withheld: flagged as injection]") == len(bad)
        flagged += bool(bad)
    assert flagged


def test_compare_methods_ranks_only_what_a_method_ranked_itself(ro_mem: ak.Memory) -> None:
    from akasha_explorer.text.tokenize import TermRules, terms

    rules = TermRules.of(ro_mem.settings)
    words = set(terms(INJECTED, rules=rules))
    f = ro_mem.compare_methods(INJECTED, k=10)
    block = ro_mem.recall(INJECTED, now=ro_mem.last_ts(), log=False).context()
    sent = {it.node: int(it.handle.strip("[]")) for it in block.items}
    unscored = 0
    for r in f.to_dict(orient="records"):
        held = {t for m in ro_mem.messages(r["uid"]) for t in terms(m.text, rules=rules)}
        # bm25 has a rank exactly where the turn holds a query word: no dense padding
        assert pd.isna(r["rank_bm25"]) == (not held & words), r
        unscored += bool(pd.isna(r["rank_bm25"]))
        # the context column is the agent's context block: handle [n] is rank n
        assert (None if pd.isna(r["rank_context"]) else int(r["rank_context"])) \
            == sent.get(r["uid"]), r
    assert unscored and f["rank_context"].isna().any()


def test_compare_methods_says_why_for_every_row(ro_mem: ak.Memory) -> None:
    f = ro_mem.compare_methods(INJECTED, k=10)
    methods = [c.removeprefix("rank_") for c in f.columns if c.startswith("rank_")]
    assert f["in_top"].lt(len(methods)).any() and f["in_top"].eq(len(methods)).any()
    for r in f.to_dict(orient="records"):
        why = r["why"]
        inside = [m for m in methods if not pd.isna(r[f"rank_{m}"]) and r[f"rank_{m}"] <= 10]
        assert why.startswith(f"top 10 in {', '.join(inside)}" if len(inside) < len(methods)
                              else "top 10 in all"), why
        # each method's own evidence, whether it agrees or not
        assert (f"dense #{r['rank_dense']} (cos_msg {r['cos_msg']:.2f}" in why), why
        assert f"rrf #{r['rank_rrf']} (dense #" in why, why
        if pd.isna(r["rank_bm25"]):
            assert "not scored by BM25: none of the query's words" in why, why
        else:
            assert f"bm25 #{int(r['rank_bm25'])} (holds {r['words']})" in why, why
        if pd.isna(r["rank_context"]):
            assert "not sent: " in why, why   # where it fell out: trace.why_not's reason
            reason = ro_mem.why_not(ro_mem.recall(INJECTED, now=ro_mem.last_ts(), log=False),
                                    r["uid"])["reason"]
            assert f"not sent: {reason}" in why
        else:
            assert f"sent to the agent as [{int(r['rank_context'])}]" in why, why


def test_eval_still_scores_the_padded_rankings(ro_mem: ak.Memory) -> None:
    """``akasha eval`` scores every method's ranking completed by the dense order, so a
    relevant turn without a query word still has a bm25 rank there (unchanged)."""
    from akasha_explorer.analysis.methods import rank_methods

    store = ro_mem.store
    q = store.embeddings.query(INJECTED)
    keep: dict[str, object] = {}
    ranked = rank_methods(store, INJECTED, q, ["context", "dense", "bm25", "rrf"],
                          now=ro_mem.last_ts(), settings=ro_mem.settings, keep=keep)
    n = len(ranked["dense"][0])
    assert all(len(r) == n for r, _ms in ranked.values())
    heads = keep["heads"]
    assert isinstance(heads, dict) and len(heads["bm25"]) < n
    assert ranked["bm25"][0][:len(heads["bm25"])] == heads["bm25"]
