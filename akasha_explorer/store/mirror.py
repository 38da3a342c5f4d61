"""The in-memory mirror and its write path (SPEC §1).

:class:`Mirror` owns the engine arrays (:class:`NodeTable`, :class:`EdgeStore`, lexical
:class:`Postings`) and keeps them equal to the stores:

- **load** — Kuzu turns (state) + LanceDB messages (vectors, terms, verbatim texts) + Kuzu
  COACT edges, column at a time (:mod:`.bulkload`), then the journal tail re-applied on top;
- **record** — every change of dynamic state is applied to the arrays and appended to the
  journal as absolute values (:meth:`Mirror.journal_commit`; edge values packed by
  :func:`pack_edges`, older plain ``edges`` lists still read), heterosynaptic depression
  as its sources and factor (:meth:`Mirror.journal_plan`); that append is the durability
  point;
- **checkpoint** — dirty edges and nodes are folded into Kuzu in bulk (``COPY`` for new
  edges, one ``LOAD FROM … SET`` for changed ones, or one rewrite of the whole COACT table
  when that is cheaper: :func:`rewrite_edges`), pending query-log rows copied, then the
  journal truncated.
"""

from __future__ import annotations

import base64
import logging
import time
from collections.abc import Iterable, MutableSequence, Sequence
from typing import Any

import numpy as np
import pyarrow as pa

from ..engine._codec import dumps  # the query log's compact JSON (one definition)
from ..engine.bm25 import Postings
from ..engine.dynamics import edges_to_prune
from ..engine.growth import grow
from ..engine.state import EdgeStore, NodeTable
from ..engine.writeback import WritebackPlan, plan_edge_ids
from ..graphdb import GraphDB
from ..graphdb import turns as gt
from ..graphdb.logs import add_queries, mark_query_committed
from ..text.gates import asks
from ..vectors import VectorDB
from .bulkload import load_mirror
from .heap import release_freed_memory
from .journal import GRAPH_RECORD, Journal

__all__ = ["EdgeMask", "Mirror", "dumps", "pack_edges", "unpack_edges"]

log = logging.getLogger(__name__)

REWRITE_FRACTION = 0.01
"""Checkpoint rewrites the COACT table when more than this share of its edges changed …"""
REWRITE_MIN = 1000
"""… and more than this many (below, one ``LOAD FROM … SET`` takes well under 0.1 s)."""
BIG_CHECKPOINT = 10_000
"""After a checkpoint of more edges than this, freed memory is handed back to the OS."""

COMPACT_EDGES_MIN = 4096
"""Removed edges' slots a checkpoint leaves alone (fewer than this, or than half the alive
edges, are not worth renumbering the edges for)."""


