"""Forget purge under stress (extends ``test_forget.py``, reusing its checks): the
forgotten text is in no file of the store folder *while the store is still open* (Kuzu's
WAL included), and a forget killed with SIGKILL — at a seeded moment, while its deletes
run on the scratch copy, while the copy is rebuilt, at LanceDB's delete — is finished by
``akasha doctor --repair`` (or, when the kill came before the rebuilt graph was swapped
in, by forgetting again: the live graph never saw a delete) — afterwards the text is in no file either. LanceDB compresses text, so
it is checked structurally (no version and no data file holds the rows); Kuzu byte-wise."""

from __future__ import annotations

import random
import shutil
import signal
import time
from pathlib import Path

import pytest

import akasha_explorer as ak
from akasha_explorer.errors import NotFound

from .reliability import Zygote, watch
from .test_forget import _files_with, _lance_clean

SESSION = "2026-09-20-evening"  # SONOFF humidity sensor: messages, triples, query log




def _texts(mem: ak.Memory, session: str) -> tuple[list[str], list[str]]:
    """The session's messages: the texts to look for on disk after it is forgotten — but
    not one another session also says ("嗯" alone is said in a dozen: a kept data file
    holding it uncompressed is no leak) — and every message uid."""
    nodes = [u for u in mem.store.mirror.nodes.uid if u.startswith(session + ":")]
    msgs = [m for n in nodes for m in mem.messages(n)]
    kept = mem.store.vectors.read("messages", ["session", "text"])
    others = [t for s, t in zip(kept.column("session").to_pylist(),
                                kept.column("text").to_pylist(), strict=True) if s != session]
    unique = [m.text for m in msgs if not any(m.text in o for o in others)]
    return unique, [m.uid for m in msgs]


def test_nothing_left_while_the_store_is_open(demo_store: Path) -> None:
    with ak.open(demo_store) as mem:
        texts, uids = _texts(mem, SESSION)
        for t in texts:
            mem.recall(t, now=mem.last_ts())  # query-log rows hold the text too
        mem.forget(session=SESSION)
        for t in texts:  # graph.kuzu and its WAL, the journal, LanceDB: before any close
            assert _files_with(demo_store, t) == [], t
        _lance_clean(demo_store, uids)
        assert mem.doctor().clean
    for t in texts:
        assert _files_with(demo_store, t) == [], t


@pytest.mark.slow
def test_a_killed_forget_is_finished_by_repair(zygote: Zygote, demo_store_template: Path,
                                               tmp_path: Path) -> None:
    rng = random.Random(20260920)
    with ak.open(demo_store_template, read_only=True) as mem:
        texts, uids = _texts(mem, SESSION)
    assert texts
    outcomes = []
    for run in range(4):
        store = tmp_path / f"s{run}"
        shutil.copytree(demo_store_template, store)
        pid = zygote.start({"phase": "forget", "session": SESSION, "store": str(store),
                            "log": str(tmp_path / f"w{run}.log")})
        if run == 1:  # after the graph was swapped in: LanceDB's delete
            watch([store / "vectors" / "messages.lance" / "_versions"], timeout=30)
        elif run == 2:  # the deletes run on the scratch copy: the live graph is untouched
            watch([store / "graph.kuzu.work"], timeout=30)
        elif run == 3:  # the copy being rebuilt into a fresh file
            watch([store / "graph.kuzu.rebuild"], timeout=30)
        else:
            time.sleep(rng.uniform(0.3, 2.5))
        zygote.kill(pid)
        status = zygote.wait(pid)
        assert status in (0, -signal.SIGKILL), (tmp_path / f"w{run}.log").read_text()
        with ak.open(store) as mem:
            rep = mem.doctor()
            assert rep.ok, rep.summary()
            if not rep.clean:
                fixed = mem.doctor(repair=True)
                assert fixed.clean, fixed.summary()
            try:  # a kill before the first delete: the session is still there
                mem.forget(session=SESSION)
                outcome = "forgot again"
            except NotFound:
                outcome = "repaired" if not rep.clean else "completed"
            outcomes.append((status, outcome, rep.kinds()))
            assert mem.doctor().clean
        for t in texts:
            assert _files_with(store, t) == [], (run, outcome, t[:30])
        _lance_clean(store, uids)
    assert any(o == "repaired" for _, o, _ in outcomes), outcomes
    assert any(o == "forgot again" and "stale_files" in k for _, o, k in outcomes), outcomes
