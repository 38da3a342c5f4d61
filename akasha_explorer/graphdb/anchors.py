"""Anchors, aliases, mentions, triples and episodes (SPEC §6) in Kuzu: the reads curation,
review, analysis and the panels make, and the episode rewrite — one named function each."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pyarrow as pa

from ..model import Anchor, Episode, Fact, MentionedAnchor, Triple
from .kuzu_db import GraphDB

__all__ = [
    "PERSON_RELATIONS",
    "alias_surfaces",
    "aliases_of",
    "anchor_graph_rows",
    "anchor_names",
    "anchor_row",
    "anchors",
    "anchors_named",
    "anchors_of",
    "approved_in_slot",
    "episodes",
    "facts_of",
    "mentions_of",
    "relation_roles",
    "replace_episodes",
    "triple",
    "triple_summary",
    "triples",
    "triples_about",
    "turns_mentioning",
]


def anchor_row(g: GraphDB, uid: str) -> dict[str, Any] | None:
    """One anchor's uid, name, kind, status, created_ts and note (None: no such anchor)."""
    rows = g.rows("MATCH (a:Anchor {uid: $u}) RETURN a.uid AS uid, a.name AS name, a.kind AS kind, "
                  "a.status AS status, a.created_ts AS created_ts, a.note AS note", {"u": uid})
    return rows[0] if rows else None


def anchors(g: GraphDB, *, status: str | None, kind: str | None) -> list[Anchor]:
    """Anchors with a status and kind (None: any), with their aliases (oldest first), most
    mentioned first."""
    aliases: dict[str, list[str]] = {}
    for r in alias_surfaces(g):
        aliases.setdefault(r["a"], []).append(r["s"])
    return [Anchor(**r, aliases=tuple(aliases.get(r["uid"], ()))) for r in g.rows(
        "MATCH (a:Anchor) WHERE ($s IS NULL OR a.status = $s) AND ($k IS NULL OR a.kind = $k) "
        "OPTIONAL MATCH (t:Turn)-[m:MENTIONS]->(a) RETURN a.uid AS uid, a.name AS name, "
        "a.kind AS kind, a.status AS status, count(m) AS mentions, "
        "count(DISTINCT t) AS nodes ORDER BY mentions DESC, name", {"s": status, "k": kind})]


def alias_surfaces(g: GraphDB) -> list[dict[str, Any]]:
    """Every alias surface ``s`` with its anchor ``a``, oldest alias first."""
    return g.rows("MATCH (al:Alias)-[:ALIAS_OF]->(a:Anchor) RETURN a.uid AS a, "
                  "al.surface AS s ORDER BY al.created_ts, al.surface")


def aliases_of(g: GraphDB, uid: str, *, created: bool = False) -> list[dict[str, Any]]:
    """The aliases of anchor ``uid``: uid, surface, norm (and created_ts with ``created``)."""
    if created:
        return g.rows("MATCH (al:Alias)-[:ALIAS_OF]->(:Anchor {uid: $u}) RETURN al.uid AS uid, "
                      "al.surface AS surface, al.norm AS norm, al.created_ts AS created_ts",
                      {"u": uid})
    return g.rows("MATCH (al:Alias)-[:ALIAS_OF]->(:Anchor {uid: $u}) RETURN al.uid AS uid, "
                  "al.surface AS surface, al.norm AS norm", {"u": uid})


def mentions_of(g: GraphDB, uid: str) -> list[dict[str, Any]]:
    """The mentions of anchor ``uid`` (node, msg, span_start, span_end, surface), in node
    order."""
    return g.rows("MATCH (t:Turn)-[m:MENTIONS]->(:Anchor {uid: $u}) RETURN t.uid AS node, "
                  "m.msg AS msg, m.span_start AS span_start, m.span_end AS span_end, "
                  "m.surface AS surface "
                  "ORDER BY t.ord, m.msg, m.span_start", {"u": uid})


def anchors_of(g: GraphDB, uid: str) -> list[MentionedAnchor]:
    """Anchors turn ``uid`` mentions (one row per mention, in text order)."""
    return [MentionedAnchor(**r) for r in g.rows(
        "MATCH (t:Turn {uid: $u})-[m:MENTIONS]->(a:Anchor) RETURN a.uid AS uid, a.name AS "
        "name, a.kind AS kind, m.surface AS surface, m.span_start AS span_start "
        "ORDER BY span_start, name", {"u": uid})]


def facts_of(g: GraphDB, uid: str) -> list[dict[str, Any]]:
    """The FACT rels into anchor ``uid``: triple ``t``, role, and the triple's node and
    span."""
    return g.rows("MATCH (t:Triple)-[f:FACT]->(:Anchor {uid: $u}) RETURN t.uid AS t, "
                  "f.role AS role, t.node AS node, t.span_start AS span_start, "
                  "t.span_end AS span_end",
                  {"u": uid})


