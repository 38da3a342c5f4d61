"""LlamaIndex: a memory block for its ``Memory``
(``pip install "akasha-explorer[llama-index]"``).

:class:`AkashaMemoryBlock` is a ``BaseMemoryBlock[str]`` over
:class:`~akasha_explorer.protocol.MemoryAPI`, used the way LlamaIndex's own blocks are
(``Memory.from_defaults(session_id=..., memory_blocks=[AkashaMemoryBlock(memory=mem)])``):

- **get** — each time the memory is read (``memory.get()`` / ``aget()``, which an agent or
  a chat engine does before every model call), the block recalls the last user message
  and returns the context block, which ``Memory`` puts into the system message (or the
  user's, by its ``insert_method``) under the block's name;
- **put** — the messages ``Memory`` moves out of its short-term history (past
  ``token_limit * chat_history_token_ratio``) are stored verbatim as turns of the
  ``Memory``'s ``session_id``: a user message and the assistant's reply after it make one
  turn (``add_turn``), writing back the recall the context came from. System and tool
  messages are not stored; a turn still in the short-term history is stored once it
  leaves it.
"""

from __future__ import annotations

from typing import Any

from llama_index.core.base.llms.types import ChatMessage, MessageRole
from llama_index.core.memory import BaseMemoryBlock
from pydantic import Field, PrivateAttr

from ._core import MemoryLink

__all__ = ["AkashaMemoryBlock"]


def _text(message: ChatMessage) -> str:
    return "".join(getattr(b, "text", "") for b in message.blocks)


class AkashaMemoryBlock(BaseMemoryBlock[str]):
    """Long-term memory for LlamaIndex's ``Memory``: see the module docstring.

    ``memory`` is a store (``ak.open``), a served one (``ak.connect``) or a
    :class:`~akasha_explorer.integrations._core.MemoryLink`; ``budget_tokens`` bounds the
    context block; ``session`` is where turns go when ``Memory`` names no session.
    """

    name: str = Field(default="long_term_memory", description="The block's name.")
    description: str | None = Field(
        default="Turns of earlier conversations recalled for the user's last message "
                "(Akasha); a handle like [3] names one.")
    memory: Any = Field(exclude=True, description="The memory (any MemoryAPI).")
    budget_tokens: int | None = Field(default=None,
                                      description="Bound on the context block's tokens.")
    session: str = Field(default="llama-index",
                         description="Session for turns when Memory names none.")
    _link: MemoryLink = PrivateAttr()

    def model_post_init(self, context: Any, /) -> None:
        self._link = self.memory if isinstance(self.memory, MemoryLink) else \
            MemoryLink(self.memory, budget_tokens=self.budget_tokens)

    async def _aget(self, messages: list[ChatMessage] | None = None,
                    session_id: str | None = None, **block_kwargs: Any) -> str:
        """The context block for the last user message ("" when there is none)."""
        user = next((m for m in reversed(messages or []) if m.role == MessageRole.USER), None)
        query = _text(user).strip() if user is not None else ""
        if not query:
            return ""
        return await self._link.acontext(query, session=session_id)

    async def _aput(self, messages: list[ChatMessage]) -> None:
        """Store the messages as turns: a user message and the assistant reply after it."""
        user: ChatMessage | None = None
        for m in messages:
            if m.role == MessageRole.USER:
                if user is not None:
                    await self._store(user, None)
                user = m
            elif m.role == MessageRole.ASSISTANT and _text(m):
                await self._store(user, m)
                user = None
        if user is not None:
            await self._store(user, None)

    async def _store(self, user: ChatMessage | None, assistant: ChatMessage | None) -> None:
        said = _text(user) if user is not None else ""
        answered = _text(assistant) if assistant is not None else ""
        if not said and not answered:
            return
        first = user if user is not None else assistant
        session = self.session if first is None else \
            str(first.additional_kwargs.get("session_id") or self.session)
        await self._link.astore(said or None, answered or None, session=session)
