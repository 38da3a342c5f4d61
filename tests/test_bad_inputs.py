"""The bad-input corpus (``tests/bad_inputs/manifest.json``, written by ``make_corpus.py``):
every entry gets a clear error naming the file and line / record, or is ingested (and
flagged where a gate fires) and stored verbatim — never a crash, never a hang (each entry
runs under a 120 s alarm).

A setting ``migrate`` refuses (``migrate`` entries: out of range, wrong type, a rule between
two settings broken) is one line naming the setting and its range, through ``Memory.migrate``
and ``akasha migrate``, and nothing is written.

A refused batch leaves the store unchanged: the LanceDB folder, the journal and the
manifest byte-identical, and Kuzu *logically* identical — a dump of every table equal.
Kuzu rewrites a few header bytes of ``graph.kuzu`` on every read-write open and close even
when nothing changed, so its file is compared by content, not by bytes. Through the CLI an
input the importer refuses never even creates the store folder.
"""

from __future__ import annotations

import json
import os
import re
import signal
import unicodedata
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import akasha_explorer as ak
from akasha_explorer.cli import cli
from akasha_explorer.config import parse_setting
from akasha_explorer.errors import AkashaError, InvalidInput, InvalidSettings

from .reliability import files_digest, kuzu_dump

CORPUS = Path(__file__).resolve().parent / "bad_inputs"
MANIFEST = json.loads((CORPUS / "manifest.json").read_text("utf-8"))["entries"]
FILES = [e for e in MANIFEST if "file" in e or "generate" in e]
ERRORS = [e for e in FILES if e["expect"] == "error"]
ACCEPTED = [e for e in FILES if e["expect"] != "error"]
EXPORTS = [e for e in MANIFEST if "export" in e]
MIGRATES = [e for e in MANIFEST if "migrate" in e]


def _id(e: dict[str, Any]) -> str:
    got = str(e.get("file") or e.get("generate") or e.get("export") or e.get("migrate"))
    return got if len(got) <= 40 else got[:37] + "..."


