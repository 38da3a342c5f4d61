"""Forget on real stores: after forgetting, the forgotten text's UTF-8 bytes are in no file
under the store folder (LanceDB's old versions and Kuzu's file included).

LanceDB compresses its string columns, so a raw byte scan finds almost no message text in
its data files even *before* a forget (9 of the demo's 660 texts, all short). The tests
therefore check LanceDB structurally as well: every version still on disk lacks the
forgotten rows, and the data files on disk are exactly those the latest version uses (no
fragment of an older version is left). Kuzu keeps strings raw, so the byte scan is what
proves its part (quotes, surfaces, names, query-log text)."""

from __future__ import annotations

from pathlib import Path

import lancedb
import pytest
from click.testing import CliRunner

import akasha_explorer as ak
from akasha_explorer.cli import cli
from akasha_explorer.errors import InvalidInput, NotFound


def _files_with(folder: Path, needle: str) -> list[str]:
    b = needle.encode("utf-8")
    return [str(p.relative_to(folder)) for p in folder.rglob("*")
            if p.is_file() and b in p.read_bytes()]


def _lance_clean(folder: Path, msg_uids: list[str]) -> None:
    """No version of any table holds the rows; no data file outlives its version; no
    data file holds a deleted row (a deletion file would mean the row is still there)."""
    db = lancedb.connect(str(folder / "vectors"))
    for name in ("messages", "turns"):
        t = db.open_table(name)
        versions = t.list_versions()
        assert len(versions) == 1, (name, len(versions))
        assert versions[-1]["metadata"]["total_deletion_files"] == "0", (name, versions[-1])
        uids = set(t.to_arrow().column("uid").to_pylist())
        assert not uids & set(msg_uids)
        on_disk = list((folder / "vectors" / f"{name}.lance" / "data").iterdir())
        assert len(on_disk) == int(versions[-1]["metadata"]["total_data_files"])


def test_forget_node_purges_every_file(demo_store: Path) -> None:
    node = "2026-09-20-evening:0"  # "我换成了 SONOFF 的湿度计" — also the source of a triple
    with ak.open(demo_store) as mem:
        msgs = mem.messages(node)
        texts = [m.text for m in msgs]
        assert any("SONOFF" in t for t in texts)
        quotes = [t.quote for t in mem.triples() if t.node == node]
        assert quotes
        assert all(_files_with(demo_store, q) == ["graph.kuzu"] for q in quotes)
        mem.recall(texts[0], now=mem.last_ts())  # the query log holds the text too
        n_nodes = mem.stats()["nodes"]
        counts = mem.forget(node=node, why="user asked")
        assert counts["nodes"] == 1
        assert counts["messages"] == len(texts)
        assert counts["triples"] >= 1
        assert counts["queries"] >= 1
        assert mem.stats()["nodes"] == n_nodes - 1
        stats = mem.stats()   # what repr says counts the live nodes and edges, no slots
        assert f": {stats['nodes']} nodes, {stats['edges']} edges>" in repr(mem)
        with pytest.raises(NotFound):
            mem.messages(node)
        entry = mem.audit(limit=1)[0]
        assert entry.action == "forget"
        assert entry.target == f"node:{node}"
        assert all(t not in str(entry) for t in texts)
        # what the node owned is gone from the graph
        assert not mem.store.graph.rows("MATCH (t:Triple) WHERE t.node = $n RETURN t.uid", {"n": node})
        assert not mem.store.graph.rows("MATCH (t:Turn {uid: $n}) RETURN t.uid", {"n": node})
        # later commits and checkpoints do not bring edges back
        tr = mem.recall("湿度计 加湿器", now=mem.last_ts())
        mem.commit(tr, mem.store.mirror.nodes.uid[0])
        mem.checkpoint()
    for t in texts + quotes:
        assert _files_with(demo_store, t) == [], t
    _lance_clean(demo_store, [m.uid for m in msgs])
    with ak.open(demo_store) as mem:  # reopens, replays nothing forgotten
        assert node not in mem.store.mirror.nodes.index
        assert not mem.store.graph.rows("MATCH (t:Turn {uid: $n}) RETURN t.uid", {"n": node})
        assert mem.recall("SONOFF 湿度计", now=mem.last_ts()).activation is not None


