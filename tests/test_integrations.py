"""The framework adapters (:mod:`akasha_explorer.integrations`), each driven by its
framework's own test or fake model, no network: a two-turn conversation whose second
prompt carries a fact of the first through the adapter, against a local store (a new one
in ``tmp_path``, the real model) and a served one (``akasha serve`` in a subprocess)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import akasha_explorer as ak
from akasha_explorer.protocol import MemoryAPI

from .served import serving, small_store

FACTS = {
    "langgraph": ("My sister Ilse moved to Porto last spring, she teaches violin there.",
                  "Which city did my sister Ilse move to?", "Porto"),
    "openai_agents": ("Our cat Pimento is allergic to salmon, the vet said so on Monday.",
                      "What is the cat Pimento allergic to?", "salmon"),
    "llama_index": ("The spare key to the garden shed hangs behind the barometer.",
                    "Where is the spare key to the garden shed?", "barometer"),
    "pydantic_ai": ("My bicycle lock code is the year Ravel wrote Bolero, 1928.",
                    "What is my bicycle lock code?", "1928"),
}
"""Per framework: the first turn's fact, the second turn's question, a word the second
prompt must carry."""


@pytest.fixture(scope="module")
def served_url(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> Iterator[str]:
    """One ``akasha serve`` for the module (each test uses sessions of its own)."""
    store = small_store(tmp_path_factory.mktemp("integrations") / "served")
    with serving(store) as (url, _proc):
        yield url


@pytest.fixture(params=["local", "served"])
def memory(request: pytest.FixtureRequest, tmp_path: Path, embedder: Any
           ) -> Iterator[MemoryAPI]:
    """A memory the adapter is given: a new local store, or the served one."""
    if request.param == "local":
        m: MemoryAPI = ak.open(tmp_path / "store")
    else:
        m = ak.connect(request.getfixturevalue("served_url"))
    with m:
        yield m


# -- LangGraph / LangChain -------------------------------------------------------------------
def test_langgraph_two_turns(memory: MemoryAPI) -> None:
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.graph import END, START, StateGraph

    from akasha_explorer.integrations.langgraph import MemoryHooks, MemoryState

    fact, question, word = FACTS["langgraph"]
    model = GenericFakeChatModel(messages=iter([AIMessage("Noted."), AIMessage("In Porto.")]))
    prompts: list[list[Any]] = []

    def agent(state: MemoryState) -> dict[str, Any]:
        prompts.append(state["llm_input_messages"])
        return {"messages": [model.invoke(state["llm_input_messages"])]}

    hooks = MemoryHooks(memory)
    graph = StateGraph(MemoryState)
    graph.add_node("memory", hooks.pre_model_hook)
    graph.add_node("agent", agent)
    graph.add_node("remember", hooks.post_model_hook)
    graph.add_edge(START, "memory")
    graph.add_edge("memory", "agent")
    graph.add_edge("agent", "remember")
    graph.add_edge("remember", END)
    app = graph.compile(checkpointer=InMemorySaver())

    app.invoke({"messages": [HumanMessage(fact)]},
               {"configurable": {"thread_id": "lg-first"}})
    # a new thread: the checkpointer holds nothing of the first, the memory does
    asyncio.run(app.ainvoke({"messages": [HumanMessage(question)]},
                            {"configurable": {"thread_id": "lg-second"}}))
    second = prompts[-1]
    assert isinstance(second[0], SystemMessage) and word in second[0].content
    assert second[-1].content == question
    stored = {s.session for s in memory.sessions()}
    assert {"lg-first", "lg-second"} <= stored


def test_langgraph_tools(memory: MemoryAPI) -> None:
    from akasha_explorer.integrations.langgraph import memory_tools

    fact, question, word = FACTS["langgraph"]
    memory.add_turn(fact, "Noted.", session="lg-tools")
    recall, context, expand = memory_tools(memory)
    assert [t.name for t in (recall, context, expand)] == ["recall", "context", "expand"]
    block = context.invoke({"query": question})
    assert word in block and "[1]" in block
    assert word in expand.invoke({"handle": "[1]"})
    assert word in asyncio.run(recall.ainvoke({"query": question}))


# -- where the frameworks are imported ----------------------------------------------------
FRAMEWORKS = {"langgraph": {"langgraph", "langchain_core"}, "openai_agents": {"agents", "openai"},
              "llama_index": {"llama_index"}, "pydantic_ai": {"pydantic_ai"}}
"""Each integration module and the top-level packages of its framework."""


def test_a_framework_is_imported_by_its_own_module_only() -> None:
    """``import akasha_explorer`` (and the CLI, the server…) works without any framework:
    a framework's packages are imported by its integration module and nowhere else."""
    import ast

    pkg = Path(ak.__file__).parent
    everyone = set().union(*FRAMEWORKS.values())
    bad = []
    for path in sorted(pkg.rglob("*.py")):
        rel = path.relative_to(pkg).as_posix()
        own = FRAMEWORKS.get(path.stem, set()) if rel.startswith("integrations/") else set()
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level \
                else []
            bad += [f"{rel} imports {n}" for n in names
                    if n.split(".")[0] in everyone - own]
    assert not bad, bad


