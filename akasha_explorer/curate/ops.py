"""Invertible graph edits and the audit log (SPEC §6).

Every curation action and review decision is a list of small *ops* on Kuzu — set fields of
a node, create / delete an anchor, alias, mention or triple, move an alias, mention or fact
from one anchor to another. Each op has an exact inverse, so the audit log row of a
decision stores the ops it applied (``after``) and their inverses (``before``); undo applies
the inverses in reverse order and records that as a decision of its own. Raw messages are
never touched by any op; :func:`akasha_explorer.graphdb.edits.apply_edit` runs an op's
statements.

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
from ..graphdb import GraphDB, logs
from ..graphdb.edits import apply_edit
from ..model import AuditEntry

__all__ = ["MIRROR_OPS", "MirrorHook", "apply_ops", "audit_rows", "invert", "log_entry", "record",
           "undo"]

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
    if op["op"] in MIRROR_OPS:
        return  # the mirror hook applies it after the commit
    apply_edit(g, op)


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
    logs.add_audit(g, {"uid": uid, "ts": _now(), "actor": actor, "action": action,
                       "target": target, "why": why or "", "before": before, "after": after})
    return uid


def undo(g: GraphDB, audit_uid: str, *, actor: str = "user", why: str | None = None,
         mirror: MirrorHook | None = None) -> str:
    """Undo one audit entry (its ops inverted, newest first); returns the undo's audit uid."""
    r = logs.audit_entry(g, audit_uid)
    if r is None:
        raise NotFound(f"no audit entry {audit_uid!r}; `Memory.audit()` lists them")
    if r["undone"]:
        raise InvalidInput(f"audit entry {audit_uid} was already undone")
    if r["before"] in ("", "redacted") or r["action"] == "forget":
        raise InvalidInput(f"audit entry {audit_uid} ({r['action']}) cannot be undone: "
                           "a forget is final and erases what it touched")
    ops = json.loads(r["before"])
    uid = record(g, action="undo", target=audit_uid, ops=ops, actor=actor,
                 why=why or f"undo {r['action']} {r['target']}", mirror=mirror)
    logs.mark_undone(g, audit_uid)
    return uid


def audit_rows(g: GraphDB, *, target: str | None = None, limit: int | None = None
               ) -> list[AuditEntry]:
    """Audit log entries, newest first (ops decoded)."""
    out = []
    for r in logs.audit_log(g, target=target, limit=limit):
        after = r.pop("after")
        out.append(AuditEntry(**r, ops=tuple(json.loads(after)) if after not in ("", "redacted")
                              else ()))
    return out


def _dumps(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


def _now() -> float:
    return dt.datetime.now(dt.UTC).timestamp()
