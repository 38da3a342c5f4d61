"""AnchorCurator — list and search anchors, read their aliases, mentions (with the quote
around each, verbatim) and triples; rename, merge, split, add or remove aliases, and undo
(SPEC §6, §8).

Every change is one call of the curation API behind a button (``mem.anchors.rename``,
``.merge``, ``.split``, ``.add_alias``, ``.remove_alias``, ``mem.undo``); each is recorded
in the audit log with the "why" typed beside it, and the panel shows the audit uid it
returned. The panel itself keeps no state of the store.

>>> AnchorCurator.__mro__[1].__name__
'VBox'
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import ipywidgets as W
import pandas as pd

from ..errors import AkashaError
from ..model import ANCHOR_KINDS, Anchor, AnchorDetail
from ._html import STYLE, esc, frame_html, note, short
from ._inputs import ALL, unset_to_none
from .auditbox import AuditBox

if TYPE_CHECKING:
    from ..protocol import MemoryAPI

__all__ = ["AnchorCurator", "quote_html"]

QUOTE_CONTEXT = 30
"""Characters shown on each side of a mention."""
MAX_MENTIONS = 60


def quote_html(text: str, start: int, end: int, context: int = QUOTE_CONTEXT) -> str:
    """The verbatim text around ``text[start:end]`` with the mention marked; all escaped.

    >>> quote_html("我和<b>阿岚</b>打牌", 5, 7, context=3)
    '…&lt;b&gt;<mark>阿岚</mark>&lt;/b…'
    """
    a, b = max(0, start - context), min(len(text), end + context)
    pre = ("…" if a > 0 else "") + esc(text[a:start])
    post = esc(text[end:b]) + ("…" if b < len(text) else "")
    return f"{pre}<mark>{esc(text[start:end])}</mark>{post}"


class AnchorCurator(W.VBox):
    """Curate the anchors of ``mem`` (see the module docstring).

    Scripting: :meth:`refresh`, :meth:`show`, :meth:`anchors_df`, :meth:`mentions_df`; the
    widgets (:attr:`search_box`, :attr:`anchor_list`, :attr:`rename_box`,
    :attr:`rename_button`, :attr:`alias_box`, :attr:`add_alias_button`,
    :attr:`alias_pick`, :attr:`remove_alias_button`, :attr:`merge_pick`,
    :attr:`merge_button`, :attr:`split_pick`, :attr:`split_name`, :attr:`split_button`,
    :attr:`why`, :attr:`audit_pick`, :attr:`undo_button`) are public.
    """

    def __init__(self, mem: MemoryAPI) -> None:
        self.mem = mem
        self.anchor: AnchorDetail | None = None
        self._rows: list[Anchor] = []
        self._texts: dict[str, str] = {}

        self.search_box = W.Text(placeholder="name or alias", description="search")
        self.kind = W.Dropdown(options=[("all kinds", ALL)] + [(k, k) for k in ANCHOR_KINDS],
                               description="kind")
        self.status_pick = W.Dropdown(options=[("active", "active"), ("candidate", "candidate"),
                                               ("rejected", "rejected"), ("all", ALL)],
                                      description="status")
        self.search_button = W.Button(description="List", icon="search", button_style="primary")
        self.anchor_list = W.Select(options=[], rows=10, description="anchors",
                                    layout=W.Layout(width="98%"))
        self.detail = W.HTML(layout=W.Layout(width="100%"))
        self.detail.add_class("ak-wide")
        self.why = W.Text(placeholder="why (kept in the audit log)", description="why",
                          layout=W.Layout(width="60%"))
        self.rename_box = W.Text(description="new name")
        self.rename_button = W.Button(description="Rename", icon="pencil")
        self.alias_box = W.Text(description="alias")
        self.add_alias_button = W.Button(description="Add alias", icon="plus")
        self.alias_pick = W.Dropdown(options=[], description="alias")
        self.remove_alias_button = W.Button(description="Remove alias", icon="minus")
        self.merge_pick = W.Dropdown(options=[], description="absorb",
                                     layout=W.Layout(width="50%"))
        self.merge_button = W.Button(description="Merge into this", icon="compress")
        self.split_pick = W.SelectMultiple(options=[], rows=4, description="split off")
        self.split_name = W.Text(description="new name", placeholder="(first alias)")
        self.split_button = W.Button(description="Split", icon="expand")
        self.audit_box = AuditBox()
        self.audit_pick = self.audit_box.pick
        self.undo_button = self.audit_box.undo_button
        self.audit = self.audit_box.table
        self.status = W.HTML()

        self.search_button.on_click(lambda _b: self.refresh())
        self.anchor_list.observe(lambda c: c["new"] and self.show(c["new"]), names="value")
        self.rename_button.on_click(lambda _b: self._act(self._rename))
        self.add_alias_button.on_click(lambda _b: self._act(self._add_alias))
        self.remove_alias_button.on_click(lambda _b: self._act(self._remove_alias))
        self.merge_button.on_click(lambda _b: self._act(self._merge))
        self.split_button.on_click(lambda _b: self._act(self._split))
        self.undo_button.on_click(lambda _b: self._act(self._undo))

        writes = [self.rename_button, self.add_alias_button, self.remove_alias_button,
                  self.merge_button, self.split_button, self.undo_button]
        for b in writes:
            b.disabled = mem.read_only
        super().__init__([
            W.HTML(STYLE),
            W.HBox([self.search_box, self.kind, self.status_pick, self.search_button]),
            self.anchor_list,
            self.detail,
            self.why,
            W.HBox([self.rename_box, self.rename_button]),
            W.HBox([self.alias_box, self.add_alias_button, self.alias_pick,
                    self.remove_alias_button]),
            W.HBox([self.merge_pick, self.merge_button]),
            W.HBox([self.split_pick, self.split_name, self.split_button]),
            self.audit_box.widget(),
            self.status,
        ])
        self.add_class("ak-panel")
        if mem.read_only:
            self.status.value = note("the store is open read-only: browsing only")
        self.refresh()

    # -- listing ---------------------------------------------------------------------------
    def refresh(self) -> list[Anchor]:
        """Reload the anchor list (search, kind, status) and the audit log."""
        try:
            rows = self.mem.anchors(self.search_box.value.strip() or None,
                                    kind=unset_to_none(self.kind.value),
                                    status=unset_to_none(self.status_pick.value))
        except AkashaError as err:
            self.status.value = note(str(err), error=True)
            return []
        self._rows = rows
        keep = self.anchor_list.value
        self.anchor_list.options = [
            (f"{r.name} ({r.kind}, {r.status}) · {r.mentions} mentions · "
             f"{short(', '.join(r.aliases), 60)}", r.uid) for r in rows]
        if keep in {r.uid for r in rows}:
            self.anchor_list.value = keep
            self.show(keep)
        everyone = self.mem.anchors(status=None)
        self._all = [(f"{r.name} ({r.kind}, {r.status})", r.uid) for r in everyone]
        self._refresh_merge()
        self._refresh_audit()
        return rows

    def anchors_df(self) -> pd.DataFrame:
        """The listed anchors as a DataFrame (uid, name, kind, status, mentions, nodes,
        aliases)."""
        return pd.DataFrame(self._rows, columns=["uid", "name", "kind", "status", "mentions",
                                                 "nodes", "aliases"])

    def _refresh_merge(self) -> None:
        cur = self.anchor.uid if self.anchor else None
        self.merge_pick.options = [("—", "")] + [o for o in getattr(self, "_all", [])
                                                  if o[1] != cur]
        self.merge_pick.value = ""

    def _refresh_audit(self) -> None:
        self.audit_box.refresh(self.mem)

    # -- one anchor ------------------------------------------------------------------------
    def _text(self, node: str, msg: str) -> str:
        if msg not in self._texts:
            for m in self.mem.messages(node, verify=False):
                self._texts[m.uid] = m.text
        return self._texts.get(msg, "")

    def show(self, uid: str) -> AnchorDetail | None:
        """Show anchor ``uid``: aliases, mentions with their quotes, triples."""
        try:
            a = self.mem.anchors.get(uid)
        except AkashaError as err:
            self.status.value = note(str(err), error=True)
            return None
        self.anchor = a
        aliases = [x.surface for x in a.aliases]
        self.alias_pick.options = aliases
        self.split_pick.options = aliases
        self._refresh_merge()
        self.rename_box.value = ""
        rows = []
        for m in a.mentions[:MAX_MENTIONS]:
            q = quote_html(self._text(m.node, m.msg), m.span_start, m.span_end)
            rows.append(f"<tr><td>{esc(m.node)}</td><td>{esc(m.surface)}</td>"
                        f"<td>{q}</td></tr>")
        more = len(a.mentions) - MAX_MENTIONS
        mentions = ('<div class="ak-table"><table><thead><tr><th>turn</th><th>surface</th>'
                    f'<th>quote</th></tr></thead><tbody>{"".join(rows)}</tbody></table>'
                    + (f'<div class="ak-more">{more} more (mentions_df())</div>'
                       if more > 0 else "") + "</div>")
        triples = pd.DataFrame(a.triples, columns=["subject", "predicate", "object",
                                                   "literal", "status", "confidence",
                                                   "node", "quote"])
        self.detail.value = (
            f"<h4>{esc(a.name)} <small>({esc(a.kind)}, {esc(a.status)})</small></h4>"
            f"<div><b>aliases</b>: {esc(', '.join(aliases)) or '<i>none</i>'}</div>"
            f"<div><b>{len(a.mentions)} mentions</b></div>{mentions}"
            f"<div><b>{len(triples)} triples</b></div>{frame_html(triples)}")
        return a

    def mentions_df(self) -> pd.DataFrame:
        """Mentions of the shown anchor: node, msg, span_start, span_end, surface, text."""
        if self.anchor is None:
            return pd.DataFrame(columns=["node", "msg", "span_start", "span_end", "surface",
                                         "text"])
        df = pd.DataFrame(self.anchor.mentions,
                          columns=["node", "msg", "span_start", "span_end", "surface"])
        df["text"] = [self._text(n, m) for n, m in zip(df["node"], df["msg"], strict=True)]
        return df

    # -- actions (each one Memory API call) ------------------------------------------------
    def _act(self, fn: Any) -> None:
        if self.mem.read_only:
            self.status.value = note("the store is open read-only", error=True)
            return
        try:
            msg = fn()
        except AkashaError as err:
            self.status.value = note(str(err), error=True)
            return
        if msg is None:
            return
        self.why.value = ""
        self.refresh()
        if self.anchor is not None:
            self.show(self.anchor.uid)
        self.status.value = note(msg)

    def _need_anchor(self) -> str | None:
        if self.anchor is None:
            self.status.value = note("pick an anchor first", error=True)
            return None
        return self.anchor.uid

    def _why(self) -> str | None:
        return self.why.value.strip() or None

    def _rename(self) -> str | None:
        uid = self._need_anchor()
        name = self.rename_box.value.strip()
        if uid is None or not name:
            self.status.value = note("type the new name first", error=True) if uid else ""
            return None
        audit = self.mem.anchors.rename(uid, name, why=self._why())
        return f"renamed to {name!r} (audit {audit})"

    def _add_alias(self) -> str | None:
        uid = self._need_anchor()
        surface = self.alias_box.value
        if uid is None or not surface.strip():
            self.status.value = note("type the alias first", error=True) if uid else ""
            return None
        audit = self.mem.anchors.add_alias(uid, surface, why=self._why())
        self.alias_box.value = ""
        return f"alias {surface!r} added (audit {audit})"

    def _remove_alias(self) -> str | None:
        uid = self._need_anchor()
        surface = self.alias_pick.value
        if uid is None or surface is None:
            self.status.value = note("pick the alias to remove", error=True) if uid else ""
            return None
        audit = self.mem.anchors.remove_alias(uid, surface, why=self._why())
        return f"alias {surface!r} removed (audit {audit})"

    def _merge(self) -> str | None:
        uid = self._need_anchor()
        absorb = self.merge_pick.value
        if uid is None or not absorb:
            self.status.value = note("pick the anchor to absorb", error=True) if uid else ""
            return None
        audit = self.mem.anchors.merge(uid, absorb, why=self._why())
        return f"merged {absorb} into {uid} (audit {audit})"

    def _split(self) -> str | None:
        uid = self._need_anchor()
        surfaces = list(self.split_pick.value)
        if uid is None or not surfaces:
            self.status.value = note("pick the aliases to split off", error=True) if uid else ""
            return None
        new, audit = self.mem.anchors.split(uid, surfaces,
                                           name=self.split_name.value.strip() or None,
                                           why=self._why())
        self.split_name.value = ""
        return f"split {', '.join(surfaces)} off into {new} (audit {audit})"

    def _undo(self) -> str | None:
        target = self.audit_pick.value
        if not target:
            self.status.value = note("pick the audit entry to undo", error=True)
            return None
        audit = self.mem.undo(target, why=self._why())
        return f"undid {target} (audit {audit})"
