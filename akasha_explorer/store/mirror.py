"""The in-memory mirror and its write path (SPEC §1).

:class:`Mirror` owns the engine arrays (:class:`NodeTable`, :class:`EdgeStore`, lexical
:class:`Postings`) and keeps them equal to the stores:

- **load** — Kuzu turns (state) + LanceDB messages (vectors, terms) + Kuzu COACT edges,
  then the journal tail re-applied on top;
- **record** — every change of dynamic state is applied to the arrays and appended to the
  journal as absolute values (:meth:`Mirror.journal_commit`; edge values packed by
  :func:`pack_edges`, older plain ``edges`` lists still read); that append is the
  durability point;
- **checkpoint** — dirty edges and nodes are folded into Kuzu in bulk (``COPY`` for new
  edges, batched ``UNWIND … SET`` for changed ones, or one rewrite of the whole COACT table
  when most edges changed), pending query-log rows copied, then the journal truncated.
"""

from __future__ import annotations

import base64
import json
import logging
import time
from collections.abc import Iterable
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..engine.bm25 import Postings
from ..engine.state import EdgeStore, NodeTable
from ..engine.writeback import WritebackPlan, plan_edge_ids
from ..graphdb import GraphDB
from ..graphdb import turns as gt
from ..graphdb.logs import add_queries
from ..vectors import VectorDB, vectors_column
from ..vectors import queries as vq
from .journal import Journal

__all__ = ["Mirror", "pack_edges", "unpack_edges"]

log = logging.getLogger(__name__)

_TURN_COLS = ("uid", "ord", "session", "ts", "message_uids", "assistant_only", "sigma",
              "strength", "strength_ts", "resource", "resource_ts", "recall_count", "replayed")
