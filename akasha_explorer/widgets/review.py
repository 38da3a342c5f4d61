"""ReviewQueue — work through pending review items (candidate anchors, alias merges,
low-confidence triples, injection flags, suggested links) with approve / reject / edit, read
the audit log and undo a decision (SPEC §6, §8).

Each button is one call of the review API (``mem.review.approve`` / ``.reject`` / ``.edit``,
``mem.undo``) with the "why" typed beside it; after a decision the next pending item opens.
Texts that were flagged (e.g. an injection attempt) are shown escaped, never as HTML.

>>> ReviewQueue.__mro__[1].__name__
'VBox'
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import ipywidgets as W
import pandas as pd

from ..errors import AkashaError
from ..extract.base import PREDICATES
from ..model import ANCHOR_KINDS, REVIEW_KINDS, REVIEW_STATUSES
from ._html import STYLE, esc, iso, kv_html, messages_html, note, short
from ._inputs import ALL, unset_to_none
from .auditbox import AuditBox
from .curator import quote_html

if TYPE_CHECKING:
    from ..curate.review import ReviewItem
    from ..protocol import MemoryAPI

__all__ = ["EDITABLE", "ReviewQueue"]

EDITABLE = {
    "triple": ("predicate", "object_literal"),
    "anchor": ("name", "kind"),
    "alias_merge": ("keep",),
}
"""What an edit can change, per item kind (see ``mem.review.edit``)."""



class ReviewQueue(W.VBox):
    """Work through the review queue of ``mem`` (see the module docstring).

    Scripting: :meth:`refresh`, :meth:`show`, :meth:`items_df`, :meth:`audit_df`; the
    widgets (:attr:`kind`, :attr:`status_pick`, :attr:`items`, :attr:`why`,
    :attr:`approve_button`, :attr:`reject_button`, :attr:`edit_field`, :attr:`edit_value`,
    :attr:`edit_button`, :attr:`audit_pick`, :attr:`undo_button`) are public.
    """

    def __init__(self, mem: MemoryAPI) -> None:
        self.mem = mem
        self.item: ReviewItem | None = None
        self._items: list[ReviewItem] = []

        self.kind = W.Dropdown(options=[("all kinds", ALL), *[(k, k) for k in REVIEW_KINDS]],
                               description="kind")
        self.status_pick = W.Dropdown(options=[*[(s, s) for s in REVIEW_STATUSES], ("all", ALL)],
                                      description="status")
        self.refresh_button = W.Button(description="Refresh", icon="refresh")
        self.summary = W.HTML()
        self.items = W.Select(options=[], rows=10, description="items",
                              layout=W.Layout(width="98%"))
        self.detail = W.HTML(layout=W.Layout(width="100%"))
        self.detail.add_class("ak-wide")
        self.why = W.Text(placeholder="why (kept in the audit log)", description="why",
                          layout=W.Layout(width="60%"))
        self.approve_button = W.Button(description="Approve", icon="check",
                                       button_style="success")
        self.reject_button = W.Button(description="Reject", icon="times", button_style="danger")
        self.edit_field = W.Dropdown(options=[], description="edit")
        self.edit_value = W.Combobox(placeholder="new value", description="value",
                                     ensure_option=False)
        self.edit_button = W.Button(description="Edit & approve", icon="pencil")
        self.audit_box = AuditBox()
        self.audit_pick = self.audit_box.pick
        self.undo_button = self.audit_box.undo_button
        self.audit = self.audit_box.table
        self.status = W.HTML()

        self.refresh_button.on_click(lambda _b: self.refresh())
        self.kind.observe(lambda _c: self.refresh(), names="value")
        self.status_pick.observe(lambda _c: self.refresh(), names="value")
        self.items.observe(lambda c: c["new"] and self.show(c["new"]), names="value")
        self.edit_field.observe(lambda _c: self._edit_choices(), names="value")
        self.approve_button.on_click(lambda _b: self._decide("approve"))
        self.reject_button.on_click(lambda _b: self._decide("reject"))
        self.edit_button.on_click(lambda _b: self._decide("edit"))
        self.undo_button.on_click(lambda _b: self._undo())
        for b in (self.approve_button, self.reject_button, self.edit_button, self.undo_button):
            b.disabled = mem.read_only

        super().__init__([
            W.HTML(STYLE),
            W.HBox([self.kind, self.status_pick, self.refresh_button]),
            self.summary,
            self.items,
            self.detail,
            self.why,
            W.HBox([self.approve_button, self.reject_button]),
            W.HBox([self.edit_field, self.edit_value, self.edit_button]),
            self.audit_box.widget(),
            self.status,
        ])
        self.add_class("ak-panel")
        if mem.read_only:
            self.status.value = note("the store is open read-only: browsing only")
        self.refresh()

    # -- listing ---------------------------------------------------------------------------
    def refresh(self) -> list[ReviewItem]:
        """Reload the items (kind / status filters), the counts and the audit log; opens the
        first item when none is open."""
        try:
            items = self.mem.review.list(status=unset_to_none(self.status_pick.value),
                                         kind=unset_to_none(self.kind.value))
            pending = self.mem.review.list(status="pending")
        except AkashaError as err:
            self.status.value = note(str(err), error=True)
            return []
        self._items = items
        counts = pd.Series([i.kind for i in pending]).value_counts()
        self.summary.value = note(f"{len(pending)} pending: " + (", ".join(
            f"{k} {v}" for k, v in counts.items()) or "nothing to review"))
        keep = self.items.value
        self.items.options = [
            (f"[{i.kind}] {short(i.detail or i.subject, 80)} · conf {i.confidence:.2f}"
             + ("" if i.status == "pending" else f" · {i.status}"), i.uid) for i in items]
        uids = [i.uid for i in items]
        if keep in uids:
            self.items.value = keep
            self.show(keep)
        elif uids:
            self.items.value = uids[0]
            self.show(uids[0])
        else:
            self.item = None
            self.detail.value = note("no items here")
        self._refresh_audit()
        return items

    def items_df(self) -> pd.DataFrame:
        """The listed items as a DataFrame (uid, kind, status, subject, detail, confidence,
        created, decided_by, why)."""
        return pd.DataFrame([{"uid": i.uid, "kind": i.kind, "status": i.status,
                              "subject": i.subject, "detail": i.detail,
                              "confidence": i.confidence, "created": iso(i.created_ts),
                              "decided_by": i.decided_by, "why": i.why} for i in self._items],
                            columns=["uid", "kind", "status", "subject", "detail",
                                     "confidence", "created", "decided_by", "why"])

    def audit_df(self, limit: int = 50) -> pd.DataFrame:
        """The audit log, newest first: uid, time, actor, action, target, why, undone."""
        return self.audit_box.frame(self.mem, limit)

    def _refresh_audit(self) -> None:
        self.audit_box.refresh(self.mem)

    # -- one item --------------------------------------------------------------------------
    def show(self, uid: str) -> ReviewItem | None:
        """Open review item ``uid``: what it is about, with the verbatim text behind it."""
        it = next((i for i in self._items if i.uid == uid), None)
        if it is None:
            try:
                it = self.mem.review.get(uid)
            except AkashaError as err:
                self.status.value = note(str(err), error=True)
                return None
        self.item = it
        head = kv_html([("kind", it.kind), ("status", it.status), ("about", it.detail),
                        ("confidence", it.confidence), ("created", iso(it.created_ts)),
                        ("decided by", it.decided_by), ("why", it.why)])
        self.detail.value = head + self._context(it)
        fields = EDITABLE.get(it.kind, ())
        self.edit_field.options = list(fields)
        self.edit_field.value = fields[0] if fields else None
        self._edit_choices()
        pending = it.status == "pending" and not self.mem.read_only
        for b in (self.approve_button, self.reject_button):
            b.disabled = not pending
        self.edit_button.disabled = not pending or not fields
        return it

    def _context(self, it: ReviewItem) -> str:
        p = it.payload
        try:
            if it.kind == "injection" and p.get("message"):
                node = self.mem.node_of_message(p["message"])
                msgs = [m for m in self.mem.messages(node, verify=False)
                        if m.uid == p["message"]] if node else []
                return ("<div><b>flagged message</b> (shown as text, never run)</div>"
                        + messages_html(msgs))
            if it.kind == "anchor":
                return self._anchor_html(it.subject)
            if it.kind == "alias_merge":
                return "".join(self._anchor_html(p[k]) for k in ("keep", "absorb") if p.get(k))
            if it.kind == "triple" and p.get("node"):
                return ("<div><b>said in</b></div>"
                        + messages_html(self.mem.messages(p["node"], verify=False)))
            if it.kind == "suggested_link":
                nodes = [p.get("a"), p.get("b")]
                body = "".join(f"<div><b>{esc(n)}</b></div>"
                               + messages_html(self.mem.messages(n, verify=False))
                               for n in nodes if n)
                return f"<div>{esc(p.get('why', ''))}</div>{body}"
        except AkashaError as err:
            return note(str(err), error=True)
        return f"<pre>{esc(json.dumps(p, ensure_ascii=False, indent=1))}</pre>"

    def _anchor_html(self, uid: str) -> str:
        a = self.mem.anchors.get(uid)
        quotes = []
        for m in a.mentions[:5]:
            text = next((x.text for x in self.mem.messages(m.node, verify=False)
                         if x.uid == m.msg), "")
            q = quote_html(text, m.span_start, m.span_end)
            quotes.append(f"<li>{esc(m.node)}: {q}</li>")
        aliases = ", ".join(x.surface for x in a.aliases)
        return (f"<div><b>{esc(a.name)}</b> ({esc(a.kind)}, {esc(a.status)}) — "
                f"aliases: {esc(aliases)} — {len(a.mentions)} mentions</div>"
                f"<ul>{''.join(quotes)}</ul>")

    def _edit_choices(self) -> None:
        f = self.edit_field.value
        it = self.item
        if f == "predicate":
            self.edit_value.options = list(PREDICATES)
        elif f == "kind":
            self.edit_value.options = list(ANCHOR_KINDS)
        elif f == "keep" and it is not None:
            self.edit_value.options = [it.payload.get("keep", ""), it.payload.get("absorb", "")]
        else:
            self.edit_value.options = []
        self.edit_value.value = ""

    # -- decisions -------------------------------------------------------------------------
    def _decide(self, action: str) -> str | None:
        it = self.item
        if it is None:
            self.status.value = note("pick an item first", error=True)
            return None
        why = self.why.value.strip() or None
        try:
            if action == "approve":
                audit = self.mem.review.approve(it.uid, why=why)
            elif action == "reject":
                audit = self.mem.review.reject(it.uid, why=why)
            else:
                field, value = self.edit_field.value, self.edit_value.value.strip()
                if not field or not value:
                    self.status.value = note("choose what to edit and type the new value",
                                             error=True)
                    return None
                audit = self.mem.review.edit(it.uid, why=why, **{field: value})
        except AkashaError as err:
            self.status.value = note(str(err), error=True)
            return None
        self.why.value = ""
        done = it.uid
        self.refresh()
        self.status.value = note(f"{action}: {done} (audit {audit})")
        return audit

    def _undo(self) -> str | None:
        target = self.audit_pick.value
        if not target:
            self.status.value = note("pick the audit entry to undo", error=True)
            return None
        try:
            audit = self.mem.undo(target, why=self.why.value.strip() or None)
        except AkashaError as err:
            self.status.value = note(str(err), error=True)
            return None
        self.refresh()
        self.status.value = note(f"undid {target} (audit {audit})")
        return audit
