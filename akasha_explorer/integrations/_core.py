"""What every framework adapter shares: :class:`MemoryLink`, one memory as an agent uses it.

An agent's loop with a memory has three moves, whatever the framework: before the model
answers, build the context block for the user's message (:meth:`MemoryLink.context`, the
recall kept); let the model look further (:meth:`~MemoryLink.recall` shows what a recall
found, :meth:`~MemoryLink.expand` the verbatim turn behind a handle ``[n]``); after it
answered, store the turn verbatim and write back the recall it was answered with
(:meth:`~MemoryLink.store`, ``add_turn``). Each adapter maps its framework's hooks onto
these; each method has an ``a``-prefixed twin for frameworks that are async, which runs
the call in a worker thread so the event loop is not held up (calls on one link take
turns: a local store is one writer).
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from typing import TYPE_CHECKING

from .._locks import ordered_lock

if TYPE_CHECKING:
    from ..brief.context import ContextBlock
    from ..engine.trace import RecallTrace
    from ..protocol import MemoryAPI

__all__ = ["TOOL_HELP", "MemoryLink"]

TOOL_HELP = {
    "context": "Long-term memory: the remembered turns relevant to `query` (the user's "
               "message), most relevant first, each line starting with a handle like [3]. "
               "Call it before answering when earlier conversations may matter.",
    "recall": "Long-term memory: what a recall of `query` activated, one card per turn with "
              "its source, score, time and node id.",
    "expand": "Long-term memory: the verbatim turn behind a handle like [3] from the last "
              "context (or a node id), with `around` neighbouring turns each side.",
}
"""The description of each tool an adapter offers, by tool name (the same words the
frameworks' tool lists show a model)."""

KEEP_TRACES = 64
"""How many recalls a link keeps for the turns not yet stored (oldest dropped first)."""


class MemoryLink:
    """One memory (local or served, any :class:`~akasha_explorer.protocol.MemoryAPI`) as
    an agent uses it: texts for a prompt or a tool, the recall behind each user message
    until its turn is stored.

    ``budget_tokens`` bounds each context block (default: the store's ``CONTEXT_BUDGET``),
    ``around`` is how many neighbouring turns :meth:`expand` shows each side.
    """

    def __init__(self, memory: MemoryAPI, *, budget_tokens: int | None = None,
                 around: int | None = None) -> None:
        self.memory = memory
        self.budget_tokens = budget_tokens
        self.around = around
        self.latest: ContextBlock | None = None
        """The last context block built (``expand("[n]")`` resolves against it)."""
        self._traces: OrderedDict[str, RecallTrace] = OrderedDict()
        self._lock = ordered_lock("link.recall")

    def _keep(self, key: str | None, trace: RecallTrace) -> None:
        if key is None:
            return
        self._traces[key] = trace
        self._traces.move_to_end(key)
        while len(self._traces) > KEEP_TRACES:
            self._traces.popitem(last=False)

    def context(self, query: str, *, session: str | None = None, key: str | None = None
                ) -> str:
        """The context block for ``query`` as prompt text; its recall is kept under
        ``key`` (the user message's id) for :meth:`store`."""
        with self._lock:
            trace = self.memory.recall(query, session=session)
            block: ContextBlock = trace.context(self.budget_tokens)
            self.latest = block
            self._keep(key if key is not None else query, trace)
            return block.text

    def recall(self, query: str, *, session: str | None = None) -> str:
        """What a recall of ``query`` activated, one card per turn (score, source, time,
        node id, text)."""
        with self._lock:
            trace = self.memory.recall(query, session=session)
            block: ContextBlock = trace.context(self.budget_tokens, style="cards")
            self.latest = block
            return block.text

    def expand(self, handle: str, *, around: int | None = None) -> str:
        """The verbatim turn behind ``handle`` (``[3]`` of the latest context, or a node
        id) and its neighbours, sha256-checked."""
        with self._lock:
            exp = self.memory.expand(handle.strip(), self.around if around is None else around,
                                     trace=self.latest)
            return exp.text()

    def store(self, user: str | None, assistant: str | None, *, session: str,
              key: str | None = None, turn_id: str | None = None) -> str:
        """Store one turn verbatim in ``session`` and write back the recall its context
        was built from (kept under ``key``, else the user's text; none kept: a new recall
        of ``user``). ``turn_id`` makes a retry store nothing twice. Returns the node id."""
        with self._lock:
            trace = self._traces.pop(key if key is not None else (user or ""), None)
            node, _ = self.memory.add_turn(user, assistant, session=session, recall=trace,
                                           turn_id=turn_id)
            return node

    async def acontext(self, query: str, *, session: str | None = None,
                       key: str | None = None) -> str:
        """:meth:`context` in a worker thread."""
        return await asyncio.to_thread(self.context, query, session=session, key=key)

    async def arecall(self, query: str, *, session: str | None = None) -> str:
        """:meth:`recall` in a worker thread."""
        return await asyncio.to_thread(self.recall, query, session=session)

    async def aexpand(self, handle: str, *, around: int | None = None) -> str:
        """:meth:`expand` in a worker thread."""
        return await asyncio.to_thread(self.expand, handle, around=around)

    async def astore(self, user: str | None, assistant: str | None, *, session: str,
                     key: str | None = None, turn_id: str | None = None) -> str:
        """:meth:`store` in a worker thread."""
        return await asyncio.to_thread(self.store, user, assistant, session=session, key=key,
                                       turn_id=turn_id)