class Mirror:
    """Engine arrays + bookkeeping of what still has to reach Kuzu."""

    def __init__(self, dim: int) -> None:
        self.nodes = NodeTable(dim)
        self.edges = EdgeStore()
        self.postings = Postings()
        self.ord: list[int] = []
        """Kuzu ``ord`` of each node row (ingest order; rows are in this order)."""
        self.next_ord = 0
        self.msg_flags: list[tuple[str, ...]] = []
        self.msg_role: list[str] = []
        self.msg_terms: MutableSequence[list[str]] = []
        """Per message row: gate flags, role and lexical terms (as indexed)."""
        self.msg_text: MutableSequence[str | None] = []
        self.msg_speaker: MutableSequence[str | None] = []
        self.msg_sha: MutableSequence[str | None] = []
        """Per message row: the verbatim text, speaker and sha256 as LanceDB holds them (None:
        not loaded, or forgotten) — what :meth:`message_rows` gives the agent's context."""
        self.orphan_messages: list[str] = []
        """Message uids LanceDB holds whose node Kuzu does not (a torn ingest)."""
        self._edge_in_kuzu = np.zeros(0, bool)
        self.dirty_edges = EdgeMask()
        """Edge ids changed since the last checkpoint (a bit per edge: a commit at 3M edges
        marks ~500, and a dict of the 650k of 10k commits took ~50 MB)."""
        self.dirty_nodes: dict[int, None] = {}
        self.dropped_edges: dict[tuple[str, str], None] = {}
        """COACT edges (src uid, dst uid) removed from the mirror, to delete from Kuzu."""
        self.pending_queries: list[dict[str, Any]] = []
        self.last_pruned = 0
        """Edges the last checkpoint pruned (SPEC §3, v2)."""
        self.committed_queries: set[str] = set()
        """Query-log rows written back whose row Kuzu already holds (marked at the next
        checkpoint; a row still pending is marked in place)."""
        self._filler = np.zeros(0, bool)
        self._asks = np.zeros(0, bool)

    # -- load ------------------------------------------------------------------------------
    def load(self, graph: GraphDB, vectors: VectorDB, journal: Journal, *,
             cached_edges: pa.Table | None = None,
             waiting: Sequence[dict[str, list[Any]]] = ()) -> None:
        """Fill the arrays from Kuzu + LanceDB (the COACT edges from ``cached_edges`` when
        given: :mod:`.edgecache`; ``waiting``: Turn columns of stored turns the graph does
        not hold yet), then re-apply the journal tail."""
        load_mirror(self, graph, vectors, journal, cached=cached_edges, waiting=waiting)
        fans = gt.pruned_fans(graph)   # pruned edges still count in fan (SPEC §3)
        rows = [(i, n) for u, n in fans.items() if (i := self.nodes.index.get(u)) is not None]
        if rows:
            self.edges.add_fan([i for i, _ in rows], [n for _, n in rows])

    def set_loaded_edges(self, edges: EdgeStore) -> None:
        """Take ``edges``, every one of them as Kuzu holds it (the load)."""
        self.edges = edges
        self._edge_in_kuzu = np.ones(edges.count, bool)

    def set_terms(self, by_uid: dict[str, list[str]]) -> None:
        """Replace every message's lexical terms (term rules changed: a migration, or a
        read-only open of a store indexed under other rules) and rebuild the postings;
        forgotten messages keep no terms."""
        n = self.nodes
        self.postings = Postings()
        self.msg_terms = []
        for j, uid in enumerate(n.msg_uid):
            t = list(by_uid.get(uid, ())) if n.msg_alive[j] else []
            self.postings.add(j, t)
            self.msg_terms.append(t)

    def filler_nodes(self) -> np.ndarray:
        """Per node row: True when the node says nothing to remember — every user message
        of it (every message, for an assistant-only node) was flagged ``noise`` by the
        write gates (greetings, "good night", acknowledgements). Computed for new rows as
        nodes are added; a row's messages never change."""
        n = self.nodes
        have = self._filler.shape[0]
        if have < n.n:
            more = np.zeros(n.n - have, bool)
            for i in range(have, n.n):
                a = int(n.first_msg[i])
                rows = range(a, a + int(n.n_msg[i]))
                user = [j for j in rows if self.msg_role[j] == "user"] or list(rows)
                more[i - have] = bool(user) and all("noise" in self.msg_flags[j] for j in user)
            self._filler = np.concatenate([self._filler, more])
        return self._filler[: n.n]

    def asking_messages(self) -> np.ndarray:
        """Per message row: True when the message ends by asking something
        (:func:`~akasha_explorer.text.gates.asks`: "How's the finger today?", 明天回上海吗).
        Computed for new rows as messages are added; a message whose text the mirror does
        not hold asks nothing."""
        m = self.nodes.m
        have = self._asks.shape[0]
        if have < m:
            more = np.array([t is not None and asks(t) for t in self.msg_text[have:m]],
                            dtype=np.bool_)
            self._asks = np.concatenate([self._asks, more])
        return self._asks[:m]

    # -- growth ------------------------------------------------------------------------------
    def add_node(self, uid: str, *, msg_terms: list[list[str]], msg_flags: list[tuple[str, ...]],
                 msg_roles: list[str], msg_texts: list[str] | None = None,
                 msg_speakers: list[str | None] | None = None,
                 msg_shas: list[str] | None = None, **kwargs: Any) -> int:
        """Add a freshly ingested node (already written to both stores)."""
        i = self.nodes.add_node(uid, **kwargs)
        first = int(self.nodes.first_msg[i])
        for off, t in enumerate(msg_terms):
            self.postings.add(first + off, t)
        self.msg_terms.extend(msg_terms)
        self.msg_flags.extend(msg_flags)
        self.msg_role.extend(msg_roles)
        k = len(msg_terms)
        known = msg_texts is not None and msg_shas is not None
        self.msg_text.extend(msg_texts if known else [None] * k)  # type: ignore[arg-type]
        self.msg_sha.extend(msg_shas if known else [None] * k)  # type: ignore[arg-type]
        self.msg_speaker.extend(msg_speakers if known and msg_speakers is not None
                                else [None] * k)
        self.ord.append(self.next_ord)
        self.next_ord += 1
        return i

    def message_rows(self, uids: list[str]) -> tuple[dict[str, list[dict[str, Any]]], list[str]]:
        """The stored messages of the nodes ``uids`` (uid, node, role, speaker, ts, text,
        sha256, flags), in node order, from the texts the mirror holds; and the nodes it
        holds no text for (to read from LanceDB). Forgotten nodes are left out."""
        n = self.nodes
        spans: list[tuple[str, int, int]] = []
        for u in uids:
            i = n.index.get(u)
            if i is not None and n.alive[i]:
                spans.append((u, int(n.first_msg[i]), int(n.n_msg[i])))
        rows = [j for _, a, k in spans for j in range(a, a + k)]
        text, sha, speaker = (_take(c, rows) for c in (self.msg_text, self.msg_sha,
                                                        self.msg_speaker))
        at = dict(zip(rows, range(len(rows)), strict=True))
        out: dict[str, list[dict[str, Any]]] = {}
        missing: list[str] = []
        for u, a, k in spans:
            if any(text[at[j]] is None or sha[at[j]] is None for j in range(a, a + k)):
                missing.append(u)
                continue
            out[u] = [{"uid": n.msg_uid[j], "node": u, "role": self.msg_role[j],
                       "speaker": speaker[at[j]], "ts": float(n.msg_ts[j]),
                       "text": text[at[j]], "sha256": sha[at[j]],
                       "flags": list(self.msg_flags[j])} for j in range(a, a + k)]
        return out, missing

    def forget_texts(self, rows: Iterable[int]) -> None:
        """Drop the texts of forgotten message rows from memory."""
        for j in rows:
            self.msg_text[j] = self.msg_speaker[j] = self.msg_sha[j] = None

    # -- journal records ---------------------------------------------------------------------
    def apply_record(self, rec: dict[str, Any]) -> None:
        """Apply one journal record (absolute values, and a depression's factor; unknown
        uids are skipped). Records are applied once each, in order, on the state Kuzu
        holds (:func:`.bulkload.load_mirror`)."""
        idx = self.nodes.index
        kind = rec.get("kind")
        if kind == "query":
            self.pending_queries.append(rec["row"])
            return
        if kind == GRAPH_RECORD:  # stored turns: Kuzu holds them before a load (Store)
            return
        for n in rec.get("nodes", ()):
            i = idx.get(n["uid"])
            if i is None:
                continue
            self.nodes.set_state(i, strength=n["strength"], strength_ts=n["strength_ts"],
                                 resource=n["resource"], resource_ts=n["resource_ts"],
                                 recall_count=n["recall_count"])
            self.dirty_nodes[i] = None
        edges = unpack_edges(rec["E"]) if "E" in rec else rec.get("edges", ())
        written = []
        for s, d, w, lt, c in edges:
            si, di = idx.get(s), idx.get(d)
            if si is None or di is None:
                continue
            e = self.edges.upsert(si, di, w=w, last_ts=lt, co_count=c)
            written.append(e)
        self.dirty_edges.add(written)
        if "dep" in rec:
            self._depress(rec["dep"], np.asarray(written, np.int64))
        if rec.get("query"):
            self.mark_query(str(rec["query"]))
        for uid in rec.get("replayed", ()):
            i = idx.get(uid)
            if i is not None:
                self.nodes.set_replayed(i)
                self.dirty_nodes[i] = None
        for s, d in rec.get("dropped", ()):
            si, di = idx.get(s), idx.get(d)
            if si is not None and di is not None:
                self.edges.drop_edge(si, di)
            self.dropped_edges[(s, d)] = None

    def journal_commit(self, journal: Journal, *, nodes: Iterable[int] = (),
                       edges: Iterable[int] = (), replayed: Iterable[int] = (),
                       sync: bool | None = None, extra: dict[str, Any] | None = None) -> int:
        """Journal the *current* mirror values of the given node rows / edge ids."""
        nd, ed, uid = self.nodes, self.edges, self.nodes.uid
        node_rows = []
        for i in nodes:
            node_rows.append({"uid": uid[i], **nd.state_row(i)})
            self.dirty_nodes[i] = None
        ids = np.fromiter(edges, np.int64)
        self.dirty_edges.add(ids)
        rep = [uid[i] for i in replayed]
        for i in replayed:
            self.dirty_nodes[i] = None
        rec: dict[str, Any] = {"kind": "commit", "nodes": node_rows}
        if ids.size:
            rec["E"] = pack_edges(uid, ed.src[ids], ed.dst[ids], ed.w[ids], ed.last_ts[ids],
                                  ed.co_count[ids])
        if rep:
            rec["replayed"] = rep
        if extra:
            rec.update(extra)
        return journal.append(rec, sync=sync)

    def drop_edges(self, journal: Journal, pairs: Iterable[tuple[int, int]]) -> int:
        """Remove COACT edges ``(src row, dst row)`` from the mirror and journal it (synced);
        the next checkpoint deletes them from Kuzu."""
        uid = self.nodes.uid
        gone = []
        for s, d in pairs:
            if self.edges.drop_edge(s, d) >= 0:
                key = (uid[s], uid[d])
                self.dropped_edges[key] = None
                gone.append(list(key))
        return journal.append({"kind": "commit", "nodes": [], "dropped": gone}, sync=True)

    def journal_plan(self, journal: Journal, plan: WritebackPlan, *,
                     replayed: Iterable[int] = (), sync: bool | None = None,
                     query: str | None = None) -> int:
        """Journal the mirror values a just-applied write-back plan changed.

        Heterosynaptic depression is journaled as what it is — the sources and the factor
        (``"dep"``) — not as the depressed edges' new weights: a hub source has thousands of
        out-edges, and writing each made records of up to 200 KB (issue 14). Replaying the
        record in order on the state Kuzu holds (:func:`.bulkload.load_mirror` applies each
        record once, after Kuzu's ``journal_seq``) multiplies the same edges by the same
        factor, so the mirror comes back bit for bit. A plan read back from JSON (no
        factor) journals the depressed edges' values as before. ``query``: the query-log
        row of the recall written back, marked committed by the same record (so a replayed
        journal knows it too)."""
        dep = plan.depressed
        extra: dict[str, Any] = {"current": plan.current_uid, "now": plan.now}
        if query:
            extra["query"] = query
        ids = plan_edge_ids(plan, self.nodes, self.edges)  # strengthened, then depressed
        if dep.factor is not None and dep.src:
            self.dirty_edges.add(ids)
            ids = ids[: ids.shape[0] - len(dep.src)]
            uid = self.nodes.uid
            extra["dep"] = {"f": dep.factor, "s": [uid[i] for i in dep.sources]}
        return self.journal_commit(journal, nodes=plan.nodes.rows, edges=ids.tolist(),
                                   replayed=replayed, sync=sync, extra=extra)

    def _depress(self, dep: dict[str, Any], written: np.ndarray) -> None:
        """Re-apply a journaled depression: every alive out-edge of the sources that the
        record did not write, its stored weight times the factor."""
        idx = self.nodes.index
        rows = [i for i in (idx.get(u) for u in dep["s"]) if i is not None]
        ids, _ = self.edges.out_edges_many(rows)
        ids = ids[~np.isin(ids, written)]
        self.edges.set_weights(ids, self.edges.w[ids] * float(dep["f"]))
        self.dirty_edges.add(ids)

    def mark_query(self, uid: str) -> None:
        """Mark query-log row ``uid`` written back: in place while it waits for a
        checkpoint, else at the next checkpoint."""
        for row in self.pending_queries:
            if row["uid"] == uid:
                row["committed"] = True
                return
        self.committed_queries.add(uid)

    def query_committed(self, uid: str) -> bool | None:
        """Whether a query-log row this mirror holds or marked is written back (None: the
        row is not here — ask Kuzu)."""
        if uid in self.committed_queries:
            return True
        for row in self.pending_queries:
            if row["uid"] == uid:
                return bool(row.get("committed"))
        return None

    def log_query(self, journal: Journal, row: dict[str, Any]) -> None:
        """Queue a query-log row (journaled without fsync; copied to Kuzu at checkpoint);
        nothing is queued when the journal append fails."""
        journal.append({"kind": "query", "row": row}, sync=False)
        self.pending_queries.append(row)

    # -- checkpoint ----------------------------------------------------------------------------
    def checkpoint(self, graph: GraphDB, journal: Journal, *, prune_below: float = 0.0,
                   tau: float = 1.0, budget: int = 0) -> dict[str, float]:
        """Fold dirty state into Kuzu in bulk, then truncate the journal. Returns counts.
        ``prune_below`` > 0 (v2's ``EDGE_PRUNE_BELOW``, ``tau`` its ``EDGE_TAU``) or
        ``budget`` > 0 (v2's ``EDGE_BUDGET``): first drop the edges whose ``w_eff`` at the
        store's time (its newest message or commit) decayed below it, then those outside an
        end point's ``budget`` strongest, their ``co_count`` added to both end points'
        pruned totals in the same transaction (SPEC §3)."""
        t0 = time.perf_counter()
        pruned = self._prune(prune_below, tau, budget)
        nd, ed = self.nodes, self.edges
        if self._edge_in_kuzu.shape[0] < ed.count:
            grown = np.zeros(ed.count, bool)
            grown[: self._edge_in_kuzu.shape[0]] = self._edge_in_kuzu
            self._edge_in_kuzu = grown
        dirty = self.dirty_edges.ids()
        dirty = dirty[ed.alive[dirty]] if dirty.size else dirty
        in_kuzu = self._edge_in_kuzu[dirty] if dirty.size else np.zeros(0, bool)
        n_kuzu = int(self._edge_in_kuzu[: ed.count].sum())
        rewrite = rewrite_edges(int(in_kuzu.sum()) + len(self.dropped_edges), n_kuzu)
        queries, self.pending_queries = self.pending_queries, []
        marks, self.committed_queries = self.committed_queries, set()
        uid = pa.array(nd.uid, pa.string())
        with graph.transaction():
            if self.dropped_edges and not rewrite:  # first: a pair dropped, linked again is new
                pairs = list(self.dropped_edges)
                gt.delete_coact(graph, pa.table({"s": [a for a, _ in pairs],
                                                   "d": [b for _, b in pairs]}))
            if rewrite:
                gt.rewrite_coact(graph, self._edge_table(np.flatnonzero(ed.alive), uid))
            else:
                gt.add_coact(graph, self._edge_table(dirty[~in_kuzu], uid))
                gt.set_coact(graph, self._edge_table(dirty[in_kuzu], uid).rename_columns(
                    ["s", "d", "w", "t", "c"]))
            rows = np.fromiter(self.dirty_nodes, np.int64, len(self.dirty_nodes))
            rows = rows[nd.alive[rows]] if rows.size else rows
            gt.set_turn_state(graph, pa.table({
                "u": uid.take(pa.array(rows, pa.int64())), "s": nd.strength[rows],
                "st": nd.strength_ts[rows], "r": nd.resource[rows], "rt": nd.resource_ts[rows],
                "c": nd.recall_count[rows], "p": nd.replayed[rows]}))
            add_queries(graph, queries)
            if pruned is not None and pruned.num_rows:
                gt.add_pruned_coactivations(graph, pruned)
            for q in sorted(marks):
                mark_query_committed(graph, q)
            graph.meta_set("journal_seq", str(journal.seq))
        if dirty.size:
            self._edge_in_kuzu[dirty] = True
        if rewrite:
            self._edge_in_kuzu[: ed.count] = ed.alive
        stats = {"edges": float(dirty.size), "nodes": float(len(self.dirty_nodes)),
                 "queries": float(len(queries)), "rewrite": float(rewrite),
                 "pruned": float(self.last_pruned), "seconds": time.perf_counter() - t0}
        self.dirty_edges.clear()
        self.dirty_nodes.clear()
        self.dropped_edges.clear()
        journal.truncate()
        compacted = self._compact_edges()
        stats["compacted"] = float(compacted)
        if rewrite or compacted or dirty.size > BIG_CHECKPOINT:
            # the Arrow tables and Kuzu's own buffers are freed, but the C heap keeps them:
            # at 100k nodes a COACT rewrite left RSS 450 MB higher, 100 MB after this
            release_freed_memory()
        return stats

    def _compact_edges(self) -> bool:
        """Free the slots of removed edges (:meth:`EdgeStore.compact
        <akasha_explorer.engine.edges.EdgeStore.compact>`) once they are more than half
        as many as the alive ones (and :data:`COMPACT_EDGES_MIN`): pruning removes edges
        every checkpoint while new pairs take new ids, so without this the edge arrays
        grow with every pair ever linked. Right after a checkpoint the only edge ids the
        mirror holds are which edges Kuzu has (``_edge_in_kuzu``); those are mapped."""
        ed = self.edges
        if ed.dead() <= max(COMPACT_EDGES_MIN, ed.n_alive() // 2):
            return False
        old = self._edge_in_kuzu
        remap = ed.compact()
        ids = np.flatnonzero(remap[: old.shape[0]] >= 0)
        self._edge_in_kuzu = np.zeros(ed.count, bool)
        self._edge_in_kuzu[remap[ids]] = old[ids]
        return True

    def store_time(self) -> float:
        """The newest time the mirror holds: its newest node or edge (0.0 when empty)."""
        nd, ed = self.nodes, self.edges
        a = nd.ts[nd.alive] if nd.n else np.zeros(0)
        b = ed.last_ts[ed.alive] if ed.count else np.zeros(0)
        return float(max(a.max(initial=0.0), b.max(initial=0.0)))

    def _prune(self, below: float, tau: float, budget: int = 0) -> pa.Table | None:
        """Drop the edges :func:`~akasha_explorer.engine.dynamics.edges_to_prune` names at
        :meth:`store_time`; returns the pruned co-activations per end point (``u``,
        ``c``) for Kuzu, None when nothing was pruned."""
        ed = self.edges
        self.last_pruned = 0
        if (below <= 0 and budget <= 0) or not ed.count:
            return None
        ids = edges_to_prune(ed.src, ed.dst, ed.w, ed.last_ts, ed.alive, self.store_time(),
                             tau=tau, below=below, budget=budget)
        if not ids.size:
            return None
        src, dst, co = ed.src[ids].copy(), ed.dst[ids].copy(), ed.co_count[ids].copy()
        known = self._edge_in_kuzu
        uid = self.nodes.uid
        for e, s, d in zip(ids.tolist(), src.tolist(), dst.tolist(), strict=True):
            ed.prune(e)
            if e < known.shape[0] and known[e]:   # deleted from Kuzu by this checkpoint
                self.dropped_edges[(uid[s], uid[d])] = None
                known[e] = False
        self.dirty_edges.discard(ids)
        self.last_pruned = int(ids.size)
        rows = np.concatenate([src, dst])
        total = np.bincount(rows, weights=np.concatenate([co, co]).astype(np.float64),
                            minlength=self.nodes.n)
        edges = np.bincount(rows, minlength=self.nodes.n)
        keep = np.flatnonzero(edges > 0)
        return pa.table({"u": pa.array([uid[i] for i in keep.tolist()], pa.string()),
                         "c": pa.array(total[keep].astype(np.int64), pa.int64()),
                         "n": pa.array(edges[keep].astype(np.int64), pa.int64())})

    def _edge_table(self, ids: np.ndarray, uid: pa.Array) -> pa.Table:
        ed = self.edges
        return pa.table({
            "from": uid.take(pa.array(ed.src[ids], pa.int64())),
            "to": uid.take(pa.array(ed.dst[ids], pa.int64())),
            "weight": pa.array(ed.w[ids], pa.float64()),
            "last_ts": pa.array(ed.last_ts[ids], pa.float64()),
            "co_count": pa.array(ed.co_count[ids], pa.int64()),
        })

    def mark_edges_gone(self, ids: Iterable[int]) -> None:
        """Edges deleted from Kuzu directly (forget): no longer pending."""
        self.dirty_edges.discard(np.fromiter(ids, np.int64))


class EdgeMask:
    """A set of edge ids as a bit mask that grows with the ids (the mirror's dirty edges).

    >>> m = EdgeMask(); m.add([5, 2, 5]); m.add(np.array([], np.int64))
    >>> bool(m), len(m), m.ids().tolist()
    (True, 2, [2, 5])
    >>> m.discard([5, 99]); m.ids().tolist(); m.clear(); bool(m)
    [2]
    False
    """

    def __init__(self) -> None:
        self._bits = np.zeros(0, bool)

    def add(self, ids: Any) -> None:
        """Put the edge ids ``ids`` in the set (the mask grows to hold them)."""
        a = np.asarray(ids, np.int64).ravel()
        if a.size:
            self._bits = grow(self._bits, int(a.max()) + 1)
            self._bits[a] = True

    def discard(self, ids: Any) -> None:
        """Take ``ids`` out of the set (ids it never held are ignored)."""
        a = np.asarray(ids, np.int64).ravel()
        self._bits[a[(a >= 0) & (a < self._bits.shape[0])]] = False

    def ids(self) -> np.ndarray:
        """The ids, ascending."""
        return np.flatnonzero(self._bits)

    def clear(self) -> None:
        """Empty the set (a checkpoint folded every id)."""
        self._bits[:] = False

    def __len__(self) -> int:
        return int(np.count_nonzero(self._bits))

    def __bool__(self) -> bool:
        return bool(self._bits.any())


def _take(column: Any, rows: list[int]) -> list[Any]:
    take = getattr(column, "take", None)
    return take(rows) if take is not None else [column[j] for j in rows]


def rewrite_edges(changed: int, total: int) -> bool:
    """Whether a checkpoint rewrites the whole COACT table rather than setting ``changed``
    of its ``total`` edges one by one: measured at 3M edges (kuzu 0.11.3) a set costs ~60 µs
    an edge and a rewrite ~0.8 µs an edge, so past ~1 % changed the rewrite is cheaper.

    >>> rewrite_edges(500, 10_000), rewrite_edges(40_000, 3_000_000)
    (False, True)
    """
    return total > 0 and changed > max(REWRITE_MIN, REWRITE_FRACTION * total)


def pack_edges(uid: list[str], src: np.ndarray, dst: np.ndarray, w: np.ndarray,
               last_ts: np.ndarray, co_count: np.ndarray) -> dict[str, Any]:
    """Edge values for a journal record: the end points as indexes into their uids, the
    numbers as base64 of their little-endian bytes — exact, and about 4× cheaper to
    encode than JSON floats (a commit journals a few hundred edges).

    >>> rec = pack_edges(["a", "b", "c"], np.array([0, 2]), np.array([1, 0]),
    ...                  np.array([0.1, 1 / 3]), np.array([5.0, 6.0]), np.array([1, 2]))
    >>> unpack_edges(rec)
    [('a', 'b', 0.1, 5.0, 1), ('c', 'a', 0.3333333333333333, 6.0, 2)]
    """
    k = int(src.shape[0])
    ends, inv = np.unique(np.concatenate([src, dst]).astype(np.int64), return_inverse=True)

    def b64(a: np.ndarray, dtype: str) -> str:
        return base64.b64encode(np.ascontiguousarray(a, dtype).tobytes()).decode("ascii")

    return {"u": [uid[int(i)] for i in ends], "s": b64(inv[:k], "<i4"), "d": b64(inv[k:], "<i4"),
            "w": b64(w, "<f8"), "t": b64(last_ts, "<f8"), "c": b64(co_count, "<i8")}


def unpack_edges(rec: dict[str, Any]) -> list[tuple[str, str, float, float, int]]:
    """Inverse of :func:`pack_edges`: ``(src uid, dst uid, w, last_ts, co_count)`` rows."""
    def arr(key: str, dtype: str) -> list[Any]:
        return np.frombuffer(base64.b64decode(rec[key]), dtype).tolist()

    u = rec["u"]
    return [(u[a], u[b], w, t, c) for a, b, w, t, c in zip(
        arr("s", "<i4"), arr("d", "<i4"), arr("w", "<f8"), arr("t", "<f8"), arr("c", "<i8"),
        strict=True)]


