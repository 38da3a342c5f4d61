"""The conversations agents already keep, ingested with ``--format auto`` and recalled: a
Claude.ai export (the documented ``conversations.json``), a LangGraph checkpoint database
and an Agents-SDK session database, each made by the real package. Raw messages are
stored verbatim; what is not a user's or an assistant's text is left out and reported."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import akasha_explorer as ak
from akasha_explorer.cli import cli
from akasha_explorer.ingest.importers import load

FACT = "The spare key to the garden shed hangs behind the barometer."
REPLY = "Got it: the shed key is behind the barometer."


def claude_export(folder: Path, conversations: list[dict[str, Any]] | None = None) -> Path:
    """A ``conversations.json`` as the Claude.ai export writes it (one conversation with
    a thinking block and a tool use beside the text, unless ``conversations`` are given)."""
    folder.mkdir(parents=True, exist_ok=True)
    conv = {
        "uuid": "5b0e3d2a-0000-4000-8000-00000000c1a0", "name": "Garden shed",
        "summary": "", "created_at": "2026-05-01T09:00:00.000000Z",
        "updated_at": "2026-05-01T09:01:00.000000Z", "account": {"uuid": "acct-1"},
        "chat_messages": [
            {"uuid": "msg-1", "text": FACT, "sender": "human",
             "content": [{"type": "text", "text": FACT, "citations": [],
                          "start_timestamp": "2026-05-01T09:00:00.000000Z",
                          "stop_timestamp": "2026-05-01T09:00:00.000000Z"}],
             "created_at": "2026-05-01T09:00:00.000000Z",
             "updated_at": "2026-05-01T09:00:00.000000Z", "attachments": [], "files": []},
            {"uuid": "msg-2", "text": REPLY, "sender": "assistant",
             "content": [{"type": "thinking", "thinking": "a key, a barometer"},
                         {"type": "tool_use", "name": "note", "input": {"k": "v"}},
                         {"type": "text", "text": REPLY, "citations": []}],
             "created_at": "2026-05-01T09:00:07.000000Z",
             "updated_at": "2026-05-01T09:00:07.000000Z", "attachments": [], "files": []}]}
    path = folder / "conversations.json"
    path.write_text(json.dumps(conversations if conversations is not None else [conv]),
                    "utf-8")
    return path


def langgraph_db(path: Path, turns: list[tuple[str, str]], thread: str = "thread-1") -> Path:
    """A LangGraph ``SqliteSaver`` database holding ``turns`` of one thread, written by a
    real graph (a fake chat model answering)."""
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage, HumanMessage
    from langgraph.checkpoint.sqlite import SqliteSaver
    from langgraph.graph import END, START, MessagesState, StateGraph

    model = GenericFakeChatModel(messages=iter([AIMessage(a) for _, a in turns]))

    def agent(state: MessagesState) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    graph = StateGraph(MessagesState)
    graph.add_node("agent", agent)
    graph.add_edge(START, "agent")
    graph.add_edge("agent", END)
    conn = sqlite3.connect(path, check_same_thread=False)
    try:
        app = graph.compile(checkpointer=SqliteSaver(conn))
        for user, _ in turns:
            app.invoke({"messages": [HumanMessage(user)]},
                       {"configurable": {"thread_id": thread}})
    finally:
        conn.close()
    return path


def agents_db(path: Path, items: list[dict[str, Any]], session: str = "chat-1") -> Path:
    """An Agents SDK ``SQLiteSession`` database holding ``items``, written by the SDK."""
    from agents import SQLiteSession

    async def write() -> None:
        s = SQLiteSession(session, str(path))
        await s.add_items(items)  # type: ignore[arg-type]
        s.close()

    asyncio.run(write())
    return path


def output_message(text: str, mid: str = "msg_1") -> dict[str, Any]:
    return {"id": mid, "type": "message", "role": "assistant", "status": "completed",
            "content": [{"type": "output_text", "text": text, "annotations": []}]}


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
