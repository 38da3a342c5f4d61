"""Invertible graph edits and the audit log (SPEC §6).

Every curation action and review decision is a list of small *ops* on Kuzu — set fields of
a node, create / delete an anchor, alias, mention or triple, move an alias, mention or fact
from one anchor to another. Each op has an exact inverse, so the audit log row of a
decision stores the ops it applied (``after``) and their inverses (``before``); undo applies
the inverses in reverse order and records that as a decision of its own. Raw messages are
never touched by any op. Values always travel as query parameters, never spliced into
Cypher text (names with ``'``, ``}``, ``\\`` or backticks are stored verbatim).

>>> invert({"op": "set", "table": "Anchor", "uid": "a", "before": {"name": "x"},
...         "after": {"name": "y"}})["after"]
{'name': 'x'}
"""

from __future__ import annotations

import datetime as dt
import json
import uuid
from collections.abc import Callable, Sequence
from typing import Any

from ..errors import InvalidInput, NotFound
from ..graphdb import GraphDB

__all__ = ["MIRROR_OPS", "MirrorHook", "apply_ops", "audit_rows", "invert", "log_entry", "record",
           "undo"]

_FIELDS = {
    "Anchor": {"name", "kind", "status", "note"},
    "Triple": {"status", "superseded_by", "predicate", "object_literal", "confidence"},
    "ReviewItem": {"status", "decided_ts", "decided_by", "why", "payload"},
}
_INVERSE = {"create_anchor": "delete_anchor", "delete_anchor": "create_anchor",
            "create_alias": "delete_alias", "delete_alias": "create_alias",
            "create_mention": "delete_mention", "delete_mention": "create_mention",
            "create_triple": "delete_triple", "delete_triple": "create_triple"}


MIRROR_OPS = {"link": "unlink", "unlink": "link"}
"""Ops on COACT edges: the memory's mirror applies them through its journal (Kuzu gets them
at the next checkpoint), after the audit row committed. ``plan`` is the link's write-back
plan (:func:`akasha_explorer.engine.writeback.link_plan`)."""

MirrorHook = Callable[[Sequence[dict[str, Any]], bool], None]
"""``hook(ops, dry)``: check (``dry=True``, raising if an op cannot apply) or apply the
mirror ops of a decision."""


def invert(op: dict[str, Any]) -> dict[str, Any]:
    """The op that undoes ``op``."""
    k = op["op"]
    if k in MIRROR_OPS:
        return {**op, "op": MIRROR_OPS[k]}
    if k == "set":
        return {**op, "before": op["after"], "after": op["before"]}
    if k.startswith("move_"):
        return {**op, "from": op["to"], "to": op["from"]}
    if k in _INVERSE:
        return {**op, "op": _INVERSE[k]}
    raise ValueError(f"unknown op {k!r}")


def apply_ops(g: GraphDB, ops: Sequence[dict[str, Any]]) -> None:
    """Apply ``ops`` (graph ops only) in order inside one transaction."""
    if any(o["op"] in MIRROR_OPS for o in ops):
        raise InvalidInput("ops on co-activation edges go through record(..., mirror=...)")
    with g.transaction():
        for op in ops:
            _apply(g, op)


def _apply(g: GraphDB, op: dict[str, Any]) -> None:
    k = op["op"]
    if k in MIRROR_OPS:
        return  # the mirror hook applies it after the commit
    if k == "set":
        table, fields = op["table"], op["after"]
        if table not in _FIELDS or not set(fields) <= _FIELDS[table]:
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
                 rows_with(rows, op["from"]))
        _create_mentions(g, rows, op["to"])
    elif k == "move_fact":
        g.unwind("MATCH (t:Triple {uid: r.t})-[f:FACT]->(a:Anchor {uid: r.a_}) "
                 "WHERE f.role = r.role DELETE f", rows_with(op["rows"], op["from"]))
        g.unwind("MATCH (t:Triple {uid: r.t}), (a:Anchor {uid: r.a_}) "
                 "CREATE (t)-[:FACT {role: r.role}]->(a)", rows_with(op["rows"], op["to"]))
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
                 rows_with(op["rows"], op["anchor"]))
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


def rows_with(rows: Sequence[dict[str, Any]], anchor: str) -> list[dict[str, Any]]:
    """Rows for an ``UNWIND`` whose statement also reads ``$a`` (inlined per row)."""
    return [{**r, "a_": anchor} for r in rows]


