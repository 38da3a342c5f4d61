"""The Cypher of curation ops (see :mod:`akasha_explorer.curate.ops`, which builds, inverts
and records them): one op dict in, its statements run. Values always travel as query
parameters, never spliced into Cypher text (names with ``'``, ``}``, ``\\`` or backticks
are stored verbatim); only table and field names checked against :data:`FIELDS` are."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .kuzu_db import GraphDB

__all__ = ["FIELDS", "apply_edit"]

FIELDS = {
    "Anchor": {"name", "kind", "status", "note"},
    "Triple": {"status", "superseded_by", "predicate", "object_literal", "confidence"},
    "ReviewItem": {"status", "decided_ts", "decided_by", "why", "payload"},
}
"""The fields a ``set`` op may change, per table."""


def apply_edit(g: GraphDB, op: dict[str, Any]) -> None:
    """Run the statements of one graph op (``set``, ``move_alias``, ``move_mention``,
    ``move_fact``, ``create_`` / ``delete_`` ``anchor``, ``alias``, ``mention``,
    ``triple``); raises ``ValueError`` for any other op."""
    k = op["op"]
    if k == "set":
        table, fields = op["table"], op["after"]
        if table not in FIELDS or not set(fields) <= FIELDS[table]:
            raise ValueError(f"cannot set {sorted(fields)} on {table}")
        sets = ", ".join(f"x.{f} = $v{i}" for i, f in enumerate(fields))
        params = {f"v{i}": v for i, v in enumerate(fields.values())}
        g.execute(f"MATCH (x:{table} {{uid: $u}}) SET {sets}", {"u": op["uid"], **params})
    elif k == "move_alias":
        g.execute("MATCH (al:Alias {uid: $al})-[r:ALIAS_OF]->(:Anchor {uid: $a}) DELETE r",
                  {"al": op["alias"], "a": op["from"]})
        g.execute("MATCH (al:Alias {uid: $al}), (b:Anchor {uid: $b}) "
                  "CREATE (al)-[:ALIAS_OF]->(b)", {"al": op["alias"], "b": op["to"]})
    elif k == "move_mention":
        rows = op["rows"]
        g.unwind("MATCH (t:Turn {uid: r.node})-[m:MENTIONS]->(a:Anchor {uid: r.a_}) "
                 "WHERE m.msg = r.msg AND m.span_start = r.span_start DELETE m",
                 _rows_with(rows, op["from"]))
        _create_mentions(g, rows, op["to"])
    elif k == "move_fact":
        g.unwind("MATCH (t:Triple {uid: r.t})-[f:FACT]->(a:Anchor {uid: r.a_}) "
                 "WHERE f.role = r.role DELETE f", _rows_with(op["rows"], op["from"]))
        g.unwind("MATCH (t:Triple {uid: r.t}), (a:Anchor {uid: r.a_}) "
                 "CREATE (t)-[:FACT {role: r.role}]->(a)", _rows_with(op["rows"], op["to"]))
    elif k == "create_anchor":
        g.execute("CREATE (a:Anchor {uid: $uid, name: $name, kind: $kind, status: $status, "
                  "created_ts: $created_ts, note: $note})", op["row"])
    elif k == "delete_anchor":
        g.execute("MATCH (a:Anchor {uid: $u}) DETACH DELETE a", {"u": op["row"]["uid"]})
    elif k == "create_alias":
        r = op["row"]
        g.execute("MATCH (a:Anchor {uid: $a}) CREATE (al:Alias {uid: $uid, surface: $surface, "
                  "norm: $norm, created_ts: $created_ts})-[:ALIAS_OF]->(a)",
                  {**r, "a": op["anchor"]})
    elif k == "delete_alias":
        g.execute("MATCH (al:Alias {uid: $u}) DETACH DELETE al", {"u": op["row"]["uid"]})
    elif k == "create_mention":
        _create_mentions(g, op["rows"], op["anchor"])
    elif k == "delete_mention":
        g.unwind("MATCH (t:Turn {uid: r.node})-[m:MENTIONS]->(a:Anchor {uid: r.a_}) "
                 "WHERE m.msg = r.msg AND m.span_start = r.span_start DELETE m",
                 _rows_with(op["rows"], op["anchor"]))
    elif k == "create_triple":
        r = op["row"]
        g.execute("CREATE (t:Triple {uid: $uid, predicate: $predicate, object_literal: "
                  "$object_literal, confidence: $confidence, status: $status, valid_from: "
                  "$valid_from, superseded_by: $superseded_by, node: $node, span_start: "
                  "$span_start, span_end: $span_end, quote: $quote, created_ts: $created_ts, "
                  "slot: $slot})", r)
        g.unwind("MATCH (t:Triple {uid: r.t}), (a:Anchor {uid: r.a}) "
                 "CREATE (t)-[:FACT {role: r.role}]->(a)",
                 [{"a": a, "role": role, "t": r["uid"]} for a, role in op["facts"]])
    elif k == "delete_triple":
        g.execute("MATCH (t:Triple {uid: $u}) DETACH DELETE t", {"u": op["row"]["uid"]})
    else:
        raise ValueError(f"unknown op {k!r}")


def _rows_with(rows: Sequence[dict[str, Any]], anchor: str) -> list[dict[str, Any]]:
    """Rows for an ``UNWIND`` whose statement also reads the anchor (inlined per row)."""
    return [{**r, "a_": anchor} for r in rows]


def _create_mentions(g: GraphDB, rows: Sequence[dict[str, Any]], anchor: str) -> None:
    g.unwind("MATCH (t:Turn {uid: r.node}), (a:Anchor {uid: r.a_}) CREATE (t)-[:MENTIONS "
             "{msg: r.msg, span_start: r.span_start, span_end: r.span_end, "
             "surface: r.surface}]->(a)",
             _rows_with(rows, anchor))
