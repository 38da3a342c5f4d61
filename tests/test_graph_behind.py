"""``add_turn``'s write-behind (issue 28): a stored turn's graph rows and extraction wait
in the journal (:meth:`Store.fold_graph <akasha_explorer.store.Store.fold_graph>`) — the
agent's loop (recall, context, add_turn) never waits for a Kuzu transaction, every other
reader and writer of the graph sees the waiting turns, and a kill loses none of them."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import akasha_explorer as ak
from akasha_explorer.analysis.methods import context_order
from akasha_explorer.brief.api import saved_handles
from akasha_explorer.graphdb import chains
from akasha_explorer.graphdb import turns as gt
from akasha_explorer.graphdb.kuzu_db import EXTRACT_PENDING_KEY, GRAPH_SEQ_KEY
from akasha_explorer.store.behind import FOLD_AFTER
from akasha_explorer.store.store import TIDY_AFTER

from .served import graph_held
from .test_writepath import _run, digest

CHILD = """
import json, os, signal, sys
import akasha_explorer as ak
from akasha_explorer.analysis.methods import context_order
from tests.test_writepath import digest
mem = ak.open(sys.argv[1])
now = mem.last_ts() + 3600.0
nodes = []
for k, (q, a) in enumerate([("阿岚说周六去杭州爬山", "好，我记下了：周六，杭州。"),
                            ("Lan asked whether Zhou can come to Hangzhou too", "I'll ask Zhou."),
                            ("老周说他周六要加班", "那就你和阿岚两个人去。")]):
    trace = mem.recall(q, now=now + 60 * k, session="trip")
    node, _ = mem.add_turn(q, a, session="trip", ts=now + 60 * k, recall=trace)
    nodes.append(node)
