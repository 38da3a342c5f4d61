"""A logged recall as it was made, written back once (issue 25, "one truth about writes"):
``Memory.logged_recall(uid)`` gives the trace the agent received — not a re-run on today's
state — marked committed or not, and no trace of a recall that was written back can be
committed again, whatever object carries it, through a restart and over the server."""

from __future__ import annotations

import gzip
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import akasha_explorer as ak
from tests.served import serve_env, serving, small_store


@pytest.fixture
def two_turns(tmp_path: Path) -> Path:
    return small_store(tmp_path / "store")


def test_a_logged_recall_comes_back_as_it_was_made(two_turns: Path) -> None:
    with ak.open(two_turns) as mem:
        now = mem.last_ts() + 60
        trace = mem.recall("阿岚 杀戮尖塔", now=now)
        assert trace.log_uid is not None
        got = mem.logged_recall(trace.log_uid)
        assert got.to_json() == trace.to_json()
        # the record is the trace's own JSON, byte for byte (its encoder skips the copy)
        raw = gzip.decompress((mem.store.recalls.dir / f"{trace.log_uid}.json.gz").read_bytes())
        assert raw.decode("utf-8") == trace.to_json()
        assert got.log_uid == trace.log_uid and got.written_back == {"committed": False}
        # later writes change what a re-run would find; the record does not move
        for k in range(3):
            mem.commit(mem.recall("finger dressing", now=now + 10 + k), "s0:2")
        again = mem.recall("阿岚 杀戮尖塔", now=now, log=False)
        assert again.to_json() != trace.to_json()
        assert mem.logged_recall(trace.log_uid).to_json() == trace.to_json()


def test_a_recall_is_written_back_once_whatever_carries_it(two_turns: Path) -> None:
    with ak.open(two_turns) as mem:
        trace = mem.recall("阿岚 杀戮尖塔", now=mem.last_ts() + 60)
        uid = trace.log_uid
        assert uid is not None
        record = mem.logged_recall(uid)           # another object, same recall
        mem.commit(trace, "s0:2", by="alice")
        assert trace.written_back is not None and trace.written_back["node"] == "s0:2"
        with pytest.raises(ak.InvalidInput, match="already committed"):
            mem.commit(trace, "s0:2")
        with pytest.raises(ak.InvalidInput, match="already written back"):
            mem.commit(record, "s0:2")
        done = mem.logged_recall(uid)
        assert done.written_back is not None
        assert {k: done.written_back[k] for k in ("committed", "node", "by")} == \
            {"committed": True, "node": "s0:2", "by": "alice"}
        assert done.to_json() == trace.to_json()   # with the plan that was written
        assert done.writeback is not None and done.writeback.applied
        with pytest.raises(ak.InvalidInput, match=r"already (committed|written back)"):
            mem.commit(done, "s0:0")
        mem.store.checkpoint()                    # the row now lives in Kuzu
        with pytest.raises(ak.InvalidInput, match=r"already (committed|written back)"):
            mem.commit(mem.logged_recall(uid), "s0:0")


def test_the_query_log_says_committed_when_the_row_reached_kuzu_first(two_turns: Path) -> None:
    """A server checkpoints on its own clock: the recall's row can reach Kuzu before the
    agent writes the recall back. The mark waits for the next checkpoint, and the query
    log said ``committed: False`` until then (the browser proof of notebook 02 met it)."""
    with ak.open(two_turns) as mem:
        trace = mem.recall("阿岚 杀戮尖塔", now=mem.last_ts() + 60)
        mem.store.checkpoint()                    # the row lives in Kuzu, not committed
        assert mem.query_log(limit=1)[-1]["committed"] is False
        mem.commit(trace, "s0:2")
        row = mem.query_log(limit=1)[-1]
        assert row["uid"] == trace.log_uid and row["committed"] is True
        mem.store.checkpoint()
        assert mem.query_log(limit=1)[-1]["committed"] is True


def test_add_turn_s_recall_is_logged_as_written_to_the_new_turn(two_turns: Path) -> None:
    with ak.open(two_turns) as mem:
        node, used = mem.add_turn("阿岚今天过了 A10 吗", "过了！", session="s1",
                                  ts=mem.last_ts() + 120)
        assert used is not None and used.log_uid is not None
        got = mem.logged_recall(used.log_uid)
        assert got.written_back is not None and got.written_back["node"] == node
        with pytest.raises(ak.InvalidInput, match=r"already (committed|written back)"):
            mem.commit(got, node)


def test_the_mark_survives_a_kill_before_any_checkpoint(two_turns: Path) -> None:
    """The commit's journal record marks the row: a writer killed before its checkpoint
    leaves a store that still refuses a second write-back of that recall."""
    script = textwrap.dedent("""
        import os, sys
        import akasha_explorer as ak
        mem = ak.open(sys.argv[1])
        t = mem.recall("finger dressing", now=mem.last_ts() + 60)
        mem.commit(t, "s0:0")
        print(t.log_uid, flush=True)
        os._exit(0)                      # no close: no checkpoint
    """)
    out = subprocess.run([sys.executable, "-c", script, str(two_turns)], env=serve_env(),
                         capture_output=True, text=True, timeout=300, check=True)
    uid = out.stdout.strip().splitlines()[-1]
    with ak.open(two_turns) as mem:
        assert [r["committed"] for r in mem.query_log() if r["uid"] == uid] == [True]
        again = mem.recall("finger dressing", now=mem.last_ts() + 60, log=False)
        again.log_uid = uid          # its record may be gone with the kill: the row decides
        with pytest.raises(ak.InvalidInput, match=r"already (committed|written back)"):
            mem.commit(again, "s0:0")


