"""The review queue (SPEC §6): everything uncertain or risky waits here — alias merges,
candidate anchors, triples under the confidence bar, injection flags (and, from the
analytics area, suggested links). A decision is a set of ops recorded in the audit log
with who, when and why; approving or rejecting never edits a raw message.
"""

from __future__ import annotations

import builtins
import datetime as dt
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import InvalidInput, NotFound
from ..extract.base import FUNCTIONAL, PREDICATES
from ..graphdb import anchors as ga
from ..graphdb import logs
from ..model import REVIEW_KINDS, REVIEW_STATUSES, check_choice
from ..served import reads, writes
from . import anchors as an
from .links import link_op, mirror_hook
from .ops import record

if TYPE_CHECKING:
    from ..store.store import Store

__all__ = ["ReviewDesk", "ReviewItem"]


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


Ops = list[dict[str, Any]]
"""A decision's ops (see :mod:`.ops`)."""


class ReviewDesk:
    """Where a person decides review items: ``mem.review`` is the desk of the memory's
    store. ``mem.review()`` lists pending items; ``.approve``, ``.reject``, ``.edit``
    decide (each decision recorded in the audit log). Not to be confused with the
    notebook panel :class:`akasha_explorer.widgets.ReviewQueue`, which draws this desk."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def __call__(self, status: str | None = "pending", kind: str | None = None,
                 limit: int | None = None) -> builtins.list[ReviewItem]:
        """The same as :meth:`list`."""
        return self.list(status=status, kind=kind, limit=limit)

    @reads
    def list(self, *, status: str | None = "pending", kind: str | None = None,
             limit: int | None = None) -> builtins.list[ReviewItem]:
        """Items filtered by status (None: all) and kind, oldest first."""
        check_choice(status, REVIEW_STATUSES, "review status")
        check_choice(kind, REVIEW_KINDS, "review item kind")
        if limit is not None and limit < 1:
            raise InvalidInput(f"limit={limit!r}: give 1 or more (None: all)")
        g = self.store.graph
        names = ga.anchor_names(g)
        out = []
        for d in logs.review_items(g, status=status, kind=kind, limit=limit):
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
            return (f"{names.get(str(payload.get('keep')), '?')} = "
                    f"{names.get(str(payload.get('absorb')), '?')}? (via {payload.get('via')})")
        if kind == "anchor":
            return f"anchor {names.get(d['subject'], '?')} ({payload.get('messages')} messages)"
        if kind == "triple":
            r = ga.triple_summary(self.store.graph, d["subject"])
            if r is not None:
                return f"({r['s']}, {r['p']}, {r['o'] or r['lit']}) «{r['q']}»"
        if kind == "injection":
            return f"message {payload.get('message')}: {', '.join(payload.get('rules', []))}"
        return ""

    @reads
    def get(self, uid: str) -> ReviewItem:
        """One item by uid, whatever its status; raises :class:`NotFound`."""
        for it in self.list(status=None):
            if it.uid == uid:
                return it
        raise NotFound(f"no review item {uid!r}; `akasha review STORE list` shows the queue")

    # -- decisions -------------------------------------------------------------------------
    @writes
    def approve(self, uid: str, *, why: str | None = None, by: str = "user") -> str:
        """Approve an item (merge the aliases / activate the anchor / approve the triple and
        supersede what it replaces / confirm the flag / link the two nodes of a suggested
        link — one co-activation of the pair, see
        :func:`akasha_explorer.engine.writeback.link_plan`); returns the audit uid."""
        it = self._pending(uid)
        self.store.check_write()
        ops = self._decision_ops(it, "approved", why, by)
        if it.kind == "triple":
            ops += self._approve_triple_ops(it.subject)
        elif it.kind == "anchor":
            ops += self._set_anchor(it.subject, "active")
        elif it.kind == "alias_merge":
            ops += an.merge_ops(self.store.graph, it.payload["keep"], it.payload["absorb"])
        elif it.kind == "suggested_link":
            p = it.payload
            ops.append(link_op(self.store, p["a"], p["b"], float(p.get("now") or 0.0)))
        return self._recorded(action="approve", target=uid, ops=ops, actor=by, why=why,
                              mirror=mirror_hook(self.store))

    @writes
    def reject(self, uid: str, *, why: str | None = None, by: str = "user") -> str:
        """Reject an item (the triple / candidate anchor is marked rejected and stays so)."""
        it = self._pending(uid)
        ops = self._decision_ops(it, "rejected", why, by)
        if it.kind == "triple":
            ops.append(self._set_triple(it.subject, {"status": "rejected"}))
        elif it.kind == "anchor":
            ops += self._set_anchor(it.subject, "rejected")
        self.store.check_write()
        return self._recorded(action="reject", target=uid, ops=ops, actor=by, why=why)

    @writes
    def edit(self, uid: str, *, why: str | None = None, by: str = "user",
             **changes: Any) -> str:
        """Approve with changes: a triple's ``predicate`` / ``object_literal`` (a new triple
        supersedes the proposed one — nothing is edited in place), an anchor's ``name`` /
        ``kind``, or which anchor an alias merge ``keep``-s."""
        it = self._pending(uid)
        g = self.store.graph
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
            if not isinstance(keep, str) or keep not in pair:
                raise InvalidInput(f"keep= must be one of {sorted(pair)}")
            ops += an.merge_ops(g, keep, (pair - {keep}).pop())
        else:
            raise InvalidInput(f"a {it.kind} item cannot be edited; approve or reject it")
        self.store.check_write()
        return self._recorded(action="edit", target=uid, ops=ops, actor=by, why=why)

    # -- helpers ---------------------------------------------------------------------------
    def _recorded(self, **audit: Any) -> str:
        """:func:`~akasha_explorer.curate.ops.record` on the store's graph; the recall's
        anchor channel reads the anchors again."""
        uid = record(self.store.graph, **audit)
        self.store.anchors_changed()
        return uid

    def _pending(self, uid: str) -> ReviewItem:
        it = self.get(uid)
        if it.status != "pending":
            raise InvalidInput(f"review item {uid} is already {it.status}; undo that decision "
                               "first (`Memory.undo(audit uid)`)")
        return it

    @staticmethod
    def _decision_ops(it: ReviewItem, status: str, why: str | None, by: str
                      ) -> Ops:
        return [{"op": "set", "table": "ReviewItem", "uid": it.uid,
                 "before": {"status": it.status, "decided_ts": it.decided_ts,
                            "decided_by": it.decided_by, "why": it.why},
                 "after": {"status": status, "decided_ts": _now(), "decided_by": by,
                           "why": why or ""}}]

    def _set_anchor(self, uid: str, status: str) -> Ops:
        a = an.get_anchor(self.store.graph, uid)
        return [{"op": "set", "table": "Anchor", "uid": uid, "before": {"status": a["status"]},
                 "after": {"status": status}}]

    def _triple(self, uid: str) -> dict[str, Any]:
        t = ga.triple(self.store.graph, uid)
        if t is None:
            raise NotFound(f"no triple {uid!r}")
        return t

    def _set_triple(self, uid: str, after: dict[str, Any]) -> dict[str, Any]:
        t = self._triple(uid)
        return {"op": "set", "table": "Triple", "uid": uid,
                "before": {k: t[k] for k in after}, "after": after}

    def _approve_triple_ops(self, uid: str) -> Ops:
        t = self._triple(uid)
        ops = [self._set_triple(uid, {"status": "approved"})]
        if t["predicate"] in FUNCTIONAL:
            for old in ga.approved_in_slot(self.store.graph, subject=t["s"],
                                           predicate=t["predicate"], slot=t["slot"] or "",
                                           other_than=uid, valid_from=t["valid_from"]):
                ops.append(self._set_triple(old, {"status": "superseded",
                                                  "superseded_by": uid}))
        return ops

    def _edit_triple_ops(self, uid: str, changes: dict[str, Any]) -> Ops:
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
