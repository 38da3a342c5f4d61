"""SPEC §5: the RecallTrace — JSON round trip, frame, ranking, explain, determinism."""

from __future__ import annotations

import ast
import json
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from akasha_explorer.config import DAY, Settings
from akasha_explorer.engine.bm25 import LexicalHits
from akasha_explorer.engine.recall import plan_writeback, recall
from akasha_explorer.engine.state import EdgeStore, NodeTable
from akasha_explorer.engine.toy import toy_edges, toy_nodes, unit
from akasha_explorer.engine.trace import FRAME_COLUMNS, RecallTrace
from akasha_explorer.engine.writeback import apply_plan
from akasha_explorer.errors import InvalidInput

S = Settings.profile("v1")  # these tests pin the V1-faithful engine (the v1 profile)


def random_mirror(seed: int, n: int, dim: int = 8) -> tuple[NodeTable, EdgeStore, np.ndarray]:
    """Clustered vectors, 1–2 messages per node, sessions over 3 days, random edges."""
    rng = np.random.default_rng(seed)
    centers = rng.standard_normal((3, dim))
    cl = rng.integers(0, 3, n)
    vecs = centers[cl] + 0.6 * rng.standard_normal((n, dim))
    msgs = [[v + 0.3 * rng.standard_normal(dim) for _ in range(int(rng.integers(1, 3)))]
            for v in vecs]
    node_vecs = [np.mean([unit(m) for m in ms], axis=0) for ms in msgs]
    ts = np.sort(rng.uniform(0, 3 * DAY, n))
    nodes = toy_nodes(node_vecs, ts=ts.tolist(), msg_vectors=msgs,
                      sigma=rng.uniform(0, 1, n).tolist(), strength=rng.uniform(0, 3, n).tolist(),
                      resource=rng.uniform(0.2, 1, n).tolist(),
                      assistant_only=(rng.random(n) < 0.1).tolist())
    k = int(rng.integers(0, 4 * n))
    src, dst = rng.integers(0, n, k), rng.integers(0, n, k)
    keep = src != dst
    edges = toy_edges(zip(src[keep].tolist(), dst[keep].tolist(),
                          rng.uniform(0.01, 2, int(keep.sum())).tolist(), strict=True),
                      last_ts=2 * DAY)
    q = unit(centers[int(rng.integers(0, 3))] + 0.5 * rng.standard_normal(dim))
    return nodes, edges, q


def _lexical(nodes: NodeTable, seed: int) -> LexicalHits:
    rng = np.random.default_rng(seed + 1)
    rows = tuple(int(r) for r in rng.choice(nodes.m, size=min(4, nodes.m), replace=False))
    return LexicalHits((), rows, tuple(float(4 - i) for i in range(len(rows))), nodes.m)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 40),
       floor=st.booleans(), salience=st.booleans())
def test_recall_is_deterministic_and_round_trips(seed: int, n: int, floor: bool,
                                                 salience: bool) -> None:
    nodes, edges, q = random_mirror(seed, n)
    cfg = S.replace(RELEVANCE_FLOOR=floor, USE_SALIENCE=salience)
    lex = _lexical(nodes, seed)
    now = 3 * DAY
    a = recall(nodes, edges, q, lex, now=now, settings=cfg, query="q", session="s")
    b = recall(nodes, edges, q, lex, now=now, settings=cfg, query="q", session="s")
    assert a == b
    assert a.to_json() == b.to_json()
    back = RecallTrace.from_json(a.to_json())
    assert back == a
    assert back.to_json() == a.to_json()
    json.loads(a.to_json(), parse_constant=lambda c: pytest.fail(f"non-finite {c}"))
    # invariants
    visible = set(np.flatnonzero(nodes.alive & (nodes.ts <= now)).tolist())
    touched = set(a.micro.rows) | set(a.graph.rows) | set(a.dense.rows) | set(a.seeds.rows)
    assert touched <= visible
    assert len(a.activation) <= cfg.ACTIVATION_K
    assert a.activation.scores == sorted(a.activation.scores, reverse=True)
    if not floor:
        assert all(s >= cfg.ACTIVATION_THRESHOLD or src == "Graph"
                   for s, src in zip(a.activation.scores, a.activation.sources, strict=True))
    else:
        assert all(s >= cfg.ACTIVATION_THRESHOLD for s in a.activation.scores)
    assert not set(a.ripple.uids) & set(a.dense.uids)
    ranking = a.ranking()
    assert sorted(ranking) == sorted(a.activation.uids + a.suppressed.uids)
    if a.micro.current:
        assert sum(a.micro.e0) == pytest.approx(1.0)
    frame = a.to_frame()
    assert list(frame.columns) == list(FRAME_COLUMNS)
    assert len(frame) == len(set(frame["uid"]))
    # write-back plan round-trips inside the trace
    if a.activation.uids:
        plan_writeback(a, nodes, edges, n - 1, now=now, settings=cfg)
        assert RecallTrace.from_json(a.to_json()) == a


