"""Forget (SPEC §6, user sovereignty): remove a node, a session or an anchor and everything
it owns, so that the forgotten text's bytes are on no file of the store afterwards.

Order: checkpoint (the journal is folded into Kuzu and truncated, so no later checkpoint or
journal replay can bring a deleted edge or query back); copy the graph file to a scratch
file (``graph.kuzu.work``) and, *on the copy*, delete in one transaction (turns with their
COACT / NEXT / MENTIONS / IN_EPISODE edges, the triples and review items they own, anchors
and aliases left without any mention; then every other row that *names* what was forgotten
— query log, review items, audit entries, anchor notes, the saved context block — deleted
or redacted, see :mod:`.redact`); **rebuild** the copy's live rows into a fresh file that
replaces the live graph atomically — Kuzu 0.11 keeps deleted strings in its pages
(measured: after ``DELETE`` and ``CHECKPOINT`` the bytes are still in ``graph.kuzu``), and
its WAL replay after a SIGKILL between a ``DETACH DELETE``'s commit and its checkpoint
drops an unrelated node's IN_SESSION link (measured: a forget killed in that 100 ms window
left ``session_links`` broken on another session's first turn), so the live file never
sees a delete; then mask the rows in the mirror and delete the LanceDB rows, compacting
with cleanup of every older version, rewriting a table whose compaction kept deleted rows
in a data file (:meth:`VectorDB.optimize`, ``purge``: the speaker and every other column
of a forgotten row leave the disk). One audit entry records that a forget
happened, with ids and counts, never the text; the ``Forgotten`` table keeps the forgotten
message ids (session + seq, no text) so that re-importing a source that still holds them —
a cumulative ChatGPT export, say — skips them instead of bringing them back.

A crash before the swap leaves the live graph as it was (and the scratch files, which
``akasha doctor --repair`` removes — forget again); a crash after it leaves Meta
``forget_pending`` set (and, if it came before the LanceDB delete, the messages as orphans
of their deleted nodes); ``akasha doctor --repair`` removes them and finishes the purge.
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from .._fs import GRAPH_RESERVE, WRITE_FACTOR, ensure_free, size_of
from ..errors import InvalidInput, NotFound
from ..graphdb import GraphDB, dump
from ..graphdb import anchors as ga
from ..graphdb import forget as gf
from ..graphdb import turns as gt
from ..vectors import queries as vq
from .ops import log_entry
from .redact import Forgotten, forgotten_nodes, scrub

if TYPE_CHECKING:
    from ..store.store import Store

__all__ = ["PENDING_KEY", "forget", "purge", "rebuild_graph"]

PENDING_KEY = "forget_pending"
"""Meta key set while a forget runs; a crash leaves it, and ``akasha doctor --repair``
finishes the purge (:func:`purge`)."""

log = logging.getLogger(__name__)


def forget(store: Store, *, node: str | None = None, session: str | None = None,
           anchor: str | None = None, by: str = "user", why: str | None = None
           ) -> dict[str, Any]:
    """See module docstring; returns counts of what was removed."""
    given = [(k, v) for k, v in (("node", node), ("session", session), ("anchor", anchor))
             if v is not None]
    if len(given) != 1:
        raise InvalidInput("forget takes exactly one of node=, session=, anchor=")
    store.check_write()
    t0 = time.perf_counter()
    ensure_free(store.path, GRAPH_RESERVE + 2 * size_of(store.graph.path)
                + WRITE_FACTOR * size_of(store.path / "vectors") // 2, "a forget (it rewrites "
                "the graph file and the LanceDB tables without the forgotten rows)")
    store.checkpoint()
    cleared = store.recalls.clear()  # recalls as made quote texts and name nodes
    store.clear_derived()  # the atlas layout names nodes
    g = store.graph
    what, target = given[0]
    uids: list[str] = []
    msg_uids: list[str] = []
    if what == "anchor":
        if ga.anchor_row(g, target) is None:
            raise NotFound(f"no anchor {target!r}; `akasha anchors STORE` lists them")
    elif what == "session":
        uids = gt.turns_of_session(g, target)
        if not uids and not gt.session_exists(g, target):
            raise NotFound(f"no session {target!r}; Memory.sessions() lists them")
    else:
        store.row(target)
        uids = [target]
    live = store.graph
    store.graph = dump.scratch_copy(live)  # the deletes never go through the live file's WAL
    try:
        if what == "anchor":
            counts = _forget_anchor(store, target)
        else:
            counts, msg_uids = _forget_nodes(store, uids,
                                             session=target if what == "session" else None)
        counts["recall_records"] = cleared
        counts["audit"] = log_entry(store.graph, action="forget", target=f"{what}:{target}",
                                    actor=by, why=why, before="",
                                    after=json.dumps(counts, sort_keys=True))
    except BaseException:
        dump.drop_scratch(store.graph)
        store.graph = live
        raise
    store.graph = dump.rebuild(store.graph, replacing=live)  # swapped in whole, or not at all
    if uids:
        _drop_nodes(store, uids, msg_uids)
    store.graph.meta_set(PENDING_KEY, "")
    counts["seconds"] = round(time.perf_counter() - t0, 3)
    log.info("forgot %s %s: %s", what, target, counts)
    return counts


def _forget_nodes(store: Store, uids: list[str], session: str | None
                  ) -> tuple[dict[str, Any], list[str]]:
    """The graph's part of forgetting nodes (on the scratch copy): returns counts and the
    forgotten message ids."""
    g, nodes = store.graph, store.mirror.nodes
    rows = [nodes.index[u] for u in uids if u in nodes.index]
    msg_uids = [nodes.msg_uid[j] for i in rows
                for j in range(int(nodes.first_msg[i]), int(nodes.first_msg[i] + nodes.n_msg[i]))]
    named = forgotten_nodes(store, uids, msg_uids, session)
    triples = gf.triples_of_nodes(g, uids)
    touched = gf.anchors_touched(g, uids, triples)
    links = gf.next_bridges(g, uids) if session is None else []
    counts: dict[str, Any] = {"nodes": len(uids), "messages": len(msg_uids),
                              "triples": len(triples)}
    with g.transaction():
        g.meta_set(PENDING_KEY, "nodes")  # with the deletes; cleared once the purge is done
        when = time.time()  # tombstones: the ids only, so a re-import skips them
        counts["edges"] = gf.delete_nodes(g, uids=uids, triples=triples, msg_uids=msg_uids,
                                          links=links, when=when)
        counts.update(_prune_anchors(g, sorted(set(touched))))
        counts.update(scrub(store, replace(named, ids=named.ids | set(triples)
                                         | set(counts.pop("_gone")))))
    return counts, msg_uids


def _drop_nodes(store: Store, uids: list[str], msg_uids: list[str]) -> None:
    """After the swap: the forgotten nodes leave the mirror, then LanceDB (its rows deleted
    and every older version dropped). A crash before the LanceDB delete leaves orphan
    messages and ``forget_pending``, which ``akasha doctor --repair`` finishes."""
    m = store.mirror
    nodes = m.nodes
    for i in [nodes.index[u] for u in uids if u in nodes.index]:
        nodes.kill(i)
        m.mark_edges_gone(m.edges.drop_node(i))
        m.dirty_nodes.pop(i, None)
        for j in range(int(nodes.first_msg[i]), int(nodes.first_msg[i] + nodes.n_msg[i])):
            m.msg_terms[j] = []
            m.forget_texts([j])
    store.stored.forget(msg_uids)
    vq.delete_messages_of_nodes(store.vectors, uids, batch=200)
    store.vectors.optimize(cleanup=True)  # the writer lock: no other reader holds a version


def _prune_anchors(g: GraphDB, anchors: list[str]) -> dict[str, Any]:
    """Delete anchors left without mentions and facts, and aliases no remaining mention
    uses (their surfaces came from the forgotten text)."""
    gone = gf.orphan_anchors(g, anchors)
    aliases = [r["al"] for r in gf.alias_norms(g, anchors) if r["a"] in gone]
    live = gf.live_alias_mentions(g, anchors, gone)
    from ..extract.normalize import norm
    aliases += [r["al"] for r in live if r["n"] not in {norm(s) for s in r["s"] if s}]
    gf.delete_pruned_anchors(g, aliases=aliases, anchors=gone)
    return {"anchors": len(gone), "aliases": len(aliases), "_gone": gone}


def _forget_anchor(store: Store, uid: str) -> dict[str, Any]:
    g = store.graph
    triples = gf.anchor_triples(g, uid)
    with g.transaction():
        g.meta_set(PENDING_KEY, "anchor")  # with the deletes; cleared once the purge is done
        aliases, mentions = gf.delete_anchor(g, uid, triples)
        red = scrub(store, Forgotten(ids=frozenset({uid, *triples})))
    return {"anchors": 1, "aliases": aliases, "mentions": mentions, "triples": len(triples),
            **red}


# -- graph file rebuild -------------------------------------------------------------------------
def rebuild_graph(store: Store) -> None:
    """Copy every live row of the Kuzu database into a fresh file and swap it in, so
    deleted strings do not survive in free pages (:func:`..graphdb.dump.rebuild`)."""
    store.graph = dump.rebuild(store.graph)


def purge(store: Store) -> None:
    """Finish an interrupted forget: drop LanceDB's older versions (they may still hold the
    forgotten rows) and rebuild the Kuzu file (its free pages may hold deleted strings)."""
    store.vectors.optimize(cleanup=True)
    rebuild_graph(store)
    store.graph.meta_set(PENDING_KEY, "")
