"""Conversation files as agents and chat apps keep them, made by the real packages (or in
the documented export format): for the importer tests and the bad-input corpus."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

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


def langgraph_run(path: Path, agent: Callable[[Any], dict[str, Any]],
                  inputs: list[list[Any]], thread: str = "thread-1") -> Path:
    """A LangGraph ``SqliteSaver`` database at ``path``: a real one-node graph (``agent``)
    run once per list of input messages, on one thread."""
    from langgraph.checkpoint.sqlite import SqliteSaver
    from langgraph.graph import END, START, MessagesState, StateGraph

    graph = StateGraph(MessagesState)
    graph.add_node("agent", agent)
    graph.add_edge(START, "agent")
    graph.add_edge("agent", END)
    conn = sqlite3.connect(path, check_same_thread=False)
    try:
        app = graph.compile(checkpointer=SqliteSaver(conn))
        for messages in inputs:
            app.invoke({"messages": messages}, {"configurable": {"thread_id": thread}})
    finally:
        conn.close()
    return path


def langgraph_db(path: Path, turns: list[tuple[str, str]], thread: str = "thread-1") -> Path:
    """A LangGraph checkpoint database holding ``turns`` of one thread (a fake chat model
    answering)."""
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage, HumanMessage

    model = GenericFakeChatModel(messages=iter([AIMessage(a) for _, a in turns]))
    return langgraph_run(path, lambda state: {"messages": [model.invoke(state["messages"])]},
                         [[HumanMessage(u)] for u, _ in turns], thread)


def langgraph_tool_db(path: Path) -> Path:
    """A LangGraph thread holding a system message, a tool call without text and its tool
    message around one exchange."""
    from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

    def agent(state: Any) -> dict[str, Any]:
        return {"messages": [
            AIMessage("", tool_calls=[{"name": "f", "args": {}, "id": "call-1"}]),
            ToolMessage("ok", tool_call_id="call-1"), AIMessage("hi, how are you?")]}

    return langgraph_run(path, agent, [[SystemMessage("be brief"), HumanMessage("hello there")]],
                         "t")


def langgraph_checkpoint_db(path: Path, messages: list[Any], thread: str = "t") -> Path:
    """A LangGraph checkpoint database holding one checkpoint whose ``messages`` channel is
    ``messages`` as given (written by the real ``SqliteSaver``, no graph reducing them)."""
    from langgraph.checkpoint.base import empty_checkpoint
    from langgraph.checkpoint.sqlite import SqliteSaver

    conn = sqlite3.connect(path, check_same_thread=False)
    try:
        checkpoint = empty_checkpoint()
        checkpoint["channel_values"] = {"messages": messages}
        SqliteSaver(conn).put({"configurable": {"thread_id": thread, "checkpoint_ns": ""}},
                              checkpoint, {"source": "input", "step": -1, "parents": {}}, {})
    finally:
        conn.close()
    return path


def agents_db(path: Path, items: list[dict[str, Any]], session: str = "chat-1") -> Path:
    """An Agents SDK ``SQLiteSession`` database holding ``items``, written by the SDK."""
    from agents import SQLiteSession

    async def write() -> None:
        s = SQLiteSession(session, str(path))
        await s.add_items(items)
        s.close()

    asyncio.run(write())
    return path


def output_message(text: str, mid: str = "msg_1") -> dict[str, Any]:
    return {"id": mid, "type": "message", "role": "assistant", "status": "completed",
            "content": [{"type": "output_text", "text": text, "annotations": []}]}
