"""The review queue (SPEC §6): everything uncertain or risky waits here — alias merges,
candidate anchors, triples under the confidence bar, injection flags (and, from the
analytics area, suggested links). A decision is a set of ops recorded in the audit log
with who, when and why; approving or rejecting never edits a raw message.
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import InvalidInput, NotFound
from ..extract.base import FUNCTIONAL, PREDICATES
from . import anchors as an
from .ops import record

if TYPE_CHECKING:
    from ..memory import Memory

__all__ = ["ReviewItem", "ReviewQueue"]


@dataclass(frozen=True)
class ReviewItem:
    """One review item as listed (``detail`` joins what it is about, for display)."""

    uid: str
    kind: str
    status: str
    subject: str
    payload: dict[str, Any]
    confidence: float
    created_ts: float
    decided_ts: float | None
    decided_by: str | None
    why: str | None
    detail: str = ""


class ReviewQueue:
    """``mem.review()`` lists; ``.approve``, ``.reject``, ``.edit`` decide."""

    def __init__(self, mem: Memory) -> None:
        self._mem = mem

    def __call__(self, status: str | None = "pending", kind: str | None = None,
                 limit: int | None = None) -> list[ReviewItem]:
        return self.list(status=status, kind=kind, limit=limit)

    def list(self, *, status: str | None = "pending", kind: str | None = None,
             limit: int | None = None) -> list[ReviewItem]:
        """Items filtered by status (None: all) and kind, oldest first."""
        g = self._mem.graph
        q = ("MATCH (r:ReviewItem) WHERE ($s IS NULL OR r.status = $s) AND "
             "($k IS NULL OR r.kind = $k) RETURN r.* ORDER BY r.created_ts, r.uid")
        if limit:
            q += f" LIMIT {int(limit)}"
        names = {r["u"]: r["n"] for r in g.rows("MATCH (a:Anchor) RETURN a.uid AS u, a.name AS n")}
        out = []
        for r in g.rows(q, {"s": status, "k": kind}):
            d = {k.split(".", 1)[1]: v for k, v in r.items()}
            payload = json.loads(d["payload"]) if d["payload"] else {}
            out.append(ReviewItem(
                uid=d["uid"], kind=d["kind"], status=d["status"], subject=d["subject"],
                payload=payload, confidence=float(d["confidence"] or 0.0),
                created_ts=float(d["created_ts"] or 0.0), decided_ts=d["decided_ts"],
                decided_by=d["decided_by"], why=d["why"], detail=self._detail(d, payload, names)))
        return out

    def _detail(self, d: dict[str, Any], payload: dict[str, Any], names: dict[str, str]) -> str:
        kind = d["kind"]
        if kind == "alias_merge":
            return (f"{names.get(payload.get('keep'), '?')} = "
                    f"{names.get(payload.get('absorb'), '?')}? (via {payload.get('via')})")
        if kind == "anchor":
            return f"anchor {names.get(d['subject'], '?')} ({payload.get('messages')} messages)"
        if kind == "triple":
            rows = self._mem.graph.rows(
                "MATCH (t:Triple {uid: $u}) OPTIONAL MATCH (t)-[:FACT {role: 'subject'}]->(s) "
                "OPTIONAL MATCH (t)-[:FACT {role: 'object'}]->(o) RETURN s.name AS s, "
                "t.predicate AS p, o.name AS o, t.object_literal AS lit, t.quote AS q",
                {"u": d["subject"]})
            if rows:
                r = rows[0]
                return f"({r['s']}, {r['p']}, {r['o'] or r['lit']}) «{r['q']}»"
        if kind == "injection":
            return f"message {payload.get('message')}: {', '.join(payload.get('rules', []))}"
        return ""

    def get(self, uid: str) -> ReviewItem:
        for it in self.list(status=None):
            if it.uid == uid:
                return it
        raise NotFound(f"no review item {uid!r}; `akasha review STORE list` shows the queue")

    # -- decisions -------------------------------------------------------------------------
    def approve(self, uid: str, *, why: str | None = None, by: str = "user") -> str:
        """Approve an item (merge the aliases / activate the anchor / approve the triple and
        supersede what it replaces / confirm the flag / link the two nodes of a suggested
        link — one co-activation of the pair, see
        :func:`akasha_explorer.engine.writeback.link_plan`); returns the audit uid."""
        it = self._pending(uid)
        self._mem._check_write()
        ops = self._decision_ops(it, "approved", why, by)
        if it.kind == "triple":
            ops += self._approve_triple_ops(it.subject)
        elif it.kind == "anchor":
            ops += self._set_anchor(it.subject, "active")
        elif it.kind == "alias_merge":
            ops += an.merge_ops(self._mem.graph, it.payload["keep"], it.payload["absorb"])
        elif it.kind == "suggested_link":
            p = it.payload
            ops.append(self._mem._link_op(p["a"], p["b"], float(p.get("now") or 0.0)))
        return record(self._mem.graph, action="approve", target=uid, ops=ops, actor=by, why=why,
                      mirror=self._mem._mirror_ops)

    def reject(self, uid: str, *, why: str | None = None, by: str = "user") -> str:
        """Reject an item (the triple / candidate anchor is marked rejected and stays so)."""
        it = self._pending(uid)
        ops = self._decision_ops(it, "rejected", why, by)
        if it.kind == "triple":
            ops.append(self._set_triple(it.subject, {"status": "rejected"}))
        elif it.kind == "anchor":
            ops += self._set_anchor(it.subject, "rejected")
        self._mem._check_write()
        return record(self._mem.graph, action="reject", target=uid, ops=ops, actor=by, why=why)

    def edit(self, uid: str, *, why: str | None = None, by: str = "user",
             **changes: Any) -> str:
        """Approve with changes: a triple's ``predicate`` / ``object_literal`` (a new triple
        supersedes the proposed one — nothing is edited in place), an anchor's ``name`` /
        ``kind``, or which anchor an alias merge ``keep``-s."""
        it = self._pending(uid)
        g = self._mem.graph
        ops = self._decision_ops(it, "edited", why, by)
        if it.kind == "triple":
            ops += self._edit_triple_ops(it.subject, changes)
        elif it.kind == "anchor":
            bad = set(changes) - {"name", "kind"}
            if bad:
                raise InvalidInput(f"an anchor edit takes name / kind, not {sorted(bad)}")
            a = an.get_anchor(g, it.subject)
            ops.append({"op": "set", "table": "Anchor", "uid": it.subject,
                        "before": {k: a[k] for k in [*changes, "status"]},
                        "after": {**changes, "status": "active"}})
        elif it.kind == "alias_merge":
            keep = changes.get("keep")
            pair = {it.payload["keep"], it.payload["absorb"]}
            if keep not in pair:
                raise InvalidInput(f"keep= must be one of {sorted(pair)}")
            ops += an.merge_ops(g, keep, (pair - {keep}).pop())
        else:
            raise InvalidInput(f"a {it.kind} item cannot be edited; approve or reject it")
        self._mem._check_write()
        return record(g, action="edit", target=uid, ops=ops, actor=by, why=why)

    # -- helpers ---------------------------------------------------------------------------
    def _pending(self, uid: str) -> ReviewItem:
        it = self.get(uid)
        if it.status != "pending":
            raise InvalidInput(f"review item {uid} is already {it.status}; undo that decision "
                               "first (`Memory.undo(audit uid)`)")
        return it

    @staticmethod
    def _decision_ops(it: ReviewItem, status: str, why: str | None, by: str
                      ) -> list[dict[str, Any]]:
        return [{"op": "set", "table": "ReviewItem", "uid": it.uid,
                 "before": {"status": it.status, "decided_ts": it.decided_ts,
                            "decided_by": it.decided_by, "why": it.why},
                 "after": {"status": status, "decided_ts": _now(), "decided_by": by,
                           "why": why or ""}}]

    def _set_anchor(self, uid: str, status: str) -> list[dict[str, Any]]:
        a = an.get_anchor(self._mem.graph, uid)
        return [{"op": "set", "table": "Anchor", "uid": uid, "before": {"status": a["status"]},
                 "after": {"status": status}}]

    def _triple(self, uid: str) -> dict[str, Any]:
        rows = self._mem.graph.rows(
            "MATCH (t:Triple {uid: $u})-[:FACT {role: 'subject'}]->(s:Anchor) "
            "OPTIONAL MATCH (t)-[:FACT {role: 'object'}]->(o:Anchor) RETURN t.*, s.uid AS s, "
            "o.uid AS o", {"u": uid})
        if not rows:
            raise NotFound(f"no triple {uid!r}")
        return {k.split(".", 1)[-1]: v for k, v in rows[0].items()}

    def _set_triple(self, uid: str, after: dict[str, Any]) -> dict[str, Any]:
        t = self._triple(uid)
        return {"op": "set", "table": "Triple", "uid": uid,
                "before": {k: t[k] for k in after}, "after": after}

    def _approve_triple_ops(self, uid: str) -> list[dict[str, Any]]:
        t = self._triple(uid)
        ops = [self._set_triple(uid, {"status": "approved"})]
        if t["predicate"] in FUNCTIONAL:
            for r in self._mem.graph.rows(
                    "MATCH (x:Triple)-[:FACT {role: 'subject'}]->(:Anchor {uid: $s}) WHERE "
                    "x.status = 'approved' AND x.predicate = $p AND x.slot = $slot AND "
                    "x.uid <> $u AND x.valid_from <= $vf RETURN x.uid AS u",
                    {"s": t["s"], "p": t["predicate"], "slot": t["slot"] or "", "u": uid,
                     "vf": t["valid_from"]}):
                ops.append(self._set_triple(r["u"], {"status": "superseded",
                                                     "superseded_by": uid}))
        return ops

    def _edit_triple_ops(self, uid: str, changes: dict[str, Any]) -> list[dict[str, Any]]:
        bad = set(changes) - {"predicate", "object_literal"}
        if bad:
            raise InvalidInput(f"a triple edit takes predicate / object_literal, not {sorted(bad)}")
        if "predicate" in changes and changes["predicate"] not in PREDICATES:
            raise InvalidInput(f"unknown predicate {changes['predicate']!r}; one of "
                               f"{', '.join(PREDICATES)}")
        t = self._triple(uid)
        new = f"{uid}-e{int(_now() * 1000) % 10**9}"
        row = {k: t[k] for k in ("predicate", "object_literal", "confidence", "valid_from",
                                 "node", "span_start", "span_end", "quote", "created_ts",
                                 "slot")}
        row.update(changes, uid=new, status="approved", superseded_by="", confidence=1.0)
        facts = [[t["s"], "subject"]]
        if t["o"] and "object_literal" not in changes:
            facts.append([t["o"], "object"])
        return [{"op": "create_triple", "row": row, "facts": facts},
                self._set_triple(uid, {"status": "superseded", "superseded_by": new})]


def _now() -> float:
    return dt.datetime.now(dt.UTC).timestamp()
