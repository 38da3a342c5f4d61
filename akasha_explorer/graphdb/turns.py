"""Turns, sessions and co-activation edges: the Cypher the mirror, ingest and the doctor
ask of Kuzu, one named function each (the package's Cypher lives in this package only).

Reads return pyarrow Tables for what may be large (every turn, every edge) and lists of
dicts for the rest; writes take row dicts for ``UNWIND``, or Arrow tables for ``COPY`` and
for ``LOAD FROM`` (what the checkpoint sets: many rows in one statement; see
:class:`~.kuzu_db.GraphDB` for why both). None of them opens a transaction of its own
unless its docstring says so: callers group them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pyarrow as pa

from ..model import SessionInfo
from . import chains
from .kuzu_db import EXTRACT_PENDING_KEY, GraphDB
from .logs import REVIEW_SCHEMA

__all__ = [
    "TOMBSTONES",
    "add_coact",
    "coact_edges",
    "delete_coact",
    "delete_turns_and_triples",
    "forgotten_among",
    "graph_batch",
    "known_sessions",
    "merge_graph_rows",
    "orphan_triples",
    "rewrite_coact",
    "session_exists",
    "session_link_problems",
    "sessions",
    "set_coact",
    "set_turn_state",
    "turn_message_uids",
    "turn_sessions",
    "turns",
    "turns_of_session",
    "write_ingest_batch",
]


def turns(g: GraphDB, columns: Sequence[str]) -> pa.Table:
    """Every Turn with the given properties, in ``ord`` (ingest) order."""
    return g.arrow("MATCH (t:Turn) RETURN " + ", ".join(f"t.{c} AS {c}" for c in columns)
                   + " ORDER BY t.ord")


def coact_edges(g: GraphDB, *, key: str = "uid") -> pa.Table:
    """Every COACT edge: columns ``s``, ``d`` (the end points' ``key``: ``"uid"`` or
    ``"ord"``, integers and cheaper to read: ~0.9 s against ~1.4 s for 3M edges), ``w``,
    ``t``, ``c`` (weight, last_ts, co_count), in no particular order."""
    if key not in ("ord", "uid"):
        raise ValueError(f"key must be 'ord' or 'uid', not {key!r}")
    return g.arrow(f"MATCH (a:Turn)-[e:COACT]->(b:Turn) RETURN a.{key} AS s, "
                   f"b.{key} AS d, e.weight AS w, e.last_ts AS t, e.co_count AS c")


def delete_coact(g: GraphDB, rows: pa.Table) -> None:
    """Delete the COACT edges ``s -> d`` (columns ``s``, ``d``: uids) that exist, by one
    ``LOAD FROM``."""
    g.load_from("MATCH (a:Turn {uid: s})-[e:COACT]->(b:Turn {uid: d}) DELETE e", rows)


def set_coact(g: GraphDB, rows: pa.Table) -> None:
    """Set weight, last_ts and co_count of existing COACT edges (columns ``s``, ``d``
    uids, ``w``, ``t``, ``c``) by one ``LOAD FROM`` (~60 µs an edge at 3M edges); new
    edges go in by :func:`add_coact`."""
    g.load_from("MATCH (a:Turn {uid: s})-[e:COACT]->(b:Turn {uid: d}) "
                "SET e.weight = w, e.last_ts = t, e.co_count = c", rows)


def add_coact(g: GraphDB, edges: pa.Table) -> None:
    """Create COACT edges (columns ``from``, ``to`` uids, ``weight``, ``last_ts``,
    ``co_count``) with ``COPY``."""
    g.copy("COACT", edges)


def add_pruned_coactivations(g: GraphDB, rows: pa.Table) -> None:
    """Add to each turn ``u``'s pruned totals (columns ``u``, one row per turn; ``c``: the
    co-activations its pruned COACT edges had counted; ``n``: how many edges)."""
    g.load_from("MERGE (p:CoactPruned {uid: u}) ON CREATE SET p.co_count = c, p.edges = n "
                "ON MATCH SET p.co_count = p.co_count + c, p.edges = p.edges + n", rows)


def pruned_fans(g: GraphDB) -> dict[str, int]:
    """Turn uid -> how many of its COACT edges were pruned (they still count in its fan)."""
    return {r["u"]: int(r["n"]) for r in g.rows(
        "MATCH (p:CoactPruned) RETURN p.uid AS u, p.edges AS n")}


def pruned_coactivations(g: GraphDB, uids: Sequence[str] | None = None) -> dict[str, int]:
    """Turn uid -> co-activations its pruned COACT edges had counted (every turn that has
    some, or only ``uids``)."""
    where = "" if uids is None else " WHERE p.uid IN $u"
    return {r["u"]: int(r["c"]) for r in g.rows(
        f"MATCH (p:CoactPruned){where} RETURN p.uid AS u, p.co_count AS c",
        {} if uids is None else {"u": list(uids)})}


def rewrite_coact(g: GraphDB, edges: pa.Table) -> None:
    """Make the COACT table hold exactly ``edges`` (columns as :func:`add_coact`; ~2.5 s
    for 3M edges)."""
    g.replace("COACT", edges)


def set_turn_state(g: GraphDB, rows: pa.Table) -> None:
    """Set the dynamic state of turns (columns ``u`` uid, ``s`` strength, ``st``
    strength_ts, ``r`` resource, ``rt`` resource_ts, ``c`` recall_count, ``p`` replayed)
    by one ``LOAD FROM`` (20,000 rows ~0.09 s)."""
    g.load_from("MATCH (t:Turn {uid: u}) SET t.strength = s, t.strength_ts = st, "
                "t.resource = r, t.resource_ts = rt, t.recall_count = c, t.replayed = p", rows)


def sessions(g: GraphDB) -> list[SessionInfo]:
    """Sessions with source, time range and node count, oldest first."""
    return [SessionInfo(**r) for r in g.rows(
        "MATCH (s:Session) OPTIONAL MATCH (t:Turn)-[:IN_SESSION]->(s) RETURN s.uid AS session, "
        "s.source AS source, s.first_ts AS first_ts, s.last_ts AS last_ts, count(t) AS nodes "
        "ORDER BY first_ts, session")]


def known_sessions(g: GraphDB, uids: Sequence[str]) -> set[str]:
    """Which of the session ids ``uids`` have a Session node."""
    return {r["u"] for r in g.rows("MATCH (s:Session) WHERE s.uid IN $s RETURN s.uid AS u",
                                   {"s": list(uids)})}


def session_exists(g: GraphDB, uid: str) -> bool:
    """Whether a Session node ``uid`` exists."""
    return bool(g.rows("MATCH (s:Session {uid: $s}) RETURN s.uid", {"s": uid}))


def turns_of_session(g: GraphDB, session: str) -> list[str]:
    """Uids of the turns that name ``session``."""
    return [r["u"] for r in g.rows("MATCH (t:Turn) WHERE t.session = $s RETURN t.uid AS u",
                                   {"s": session})]


def turn_sessions(g: GraphDB, sessions: Sequence[str] | None = None) -> dict[str, str]:
    """Turn uid -> the session it names: every turn, or those of ``sessions``."""
    if sessions is None:
        t = g.arrow("MATCH (t:Turn) RETURN t.uid AS u, t.session AS s").to_pydict()
        return dict(zip(t["u"], t["s"], strict=True))
    return {r["u"]: r["s"] for r in g.rows(
        "MATCH (t:Turn) WHERE t.session IN $s RETURN t.uid AS u, t.session AS s",
        {"s": list(sessions)})}


def turn_message_uids(g: GraphDB) -> pa.Table:
    """Every turn's uid (``uid``) and the message uids it lists (``m``)."""
    return g.arrow("MATCH (t:Turn) RETURN t.uid AS uid, t.message_uids AS m")