def test_frame_ranking_and_explain() -> None:
    nodes = toy_nodes([[1, 0, 0], [0.9, 0.43, 0], [0.5, 0, 0.86], [0, 1, 0], [0.2, 0, 0.98]],
                      ts=[0, 60, 120, 9000, 50000])
    edges = toy_edges([(0, 3, 1.5), (1, 3, 1.0)], last_ts=100.0)
    t = recall(nodes, edges, unit([1, 0.1, 0]), LexicalHits.empty(), now=60000.0,
               settings=S.replace(DENSE_TOP_K=2), query="hello")
    frame = t.to_frame().set_index("uid")
    assert frame.loc["n0", "kind"] == "seed"
    assert frame.loc["n0", "source"] == "Dense"
    assert frame.loc["n3", "kind"] == "graph"
    assert frame.loc["n3", "path"] == "1hop"
    assert math.isnan(frame.loc["n3", "current"])           # not in the micrograph
    assert frame.loc["n3", "score"] == frame.loc["n3", "score_graph"]
    assert bool(frame.loc["n0", "in_dense"])
    assert bool(frame.loc["n0", "activated"])
    ranking = t.ranking()
    scores = dict(zip(frame.index, frame["score"], strict=True))
    assert [scores[u] for u in ranking] == sorted((scores[u] for u in ranking), reverse=True)
    ex = t.explain("n3")
    assert ex["candidate"]
    assert ex["graph_paths"] == 2
    assert ex["score_graph"] > 0
    assert set(FRAME_COLUMNS) <= set(ex)
    assert not t.explain("n4")["candidate"]                 # outside window and graph
    assert "not in the micrograph" in t.explain("n4")["reason"]
    assert t.query == "hello"
    assert t.counts["graph"] == 1


def test_empty_and_invisible() -> None:
    nodes = toy_nodes([[1, 0], [0, 1]], ts=[0, 100])
    nodes.kill(0)
    t = recall(nodes, toy_edges([]), [1.0, 0.0], LexicalHits.empty(), now=50.0, settings=S)
    assert t.n_visible == 0
    assert t.ranking() == []
    assert t.to_frame().empty
    t2 = recall(nodes, toy_edges([]), [1.0, 0.0], LexicalHits.empty(), now=50.0, settings=S,
                visible=np.array([True, True]))
    assert t2.dense.uids == ["n1"]                          # dead n0 never shows up


def test_input_errors() -> None:
    nodes = toy_nodes([[1, 0]])
    with pytest.raises(InvalidInput, match="normalise"):
        recall(nodes, toy_edges([]), [2.0, 0.0], LexicalHits.empty(), now=0.0, settings=S)
    with pytest.raises(InvalidInput, match="dimension"):
        recall(nodes, toy_edges([]), [1.0], LexicalHits.empty(), now=0.0, settings=S)
    with pytest.raises(InvalidInput, match="visible"):
        recall(nodes, toy_edges([]), [1.0, 0.0], LexicalHits.empty(), now=0.0, settings=S,
               visible=[True, False])


def test_writeback_recorded_in_trace_and_applied_flag() -> None:
    nodes, edges, q = random_mirror(5, 30)
    t = recall(nodes, edges, q, LexicalHits.empty(), now=3 * DAY, settings=S)
    plan = plan_writeback(t, nodes, edges, 0, now=3 * DAY, settings=S)
    assert t.writeback is plan
    assert not plan.applied
    apply_plan(plan, nodes, edges)
    assert t.writeback.applied
    back = RecallTrace.from_json(t.to_json())
    assert back.writeback is not None
    assert back.writeback.applied


def test_engine_imports_nothing_but_config_errors_and_itself() -> None:
    """House style: engine/ depends on nothing of ours but config and errors (checked on the
    source, since the package ``__init__`` itself imports the store layer). One exception,
    inside one method: ``RecallTrace.context`` imports the brief area's builder when called
    (a convenience for users; nothing of it is imported with the engine)."""
    allowed_ext = {"numpy", "scipy", "pandas", "__future__", "collections", "dataclasses",
                   "functools", "json", "math", "types", "typing",
                   "orjson"}  # the trace codec's encoder (text in memory, no I/O)
    src = Path(__file__).parents[1] / "akasha_explorer" / "engine"
    lazy = {("trace.py", "brief.context")}
    for path in sorted(src.glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level == 2:
                if (path.name, node.module) in lazy:
                    assert node.col_offset > 0, "the brief import must stay inside the method"
                    continue
                assert node.module in ("config", "errors"), f"{path.name}: ..{node.module}"
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                assert (node.module or "").split(".")[0] in allowed_ext, \
                    f"{path.name}: {node.module}"
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    assert alias.name.split(".")[0] in allowed_ext, f"{path.name}: {alias.name}"


def test_trace_does_not_depend_on_edge_insertion_order() -> None:
    """Decision 20: a mirror rebuilt with its edges loaded in another order (as from Kuzu)
    gives a bit-identical trace."""
    nodes, edges, q = random_mirror(11, 40)
    shuffled = EdgeStore()
    order = np.random.default_rng(0).permutation(edges.count)
    for e in order.tolist():
        shuffled.upsert(int(edges.src[e]), int(edges.dst[e]), w=float(edges.w[e]),
                        last_ts=float(edges.last_ts[e]), co_count=int(edges.co_count[e]))
    lex = _lexical(nodes, 11)
    a = recall(nodes, edges, q, lex, now=3 * DAY, settings=S)
    b = recall(nodes, shuffled, q, lex, now=3 * DAY, settings=S)
    assert a.to_json() == b.to_json()
