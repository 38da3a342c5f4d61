"""LangGraph / LangChain: the memory as LangChain tools and as two graph nodes
(``pip install "akasha-explorer[langgraph]"``).

- :func:`memory_tools` — ``recall``, ``context`` and ``expand`` as LangChain tools
  (``StructuredTool``, sync and async), for ``model.bind_tools`` or a ``ToolNode``.
- :class:`MemoryHooks` — :attr:`~MemoryHooks.pre_model_hook` builds the context block for
  the last user message and hands the model ``llm_input_messages``: the graph's messages
  with the block as a system message after any leading system messages (the block is not
  added to the conversation's state, so it is never stored twice nor piles up);
  :attr:`~MemoryHooks.post_model_hook` stores the turn (``add_turn``: the user message and
  the model's answer, verbatim) once the model answered without calling a tool, and writes
  back the recall the context came from. Both are runnables (sync and async), usable as
  nodes of a ``StateGraph`` over :class:`MemoryState` or as ``create_react_agent``'s
  ``pre_model_hook`` / ``post_model_hook``. The turn's session is the run's ``thread_id``
  (``config={"configurable": {"thread_id": ...}}``) unless ``session=`` is given; the human
  message's id is the turn id, so a retried run stores nothing twice.

Why no LangGraph ``BaseStore``: a store there is a key-value document store —
``put(namespace, key, value)`` overwrites, ``delete`` removes one key, ``search`` filters
documents by namespace and fields — that an agent writes facts into. Akasha keeps turns
verbatim and immutable (a turn is never edited, only forgotten with an audit trail),
recalls by activation over a co-activation graph rather than by key, and strengthens what
a recall used when the turn is stored. A ``BaseStore`` over it would have to fake
overwrites and key lookups, so the adapter offers tools and hooks instead.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, SystemMessage
from langchain_core.runnables import RunnableConfig, RunnableLambda
from langchain_core.tools import BaseTool, StructuredTool
from langgraph.graph import MessagesState

from ..errors import InvalidInput
from ._core import TOOL_HELP, MemoryLink

if TYPE_CHECKING:
    from ..protocol import MemoryAPI

__all__ = ["MemoryHooks", "MemoryState", "memory_tools"]


class MemoryState(MessagesState):
    """``MessagesState`` plus ``llm_input_messages``: what the model is given this step
    (the pre-model hook's output; a model node reads it instead of ``messages``)."""

    llm_input_messages: list[AnyMessage]


def memory_tools(memory: MemoryAPI | MemoryLink, *, session: str | None = None
                 ) -> list[BaseTool]:
    """``recall``, ``context`` and ``expand`` as LangChain tools over ``memory`` (a
    :class:`MemoryLink` to share its latest context with :class:`MemoryHooks`)."""
    link = memory if isinstance(memory, MemoryLink) else MemoryLink(memory)

    def context(query: str) -> str:
        return link.context(query, session=session)

    async def acontext(query: str) -> str:
        return await link.acontext(query, session=session)

    def recall(query: str) -> str:
        return link.recall(query, session=session)

    async def arecall(query: str) -> str:
        return await link.arecall(query, session=session)

    def expand(handle: str, around: int | None = None) -> str:
        return link.expand(handle, around=around)

    async def aexpand(handle: str, around: int | None = None) -> str:
        return await link.aexpand(handle, around=around)

    return [StructuredTool.from_function(func=f, coroutine=af, name=f.__name__,
                                         description=TOOL_HELP[f.__name__])
            for f, af in ((recall, arecall), (context, acontext), (expand, aexpand))]


def _text(message: AnyMessage) -> str:
    return str(message.text)


def _last(messages: list[AnyMessage], kind: type[AnyMessage]) -> int | None:
    return next((i for i in range(len(messages) - 1, -1, -1)
                 if isinstance(messages[i], kind)), None)


class MemoryHooks:
    """The two nodes of an agent graph that use the memory: see the module docstring.

    ``memory`` is a store (``ak.open``) or a served one (``ak.connect``), or a
    :class:`MemoryLink` shared with :func:`memory_tools`; ``budget_tokens`` bounds the
    context block; ``session`` names the session turns are stored in (default: the run's
    ``thread_id``).
    """

    def __init__(self, memory: MemoryAPI | MemoryLink, *, budget_tokens: int | None = None,
                 session: str | None = None) -> None:
        self.link = memory if isinstance(memory, MemoryLink) else \
            MemoryLink(memory, budget_tokens=budget_tokens)
        self.session = session
        self.pre_model_hook = RunnableLambda(self._before, afunc=self._abefore,
                                             name="akasha_context")
        """The node that puts the context block into the model's input."""
        self.post_model_hook = RunnableLambda(self._after, afunc=self._aafter,
                                              name="akasha_store_turn")
        """The node that stores the turn after the model answered."""

    def _session(self, config: RunnableConfig | None) -> str:
        if self.session is not None:
            return self.session
        thread = ((config or {}).get("configurable") or {}).get("thread_id")
        if thread is None:
            raise InvalidInput("MemoryHooks needs a session: pass session=... or run the graph "
                               "with config={'configurable': {'thread_id': ...}}")
        return str(thread)

    @staticmethod
    def _query(state: dict[str, Any]) -> HumanMessage | None:
        messages = state["messages"]
        i = _last(messages, HumanMessage)
        return None if i is None else messages[i]

    @staticmethod
    def _with_block(state: dict[str, Any], text: str) -> dict[str, Any]:
        messages = list(state["messages"])
        lead = next((i for i, m in enumerate(messages) if not isinstance(m, SystemMessage)),
                    len(messages))
        block = SystemMessage(content=f"Long-term memory (turns recalled for the user's last "
                                      f"message; cite a handle like [3] if you use one):\n"
                                      f"{text}")
        return {"llm_input_messages": [*messages[:lead], block, *messages[lead:]]}

    def _before(self, state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
        human = self._query(state)
        if human is None:
            return {"llm_input_messages": list(state["messages"])}
        text = self.link.context(_text(human), session=self._session(config), key=human.id)
        return self._with_block(state, text)

    async def _abefore(self, state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
        human = self._query(state)
        if human is None:
            return {"llm_input_messages": list(state["messages"])}
        text = await self.link.acontext(_text(human), session=self._session(config),
                                        key=human.id)
        return self._with_block(state, text)

    @staticmethod
    def _turn(state: dict[str, Any]) -> tuple[HumanMessage, AIMessage] | None:
        """The finished turn: the last AI message, if it calls no tool, and the user
        message before it."""
        messages = state["messages"]
        a = _last(messages, AIMessage)
        if a is None or messages[a].tool_calls:
            return None
        h = _last(messages[:a], HumanMessage)
        return None if h is None else (messages[h], messages[a])

    def _after(self, state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
        turn = self._turn(state)
        if turn is not None:
            human, ai = turn
            self.link.store(_text(human), _text(ai) or None, session=self._session(config),
                            key=human.id, turn_id=human.id)
        return {}

    async def _aafter(self, state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
        turn = self._turn(state)
        if turn is not None:
            human, ai = turn
            await self.link.astore(_text(human), _text(ai) or None,
                                   session=self._session(config), key=human.id,
                                   turn_id=human.id)
        return {}
