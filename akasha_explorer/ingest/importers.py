"""Importers: files and Python objects -> validated :class:`~akasha_explorer.model.RawMessage`.

Formats (``format="auto"`` sniffs them):

- ``jsonl`` — the project's own: one message per line,
  ``{"session_id", "seq"?, "ts", "role", "speaker"?, "text", "meta"?}`` (README documents it).
- ``locomo`` — LoCoMo JSON (``conversation`` / ``session_N`` / ``dia_id``); each dialogue
  line is its own node, both speakers count as ``user``, line time = session time + 30 s ·
  line index.
- ``chatgpt`` — the ChatGPT export ``conversations.json`` (main branch of each
  conversation; system/tool/empty/non-text messages skipped and reported).
- ``messages`` — a plain ``[{"role", "content"}]`` list (optionally ``ts``); needs a session
  id and a start time, one second apart.
- ``claude`` (the Claude.ai export's ``conversations.json``), ``langgraph`` (a LangGraph
  SQLite checkpointer's database) and ``agents-sdk`` (the OpenAI Agents SDK's
  ``SQLiteSession`` database) — see :mod:`.chats`; a SQLite file is told apart by its
  tables.

Every importer returns an :class:`Imported`: the messages, what it skipped and why, and
whether each message is its own node. Malformed input raises
:class:`~akasha_explorer.errors.InvalidInput` naming the file and line/record.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import InvalidInput
from ..model import RawMessage, Skipped
from . import chats
from .validate import (
    check_conversations,
    check_meta,
    check_role,
    check_seq,
    check_session,
    check_text,
    check_ts,
    parse_ts,
)

__all__ = ["FORMATS", "Imported", "as_imported", "load", "read_chatgpt", "read_jsonl",
           "read_locomo", "read_messages", "sniff"]

FORMATS = ("jsonl", "locomo", "chatgpt", "messages", "claude", "langgraph", "agents-sdk")
JSONL_KEYS = frozenset({"session_id", "seq", "ts", "role", "speaker", "text", "meta"})
LOCOMO_LINE_SECONDS = 30.0


@dataclass
class Imported:
    """What an importer produced."""

    source: str
    format: str
    messages: list[RawMessage]
    skipped: list[Skipped] = field(default_factory=list)
    one_node_per_message: bool = False


def _read_text(path: Path) -> str:
    if path.exists() and not path.is_file():  # a FIFO or a device would block or never end
        raise InvalidInput("not a regular file", where=str(path))
    try:
        raw = path.read_bytes()
    except OSError as e:
        raise InvalidInput(f"cannot read file: {e.strerror}", where=str(path)) from None
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = raw[: e.start].count(b"\n") + 1
        raise InvalidInput(f"invalid UTF-8 (byte 0x{raw[e.start]:02x} at offset {e.start})",
                           where=f"{path}:{line}") from None


class _DuplicateKey(ValueError):
    """A JSON object names one key twice (raised by :func:`_unique_keys`)."""


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``object_pairs_hook`` refusing a key given twice: ``json`` would silently keep
    the last value and lose the first, a reduction nobody would see."""
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set[str] = set()
        for k, _ in pairs:
            if k in seen:
                raise _DuplicateKey(k)
            seen.add(k)
    return out


def _parse_json(text: str, where: str) -> Any:
    """Parse JSON text; malformed JSON, a too-deep nesting and a key given twice in one
    object are :class:`InvalidInput` naming ``where``.

    >>> _parse_json('{"text": "a", "text": "b"}', "f:1")
    Traceback (most recent call last):
    ...
    akasha_explorer.errors.InvalidInput: f:1: duplicate key 'text' in a JSON object ...
    """
    try:
        return json.loads(text, object_pairs_hook=_unique_keys)
    except _DuplicateKey as e:
        raise InvalidInput(f"duplicate key {str(e)!r} in a JSON object (it would keep only the "
                           "last value); fix the source", where=where) from None
    except json.JSONDecodeError as e:
        raise InvalidInput(f"malformed JSON: {e.msg} (line {e.lineno}, column {e.colno})",
                           where=where) from None
    except RecursionError:
        raise InvalidInput("JSON nested too deeply", where=where) from None
    except ValueError as e:  # e.g. an integer literal of more than 4300 digits
        raise InvalidInput(f"malformed JSON: {str(e)[:120]}", where=where) from None


# -- jsonl ---------------------------------------------------------------------------------
def read_jsonl(path: Path | str) -> Imported:
    """The project's own JSONL (see module docstring). Blank lines are allowed."""
    path = Path(path)
    text = _read_text(path)
    out: list[RawMessage] = []
    next_seq: dict[str, int] = {}
    for n, line in enumerate(text.split("\n"), 1):
        if not line.strip():
            continue
        where = f"{path}:{n}"
        rec = _parse_json(line, where)
        out.append(_jsonl_record(rec, where, next_seq, source=path.name))
    if not out:
        raise InvalidInput("no messages in file", where=str(path))
    return Imported(str(path), "jsonl", out)