def session_link_problems(g: GraphDB) -> list[str]:
    """Turns not linked (IN_SESSION) to exactly one session, the one they name."""
    return [r["u"] for r in g.rows(
        "MATCH (t:Turn) OPTIONAL MATCH (t)-[:IN_SESSION]->(s:Session) WITH t, count(s) AS n, "
        "collect(s.uid) AS ss WHERE n <> 1 OR NOT list_contains(ss, t.session) "
        "RETURN t.uid AS u")]  # (Kuzu collects no match as null, not [])


def orphan_triples(g: GraphDB) -> list[str]:
    """Triples whose source node (``Triple.node``) is not a Turn."""
    return [r["u"] for r in g.rows(
        "MATCH (x:Triple) WHERE x.node IS NOT NULL AND NOT EXISTS "
        "{ MATCH (t:Turn) WHERE t.uid = x.node } RETURN x.uid AS u")]


def delete_turns_and_triples(g: GraphDB, uids: Sequence[str]) -> None:
    """Delete the turns ``uids`` with their rels and the triples extracted from them, in
    one transaction (the doctor's repair of nodes LanceDB lost)."""
    with g.transaction():
        g.execute("MATCH (x:Triple) WHERE x.node IN $n DETACH DELETE x", {"n": list(uids)})
        g.execute("MATCH (t:Turn) WHERE t.uid IN $n DETACH DELETE t", {"n": list(uids)})


TOMBSTONES = "forgotten"
""":meth:`GraphDB.memo <akasha_explorer.graphdb.kuzu_db.GraphDB.memo>` key of the uids of
every ``Forgotten`` tombstone (read by every ingest; written only by a forget and by an
ingest that stores a forgotten message again on purpose)."""


def forgotten_among(g: GraphDB, uids: Sequence[str]) -> set[str]:
    """Which of the message uids ``uids`` a forget recorded (``Forgotten`` tombstones).
    The tombstones are read once and kept (:data:`TOMBSTONES`): an ``add_turn`` asks on
    every call, and must not wait for a fold another thread is writing."""
    every: frozenset[str] = g.memo(TOMBSTONES, lambda: frozenset(
        r["u"] for r in g.rows("MATCH (f:Forgotten) RETURN f.uid AS u")))
    return {u for u in uids if u in every}


