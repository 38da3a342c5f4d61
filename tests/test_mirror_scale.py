"""Issue 14: the compact mirror (bulk loaders, edge store, vectors shared with messages, the
message texts the brief reads) gives exactly what the one-at-a-time structures gave."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import akasha_explorer as ak
from akasha_explorer.engine.bm25 import Postings
from akasha_explorer.engine.state import EdgeStore, NodeTable
from akasha_explorer.graphdb.turns import coact_edges
from akasha_explorer.store.journal import CHUNK, Journal
from akasha_explorer.store.mirror import Mirror

from .conftest import write_jsonl

N = 7
pairs = st.tuples(st.integers(0, N - 1), st.integers(0, N - 1)).filter(lambda p: p[0] != p[1])
ops = st.lists(st.one_of(
    st.tuples(st.just("up"), pairs, st.floats(0.0, 2.0)),
    st.tuples(st.just("many"), st.lists(pairs, max_size=6), st.floats(0.0, 2.0)),
    st.tuples(st.just("drop"), pairs, st.just(0.0)),
    st.tuples(st.just("forget"), st.tuples(st.integers(0, N - 1), st.just(0)), st.just(0.0)),
    st.tuples(st.just("prune"), pairs, st.just(0.0)),
    st.tuples(st.just("compact"), pairs, st.just(0.0)),
), max_size=40)


def _view(es: EdgeStore) -> tuple[object, ...]:
    """Everything a reader sees, by node rows (edge ids differ between layouts)."""
    def edges_of(ids: np.ndarray) -> list[tuple[int, int, float, int]]:
        return [(int(es.src[e]), int(es.dst[e]), float(es.w[e]), int(es.co_count[e]))
                for e in ids.tolist()]

    rows = list(range(N + 2))
    out = [edges_of(es.out_edges(i)) for i in rows]
    inn = [edges_of(es.in_edges(i)) for i in rows]
    many_o, own_o = es.out_edges_many(rows[::-1])
    many_i, own_i = es.in_edges_many(rows[::-1])
    found = {(s, d): es.find(s, d) for s in range(N) for d in range(N) if s != d}
    ok = all(e < 0 or (es.src[e], es.dst[e]) == k for k, e in found.items())
    hits = es.find_many([k[0] for k in found], [k[1] for k in found]).tolist()
    return (out, inn, edges_of(many_o), own_o.tolist(), edges_of(many_i), own_i.tolist(),
            {k: e >= 0 for k, e in found.items()}, ok, hits == list(found.values()),
            es.fan(N + 2).tolist(), es.n_alive())


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(base=st.lists(st.tuples(pairs, st.floats(0.0, 2.0)), max_size=25), ops=ops,
       compact=st.sampled_from([1, 3, 4096]), tail=st.sampled_from([0, 2, 1024]))
def test_bulk_loaded_edges_read_like_upserted_ones(base: list, ops: list, compact: int,
                                                    tail: int) -> None:
    """A store bulk-loaded then changed (its index rebuilt now and then, its newest edges
    sorted now and then, its removed edges' slots freed now and then) reads exactly like one
    built edge by edge."""
    loaded, built = EdgeStore(compact_min=compact, tail=tail), EdgeStore()
    src = [p[0] for p, _ in base]
    dst = [p[1] for p, _ in base]
    w = [x for _, x in base]
    loaded.load(src, dst, w, [0.0] * len(base), list(range(1, len(base) + 1)))
    for k, ((s, d), x) in enumerate(base):  # load keeps the last of a repeated pair
        built.upsert(s, d, w=x, last_ts=0.0, co_count=k + 1)
    assert _view(loaded) == _view(built)
    for kind, arg, x in ops:
        if kind == "many":  # a batch (pairs may repeat) against one upsert after another
            ws = [x + k for k in range(len(arg))]
            s_, d_ = [p[0] for p in arg], [p[1] for p in arg]
            found = (loaded.version, loaded.find_many(s_, d_)) if x > 1.0 else None
            loaded.upsert_many(s_, d_, w=ws, last_ts=[1.0] * len(arg),
                               co_count=list(range(len(arg))), found=found)
            for k, (s, d) in enumerate(arg):
                built.upsert(s, d, w=ws[k], last_ts=1.0, co_count=k)
        for es in (loaded, built):
            s, d = arg if kind != "many" else (0, 0)
            if kind == "up":
                es.upsert(s, d, w=x, last_ts=1.0, co_count=7)
            elif kind == "drop":
                es.drop_edge(s, d)
            elif kind == "forget":
                es.drop_node(s)
            elif kind == "prune" and es.find(s, d) >= 0:
                es.prune(es.find(s, d))
        if kind == "compact":
            alive = loaded.n_alive()
            remap = loaded.compact()
            assert loaded.count == alive == int((remap >= 0).sum())
        assert _view(loaded) == _view(built)


def test_ids_found_before_an_edge_was_created_are_looked_up_again() -> None:
    es = EdgeStore()
    es.load([0], [1], [1.0], [0.0], [1])
    found = (es.version, es.find_many([0, 2], [1, 0]))  # 0->1 is edge 0, 2->0 is missing
    es.upsert(2, 0, w=0.5, last_ts=0.0, co_count=1)      # ... and now exists (id 1)
    ids = es.upsert_many([0, 2], [1, 0], w=[0.3, 0.4], last_ts=[1.0, 1.0], co_count=[2, 2],
                         found=found)
    assert ids.tolist() == [0, 1] and es.count == 2 and es.w.tolist() == [0.3, 0.4]


def _random_nodes(seed: int, n: int, dim: int = 6) -> list[dict[str, object]]:
    """Node specs: 1-3 messages each; a one-message node's vector is its message's, a
    nearly-equal copy of it (one bit off), or the normalised mean (as ingest makes it)."""
    rng = np.random.default_rng(seed)
    out = []
    for k in range(n):
        mv = rng.standard_normal((int(rng.integers(1, 4)), dim))
        mv = (mv / np.linalg.norm(mv, axis=1, keepdims=True)).astype(np.float32)
        mean = mv.astype(np.float64).mean(axis=0)
        v = (mean / np.linalg.norm(mean)).astype(np.float32)
        if mv.shape[0] == 1 and k % 3:
            v = mv[0].copy()
            if k % 3 == 2:
                v.view(np.uint32)[0] ^= 1
        out.append({"uid": f"u{k}", "ts": float(rng.uniform(0, 100)), "session": f"s{k % 4}",
                    "vector": v, "msg_vectors": mv, "sigma": float(rng.random()),
                    "strength": 2.0, "resource": 1.0, "assistant_only": bool(k % 5 == 0),
                    "msg_ts": [float(k)] * mv.shape[0],
                    "msg_uids": [f"u{k}:{j}" for j in range(mv.shape[0])],
                    "strength_ts": float(k), "resource_ts": float(k), "recall_count": k % 3,
                    "replayed": bool(k % 2)})
    return out


def _bulk(table: NodeTable, specs: list[dict[str, object]]) -> None:
    def col(name: str) -> list[object]:
        return [s[name] for s in specs]

    table.add_nodes(col("uid"), ts=col("ts"), session=col("session"),
                    vectors=np.stack(col("vector")), sigma=col("sigma"),
                    strength=col("strength"), resource=col("resource"),
                    assistant_only=col("assistant_only"),
                    n_msg=[len(s["msg_uids"]) for s in specs],
                    msg_vectors=np.concatenate(col("msg_vectors")),
                    msg_ts=[t for s in specs for t in s["msg_ts"]],
                    msg_uids=[u for s in specs for u in s["msg_uids"]],
                    strength_ts=col("strength_ts"), resource_ts=col("resource_ts"),
                    recall_count=col("recall_count"), replayed=col("replayed"))


def _node_view(t: NodeTable) -> tuple[object, ...]:
    return (t.n, t.m, t.uid, t.index, t.msg_uid, t.msg_index, t.sessions,
            np.asarray(t.vec).tobytes(), t.msg_vec.tobytes(), t.msg_sum.tobytes(),
            t.ts.tobytes(), t.sigma.tobytes(), t.strength.tobytes(), t.strength_ts.tobytes(),
            t.resource.tobytes(), t.resource_ts.tobytes(), t.recall_count.tolist(),
            t.assistant_only.tolist(), t.alive.tolist(), t.replayed.tolist(),
            t.session.tolist(), t.first_msg.tolist(), t.n_msg.tolist(), t.msg_node.tolist(),
            t.msg_ts.tobytes(), t.msg_alive.tolist())


def test_bulk_nodes_equal_nodes_added_one_by_one() -> None:
    """add_nodes (in two batches, after some add_node calls) builds the table add_node
    builds: same rows, same vectors, msg_sum to the last bit."""
    specs = _random_nodes(3, 40)
    one, bulk = NodeTable(6), NodeTable(6)
    for spec in specs:
        one.add_node(**spec)
    for spec in specs[:5]:
        bulk.add_node(**spec)
    _bulk(bulk, specs[5:23])
    _bulk(bulk, specs[23:])
    assert _node_view(bulk) == _node_view(one)
    assert 0 < bulk.k_own < bulk.n  # some nodes share their message's row, some do not


def test_cosines_equal_the_plain_scan() -> None:
    """cosines() gives np.einsum over the full node matrix and the max over messages, bit
    for bit, shared rows included — also after a forget zeroes a node."""
    specs = _random_nodes(5, 60)
    t = NodeTable(6)
    _bulk(t, specs)
    t.kill(7)
    t.kill(8)
    rng = np.random.default_rng(1)
    for _ in range(5):
        q = rng.standard_normal(6)
        q = (q / np.linalg.norm(q)).astype(np.float32)
        cos_node, cos_msg = t.cosines(q)
        assert cos_node.tobytes() == np.einsum(
            "ij,j->i", np.asarray(t.vec), q).astype(np.float64).tobytes()
        assert cos_msg.tobytes() == t.cos_msg_max(np.einsum("ij,j->i", t.msg_vec, q)).tobytes()


def test_bulk_nodes_refuse_bad_input() -> None:
    t = NodeTable(6)
    specs = _random_nodes(2, 3)
    _bulk(t, specs[:1])
    with pytest.raises(ValueError, match="already in the mirror"):
        _bulk(t, specs[:2])
    with pytest.raises(ValueError, match=">= 1 message"):
        t.add_nodes(["x"], ts=[0.0], session=["s"], vectors=np.zeros((1, 6), np.float32),
                    sigma=[0], strength=[1], resource=[1], assistant_only=[False], n_msg=[0],
                    msg_vectors=np.zeros((0, 6), np.float32), msg_ts=[], msg_uids=[],
                    strength_ts=[0], resource_ts=[0], recall_count=[0], replayed=[False])
    assert t.n == 1


@settings(max_examples=100, deadline=None)
@given(rows=st.lists(st.lists(st.sampled_from(["a", "bb", "c", "的", "spire"]), max_size=6),
                     max_size=12), cut=st.integers(0, 12), gap=st.integers(0, 2))
def test_bulk_postings_equal_rows_added_one_by_one(rows: list[list[str]], cut: int,
                                                   gap: int) -> None:
    """Postings.add_many indexes like add() row by row, also after rows added by add() and
    with rows skipped."""
    one, bulk = Postings(), Postings()
    cut = min(cut, len(rows))
    for r, terms in enumerate(rows[:cut]):
        one.add(r, terms)
        bulk.add(r, terms)
    start = cut + gap
    for r, terms in enumerate(rows[cut:]):
        one.add(start + r, terms)
    names = sorted({t for terms in rows[cut:] for t in terms}, reverse=True)
    ids = [names.index(t) for terms in rows[cut:] for t in terms]
    bulk.add_many(start, np.cumsum([0] + [len(t) for t in rows[cut:]]), ids, names)
    assert bulk.doc_len().tolist() == one.doc_len().tolist()
    for t in ["a", "bb", "c", "的", "spire", "zz"]:
        assert [x.tolist() for x in bulk.postings(t)] == [x.tolist() for x in one.postings(t)]


def test_preallocated_journal_cuts_a_torn_record_inside_its_zeros(tmp_path: Path) -> None:
    """The journal grows in zeroed chunks; a kill mid-write leaves half a record right after
    the last good one, inside the zeros: it is dropped on read, counted by scan(), and
    zeroed before the next append, so later records stay readable."""
    path = tmp_path / "journal.jsonl"
    j = Journal(path)
    j.append({"kind": "commit", "x": 1})
    end = j._end
    j.close()
    assert path.stat().st_size == CHUNK and path.read_bytes()[end:] == bytes(CHUNK - end)
    with open(path, "r+b") as fh:  # what a kill in the middle of the next write leaves
        fh.seek(end)
        fh.write(b'{"seq":2,"kind":"comm')
    j = Journal(path)
    assert [r["x"] for r in j.read()] == [1]
    assert j.scan()[1] == 1  # one torn line (what doctor reports)
    j.append({"kind": "commit", "x": 3})
    j.append({"kind": "commit", "x": 4}, sync=False)
    j.close()
    again = Journal(path)
    assert [r["x"] for r in again.read()] == [1, 3, 4] and again.scan()[1] == 0
    big = {"kind": "commit", "blob": "x" * (CHUNK + 10)}  # a record larger than a chunk
    again.append(big)
    assert [r.get("x") for r in Journal(path).read()] == [1, 3, 4, None]
    assert path.stat().st_size % CHUNK == 0


def _mirror_edges(mem: ak.Memory) -> set[tuple[str, str, float, float, int]]:
    e, uid = mem.store.mirror.edges, mem.store.mirror.nodes.uid
    return {(uid[int(e.src[k])], uid[int(e.dst[k])], float(e.w[k]), float(e.last_ts[k]),
             int(e.co_count[k])) for k in np.flatnonzero(e.alive).tolist()}


def _kuzu_edges(mem: ak.Memory) -> set[tuple[str, str, float, float, int]]:
    t = coact_edges(mem.store.graph, key="uid").to_pydict()
    return set(zip(t["s"], t["d"], t["w"], t["t"], t["c"], strict=True))


def test_bulk_load_equals_the_mirror_built_live(demo_store: Path, tmp_path: Path) -> None:
    """Nodes ingested and commits made in a running store (the mirror grown node by node)
    equal a mirror bulk-loaded from the stores afterwards: arrays, vectors, msg_sum to the
    bit, texts, terms, postings and edges."""
    extra = write_jsonl(tmp_path / "extra.jsonl", [
        {"session_id": "scale-extra", "seq": k, "ts": 1_800_000_000 + 60 * k,
         "role": "user" if k % 2 == 0 else "assistant", "speaker": "Ann" if k % 2 == 0 else None,
         "text": f"the garden spire needs water, day {k}"} for k in range(6)])
    with ak.open(demo_store) as mem:
        mem.ingest(extra, replay=True, progress=False)
        now = mem.last_ts() + 60
        for k, q in enumerate(["garden spire", "阿岚", "加湿器"]):
            mem.commit(mem.recall(q, now=now + k), mem.store.mirror.nodes.uid[k])
        live = mem.store.mirror
        fresh = Mirror(mem.store.dim)
        fresh.load(mem.store.graph, mem.store.vectors, Journal(mem.path / "journal.jsonl"))
        a, b = live.nodes, fresh.nodes
        assert (a.uid, a.msg_uid, a.sessions) == (b.uid, b.msg_uid, b.sessions)
        for name in ("ts", "sigma", "strength", "strength_ts", "resource", "resource_ts",
                     "recall_count", "msg_vec", "msg_ts", "first_msg", "n_msg", "msg_sum"):
            assert getattr(a, name).tobytes() == getattr(b, name).tobytes(), name
        assert np.asarray(a.vec).tobytes() == np.asarray(b.vec).tobytes()
        rows = list(range(a.m))
        assert [live.msg_terms[j] for j in rows] == [fresh.msg_terms[j] for j in rows]
        assert (live.msg_role, live.msg_flags) == (fresh.msg_role, fresh.msg_flags)
        for col in ("msg_text", "msg_speaker", "msg_sha"):
            assert list(getattr(live, col)) == list(getattr(fresh, col)), col
        for term in ("garden", "spire", "water", "阿岚"):
            assert [x.tolist() for x in live.postings.postings(term)] == \
                [x.tolist() for x in fresh.postings.postings(term)]
        assert live.postings.doc_len().tolist() == fresh.postings.doc_len().tolist()
        assert _mirror_edges(mem) == {(a.uid[int(fresh.edges.src[k])],
                                       a.uid[int(fresh.edges.dst[k])], float(fresh.edges.w[k]),
                                       float(fresh.edges.last_ts[k]),
                                       int(fresh.edges.co_count[k]))
                                      for k in np.flatnonzero(fresh.edges.alive).tolist()}


def test_a_node_lancedb_lacks_is_left_out_and_the_edges_still_map(demo_store: Path) -> None:
    """A Turn whose messages LanceDB no longer holds is not loaded (as before); every other
    COACT edge still lands between the right nodes (the ord -> row map skips it)."""
    with ak.open(demo_store) as mem:
        fan = mem.store.mirror.edges.fan(mem.store.mirror.nodes.n)
        gone = mem.store.mirror.nodes.uid[int(np.argmax(fan[:-1]))]  # a node with edges
        mem.store.vectors.delete("messages", f"node = '{gone}'")
    with ak.open(demo_store, read_only=True) as mem:
        assert gone not in mem.store.mirror.nodes.index
        want = {e for e in _kuzu_edges(mem) if gone not in e[:2]}
        assert want and _mirror_edges(mem) == want


def test_repeated_ords_load_edges_by_uid(demo_store: Path) -> None:
    """Ords this code always makes unique; a store whose ords repeat still loads every edge
    between the right nodes (by uid)."""
    with ak.open(demo_store) as mem:
        uid = mem.store.mirror.nodes.uid
        mem.store.graph.execute("MATCH (t:Turn {uid: $u}) SET t.ord = 0", {"u": uid[3]})
    with ak.open(demo_store, read_only=True) as mem:
        assert _mirror_edges(mem) == _kuzu_edges(mem) and _kuzu_edges(mem)


def test_a_closed_store_leaves_its_edges_for_the_next_open(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """A writer's close leaves the COACT edges in edges.arrow (the store has at least
    EDGE_CACHE_MIN_EDGES); the next open loads the very same edges from it and clears its
    token while open, so a kill afterwards leaves no trusted file and the open after it
    reads Kuzu and the journal."""
    data = write_jsonl(tmp_path / "c.jsonl", [
        {"session_id": f"s{k // 6}", "seq": k % 6, "ts": 1_800_000_000 + 60 * k,
         "role": "user" if k % 2 == 0 else "assistant",
         "text": f"the garden spire needs {['water', 'light', 'care'][k % 3]}, day {k}"}
        for k in range(24)])
    store = tmp_path / "s"
    with ak.open(store, ak.Settings(EDGE_CACHE_MIN_EDGES=1)) as mem:
        mem.ingest(data, replay=True, progress=False)
        mem.store.checkpoint()
        want = _kuzu_edges(mem)
    assert want and (store / "edges.arrow").is_file()
    caplog.set_level("INFO", logger="akasha_explorer.store.bulkload")
    with ak.open(store, read_only=True) as mem:
        assert mem.store.graph.meta_get("edges_cache")  # a reader leaves the token as it is
        assert _mirror_edges(mem) == want
    with ak.open(store) as mem:
        assert "edges (edges.arrow)" in caplog.text
        assert mem.store.graph.meta_get("edges_cache") == ""
        assert _mirror_edges(mem) == want
        mem.commit(mem.recall("garden water", now=mem.last_ts() + 60), mem.store.mirror.nodes.uid[1])
        after = _mirror_edges(mem)
        mem.store.close(checkpoint=False)  # as a kill leaves it: the commit in the journal
    caplog.clear()
    with ak.open(store) as mem:
        assert "edges (Kuzu)" in caplog.text
        assert _mirror_edges(mem) == after != want


def test_compact_keeps_every_row_and_gives_back_space(demo_store: Path) -> None:
    """Store.compact (checkpoint, LanceDB's older versions deleted, the Kuzu file rebuilt)
    keeps the memory as it was: the same edges, nodes and messages, a clean doctor."""
    with ak.open(demo_store) as mem:
        now = mem.last_ts() + 60
        for k, q in enumerate(["阿岚", "加湿器", "杀戮尖塔"]):
            mem.commit(mem.recall(q, now=now + k), mem.store.mirror.nodes.uid[k])
        mem.store.checkpoint()
        edges, stats = _kuzu_edges(mem), mem.stats()
        sizes = mem.store.compact()
        assert sizes["bytes_after"] <= sizes["bytes_before"]
        assert _kuzu_edges(mem) == _mirror_edges(mem) == edges
        assert {**mem.stats(), "disk_bytes": 0} == {**stats, "disk_bytes": 0}
    with ak.open(demo_store) as mem:
        assert _mirror_edges(mem) == edges and mem.doctor().clean
