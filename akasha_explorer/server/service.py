"""The one process that owns a store while it is served (``akasha serve``).

Kuzu lets many processes read a database or one write it, never both; so a live agent and
the notebooks that look inside its memory cannot each open the store. :class:`MemoryService`
holds the one writable :class:`~akasha_explorer.memory.Memory` and serves two kinds of
callers through it, one call at a time (a lock; the store is not thread-safe):

- agents, through the MCP tools of :mod:`.mcp_tools` (:meth:`MemoryService.tool_*`: plain
  JSON in and out, inputs validated, every refusal an :class:`~akasha_explorer.errors.
  AkashaError` with a message that says what to do);
- notebooks, through :meth:`MemoryService.call` — the read and curation API of ``Memory``
  itself, method by method (:data:`READS`, :data:`WRITES`), values carried by
  :mod:`.codec` — which :func:`akasha_explorer.connect` turns back into the same API.

Every write bumps :attr:`MemoryService.version`, so a panel can wait for a change
(:meth:`wait`). The journal is checkpointed into Kuzu on the service's own schedule (every
``checkpoint_seconds`` when commits are pending) and at :meth:`close`.
"""

from __future__ import annotations

import datetime as dt
import logging
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ..config import Settings
from ..errors import AkashaError, InvalidInput
from ..memory import Memory

__all__ = ["NEIGHBOURHOOD", "READS", "WRITES", "MemoryService"]

log = logging.getLogger(__name__)

READS = frozenset({
    "stats", "sessions", "node", "messages", "last_ts", "recall", "context", "expand",
    "health", "anchors", "anchor", "anchors_of", "triples", "episodes", "audit",
    "review.list", "review.get", "communities", "surprises", "ppr", "graph_view",
    "query_log", "search", "plan_writeback", "replay_trace", "has_node", "node_of_message",
    "export",
})
"""``Memory`` methods a client may call that change nothing in the store (recall and
context log the query, as they do on a local store; export writes its output files)."""

WRITES = frozenset({
    "commit", "add_turn", "forget", "rename_anchor", "merge_anchors", "split_anchor",
    "add_alias", "remove_alias", "attach_mention", "detach_mention", "undo",
    "review.approve", "review.reject", "review.edit", "set_episodes", "checkpoint",
})
"""``Memory`` methods a client may call that write."""

NEIGHBOURHOOD = frozenset({"texts", "text", "communities", "has", "strength", "info",
                           "time_of", "times", "session_nodes", "newest", "incident",
                           "edges_among", "neighbours"})
"""Methods of ``mem.neighbourhood()`` a client may call (``neighbourhood.<name>``)."""

_KEEP = 64
"""Recent recalls and context blocks kept so a later tool call can name them."""


def _text(value: Any, name: str, *, limit: int = 200_000, empty: bool = False) -> str:
    if not isinstance(value, str):
        raise InvalidInput(f"{name} must be text, got {type(value).__name__}")
    if not empty and not value.strip():
        raise InvalidInput(f"{name} is empty")
    if len(value) > limit:
        raise InvalidInput(f"{name} has {len(value)} characters; the most is {limit}")
    return value


