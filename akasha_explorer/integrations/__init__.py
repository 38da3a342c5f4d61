"""Adapters for agent frameworks, each a thin layer over
:class:`~akasha_explorer.protocol.MemoryAPI` — so each works with a local store
(``akasha_explorer.open(path)``) and a served one (``akasha_explorer.connect(url)``) alike.

- :mod:`.langgraph` — LangGraph / LangChain (extra ``[langgraph]``): ``recall``,
  ``context`` and ``expand`` tools; a pre-model hook that puts the context block into the
  prompt and a post-model hook that stores the turn.
- :mod:`.openai_agents` — the OpenAI Agents SDK (``[openai-agents]``): a ``Session`` that
  keeps the conversation's items verbatim, and function tools.
- :mod:`.llama_index` — LlamaIndex (``[llama-index]``): a memory block for its ``Memory``.
- :mod:`.pydantic_ai` — pydantic-ai (``[pydantic-ai]``): a toolset.

A framework is imported by its own module only: ``import akasha_explorer`` works without
any of them installed, and ``import akasha_explorer.integrations.langgraph`` needs
``pip install "akasha-explorer[langgraph]"``. What the adapters share (the texts the tools
return, the recall a turn was answered with) lives in :mod:`._core`.
"""
