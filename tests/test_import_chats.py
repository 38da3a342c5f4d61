"""The conversations agents already keep, ingested with ``--format auto`` and recalled: a
Claude.ai export (the documented ``conversations.json``), a LangGraph checkpoint database
and an Agents-SDK session database, each made by the real package. Raw messages are
stored verbatim; what is not a user's or an assistant's text is left out and reported."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import akasha_explorer as ak
from akasha_explorer.cli import cli
from akasha_explorer.ingest.importers import load

from .chat_files import FACT, REPLY, agents_db, claude_export, langgraph_db, output_message


def _ingest_and_recall(store: Path, source: Path, fmt: str) -> list[str]:
    r = CliRunner().invoke(cli, ["ingest", str(store), str(source)])
    assert r.exit_code == 0, r.output
    with ak.open(store, read_only=True) as mem:
        trace = mem.recall("where is the key to the garden shed?")
        block = trace.context()
        assert "barometer" in block.text
        texts = [m.text for n in mem.store.mirror.nodes.uid for m in mem.messages(n)]
        assert all(m.source == source.name for n in mem.store.mirror.nodes.uid
                   for m in mem.messages(n))
    assert load(source).format == fmt
    return texts


def test_claude_export(tmp_path: Path, embedder: Any) -> None:
    path = claude_export(tmp_path / "export")
    imp = load(path)
    assert [(m.role, m.text, m.ext_id) for m in imp.messages] == [
        ("user", FACT, "msg-1"), ("assistant", REPLY, "msg-2")]
    assert [s.reason for s in imp.skipped] == [
        "2 block(s) that are not text left out (thinking, tool_use)"]
    assert imp.messages[0].meta == {"title": "Garden shed"}
    assert _ingest_and_recall(tmp_path / "store", path, "claude") == [FACT, REPLY]


def test_langgraph_checkpoints(tmp_path: Path, embedder: Any) -> None:
    path = langgraph_db(tmp_path / "checkpoints.sqlite",
                        [(FACT, REPLY), ("And the bike pump?", "In the hallway cupboard.")])
    imp = load(path)
    assert [(m.session, m.role, m.text) for m in imp.messages] == [
        ("thread-1", "user", FACT), ("thread-1", "assistant", REPLY),
        ("thread-1", "user", "And the bike pump?"),
        ("thread-1", "assistant", "In the hallway cupboard.")]
    ts = [m.ts for m in imp.messages]
    assert ts == sorted(ts) and ts[0] < ts[-1]
    assert _ingest_and_recall(tmp_path / "store", path, "langgraph")[:2] == [FACT, REPLY]


def test_agents_sdk_session(tmp_path: Path, embedder: Any) -> None:
    path = agents_db(tmp_path / "agents.db", [
        {"role": "user", "content": FACT},
        {"type": "function_call", "call_id": "c1", "name": "lookup", "arguments": "{}",
         "id": "fc_1", "status": "completed"},
        {"type": "function_call_output", "call_id": "c1", "output": "ok"},
        output_message(REPLY)])
    imp = load(path)
    assert [(m.session, m.role, m.text) for m in imp.messages] == [
        ("chat-1", "user", FACT), ("chat-1", "assistant", REPLY)]
    assert len(imp.skipped) == 2
    assert _ingest_and_recall(tmp_path / "store", path, "agents-sdk") == [FACT, REPLY]


def test_the_session_adapter_and_the_importer_read_one_item_alike(tmp_path: Path) -> None:
    """What ``AkashaSession`` stores of an item is what the importer reads of it."""
    from akasha_explorer.ingest.chats import agents_item_text

    assert agents_item_text(output_message(REPLY)) == ("assistant", REPLY)
    assert agents_item_text({"role": "system", "content": "be brief"}) is None


@pytest.mark.parametrize("fmt", ["langgraph", "agents-sdk"])
def test_a_database_of_the_other_kind_or_no_database(fmt: str, tmp_path: Path) -> None:
    path = claude_export(tmp_path / "export")
    with pytest.raises(ak.InvalidInput, match="not a SQLite database"):
        load(path, format=fmt)


def test_the_importers_need_no_framework(tmp_path: Path) -> None:
    """With every agent framework unimportable, ``import akasha_explorer`` and the CLI
    work, and a LangGraph and an Agents-SDK database still import (the importers read
    SQLite and msgpack themselves)."""
    import subprocess
    import sys

    lg = langgraph_db(tmp_path / "lg.sqlite", [(FACT, REPLY)])
    oa = agents_db(tmp_path / "oa.sqlite", [{"role": "user", "content": FACT}])
    script = (
        "import sys\n"
        "for name in ('langgraph', 'langchain_core', 'agents', 'openai', 'llama_index',\n"
        "             'pydantic_ai', 'ormsgpack', 'msgpack'):\n"
        "    sys.modules[name] = None\n"
        "import akasha_explorer, akasha_explorer.cli\n"
        "from akasha_explorer.ingest.importers import load\n"
        f"print(load({str(lg)!r}).messages[0].text == {FACT!r},"
        f" load({str(oa)!r}).messages[0].text == {FACT!r})\n")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=300, check=False)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["True", "True"]