# -- OpenAI Agents SDK -----------------------------------------------------------------------
def _agents_model(replies: list[Any]) -> Any:
    """The SDK's ``Model`` interface answering ``replies`` in turn (a text, or a
    ``(tool, arguments)`` call) and keeping every input it was given in ``.inputs``."""
    from agents.items import ModelResponse
    from agents.models.interface import Model
    from agents.usage import Usage
    from openai.types.responses import (
        ResponseFunctionToolCall,
        ResponseOutputMessage,
        ResponseOutputText,
    )

    class FakeModel(Model):
        def __init__(self) -> None:
            self.inputs: list[Any] = []
            self.replies = list(replies)

        async def get_response(self, system_instructions: Any, input: Any, *args: Any,
                               **kwargs: Any) -> ModelResponse:
            self.inputs.append(input)
            reply = self.replies.pop(0)
            if isinstance(reply, tuple):
                out: Any = ResponseFunctionToolCall(
                    type="function_call", call_id=f"call-{len(self.inputs)}", name=reply[0],
                    arguments=reply[1], id=f"fc-{len(self.inputs)}", status="completed")
            else:
                out = ResponseOutputMessage(
                    id=f"msg-{len(self.inputs)}", type="message", role="assistant",
                    status="completed",
                    content=[ResponseOutputText(type="output_text", text=reply, annotations=[])])
            return ModelResponse(output=[out], usage=Usage(), response_id=None)

        def stream_response(self, *args: Any, **kwargs: Any) -> Any:
            raise NotImplementedError

    return FakeModel()


def test_openai_agents_two_turns(memory: MemoryAPI) -> None:
    from agents import Agent, Runner

    from akasha_explorer.integrations.openai_agents import AkashaSession

    fact, question, word = FACTS["openai_agents"]
    model = _agents_model(["Noted, no salmon for Pimento.", "Salmon."])
    agent = Agent(name="assistant", instructions="Be brief.", model=model)
    asyncio.run(Runner.run(agent, fact, session=AkashaSession("oa-chat", memory)))
    # a new Session object of the same conversation: its history comes from the store
    again = AkashaSession("oa-chat", memory)
    assert asyncio.run(again.get_items()) == [
        {"role": "user", "content": fact},
        {"role": "assistant", "content": "Noted, no salmon for Pimento."}]
    asyncio.run(Runner.run(agent, question, session=again))
    second = model.inputs[-1]
    assert any(word in str(i.get("content")) for i in second[:-1])
    assert second[-1]["content"] == question
    assert len(asyncio.run(again.get_items())) == 4
    assert asyncio.run(again.pop_item()) == {"role": "assistant", "content": "Salmon."}
    assert len(asyncio.run(AkashaSession("oa-chat", memory).get_items())) == 3
    asyncio.run(again.clear_session())
    assert asyncio.run(AkashaSession("oa-chat", memory).get_items()) == []


