"""Ingest on real stores: verbatim round trip, salience, idempotency, refusals, models."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import akasha_explorer as ak
from akasha_explorer.graphdb import SCHEMA_VERSION
from akasha_explorer.vectors import vectors_column

from .conftest import tree_digest, write_jsonl

HARD_TEXTS = [
    "我手指划破了，好疼 😣 — 明天去瑞金医院换药",
    "emoji: 👩‍👩‍👧‍👦 🏳️‍🌈 🇨🇳 and a flag",
    "RTL: שלום עולם and العربية mixed with English",
    "combining: e\u0301 vs \u00e9, a\u0308, Z\u0351\u0353\u0354",
    "  leading and trailing spaces, tab\tand\r\nCRLF inside  ",
    "fullwidth ＡＢＣ１２３ and ideographic space\u3000here",
    "x" * 100_000 + " end of a 100 kB message",
]


def _records(texts: list[str], session: str = "s1") -> list[dict[str, Any]]:
    out = []
    for i, t in enumerate(texts):
        out.append({"session_id": session, "seq": i, "ts": 1_788_000_000 + 60 * i,
                    "role": "user" if i % 2 == 0 else "assistant", "text": t})
    return out


def test_verbatim_round_trip(mem: ak.Memory, tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "hard.jsonl", _records(HARD_TEXTS))
    mem.ingest(path)
    got = {m.uid: m for n in mem.store.mirror.nodes.uid for m in mem.messages(n)}
    for i, text in enumerate(HARD_TEXTS):
        m = got[f"s1:{i}"]
        assert m.text == text
        assert m.text.encode("utf-8") == text.encode("utf-8")
        assert m.verified
    # after a reopen, read straight from LanceDB again
    mem.close()
    with ak.open(mem.path, read_only=True) as again:
        texts = {m.uid: m.text for n in again.store.mirror.nodes.uid for m in again.messages(n)}
    assert texts == {f"s1:{i}": t for i, t in enumerate(HARD_TEXTS)}


def test_node_formation_and_state(mem: ak.Memory) -> None:
    msgs = [
        {"role": "assistant", "content": "Good morning! Slept well?"},
        {"role": "user", "content": "I cut my finger while cooking"},
        {"role": "assistant", "content": "Ouch. Keep it clean and dry."},
        {"role": "assistant", "content": "If it swells, see a doctor."},
        {"role": "user", "content": "ok"},
    ]
    report = mem.ingest(msgs, session="live", progress=False)
    assert report.nodes_added == 3
    nodes = mem.store.mirror.nodes
    assert nodes.uid == ["live:0", "live:1", "live:4"]
    assert nodes.assistant_only.tolist() == [True, False, False]
    assert nodes.n_msg.tolist() == [1, 3, 1]
    s = mem.settings
    for i in range(nodes.n):
        expect = s.STRENGTH_CAP * (s.STRENGTH_INIT_BASE + s.STRENGTH_INIT_SIGMA * nodes.sigma[i])
        assert nodes.strength[i] == pytest.approx(expect)
        assert nodes.resource[i] == 1.0
        assert nodes.strength_ts[i] == nodes.ts[i]
    assert mem.stats()["next_edges"] == 2
    assert "noise" in mem.messages("live:4")[0].flags


def test_salience_is_causal_and_matches_formula(mem: ak.Memory, tmp_path: Path) -> None:
    texts = ["今天天气不错", "今天天气很好", "我们去公园散步吧",
             "The quarterly revenue report shows a loss", "今天天气一般"]
    mem.ingest(write_jsonl(tmp_path / "a.jsonl", _records(texts)))
    rows = mem.store.vectors.read("messages").to_pydict()
    order = np.argsort(rows["ord"], kind="stable")
    vec = vectors_column(mem.store.vectors.read("messages"))[order].astype(np.float64)
    sigma = np.asarray(rows["sigma"])[order]
    assert sigma[0] == 0.0
    for i in range(1, len(texts)):
        c = vec[:i].sum(axis=0)
        cos = vec[i] @ c / np.linalg.norm(c)
        assert sigma[i] == pytest.approx(np.clip((1 - cos) * 2.0, 0, 1), abs=1e-9)
    # the unrelated English sentence stands out from the Chinese weather talk
    assert sigma[3] > sigma[1]
    # a second batch continues the same centroid (causal across batches)
    mem.ingest([{"role": "user", "content": "今天天气不错", "ts": 1_789_000_000}], session="b")
    all_vec = vec.sum(axis=0)
    new = mem.store.vectors.read("messages", where="session = 'b'").to_pydict()
    v = vectors_column(mem.store.vectors.read("messages", where="session = 'b'"))[0].astype(np.float64)
    expect = np.clip((1 - v @ all_vec / np.linalg.norm(all_vec)) * 2, 0, 1)
    assert new["sigma"][0] == pytest.approx(expect, abs=1e-9)


def test_reingest_is_a_noop(mem: ak.Memory, tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "a.jsonl", _records(["hello there friend", "hi!", "what now?"]))
    first = mem.ingest(path)
    before = mem.stats()
    second = mem.ingest(path)
    after = mem.stats()
    assert first.messages_added == 3 and second.messages_added == 0
    assert second.duplicates == 3
    for key in ("messages", "nodes", "sessions", "next_edges", "flags", "review_pending"):
        assert before[key] == after[key]
    assert mem.store.vectors.count("messages") == 3


def test_reingest_with_other_fields_is_reported_not_silently_dropped(mem: ak.Memory,
                                                                     tmp_path: Path) -> None:
    recs = _records(["hello there friend", "hi!", "what now?"])
    mem.ingest(write_jsonl(tmp_path / "a.jsonl", recs))
    digest = tree_digest(mem.path / "vectors")
    recs[0]["ts"] += 3600
    recs[1]["speaker"] = "Ann"
    recs[2]["meta"] = {"mood": "tired"}
    rep = mem.ingest(write_jsonl(tmp_path / "b.jsonl", recs))
    assert rep.messages_added == 0 and rep.duplicates == 0
    reasons = {s.where.rsplit(" ", 1)[-1]: s.reason for s in rep.skipped}
    assert "different time" in reasons["0"] and "different speaker" in reasons["1"]
    assert "different meta" in reasons["2"]
    assert all("stored message is kept" in r for r in reasons.values())
    assert tree_digest(mem.path / "vectors") == digest  # the stored messages stay as they were
    assert mem.messages("s1:0")[0].ts == 1_788_000_000


def test_exact_text_elsewhere_is_flagged_not_merged(mem: ak.Memory) -> None:
    mem.ingest([{"role": "user", "content": "buy oat milk"}], session="a")
    mem.ingest([{"role": "user", "content": "buy oat milk"}], session="b")
    m = mem.messages("b:0")[0]
    assert "duplicate" in m.flags and m.meta["dup_of"] == "a:0"
    assert mem.stats()["nodes"] == 2


def test_conflicting_text_refuses_batch(mem: ak.Memory, tmp_path: Path) -> None:
    mem.ingest(write_jsonl(tmp_path / "a.jsonl", _records(["original words"])))
    digest = tree_digest(mem.path / "vectors")
    changed = write_jsonl(tmp_path / "b.jsonl", _records(["edited words", "and more"]))
    with pytest.raises(ak.InvalidInput, match="already stored with different text"):
        mem.ingest(changed)
    assert tree_digest(mem.path / "vectors") == digest
    assert mem.messages("s1:0")[0].text == "original words"


BAD_LINES = {
    "malformed": ('{"session_id": "s", "ts": 1788000000, "role": "user", "text": "hi"', "malformed JSON"),
    "missing": ('{"session_id": "s", "role": "user", "text": "hi"}', "missing field 'ts'"),
    "seq_type": ('{"session_id": "s", "seq": "1", "ts": 1788000000, "role": "user", "text": "hi"}', "seq must be"),
    "text_type": ('{"session_id": "s", "ts": 1788000000, "role": "user", "text": 42}', "text must be a string"),
    "surrogate": ('{"session_id": "s", "ts": 1788000000, "role": "user", "text": "a\\ud800b"}', "lone surrogate"),
    "nul": ('{"session_id": "s", "ts": 1788000000, "role": "user", "text": "a\\u0000b"}', "NUL"),
    "bad_ts": ('{"session_id": "s", "ts": "yesterday", "role": "user", "text": "hi"}', "cannot parse timestamp"),
    "zero_ts": ('{"session_id": "s", "ts": 0, "role": "user", "text": "hi"}', "outside 1970"),
    "role": ('{"session_id": "s", "ts": 1788000000, "role": "wizard", "text": "hi"}', "unknown role"),
    "empty_text": ('{"session_id": "s", "ts": 1788000000, "role": "user", "text": "  "}', "text is empty"),
    "unknown_key": ('{"session_id": "s", "ts": 1788000000, "role": "user", "txt": "hi"}', "unknown field"),
    "not_object": ('["s", 1788000000, "user", "hi"]', "expected a JSON object"),
}


@pytest.mark.parametrize("kind", sorted(BAD_LINES))
def test_bad_input_is_refused_and_store_untouched(mem: ak.Memory, tmp_path: Path,
                                                  kind: str) -> None:
    good = '{"session_id": "ok", "ts": 1788000000, "role": "user", "text": "fine line"}'
    mem.ingest(write_jsonl(tmp_path / "seed.jsonl", [json.loads(good)]))
    before = tree_digest(mem.path / "vectors")
    stats = mem.stats()
    line, expect = BAD_LINES[kind]
    path = tmp_path / f"{kind}.jsonl"
    path.write_text(good.replace('"ok"', '"other"') + "\n" + line + "\n", "utf-8")
    with pytest.raises(ak.InvalidInput, match=expect) as err:
        mem.ingest(path)
    assert f"{path}:2" in str(err.value)
    assert tree_digest(mem.path / "vectors") == before
    assert mem.stats()["messages"] == stats["messages"]


@pytest.mark.parametrize(("content", "expect"), [
    (b"", "file is empty"),
    (b"\xff\xfe{ bad bytes", "invalid UTF-8"),
    (b"[" * 100_000, "nested too deeply|malformed JSON"),
    (b'{"foo": 1}', "cannot tell the format"),
])
def test_bad_files(mem: ak.Memory, tmp_path: Path, content: bytes, expect: str) -> None:
    path = tmp_path / "bad.json"
    path.write_bytes(content)
    with pytest.raises(ak.InvalidInput, match=expect):
        mem.ingest(path)
    assert mem.stats()["messages"] == 0


def test_empty_jsonl_and_bom(mem: ak.Memory, tmp_path: Path) -> None:
    empty = tmp_path / "e.jsonl"
    empty.write_text("\n\n", "utf-8")
    with pytest.raises(ak.InvalidInput, match="no messages"):
        mem.ingest(empty)
    bom = tmp_path / "bom.jsonl"
    bom.write_bytes(b"\xef\xbb\xbf" + json.dumps(
        {"session_id": "s", "ts": 1788000000, "role": "user", "text": "\ufeffkept"}).encode())
    mem.ingest(bom)
    assert mem.messages("s:0")[0].text == "\ufeffkept"  # a BOM inside the text stays


def test_model_mismatch_refused(store_path: Path, embedder: Any) -> None:
    with ak.open(store_path) as m:
        m.ingest([{"role": "user", "content": "hello"}], session="s")
    with pytest.raises(ak.ModelMismatch, match="all-MiniLM-L6-v2"):
        ak.open(store_path, ak.Settings(EMBED_MODEL="some-other-model"))

    class Tiny:
        name = "all-MiniLM-L6-v2+cjk256+gloss0.3"
        dim = 8

        def encode(self, texts: Any, *, batch_size: int = 64, progress: bool = False) -> Any:
            return np.ones((len(texts), 8), np.float32) / np.sqrt(8)

    with pytest.raises(ak.ModelMismatch, match="dim 8"):
        ak.open(store_path, embedder=Tiny())


def test_settings_recorded_and_kept(store_path: Path, embedder: Any) -> None:
    s = ak.Settings(EDGE_TAU=10 * 86400.0, USE_SALIENCE=False)
    with ak.open(store_path, s) as m:
        m.ingest([{"role": "user", "content": "first message here"}], session="s")
        assert m.node("s:0").strength == pytest.approx(2.1)  # salience off: base only
    with ak.open(store_path) as m:
        assert m.settings == s
    with pytest.raises(ak.InvalidSettings, match="EDGE_TAU"):
        ak.open(store_path, ak.Settings())
    manifest = json.loads((store_path / "akasha.json").read_text())
    assert manifest["settings"]["EDGE_TAU"] == 10 * 86400.0
    assert manifest["model"] == {"name": "all-MiniLM-L6-v2+cjk256+gloss0.3", "dim": 384 + 256}


def test_schema_version_recorded_and_newer_refused(store_path: Path, embedder: Any) -> None:
    with ak.open(store_path) as m:
        assert m.store.graph.meta_get("schema_version") == str(SCHEMA_VERSION)
        assert m.stats()["schema_version"] == SCHEMA_VERSION
        m.store.graph.meta_set("schema_version", str(SCHEMA_VERSION + 1))
    with pytest.raises(ak.SchemaMismatch, match="newer than this code"):
        ak.open(store_path)


def test_not_a_store(tmp_path: Path) -> None:
    (tmp_path / "x").mkdir()
    (tmp_path / "x" / "file.txt").write_text("hi")
    with pytest.raises(ak.StoreError, match="not an empty folder"):
        ak.open(tmp_path / "x")
    with pytest.raises(ak.StoreError, match="no memory store"):
        ak.open(tmp_path / "nothing", read_only=True)


@pytest.mark.slow
def test_cli_demo_builds_the_demo_and_logs_a_tour(tmp_path: Path) -> None:
    """`akasha demo STORE` ingests the bundled conversations, prints what it built, and
    logs a few example recalls (dry runs) once; running it again changes nothing."""
    from click.testing import CliRunner

    from akasha_explorer.cli import DEMO_TOUR, cli
    store = tmp_path / "demo"
    r = CliRunner().invoke(cli, ["demo", str(store), "--no-replay"])
    assert r.exit_code == 0, r.output
    assert "660 messages added" in r.output
    assert "342 nodes" in r.output and "88 sessions" in r.output
    assert f"logged {len(DEMO_TOUR)} example recalls" in r.output
    again = CliRunner().invoke(cli, ["demo", str(store), "--no-replay"])
    assert again.exit_code == 0, again.output
    assert "0 messages added" in again.output and "example recalls" not in again.output
    with ak.open(store, read_only=True) as mem:
        rows = mem.store.graph.rows("MATCH (q:QueryLog) RETURN q.query AS q, q.session AS s, "
                              "q.committed AS c ORDER BY q.ts")
        assert [r["q"] for r in rows] == list(DEMO_TOUR)
        assert {r["s"] for r in rows} == {"demo-tour"} and not any(r["c"] for r in rows)
        assert mem.stats()["edges"] == 0  # dry runs: nothing written back


@pytest.mark.parametrize("ts", [253_402_300_800.0, -1e9, float("nan"), 0.0])
def test_one_time_check_for_every_way_in(mem: ak.Memory, ts: float) -> None:
    """The range check of file importers holds for messages built in Python too: a
    RawMessage list, ``add_turn`` and a plain message list with a start time."""
    from akasha_explorer.ingest.importers import read_messages
    from akasha_explorer.model import RawMessage

    with pytest.raises(ak.InvalidInput, match=r"outside 1970-01-01 \.\. 2200-01-01"):
        mem.ingest([RawMessage("s", 0, ts, "user", "hello there")])
    with pytest.raises(ak.InvalidInput, match="outside 1970-01-01"):
        mem.add_turn("hello there", "hi", session="s", ts=ts)
    with pytest.raises(ak.InvalidInput, match="outside 1970-01-01"):
        read_messages([{"role": "user", "content": "hi"}], session="s", start_ts=ts)
    assert mem.stats()["messages"] == 0


def test_raw_messages_get_every_field_check(mem: ak.Memory) -> None:
    from akasha_explorer.model import RawMessage

    for bad, match in [(RawMessage("s\x1b]0;x\x07", 0, 1.8e9, "user", "hi"), "session_id"),
                       (RawMessage("s", 0, 1.8e9, "wizard", "hi"), "unknown role"),
                       (RawMessage("s", -1, 1.8e9, "user", "hi"), "seq must be"),
                       (RawMessage("s", 0, 1.8e9, "user", "a\x00b"), "NUL")]:
        with pytest.raises(ak.InvalidInput, match=match):
            mem.ingest([bad])
    assert mem.stats()["messages"] == 0
