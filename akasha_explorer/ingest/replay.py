"""Replay (SPEC §2): grow co-activation edges the way a live agent grows them.

For each node, in ingest order: its user message is used as a query, recalled at the
node's time over the memory *as it was before it* (nodes with a smaller row, messages of
those nodes only — so IDF and the dense search are causal), then the recall is written
back with the node as the current node (V1 ``replay.py``: activate before the turn, commit
after). Assistant-only nodes have no query; they are only marked replayed.

Every step is journaled (absolute values) and marks the node ``replayed``, so an
interrupted replay resumes where it stopped when the same input is ingested again. Two
fresh stores replaying the same input end with identical edges and node state: every
order is deterministic and nothing reads the clock.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from tqdm.auto import tqdm

from ..engine.recall import plan_writeback, recall

if TYPE_CHECKING:
    from ..store.store import Store

__all__ = ["first_user_message", "replay_rows"]

log = logging.getLogger(__name__)

SYNC_EVERY = 256
"""Journal fsync interval during replay (a crash re-replays the unsynced tail)."""


def first_user_message(store: Store, row: int) -> int | None:
    """Message row of the node's first user message, or None (assistant-only node)."""
    nodes = store.mirror.nodes
    a, k = int(nodes.first_msg[row]), int(nodes.n_msg[row])
    for j in range(a, a + k):
        if store.mirror.msg_role[j] == "user":
            return j
    return None


def replay_rows(store: Store, rows: list[int], *, progress: bool = False) -> int:
    """Replay the given node rows in order; returns how many were replayed.

    Settings read: the store's own (every recall setting, through
    :func:`~akasha_explorer.engine.recall.recall`, and the write-back ones through
    :func:`~akasha_explorer.engine.recall.plan_writeback`); the journal is synced every
    :data:`SYNC_EVERY` steps and the store checkpointed at the end."""
    mirror, st = store.mirror, store.settings
    nodes, edges = mirror.nodes, mirror.edges
    done = 0
    for step, i in enumerate(tqdm(rows, desc="replay", unit="node", disable=not progress)):
        j = first_user_message(store, i)
        sync = (step + 1) % SYNC_EVERY == 0
        if j is None:
            nodes.set_replayed(i)
            mirror.journal_commit(store.journal, replayed=[i], sync=sync)
            done += 1
            continue
        now = float(nodes.ts[i])
        visible = nodes.alive & (nodes.ts <= now)
        visible[i:] = False
        msg_mask = nodes.msg_alive & (nodes.msg_node < i)
        lex = store.index.lexical_terms(mirror.msg_terms[j], now=now, msg_mask=msg_mask)
        trace = recall(nodes, edges, nodes.msg_vec[j], lex, now=now, settings=st,
                       visible=visible, session=nodes.sessions[int(nodes.session[i])])
        plan = plan_writeback(trace, nodes, edges, i, now=now, settings=st)
        store.write_plan(plan, replayed=[i], sync=sync)
        done += 1
    if rows:
        store.journal.sync()
        store.checkpoint_or_defer()
    log.info("replayed %d nodes", done)
    return done

