"""Crash safety: workers doing ingest-with-replay and committed recalls are killed with
SIGKILL at seeded random moments — at a random time, right after LanceDB wrote a new
version, right after a journal append, or while Kuzu writes its WAL. After every kill the
store must reopen and ``doctor`` must find no inconsistency: every LanceDB message has its
Kuzu node and vice versa, no duplicate, no orphan edge, and the mirror rebuilt from Kuzu
after a checkpoint equals the running one. What a crash may leave (messages of an
unacknowledged ingest, a torn journal line …) is a *leftover*: the next run of the same
ingest completes it, or ``doctor --repair`` removes it.

Ingest is resumable for real: the killed workers simply run the same ingest again, and the
finished store equals, row for row, a store built from the same files without any crash —
messages, vectors, nodes, sessions, links, the replayed edge weights and node strengths,
anchors, aliases, mentions, triples, episodes and review items.
Acknowledged commits survive every kill; unacknowledged ones are all-or-nothing.

Store *creation* and *import* are killed too (:func:`test_kill9_store_creation` and
:func:`test_kill9_store_import`): whatever moment the kill hits, the path is never bricked
— it holds nothing, a half-made store (the next ingest or import discards it and says so,
as does ``akasha doctor --repair``) or a finished store; running the same command again
gives a store equal, row for row, to one made without a kill.

The normal suite kills ``KILLS`` workers (about two minutes on two cores) and
``CREATE_KILLS`` creations and imports each; ``AKASHA_STRESS_RUNS=200`` (``make stress``)
kills that many, in as many rounds as needed, and at least 50 creations and 50 imports.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from click.testing import CliRunner

import akasha_explorer as ak
from akasha_explorer.cli import cli
from akasha_explorer.config import Settings

from .conftest import DEMO
from .reliability import DYNAMIC, Zygote, dump, first_difference, watch

STRESS = int(os.environ.get("AKASHA_STRESS_RUNS", "0") or 0)
KILLS = STRESS or 14
"""Workers killed by the main test (about 10 while ingesting, the rest while committing)."""
CREATE_KILLS = max(50, STRESS // 4) if STRESS else 6
"""Kills of store creation (an ingest into a new store) and, as many, of an import."""
SEED = int(os.environ.get("AKASHA_CRASH_SEED", "20260908"))
LEFTOVERS = {"orphan_messages", "orphan_turns", "torn_journal", "checkpointed_journal",
             "stale_files", "extract_pending", "forget_pending"}
SETTINGS = Settings(CHECKPOINT_EVERY=5)
QUERIES = ["和阿岚打杀戮尖塔", "手指换药 引流条", "加湿器 湿度计 Aqara", "星图 side project",
           "老周 周末", "早安", "what did I say about the finger?", "智能家居 自动化"]




def _parts(folder: Path, sessions: int = 40, per_file: int = 4) -> list[Path]:
    """The first ``sessions`` demo sessions as JSONL files of ``per_file`` sessions each."""
    rows = [json.loads(x) for x in DEMO.read_text("utf-8").splitlines() if x.strip()]
    order: list[str] = []
    for r in rows:
        if r["session_id"] not in order:
            order.append(r["session_id"])
    folder.mkdir(parents=True, exist_ok=True)
    files = []
    for k in range(0, sessions, per_file):
        keep = set(order[k:k + per_file])
        p = folder / f"part{k // per_file:02d}.jsonl"
        p.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows
                             if r["session_id"] in keep), "utf-8")
        files.append(p)
    return files


def _create(path: Path) -> None:
    ak.open(path, SETTINGS).close()


def _kill_somewhere(z: Zygote, pid: int, store: Path, rng: random.Random) -> str:
    """Kill worker ``pid`` at a seeded moment; returns which kind of moment."""
    mode = rng.choice(["time", "time", "lance", "journal", "wal"])
    if mode == "time":
        time.sleep(rng.uniform(0.05, 3.0))
    else:
        target = {"lance": store / "vectors" / "messages.lance" / "_versions",
                  "journal": store / "journal.jsonl",
                  "wal": store / "graph.kuzu.wal"}[mode]
        if not watch([target], timeout=rng.uniform(1.0, 8.0)):
            mode += "-timeout"
        time.sleep(rng.uniform(0.0, 0.01))
    z.kill(pid)
    return mode


def _after_kill(store: Path, rng: random.Random, seen: Counter[str]) -> None:
    """Reopen (must work), doctor (no error, only known leftovers) — a third of the
    time with repair, which must leave the store clean and say what it did."""
    repair = rng.random() < 0.35
    with ak.open(store) as mem:
        seen["kuzu_redo"] += bool(mem.store.graph.redone)  # kuzu lost rows of a commit; restored
        rep = mem.doctor(repair=repair)
        found = {f.kind for f in rep.findings}
        assert found <= LEFTOVERS, rep.summary()  # no error: only what a crash may leave
        assert all(f.severity == "leftover" for f in rep.findings), rep.summary()
        seen.update(found)
        if repair:
            assert rep.clean, rep.summary()
            assert bool(rep.repairs) == bool(rep.findings), rep.summary()
            seen["repaired"] += bool(rep.findings)


def _run(z: Zygote, job: dict[str, Any], store: Path, rng: random.Random | None) -> int:
    pid = z.start(job)
    mode = _kill_somewhere(z, pid, store, rng) if rng is not None else "none"
    status = z.wait(pid)
    log = Path(job["log"]).read_text("utf-8", "replace") if Path(job["log"]).exists() else ""
    assert status in (0, -signal.SIGKILL), f"worker failed ({status}, {mode}):\n{log[-3000:]}"
    job.setdefault("modes", Counter())[mode] += status != 0
    return status


@pytest.mark.slow
def test_kill9_ingest_replay_and_commits(zygote: Zygote, tmp_path: Path) -> None:
    rng = random.Random(SEED)
    files = [str(p) for p in _parts(tmp_path / "in")]
    ref = tmp_path / "ref"
    _create(ref)
    job = {"phase": "ingest", "files": files, "log": str(tmp_path / "ref.log"), "store": str(ref)}
    assert _run(zygote, job, ref, None) == 0
    reference = dump(ref)
    kills = 0
    seen: Counter[str] = Counter()
    modes: Counter[str] = Counter()
    rounds = 0
    while kills < KILLS:
        rounds += 1
        store = tmp_path / f"store{rounds}"
        _create(store)
        # phase A: ingest with replay, killed until it completes (or its share of kills)
        job = {"phase": "ingest", "files": files, "log": str(tmp_path / f"a{rounds}.log"),
               "store": str(store)}
        share = max(1, round(KILLS * 0.7)) if rounds == 1 else KILLS
        while True:
            if _run(zygote, job, store, rng if kills < min(KILLS, share) else None) == 0:
                break
            kills += 1
            _after_kill(store, rng, seen)
        modes.update(job["modes"])
        diff = first_difference(dump(store), reference)
        assert diff is None, f"after {kills} kills the store differs from the reference: {diff}"
        with ak.open(store, read_only=True) as mem:
            t0 = mem.last_ts() + 86_400.0
            assert mem.stats()["replayed_nodes"] == mem.stats()["nodes"]
        # phase B: committed recalls, killed a few times
        ack = tmp_path / f"ack{rounds}.txt"
        job = {"phase": "commits", "queries": QUERIES, "n_commits": 40, "t0": t0,
               "ack": str(ack), "log": str(tmp_path / f"b{rounds}.log"), "store": str(store)}
        while True:
            killing = kills < KILLS
            status = _run(zygote, job, store, rng if killing else None)
            acked = len(ack.read_text().splitlines()) if ack.exists() else 0
            with ak.open(store, read_only=True) as mem:
                n = mem.store.mirror.nodes
                newest = float(n.strength_ts[n.alive].max())
            if acked:  # every acknowledged commit is durable; nothing beyond the one in flight
                assert newest >= t0 + 3600.0 * (acked - 1), (acked, newest - t0)
            assert newest <= t0 + 3600.0 * acked, (acked, newest - t0)
            if status == 0:
                assert acked == 40
                break
            kills += 1
            _after_kill(store, rng, seen)
        modes.update(job["modes"])
        with ak.open(store) as mem:
            assert mem.doctor().clean
    print(f"\ncrash harness: {kills} kills survived in {rounds} round(s); kill moments "
          f"{dict(modes)}; leftovers seen {dict(seen)} (kuzu_redo: reopens that restored "
          "rows kuzu's WAL replay lost from a committed transaction)")


@pytest.mark.parametrize("window", ["lance", "extract"])
@pytest.mark.slow
def test_torn_ingest_resumes_without_duplicates(zygote: Zygote, tmp_path: Path,
                                                window: str) -> None:
    """Killed in the two windows of a batch write: between the LanceDB append and the
    Kuzu commit (LanceDB holds messages without nodes), or between the Kuzu commit and the
    extraction's commit (nodes without anchors). Reopening works, doctor calls each a
    leftover, an ingest of *another* file leaves nothing behind, and running the same
    ingest again completes it — equal to a crash-free store, without a duplicate."""
    files = [str(p) for p in _parts(tmp_path / "in", sessions=12, per_file=6)]
    first, other = files[:1], files[1:]
    ref, store = tmp_path / "ref", tmp_path / "store"
    for p in (ref, store):
        _create(p)
    assert _run(zygote, {"phase": "ingest", "files": other + first, "store": str(ref),
                         "log": str(tmp_path / "ref.log")}, ref, None) == 0
    versions = store / "vectors" / "messages.lance" / "_versions"
    want = {"lance": "orphan_messages", "extract": "extract_pending"}[window]
    rep = None
    for attempt in range(10):
        job = {"phase": "ingest", "files": first, "store": str(store),
               "log": str(tmp_path / "w.log")}
        pid = zygote.start(job)
        hit = watch([versions], timeout=60, poll=0.0002)
        if window == "extract":
            hit = hit and watch([store / "graph.kuzu.wal"], timeout=30, poll=0.0002)
            time.sleep(0.02 * 1.6 ** attempt)  # past the batch's commit, into the extraction
        zygote.kill(pid)
        assert zygote.wait(pid) in (0, -signal.SIGKILL)
        assert hit
        with ak.open(store) as mem:
            rep = mem.doctor()
        if want in rep.kinds():
            break
        shutil.rmtree(store)  # the kill missed the window: start again
        _create(store)
    assert rep is not None
    assert want in rep.kinds(), f"never caught the {window} window: {rep.summary()}"
    assert rep.ok, rep.summary()
    # another file first: whatever the torn batch left is cleared or kept pending, not leaked
    assert _run(zygote, {"phase": "ingest", "files": other, "store": str(store),
                         "log": str(tmp_path / "w2.log")}, store, None) == 0
    with ak.open(store) as mem:
        rep = mem.doctor()
        assert rep.clean, rep.summary()
    # the same ingest again completes it
    assert _run(zygote, {"phase": "ingest", "files": first, "store": str(store),
                         "log": str(tmp_path / "w3.log")}, store, None) == 0
    if window == "extract":  # ingest order differs from the reference's: compare contents
        with ak.open(store, read_only=True) as a, ak.open(ref, read_only=True) as b:
            names = lambda m: sorted(x.name for x in m.anchors(status=None))  # noqa: E731
            assert names(a) == names(b)
            assert len(a.triples()) == len(b.triples())
    else:  # the raw data: equal; what replay and extraction derive depends on file order
        raw = {"skip_tables": ("COACT", "Anchor", "Alias", "ALIAS_OF", "MENTIONS", "Triple",
                               "FACT", "Episode", "IN_EPISODE", "ReviewItem"),
               "skip_cols": DYNAMIC}
        assert first_difference(dump(store, **raw), dump(ref, **raw)) is None
    with ak.open(store) as mem:
        rep = mem.doctor()
        assert rep.clean, rep.summary()
        uids = mem.store.vectors.read("messages", columns=["uid"]).column("uid").to_pylist()
        assert len(uids) == len(set(uids)) == mem.stats()["messages"]


# -- creation and import -------------------------------------------------------------------------
def _kill_creation(z: Zygote, job: dict[str, Any], store: Path, rng: random.Random,
                   span: float) -> tuple[int, str]:
    """Start ``job`` and kill it at a seeded moment of a store's creation: at a random time
    within ``span`` seconds, or right after one of the files creation writes appears."""
    pid = z.start(job)
    mode = rng.choice(["time", "time", "writer.lock", "akasha.creating", "graph.kuzu",
                       "vectors", "akasha.json"])
    if mode == "time":
        time.sleep(rng.uniform(0.0, span))
    elif not watch([store / mode], timeout=span * 3, poll=0.0002):
        mode += "-timeout"
    z.kill(pid)
    status = z.wait(pid)
    log = Path(job["log"]).read_text("utf-8", "replace") if Path(job["log"]).exists() else ""
    assert status in (0, -signal.SIGKILL), f"worker failed ({status}, {mode}):\n{log[-3000:]}"
    return status, mode


def _recover(store: Path, rng: random.Random, seen: Counter[str]) -> None:
    """After a killed creation: the path holds nothing, a half-made store or a store —
    never something a person has to remove by hand. Half the time `akasha doctor --repair`
    runs first (it must discard a half-made store and say so, or leave a store clean)."""
    from akasha_explorer.store import folder

    found = folder.kind(store)
    seen[found] += 1
    assert found in ("missing", "empty", "half-made", "store"), sorted(os.listdir(store))
    if found == "half-made":
        r = CliRunner().invoke(cli, ["doctor", str(store)])
        assert r.exit_code == 1 and "half-made memory store" in r.output, r.output
    if rng.random() < 0.5 and found in ("half-made", "store"):
        r = CliRunner().invoke(cli, ["doctor", str(store), "--repair"])
        assert r.exit_code == 0, r.output
        if found == "half-made":
            assert "a half-made store" in r.output and "removed" in r.output, r.output
            assert folder.kind(store) == "empty"
        seen["doctor --repair"] += 1


def _creation_kills(z: Zygote, tmp_path: Path, rng: random.Random, job: dict[str, Any],
                    what: str) -> None:
    """Run ``job`` (which makes the store ``job["store"]``) once to a reference, then
    killed at seeded moments until :data:`CREATE_KILLS` kills landed (a run that finished
    first counts as a run, not a kill), each followed by :func:`_recover` and the same
    command run again to the end: the store must equal the reference row for row and the
    doctor must find nothing."""
    from akasha_explorer.store import folder

    ref = tmp_path / "ref"
    t0 = time.monotonic()
    assert _run(z, {**job, "store": str(ref), "log": str(tmp_path / "ref.log")}, ref, None) == 0
    span = time.monotonic() - t0  # the whole run (creation, then the ingest, if any)
    reference = dump(ref)
    seen: Counter[str] = Counter()
    modes: Counter[str] = Counter()
    kills = k = 0
    while kills < CREATE_KILLS:
        k += 1
        assert k <= 3 * CREATE_KILLS, f"only {kills} of {k} runs were killed before finishing"
        store = tmp_path / f"s{k}"
        run = {**job, "store": str(store), "log": str(tmp_path / f"s{k}.log")}
        status, mode = _kill_creation(z, run, store, rng, span)
        kills += status != 0
        modes[mode] += 1
        _recover(store, rng, seen)
        if job["phase"] != "import" or folder.kind(store) != "store":
            assert _run(z, run, store, None) == 0  # the same command again completes it
        else:  # an import killed after its manifest is complete (a new import is refused)
            r = CliRunner().invoke(cli, ["import", str(store), job["src"]])
            assert r.exit_code == 1 and "not an empty folder" in r.output, r.output
        diff = first_difference(dump(store), reference)
        assert diff is None, f"kill {k} ({mode}): the store differs from the reference: {diff}"
        with ak.open(store) as mem:
            assert mem.doctor().clean
        shutil.rmtree(store)
    print(f"\n{what}: {kills} kills in {k} runs (a whole run {span:.2f}s); moments "
          f"{dict(modes)}; found after the kill {dict(seen)}")


@pytest.mark.slow
def test_kill9_store_creation(zygote: Zygote, tmp_path: Path) -> None:
    """`akasha ingest NEW_STORE FILE --replay` killed while it creates the store."""
    files = [str(p) for p in _parts(tmp_path / "in", sessions=2, per_file=2)]
    _creation_kills(zygote, tmp_path, random.Random(SEED + 1),
                    {"phase": "ingest", "files": files}, "creation")


@pytest.mark.slow
def test_kill9_store_import(zygote: Zygote, demo_store: Path, tmp_path: Path) -> None:
    """`akasha import NEW_STORE EXPORT` killed while it builds the store."""
    with ak.open(demo_store) as mem:
        src = mem.export(tmp_path / "export", format="store")
    _creation_kills(zygote, tmp_path, random.Random(SEED + 2),
                    {"phase": "import", "src": str(src)}, "import")


# -- the doctor finds what it claims to find ---------------------------------------------------
def _plant(mem: ak.Memory) -> dict[str, Any]:
    """Damage a store in the ways the doctor looks for; returns what was planted."""
    msgs = mem.store.vectors.read("messages")
    first = msgs.slice(0, 1).to_pylist()[0]
    ghost = dict(first, uid="ghost:0", node="ghost:0")
    dup = dict(msgs.slice(1, 1).to_pylist()[0])
    mem.store.vectors.add("messages", pa.Table.from_pylist([ghost, dup], schema=msgs.schema))
    tv = mem.store.vectors.read("turns")
    mem.store.vectors.add("turns", pa.Table.from_pylist([dict(tv.slice(0, 1).to_pylist()[0],
                                                        uid="ghost:0")], schema=tv.schema))
    a, b = mem.store.mirror.nodes.uid[2], mem.store.mirror.nodes.uid[3]
    mem.store.graph.execute("MATCH (a:Turn {uid: $a}), (b:Turn {uid: $b}) "
                      "CREATE (a)-[:COACT {weight: 0.5, last_ts: 1.0, co_count: 1}]->(b), "
                      "(a)-[:COACT {weight: 0.5, last_ts: 1.0, co_count: 1}]->(b)",
                      {"a": a, "b": b})
    c = mem.store.mirror.nodes.uid[4]
    mem.store.graph.execute("MATCH (t:Turn {uid: $c})-[e:IN_SESSION]->() DELETE e", {"c": c})
    return {"ghost": "ghost:0", "dup": dup["uid"], "edge": f"{a}->{b}", "unlinked": c}


def test_doctor_finds_planted_damage_and_repairs_what_a_crash_leaves(
        demo_store: Path) -> None:
    with ak.open(demo_store) as mem:
        assert mem.doctor().clean
        planted = _plant(mem)
        # a torn journal line, as a kill in the middle of a write leaves it
        with open(demo_store / "journal.jsonl", "ab") as fh:
            fh.write(b'{"seq": 999999, "kind": "commit", "nodes": [{"uid"')
        (demo_store / "graph.kuzu.rebuild").write_bytes(b"half a graph")
    with ak.open(demo_store) as mem:
        rep = mem.doctor()
        found = {f.kind: f for f in rep.findings}
        assert {"orphan_messages", "orphan_turns", "duplicate_messages", "duplicate_edges",
                "torn_journal", "stale_files"} <= set(found), rep.summary()
        assert planted["ghost"] in found["orphan_messages"].examples
        assert planted["dup"] in found["duplicate_messages"].examples
        assert planted["edge"] in found["duplicate_edges"].examples
        assert found["session_links"].examples == [planted["unlinked"]]
        assert not rep.ok  # duplicates are errors, not crash leftovers
        fixed = mem.doctor(repair=True)
        assert any("interrupted ingest" in r for r in fixed.repairs)
        assert any("graph.kuzu.rebuild" in r for r in fixed.repairs)
        # the duplicate COACT edge is a bug's trace, not a crash's: it stays reported
        assert fixed.kinds() == ["duplicate_edges", "session_links"], fixed.summary()
        uids = mem.store.vectors.read("messages", columns=["uid"]).column("uid").to_pylist()
        assert len(uids) == len(set(uids))
        assert "ghost:0" not in uids


def test_doctor_sees_tampered_text_and_a_mirror_that_drifted(demo_store: Path) -> None:
    with ak.open(demo_store) as mem:
        node = mem.store.mirror.nodes.uid[5]
        m = mem.messages(node)[0]
        mem.store.vectors.messages.update(where=f"uid = '{m.uid}'", values={"text": m.text + "!"})
        i = mem.store.mirror.nodes.index[node]
        mem.store.mirror.nodes.strength[i] += 1.0  # changed without the journal
        rep = mem.doctor()
        kinds = rep.kinds("error")
        assert "integrity" in kinds, rep.summary()
        assert "mirror_differs" in kinds, rep.summary()
        assert any(node in e for e in next(f for f in rep.findings
                                           if f.kind == "mirror_differs").examples)


def test_cli_doctor(demo_store: Path) -> None:
    r = CliRunner().invoke(cli, ["doctor", str(demo_store)])
    assert r.exit_code == 0, r.output
    assert "0 errors, 0 leftovers" in r.output
    r = CliRunner().invoke(cli, ["doctor", str(demo_store), "--json"])
    out = json.loads(r.output)
    assert out["ok"]
    assert out["clean"]
    assert out["checked"]["messages"] == 660
    with ak.open(demo_store) as mem:
        _plant(mem)
    r = CliRunner().invoke(cli, ["doctor", str(demo_store)])
    assert r.exit_code == 1
    assert "[error] duplicate_messages" in r.output
    r = CliRunner().invoke(cli, ["doctor", str(demo_store), "--repair"])
    assert "removed 1 messages of an interrupted ingest" in r.output, r.output
    assert "kept one row of each of 1 messages" in r.output


def test_a_torn_journal_tail_is_cut_before_the_next_append(tmp_path: Path) -> None:
    """After a crash mid-write the journal ends in half a record; records appended after
    it must stay readable (they used to sit behind the torn line and be dropped)."""
    from akasha_explorer.store.journal import Journal

    path = tmp_path / "journal.jsonl"
    j = Journal(path)
    j.append({"kind": "commit", "x": 1})
    j.close()
    with open(path, "ab") as fh:
        fh.write(b'{"seq": 2, "kind": "comm')  # the kill came mid-write
    j = Journal(path)
    assert [r["x"] for r in j.read()] == [1]
    j.append({"kind": "commit", "x": 3})  # acknowledged after the reopen
    j.close()
    assert [r.get("x") for r in Journal(path).read()] == [1, 3]
