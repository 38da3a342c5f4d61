"""The MCP tools of ``akasha serve`` (official ``mcp`` SDK, :class:`MCPServer`): the live
loop and curation for an agent, over stdio or streamable HTTP at ``/mcp``.

| tool | what it does |
|---|---|
| ``context`` | the context block for a query (handles ``[n]``, verbatim, within a budget) |
| ``recall`` | the floor and the activated items of a query, with scores and sources |
| ``add_turn`` | store one turn verbatim and write back the recall it was answered with |
| ``expand`` | the verbatim turn behind a handle (or node id) and its neighbours, verified |
| ``forget`` | forget a session / node / anchor everywhere (needs ``confirm=true``) |
| ``review_list`` / ``review_approve`` / ``review_reject`` | the review queue |
| ``anchors`` | people, places and things the memories hang on |
| ``health`` / ``stats`` | recall health from the query log; counts |

Every refusal is an MCP tool error whose text says what to do (an
:class:`~akasha_explorer.errors.AkashaError` message); the server keeps running.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from ..errors import AkashaError
from .service import MemoryService

__all__ = ["TOOLS", "build_mcp"]

log = logging.getLogger(__name__)

TOOLS = ("context", "recall", "add_turn", "expand", "forget", "review_list", "review_approve",
         "review_reject", "anchors", "health", "stats")
"""Tool names, in the order an agent's tool list shows them."""

INSTRUCTIONS = (
    "Long-term memory of this agent (Akasha). Before answering a user, call `context` with "
    "their message and read the block: lines start with handles like [3]; call `expand` "
    "with a handle (and the context_id) for the whole turn around it. After answering, call "
    "`add_turn` with the user's message, your reply, the session id and the recall_id from "
    "`context`, so the memories used are strengthened and the turn is stored verbatim.")


def _guard(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Turn the store's refusals into MCP tool errors (the message is for the agent)."""
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except AkashaError as e:
            raise ToolError(str(e)) from e
        except (TypeError, ValueError) as e:
            log.warning("tool %s refused %r: %s", fn.__name__, kwargs, e)
            raise ToolError(f"{fn.__name__}: {e}") from e
    return wrapper


def build_mcp(service: MemoryService) -> MCPServer:
    """An :class:`MCPServer` whose tools call ``service`` (see the module docstring)."""
    srv = MCPServer("akasha", instructions=INSTRUCTIONS,
                    description="Long-term memory of a personal agent: recall, store turns, "
                                "expand, curate.")
    s = service

    @srv.tool()
    @_guard
    def context(query: str, budget_tokens: int | None = None, now: float | None = None,
                session: str | None = None, tz: str | None = None) -> dict[str, Any]:
        """The memory context for `query`: lines like `[3] 2026-10-02 小林: ...` (verbatim
        turns, the most relevant first), within `budget_tokens` (default 1000). `now` is
        epoch seconds (default: the server's clock); `tz` how dates are shown (+08:00).
        Returns text, handles, context_id (for expand) and recall_id (for add_turn)."""
        return s.tool_context(query, budget_tokens, now, session, tz)

    @srv.tool()
    @_guard
    def recall(query: str, now: float | None = None, session: str | None = None,
               limit: int = 10) -> dict[str, Any]:
        """Recall `query`: the floor (the turns an agent sees first, with node id, score,
        source and an excerpt) and the activated items a write-back would strengthen.
        A dry run; returns recall_id for add_turn."""
        return s.tool_recall(query, now, session, limit)

    @srv.tool()
    @_guard
    def add_turn(session: str, user: str | None = None, assistant: str | None = None,
                 ts: float | None = None, recall_id: str | None = None,
                 reinforce: bool = False) -> dict[str, Any]:
        """Store one turn (the user's message and/or your reply) verbatim in `session`,
        then write back the recall it was answered with (`recall_id` from context/recall,
        or a new recall of `user`). `ts` is epoch seconds (default now)."""
        return s.tool_add_turn(user, assistant, session, ts, recall_id, reinforce)

    @srv.tool()
    @_guard
    def expand(handle: str, context_id: str | None = None, around: int | None = None,
               tz: str | None = None) -> dict[str, Any]:
        """The verbatim turn behind a handle like `[3]` (of the context named by
        `context_id`, default the latest) or a node id, with `around` neighbouring turns
        each side (default 2), sha256-verified."""
        return s.tool_expand(handle, context_id, around, tz)

    @srv.tool()
    @_guard
    def forget(confirm: bool = False, session: str | None = None, node: str | None = None,
               anchor: str | None = None, why: str | None = None) -> dict[str, Any]:
        """Forget one session, node or anchor from every file of the memory (text,
        vectors, edges, mentions, log rows naming it). Irreversible: needs confirm=true."""
        return s.tool_forget(confirm, session, node, anchor, why)

    @srv.tool()
    @_guard
    def review_list(status: str | None = "pending", kind: str | None = None,
                    limit: int = 20) -> list[dict[str, Any]]:
        """Review-queue items (default: pending), oldest first: alias merges, uncertain
        facts, injection flags, suggested links."""
        return s.tool_review_list(status, kind, limit)

    @srv.tool()
    @_guard
    def review_approve(item: str, why: str | None = None) -> dict[str, Any]:
        """Approve review item `item` (recorded in the audit log with `why`)."""
        return s.tool_review_decide(item, True, why)

    @srv.tool()
    @_guard
    def review_reject(item: str, why: str | None = None) -> dict[str, Any]:
        """Reject review item `item` (recorded in the audit log with `why`)."""
        return s.tool_review_decide(item, False, why)

    @srv.tool()
    @_guard
    def anchors(search: str | None = None, kind: str | None = None,
                limit: int = 50) -> list[dict[str, Any]]:
        """Anchors (people, places, projects, things) with aliases and mention counts;
        `search` matches names and aliases."""
        return s.tool_anchors(search, kind, limit)

    @srv.tool()
    @_guard
    def health() -> dict[str, Any]:
        """Recall health: how often recalls found nothing, score trends, sources,
        latency, edge growth, hubs."""
        return s.tool_health()

    @srv.tool()
    @_guard
    def stats() -> dict[str, Any]:
        """Counts and facts about the memory (sessions, messages, turns, edges…)."""
        return s.tool_stats()

    return srv