def test_openai_agents_tools_and_items_kept_verbatim(memory: MemoryAPI) -> None:
    """A new conversation reaches the first one's fact through the ``context`` tool; the
    tool call and its output are kept in the session as they were."""
    from agents import Agent, Runner

    from akasha_explorer.integrations.openai_agents import AkashaSession, function_tools

    fact, question, word = FACTS["openai_agents"]
    memory.add_turn(fact, "Noted.", session="oa-before")
    model = _agents_model([("context", '{"query": "Pimento allergic"}'), "Salmon."])
    agent = Agent(name="assistant", model=model, tools=function_tools(memory))
    assert [t.name for t in agent.tools] == ["recall", "context", "expand"]
    session = AkashaSession("oa-tools", memory)
    asyncio.run(Runner.run(agent, question, session=session))
    tool_output = model.inputs[-1][-1]
    assert tool_output["type"] == "function_call_output" and word in tool_output["output"]
    items = asyncio.run(AkashaSession("oa-tools", memory).get_items())
    assert [i.get("type", "message") for i in items] == [
        "message", "function_call", "function_call_output", "message"]
    assert items[1]["name"] == "context" and items[2]["output"] == tool_output["output"]


# -- LlamaIndex --------------------------------------------------------------------------------
def test_llama_index_two_turns(memory: MemoryAPI) -> None:
    """Turns leave the short-term history into the block (stored verbatim); a new
    conversation's prompt carries the fact (MockLLM echoes the prompt it was given)."""
    from llama_index.core.chat_engine import SimpleChatEngine
    from llama_index.core.llms import MockLLM
    from llama_index.core.memory import Memory

    from akasha_explorer.integrations.llama_index import AkashaMemoryBlock

    fact, question, word = FACTS["llama_index"]
    block = AkashaMemoryBlock(memory=memory)
    first = Memory.from_defaults(session_id="li-first", token_limit=60,
                                 memory_blocks=[block])
    engine = SimpleChatEngine.from_defaults(llm=MockLLM(), memory=first)
    engine.chat(fact)
    engine.chat("Thanks, that is all for today.")
    stored = [m.text for s in memory.sessions() if s.session == "li-first"
              for n in memory.neighbourhood().session_nodes("li-first") or []
              for m in memory.messages(n)]
    assert fact in stored
    second = Memory.from_defaults(session_id="li-second", memory_blocks=[block])
    engine = SimpleChatEngine.from_defaults(llm=MockLLM(), memory=second)
    echo = str(engine.chat(question))
    assert word in echo and "long_term_memory" in echo


# -- pydantic-ai -----------------------------------------------------------------------------
def _pydantic_model(seen: list[tuple[list[Any], Any]]) -> Any:
    """A ``FunctionModel``: on the first request of a run it calls the ``context`` tool
    with the prompt, then answers; every request's messages and info land in ``seen``."""
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart, ToolReturnPart
    from pydantic_ai.models.function import FunctionModel

    def answer(messages: list[Any], info: Any) -> ModelResponse:
        seen.append((messages, info))
        last = messages[-1].parts
        if any(isinstance(p, ToolReturnPart) for p in last) or not info.function_tools:
            return ModelResponse(parts=[TextPart("Noted.")])
        prompt = next(p.content for p in last if p.part_kind == "user-prompt")
        return ModelResponse(parts=[ToolCallPart("context", {"query": prompt})])

    return FunctionModel(answer)


def test_pydantic_ai_two_turns(memory: MemoryAPI) -> None:
    from pydantic_ai import Agent
    from pydantic_ai.messages import ToolReturnPart

    from akasha_explorer.integrations.pydantic_ai import AkashaToolset

    fact, question, word = FACTS["pydantic_ai"]
    seen: list[tuple[list[Any], Any]] = []
    toolset = AkashaToolset(memory, session="pa-chat")
    agent = Agent(_pydantic_model(seen), toolsets=[toolset])

    async def conversation() -> None:
        await toolset.store(await agent.run(fact))
        await toolset.store(await agent.run(question))

    asyncio.run(conversation())
    returned = [p.content for p in seen[-1][0][-1].parts if isinstance(p, ToolReturnPart)]
    assert returned and word in returned[0]
    nodes = memory.neighbourhood().session_nodes("pa-chat") or []
    assert [m.text for m in memory.messages(nodes[0])] == [fact, "Noted."]
    assert len(nodes) == 2