def _jsonl_record(rec: Any, where: str, next_seq: dict[str, int], *, source: str) -> RawMessage:
    if not isinstance(rec, dict):
        raise InvalidInput(f"expected a JSON object, got {type(rec).__name__}", where=where)
    unknown = sorted(set(rec) - JSONL_KEYS)
    if unknown:
        raise InvalidInput(f"unknown field(s) {', '.join(unknown)}; allowed: "
                           f"{', '.join(sorted(JSONL_KEYS))} (put extras under 'meta')",
                           where=where)
    for key in ("session_id", "ts", "role", "text"):
        if key not in rec:
            raise InvalidInput(f"missing field {key!r}", where=where)
    session = check_session(rec["session_id"], where)
    seq = check_seq(rec["seq"], where) if "seq" in rec else next_seq.get(session, 0)
    next_seq[session] = max(next_seq.get(session, 0), seq + 1)
    speaker = rec.get("speaker")
    if speaker is not None:
        speaker = check_text(speaker, where, field="speaker")
    meta = check_meta(rec.get("meta", {}), where)
    return RawMessage(session=session, seq=seq, ts=parse_ts(rec["ts"], where),
                      role=check_role(rec["role"], where), text=check_text(rec["text"], where),
                      speaker=speaker, source=source, meta=meta)


# -- LoCoMo --------------------------------------------------------------------------------
_SESSION_KEY = re.compile(r"^session_(\d+)$")


def parse_locomo_date(value: str, where: str) -> float:
    """LoCoMo session times such as ``"1:56 pm on 8 May, 2023"`` (taken as UTC), in the
    range every importer checks (:func:`~.validate.check_ts`).

    >>> parse_locomo_date("11:59 pm on 31 December, 1066", "x")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    akasha_explorer.errors.InvalidInput: x: timestamp '11:59 pm on 31 December, 1066' is outside ...
    """
    try:
        d = dt.datetime.strptime(value.strip(), "%I:%M %p on %d %B, %Y")
    except (ValueError, AttributeError):
        raise InvalidInput(f"cannot parse LoCoMo date {value!r}", where=where) from None
    return check_ts(d.replace(tzinfo=dt.UTC).timestamp(), where, shown=value)


def read_locomo(data: Any, *, source: str = "locomo") -> Imported:
    """LoCoMo samples (a list, or one sample) -> one node per dialogue line."""
    samples = data if isinstance(data, list) else [data]
    out: list[RawMessage] = []
    skipped: list[Skipped] = []
    for i, sample in enumerate(samples):
        where = f"{source}: sample {i}"
        if not isinstance(sample, dict) or not isinstance(sample.get("conversation"), dict):
            raise InvalidInput("expected a LoCoMo sample with a 'conversation' object", where=where)
        sid = str(sample.get("sample_id", f"sample-{i}"))
        conv = sample["conversation"]
        keys = sorted((int(m.group(1)), k) for k in conv if (m := _SESSION_KEY.match(k)))
        for _, key in keys:
            lines = conv[key]
            swhere = f"{where} ({sid}) {key}"
            if not isinstance(lines, list):
                raise InvalidInput("session must be a list of dialogue lines", where=swhere)
            if not lines:
                skipped.append(Skipped(swhere, "empty session"))
                continue
            date = conv.get(f"{key}_date_time")
            if not isinstance(date, str):
                raise InvalidInput(f"missing {key}_date_time", where=swhere)
            t0 = parse_locomo_date(date, swhere)
            session = check_session(f"{sid}/{key}", swhere)
            for j, line in enumerate(lines):
                lw = f"{swhere} line {j}"
                if not isinstance(line, dict):
                    raise InvalidInput("dialogue line must be an object", where=lw)
                meta: dict[str, Any] = {"session_date": date}
                for extra in ("img_url", "blip_caption", "query", "re-download"):
                    if extra in line:
                        meta[extra] = line[extra]
                speaker = line.get("speaker")
                check_meta(meta, lw)
                ts = check_ts(t0 + LOCOMO_LINE_SECONDS * j, lw,
                              shown=f"{date} + {LOCOMO_LINE_SECONDS * j:g} s")
                out.append(RawMessage(
                    session=session, seq=j, ts=ts, role="user",
                    text=check_text(line.get("text"), lw),
                    speaker=(check_text(speaker, lw, field="speaker")
                             if speaker is not None else None),
                    ext_id=str(line["dia_id"]) if "dia_id" in line else None,
                    source=source, meta=meta))
    if not out:
        raise InvalidInput("no dialogue lines found", where=source)
    return Imported(source, "locomo", out, skipped, one_node_per_message=True)