def test_forget_session_purges_every_file(demo_store: Path) -> None:
    session = "2026-10-02-night"
    with ak.open(demo_store) as mem:
        nodes = [u for u in mem.store.mirror.nodes.uid if u.startswith(session)]
        msgs = [m for n in nodes for m in mem.messages(n)]
        texts = [m.text for m in msgs]
        counts = mem.forget(session=session)
        assert counts["nodes"] == len(nodes)
        assert session not in {s.session for s in mem.sessions()}
        assert not mem.episodes(session=session)
    for t in texts:
        assert _files_with(demo_store, t) == [], t[:30]
    _lance_clean(demo_store, [m.uid for m in msgs])


def test_a_stray_data_file_of_a_killed_write_is_removed_by_the_purge(demo_store: Path) -> None:
    """A kill while LanceDB writes a data file leaves it under its temporary name
    (``data/.tmp…``), named by no version; the purge that ``forget`` (and ``compact``)
    ends with deletes it, so the folder holds exactly the files its version counts."""
    stray = demo_store / "vectors" / "messages.lance" / "data" / ".tmpAbC123"
    stray.write_bytes(b"half a data file")
    with ak.open(demo_store) as mem:
        node = mem.store.mirror.nodes.uid[3]
        msgs = mem.messages(node)
        mem.forget(node=node)
    assert not stray.exists()
    _lance_clean(demo_store, [m.uid for m in msgs])


def test_a_forgotten_session_stays_forgotten_when_its_source_is_imported_again(
        demo_store: Path) -> None:
    """Exports are cumulative: re-importing the demo file after a forget must not bring the
    session back (its message ids are kept, never its text), unless asked to."""
    from .conftest import DEMO
    session = "2026-10-02-night"
    with ak.open(demo_store) as mem:
        msgs = [m for n in mem.store.mirror.nodes.uid if n.startswith(session)
                for m in mem.messages(n)]
        mem.forget(session=session)
        before = mem.stats()
        rep = mem.ingest(DEMO)
        assert rep.messages_added == 0 and mem.stats() == before
        assert [s.where for s in rep.skipped] == [f"{DEMO}: session {session!r}"]
        assert f"{len(msgs)} message(s) forgotten earlier" in rep.skipped[0].reason
        kept = {r["u"] for r in mem.store.graph.rows("MATCH (f:Forgotten) RETURN f.uid AS u")}
        assert kept == {m.uid for m in msgs}
    for m in msgs:  # the tombstones hold ids, not text
        assert _files_with(demo_store, m.text) == [], m.text[:30]
    r = CliRunner().invoke(cli, ["ingest", str(demo_store), str(DEMO), "--allow-forgotten"])
    assert r.exit_code == 0, r.output
    assert f"{len(msgs)} messages added" in r.output
    with ak.open(demo_store) as mem:
        assert [m.text for n in mem.store.mirror.nodes.uid if n.startswith(session)
                for m in mem.messages(n)] == [m.text for m in msgs]
        assert mem.store.graph.count("Forgotten") == 0
        assert mem.doctor().clean


def test_forget_anchor_removes_names_from_the_graph(demo_store: Path) -> None:
    with ak.open(demo_store) as mem:
        zhou = next(a for a in mem.anchors() if a.name == "老周")
        mem.anchors.rename(zhou.uid, "周大侠 the roommate")  # a name only the graph holds
        assert _files_with(demo_store, "周大侠 the roommate")
        counts = mem.forget(anchor=zhou.uid)
        assert counts["mentions"] == zhou.mentions
        assert counts["triples"] >= 1
        assert mem.anchors("老周") == []
        assert mem.anchors("Zhou") == []
        with pytest.raises(InvalidInput):
            mem.undo(mem.audit(limit=1)[0].uid)  # a forget is final
    assert _files_with(demo_store, "周大侠 the roommate") == []
    # the raw messages that named him are untouched (forget anchor is not forget text)
    assert all(p.startswith("vectors") for p in _files_with(demo_store, "老周"))
    with ak.open(demo_store, read_only=True) as mem:
        assert sum("老周" in t for t in mem.store.stored.texts().values()) >= 20