def test_pydantic_ai_context_as_instructions(memory: MemoryAPI) -> None:
    from pydantic_ai import Agent

    from akasha_explorer.integrations.pydantic_ai import AkashaToolset

    fact, question, word = FACTS["pydantic_ai"]
    memory.add_turn(fact, "Noted.", session="pa-before")
    seen: list[tuple[list[Any], Any]] = []
    agent = Agent(_pydantic_model(seen), toolsets=[
        AkashaToolset(memory, session="pa-inject", inject_context=True)])
    asyncio.run(agent.run(question))
    assert word in (seen[0][1].instructions or "")


# -- the README's "Use it from your agent" ---------------------------------------------------
README = Path(__file__).resolve().parent.parent / "README.md"


def _readme_blocks() -> dict[str, tuple[int, str, str]]:
    """The section's code blocks: the extra each Python block installs (its first line) ->
    (line, language, code); the MCP config under ``mcp``."""
    import re

    text = README.read_text("utf-8")
    start = text.index("## Use it from your agent")
    section = text[start:text.index("\n## ", start + 1)]
    line0 = text[:start].count("\n") + 1
    out: dict[str, tuple[int, str, str]] = {}
    for m in re.finditer(r"```(\w+)\n(.*?)```", section, re.S):
        lang, code = m.group(1), m.group(2)
        extra = re.match(r'# pip install "akasha-explorer\[([\w-]+)\]"', code)
        key = extra.group(1) if extra else lang
        out[key] = (line0 + section[:m.start()].count("\n") + 1, lang, code)
    return out


def _readme_models(extra: str) -> dict[str, Any]:
    """What the README's blocks call ``model`` / ``llm``: the framework's fake model."""
    if extra == "langgraph":
        from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
        from langchain_core.messages import AIMessage
        return {"model": GenericFakeChatModel(messages=iter([AIMessage("In Porto.")]))}
    if extra == "openai-agents":
        return {"model": _agents_model(["In Porto."])}
    if extra == "llama-index":
        from llama_index.core.llms import MockLLM
        return {"llm": MockLLM()}
    return {"model": _pydantic_model([])}


def test_readme_has_a_block_per_framework_and_the_mcp_config() -> None:
    import json

    blocks = _readme_blocks()
    assert set(blocks) == {"langgraph", "openai-agents", "llama-index", "pydantic-ai", "json"}
    for extra, (_line, _lang, code) in blocks.items():
        if extra != "json":
            assert len(code.strip().splitlines()) <= 16, extra
    assert "mcpServers" in json.loads(blocks["json"][2])


@pytest.mark.parametrize("extra", ["langgraph", "openai-agents", "llama-index", "pydantic-ai"])
def test_readme_block_runs(extra: str, tmp_path: Path, embedder: Any,
                           monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
                           ) -> None:
    """Each framework's README block, as written, against a new store in the working
    folder (``model`` / ``llm`` being the framework's fake model)."""
    line, _lang, code = _readme_blocks()[extra]
    monkeypatch.chdir(tmp_path)
    ns: dict[str, Any] = {"__name__": "readme", **_readme_models(extra)}
    try:
        exec(compile(code, f"{README}:{line}", "exec"), ns)
    finally:
        if "mem" in ns:
            ns["mem"].close()
    with ak.open(tmp_path / "my_store", read_only=True) as mem:
        assert mem.path.is_dir()
        if extra != "llama-index":  # LlamaIndex stores turns as they leave short-term memory
            assert "chat-1" in {s.session for s in mem.sessions()}
