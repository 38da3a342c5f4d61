"""pydantic-ai: the memory as a toolset (``pip install "akasha-explorer[pydantic-ai]"``).

:class:`AkashaToolset` is a ``FunctionToolset`` (``Agent(model, toolsets=[...])``) with the
async tools ``recall``, ``context`` and ``expand``. With ``inject_context=True`` it also
gives the agent, before each model request, the context block for the run's prompt as a
dynamic instruction (so the model sees its memory without calling a tool — note that the
block quotes stored turns verbatim, text that other people may have written). After a
run, :meth:`~AkashaToolset.store` stores the turn — the run's user prompt and its output,
verbatim — in the toolset's session and writes back the recall the context came from.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic_ai import RunContext
from pydantic_ai.messages import ModelRequest, UserPromptPart
from pydantic_ai.toolsets import FunctionToolset

from ._core import TOOL_HELP, MemoryLink

if TYPE_CHECKING:
    from pydantic_ai.agent import AgentRunResult

    from ..protocol import MemoryAPI

__all__ = ["AkashaToolset"]


def _prompt(prompt: Any) -> str | None:
    """The text of a user prompt (a string, or the text parts of a multi-part one)."""
    if isinstance(prompt, str):
        return prompt
    if prompt is None:
        return None
    texts = [p for p in prompt if isinstance(p, str)]
    return "\n".join(texts) or None


class AkashaToolset(FunctionToolset[Any]):
    """Long-term memory tools for a pydantic-ai agent: see the module docstring.

    ``memory`` is a store (``ak.open``), a served one (``ak.connect``) or a
    :class:`~akasha_explorer.integrations._core.MemoryLink`; ``session`` names the
    conversation turns are stored in; ``budget_tokens`` bounds a context block.
    """

    def __init__(self, memory: MemoryAPI | MemoryLink, *, session: str = "pydantic-ai",
                 budget_tokens: int | None = None, inject_context: bool = False,
                 id: str | None = "akasha") -> None:
        self.link = memory if isinstance(memory, MemoryLink) else \
            MemoryLink(memory, budget_tokens=budget_tokens)
        self.session = session
        link = self.link

        async def recall(query: str) -> str:
            return await link.arecall(query, session=session)

        async def context(query: str) -> str:
            return await link.acontext(query, session=session)

        async def expand(handle: str, around: int | None = None) -> str:
            return await link.aexpand(handle, around=around)

        super().__init__(id=id, instructions=self._memory_instructions if inject_context else None)
        for fn in (recall, context, expand):
            self.add_function(fn, takes_ctx=False, name=fn.__name__,
                              description=TOOL_HELP[fn.__name__])

    async def _memory_instructions(self, ctx: RunContext[Any]) -> str | None:
        query = _prompt(ctx.prompt)
        if not query:
            return None
        block = await self.link.acontext(query, session=self.session)
        return ("Long-term memory (turns recalled for the user's message; cite a handle "
                f"like [3] if you use one):\n{block}")

    async def store(self, result: AgentRunResult[Any]) -> str | None:
        """Store the turn of a finished run (its user prompt and its output, verbatim) and
        write back the recall its context came from; returns the node id (None when the
        run had no text prompt)."""
        prompt = next((_prompt(p.content) for m in result.new_messages()
                       if isinstance(m, ModelRequest) for p in m.parts
                       if isinstance(p, UserPromptPart)), None)
        if not prompt:
            return None
        output = result.output if isinstance(result.output, str) else str(result.output)
        return await self.link.astore(prompt, output or None, session=self.session)