def _time(value: Any, name: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InvalidInput(f"{name} must be epoch seconds (a number), got {value!r}")
    if not 0.0 < float(value) < 7_258_118_400.0:   # 1970 .. 2200
        raise InvalidInput(f"{name}={value!r} is not a time between 1970 and 2200")
    return float(value)


class MemoryService:
    """One writable store, shared by every caller of the server (see the module docstring).

    >>> MemoryService.__name__
    'MemoryService'
    """

    def __init__(self, path: str | Path, *, checkpoint_seconds: float = 60.0,
                 settings: Settings | None = None) -> None:
        self.path = Path(path).expanduser().resolve()
        self.mem = Memory(self.path, settings)
        self.lock = threading.RLock()
        self.version = 0
        self.started = time.time()
        self.url: str | None = None
        self._changed = threading.Condition(self.lock)
        self._traces: OrderedDict[str, Any] = OrderedDict()
        self._blocks: OrderedDict[str, Any] = OrderedDict()
        self._hoods: dict[Any, Any] = {}
        self._closed = False
        self._stop = threading.Event()
        self._checkpoints = 0
        self._timer = threading.Thread(target=self._checkpoint_loop, args=(checkpoint_seconds,),
                                       name="akasha-checkpoint", daemon=True)
        self._timer.start()

    # -- lifecycle --------------------------------------------------------------------------
    def close(self) -> None:
        """Checkpoint and close the store (idempotent)."""
        self._stop.set()
        with self.lock:
            if self._closed:
                return
            self._closed = True
            self.mem.close()
            self._changed.notify_all()

    def _checkpoint_loop(self, every: float) -> None:
        while not self._stop.wait(every):
            with self.lock:
                if self._closed or not self.mem.journal.pending:
                    continue
                try:
                    self.mem.checkpoint()
                    self._checkpoints += 1
                except AkashaError as e:   # a full disk: the journal keeps every commit
                    log.warning("scheduled checkpoint of %s failed: %s", self.path, e)

    def _run(self, fn: Callable[[], Any], *, writes: bool) -> Any:
        with self.lock:
            if self._closed:
                raise AkashaError(f"the server of {self.path} is shutting down; reconnect later")
            result = fn()
            if writes:
                self.version += 1
                self._changed.notify_all()
            return result

    def wait(self, since: int, timeout: float = 25.0) -> int:
        """Block until :attr:`version` is past ``since`` (or ``timeout`` seconds pass);
        returns the version."""
        with self.lock:
            self._changed.wait_for(lambda: self.version > since or self._closed,
                                   timeout=max(0.0, min(timeout, 120.0)))
            return self.version

    def info(self) -> dict[str, Any]:
        """What a client learns on connecting: the store, its settings, the version."""
        with self.lock:
            m = self.mem
            return {"path": str(self.path), "read_only": False, "version": self.version,
                    "settings": m.settings.to_dict(), "profile": m.settings.profile_name()[0],
                    "model": m.manifest.model, "dim": m.dim, "started": self.started,
                    "pid": __import__("os").getpid(), "url": self.url,
                    "journal_pending": m.journal.pending, "checkpoints": self._checkpoints}

    # -- the notebook API ------------------------------------------------------------------
    def call(self, method: str, args: Sequence[Any] = (), kwargs: dict[str, Any] | None = None
             ) -> Any:
        """Call ``Memory.<method>`` (a dotted name for a namespace, e.g. ``review.approve``)
        if it is in :data:`READS` or :data:`WRITES`; arguments and result are plain values
        (:mod:`.codec` decodes and encodes them around this call)."""
        kw = dict(kwargs or {})
        if method.startswith("neighbourhood."):
            return self._run(lambda: self._hood_call(method.split(".", 1)[1], args, kw),
                             writes=False)
        if method not in READS and method not in WRITES:
            raise InvalidInput(f"{method!r} cannot be called through the server; known: "
                               f"{', '.join(sorted(READS | WRITES))}")

        def run() -> Any:
            target: Any = self.mem
            for part in method.split("."):
                target = getattr(target, part, None)
                if target is None:
                    raise InvalidInput(f"this version of the store has no {method!r}")
            return target(*args, **kw)

        return self._run(run, writes=method in WRITES)

    def _hood_call(self, name: str, args: Sequence[Any], kw: dict[str, Any]) -> Any:
        """One method of a :class:`~akasha_explorer.analysis.neighbourhood.Neighbourhood`
        (``now`` and ``communities`` in ``kw``), kept while nothing writes; ``infos`` is
        :meth:`Neighbourhood.info` of every live node at once (what a picture needs)."""
        now, comm = kw.pop("now", None), kw.pop("communities", None)
        key = (now, None if comm is None else tuple(sorted(comm.items())), self.version)
        hood = self._hoods.get(key)
        if hood is None:
            hood = self.mem.neighbourhood(now=now, communities=comm)
            self._hoods = {key: hood}          # one: a write makes every other stale
        if name == "infos":
            return {"now": hood.now, "infos": {u: hood.info(u) for u in hood.texts()}}
        if name not in NEIGHBOURHOOD:
            raise InvalidInput(f"neighbourhood.{name} cannot be called through the server")
        return getattr(hood, name)(*args, **kw)

    # -- the agent tools (MCP) --------------------------------------------------------------
    def _keep(self, store: OrderedDict[str, Any], value: Any) -> str:
        key = f"r-{uuid.uuid4().hex[:12]}"
        store[key] = value
        while len(store) > _KEEP:
            store.popitem(last=False)
        return key

    def _excerpt(self, uid: str, trace: Any, limit: int = 240) -> str:
        msgs = trace.messages.get(uid) or []
        text = " / ".join(f"{m.get('speaker') or m.get('role')}: {m.get('text') or ''}"
                          for m in msgs)
        return text if len(text) <= limit else text[: limit - 1] + "…"

    def tool_recall(self, query: str, now: float | None = None, session: str | None = None,
                    limit: int = 10) -> dict[str, Any]:
        """Recall ``query``: the floor (what an agent sees first) and the activated items,
        each with node id, score, source and an excerpt; a dry run (logged). The returned
        ``recall_id`` can be passed to ``add_turn`` to write this recall back."""
        query = _text(query, "query", limit=20_000)
        when = _time(now, "now")
        if not 1 <= int(limit) <= 100:
            raise InvalidInput(f"limit={limit!r}: give 1 to 100")

        def run() -> dict[str, Any]:
            t = self.mem.recall(query, now=when, session=session)
            rid = self._keep(self._traces, t)
            floor = t.first_block()
            return {
                "recall_id": rid, "query": query, "now": t.now, "relevant": t.relevant,
                "floor": [{"node": u, "score": s, "source": src, "text": self._excerpt(u, t)}
                          for u, s, src in list(zip(floor.uids, floor.scores, floor.sources,
                                                    strict=True))[:limit]],
                "activated": [{"node": u, "score": s, "source": src}
                              for u, s, src in zip(t.activation.uids, t.activation.scores,
                                                   t.activation.sources, strict=True)]}

        return self._run(run, writes=True)

    def tool_context(self, query: str, budget_tokens: int | None = None,
                     now: float | None = None, session: str | None = None,
                     tz: str | None = None) -> dict[str, Any]:
        """The context block for ``query`` (handles ``[n]``, verbatim text within the
        budget). ``context_id`` names it for ``expand``; ``recall_id`` for ``add_turn``."""
        query = _text(query, "query", limit=20_000)
        when = _time(now, "now")
        if budget_tokens is not None and not 20 <= int(budget_tokens) <= 200_000:
            raise InvalidInput(f"budget_tokens={budget_tokens!r}: give 20 to 200000")

        def run() -> dict[str, Any]:
            trace = self.mem.recall(query, now=when, session=session)
            block = trace.context(budget_tokens, tz=tz)
            cid = self._keep(self._blocks, block)
            rid = self._keep(self._traces, trace)
            return {"context_id": cid, "recall_id": rid, "text": block.text,
                    "status": block.status, "tokens": block.tokens,
                    "handles": dict(block.handles)}

        return self._run(run, writes=True)

    def tool_add_turn(self, user: str | None, assistant: str | None, session: str,
                      ts: float | None = None, recall_id: str | None = None,
                      reinforce: bool = False) -> dict[str, Any]:
        """Store one turn verbatim (``user`` and/or ``assistant``), then write back the
        recall it was answered with: ``recall_id`` from ``recall``/``context``, or a recall
        of ``user`` made now (the live agent loop)."""
        if user is None and assistant is None:
            raise InvalidInput("add_turn needs user or assistant text")
        if user is not None:
            _text(user, "user", limit=2_000_000, empty=True)
        if assistant is not None:
            _text(assistant, "assistant", limit=2_000_000, empty=True)
        _text(session, "session", limit=256)
        when = _time(ts, "ts")

        def run() -> dict[str, Any]:
            trace = None
            if recall_id is not None:
                trace = self._traces.pop(recall_id, None)
                if trace is None:
                    raise InvalidInput(f"no recall {recall_id!r} here (the server keeps the "
                                       f"last {_KEEP}); recall again or leave recall_id out")
            node, used = self.mem.add_turn(user, assistant, session=session, ts=when,
                                           recall=trace, reinforce=bool(reinforce))
            return {"node": node, "session": session,
                    "written_back": list(used.activation.uids) if used is not None else [],
                    "recall_query": used.query if used is not None else None}

        return self._run(run, writes=True)

    def tool_expand(self, handle: str, context_id: str | None = None,
                    around: int | None = None, tz: str | None = None) -> dict[str, Any]:
        """The verbatim turn behind ``handle`` (``[3]`` of a context block, or a node id)
        and its neighbours, sha256-checked."""
        _text(str(handle), "handle", limit=512)
        if around is not None and not 0 <= int(around) <= 10:
            raise InvalidInput(f"around={around!r}: give 0 to 10")

        def run() -> dict[str, Any]:
            block = None
            if context_id is not None:
                block = self._blocks.get(context_id)
                if block is None:
                    raise InvalidInput(f"no context {context_id!r} here (the server keeps the "
                                       f"last {_KEEP}); build the context again")
            x = self.mem.expand(handle, around, trace=block)
            return {"node": x.node, "session": x.session, "verified": x.verified,
                    "tampered": list(x.tampered), "missing": list(x.missing),
                    "text": x.text(tz)}

        return self._run(run, writes=False)

    def tool_forget(self, confirm: bool, session: str | None = None, node: str | None = None,
                    anchor: str | None = None, why: str | None = None) -> dict[str, Any]:
        """Forget a session, a node or an anchor from every file of the store (raw text,
        vectors, edges, mentions, logs naming it). Needs ``confirm=true``."""
        if confirm is not True:
            raise InvalidInput("forget removes the text for good: call it again with "
                               "confirm=true to do it")
        if sum(x is not None for x in (session, node, anchor)) != 1:
            raise InvalidInput("forget one thing: give exactly one of session, node, anchor")
        return self._run(lambda: self.mem.forget(session=session, node=node, anchor=anchor,
                                                 why=why, by="mcp"), writes=True)

    def tool_review_list(self, status: str | None = "pending", kind: str | None = None,
                         limit: int = 20) -> list[dict[str, Any]]:
        """Items waiting on the review queue (or of another status), oldest first."""
        if not 1 <= int(limit) <= 500:
            raise InvalidInput(f"limit={limit!r}: give 1 to 500")

        def run() -> list[dict[str, Any]]:
            items = self.mem.review.list(status=status, kind=kind, limit=int(limit))
            return [{"uid": i.uid, "kind": i.kind, "status": i.status, "detail": i.detail,
                     "confidence": i.confidence, "created_ts": i.created_ts} for i in items]

        return self._run(run, writes=False)

    def tool_review_decide(self, item: str, approve: bool, why: str | None = None
                           ) -> dict[str, Any]:
        """Approve or reject one review item; the decision is audited."""
        _text(item, "item", limit=256)
        fn = self.mem.review.approve if approve else self.mem.review.reject
        audit = self._run(lambda: fn(item, why=why, by="mcp"), writes=True)
        return {"item": item, "decision": "approved" if approve else "rejected",
                "audit": audit}

    def tool_anchors(self, search: str | None = None, kind: str | None = None,
                     limit: int = 50) -> list[dict[str, Any]]:
        """Anchors (people, places, things memories hang on) with aliases and mentions."""
        if not 1 <= int(limit) <= 1000:
            raise InvalidInput(f"limit={limit!r}: give 1 to 1000")
        return self._run(lambda: self.mem.anchors(search, kind=kind)[: int(limit)],
                         writes=False)

    def tool_health(self) -> dict[str, Any]:
        """Recall health from the query log: empty rate, scores, sources, latency, hubs."""
        return self._run(self.mem.health, writes=False)

    def tool_stats(self) -> dict[str, Any]:
        """Counts and facts about the store; ``served_since`` and ``version`` of the
        server."""
        def run() -> dict[str, Any]:
            s = self.mem.stats()
            s["served_since"] = dt.datetime.fromtimestamp(self.started, dt.UTC).isoformat(
                timespec="seconds")
            s["version"] = self.version
            return s

        return self._run(run, writes=False)