# -- ChatGPT -------------------------------------------------------------------------------
def _main_branch(mapping: dict[str, Any], current: Any,
                 where: str) -> tuple[list[dict[str, Any]], list[Skipped]]:
    """The main branch of a ChatGPT conversation, root first, and what is worth telling
    about it: a branch whose root names a parent the export lacks (it is read from there),
    or a ``current_node`` that is not in the mapping (the deepest last-child leaf is used)."""
    bad = next((k for k, v in mapping.items() if not isinstance(v, dict)), None)
    if bad is not None:
        raise InvalidInput(f"mapping entry {str(bad)[:40]!r} is not an object", where=where)
    notes: list[Skipped] = []
    if not isinstance(current, str) or current not in mapping:
        if current is not None:
            notes.append(Skipped(where, f"current_node {str(current)[:60]!r} is not in the "
                                        "mapping; read the branch of last replies instead"))
        # fall back: the deepest leaf reached by always following the last child, from a
        # root — a node without a parent, or whose parent the export does not hold
        roots = [k for k, v in mapping.items()
                 if not v.get("parent") or v.get("parent") not in mapping]
        current = roots[0] if roots else None
        down: set[str] = set()
        while current is not None and current not in down:
            down.add(current)
            kids = mapping[current].get("children")
            nxt = kids[-1] if isinstance(kids, list) and kids else None
            if not isinstance(nxt, str) or nxt not in mapping:
                break
            current = nxt
    chain: list[dict[str, Any]] = []
    seen: set[str] = set()
    while isinstance(current, str) and current in mapping and current not in seen:
        seen.add(current)
        chain.append(mapping[current])
        current = mapping[current].get("parent")
    if current is not None and not (isinstance(current, str) and current in seen):
        notes.append(Skipped(where, f"parent {str(current)[:60]!r} of the branch's first "
                                    "message is not in the export; what came before it is "
                                    "missing, the branch is read from there"))
    return chain[::-1], notes


def read_chatgpt(data: Any, *, source: str = "chatgpt") -> Imported:
    """ChatGPT ``conversations.json``: the main branch of every conversation."""
    out: list[RawMessage] = []
    skipped: list[Skipped] = []
    for i, where, conv in check_conversations(data, source, "mapping", dict, "'mapping' object"):
        sid = conv.get("conversation_id") or conv.get("id") or f"chatgpt-{i}"
        session = check_session(str(sid), where)
        conv_ts = conv.get("create_time")
        seq = 0
        last_ts = None
        branch, notes = _main_branch(conv["mapping"], conv.get("current_node"), where)
        skipped.extend(notes)
        for node in branch:
            msg = node.get("message")
            if not msg:
                continue
            if not isinstance(msg, dict):
                raise InvalidInput("message must be an object", where=where)
            mw = f"{where} message {str(msg.get('id', '?'))[:60]}"
            for key, kind in (("author", dict), ("content", dict)):
                if msg.get(key) is not None and not isinstance(msg[key], kind):
                    raise InvalidInput(f"{key} must be an object", where=mw)
            role = (msg.get("author") or {}).get("role")
            if role not in ("user", "assistant"):
                skipped.append(Skipped(mw, f"role {role!r} is not part of the dialogue"))
                continue
            content = msg.get("content") or {}
            parts = content.get("parts") or []
            if not isinstance(parts, list):
                raise InvalidInput("content.parts must be a list", where=mw)
            texts = [p for p in parts if isinstance(p, str)]
            if len(texts) != len(parts):
                skipped.append(Skipped(mw, f"{len(parts) - len(texts)} non-text part(s) left out"))
            text = "\n".join(texts)
            if not text.strip():
                skipped.append(Skipped(mw, f"no text ({content.get('content_type', '?')})"))
                continue
            raw_ts = msg.get("create_time") or last_ts or conv_ts
            if raw_ts is None:
                raise InvalidInput("message has no create_time and neither has its conversation",
                                   where=mw)
            ts = parse_ts(raw_ts, mw)
            if last_ts is not None and ts < last_ts:
                ts = last_ts  # exports sometimes go back a few ms; keep dialogue order
            last_ts = ts
            out.append(RawMessage(session=session, seq=seq, ts=ts, role=role,
                                  text=check_text(text, mw), source=source,
                                  ext_id=None if msg.get("id") is None else str(msg["id"]),
                                  meta=check_meta({"title": conv.get("title")}, mw)
                                  if seq == 0 else {}))
            seq += 1
        if seq == 0:
            skipped.append(Skipped(where, f"no user or assistant message on the main branch "
                                          f"({len(conv['mapping'])} mapping entries): the "
                                          "conversation is left out"))
    if not out:
        raise InvalidInput("no user or assistant messages found", where=source)
    return Imported(source, "chatgpt", out, skipped)


