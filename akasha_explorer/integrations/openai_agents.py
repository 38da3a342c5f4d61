"""The OpenAI Agents SDK: a ``Session`` kept in the memory, and function tools
(``pip install "akasha-explorer[openai-agents]"``).

- :class:`AkashaSession` — the SDK's ``Session`` protocol (``get_items``, ``add_items``,
  ``pop_item``, ``clear_session``; all async) over ``add_turn``: each item of the
  conversation is one turn of the memory's session ``session_id``, stored verbatim, so a
  run's history is also what later recalls find. A message whose content is text (a user
  input, an assistant's output) is stored as that text, exactly, and read back as
  ``{"role", "content"}`` (the message's envelope — its id, status, annotations — is not
  kept; the model does not need it as input); any other item (a tool call, its output,
  reasoning) is stored as its JSON and read back as it was given. ``pop_item`` and
  ``clear_session`` forget the turns everywhere (``forget``, audited).
- :func:`function_tools` — ``recall``, ``context`` and ``expand`` as ``FunctionTool`` s
  for an ``Agent(tools=...)``.
"""

from __future__ import annotations

import json
import uuid
from typing import TYPE_CHECKING, Any, cast

from agents import FunctionTool, TResponseInputItem, function_tool

from ..ingest.chats import agents_item_text
from ._core import TOOL_HELP, MemoryLink

if TYPE_CHECKING:
    from ..protocol import MemoryAPI

__all__ = ["AkashaSession", "function_tools"]

_TEXT, _ITEM = "agents-text:", "agents-item:"
"""Turn-id prefixes: a message stored as its text, an item stored as its JSON."""


class AkashaSession:
    """A conversation of the OpenAI Agents SDK kept in ``memory`` as session
    ``session_id`` (see the module docstring): ``Runner.run(agent, text,
    session=AkashaSession("chat-1", mem))``."""

    session_settings = None
    """No session settings of its own (the SDK's defaults apply)."""

    def __init__(self, session_id: str, memory: MemoryAPI | MemoryLink) -> None:
        self.session_id = session_id
        self.link = memory if isinstance(memory, MemoryLink) else MemoryLink(memory)
        self._items: list[tuple[str, TResponseInputItem]] | None = None
        """The session's (node, item) pairs, read from the store on first use."""

    def _load(self) -> list[tuple[str, TResponseInputItem]]:
        if self._items is None:
            mem = self.link.memory
            nodes = mem.neighbourhood().session_nodes(self.session_id) or []
            self._items = []
            for node in nodes:
                for m in mem.messages(node):
                    item = self._item(m.role, m.text, m.ext_id)
                    if item is not None:
                        self._items.append((node, item))
        return self._items

    @staticmethod
    def _item(role: str, text: str, ext_id: str | None) -> TResponseInputItem | None:
        if ext_id is not None and ext_id.startswith(_ITEM):
            return cast("TResponseInputItem", json.loads(text))
        if role in ("user", "assistant"):
            return cast("TResponseInputItem", {"role": role, "content": text})
        return None

    def _add(self, items: list[TResponseInputItem]) -> None:
        loaded = self._load()
        for item in items:
            text = agents_item_text(item)
            if text is not None:
                role, body = text
                turn_id = f"{_TEXT}{uuid.uuid4().hex}"
            else:
                role, body = "assistant", json.dumps(item, ensure_ascii=False, sort_keys=True)
                turn_id = f"{_ITEM}{uuid.uuid4().hex}"
            node = self.link.store(body if role == "user" else None,
                                   body if role == "assistant" else None,
                                   session=self.session_id, turn_id=turn_id)
            loaded.append((node, self._item(role, body, turn_id) or item))

    def _pop(self) -> TResponseInputItem | None:
        loaded = self._load()
        if not loaded:
            return None
        node, item = loaded.pop()
        self.link.memory.forget(node=node, why=f"pop_item of session {self.session_id}")
        return item

    def _clear(self) -> None:
        if self._load():
            self.link.memory.forget(session=self.session_id,
                                    why=f"clear_session of {self.session_id}")
        self._items = []

    async def get_items(self, limit: int | None = None) -> list[TResponseInputItem]:
        """The conversation's items, oldest first (the latest ``limit`` of them)."""
        items = [item for _, item in await self._run(self._load)]
        return items if limit is None else items[max(0, len(items) - limit):]

    async def add_items(self, items: list[TResponseInputItem]) -> None:
        """Store ``items`` at the end of the conversation, each as one turn."""
        await self._run(self._add, items)

    async def pop_item(self) -> TResponseInputItem | None:
        """Forget the most recent item and return it (None: the session is empty)."""
        return await self._run(self._pop)

    async def clear_session(self) -> None:
        """Forget every turn of the session."""
        await self._run(self._clear)

    @staticmethod
    async def _run(fn: Any, *args: Any) -> Any:
        import asyncio
        return await asyncio.to_thread(fn, *args)


def function_tools(memory: MemoryAPI | MemoryLink, *, session: str | None = None
                   ) -> list[FunctionTool]:
    """``recall``, ``context`` and ``expand`` as function tools over ``memory``."""
    link = memory if isinstance(memory, MemoryLink) else MemoryLink(memory)

    async def recall(query: str) -> str:
        """Recall `query`.

        Args:
            query: what to look for (the user's message, or a question about the past).
        """
        return await link.arecall(query, session=session)

    async def context(query: str) -> str:
        """The memory context for `query`.

        Args:
            query: the user's message, or a question about the past.
        """
        return await link.acontext(query, session=session)

    async def expand(handle: str, around: int | None = None) -> str:
        """Expand a handle.

        Args:
            handle: a handle like [3] from the last context, or a node id.
            around: how many neighbouring turns to show each side (default 2).
        """
        return await link.aexpand(handle, around=around)

    return [function_tool(f, name_override=f.__name__,
                          description_override=TOOL_HELP[f.__name__])
            for f in (recall, context, expand)]
