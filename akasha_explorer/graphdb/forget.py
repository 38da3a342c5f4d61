"""The Kuzu side of a forget (:mod:`akasha_explorer.curate.forget`): what a forget reads
before it deletes, and the deletes themselves. The deletes run inside the forget's own
transaction (the caller opens it); none of them touches LanceDB."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .kuzu_db import GraphDB
from .turns import TOMBSTONES

__all__ = [
    "alias_norms",
    "anchor_triples",
    "anchors_touched",
    "delete_anchor",
    "delete_nodes",
    "delete_pruned_anchors",
    "live_alias_mentions",
    "next_bridges",
    "orphan_anchors",
    "triples_of_nodes",
]


def triples_of_nodes(g: GraphDB, uids: Sequence[str]) -> list[str]:
    """Uids of the triples extracted from the nodes ``uids``."""
    return [r["u"] for r in g.rows("MATCH (t:Triple) WHERE t.node IN $n RETURN t.uid AS u",
                                   {"n": list(uids)})]


def anchors_touched(g: GraphDB, uids: Sequence[str], triples: Sequence[str]) -> list[str]:
    """Anchors the nodes ``uids`` mention, then anchors the ``triples`` point at (a list
    that may repeat an anchor)."""
    touched = [r["a"] for r in g.rows(
        "MATCH (t:Turn)-[:MENTIONS]->(a:Anchor) WHERE t.uid IN $n RETURN DISTINCT a.uid AS a",
        {"n": list(uids)})]
    touched += [r["a"] for r in g.rows(
        "MATCH (t:Triple)-[:FACT]->(a:Anchor) WHERE t.uid IN $t RETURN DISTINCT a.uid AS a",
        {"t": list(triples)})]
    return touched


def next_bridges(g: GraphDB, uids: Sequence[str]) -> list[dict[str, Any]]:
    """NEXT links to make when the nodes ``uids`` go: for each of them with a kept node
    before and after it, ``{"a": before, "b": after}``."""
    return g.rows("MATCH (a:Turn)-[:NEXT]->(t:Turn)-[:NEXT]->(b:Turn) WHERE t.uid IN $n "
                  "AND NOT a.uid IN $n AND NOT b.uid IN $n RETURN a.uid AS a, b.uid AS b",
                  {"n": list(uids)})


def delete_nodes(g: GraphDB, *, uids: Sequence[str], triples: Sequence[str],
                 msg_uids: Sequence[str], links: Sequence[dict[str, Any]],
                 when: float) -> int:
    """Delete the nodes ``uids`` with their rels, their ``triples`` and the review items
    about either; record the ``msg_uids`` as Forgotten (ids and ``when`` only); bridge the
    NEXT chain over them (``links``); drop episodes and sessions left empty. Returns how
    many COACT edges the nodes had."""
    g.execute("MATCH (r:ReviewItem) WHERE r.subject IN $s DETACH DELETE r",
              {"s": list(uids) + list(triples)})
    g.execute("MATCH (t:Triple) WHERE t.uid IN $t DETACH DELETE t", {"t": list(triples)})
    edges = int(g.rows(
        "MATCH (t:Turn)-[e:COACT]-() WHERE t.uid IN $n RETURN count(e) AS c", {"n": list(uids)}
    )[0]["c"])
    g.execute("MATCH (t:Turn) WHERE t.uid IN $n DETACH DELETE t", {"n": list(uids)})
    g.execute("MATCH (p:CoactPruned) WHERE p.uid IN $n DELETE p", {"n": list(uids)})
    g.forget_memo(TOMBSTONES)
    g.unwind("MERGE (f:Forgotten {uid: r.u}) SET f.ts = r.t",
             [{"u": u, "t": when} for u in msg_uids])
    g.unwind("MATCH (a:Turn {uid: r.a}), (b:Turn {uid: r.b}) CREATE (a)-[:NEXT]->(b)", links)
    g.execute("MATCH (e:Episode) WHERE NOT EXISTS { MATCH (:Turn)-[:IN_EPISODE]->(e) } "
              "DELETE e")
    g.execute("MATCH (s:Session) WHERE NOT EXISTS { MATCH (:Turn)-[:IN_SESSION]->(s) } "
              "DETACH DELETE s")
    return edges


def orphan_anchors(g: GraphDB, anchors: Sequence[str]) -> list[str]:
    """Which of ``anchors`` no turn mentions and no triple points at."""
    return [r["a"] for r in g.rows(
        "MATCH (a:Anchor) WHERE a.uid IN $a AND NOT EXISTS { MATCH (:Turn)-[:MENTIONS]->(a) } "
        "AND NOT EXISTS { MATCH (:Triple)-[:FACT]->(a) } RETURN a.uid AS a",
        {"a": list(anchors)})]


def alias_norms(g: GraphDB, anchors: Sequence[str]) -> list[dict[str, Any]]:
    """The aliases of ``anchors``: alias uid ``al``, its norm ``n`` and anchor ``a``."""
    return g.rows(
        "MATCH (al:Alias)-[:ALIAS_OF]->(a:Anchor) WHERE a.uid IN $a RETURN al.uid AS al, "
        "al.norm AS n, a.uid AS a", {"a": list(anchors)})


def live_alias_mentions(g: GraphDB, anchors: Sequence[str], gone: Sequence[str]
                        ) -> list[dict[str, Any]]:
    """For the aliases of ``anchors`` but ``gone``: alias uid ``al``, norm ``n`` and the
    surfaces ``s`` of their anchor's remaining mentions."""
    return g.rows("MATCH (al:Alias)-[:ALIAS_OF]->(a:Anchor) WHERE a.uid IN $a AND NOT a.uid IN $g "
                  "OPTIONAL MATCH (:Turn)-[m:MENTIONS]->(a) RETURN al.uid AS al, al.norm AS n, "
                  "collect(m.surface) AS s", {"a": list(anchors), "g": list(gone)})