def test_forget_needs_exactly_one_target(mem: ak.Memory) -> None:
    with pytest.raises(InvalidInput):
        mem.forget()
    with pytest.raises(InvalidInput):
        mem.forget(node="a", session="b")
    with pytest.raises(NotFound):
        mem.forget(node="no-such-node")


def test_a_forgotten_session_is_stored_again_in_the_process_that_forgot_it(
        mem: ak.Memory) -> None:
    """``allow_forgotten`` in the process that forgot: the mirror keeps a forgotten row
    (masked) under its uid, and storing the uid again raised "already in the mirror"; the
    uid now names the new row — recall finds it, the doctor finds nothing, and a reopen
    reads the same."""
    from akasha_explorer.doctor import check
    node, _ = mem.add_turn("周日和阿岚去西湖划船", "好，记下了", session="boat", ts=1.7e9)
    mem.add_turn("明天交周报", "好", session="other", ts=1.7e9 + 600)
    raw = [ak.RawMessage(m.session, m.seq, m.ts, m.role, m.text) for m in mem.messages(node)]
    mem.forget(session="boat")
    assert "boat:0" not in mem.recall("西湖划船", now=1.7e9 + 700).floor.uids
    report = mem.ingest(raw, progress=False, allow_forgotten=True)
    assert report.nodes_added == 1 and report.messages_added == 2
    assert [m.text for m in mem.messages("boat:0")] == [m.text for m in raw]
    assert mem.recall("西湖划船", now=1.7e9 + 800).floor.uids[0] == "boat:0"
    assert mem.stats()["nodes"] == 2
    assert check(mem.store).ok
    folder = mem.path
    mem.close()
    with ak.open(folder) as again:
        assert [m.text for m in again.messages("boat:0")] == [m.text for m in raw]
        assert again.stats()["nodes"] == 2


def test_a_forgotten_turn_id_is_free_and_the_others_still_retry(mem: ak.Memory) -> None:
    """``add_turn``'s retry key (``turn_id``) names live turns only: once its turn is
    forgotten the id stores a new turn; the session's other ids still answer a retry with
    their node (the tails are a view checked on lookup, not a copy)."""
    first, _ = mem.add_turn("我明天去复查手指", "好的，记得带医保卡", session="s", turn_id="a")
    second, _ = mem.add_turn("复查完了，愈合得很好", "太好了", session="s", turn_id="b")
    tails = mem.store.stored.tails(["s"])["s"][1]
    ids = {"a": first, "a/assistant": first, "b": second, "b/assistant": second}
    assert dict(tails) == ids and len(tails) == 4
    mem.forget(node=first)
    assert mem.store.stored.turn_with_id("s", "a") is None
    assert mem.store.stored.turn_with_id("s", "b") == second
    again, _ = mem.add_turn("我明天去复查手指", "好的", session="s", turn_id="a")
    assert again != first and mem.store.has_node(again)
    assert mem.add_turn("复查完了，愈合得很好", "太好了", session="s", turn_id="b")[0] == second
    assert sorted(mem.store.stored.tails(["s"])["s"][1]) == sorted(ids)


def test_cli_forget(demo_store: Path) -> None:
    r = CliRunner().invoke(cli, ["forget", str(demo_store), "--node", "2026-09-02-noon:2",
                                 "--yes"])
    assert r.exit_code == 0, r.output
    assert "nodes=1" in r.output
    assert _files_with(demo_store, "我不喜欢香菜，别的都还行") == []


