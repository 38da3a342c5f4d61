"""Group commit of ``add_turn`` (:mod:`akasha_explorer.server.turns`) on a real store:
turns that wait for the store together are stored together, each exactly as it would be
alone — its own node, session, seq and write-back — a bad one refused on its own, a
retried ``turn_id`` stored once, and everything there after a reopen."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import akasha_explorer as ak
from akasha_explorer.errors import InvalidInput
from akasha_explorer.server.service import Caller, MemoryService

from .served import graph_held, small_store


@pytest.fixture
def svc(tmp_path: Path, embedder: Any) -> Iterator[MemoryService]:
    s = MemoryService(small_store(tmp_path / "store"), checkpoint_seconds=3600)
    yield s
    s.close()


def _together(svc: MemoryService, calls: list[dict[str, Any]], who: str = "c") -> list[Any]:
    """Run ``add_turn`` calls in threads while the store is held, so they all queue up,
    then let them go; returns each call's result or exception."""
    out: list[Any] = [None] * len(calls)

    def one(k: int) -> None:
        c = calls[k]
        caller = Caller(client=f"{who}{k}", channel="mcp")
        try:
            out[k] = svc.add_turn(caller, c["user"], c.get("assistant"), session=c["session"],
                                  ts=c["ts"], turn_id=c.get("turn_id"))
        except Exception as e:
            out[k] = e

    threads = [threading.Thread(target=one, args=(k,)) for k in range(len(calls))]
    with svc.lock:
        for t in threads:
            t.start()
        deadline = time.monotonic() + 120
        while len(svc._turns._queue) < len(calls) and time.monotonic() < deadline:
            time.sleep(0.02)
    for t in threads:
        t.join(timeout=300)
    return out


def test_turns_waiting_together_are_each_stored_as_alone(svc: MemoryService) -> None:
    t0 = svc.mem.last_ts() + 3600
    calls = [{"user": f"第{k}个问题：阿岚和老周 about topic {k}", "assistant": f"answer {k}",
              "session": f"agent-{k}", "ts": t0 + k} for k in range(6)]
    calls.append({"user": "a second turn of agent-0", "assistant": "ok",
                  "session": "agent-0", "ts": t0})   # at once: either may come first
    before = svc.mem.stats()["nodes"]
    results = _together(svc, calls)
    assert all(isinstance(r, tuple) for r in results), results
    nodes = [r[0] for r in results]
    assert len(set(nodes)) == len(calls)
    for c, (node, trace, retried) in zip(calls, results, strict=True):
        assert not retried and trace is not None and trace.writeback is not None
        msgs = svc.mem.messages(node)
        assert [m.text for m in msgs] == [c["user"], c["assistant"]]
        assert {m.session for m in msgs} == {c["session"]}
    for node in nodes[:6]:                     # extracted in the batch's one transaction
        assert {a.name for a in svc.mem.anchors.of(node)} >= {"阿岚"}
    seqs = sorted(m.seq for n in (nodes[0], nodes[-1]) for m in svc.mem.messages(n))
    assert seqs == list(range(seqs[0], seqs[0] + 4))   # agent-0: one turn after the other
    used = sorted({u for r in results for u in r[1].activation.uids})
    assert used
    states = {u: svc.mem.node(u) for u in used}
    path = svc.path
    svc.close()
    with ak.open(path) as mem:   # every write-back was journaled and synced
        assert mem.stats()["nodes"] == before + len(calls)
        assert {u: mem.node(u) for u in used} == states
        assert sum(len(mem.messages(n)) for n in nodes) == 2 * len(calls)


def test_a_bad_turn_is_refused_alone_and_a_retry_stored_once(svc: MemoryService) -> None:
    t0 = svc.mem.last_ts() + 3600
    svc.add_turn(Caller(), "earlier", "x", session="late", ts=t0 + 100)
    calls = [{"user": "fine one", "session": "a", "ts": t0 + 1, "turn_id": "t-1"},
             {"user": "time goes backwards here", "session": "late", "ts": t0 + 1},
             {"user": "fine two", "session": "b", "ts": t0 + 2}]
    results = _together(svc, calls)
    assert isinstance(results[1], InvalidInput) and "time goes backwards" in str(results[1])
    assert isinstance(results[0], tuple) and isinstance(results[2], tuple)
    again = _together(svc, [{**calls[0], "user": "fine one (sent again)"},
                            {"user": "fine three", "session": "c", "ts": t0 + 3}],
                      who="after-a-restart")   # not this server's memory of the turn_id
    assert again[0][0] == results[0][0] and again[0][2] is True
    assert isinstance(again[1], tuple) and again[1][2] is False
    assert [m.text for m in svc.mem.messages(results[0][0])] == ["fine one"]


def test_the_fold_is_written_by_the_servers_thread_not_by_an_add_turn(
        svc: MemoryService) -> None:
    """The ``add_turn`` that finds ``FOLD_AFTER`` turns waiting wakes the server's own
    thread instead of folding them on its request: with the graph held by someone else
    (a long fold), the calls still finish; once it is free, the server's thread writes
    every waiting turn without another call."""
    from akasha_explorer.store.behind import FOLD_AFTER

    store = svc.mem.store
    t0 = svc.mem.last_ts() + 3600
    caller = Caller(client="agent", channel="mcp")
    svc.add_turn(caller, "热身：阿岚周六来", "好", session="fold", ts=t0)   # kept: Meta, tombstones
    store.fold_graph()
    # and the anchors the fold wrote (the first recall after a fold reads them)
    svc.add_turn(caller, "热身：阿岚周日走", "好", session="fold", ts=t0 + 30)
    nodes: list[str] = []

    def agent() -> None:
        for k in range(FOLD_AFTER + 2):
            nodes.append(svc.add_turn(caller, f"第{k}轮：阿岚周六来吗", f"来 {k}", session="fold",
                                      ts=t0 + 60 * (k + 1))[0])

    calls = threading.Thread(target=agent)
    try:
        with graph_held(store.graph_as_is):
            calls.start()
            calls.join(timeout=120)
            assert len(nodes) == FOLD_AFTER + 2, "an add_turn waited for the graph"
            assert store.graph_behind == FOLD_AFTER + 3
    finally:
        calls.join(timeout=60)
    deadline = time.monotonic() + 120
    while store.graph_behind and time.monotonic() < deadline:
        time.sleep(0.05)
    assert store.graph_behind == 0
    assert [s.nodes for s in svc.mem.sessions() if s.session == "fold"] == [FOLD_AFTER + 4]
