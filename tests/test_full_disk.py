"""A full disk (issue 18, item 4), on a small tmpfs of its own (skipped where the machine
does not allow mounting one): every write is all or nothing and a full disk is a clear
:class:`~akasha_explorer.errors.DiskFull`, never a crash inside Kuzu (kuzu 0.11.3 aborts
the process when a write meets ENOSPC, so the store checks free space first, see
:mod:`akasha_explorer._fs`).

The operations run in a child process — were a guard missing, Kuzu's abort would end the
child, not the test run — in three rounds: the disk full to the last byte, then with 2 MB
free (the journal works, Kuzu is refused), then with the space back. Afterwards the store
reopens, the doctor finds nothing, and what was acknowledged is there.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import akasha_explorer as ak
from akasha_explorer.config import Settings

from .conftest import DEMO, ROOT
from .disks import tmpfs

CHILD = r"""
import json, os, sys
from pathlib import Path
sys.path.insert(0, sys.argv[1])
import akasha_explorer as ak
from akasha_explorer.errors import DiskFull
from tests.disks import fill, free_bytes
from tests.reliability import files_digest

store, extra, out = Path(sys.argv[2]), sys.argv[3], sys.argv[4]
res = {}

def attempt(name, fn):
    try:
        res[name] = ["ok", fn()]
    except DiskFull as e:
        res[name] = ["DiskFull", str(e)]
    except Exception as e:  # what the test must never see
        res[name] = [type(e).__name__, str(e)[:300]]

mem = ak.open(store)
uid = mem.store.mirror.nodes.uid[0]
state = lambda: (mem.node(uid).__dict__, mem.stats()["edges"], mem.stats()["messages"])
before = state()
names = ("vectors", "journal.jsonl", "akasha.json", "graph.kuzu")
filler = fill(store.parent)                                   # round 1: not a byte free
res["free"] = free_bytes(store.parent)
digest = files_digest(store, names)
logged = mem.stats()["queries_logged"]
tr = mem.recall("the garden and the bike", now=mem.last_ts() + 60)
res["recall_logged"] = mem.stats()["queries_logged"] - logged
counts = lambda: {u: mem.node(u).recall_count for u in tr.activation.uids}
res["recalled_before"] = counts()
attempt("commit", lambda: mem.commit(tr, uid) and None)
res["unchanged_after_commit"] = state() == before and counts() == res["recalled_before"]
attempt("commit_again", lambda: mem.commit(tr, uid) and None)
attempt("ingest", lambda: mem.ingest(extra, progress=False).summary())
attempt("forget", lambda: mem.forget(session=uid.rsplit(":", 1)[0]) and None)
attempt("context", lambda: len(mem.context("garden", now=mem.last_ts() + 61).text))
attempt("checkpoint", lambda: mem.checkpoint() and None)
res["unchanged"] = state() == before and files_digest(store, names) == digest
os.truncate(filler, max(0, filler.stat().st_size - (2 << 20)))   # round 2: 2 MB free
attempt("commit_room", lambda: mem.commit(tr, uid) and None)  # journal ok, checkpoint waits
res["journal_pending"] = mem.store.journal.pending
attempt("checkpoint_room", lambda: mem.checkpoint() and None)
attempt("ingest_room", lambda: mem.ingest(extra, progress=False).summary())
res["recalled_after"] = counts()
filler.unlink()                                               # round 3: space again
attempt("checkpoint_free", lambda: mem.checkpoint() and None)
attempt("ingest_free", lambda: mem.ingest(extra, progress=False).messages_added)
attempt("forget_free", lambda: mem.forget(session="full-disk-extra")["messages"])
mem.close()
Path(out).write_text(json.dumps(res))
"""


def _store(path: Path) -> None:
    rows = [json.loads(x) for x in DEMO.read_text("utf-8").splitlines() if x.strip()][:40]
    src = path.parent / "seed.jsonl"
    src.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    with ak.open(path, Settings(CHECKPOINT_EVERY=1)) as mem:
        mem.ingest(src, replay=True, progress=False)
    src.unlink()


@pytest.mark.slow
def test_a_full_disk_is_a_clear_error_and_every_write_all_or_nothing(tmp_path: Path,
                                                                      embedder: Any) -> None:
    extra = tmp_path / "extra.jsonl"
    extra.write_text("".join(json.dumps({
        "session_id": "full-disk-extra", "seq": k, "ts": 1_800_000_000 + 60 * k, "role": "user",
        "text": f"the garden needs water, day {k}"}) + "\n" for k in range(3)), "utf-8")
    with tmpfs(tmp_path / "disk", 160) as disk:
        store = disk / "store"
        _store(store)
        out = tmp_path / "result.json"
        r = subprocess.run([sys.executable, "-c", CHILD, str(ROOT), str(store), str(extra),
                            str(out)], capture_output=True, text=True, timeout=600,
                           env={**os.environ, "HF_HUB_OFFLINE": "1",
                                "TOKENIZERS_PARALLELISM": "false"})
        assert r.returncode == 0, f"the child died ({r.returncode}):\n{r.stderr[-3000:]}"
        res = json.loads(out.read_text())
        print("\nfull disk:", json.dumps(res, ensure_ascii=False)[:2000])
        assert res["free"] == 0
        # round 1: a read works (its query-log row is skipped with a warning), every
        # write is refused whole, and nothing on disk changed
        assert res["recall_logged"] == 0
        for op in ("commit", "commit_again", "ingest", "forget"):
            assert res[op][0] == "DiskFull", (op, res[op])
            assert "free some space and retry" in res[op][1], res[op]
        assert res["context"][0] == "ok"  # the block is printed; its handles wait
        assert res["checkpoint"][0] == "ok"  # nothing to fold
        assert res["unchanged_after_commit"] and res["unchanged"]
        # round 2: the journal takes commits; Kuzu writes wait for room
        assert res["commit_room"][0] == "ok"
        assert res["journal_pending"] >= 1  # its checkpoint was deferred, not lost
        assert res["checkpoint_room"][0] == "DiskFull"
        assert res["ingest_room"][0] == "DiskFull"
        assert res["recalled_before"]
        assert res["recalled_after"] == {u: c + 1 for u, c in res["recalled_before"].items()}
        # round 3: everything goes through
        assert res["checkpoint_free"][0] == "ok"
        assert res["ingest_free"] == ["ok", 3]
        assert res["forget_free"] == ["ok", 3]
        with ak.open(store) as mem:
            assert mem.doctor().clean
            assert {u: mem.node(u).recall_count for u in res["recalled_after"]} \
                == res["recalled_after"]  # the commit acknowledged on 2 MB is durable
            assert "full-disk-extra" not in {s.session for s in mem.sessions()}
        with ak.open(store, read_only=True) as mem:  # and it reads
            assert mem.stats()["messages"] == 40