SECRET = "zq-evening"
WORDS = ["Zoltan", "Quimby", "Quimbyhaven", "lighthouse-keeper"]


def _strings_naming(mem: ak.Memory, needles: list[str], *, skip_audit: str) -> list[str]:
    """Every string value of every Kuzu table that holds a needle (case-insensitive),
    except the tombstones (ids only) and the forget's own audit entry."""
    from .reliability import kuzu_dump

    hits = []
    for table, rows in kuzu_dump(mem.store.graph, skip_meta=()).items():
        if table == "Forgotten":
            continue
        for row in rows:
            if table == "AuditLog" and row[0] == skip_audit:
                continue
            blob = repr(row).casefold()
            hits += [f"{table}: {n} in {str(row)[:160]}" for n in needles
                     if n.casefold() in blob]
    return hits


def test_forget_session_leaves_no_word_of_it_anywhere(demo_store: Path, tmp_path: Path) -> None:
    """Everything that names a forgotten session goes: its messages in every LanceDB
    column (speaker and meta too, in no data file), query-log rows that named it (by its
    words, its session, or their items), the saved context behind `akasha expand`, the
    why of audit entries and review decisions, anchor notes."""
    import json as _json

    from akasha_explorer.brief.api import saved_handles

    rows = [{"session_id": SECRET, "seq": k, "ts": 1_800_000_000 + 60 * k, "role": r,
             "speaker": sp, "text": t, "meta": {"place": "Quimbyhaven harbour"}}
            for k, (r, sp, t) in enumerate([
                ("user", "Zoltan Quimby", "I moved to Quimbyhaven, next to the lighthouse-keeper"),
                ("assistant", "Akashic", "Quimbyhaven! Is the lighthouse-keeper friendly?"),
                ("user", "Zoltan Quimby", "Very. Call me Zoltan, everyone here does")])]
    src = tmp_path / "secret.jsonl"
    src.write_text("".join(_json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    with ak.open(demo_store) as mem:
        mem.ingest(src, replay=True, progress=False)
        now = mem.last_ts() + 60
        mem.recall("手指换药疼不疼", now=now)                            # names nothing of it
        mem.recall("where does Zoltan live now?", now=now)              # names it by a word
        mem.recall("what did we talk about", now=now, session=SECRET)  # its session
        mem.commit(mem.recall("the harbour and the lighthouse", now=now + 1), f"{SECRET}:0")
        block = mem.context("who is the lighthouse-keeper?", now=now + 2)  # saved for expand
        assert block.handles
        item = mem.review.list()[0]
        mem.review.reject(item.uid, why="Zoltan Quimby says this is wrong")
        anchor = mem.anchors()[0]
        mem.anchors.rename(anchor.uid, anchor.name, why="as Zoltan calls it")
        mem.checkpoint()
        assert _strings_naming(mem, [*WORDS, SECRET], skip_audit="")  # the test can fail
        mem.forget(session=SECRET, why="user asked")
        own = mem.audit(limit=1)[0]
        assert own.action == "forget"
        hits = _strings_naming(mem, [*WORDS, SECRET], skip_audit=own.uid)
        assert hits == [], hits
        assert saved_handles(mem.store) is None
        assert mem.review.get(item.uid).why == "redacted"
        left = mem.store.graph.rows("MATCH (q:QueryLog) RETURN q.query AS q")
        assert [r["q"] for r in left] == ["手指换药疼不疼"]  # the rest of the query log stays
        assert mem.doctor().clean
    r = CliRunner().invoke(cli, ["expand", str(demo_store), "[1]"])
    assert r.exit_code == 1 and "has none yet" in r.output, r.output
    for w in WORDS + [r["text"] for r in rows] + ["Zoltan Quimby", "Quimbyhaven harbour"]:
        assert _files_with(demo_store, w) == [], w
    _lance_clean(demo_store, [f"{SECRET}:{k}" for k in range(3)])
