"""Agent-facing output of one store (issue 9): the messages a trace shows, context handles,
expand, health — functions of a :class:`~akasha_explorer.store.Store` (``Memory``
delegates its ``context``, ``expand`` and ``health`` here, and calls
:func:`attach_messages` on every recall).

Handles. A context block names its items ``[1]``, ``[2]``, … in an order that depends on
the trace only, so a handle is resolved against the recall it came from. :func:`expand`
takes it from, in this order: the ``trace=`` argument (a ``RecallTrace`` or a
``ContextBlock``); the last recall made through the store (``Store.last_trace``); the last
block :func:`save_handles` saved in the store's cache folder, ``cache/last_context.json``
(so ``akasha expand STORE [3]`` works after ``akasha context``). A node uid is always
accepted instead of a handle.

The handle map is a file, not a Kuzu row (it was Meta ``brief.last_context`` until stop 41):
a Kuzu write is an auto-commit with its ``CHECKPOINT``, and — worse — it first folds the
turns waiting in the journal (``Store.fold_graph``), so an in-process agent alternating
``Memory.context`` and ``add_turn`` paid a one-turn fold (~150 ms) on every ``context``
(measured on the demo store: ``context`` p50 151 ms in-process against 26 ms served, where
the server never saved). The file is written whole by a rename and not fsync'ed: after a
crash it holds this block or the one before; a forget removes it with the rest of the cache.
"""

from __future__ import annotations

import json
import logging
import os
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import InvalidInput, NotFound
from ..vectors import queries as vq
from .context import ContextBlock, context_items, normalize_handle
from .expand import Expansion, expand_node
from .health import recall_health

if TYPE_CHECKING:
    from ..engine.trace import RecallTrace
    from ..store.store import Store

__all__ = ["LAST_CONTEXT_FILE", "attach_messages", "expand", "health", "messages_of",
           "save_handles", "saved_handles"]

log = logging.getLogger(__name__)

LAST_CONTEXT_FILE = "last_context.json"
"""The file in the store's cache folder holding the last saved block's handle map."""

_MSG_COLUMNS = ["uid", "node", "seq", "ts", "role", "speaker", "text", "sha256", "flags"]


def attach_messages(store: Store, trace: RecallTrace) -> None:
    """Put the stored messages of the trace's first block, ripple and activation items
    (what ``trace.context()`` shows) on ``trace.messages``."""
    uids = list(dict.fromkeys(trace.first_block().uids + trace.ripple.uids
                              + trace.activation.uids))
    trace.messages = messages_of(store, uids)


def messages_of(store: Store, uids: list[str]) -> dict[str, list[dict[str, Any]]]:
    """node uid -> its messages (uid, node, role, speaker, ts, text, sha256, flags), in
    node order: from the texts the mirror holds (issue 14: a LanceDB read here cost ~7.5 ms
    of every recall at 10k nodes); one LanceDB read for the nodes it holds none of."""
    if not uids:
        return {}
    out, missing = store.mirror.message_rows(uids)
    if not missing:
        return out
    rows = vq.messages_of_nodes(store.vectors, missing, _MSG_COLUMNS).to_pylist()
    by_uid = {r["uid"]: r for r in rows}
    n = store.mirror.nodes
    for u in missing:
        i = n.index[u]
        a, k = int(n.first_msg[i]), int(n.n_msg[i])
        out[u] = [{"uid": m, "node": u, "role": r["role"], "speaker": r["speaker"],
                   "ts": float(r["ts"]), "text": r["text"], "sha256": r["sha256"],
                   "flags": list(r["flags"] or ())}
                  for m in n.msg_uid[a:a + k] if (r := by_uid.get(m)) is not None]
    return {u: out[u] for u in uids if u in out}