@contextmanager
def _deadline(seconds: int) -> Iterator[None]:
    """Fail (instead of hanging the suite) when the block runs longer than ``seconds``."""
    def hang(*_: object) -> None:
        raise TimeoutError(f"still running after {seconds}s: a hang")

    old = signal.signal(signal.SIGALRM, hang)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def _generate(entry: dict[str, Any], folder: Path) -> Path:
    name = entry["generate"]
    if name == "ten_mb_message":
        p = folder / "ten_mb.jsonl"
        text = "memory " * (10 * 2**20 // 7)
        p.write_text(json.dumps({"session_id": "big", "ts": 1_780_000_000, "role": "user",
                                 "text": text}) + "\n", "utf-8")
    elif name == "million_messages":
        p = folder / "million.jsonl"
        with open(p, "w", encoding="utf-8") as fh:
            for i in range(1_000_000):
                fh.write(f'{{"session_id":"m{i // 100}","ts":{1_780_000_000 + i},'
                         f'"role":"user","text":"message {i}"}}\n')
    elif name == "fifo":
        p = folder / "pipe.jsonl"
        os.mkfifo(p)
    else:
        p = _chat_file(name, folder)
    return p


def _chat_file(name: str, folder: Path) -> Path:
    """A database an agent framework keeps, written by the real package (``tests/chat_files.py``)."""
    from .chat_files import (
        agents_db,
        langgraph_checkpoint_db,
        langgraph_db,
        langgraph_tool_db,
        output_message,
    )

    p = folder / f"{name}.sqlite"
    hello = {"role": "user", "content": "hello there"}
    if name.endswith("_truncated"):
        whole = folder / "whole.sqlite"
        if name.startswith("langgraph"):
            langgraph_db(whole, [("hello there", "hi, how are you?")] * 3)
        else:
            agents_db(whole, [hello, output_message("hi, how are you?")] * 3)
        data = whole.read_bytes()
        p.write_bytes(data[: len(data) // 2])
    elif name == "agents_duplicate_ids":
        agents_db(p, [output_message("hi, how are you?", "msg_1"),
                      output_message("something else", "msg_1")])
    elif name == "agents_only_tool_items":
        agents_db(p, [{"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"},
                      {"type": "function_call_output", "call_id": "c1", "output": "ok"}])
    elif name == "agents_unknown_items":
        agents_db(p, [hello, {"type": "mystery_item", "payload": 1},
                      {"type": "reasoning", "id": "rs_1", "summary": []},
                      {"role": "assistant", "content": ""},
                      output_message("hi, how are you?")])
    elif name == "langgraph_duplicate_ids":
        from langchain_core.messages import AIMessage, HumanMessage
        langgraph_checkpoint_db(p, [HumanMessage("hello there", id="m-1"),
                                    AIMessage("hi, how are you?", id="m-2"),
                                    HumanMessage("something else", id="m-1")])
    elif name == "langgraph_tool_and_system":
        langgraph_tool_db(p)
    else:
        raise AssertionError(name)
    return p


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> Iterator[ak.Memory]:
    """A small store kept open for the whole module (so Kuzu is never reopened)."""
    mem = ak.open(tmp_path_factory.mktemp("bad") / "store")
    mem.ingest(CORPUS / "_base.jsonl", progress=False)
    mem.checkpoint()
    yield mem
    mem.close()


def _state(mem: ak.Memory) -> tuple[dict[str, str], dict[str, Any]]:
    return files_digest(mem.path), kuzu_dump(mem.store.graph, skip_meta=())


def test_corpus_is_big_enough() -> None:
    kinds = {e["kind"] for e in MANIFEST}
    assert len(kinds) >= 40
    for e in FILES:
        if "file" in e:
            assert (CORPUS / e["file"]).is_file(), e["file"]


@pytest.mark.parametrize("entry", [
    pytest.param(e, marks=pytest.mark.slow) if e.get("generate") == "million_messages" else e
    for e in ERRORS], ids=_id)
def test_refused_with_a_clear_error_and_the_store_unchanged(
        entry: dict[str, Any], base: ak.Memory, tmp_path: Path) -> None:
    path = CORPUS / entry["file"] if "file" in entry else _generate(entry, tmp_path)
    before = _state(base)
    stats = base.stats()
    with _deadline(120), pytest.raises(InvalidInput) as e:
        base.ingest(path, progress=False)
    msg = str(e.value)
    assert re.search(entry["match"], msg), msg
    assert entry["where"] in msg, msg
    assert path.name in msg or (entry["stage"] == "pipeline" and "session" in msg), msg
    assert "\n" not in msg
    assert _state(base) == before  # Lance, journal, manifest bytes; Kuzu content
    assert base.stats() == stats
    assert base.doctor().clean


@pytest.mark.parametrize("entry", [e for e in ERRORS if e["stage"] == "import"], ids=_id)
def test_cli_refuses_before_touching_the_store(entry: dict[str, Any], tmp_path: Path) -> None:
    path = CORPUS / entry["file"] if "file" in entry else _generate(entry, tmp_path)
    store = tmp_path / "never-created"
    with _deadline(120):
        r = CliRunner().invoke(cli, ["ingest", str(store), str(path)])
    assert r.exit_code == 1, r.output
    assert isinstance(r.exception, SystemExit)
    lines = r.output.strip().splitlines()
    assert len(lines) == 1, r.output
    assert lines[0].startswith("Error: ")
    assert re.search(entry["match"], lines[0])
    assert not store.exists()


def _records(path: Path) -> list[Any]:
    text = path.read_text("utf-8-sig")
    if path.suffix == ".jsonl":
        return [json.loads(x) for x in text.split("\n") if x.strip()]
    return json.loads(text)


@pytest.mark.parametrize("entry", ACCEPTED, ids=_id)
def test_accepted_inputs_are_stored_verbatim(entry: dict[str, Any], tmp_path: Path,
                                             embedder: Any) -> None:
    path = CORPUS / entry["file"] if "file" in entry else _generate(entry, tmp_path)
    with ak.open(tmp_path / "s") as mem:
        if entry.get("base"):  # the entry is ingested into a store holding _base.jsonl
            mem.ingest(CORPUS / "_base.jsonl", progress=False)
        rep = mem.ingest(path, progress=False)
        assert rep.messages_added == entry["messages"]
        assert len(rep.skipped) == entry.get("skipped", 0)
        stored = [m for n in mem.store.mirror.nodes.uid for m in mem.messages(n)]
        texts = sorted(m.text for m in stored)
        if path.suffix == ".jsonl":
            assert texts == sorted(r["text"] for r in _records(path))
        assert all(m.verified for m in stored)
        for m in stored:
            want = set(entry.get("flags", ()))
            assert want <= set(m.flags), (m.text, m.flags)
        assert mem.doctor().clean
        if path.name.startswith("csv_injection"):
            _csv_is_formula_safe(mem, tmp_path, texts)


def _csv_is_formula_safe(mem: ak.Memory, tmp_path: Path, texts: list[str]) -> None:
    """The stored text stays as it is; the CSV export defuses it for spreadsheets."""
    import csv

    for k, t in enumerate(texts):  # a few edges, so the view has rows
        tr = mem.recall(t, now=mem.last_ts() + 60 + k)
        mem.commit(tr, mem.store.mirror.nodes.uid[0])
    folder = mem.export(tmp_path / "csv", format="csv")
    with open(folder / "nodes.csv", encoding="utf-8", newline="") as fh:
        cells = [c for row in csv.reader(fh) for c in row]
    # what a spreadsheet would run: = + @ - first, after leading whitespace, in any width
    live = [c for c in cells if not c.startswith("'") and (
        c[:1] in ("\t", "\r", "\n")
        or unicodedata.normalize("NFKC", c.lstrip()[:1]) in ("=", "+", "@", "-"))
        and not _is_number(c)]
    assert live == []
    assert [c for c in cells if c.startswith("'") and "cmd|" in c]
    assert texts == sorted(m.text for n in mem.store.mirror.nodes.uid for m in mem.messages(n))


def _is_number(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return True


@pytest.mark.parametrize("entry", EXPORTS, ids=_id)
def test_export_paths(entry: dict[str, Any], demo_store: Path, tmp_path: Path) -> None:
    """An export never lands inside the store (``--out STORE/graph.kuzu`` would overwrite
    the graph); bad paths are one-line errors; a path with ``..`` outside the store is
    written where it resolves (the user's path, as for any command-line tool)."""
    cwd = tmp_path / "a" / "b"
    cwd.mkdir(parents=True)
    out = entry["export"].format(store=demo_store, tmp=tmp_path, name=demo_store.name)
    fmt = "csv" if out.endswith("vectors") else "html"
    before = files_digest(demo_store, ("vectors", "journal.jsonl", "akasha.json",
                                       "graph.kuzu"))
    old = Path.cwd()
    os.chdir(cwd)
    try:
        r = CliRunner().invoke(cli, ["export", str(demo_store), "--format", fmt, "--out", out])
    finally:
        os.chdir(old)
    assert files_digest(demo_store, ("vectors", "journal.jsonl", "akasha.json",
                                     "graph.kuzu")) == before
    if entry["expect"] == "error":
        assert r.exit_code == 1, r.output
        assert isinstance(r.exception, SystemExit), r.exception
        assert re.search(entry["match"], r.output), r.output
    else:
        assert r.exit_code == 0, r.output
        assert (tmp_path / "x.html").is_file()


def test_import_refuses_an_export_naming_files_outside_itself(demo_store: Path,
                                                              tmp_path: Path) -> None:
    from akasha_explorer.export.store import import_store

    with ak.open(demo_store) as mem:
        exp = mem.export(tmp_path / "exp", format="store")
    with pytest.raises(InvalidInput, match="inside the memory store"):
        import_store(exp, demo_store / "inner")  # a store inside a store
    assert not (demo_store / "inner").exists()
    head = json.loads((exp / "export.json").read_text("utf-8"))
    head["files"]["../../../etc/hostname"] = "0" * 64
    (exp / "export.json").write_text(json.dumps(head), "utf-8")
    with pytest.raises(AkashaError, match="names a file outside itself"):
        import_store(exp, tmp_path / "new")
    assert not (tmp_path / "new").exists()


@pytest.mark.parametrize("now", ["nan", "inf", "-inf", "1e400", "1e300", "-5", "soon"])
def test_a_bad_now_is_a_clear_error(now: str, demo_store: Path) -> None:
    r = CliRunner().invoke(cli, ["recall", str(demo_store), "阿岚", f"--now={now}"])
    assert r.exit_code == 1, r.output
    assert isinstance(r.exception, SystemExit), r.exception
    assert "--now" in r.output
    with ak.open(demo_store, read_only=True) as mem, pytest.raises(InvalidInput):
        mem.recall("阿岚", now=float(now) if now != "soon" else float("nan"))



@pytest.fixture(scope="module")
def closed_store(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> Path:
    """A small store, closed, for the command line to open."""
    path = tmp_path_factory.mktemp("bad-cli") / "store"
    with ak.open(path) as mem:
        mem.ingest(CORPUS / "_base.jsonl", progress=False)
    return path


def _migrate_value(entry: dict[str, Any]) -> tuple[str, Any]:
    name, _, text = entry["migrate"].partition("=")
    return name, entry["value"] if "value" in entry else parse_setting(name, text)


@pytest.mark.parametrize("entry", MIGRATES, ids=_id)
def test_migrate_refuses_a_bad_setting_and_writes_nothing(entry: dict[str, Any],
                                                          base: ak.Memory) -> None:
    before, settings = _state(base), base.settings
    name, value = _migrate_value(entry)
    with pytest.raises(InvalidSettings) as e:
        base.migrate("v2", **{name: value})
    msg = str(e.value)
    assert "\n" not in msg and re.search(entry["match"], msg), msg
    assert _state(base) == before and base.settings == settings  # akasha.json unchanged
    t = base.recall("hello there", now=base.last_ts() + 60, log=False)
    assert t.to_json()  # no NaN anywhere in the trace


@pytest.mark.parametrize("entry", MIGRATES, ids=_id)
def test_cli_migrate_refuses_a_bad_setting_in_one_line(entry: dict[str, Any],
                                                       closed_store: Path) -> None:
    before = files_digest(closed_store)
    r = CliRunner().invoke(cli, ["migrate", str(closed_store), "--profile", "v2",
                                 entry["migrate"]])
    assert r.exit_code == 1, r.output
    assert isinstance(r.exception, SystemExit), r.exception
    lines = r.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), r.output
    assert re.search(entry["match"], lines[0].removeprefix("Error: ")), lines[0]
    assert files_digest(closed_store) == before
