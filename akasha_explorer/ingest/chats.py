"""Importers for the conversations agents and chat apps already keep (``format="auto"``
tells each apart, see :func:`~.importers.load`):

- ``claude`` — the Claude.ai export's ``conversations.json``: a list of conversations
  (``uuid``, ``name``, ``chat_messages``), each message with ``uuid``, ``sender``
  (``human`` / ``assistant``), ``created_at``, and its ``content`` blocks (``text``,
  ``thinking``, ``tool_use``, ``tool_result``…) or, in older exports, only ``text``.
- ``langgraph`` — a LangGraph SQLite checkpointer's database (``SqliteSaver`` /
  ``AsyncSqliteSaver``): per thread, the ``messages`` channel of its newest checkpoint
  (root namespace), each message timed by the first checkpoint that holds it.
- ``agents-sdk`` — the OpenAI Agents SDK's ``SQLiteSession`` database: per session, its
  items in order, timed by their row's ``created_at``.

Each conversation is one session; a user and an assistant message with text are stored
verbatim (the text exactly as the source holds it: one text block as it is, several
joined by a blank line); everything else — system and tool messages, tool calls, thinking,
non-text blocks, messages without text — is left out and reported (:class:`Skipped`). A
message id given twice in one conversation is stored once when both copies say the same,
and refused when they differ.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from ..errors import InvalidInput
from ..model import RawMessage, Skipped
from . import msgpack
from .validate import check_conversations, check_meta, check_session, check_text, parse_ts

__all__ = ["SQLITE_HEADER", "Read", "agents_item_text", "read_agents_sdk", "read_claude",
           "read_langgraph", "sniff_sqlite"]

SQLITE_HEADER = b"SQLite format 3\x00"
"""The first 16 bytes of every SQLite database file."""

Read = tuple[list[RawMessage], list[Skipped]]
"""What a reader returns: the messages and what it left out (``importers`` makes the
:class:`~.importers.Imported`)."""

CLAUDE_ROLES = {"human": "user", "assistant": "assistant"}
LANGCHAIN_ROLES = {"human": "user", "ai": "assistant", "HumanMessage": "user",
                   "AIMessage": "assistant"}


class _Session:
    """The messages of one conversation as they are read: seq, time order, ids."""

    def __init__(self, session: str, source: str, where: str,
                 skipped: list[Skipped]) -> None:
        self.session = check_session(session, where)
        self.source, self.where, self.skipped = source, where, skipped
        self.out: list[RawMessage] = []
        self.ids: dict[str, str] = {}
        self.last_ts: float | None = None

    def add(self, role: str, text: str, ts: float, ext_id: str | None, where: str,
            meta: dict[str, Any] | None = None) -> None:
        if ext_id is not None:
            seen = self.ids.get(ext_id)
            if seen is not None:
                if seen != text:
                    raise InvalidInput(f"message id {ext_id[:60]!r} appears twice in the "
                                       "conversation with different text; fix the source",
                                       where=where)
                self.skipped.append(Skipped(where, f"message id {ext_id[:60]!r} given twice "
                                                   "with the same text: stored once"))
                return
            self.ids[ext_id] = text
        if self.last_ts is not None and ts < self.last_ts:
            ts = self.last_ts  # sources go back a few ms at times; keep the dialogue order
        self.last_ts = ts
        self.out.append(RawMessage(session=self.session, seq=len(self.out), ts=ts, role=role,
                                   text=check_text(text, where), source=self.source,
                                   ext_id=ext_id,
                                   meta=check_meta(meta or {}, where)))


def _joined(texts: list[str]) -> str:
    return texts[0] if len(texts) == 1 else "\n\n".join(texts)


def _blocks(content: Any, text_types: tuple[str, ...], where: str,
            skipped: list[Skipped]) -> str | None:
    """The text of a message's content — a string, or a list of blocks of which the
    ``text_types`` ones count (the others are reported); None when it has no text."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        raise InvalidInput(f"content must be text or a list of blocks, got "
                           f"{type(content).__name__}", where=where)
    texts, other = [], []
    for block in content:
        if isinstance(block, str):
            texts.append(block)
        elif isinstance(block, dict) and block.get("type") in text_types \
                and isinstance(block.get("text"), str):
            texts.append(block["text"])
        else:
            other.append(str(block.get("type", "?")) if isinstance(block, dict)
                         else type(block).__name__)
    if other:
        skipped.append(Skipped(where, f"{len(other)} block(s) that are not text left out "
                                      f"({', '.join(sorted(set(other)))[:120]})"))
    return _joined(texts) if texts else None