REWRITE_FRACTION = 0.05
"""Checkpoint rewrites the COACT table when more than this share of its edges changed."""


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
        self.msg_terms: list[list[str]] = []
        """Per message row: gate flags, role and lexical terms (as indexed)."""
        self.orphan_messages: list[str] = []
        """Message uids LanceDB holds whose node Kuzu does not (a torn ingest)."""
        self._edge_in_kuzu = np.zeros(0, bool)
        self.dirty_edges: dict[int, None] = {}
        self.dirty_nodes: dict[int, None] = {}
        self.dropped_edges: dict[tuple[str, str], None] = {}
        """COACT edges (src uid, dst uid) removed from the mirror, to delete from Kuzu."""
        self.pending_queries: list[dict[str, Any]] = []

    # -- load ------------------------------------------------------------------------------
    def load(self, graph: GraphDB, vectors: VectorDB, journal: Journal) -> None:
        """Fill the arrays from Kuzu + LanceDB, then re-apply the journal tail."""
        t0 = time.perf_counter()
        turns = gt.turns(graph, _TURN_COLS).to_pydict()
        msgs = vq.messages(vectors, ["uid", "node", "ts", "role", "flags", "terms", "vector"])
        mvec = vectors_column(msgs)
        mcol = msgs.select(["uid", "node", "ts", "role", "flags", "terms"]).to_pydict()
        row_of = {u: i for i, u in enumerate(mcol["uid"])}
        tv = vq.turns(vectors, ["uid", "vector"])
        tvec = vectors_column(tv)
        trow = {u: i for i, u in enumerate(tv.column("uid").to_pylist())}
        known_nodes = set(turns["uid"])
        self.orphan_messages = sorted(u for u, n in zip(mcol["uid"], mcol["node"], strict=True)
                                      if n not in known_nodes)
        for k, uid in enumerate(turns["uid"]):
            rows = [row_of[m] for m in turns["message_uids"][k] if m in row_of]
            if not rows or uid not in trow:
                log.warning("node %s has no messages/vector in LanceDB; not loaded", uid)
                continue
            self._add_loaded(k, uid, turns, rows, mcol, mvec, tvec[trow[uid]])
        self.next_ord = (max(self.ord) + 1) if self.ord else 0
        if turns["ord"]:
            self.next_ord = max(self.next_ord, int(max(turns["ord"])) + 1)
        e = gt.coact_edges(graph)
        uids = pa.array(self.nodes.uid, pa.string())
        si = pc.index_in(e.column("s"), value_set=uids)
        di = pc.index_in(e.column("d"), value_set=uids)
        ok = pc.and_(pc.is_valid(si), pc.is_valid(di)).to_numpy(zero_copy_only=False)
        si = pc.fill_null(si, -1).to_numpy(zero_copy_only=False).astype(np.int64)
        di = pc.fill_null(di, -1).to_numpy(zero_copy_only=False).astype(np.int64)
        self.edges.load(si[ok], di[ok],
                        e.column("w").to_numpy()[ok], e.column("t").to_numpy()[ok],
                        e.column("c").to_numpy()[ok])
        self._edge_in_kuzu = np.ones(self.edges.count, bool)
        applied = 0
        done = int(graph.meta_get("journal_seq", "0") or 0)
        for rec in journal.read():
            if int(rec.get("seq", 0)) > done:
                self.apply_record(rec)
                applied += 1
        journal.seq = max(journal.seq, done)
        log.info("mirror loaded: %d nodes, %d messages, %d edges, %d journal records in %.2fs",
                 self.nodes.n, self.nodes.m, self.edges.count, applied, time.perf_counter() - t0)

    def _add_loaded(self, k: int, uid: str, turns: dict[str, list[Any]], rows: list[int],
                    mcol: dict[str, list[Any]], mvec: np.ndarray, tvec: np.ndarray) -> None:
        i = self.nodes.add_node(
            uid, ts=turns["ts"][k], session=turns["session"][k], vector=tvec,
            sigma=turns["sigma"][k], strength=turns["strength"][k],
            resource=turns["resource"][k], assistant_only=bool(turns["assistant_only"][k]),
            msg_vectors=mvec[rows], msg_ts=[mcol["ts"][r] for r in rows],
            msg_uids=[mcol["uid"][r] for r in rows], strength_ts=turns["strength_ts"][k],
            resource_ts=turns["resource_ts"][k], recall_count=int(turns["recall_count"][k]),
            replayed=bool(turns["replayed"][k]))
        self.ord.append(int(turns["ord"][k]))
        first = int(self.nodes.first_msg[i])
        for off, r in enumerate(rows):
            t = list(mcol["terms"][r] or [])
            self.postings.add(first + off, t)
            self.msg_terms.append(t)
            self.msg_flags.append(tuple(mcol["flags"][r] or ()))
            self.msg_role.append(mcol["role"][r])

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

    # -- growth ------------------------------------------------------------------------------
    def add_node(self, uid: str, *, msg_terms: list[list[str]], msg_flags: list[tuple[str, ...]],
                 msg_roles: list[str], **kwargs: Any) -> int:
        """Add a freshly ingested node (already written to both stores)."""
        i = self.nodes.add_node(uid, **kwargs)
        first = int(self.nodes.first_msg[i])
        for off, t in enumerate(msg_terms):
            self.postings.add(first + off, t)
        self.msg_terms.extend(msg_terms)
        self.msg_flags.extend(msg_flags)
        self.msg_role.extend(msg_roles)
        self.ord.append(self.next_ord)
        self.next_ord += 1
        return i

    # -- journal records ---------------------------------------------------------------------
    def apply_record(self, rec: dict[str, Any]) -> None:
        """Apply one journal record (absolute values; unknown uids are skipped)."""
        idx = self.nodes.index
        kind = rec.get("kind")
        if kind == "query":
            self.pending_queries.append(rec["row"])
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
        for s, d, w, lt, c in edges:
            si, di = idx.get(s), idx.get(d)
            if si is None or di is None:
                continue
            e = self.edges.upsert(si, di, w=w, last_ts=lt, co_count=c)
            self.dirty_edges[e] = None
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
        self.dirty_edges.update(dict.fromkeys(ids.tolist()))
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
                     replayed: Iterable[int] = (), sync: bool | None = None) -> int:
        """Journal the mirror values a just-applied write-back plan changed."""
        ids = plan_edge_ids(plan, self.nodes, self.edges)
        return self.journal_commit(journal, nodes=plan.nodes.rows,
                                   edges=dict.fromkeys(ids.tolist()),
                                   replayed=replayed, sync=sync,
                                   extra={"current": plan.current_uid, "now": plan.now})

    def log_query(self, journal: Journal, row: dict[str, Any]) -> None:
        """Queue a query-log row (journaled without fsync; copied to Kuzu at checkpoint);
        nothing is queued when the journal append fails."""
        journal.append({"kind": "query", "row": row}, sync=False)
        self.pending_queries.append(row)

    # -- checkpoint ----------------------------------------------------------------------------
    def checkpoint(self, graph: GraphDB, journal: Journal) -> dict[str, float]:
        """Fold dirty state into Kuzu in bulk, then truncate the journal. Returns counts."""
        t0 = time.perf_counter()
        nd, ed, uid = self.nodes, self.edges, self.nodes.uid
        if self._edge_in_kuzu.shape[0] < ed.count:
            grown = np.zeros(ed.count, bool)
            grown[: self._edge_in_kuzu.shape[0]] = self._edge_in_kuzu
            self._edge_in_kuzu = grown
        dirty = np.fromiter(self.dirty_edges, np.int64, len(self.dirty_edges))
        dirty = dirty[ed.alive[dirty]] if dirty.size else dirty
        in_kuzu = self._edge_in_kuzu[dirty] if dirty.size else np.zeros(0, bool)
        n_kuzu = int(self._edge_in_kuzu[: ed.count].sum())
        # per-edge UNWIND SET costs ~50-300 µs an edge; past a few percent, rewriting the
        # whole table (DELETE + one COPY) is cheaper
        rewrite = n_kuzu > 0 and int(in_kuzu.sum()) > REWRITE_FRACTION * n_kuzu
        queries, self.pending_queries = self.pending_queries, []
        dropped = [{"s": a, "d": b} for a, b in self.dropped_edges]
        with graph.transaction():
            if dropped and not rewrite:  # first: a pair dropped then linked again is new
                gt.delete_coact(graph, dropped)
            if rewrite:
                graph.replace("COACT", self._edge_table(np.flatnonzero(ed.alive)))
            else:
                graph.copy("COACT", self._edge_table(dirty[~in_kuzu]))
                changed = dirty[in_kuzu]
                gt.set_coact(
                    graph,
                    [{"s": uid[int(ed.src[e])], "d": uid[int(ed.dst[e])], "w": float(ed.w[e]),
                      "t": float(ed.last_ts[e]), "c": int(ed.co_count[e])} for e in changed])
            gt.set_turn_state(
                graph,
                [{"u": uid[i], "s": float(nd.strength[i]), "st": float(nd.strength_ts[i]),
                  "r": float(nd.resource[i]), "rt": float(nd.resource_ts[i]),
                  "c": int(nd.recall_count[i]), "p": bool(nd.replayed[i])}
                 for i in self.dirty_nodes if nd.alive[i]])
            add_queries(graph, queries)
            graph.meta_set("journal_seq", str(journal.seq))
        if dirty.size:
            self._edge_in_kuzu[dirty] = True
        if rewrite:
            self._edge_in_kuzu[: ed.count] = ed.alive
        stats = {"edges": float(dirty.size), "nodes": float(len(self.dirty_nodes)),
                 "queries": float(len(queries)), "rewrite": float(rewrite),
                 "seconds": time.perf_counter() - t0}
        self.dirty_edges.clear()
        self.dirty_nodes.clear()
        self.dropped_edges.clear()
        journal.truncate()
        return stats

    def _edge_table(self, ids: np.ndarray) -> pa.Table:
        ed, uid = self.edges, self.nodes.uid
        return pa.table({
            "from": pa.array([uid[int(s)] for s in ed.src[ids]], pa.string()),
            "to": pa.array([uid[int(d)] for d in ed.dst[ids]], pa.string()),
            "weight": pa.array(ed.w[ids], pa.float64()),
            "last_ts": pa.array(ed.last_ts[ids], pa.float64()),
            "co_count": pa.array(ed.co_count[ids], pa.int64()),
        })

    def mark_edges_gone(self, ids: Iterable[int]) -> None:
        """Edges deleted from Kuzu directly (forget): no longer pending."""
        for e in ids:
            self.dirty_edges.pop(e, None)


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


def dumps(obj: Any) -> str:
    """Compact JSON for query-log columns."""
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