def write_ingest_batch(g: GraphDB, batch: dict[str, Any], *, extract_pending: str | None
                       ) -> None:
    """The Kuzu side of one ingest batch, in one transaction: new sessions and the time
    ranges of known ones, the turns, their NEXT links (``next_drop`` / ``next_add``) and
    IN_SESSION rels, review items of injection flags, lifted tombstones (``unforget``) and,
    when ``extract_pending`` is given, the Meta mark the extraction's own commit clears.

    ``batch`` holds ``Session`` (Arrow table or None), ``session_updates`` (rows ``s``,
    ``t`` last time, ``f`` first time), ``Turn``, ``IN_SESSION`` and ``ReviewItem``
    (Arrow tables, the last may be None), ``next_drop`` / ``next_add`` (uid pairs) and
    ``unforget`` (message uids)."""
    with g.transaction():
        if batch["Session"] is not None:
            g.copy("Session", batch["Session"])
        if batch["session_updates"]:
            g.unwind("MATCH (s:Session {uid: r.s}) SET s.last_ts = "
                     "CASE WHEN r.t > s.last_ts THEN r.t ELSE s.last_ts END, "
                     "s.first_ts = CASE WHEN r.f < s.first_ts THEN r.f "
                     "ELSE s.first_ts END", batch["session_updates"])
        g.copy("Turn", batch["Turn"])
        chains.relink(g, batch["next_drop"], batch["next_add"])
        g.copy("IN_SESSION", batch["IN_SESSION"])
        if batch["ReviewItem"] is not None:
            g.copy("ReviewItem", batch["ReviewItem"])
        if batch.get("unforget"):  # stored again on purpose: lift the tombstones
            g.forget_memo(TOMBSTONES)
            g.execute("MATCH (f:Forgotten) WHERE f.uid IN $u DELETE f",
                      {"u": batch["unforget"]})
        if extract_pending is not None:  # cleared with the extraction's own commit
            g.meta_set(EXTRACT_PENDING_KEY, extract_pending)


def merge_graph_rows(parts: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Several ingest batches' graph rows (the journal's write-behind records, see
    :meth:`Store.fold_graph <akasha_explorer.store.Store.fold_graph>`) as one, in order: a
    session's source is its earliest message's, its range spans them all."""
    if len(parts) == 1:
        return parts[0]
    turn: dict[str, list[Any]] = {c: [] for c in parts[0]["Turn"]}
    sessions: dict[str, dict[str, Any]] = {}
    review: list[dict[str, Any]] = []
    unforget: list[str] = []
    for p in parts:
        for c, vs in p["Turn"].items():
            turn[c].extend(vs)
        for sid, x in p["sessions"].items():
            got = sessions.get(sid)
            if got is None:
                sessions[sid] = dict(x)
                continue
            if x["seq"] < got["seq"]:
                got["source"], got["seq"] = x["source"], x["seq"]
            got["first_ts"] = min(got["first_ts"], x["first_ts"])
            got["last_ts"] = max(got["last_ts"], x["last_ts"])
        review.extend(p["review"])
        unforget.extend(p.get("unforget", ()))
    return {"Turn": turn, "sessions": sessions, "review": review, "unforget": unforget}


def graph_batch(g: GraphDB, rows: dict[str, Any]) -> dict[str, Any]:
    """The Kuzu transaction of an ingest batch's graph rows (Arrow tables and row lists
    for :func:`write_ingest_batch`; ``rows`` holds the Turn columns, each session's source
    and time range, and review items): new sessions and the time
    ranges of known ones; NEXT: each touched session's whole chain in seq order (the
    turns the graph holds and the new ones), only the links that differ are changed."""
    turn, sessions = rows["Turn"], rows["sessions"]
    touched = list(sessions)
    known = known_sessions(g, touched)
    sessions_new = [{"uid": sid, "source": x["source"], "first_ts": x["first_ts"],
                     "last_ts": x["last_ts"]} for sid, x in sessions.items() if sid not in known]
    sessions_upd = [{"s": sid, "t": x["last_ts"], "f": x["first_ts"]}
                    for sid, x in sessions.items() if sid in known]
    stored = turn_sessions(g, touched) if known else {}
    want = chains.wanted(list(stored.items()) + list(zip(turn["uid"], turn["session"],
                                                         strict=True)))
    have = {(a, b) for a, b, _, _ in chains.links(g, sorted(known))} if known else set()
    review = rows["review"]
    return {
        "Turn": pa.table(turn),
        "Session": pa.table({k: [x[k] for x in sessions_new]
                             for k in ("uid", "source", "first_ts", "last_ts")})
        if sessions_new else None,
        "session_updates": sessions_upd,
        "next_drop": sorted(have - want), "next_add": sorted(want - have),
        "IN_SESSION": pa.table({"from": turn["uid"], "to": turn["session"]}),
        "ReviewItem": pa.Table.from_pylist(review, schema=REVIEW_SCHEMA) if review else None,
    }