assert mem.store.graph_behind == 3, mem.store.graph_behind
print(json.dumps({"nodes": nodes, "digest": digest(mem)}), flush=True)
os.kill(os.getpid(), signal.SIGKILL)   # acknowledged; no fold, no checkpoint
"""


def _loop(mem: ak.Memory, k: int, session: str = "trip") -> str:
    now = mem.last_ts() + 60.0
    user = f"阿岚问周六去杭州爬山要带什么 {k}"
    trace = mem.recall(user, now=now, session=session)
    trace.context(None)
    node, _ = mem.add_turn(user, f"带水和外套 {k}", session=session, ts=now, recall=trace)
    return node


def test_the_agent_loop_leaves_the_graph_alone_and_every_reader_waits_for_it(
        rw_mem: ak.Memory) -> None:
    mem = rw_mem
    nodes = [_loop(mem, k) for k in range(3)]
    assert mem.store.graph_behind == 3            # three loops, no Kuzu transaction
    assert all(u in mem.store.mirror.nodes.index for u in nodes)   # recalls see them
    found = mem.recall("周六去杭州爬山带什么", now=mem.last_ts() + 1)
    assert set(nodes) & set(found.floor.uids)
    # any reader of the graph sees them: the session, its NEXT chain, their anchors
    assert [s.nodes for s in mem.sessions() if s.session == "trip"] == [3]
    assert mem.store.graph_behind == 0            # that read wrote them first
    g = mem.store.graph
    assert {(a, b) for a, b, _, _ in chains.links(g, ["trip"])} == \
        chains.wanted([(u, "trip") for u in nodes])
    assert [a for a in mem.anchors.of(nodes[0]) if "岚" in a.surface]
    assert not g.meta_get(EXTRACT_PENDING_KEY)   # extracted in the same transaction
    assert int(g.meta_get(GRAPH_SEQ_KEY, "0") or 0) > 0
    assert not [f for f in mem.doctor().final if f.kind in ("next_links", "session_links")]


def test_memory_context_saves_its_handles_without_folding_the_waiting_turns(
        rw_mem: ak.Memory) -> None:
    """``Memory.context`` saves the block's handle map for a later ``akasha expand``; it
    did so in Kuzu's Meta table, and a Kuzu write first folds the waiting turns — an
    in-process agent alternating ``context`` and ``add_turn`` paid a one-turn fold on every
    ``context`` (demo store: p50 151 ms, against 26 ms served)."""
    mem = rw_mem
    now = mem.last_ts() + 60.0
    for k in range(3):
        block = mem.context(f"阿岚问周六去杭州爬山要带什么 {k}", now=now, session="trip")
        mem.add_turn(f"阿岚问周六去杭州爬山要带什么 {k}", f"带水和外套 {k}", session="trip",
                     ts=now)
        now += 60.0
    assert mem.store.graph_behind == 3            # no context wrote them
    saved = saved_handles(mem.store)
    assert saved is not None and saved["handles"] == block.handles


def test_a_waiting_turn_is_found_by_its_names_before_the_graph_has_it(
        rw_mem: ak.Memory) -> None:
    """Its mentions are not in the graph yet: the anchor channel finds the aliases in its
    text itself — "Lan" (an alias of 阿岚's anchor) reaches a turn that says 岚姐, though
    no word and no meaning is shared across the scripts (checked: without it, no channel
    reaches it). Found: a lexical hit, and among the first lines the agent receives."""
    mem = rw_mem

    def found(uids: set[str], at: float) -> bool:
        trace = mem.recall("Lan", now=at)
        hit = {u for u, lex in zip(trace.relevance.uids, trace.relevance.lexical,
                                   strict=True) if lex > 0}
        return uids <= hit and uids <= set(context_order(trace)[:15])

    now = mem.last_ts() + 60
    node, _ = mem.add_turn("岚姐说下周三要去体检", "好的，记得空腹。", session="w1", ts=now)
    assert mem.store.graph_behind == 1
    assert found({node}, now + 1)
    off = mem.recall("Lan", now=now + 1, settings=mem.settings.replace(ANCHOR_WEIGHT=0.0))
    assert node not in off.relevance.uids
    assert mem.store.graph_behind == 1            # found without writing it first
    # each waiting message is searched once: a turn added since is searched, the anchor's
    # message rows are not the ones cached before it
    other, _ = mem.add_turn("Did she book it?", "岚姐说周三早上八点。", session="w1",
                            ts=now + 2)
    channel = mem.store.anchor_channel
    lan = next(h.anchor for h in channel.lexicon(mem.store).find("Lan"))
    rows, _ = channel.postings(mem.store, lan)
    n = mem.store.mirror.nodes
    owners = {n.uid[int(n.msg_node[j])] for j in rows.tolist()}
    assert {node, other} <= owners
    assert mem.store.graph_behind == 2
    assert found({node, other}, now + 3)


def test_a_forgotten_session_talked_to_again(demo_store: Path) -> None:
    """In the process that forgot them, a session's forgotten turn ids are not given out
    again (the mirror still names them: storing one raised a ValueError before); a later
    process may, and the fold of two waiting turns lifts both turns' tombstones."""
    with ak.open(demo_store) as mem:
        now = mem.last_ts() + 60
        gone = [mem.add_turn(f"周六去杭州 {k}", "好", session="again", ts=now + k)[0]
                for k in range(2)]
        mem.forget(session="again")
        again, _ = mem.add_turn("周六去杭州", "好", session="again", ts=now + 5)
        assert again not in gone
        mem.forget(session="again")
    with ak.open(demo_store) as mem:
        nodes = [mem.add_turn(f"周六去杭州 {k}", "好", session="again", ts=now + 10 + k)[0]
                 for k in range(2)]
        assert nodes == gone and mem.store.graph_behind == 2
        n = mem.store.mirror.nodes
        msgs = [n.msg_uid[j] for u in nodes
                for j in range(int(n.first_msg[n.index[u]]),
                               int(n.first_msg[n.index[u]]) + int(n.n_msg[n.index[u]]))]
        assert len(msgs) == 4
        mem.store.fold_graph()
        assert not gt.forgotten_among(mem.store.graph, msgs)
        assert [s.nodes for s in mem.sessions() if s.session == "again"] == [2]


def test_waiting_turns_are_written_every_fold_after_turns(rw_mem: ak.Memory) -> None:
    mem = rw_mem
    for k in range(FOLD_AFTER - 1):
        _loop(mem, k)
    assert mem.store.graph_behind == FOLD_AFTER - 1
    _loop(mem, FOLD_AFTER)
    assert mem.store.graph_behind == 0


def test_a_checkpoint_and_a_close_write_them(rw_mem: ak.Memory, demo_store: Path) -> None:
    node = _loop(rw_mem, 0)
    rw_mem.checkpoint()
    assert rw_mem.store.graph_behind == 0 and rw_mem.store.journal.pending == 0
    node2 = _loop(rw_mem, 1)
    rw_mem.close()
    with ak.open(demo_store, read_only=True) as ro:
        assert {node, node2} <= set(ro.store.mirror.nodes.index)
        assert not ro.store.mirror.orphan_messages


@pytest.mark.slow
def test_a_kill_before_the_fold_loses_no_acknowledged_turn(
        demo_store: Path, caplog: pytest.LogCaptureFixture) -> None:
    proc = _run(CHILD, str(demo_store))
    assert proc.returncode == -9, proc.stderr[-2000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    nodes = out["nodes"]
    journal = (demo_store / "journal.jsonl").read_text("utf-8")
    assert journal.count('"kind":"graph"') == 3
    with caplog.at_level(logging.WARNING), ak.open(demo_store, read_only=True) as ro:
        assert digest(ro) == out["digest"]        # every recall has them; the graph not
        assert not ro.store.mirror.orphan_messages
        assert not [s for s in ro.sessions() if s.session == "trip"]
    assert "in the journal only" in caplog.text
    with ak.open(demo_store) as mem:
        assert digest(mem) == out["digest"]       # turns, their state and write-backs
        assert not mem.store.mirror.orphan_messages
        g = mem.store.graph
        assert {(a, b) for a, b, _, _ in chains.links(g, ["trip"])} == \
            chains.wanted([(u, "trip") for u in nodes])
        assert set(json.loads(g.meta_get(EXTRACT_PENDING_KEY) or "[]")) == set(nodes)
        assert [f for f in mem.doctor().final if f.kind == "extract_pending"]
        _loop(mem, 9)                             # the next ingest extracts them
        assert [a for a in mem.anchors.of(nodes[0]) if "岚" in a.surface]
        assert not [f for f in mem.doctor().final
                    if f.kind in ("next_links", "session_links", "extract_pending")]
    with ak.open(demo_store) as again:            # written once: a second open adds nothing
        assert digest(again)["nodes"].keys() >= set(nodes)
        assert len([s for s in again.sessions() if s.session == "trip"]) == 1


def test_a_stream_of_turns_keeps_lancedb_compact_and_every_message_verbatim(
        rw_mem: ak.Memory) -> None:
    """Each ``add_turn`` appends a fragment and a version to both LanceDB tables; a fold or
    checkpoint compacts them once ``TIDY_AFTER`` versions were written (without it, 300
    turns made a read of ten turns' messages 4 → 29 ms and the folder 2.6 → 15.7 MB)."""
    mem = rw_mem
    vec = mem.store.vectors
    turns = TIDY_AFTER // 2 + 6            # one tidy at the fold after TIDY_AFTER versions
    texts = {}
    for k in range(turns):
        now = mem.last_ts() + 60.0
        user, reply = f"第{k}次：阿岚问周六去杭州爬山要带什么", f"带水和外套 ({k})"
        node, _ = mem.add_turn(user, reply, session=f"stream{k // 10}", ts=now)
        texts[node] = [user, reply]
    mem.checkpoint()
    assert vec.versions < TIDY_AFTER
    for t in (vec.messages, vec.turns):
        frags = t.stats()["fragment_stats"]["num_fragments"]
        assert frags <= 1 + turns - TIDY_AFTER // 2, frags     # not 1 + turns
        assert len(t.list_versions()) <= 1 + turns - TIDY_AFTER // 2
    assert {u: [m.text for m in mem.messages(u)] for u in texts} == texts
    mem.close()
    again = ak.open(mem.path, read_only=True)
    try:
        assert {u: [m.text for m in again.messages(u)] for u in texts} == texts
    finally:
        again.close()


class _Counting:
    """The store's own model, counting the texts it is asked to embed."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.name, self.dim = inner, inner.name, inner.dim
        self.texts: list[str] = []

    def encode(self, texts: Any, **kw: Any) -> Any:
        self.texts.extend(texts)
        return self.inner.encode(texts, **kw)


@pytest.mark.parametrize("served", [False, True], ids=["add_turn", "prepare_turn"])
def test_the_user_text_is_embedded_once_per_loop(demo_store: Path, served: bool) -> None:
    """An agent's loop recalls the user's text, then stores it: the recall's query vector
    is the message's vector (before: the model embedded the user's text twice a loop)."""
    with ak.open(demo_store, read_only=True) as mem:
        model = mem.store.embedder
    counting = _Counting(model)
    user, reply = "阿岚问周六去杭州爬山要带什么外套", "带一件防风的外套和两瓶水。"
    with ak.open(demo_store, embedder=counting) as mem:
        now = mem.last_ts() + 60.0
        trace = mem.recall(user, now=now, session="trip")
        if served:   # what the server does before it takes the store
            mem.store.embeddings.prepare_turn(user, reply, when=now)
        node, _ = mem.add_turn(user, reply, session="trip", ts=now, recall=trace)
        assert counting.texts == [user, reply]
        got = mem.store.vectors.read("messages", ["text", "vector"], where=f"node = '{node}'")
    vecs = dict(zip(got.column("text").to_pylist(), got.column("vector").to_pylist(),
                    strict=True))
    for text in (user, reply):
        want = model.encode([text])[0]
        assert float(np.dot(np.asarray(vecs[text], np.float32), want)) > 0.99999


def test_two_folds_at_once_write_each_turn_once(rw_mem: ak.Memory) -> None:
    """A fold called from two threads at once (a server's idle fold beside a reader's
    catch-up): the second waits and finds nothing left — before, both wrote the same
    waiting rows and Kuzu refused the second ("duplicated primary key")."""
    import threading

    mem = rw_mem
    now = mem.last_ts() + 60
    nodes = [mem.add_turn(f"两个折叠 {k}", "好", session="twice", ts=now + k)[0]
             for k in range(3)]
    store = mem.store
    assert store.graph_behind == 3
    start = threading.Barrier(2)
    out: list[object] = []

    def fold() -> None:
        start.wait()
        try:
            out.append(store.fold_graph())
        except Exception as e:   # the assertion below shows it
            out.append(e)

    threads = [threading.Thread(target=fold) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    assert sorted(out, key=str) == [0, 3], out
    assert store.graph_behind == 0
    assert [s.nodes for s in mem.sessions() if s.session == "twice"] == [3]
    assert {m.session for n in nodes for m in mem.messages(n)} == {"twice"}


def test_the_agent_loop_goes_on_while_another_thread_holds_the_graph(
        rw_mem: ak.Memory) -> None:
    """A server folds in its own thread (``akasha serve``): while a fold holds the graph's
    connection, recall, context and ``add_turn`` read nothing from Kuzu — the Meta values and
    the tombstones are kept, and an anchor that the waiting turns name keeps its mentions
    from the graph — so they finish instead of waiting for the fold."""
    import threading

    mem = rw_mem
    _loop(mem, 0)   # loads what is kept: the lexicon, 阿岚's mentions, Meta, tombstones
    done: list[str] = []
    agent = threading.Thread(target=lambda: done.extend(_loop(mem, k) for k in range(1, 4)))
    try:
        with graph_held(mem.store.graph_as_is):
            agent.start()
            agent.join(timeout=60)
            assert len(done) == 3, "the agent loop waited for the graph"
    finally:
        agent.join(timeout=60)
    assert mem.store.graph_behind == 4
    found = mem.recall("阿岚问周六去杭州爬山要带什么 3", now=mem.last_ts() + 1)
    assert done[-1] in found.floor.uids
    mem.store.fold_graph()
    assert [s.nodes for s in mem.sessions() if s.session == "trip"] == [4]


def test_a_forget_and_a_deliberate_restore_change_the_kept_tombstones(
        demo_store: Path) -> None:
    """The tombstones every ingest checks are read once and kept: a forget adds to them and
    an ingest that stores a forgotten message again on purpose lifts them, each in the
    process that has them kept."""
    with ak.open(demo_store) as mem:
        node, _ = mem.add_turn("墓碑测试：周日去西湖", "好", session="tomb",
                               ts=mem.last_ts() + 60)
        msgs = mem.messages(node)
        uids = [m.uid for m in msgs]
        assert not gt.forgotten_among(mem.store.graph, uids)   # read and kept: none
        mem.forget(session="tomb")
        assert gt.forgotten_among(mem.store.graph, uids) == set(uids)
    raw = [ak.RawMessage(m.session, m.seq, m.ts, m.role, m.text) for m in msgs]
    with ak.open(demo_store) as mem:
        report = mem.ingest(raw, progress=False)   # skipped; the tombstones are kept now
        assert report.skipped and not report.nodes_added
        report = mem.ingest(raw, progress=False, allow_forgotten=True)
        assert report.nodes_added == 1
        assert not gt.forgotten_among(mem.store.graph, uids)
        assert mem.ingest(raw, progress=False).duplicates == len(raw)
