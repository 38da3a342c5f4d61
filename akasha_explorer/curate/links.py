"""Links a person confirmed: co-activation (COACT) edges changed by a review decision or its
undo. Unlike the graph ops of :mod:`.ops`, these are dynamic state: they go through the
store's write path (mirror + journal, Kuzu at the next checkpoint), as a recall's
write-back does.

:func:`link_op` builds the ``link`` op of a confirmed pair (one co-activation of the two
nodes, :func:`~akasha_explorer.engine.writeback.link_plan`); :func:`mirror_hook` gives
:func:`~.ops.record` and :func:`~.ops.undo` the hook that checks (dry) and applies such ops.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..engine.writeback import WritebackPlan, link_plan
from ..errors import InvalidInput
from .ops import MirrorHook

if TYPE_CHECKING:
    from ..store.store import Store

__all__ = ["apply_link_ops", "link_op", "mirror_hook"]


def link_op(store: Store, a: str, b: str, now: float) -> dict[str, Any]:
    """The ``link`` op of a confirmed pair; its time is ``now`` or later: never before the
    pair's nodes or edges.

    Settings read: those of :func:`~akasha_explorer.engine.writeback.link_plan`."""
    m = store.mirror
    ra, rb = store.row(a), store.row(b)
    when = max(float(now), float(m.nodes.ts[ra]), float(m.nodes.ts[rb]))
    for s, d in ((ra, rb), (rb, ra)):
        e = m.edges.find(s, d)
        if e >= 0:
            when = max(when, float(m.edges.last_ts[e]))
    plan = link_plan(m.nodes, m.edges, ra, rb, now=when, settings=store.settings)
    return {"op": "link", "a": a, "b": b, "plan": plan.to_dict()}


def mirror_hook(store: Store) -> MirrorHook:
    """The :data:`~.ops.MirrorHook` of ``store``: check or apply link ops (applied all or
    nothing: a journal append that fails reloads the mirror)."""
    def hook(ops: Sequence[dict[str, Any]], dry: bool) -> None:
        if dry:
            apply_link_ops(store, ops, dry=True)
            return
        with store.journaled():
            apply_link_ops(store, ops, dry=False)
    return hook


def apply_link_ops(store: Store, ops: Sequence[dict[str, Any]], *, dry: bool) -> None:
    """Apply ``link`` / ``unlink`` ops to the mirror and journal them (synced); with
    ``dry`` only check that the edges are as the op expects, raising
    :class:`InvalidInput` when recalls have written to them since."""
    m, journal = store.mirror, store.journal
    for op in ops:
        plan = WritebackPlan.from_dict(op["plan"])
        eu = plan.edges
        pairs = [(store.row(s), store.row(d))
                 for s, d in zip(eu.src_uid, eu.dst_uid, strict=True)]
        state = []
        for s, d in pairs:
            e = m.edges.find(s, d)
            state.append(None if e < 0 else (float(m.edges.w[e]), float(m.edges.last_ts[e]),
                                             int(m.edges.co_count[e])))
        linked = [(w, plan.now, c) for w, c in zip(eu.w_after, eu.co_after, strict=True)]
        before = [None if new else (w, t, c) for new, w, t, c in
                  zip(eu.new, eu.w_before, eu.last_ts_before, eu.co_before, strict=True)]
        if dry:
            want, what = (before, "link") if op["op"] == "link" else (linked, "unlink")
            if state != want:
                raise InvalidInput(
                    f"cannot {what} {op['a']} ↔ {op['b']}: recalls have written to these "
                    "edges since; the link now belongs to the memory and decays like "
                    "any other co-activation")
            continue
        if op["op"] == "link":
            store.write_plan(plan, sync=True)
            continue
        back = [(p, b) for p, b in zip(pairs, before, strict=True) if b is not None]
        gone = [p for p, b in zip(pairs, before, strict=True) if b is None]
        if gone:
            m.drop_edges(journal, gone)
        ids = [m.edges.upsert(s, d, w=w, last_ts=t, co_count=c)
               for (s, d), (w, t, c) in back if t is not None]  # a kept edge has its time
        if ids:
            m.journal_commit(journal, edges=ids, sync=True)