# -- context -------------------------------------------------------------------------------------
def save_handles(store: Store, block: ContextBlock) -> None:
    """Save the handle map of ``block`` (writable stores) to the store's cache folder, so
    ``expand("[n]")`` resolves in a later process too; a failed write only logs (the block
    itself is fine)."""
    if store.read_only:
        return
    path = store.cache_dir / LAST_CONTEXT_FILE
    tmp = path.with_name(path.name + ".tmp")
    try:
        store.cache_dir.mkdir(exist_ok=True)
        tmp.write_text(json.dumps({"query": block.query, "now": block.now,
                                   "handles": block.handles}, ensure_ascii=False), "utf-8")
        os.replace(tmp, path)
    except OSError as e:  # the block is fine; only `expand` in a later process waits
        log.warning("context handles not saved (a later `akasha expand` cannot "
                    "resolve them): %s", e)


def saved_handles(store: Store) -> dict[str, Any] | None:
    """The last handle map :func:`save_handles` saved (``query``, ``now``, ``handles``), or
    None (none saved, or a file a crash left unreadable)."""
    try:
        data = json.loads((store.cache_dir / LAST_CONTEXT_FILE).read_text("utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and isinstance(data.get("handles"), dict) else None


# -- expand --------------------------------------------------------------------------------------
def expand(store: Store, handle_or_node_id: str | int, around: int | None = None, *,
           trace: RecallTrace | ContextBlock | None = None) -> Expansion:
    """The verbatim messages of a node and up to ``around`` neighbouring turns each side
    of it in its session (default ``EXPAND_AROUND``), sha256-checked: ``verified`` is
    True only if every message matches. ``handle_or_node_id`` is a node uid or a handle
    like ``"[3]"`` (resolved as the module docstring says)."""
    store.check_open()
    n = store.settings.EXPAND_AROUND if around is None else around
    key = str(handle_or_node_id).strip()
    if key in store.mirror.nodes.index:
        return expand_node(store, key, n)
    try:
        handle = normalize_handle(handle_or_node_id)
    except InvalidInput:
        store.row(key)  # raises NotFound with what to do next
        raise
    node, source = _resolve_handle(store, handle, trace)
    return expand_node(store, node, n, handle=handle, source=source)


def _resolve_handle(store: Store, handle: str,
                    trace: RecallTrace | ContextBlock | None) -> tuple[str, str]:
    last = trace if trace is not None else store.last_trace
    if isinstance(last, ContextBlock):
        handles, query = last.handles, last.query
    elif last is not None:
        handles = {i.handle: i.node for i in context_items(last)}
        query = last.query
    else:
        data = saved_handles(store)
        if data is None:
            raise InvalidInput(f"{handle} is a handle of a context block, and this store has "
                               "none yet: pass trace=..., build one with `akasha context`, "
                               "or give a node uid")
        handles, query = data["handles"], data.get("query", "")
    if handle not in handles:
        raise NotFound(f"no handle {handle} in the context for {query!r} (it has "
                       f"{len(handles)} items); recall again or give a node uid")
    return handles[handle], f"the context for {query!r}"


# -- health --------------------------------------------------------------------------------------
def health(store: Store, *, window: float | None = None, windows: int = 14,
           top_hubs: int = 10) -> dict[str, Any]:
    """Recall health from the query log (see :mod:`akasha_explorer.brief.health`):
    empty-activation rate, score trends per window, source mix, latency percentiles,
    edge growth, top hubs by fan. ``window`` defaults to ``HEALTH_WINDOW`` seconds."""
    store.check_open()
    rows = store.queries.rows()
    nodes, edges = store.mirror.nodes, store.mirror.edges
    alive = np.flatnonzero(nodes.alive)
    fans = edges.fan_of(alive) if alive.size else np.zeros(0, np.int64)
    order = sorted(range(alive.size), key=lambda k: (-int(fans[k]), int(alive[k])))
    fan = {nodes.uid[int(alive[k])]: int(fans[k]) for k in order[:top_hubs]}
    info = {u: {"session": nodes.sessions[int(nodes.session[i])],
                "recall_count": int(nodes.recall_count[i])}
            for u in fan for i in [nodes.index[u]]}
    return recall_health(rows, edge_count=int(edges.n_alive()), node_count=int(alive.size),
                         edge_last_ts=edges.last_ts[edges.alive], fan=fan, node_info=info,
                         window=window or store.settings.HEALTH_WINDOW, windows=windows,
                         top_hubs=top_hubs)