def triples_about(g: GraphDB, uid: str) -> list[Fact]:
    """Triples with anchor ``uid`` as subject or object, with names and provenance, oldest
    first (an anchor's detail)."""
    return [Fact(**r) for r in g.rows(
        "MATCH (t:Triple)-[f:FACT]->(:Anchor {uid: $u}) "
        "OPTIONAL MATCH (t)-[:FACT {role: 'subject'}]->(s:Anchor) "
        "OPTIONAL MATCH (t)-[:FACT {role: 'object'}]->(o:Anchor) "
        "RETURN t.uid AS uid, f.role AS role, s.name AS subject, t.predicate AS predicate, "
        "o.name AS object, t.object_literal AS literal, t.status AS status, t.slot AS slot, "
        "t.confidence AS confidence, t.valid_from AS valid_from, t.superseded_by AS "
        "superseded_by, t.node AS node, t.quote AS quote ORDER BY valid_from", {"u": uid})]


def triples(g: GraphDB, *, anchor: str | None, status: str | None) -> list[Triple]:
    """Triples (optionally of one anchor as subject or object, or with one status), oldest
    first, with subject / object names and provenance."""
    return [Triple(**r) for r in g.rows(
        "MATCH (t:Triple)-[:FACT {role: 'subject'}]->(s:Anchor) "
        "OPTIONAL MATCH (t)-[:FACT {role: 'object'}]->(o:Anchor) "
        "WITH t, s, o WHERE ($st IS NULL OR t.status = $st) AND "
        "($a IS NULL OR s.uid = $a OR o.uid = $a) "
        "RETURN t.uid AS uid, s.uid AS subject_uid, s.name AS subject, "
        "t.predicate AS predicate, o.uid AS object_uid, o.name AS object, "
        "t.object_literal AS literal, t.slot AS slot, t.status AS status, "
        "t.confidence AS confidence, t.valid_from AS valid_from, "
        "t.superseded_by AS superseded_by, t.node AS node, t.span_start AS span_start, "
        "t.span_end AS span_end, t.quote AS quote ORDER BY valid_from, uid",
        {"st": status, "a": anchor})]


def triple(g: GraphDB, uid: str) -> dict[str, Any] | None:
    """Every property of triple ``uid`` plus its subject ``s`` and object ``o`` anchor uids
    (None: no such triple with a subject)."""
    rows = g.rows(
        "MATCH (t:Triple {uid: $u})-[:FACT {role: 'subject'}]->(s:Anchor) "
        "OPTIONAL MATCH (t)-[:FACT {role: 'object'}]->(o:Anchor) RETURN t.*, s.uid AS s, "
        "o.uid AS o", {"u": uid})
    return {k.split(".", 1)[-1]: v for k, v in rows[0].items()} if rows else None


def triple_summary(g: GraphDB, uid: str) -> dict[str, Any] | None:
    """Subject name ``s``, predicate ``p``, object name ``o``, literal ``lit`` and quote
    ``q`` of triple ``uid`` (None: no such triple)."""
    rows = g.rows(
        "MATCH (t:Triple {uid: $u}) OPTIONAL MATCH (t)-[:FACT {role: 'subject'}]->(s) "
        "OPTIONAL MATCH (t)-[:FACT {role: 'object'}]->(o) RETURN s.name AS s, "
        "t.predicate AS p, o.name AS o, t.object_literal AS lit, t.quote AS q",
        {"u": uid})
    return rows[0] if rows else None


def approved_in_slot(g: GraphDB, *, subject: str, predicate: str, slot: str, other_than: str,
                     valid_from: float) -> list[str]:
    """Approved triples of ``subject`` with ``predicate`` and ``slot`` valid from
    ``valid_from`` or earlier, but ``other_than`` (what approving a functional fact
    supersedes)."""
    return [r["u"] for r in g.rows(
        "MATCH (x:Triple)-[:FACT {role: 'subject'}]->(:Anchor {uid: $s}) WHERE "
        "x.status = 'approved' AND x.predicate = $p AND x.slot = $slot AND "
        "x.uid <> $u AND x.valid_from <= $vf RETURN x.uid AS u",
        {"s": subject, "p": predicate, "slot": slot, "u": other_than, "vf": valid_from})]


PERSON_RELATIONS = ("friend_of", "works_with", "family_of")
"""Predicates that say who someone is to the user; their ``slot`` is the role word (老板,
大学同学, 妈妈)."""