# -- Claude.ai export ------------------------------------------------------------------------
def read_claude(data: Any, *, source: str = "claude") -> Read:
    """The Claude.ai export's ``conversations.json`` (see the module docstring)."""
    out: list[RawMessage] = []
    skipped: list[Skipped] = []
    for i, where, conv in check_conversations(data, source, "chat_messages", list,
                                              "'chat_messages' list"):
        sess = _Session(str(conv.get("uuid") or f"claude-{i}"), source, where, skipped)
        for j, msg in enumerate(conv["chat_messages"]):
            mw = f"{where} message {j}"
            if not isinstance(msg, dict):
                raise InvalidInput("message must be an object", where=mw)
            role = CLAUDE_ROLES.get(str(msg.get("sender")))
            if role is None:
                skipped.append(Skipped(mw, f"sender {msg.get('sender')!r} is not part of the "
                                           "dialogue"))
                continue
            content = msg.get("content")
            text = _blocks(content, ("text",), mw, skipped) if content else msg.get("text")
            if not isinstance(text, str) or not text.strip():
                skipped.append(Skipped(mw, "no text"))
                continue
            raw_ts = msg.get("created_at") or conv.get("created_at")
            if raw_ts is None:
                raise InvalidInput("message has no created_at and neither has its "
                                   "conversation", where=mw)
            uid = msg.get("uuid")
            sess.add(role, text, parse_ts(raw_ts, mw), None if uid is None else str(uid), mw,
                     {"title": conv.get("name")} if not sess.out else None)
        if not sess.out:
            skipped.append(Skipped(where, "no user or assistant message with text: the "
                                          "conversation is left out"))
        out.extend(sess.out)
    if not out:
        raise InvalidInput("no user or assistant messages found", where=source)
    return out, skipped


# -- SQLite databases ------------------------------------------------------------------------
def _connect(path: Path) -> sqlite3.Connection:
    """The database read-only (nothing of it is ever written, no journal left behind)."""
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.Error as e:
        raise InvalidInput(f"cannot read the SQLite database: {e}", where=str(path)) from None
    return conn


def sniff_sqlite(path: Path) -> str:
    """``langgraph`` or ``agents-sdk``, by the tables of the database at ``path``."""
    tables = {r[0] for r in _select(path, "SELECT name FROM sqlite_master "
                                          "WHERE type = 'table'")}
    if {"checkpoints", "writes"} <= tables:
        return "langgraph"
    if "agent_messages" in tables:
        return "agents-sdk"
    raise InvalidInput(f"a SQLite database that is neither a LangGraph checkpointer's nor an "
                       f"Agents SDK session's (tables: {', '.join(sorted(tables))[:200]})",
                       where=str(path))


def _select(path: Path, sql: str) -> list[tuple[Any, ...]]:
    """The rows ``sql`` selects from the database at ``path`` (opened read-only)."""
    conn = _connect(path)
    try:
        return conn.execute(sql).fetchall()
    except sqlite3.Error as e:
        raise InvalidInput(f"cannot read the SQLite database: {e}", where=str(path)) from None
    finally:
        conn.close()


def agents_item_text(item: Any) -> tuple[str, str] | None:
    """``(role, text)`` of an Agents SDK item that is a user or assistant message with
    text (content a string, or ``input_text`` / ``output_text`` parts); None otherwise.

    >>> agents_item_text({"role": "user", "content": "hi"})
    ('user', 'hi')
    >>> agents_item_text({"type": "function_call", "name": "f", "arguments": "{}"}) is None
    True
    """
    if not isinstance(item, dict) or item.get("role") not in ("user", "assistant") \
            or item.get("type", "message") != "message":
        return None
    content = item.get("content")
    if isinstance(content, str):
        return str(item["role"]), content
    if isinstance(content, list) and content and all(
            isinstance(c, dict) and c.get("type") in ("input_text", "output_text")
            and isinstance(c.get("text"), str) for c in content):
        return str(item["role"]), "".join(c["text"] for c in content)
    return None


def read_agents_sdk(path: Path) -> Read:
    """An Agents SDK ``SQLiteSession`` database (see the module docstring)."""
    rows = _select(path, "SELECT id, session_id, message_data, created_at "
                         "FROM agent_messages ORDER BY session_id, id")
    out: list[RawMessage] = []
    skipped: list[Skipped] = []
    sessions: dict[str, _Session] = {}
    for row_id, session, data, created in rows:
        where = f"{path}: agent_messages row {row_id}"
        sess = sessions.get(session)
        if sess is None:
            sess = sessions[session] = _Session(str(session), path.name, where, skipped)
        item = json.loads(data) if _is_json(data) else None
        if not isinstance(item, dict):
            raise InvalidInput("message_data is not a JSON object", where=where)
        said = agents_item_text(item)
        if said is None or not said[1].strip():
            kind = item.get("type") or item.get("role") or "?"
            skipped.append(Skipped(where, f"item of type {str(kind)[:40]!r} has no text of a "
                                          "user or an assistant"))
            continue
        ext = item.get("id")
        sess.add(said[0], said[1], parse_ts(created, where), None if ext is None else str(ext),
                 where)
    for sess in sessions.values():
        out.extend(sess.out)
    if not out:
        raise InvalidInput("no user or assistant messages found", where=str(path))
    return out, skipped


