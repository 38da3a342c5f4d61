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

Arguments are checked strictly before a tool runs (:func:`~.wire.bind` against the tool's
own signature): an unknown argument is refused by name, a ``bool`` is a JSON ``true`` /
``false`` and nothing else (``forget`` deletes with ``confirm=true`` only), a number is
never a boolean, texts and counts have limits. Each MCP session is its own client
(:class:`~.service.Caller`): its recalls and context blocks are its own, and what it writes
is audited under the server's principal for it (its token's name, or ``local``). Under the
2026-07-28 protocol an MCP request stands alone (no session): a client's recalls and
context blocks are then known only by the ids it was given (unguessable, and only its
principal's), and ``expand`` of a handle needs the ``context_id``.

Every refusal is an MCP tool error whose text says what to do (an
:class:`~akasha_explorer.errors.AkashaError` message); anything else is logged and answered
"internal error" without its details; the server keeps running.
"""

from __future__ import annotations

import functools
import logging
import time
import uuid
from collections.abc import Callable
from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from .._timing import phase, recording
from ..errors import AkashaError
from . import wire
from .service import Caller, MemoryService
from .timings import timed_request

__all__ = ["TOOLS", "build_mcp"]

log = logging.getLogger(__name__)

TOOLS = ("context", "recall", "add_turn", "expand", "forget", "review_list", "review_approve",
         "review_reject", "anchors", "health", "stats")
"""Tool names, in the order an agent's tool list shows them."""

INSTRUCTIONS = (
    "Long-term memory of this agent (Akasha). Before answering a user, call `context` with "
    "their message and read the block: lines start with handles like [3]; call `expand` "
    "with a handle (and the context_id) for the whole turn around it. After answering, call "
    "`add_turn` with the user's message, your reply, the session id, the recall_id from "
    "`context` and a turn_id of your own (a retry with the same turn_id stores nothing "
    "twice), so the memories used are strengthened and the turn is stored verbatim.")


def caller_of(ctx: Context[Any, Any] | None) -> Caller:
    """The :class:`Caller` of a tool call: principal from the request's guard (stdio: the
    local user who started the server), client = the MCP session."""
    try:
        rc = ctx.request_context if ctx is not None else None
    except ValueError:       # no request context: called outside a session
        rc = None
    if rc is None:
        return Caller(channel="mcp", client="stdio")
    request = getattr(rc, "request", None)
    if request is None:      # stdio: the one client is the agent that started the server
        return Caller(channel="mcp", client="stdio")
    principal = getattr(request.state, "principal", None) or "local"
    sid = request.headers.get("mcp-session-id")
    if not sid:   # the 2026-07-28 protocol: every request stands alone, no session
        return Caller(principal=principal, client="mcp", channel="mcp", stateless=True)
    return Caller(principal=principal, client=f"mcp-{sid[:128]}", channel="mcp")


def _guard(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Turn the store's refusals into MCP tool errors (the message is for the agent); any
    other failure is logged and answered without its details."""
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            with phase("rest"):
                return fn(*args, **kwargs)
        except AkashaError as e:
            raise ToolError(str(e)) from e
        except Exception as e:
            ref = uuid.uuid4().hex[:8]
            log.exception("tool %s failed (ref %s)", fn.__name__, ref)
            raise ToolError(f"{fn.__name__}: the server failed on this call (ref {ref}); its "
                            "log has the details") from e
    return wrapper


class _StrictMCP(MCPServer):
    """An :class:`MCPServer` that checks a call's arguments against the tool's signature
    before the SDK's own (lenient) validation runs."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.signatures: dict[str, Callable[..., Any]] = {}

    async def call_tool(self, name: str, arguments: dict[str, Any],
                        context: Context[Any, Any] | None = None) -> Any:
        rec = _timing_record(context)
        if rec is None:
            return await self._call_tool(name, arguments, context)
        rec["tool"] = name
        t0 = time.perf_counter()
        try:
            with recording(rec):
                return await self._call_tool(name, arguments, context)
        finally:
            rec["call"] = time.perf_counter() - t0
            rec["sdk_call"] = rec["call"] - sum(v for k, v in rec.items()
                                                if k not in ("tool", "call"))

    async def _call_tool(self, name: str, arguments: dict[str, Any],
                         context: Context[Any, Any] | None) -> Any:
        fn = self.signatures.get(name)
        if fn is not None:
            try:
                with phase("validate"):
                    wire.bind(name, fn, [], dict(arguments or {}), principal="local",
                              skip=("ctx",))
            except AkashaError as e:
                raise ToolError(str(e)) from e
        return await super().call_tool(name, arguments, context)


def _timing_record(context: Context[Any, Any] | None) -> dict[str, Any] | None:
    """The timing record of the HTTP request behind a tool call (:mod:`.timings`)."""
    try:
        rc = context.request_context if context is not None else None
    except ValueError:
        return None
    return timed_request(getattr(rc, "request", None))


def build_mcp(service: MemoryService) -> MCPServer:
    """An :class:`MCPServer` whose tools call ``service`` (see the module docstring)."""
    srv = _StrictMCP("akasha", instructions=INSTRUCTIONS,
                     description="Long-term memory of a personal agent: recall, store turns, "
                                 "expand, curate.")
    s = service

    def tool(fn: Callable[..., Any]) -> Callable[..., Any]:
        srv.signatures[fn.__name__] = fn
        return srv.tool()(_guard(fn))

    @tool
    def context(query: str, budget_tokens: int | None = None, now: float | None = None,
                session: str | None = None, tz: str | None = None,
                ctx: Context[Any, Any] | None = None) -> dict[str, Any]:
        """The memory context for `query`: lines like `[3] 2026-10-02 小林: ...` (verbatim
        turns, the most relevant first), within `budget_tokens` (default 1000). `query` is
        the user's question, or the conversation so far with one line per message, each
        labelled (`user: …` / `assistant: …`): its words are then read from the user's
        lines. `now` is epoch seconds (default: the server's clock); `tz` how dates are
        shown (+08:00). Returns text, handles, context_id (for expand) and recall_id (for
        add_turn)."""
        return s.tool_context(caller_of(ctx), query, budget_tokens, now, session, tz)

    @tool
    def recall(query: str, now: float | None = None, session: str | None = None,
               limit: int = 10, ctx: Context[Any, Any] | None = None) -> dict[str, Any]:
        """Recall `query`: the floor (the turns an agent sees first, with node id, score,
        source and an excerpt) and the activated items a write-back would strengthen.
        A dry run; returns recall_id for add_turn."""
        return s.tool_recall(caller_of(ctx), query, now, session, limit)

    @tool
    def add_turn(session: str, user: str | None = None, assistant: str | None = None,
                 ts: float | None = None, recall_id: str | None = None,
                 reinforce: bool = False, turn_id: str | None = None,
                 user_speaker: str | None = None, assistant_speaker: str | None = None,
                 ctx: Context[Any, Any] | None = None) -> dict[str, Any]:
        """Store one turn (the user's message and/or your reply) verbatim in `session`,
        then write back the recall it was answered with (`recall_id` from context/recall,
        or a new recall of `user`). `ts` is epoch seconds (default now). `turn_id`, your own
        id for this turn, makes a retry safe: the same turn_id again stores nothing and
        returns the first node (retried=true). `user_speaker` and `assistant_speaker` are
        the names the two messages are stored under (e.g. the user's name and yours)."""
        return s.tool_add_turn(caller_of(ctx), user, assistant, session, ts, recall_id,
                               reinforce, turn_id, user_speaker, assistant_speaker)

    @tool
    def expand(handle: str, context_id: str | None = None, around: int | None = None,
               tz: str | None = None, ctx: Context[Any, Any] | None = None
               ) -> dict[str, Any]:
        """The verbatim turn behind a handle like `[3]` (of the context named by
        `context_id`, default your latest) or a node id, with `around` neighbouring turns
        each side (default 2), sha256-verified."""
        return s.tool_expand(caller_of(ctx), handle, context_id, around, tz)

    @tool
    def forget(confirm: bool = False, session: str | None = None, node: str | None = None,
               anchor: str | None = None, why: str | None = None,
               ctx: Context[Any, Any] | None = None) -> dict[str, Any]:
        """Forget one session, node or anchor from every file of the memory (text,
        vectors, edges, mentions, log rows naming it). Irreversible: needs confirm=true."""
        return s.tool_forget(caller_of(ctx), confirm, session, node, anchor, why)

    @tool
    def review_list(status: str | None = "pending", kind: str | None = None,
                    limit: int = 20, ctx: Context[Any, Any] | None = None
                    ) -> list[dict[str, Any]]:
        """Review-queue items (default: pending), oldest first: alias merges, uncertain
        facts, injection flags, suggested links."""
        return s.tool_review_list(caller_of(ctx), status, kind, limit)

    @tool
    def review_approve(item: str, why: str | None = None,
                       ctx: Context[Any, Any] | None = None) -> dict[str, Any]:
        """Approve review item `item` (recorded in the audit log with `why`)."""
        return s.tool_review_decide(caller_of(ctx), item, True, why)

    @tool
    def review_reject(item: str, why: str | None = None,
                      ctx: Context[Any, Any] | None = None) -> dict[str, Any]:
        """Reject review item `item` (recorded in the audit log with `why`)."""
        return s.tool_review_decide(caller_of(ctx), item, False, why)

    @tool
    def anchors(search: str | None = None, kind: str | None = None,
                limit: int = 50, ctx: Context[Any, Any] | None = None
                ) -> list[dict[str, Any]]:
        """Anchors (people, places, projects, things) with aliases and mention counts;
        `search` matches names and aliases."""
        return s.tool_anchors(caller_of(ctx), search, kind, limit)

    @tool
    def health(ctx: Context[Any, Any] | None = None) -> dict[str, Any]:
        """Recall health: how often recalls found nothing, score trends, sources,
        latency, edge growth, hubs."""
        return s.tool_health(caller_of(ctx))

    @tool
    def stats(ctx: Context[Any, Any] | None = None) -> dict[str, Any]:
        """Counts and facts about the memory (sessions, messages, turns, edges…)."""
        return s.tool_stats(caller_of(ctx))

    return srv