# -- plain message list --------------------------------------------------------------------
def read_messages(data: Iterable[Any], *, session: str, start_ts: float | None = None,
                  source: str = "messages") -> Imported:
    """A plain ``[{"role", "content"}]`` list. ``ts`` per message wins over ``start_ts``
    (then one second apart); with neither, the current time is used."""
    items = list(data)
    session = check_session(session, source)
    if start_ts is None:
        start_ts = dt.datetime.now(dt.UTC).timestamp() - len(items)
    out: list[RawMessage] = []
    for i, rec in enumerate(items):
        where = f"{source}: message {i}"
        if not isinstance(rec, dict):
            raise InvalidInput(f"expected an object, got {type(rec).__name__}", where=where)
        if "role" not in rec or "content" not in rec:
            raise InvalidInput("each message needs 'role' and 'content'", where=where)
        ts = parse_ts(rec["ts"], where) if "ts" in rec else check_ts(start_ts + i, where)
        out.append(RawMessage(session=session, seq=i, ts=ts, role=check_role(rec["role"], where),
                              text=check_text(rec["content"], where), source=source))
    if not out:
        raise InvalidInput("no messages", where=source)
    return Imported(source, "messages", out)


# -- detection -----------------------------------------------------------------------------
def sniff(data: Any) -> str:
    """Name the format of parsed JSON, or raise :class:`InvalidInput`."""
    first = data[0] if isinstance(data, list) and data else data
    if isinstance(first, dict):
        if "conversation" in first:
            return "locomo"
        if "mapping" in first:
            return "chatgpt"
        if "chat_messages" in first:
            return "claude"
        if "role" in first and "content" in first:
            return "messages"
        if "session_id" in first and "text" in first:
            return "jsonl"
    raise InvalidInput(f"cannot tell the format; pass --format {'|'.join(FORMATS)}")


def _is_sqlite(path: Path) -> bool:
    """Whether ``path`` is a regular file that starts as a SQLite database does."""
    if not path.is_file():
        return False
    try:
        with path.open("rb") as fh:
            return fh.read(len(chats.SQLITE_HEADER)) == chats.SQLITE_HEADER
    except OSError:
        return False


def load(path: Path | str, *, format: str = "auto", session: str | None = None) -> Imported:
    """Read a file in any supported format (``format="auto"`` sniffs it)."""
    path = Path(path)
    if format not in ("auto", *FORMATS):
        raise InvalidInput(f"unknown format {format!r}; use auto or one of {', '.join(FORMATS)}")
    if format == "jsonl" or (format == "auto" and path.suffix.lower() in (".jsonl", ".ndjson")):
        return read_jsonl(path)
    if format in ("langgraph", "agents-sdk") or (format == "auto" and _is_sqlite(path)):
        if not _is_sqlite(path):
            raise InvalidInput(f"not a SQLite database (a {format} file is one)",
                               where=str(path))
        fmt = chats.sniff_sqlite(path) if format == "auto" else format
        read = chats.read_langgraph if fmt == "langgraph" else chats.read_agents_sdk
        return Imported(path.name, fmt, *read(path))
    text = _read_text(path)
    if not text.strip():
        raise InvalidInput("file is empty", where=str(path))
    data = _parse_json(text, str(path))
    try:
        fmt = sniff(data) if format == "auto" else format
    except InvalidInput as e:
        raise InvalidInput(str(e), where=str(path)) from None
    if fmt == "locomo":
        return read_locomo(data, source=path.name)
    if fmt == "chatgpt":
        return read_chatgpt(data, source=path.name)
    if fmt == "claude":
        return Imported(path.name, "claude", *chats.read_claude(data, source=path.name))
    if fmt == "messages":
        return read_messages(data if isinstance(data, list) else [data],
                             session=session or path.stem, source=path.name)
    raise InvalidInput("this is JSONL content; use a .jsonl file or --format jsonl",
                       where=str(path))


def as_imported(source: str | Path | Sequence[Any] | Imported, *, format: str = "auto",
                session: str | None = None) -> Imported:
    """What ``Memory.ingest`` accepts, as one :class:`Imported`: a file of any supported
    format (:func:`load`), an :class:`Imported` as it is, a list of :class:`RawMessage`, or
    a plain ``[{"role", "content"}]`` list (:func:`read_messages`, needs ``session``)."""
    if isinstance(source, Imported):
        return source
    if isinstance(source, str | Path):
        return load(source, format=format, session=session)
    if source and all(isinstance(m, RawMessage) for m in source):
        return Imported("messages", "raw", [m for m in source if isinstance(m, RawMessage)])
    if session is None:
        raise InvalidInput("a plain message list needs session=...")
    return read_messages(source, session=session)
