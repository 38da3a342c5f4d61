"""Memory methods for agent-facing output: context, expand, health (issue 9). Mixed into
:class:`~akasha_explorer.memory.Memory`.

Handles. A context block names its items ``[1]``, ``[2]``, … in an order that depends on
the trace only, so a handle is resolved against the recall it came from. :meth:`expand`
takes it from, in this order: the ``trace=`` argument (a ``RecallTrace`` or a
``ContextBlock``); the last recall this ``Memory`` made; the last block
:meth:`BriefMixin.context` built on this store (saved in the store's Meta table under
``brief.last_context``, so ``akasha expand STORE [3]`` works after ``akasha context``).
A node uid is always accepted instead of a handle.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import DiskFull, InvalidInput, NotFound
from ..vectors import sql_str
from .context import ContextBlock, build_context, context_items, normalize_handle
from .expand import Expansion, expand_node
from .health import recall_health
from .tokens import Tokenizer

if TYPE_CHECKING:
    from ..engine.trace import RecallTrace
    from ..memory import Memory

__all__ = ["BriefMixin"]

_log = logging.getLogger(__name__)  # (context() has a parameter named log)

LAST_CONTEXT_KEY = "brief.last_context"
"""Meta key holding the handle map of the last :meth:`BriefMixin.context` block."""

_MSG_COLUMNS = ["uid", "node", "seq", "ts", "role", "speaker", "text", "sha256", "flags"]


class BriefMixin:
    """Context / expand / health part of the Memory facade."""

    _brief_last: RecallTrace | None = None

    def _after_recall(self: Memory, trace: RecallTrace) -> None:  # type: ignore[misc]
        """Hook run by ``Memory.recall`` on every trace before it is returned: attach the
        stored messages of the first block, ripple and activation items (what
        ``trace.context()`` shows) and remember the trace for handle look-ups."""
        uids = list(dict.fromkeys(trace.first_block().uids + trace.ripple.uids
                                  + trace.activation.uids))
        trace.messages = self._brief_messages(uids)
        self._brief_last = trace

    def _brief_messages(self: Memory, uids: list[str]) -> dict[str, list[dict[str, Any]]]:  # type: ignore[misc]
        """node uid -> its messages (uid, node, role, speaker, ts, text, sha256, flags), in
        node order: from the texts the mirror holds (issue 14: a LanceDB read here cost
        ~7.5 ms of every recall at 10k nodes), LanceDB read only for nodes it holds none."""
        if not uids:
            return {}
        out, missing = self.mirror.message_rows(uids)
        if not missing:
            return out
        rows = self.vectors.read("messages", columns=_MSG_COLUMNS, where="node IN ("
                                 + ", ".join(sql_str(u) for u in missing) + ")").to_pylist()
        by_uid = {r["uid"]: r for r in rows}
        n = self.mirror.nodes
        for u in missing:
            i = n.index[u]
            a, k = int(n.first_msg[i]), int(n.n_msg[i])
            out[u] = [{"uid": m, "node": u, "role": r["role"], "speaker": r["speaker"],
                       "ts": float(r["ts"]), "text": r["text"], "sha256": r["sha256"],
                       "flags": list(r["flags"] or ())}
                      for m in n.msg_uid[a:a + k] if (r := by_uid.get(m)) is not None]
        return {u: out[u] for u in uids if u in out}

    # -- context -------------------------------------------------------------------------------
    def context(self: Memory, query: str, *, budget_tokens: int | None = None,  # type: ignore[misc]
                style: str = "brief", now: float | None = None, session: str | None = None,
                tokenizer: Tokenizer | None = None, tz: str | dt.tzinfo | None = None,
                log: bool = True) -> ContextBlock:
        """Recall ``query`` (a dry run, see ``Memory.recall``) and build its context block
        (:func:`~akasha_explorer.brief.context.build_context`). The budget defaults to the
        store's ``CONTEXT_BUDGET``. On a writable store the block's handle map is saved, so
        ``expand("[n]")`` resolves in a later process too."""
        trace = self.recall(query, now=now, session=session, log=log)
        block = build_context(trace, budget_tokens or self.settings.CONTEXT_BUDGET, style,
                              tokenizer=tokenizer, floor_items=self.settings.CONTEXT_FLOOR_ITEMS,
                              tz=tz)
        if not self.read_only:
            try:
                self.graph.meta_set(LAST_CONTEXT_KEY, json.dumps(
                    {"query": block.query, "now": block.now, "handles": block.handles},
                    ensure_ascii=False))
            except DiskFull as e:  # the block is fine; only `expand` in a later process waits
                _log.warning("context handles not saved (a later `akasha expand` cannot "
                            "resolve them): %s", e)
        return block

    # -- expand --------------------------------------------------------------------------------
    def expand(self: Memory, handle_or_node_id: str | int, around: int | None = None, *,  # type: ignore[misc]
               trace: RecallTrace | ContextBlock | None = None) -> Expansion:
        """The verbatim messages of a node and up to ``around`` neighbouring turns each side
        of it in its session (default ``EXPAND_AROUND``), sha256-checked: ``verified`` is
        True only if every message matches. ``handle_or_node_id`` is a node uid or a handle
        like ``"[3]"`` (resolved as the module docstring says).
        """
        self._check_open()
        n = self.settings.EXPAND_AROUND if around is None else around
        key = str(handle_or_node_id).strip()
        if key in self.mirror.nodes.index:
            return expand_node(self, key, n)
        try:
            handle = normalize_handle(handle_or_node_id)
        except InvalidInput:
            self._row(key)  # raises NotFound with what to do next
            raise
        node, source = self._resolve_handle(handle, trace)
        return expand_node(self, node, n, handle=handle, source=source)

    def _resolve_handle(self: Memory, handle: str,  # type: ignore[misc]
                        trace: RecallTrace | ContextBlock | None) -> tuple[str, str]:
        if isinstance(trace, ContextBlock):
            handles, query = trace.handles, trace.query
        elif trace is not None or self._brief_last is not None:
            t = trace if trace is not None else self._brief_last
            handles = {i.handle: i.node for i in context_items(t)}
            query = t.query  # type: ignore[union-attr]
        else:
            saved = self.graph.meta_get(LAST_CONTEXT_KEY)
            if saved is None:
                raise InvalidInput(f"{handle} is a handle of a context block, and this store has "
                                   "none yet: pass trace=..., build one with `akasha context`, "
                                   "or give a node uid")
            data = json.loads(saved)
            handles, query = data["handles"], data["query"]
        if handle not in handles:
            raise NotFound(f"no handle {handle} in the context for {query!r} (it has "
                           f"{len(handles)} items); recall again or give a node uid")
        return handles[handle], f"the context for {query!r}"

    # -- health --------------------------------------------------------------------------------
    def health(self: Memory, *, window: float | None = None, windows: int = 14,  # type: ignore[misc]
               top_hubs: int = 10) -> dict[str, Any]:
        """Recall health from the query log (see :mod:`akasha_explorer.brief.health`):
        empty-activation rate, score trends per window, source mix, latency percentiles,
        edge growth, top hubs by fan. ``window`` defaults to ``HEALTH_WINDOW`` seconds."""
        self._check_open()
        cols = ("uid", "ts", "query", "session", "method", "n_seeds", "n_pool", "n_activated",
                "n_dense", "n_ripple", "empty", "committed", "latency_ms", "seeds", "items")
        rows = self.graph.rows("MATCH (q:QueryLog) RETURN "
                               + ", ".join(f"q.{c} AS {c}" for c in cols))
        seen = {r["uid"] for r in rows}
        rows += [dict(r) for r in self.mirror.pending_queries if r["uid"] not in seen]
        nodes, edges = self.mirror.nodes, self.mirror.edges
        alive = np.flatnonzero(nodes.alive)
        fans = edges.fan_of(alive) if alive.size else np.zeros(0, np.int64)
        order = sorted(range(alive.size), key=lambda k: (-int(fans[k]), int(alive[k])))
        fan = {nodes.uid[int(alive[k])]: int(fans[k]) for k in order[:top_hubs]}
        info = {u: {"session": nodes.sessions[int(nodes.session[i])],
                    "recall_count": int(nodes.recall_count[i])}
                for u in fan for i in [nodes.index[u]]}
        return recall_health(rows, edge_count=int(edges.n_alive()), node_count=int(alive.size),
                             edge_last_ts=edges.last_ts[edges.alive], fan=fan, node_info=info,
                             window=window or self.settings.HEALTH_WINDOW, windows=windows,
                             top_hubs=top_hubs)