def test_a_forget_drops_every_record_and_says_so(two_turns: Path) -> None:
    with ak.open(two_turns) as mem:
        trace = mem.recall("阿岚 杀戮尖塔", now=mem.last_ts() + 60)
        assert trace.log_uid is not None
        counts = mem.forget(node="s0:0")
        assert counts["recall_records"] == 1
        with pytest.raises(ak.NotFound, match="not kept as it was made"):
            mem.logged_recall(trace.log_uid)
        with pytest.raises(ak.NotFound, match="not a query-log uid"):
            mem.logged_recall("../akasha.json")


def test_a_served_store_gives_the_agents_recall_and_refuses_a_second_write(
        two_turns: Path) -> None:
    with serving(two_turns) as (url, _proc):
        nb = ak.connect(url)
        node, used = nb.add_turn("阿岚今天过了 A10 吗", "过了！", session="s1",
                                 ts=nb.last_ts() + 120)
        assert used is not None and used.log_uid is not None
        got = nb.logged_recall(used.log_uid)
        assert got.to_json() == used.to_json()
        assert got.written_back is not None and got.written_back["node"] == node
        assert got.written_back["by"] == "local"
        with pytest.raises(ak.InvalidInput, match=r"already (committed|written back)"):
            nb.commit(got, node)
        # why a turn is or is not in it, asked of the server's own copy of the recall
        first = got.first_block().uids[0]
        assert nb.why_not(got, first)["stage"] == "delivered"
        assert nb.why_not(got, node)["stage"] == "invisible"   # the turn came after it


def test_records_are_written_by_their_own_thread_and_none_outlives_a_forget(
        two_turns: Path) -> None:
    """The records are written behind the recall (serialising a trace is not the agent's
    to wait for, once the response is out); a close writes what is queued, a forget drops
    it, a reader waits for it."""
    with ak.open(two_turns) as mem:
        now = mem.last_ts() + 60
        made = [mem.recall(f"阿岚 杀戮尖塔 {k}", now=now + k) for k in range(12)]
        want = {t.log_uid: t.to_json() for t in made}
    with ak.open(two_turns) as mem:                  # the close wrote every queued record
        assert {u: mem.logged_recall(u).to_json() for u in want} == want
        folder = mem.store.recalls.dir
        for k in range(12):
            mem.recall(f"finger dressing {k}", now=now + 100 + k)
        mem.forget(node="s0:0")                      # while records may still be queued
        mem.store.recalls.flush()
        assert not list(folder.glob("q-*.json.gz"))
        last = mem.recall("finger dressing", now=now + 200)
        assert not (folder / f"{last.log_uid}.json.gz").exists()   # it waits its delay
        n = mem.store.mirror.nodes
        mem.commit(last, next(u for u, alive in zip(n.uid, n.alive, strict=True) if alive))
        assert mem.logged_recall(last.log_uid).writeback == last.writeback


def test_the_folder_keeps_the_newest_records_within_a_count_and_a_size(
        tmp_path: Path) -> None:
    """Records are bounded by count and by bytes in all (a trace grows with the memory's
    edges); the newest stay, with their written-back marks, and the newest one always."""
    import os
    import secrets

    from akasha_explorer.engine.trace import RecallTrace
    from akasha_explorer.store.recalled import RecallRecords

    rec = RecallRecords(tmp_path, keep=1000, keep_bytes=1 << 30)
    uids = [f"q-{k:04x}" for k in range(30)]
    for k, uid in enumerate(uids):
        tr = RecallTrace.empty()
        tr.query = secrets.token_hex(2000)   # incompressible: each record ~2 KB
        rec.save(uid, tr)
        rec.mark_written(uid, node=f"s:{k}", by="agent", at=float(k))
    rec.flush()
    for k, uid in enumerate(uids):   # oldest first, whatever the clock's resolution
        os.utime(tmp_path / "recalls" / f"{uid}.json.gz", ns=(k * 10**9, k * 10**9))
    size = max(p.stat().st_size for p in (tmp_path / "recalls").glob("*.json.gz"))

    def kept() -> list[str]:
        return sorted(p.name.removesuffix(".json.gz")
                      for p in (tmp_path / "recalls").glob("*.json.gz"))

    assert rec.prune() == 0 and kept() == uids
    rec.keep = 25
    assert rec.prune() == 5 and kept() == uids[5:]
    rec.keep_bytes = 10 * size + 5   # ten traces, but not with their written-back plans
    assert rec.prune() == 16 and kept() == uids[21:]
    assert sum(p.stat().st_size for p in (tmp_path / "recalls").iterdir()) <= rec.keep_bytes
    rec.keep_bytes = 10 * size
    assert rec.prune() == 0
    assert (tmp_path / "recalls" / f"{uids[29]}.written.json").exists()
    assert not (tmp_path / "recalls" / f"{uids[20]}.written.json").exists()
    assert rec.written(uids[25]) == {"node": "s:25", "by": "agent", "at": 25.0}
    rec.keep_bytes = 1
    assert rec.prune() == 8 and kept() == uids[29:]
    assert rec.load(uids[29]).query
