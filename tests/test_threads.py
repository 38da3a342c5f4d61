"""The thread model (``docs/threads.md``, issue 50) on real stores: what deadlocked or raced
before it was written down, each reproduced with the calls that did it.

Each test runs the call that used to hang in a thread of its own and fails (with every
thread's stack) when it does not return, instead of hanging the suite. The whole suite
runs with ``$AKASHA_LOCK_CHECK=1`` (``tests/conftest.py``): every lock of the package is
then a :class:`~akasha_explorer._locks.CheckedLock`, and a lock taken out of the one order
fails the test that took it.
"""

from __future__ import annotations

import errno
import faulthandler
import os
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import akasha_explorer as ak
from akasha_explorer._locks import CHECK_ENV, CheckedLock, LockOrderError
from akasha_explorer.errors import DiskFull
from akasha_explorer.server.service import Caller, MemoryService
from akasha_explorer.store.journal import Journal

from .served import small_store

WAIT = 60.0
"""Seconds a call may take before it counts as hung."""


def _returns(fn: Callable[[], Any], what: str, timeout: float = WAIT) -> Any:
    """``fn()`` in a thread of its own; its result (or its exception, raised here). Fails
    with every thread's stack when it does not return within ``timeout``."""
    out: dict[str, Any] = {}

    def run() -> None:
        try:
            out["value"] = fn()
        except BaseException as e:
            out["error"] = e

    t = threading.Thread(target=run, daemon=True, name=f"test-{what}")
    t.start()
    t.join(timeout)
    if t.is_alive():
        faulthandler.dump_traceback(file=sys.stderr, all_threads=True)
        pytest.fail(f"{what} did not return in {timeout:.0f} s (a deadlock; stacks on stderr)")
    if "error" in out:
        raise out["error"]
    return out.get("value")


def test_the_suite_checks_the_lock_order_on_real_locks(mem: ak.Memory) -> None:
    """The checked locks are the ones the store uses, and an acquire out of order is refused
    on the spot: a fold (``store.fold``) started by a thread that holds the graph's
    connection — the inversion ``GraphDB.memo`` and ``meta_get`` could make when a
    statement folded the waiting turns first."""
    assert os.environ.get(CHECK_ENV) == "1"
    store = mem.store
    assert isinstance(store.graph_as_is._use, CheckedLock)
    mem.add_turn("我的小狗叫旺财", "好名字", session="s1")
    assert store.graph_behind == 1
    with store.graph_as_is.exclusive(), pytest.raises(LockOrderError, match=r"store\.fold"):
        store.fold_graph()
    assert store.graph_behind == 1            # nothing was written half
    assert store.fold_graph() == 1            # in order, it folds


def test_a_mirror_reload_with_turns_waiting_returns(mem: ak.Memory) -> None:
    """The reproduction of issue 50: an ``add_turn`` leaves its graph rows waiting, then the
    mirror is reloaded (what a failed journal append or ingest runs). The reload held the
    fold lock and joined the thread that reads the edges, whose first statement folded the
    waiting turns — and waited for that lock for ever."""
    node, _ = mem.add_turn("我的小狗叫旺财", "好名字", session="s1")
    assert mem.store.graph_behind == 1
    _returns(mem.store.reload_mirror, "reload_mirror")
    assert mem.has_node(node)
    assert mem.store.graph_behind == 1        # still waiting, still found
    hits = mem.recall("旺财").activation.uids
    assert node in hits


def test_a_statement_beside_a_fold_never_folds(mem: ak.Memory) -> None:
    """A statement only runs: a thread holding the connection (a ``memo`` loading its value)
    reads on while another thread's fold waits for the connection. Before, the statement
    folded the waiting turns first and waited for the fold lock that the waiting fold held
    — each thread holding what the other waited for."""
    g = mem.store.graph            # caught up now; the turn below waits
    mem.add_turn("我的小狗叫旺财", "好名字", session="s1")
    holding, folded = threading.Event(), []

    def load() -> int:
        holding.set()
        time.sleep(0.5)                     # the fold starts and waits for the connection
        return len(g.rows("MATCH (t:Turn) RETURN t.uid AS u"))

    folder = threading.Thread(target=lambda: (holding.wait(WAIT),
                                              folded.append(mem.store.fold_graph())))
    folder.start()
    n = _returns(lambda: g.memo("test.turns", load), "memo beside a fold")
    folder.join(WAIT)
    assert not folder.is_alive() and folded == [1]
    assert n == g.count("Turn") - 1           # read before the fold wrote the turn