def delete_pruned_anchors(g: GraphDB, *, aliases: Sequence[str], anchors: Sequence[str]
                          ) -> None:
    """Delete ``aliases``, and ``anchors`` with the review items about them."""
    g.execute("MATCH (al:Alias) WHERE al.uid IN $x DETACH DELETE al", {"x": list(aliases)})
    g.execute("MATCH (r:ReviewItem) WHERE r.subject IN $a DETACH DELETE r",
              {"a": list(anchors)})
    for a in anchors:
        g.execute("MATCH (r:ReviewItem) WHERE r.payload CONTAINS $a DELETE r", {"a": a})
    g.execute("MATCH (a:Anchor) WHERE a.uid IN $a DETACH DELETE a", {"a": list(anchors)})


def anchor_triples(g: GraphDB, uid: str) -> list[str]:
    """Uids of the triples that point at anchor ``uid``."""
    return [r["t"] for r in g.rows("MATCH (t:Triple)-[:FACT]->(:Anchor {uid: $u}) "
                                   "RETURN DISTINCT t.uid AS t", {"u": uid})]


def delete_anchor(g: GraphDB, uid: str, triples: Sequence[str]) -> tuple[int, int]:
    """Delete anchor ``uid`` with its aliases, its ``triples`` and every review item about
    either; returns how many aliases and mentions it had."""
    aliases = int(g.rows("MATCH (al:Alias)-[:ALIAS_OF]->(:Anchor {uid: $u}) "
                         "RETURN count(al) AS c", {"u": uid})[0]["c"])
    mentions = int(g.rows("MATCH ()-[m:MENTIONS]->(:Anchor {uid: $u}) RETURN count(m) AS c",
                          {"u": uid})[0]["c"])
    g.execute("MATCH (al:Alias)-[:ALIAS_OF]->(:Anchor {uid: $u}) DETACH DELETE al", {"u": uid})
    g.execute("MATCH (r:ReviewItem) WHERE r.subject IN $s OR r.payload CONTAINS $u "
              "DELETE r", {"s": [uid, *triples], "u": uid})
    g.execute("MATCH (t:Triple) WHERE t.uid IN $t DETACH DELETE t", {"t": list(triples)})
    g.execute("MATCH (a:Anchor {uid: $u}) DETACH DELETE a", {"u": uid})
    return aliases, mentions