def relation_roles(g: GraphDB) -> list[dict[str, Any]]:
    """``{"anchor", "slot"}`` of every relation triple (:data:`PERSON_RELATIONS`) not
    rejected or superseded: who is the user's what."""
    return g.rows(
        "MATCH (t:Triple)-[:FACT {role: 'subject'}]->(s:Anchor) WHERE t.predicate IN $p AND "
        "t.status <> 'rejected' AND t.status <> 'superseded' "
        "RETURN DISTINCT s.uid AS anchor, t.slot AS slot", {"p": list(PERSON_RELATIONS)})


def fact_rows(g: GraphDB) -> list[dict[str, Any]]:
    """``{"p", "subject", "object", "node", "quote"}`` of every triple not rejected or
    superseded (pending ones too: what extraction read, before a person reviewed it) —
    what the recall's fact channel searches (an anchor uid or None for each role)."""
    return g.rows(
        "MATCH (t:Triple) WHERE t.status <> 'rejected' AND t.status <> 'superseded' "
        "OPTIONAL MATCH (t)-[:FACT {role: 'subject'}]->(s:Anchor) "
        "OPTIONAL MATCH (t)-[:FACT {role: 'object'}]->(o:Anchor) "
        "RETURN t.predicate AS p, s.uid AS subject, o.uid AS object, t.node AS node, "
        "t.quote AS quote")


def anchor_names(g: GraphDB) -> dict[str, str]:
    """Anchor uid -> name, for every anchor."""
    return {r["u"]: r["n"] for r in g.rows("MATCH (a:Anchor) RETURN a.uid AS u, a.name AS n")}


def anchors_named(g: GraphDB, name: str) -> list[str]:
    """Anchors whose uid or name is ``name``, or with an alias whose surface or norm is."""
    return [r["a"] for r in g.rows(
        "MATCH (a:Anchor) WHERE a.uid = $s OR a.name = $s RETURN a.uid AS a UNION "
        "MATCH (al:Alias)-[:ALIAS_OF]->(a:Anchor) WHERE al.surface = $s OR al.norm = $s "
        "RETURN a.uid AS a", {"s": name})]


def turns_mentioning(g: GraphDB, anchor: str) -> list[str]:
    """Uids of the turns that mention ``anchor`` (one per mention)."""
    return [r["t"] for r in g.rows(
        "MATCH (t:Turn)-[:MENTIONS]->(a:Anchor {uid: $a}) RETURN t.uid AS t", {"a": anchor})]


def anchor_graph_rows(g: GraphDB) -> tuple[list[dict[str, Any]], list[dict[str, Any]],
                                           list[dict[str, Any]]]:
    """What the anchor views are built from: anchors (uid, name, kind, status, created_ts,
    note), mentions (turn, anchor) and FACT roles (triple, predicate, status, role, anchor),
    each in a fixed order."""
    anchors_ = g.rows("MATCH (a:Anchor) RETURN a.uid AS uid, a.name AS name, a.kind AS kind, "
                      "a.status AS status, a.created_ts AS created_ts, a.note AS note "
                      "ORDER BY a.uid")
    mentions = g.rows("MATCH (t:Turn)-[m:MENTIONS]->(a:Anchor) RETURN t.uid AS turn, "
                      "a.uid AS anchor ORDER BY turn, anchor")
    roles = g.rows("MATCH (x:Triple)-[f:FACT]->(a:Anchor) RETURN x.uid AS triple, "
                   "x.predicate AS predicate, x.status AS status, f.role AS role, "
                   "a.uid AS anchor ORDER BY triple, role, anchor")
    return anchors_, mentions, roles


def episodes(g: GraphDB, *, kind: str | None, session: str | None) -> list[Episode]:
    """Episodes of a kind and session (None: any), in time order."""
    return [Episode(**{**r, "nodes": tuple(r["nodes"])}) for r in g.rows(
        "MATCH (t:Turn)-[:IN_EPISODE]->(e:Episode) WHERE ($k IS NULL OR e.kind = $k) AND "
        "($s IS NULL OR e.session = $s) RETURN e.uid AS uid, e.kind AS kind, "
        "e.label AS label, e.session AS session, e.start_ts AS start_ts, "
        "e.end_ts AS end_ts, collect(t.uid) AS nodes ORDER BY start_ts, uid",
        {"k": kind, "s": session})]


def replace_episodes(g: GraphDB, kind: str, rows: Sequence[dict[str, Any]],
                     links: Sequence[tuple[str, str]]) -> None:
    """Replace every episode of ``kind`` with ``rows`` (Episode properties) and their
    ``links`` (turn uid, episode uid), in one transaction."""
    with g.transaction():
        g.execute("MATCH (e:Episode) WHERE e.kind = $k DETACH DELETE e", {"k": kind})
        if rows:
            g.copy("Episode", pa.Table.from_pylist(list(rows)))
            g.copy("IN_EPISODE", pa.table({"from": [a for a, _ in links],
                                           "to": [b for _, b in links]}))