def _is_json(data: Any) -> bool:
    try:
        json.loads(data)
    except (TypeError, ValueError, RecursionError):
        return False
    return True


def _checkpoint(kind: Any, blob: Any, where: str) -> dict[str, Any]:
    """A checkpoint row's value, decoded as its serializer wrote it."""
    try:
        value = msgpack.unpack(blob) if kind == "msgpack" else \
            json.loads(blob) if kind == "json" else None
    except (ValueError, TypeError, RecursionError) as e:
        raise InvalidInput(f"checkpoint cannot be decoded ({kind}): {e}", where=where) from None
    if kind not in ("msgpack", "json"):
        raise InvalidInput(f"checkpoint of serializer type {str(kind)[:40]!r}; only msgpack "
                           "and json are read", where=where)
    if not isinstance(value, dict):
        raise InvalidInput("checkpoint is not a map", where=where)
    return value


def _langchain(msg: Any) -> tuple[str | None, Any, Any]:
    """``(role, content, id)`` of a stored LangChain message (msgpack or json form)."""
    if isinstance(msg, dict) and msg.get("lc") == 1 and isinstance(msg.get("kwargs"), dict):
        kwargs = msg["kwargs"]
        name = (msg.get("id") or ["?"])[-1]
        return LANGCHAIN_ROLES.get(name), kwargs.get("content"), kwargs.get("id")
    if not isinstance(msg, dict):
        return None, None, None
    role = LANGCHAIN_ROLES.get(str(msg.get("type"))) or \
        LANGCHAIN_ROLES.get(str(msg.get("__class__")))
    return role, msg.get("content"), msg.get("id")


def read_langgraph(path: Path) -> Read:
    """A LangGraph SQLite checkpointer's database (see the module docstring)."""
    rows = _select(path, "SELECT thread_id, checkpoint_id, type, checkpoint FROM checkpoints "
                         "WHERE checkpoint_ns = '' ORDER BY thread_id, checkpoint_id")
    threads: dict[str, list[tuple[str, dict[str, Any]]]] = {}
    for thread, cid, kind, blob in rows:
        where = f"{path}: thread {str(thread)[:60]} checkpoint {cid}"
        threads.setdefault(str(thread), []).append((where, _checkpoint(kind, blob, where)))
    out: list[RawMessage] = []
    skipped: list[Skipped] = []
    for thread, checkpoints in threads.items():
        first_seen: dict[str, Any] = {}
        for where, cp in checkpoints:
            for m in _messages(cp, where):
                mid = _langchain(m)[2]
                if isinstance(mid, str):
                    first_seen.setdefault(mid, cp.get("ts"))
        where, newest = checkpoints[-1]
        sess = _Session(thread, path.name, where, skipped)
        for j, m in enumerate(_messages(newest, where)):
            mw = f"{where} message {j}"
            role, content, mid = _langchain(m)
            if role is None:
                kind = m.get("type") or m.get("__class__") if isinstance(m, dict) else None
                skipped.append(Skipped(mw, f"message of type {str(kind)[:40]!r} is not part of "
                                           "the dialogue"))
                continue
            text = _blocks(content, ("text",), mw, skipped) if content is not None else None
            if text is None or not text.strip():
                skipped.append(Skipped(mw, "no text (a tool call, or empty)"))
                continue
            raw_ts = first_seen.get(mid) if isinstance(mid, str) else None
            raw_ts = raw_ts or newest.get("ts")
            if raw_ts is None:
                raise InvalidInput("checkpoint has no ts", where=mw)
            sess.add(role, text, parse_ts(raw_ts, mw), mid if isinstance(mid, str) else None,
                     mw)
        if not sess.out:
            skipped.append(Skipped(where, "no user or assistant message with text: the "
                                          "thread is left out"))
        out.extend(sess.out)
    if not out:
        raise InvalidInput("no user or assistant messages found", where=str(path))
    return out, skipped


def _messages(cp: dict[str, Any], where: str) -> list[Any]:
    values = cp.get("channel_values")
    messages = values.get("messages", []) if isinstance(values, dict) else []
    if not isinstance(messages, list):
        raise InvalidInput("the messages channel is not a list", where=where)
    return messages