def test_a_full_disk_with_turns_waiting_answers_disk_full_and_loses_nothing(
        tmp_path: Path, embedder: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """A served store with an acknowledged turn waiting for the graph, then a disk that is
    full when the next turn's journal record is written (``ENOSPC`` from the system call):
    the server answers with one line that says the disk is full — it hung, reloading the
    mirror — and after a restart the acknowledged turn is there, the refused one is not."""
    path = small_store(tmp_path / "store")
    caller = Caller(client="agent", channel="mcp")
    svc = MemoryService(path, checkpoint_seconds=3600)
    real = os.pwrite
    try:
        first = svc.tool_add_turn(caller, "我的小狗叫旺财", "好名字", session="s1",
                                  turn_id="t1")
        assert svc.mem.store.graph_behind == 1

        def pwrite(fd: int, data: bytes, offset: int) -> int:
            if os.readlink(f"/proc/self/fd/{fd}").endswith("journal.jsonl"):
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
            return real(fd, data, offset)

        monkeypatch.setattr(os, "pwrite", pwrite)
        with pytest.raises(DiskFull) as got:
            _returns(lambda: svc.tool_add_turn(caller, "旺财今天打针了", "辛苦了",
                                               session="s1", turn_id="t2"),
                     "add_turn on a full disk")
        msg = str(got.value)
        assert "disk" in msg and "full" in msg and "\n" not in msg, msg
        monkeypatch.setattr(os, "pwrite", real)
        assert svc.mem.has_node(first["node"])
        again = svc.tool_add_turn(caller, "旺财今天打针了", "辛苦了", session="s1",
                                  turn_id="t2")       # space again: stored once
    finally:
        monkeypatch.setattr(os, "pwrite", real)
        _returns(svc.close, "close")
    with ak.open(path) as mem:
        assert mem.has_node(first["node"]) and mem.has_node(again["node"])
        texts = [m.text for m in mem.messages(again["node"])]
        assert texts == ["旺财今天打针了", "辛苦了"]
        assert mem.store.stored.turn_with_id("s1", "t2") == again["node"]


def test_journal_appends_from_many_threads_each_land_whole(tmp_path: Path) -> None:
    """Appends and syncs from several threads (a server's requests and its fold thread)
    each land whole, in the order of their seqs: nothing relied on the request lock
    happening to serialise them."""
    j = Journal(tmp_path / "journal.jsonl", fsync=False)
    per, threads = 300, 4

    def writer(k: int) -> None:
        for i in range(per):
            j.append({"kind": "commit", "who": k, "i": i, "pad": "x" * (i % 50)})
            if i % 25 == 0:
                j.sync()

    ts = [threading.Thread(target=writer, args=(k,)) for k in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(WAIT)
    j.close()
    recs = Journal(j.path).read()
    assert len(recs) == per * threads
    assert [r["seq"] for r in recs] == list(range(1, per * threads + 1))
    for k in range(threads):
        assert [r["i"] for r in recs if r["who"] == k] == list(range(per))


def test_vector_versions_written_beside_a_compaction_still_count(mem: ak.Memory) -> None:
    """A LanceDB version written while another thread compacts (a server merges fragments
    in its fold thread) still counts toward the next compaction: before, the compaction set
    the count to 0 when it ended, whatever was written meanwhile."""
    store = mem.store
    mem.add_turn("第一句", "好", session="s1")
    vec = store.vectors
    row = vq_turn_row(store)
    done, written = threading.Event(), [0]

    def compact() -> None:
        vec.tidy()
        done.set()

    before = vec.versions
    t = threading.Thread(target=compact)
    t.start()
    while not done.is_set():
        vec.add("turns", row)
        written[0] += 1
    t.join(WAIT)
    assert written[0] >= 1
    assert before >= 1
    # the compaction took back at most what it saw; every add beside it is still counted
    assert vec.versions >= 1 and vec.versions <= written[0]
    assert vec.versions + before >= written[0]


def vq_turn_row(store: Any) -> pa.Table:
    """One row of the ``turns`` table, as a new node vector would be written."""
    t = store.vectors.read("turns")
    return t.slice(0, 1)