def _create_mentions(g: GraphDB, rows: Sequence[dict[str, Any]], anchor: str) -> None:
    g.unwind("MATCH (t:Turn {uid: r.node}), (a:Anchor {uid: r.a_}) CREATE (t)-[:MENTIONS "
             "{msg: r.msg, span_start: r.span_start, span_end: r.span_end, "
             "surface: r.surface}]->(a)",
             rows_with(rows, anchor))


def record(g: GraphDB, *, action: str, target: str, ops: Sequence[dict[str, Any]],
           actor: str = "user", why: str | None = None, mirror: MirrorHook | None = None) -> str:
    """Apply ``ops`` and write their audit row in the same transaction; returns its uid.

    Ops on COACT edges (:data:`MIRROR_OPS`) need ``mirror``: they are checked before the
    transaction and applied through it right after the commit (a crash in between leaves
    the decision recorded without its edge change)."""
    on_mirror = [o for o in ops if o["op"] in MIRROR_OPS]
    if on_mirror:
        if mirror is None:
            raise InvalidInput("this decision changes co-activation edges; make it through "
                               "the Memory (mem.review / mem.undo)")
        mirror(on_mirror, True)
    with g.transaction():
        for op in ops:
            _apply(g, op)
        uid = log_entry(g, action=action, target=target, actor=actor, why=why,
                        before=_dumps([invert(o) for o in reversed(ops)]),
                        after=_dumps(list(ops)))
    if on_mirror and mirror is not None:
        mirror(on_mirror, False)
    return uid


def log_entry(g: GraphDB, *, action: str, target: str, actor: str, why: str | None,
              before: str, after: str) -> str:
    """Write one audit row as given (``before`` empty: not undoable); returns its uid."""
    uid = f"au-{uuid.uuid4().hex[:16]}"
    g.execute("CREATE (x:AuditLog {uid: $uid, ts: $ts, actor: $actor, action: $action, "
              "target: $target, why: $why, before: $before, after: $after, undone: false})",
              {"uid": uid, "ts": _now(), "actor": actor, "action": action, "target": target,
               "why": why or "", "before": before, "after": after})
    return uid


def undo(g: GraphDB, audit_uid: str, *, actor: str = "user", why: str | None = None,
         mirror: MirrorHook | None = None) -> str:
    """Undo one audit entry (its ops inverted, newest first); returns the undo's audit uid."""
    rows = g.rows("MATCH (x:AuditLog {uid: $u}) RETURN x.before AS before, x.undone AS undone, "
                  "x.action AS action, x.target AS target", {"u": audit_uid})
    if not rows:
        raise NotFound(f"no audit entry {audit_uid!r}; `Memory.audit()` lists them")
    r = rows[0]
    if r["undone"]:
        raise InvalidInput(f"audit entry {audit_uid} was already undone")
    if r["before"] in ("", "redacted") or r["action"] == "forget":
        raise InvalidInput(f"audit entry {audit_uid} ({r['action']}) cannot be undone: "
                           "a forget is final and erases what it touched")
    ops = json.loads(r["before"])
    uid = record(g, action="undo", target=audit_uid, ops=ops, actor=actor,
                 why=why or f"undo {r['action']} {r['target']}", mirror=mirror)
    g.execute("MATCH (x:AuditLog {uid: $u}) SET x.undone = true", {"u": audit_uid})
    return uid


def audit_rows(g: GraphDB, *, target: str | None = None, limit: int | None = None
               ) -> list[dict[str, Any]]:
    """Audit log entries, newest first (ops decoded)."""
    q = "MATCH (x:AuditLog) "
    params: dict[str, Any] = {}
    if target is not None:
        q += "WHERE x.target = $t "
        params["t"] = target
    q += ("RETURN x.uid AS uid, x.ts AS ts, x.actor AS actor, x.action AS action, "
          "x.target AS target, x.why AS why, x.after AS after, x.undone AS undone "
          "ORDER BY x.ts DESC")
    if limit:
        q += f" LIMIT {int(limit)}"
    out = g.rows(q, params)
    for r in out:
        r["ops"] = json.loads(r.pop("after")) if r["after"] not in ("", "redacted") else []
    return out


def _dumps(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


def _now() -> float:
    return dt.datetime.now(dt.UTC).timestamp()
