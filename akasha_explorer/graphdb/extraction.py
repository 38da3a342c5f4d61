"""The Kuzu side of extraction (:mod:`akasha_explorer.extract.pipeline`): what a batch reads
about the anchors already stored, and the one transaction that writes its results."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pyarrow as pa

from .kuzu_db import GraphDB
from .logs import REVIEW_SCHEMA

__all__ = [
    "ALIAS_COLS",
    "ANCHOR_COLS",
    "EPISODE_COLS",
    "TRIPLE_COLS",
    "aliases",
    "anchor_uids",
    "current_triples",
    "gap_episodes",
    "mention_counts",
    "mentioned_messages",
    "pending_anchor_reviews",
    "write_extraction",
]

ANCHOR_COLS = ("uid", "name", "kind", "status", "created_ts", "note")
ALIAS_COLS = ("uid", "surface", "norm", "created_ts")
TRIPLE_COLS = ("uid", "predicate", "object_literal", "confidence", "status", "valid_from",
               "superseded_by", "node", "span_start", "span_end", "quote", "created_ts", "slot")
EPISODE_COLS = ("uid", "kind", "label", "session", "start_ts", "end_ts")
"""Columns of the Anchor, Alias, Triple and Episode tables, in schema order."""


def aliases(g: GraphDB) -> list[dict[str, Any]]:
    """Every alias with its anchor: alias, surface, norm, anchor, kind, status, name."""
    return g.rows(
        "MATCH (al:Alias)-[:ALIAS_OF]->(a:Anchor) RETURN al.uid AS alias, al.surface AS surface, "
        "al.norm AS norm, a.uid AS anchor, a.kind AS kind, a.status AS status, a.name AS name")


def anchor_uids(g: GraphDB) -> set[str]:
    """Every anchor uid."""
    return {r["uid"] for r in g.rows("MATCH (a:Anchor) RETURN a.uid AS uid")}


def mentioned_messages(g: GraphDB, anchor: str, limit: int = 200) -> list[str]:
    """Message uids of up to ``limit`` mentions of ``anchor``."""
    return [r["m"] for r in g.rows(
        "MATCH ()-[m:MENTIONS]->(a:Anchor {uid: $a}) RETURN m.msg AS m LIMIT " + str(int(limit)),
        {"a": anchor})]


def mention_counts(g: GraphDB, anchors: Sequence[str]) -> dict[str, int]:
    """Anchor uid -> how many distinct messages mention it (anchors without: absent)."""
    return {r["a"]: int(r["c"]) for r in g.rows(
        "MATCH ()-[m:MENTIONS]->(a:Anchor) WHERE a.uid IN $u "
        "RETURN a.uid AS a, count(DISTINCT m.msg) AS c", {"u": list(anchors)})}


def pending_anchor_reviews(g: GraphDB, anchors: Sequence[str]) -> set[str]:
    """Which of ``anchors`` have an ``anchor`` review item (any status)."""
    return {r["s"] for r in g.rows(
        "MATCH (r:ReviewItem) WHERE r.kind = 'anchor' AND r.subject IN $u "
        "RETURN r.subject AS s", {"u": list(anchors)})}


def current_triples(g: GraphDB, subjects: Sequence[str]) -> list[dict[str, Any]]:
    """Approved and pending triples of ``subjects``: uid, subject ``s``, predicate ``p``,
    object anchor ``o``, literal ``lit``, slot, status."""
    return g.rows(
        "MATCH (t:Triple)-[:FACT {role: 'subject'}]->(s:Anchor) WHERE s.uid IN $u "
        "AND t.status IN ['approved', 'pending'] "
        "OPTIONAL MATCH (t)-[:FACT {role: 'object'}]->(o:Anchor) "
        "RETURN t.uid AS uid, s.uid AS s, t.predicate AS p, o.uid AS o, "
        "t.object_literal AS lit, t.slot AS slot, t.status AS status", {"u": list(subjects)})


def gap_episodes(g: GraphDB, sessions: Sequence[str]) -> list[dict[str, Any]]:
    """Time-gap episodes of ``sessions``: uid, session, start_ts, end_ts."""
    return g.rows(
        "MATCH (e:Episode) WHERE e.kind = 'gap' AND e.session IN $s RETURN e.uid AS uid, "
        "e.session AS session, e.start_ts AS start_ts, e.end_ts AS end_ts",
        {"s": list(sessions)})


_PAIR = pa.schema([("from", pa.string()), ("to", pa.string())])
_MENTION_SCHEMA = pa.schema([("from", pa.string()), ("to", pa.string()), ("msg", pa.string()),
                             ("span_start", pa.int64()), ("span_end", pa.int64()),
                             ("surface", pa.string())])
_TRIPLE_TYPES = {"confidence": pa.float64(), "valid_from": pa.float64(),
                 "span_start": pa.int64(), "span_end": pa.int64(), "created_ts": pa.float64()}


def _table(rows: Sequence[dict[str, Any]], cols: Sequence[str],
           types: dict[str, pa.DataType]) -> pa.Table:
    return pa.schema([(c, types.get(c, pa.string())) for c in cols]).empty_table() if not rows \
        else pa.Table.from_pylist([{c: r[c] for c in cols} for r in rows],
                                  schema=pa.schema([(c, types.get(c, pa.string())) for c in cols]))


def write_extraction(g: GraphDB, *, anchors: Sequence[dict[str, Any]],
                     aliases: Sequence[tuple[dict[str, Any], str]],
                     mentions: Sequence[dict[str, Any]], triples: Sequence[dict[str, Any]],
                     facts: Sequence[tuple[str, str, str]], episodes: Sequence[dict[str, Any]],
                     in_episode: Sequence[tuple[str, str]], review: Sequence[dict[str, Any]],
                     updates: dict[str, list[dict[str, Any]]]) -> None:
    """Write one extraction batch in one transaction of bulk statements: new anchors,
    aliases (row, anchor uid), mentions (``from`` turn, ``to`` anchor, msg, span, surface),
    triples and their facts (triple, anchor, role), episodes and their turns, review items,
    then the ``updates`` of stored rows: ``anchor_status`` (``u``, ``s``), ``anchor_kind``
    (``u``, ``k``), ``supersede`` (``u``, ``by``), ``episode_end`` (``u``, ``t``) and
    ``review_auto`` (``u``: pending anchor reviews the extractor approves)."""
    with g.transaction():
        g.copy("Anchor", _table(anchors, ANCHOR_COLS, {"created_ts": pa.float64()}))
        g.copy("Alias", _table([r for r, _ in aliases], ALIAS_COLS,
                               {"created_ts": pa.float64()}))
        g.copy("ALIAS_OF", pa.table({"from": [r["uid"] for r, _ in aliases],
                                     "to": [a for _, a in aliases]}, schema=_PAIR))
        g.copy("MENTIONS", pa.Table.from_pylist(list(mentions), schema=_MENTION_SCHEMA))
        g.copy("Triple", _table(triples, TRIPLE_COLS, _TRIPLE_TYPES))
        g.copy("FACT", pa.table({"from": [t for t, _, _ in facts],
                                 "to": [a for _, a, _ in facts],
                                 "role": [r for _, _, r in facts]},
                                schema=_PAIR.append(pa.field("role", pa.string()))))
        g.copy("Episode", _table(episodes, EPISODE_COLS, {"start_ts": pa.float64(),
                                                          "end_ts": pa.float64()}))
        g.copy("IN_EPISODE", pa.table({"from": [n for n, _ in in_episode],
                                       "to": [e for _, e in in_episode]}, schema=_PAIR))
        if review:
            g.copy("ReviewItem", pa.Table.from_pylist(list(review), schema=REVIEW_SCHEMA))
        u = updates
        g.unwind("MATCH (a:Anchor {uid: r.u}) SET a.status = r.s", u["anchor_status"])
        g.unwind("MATCH (a:Anchor {uid: r.u}) SET a.kind = r.k", u["anchor_kind"])
        g.unwind("MATCH (t:Triple {uid: r.u}) SET t.status = 'superseded', "
                 "t.superseded_by = r.by", u["supersede"])
        g.unwind("MATCH (e:Episode {uid: r.u}) SET e.end_ts = r.t", u["episode_end"])
        g.unwind("MATCH (r0:ReviewItem {uid: r.u}) WHERE r0.status = 'pending' SET "
                 "r0.status = 'approved', r0.decided_by = 'extractor', "
                 "r0.why = 'mentioned often enough'", u["review_auto"])
