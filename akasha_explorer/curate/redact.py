"""What else a forget wipes (issue 18, item 2): every row outside the forgotten nodes that
*names* what was forgotten — so that after ``forget --session S`` nothing a person could
read back says what S held, the tombstone ids and the forget's own audit entry aside.

What names the forgotten (:class:`Forgotten`):

- **its ids** — the node, message, triple and anchor uids, and the session id of a
  session forget, as whole ids (``s:1`` does not match inside ``s:10``);
- **its words** — every index term (the same tokenizer and settings as the lexical
  index) that only the forgotten messages had: in their text, their speaker names and
  their ``meta`` values. A term another message still holds names nothing forgotten;
- **its text** — a query that is part of a forgotten message, or holds one whole.

Where it is looked for (:func:`scrub`, inside the forget's transaction): query-log rows
(deleted when their query, session, seeds or items name it), review items (deleted when
their subject or payload names it; their ``why`` redacted when only that does), audit
entries (``target``, ``why``, ``before``, ``after`` redacted: such an entry can no longer
be undone), anchor notes (redacted), labelled queries (deleted when their node is forgotten
or their query names or quotes what was), the context block an older version saved in Meta
for ``akasha expand`` (deleted when its query or any of its handles names it; today's is a
file in the cache folder, which a forget removes whole) and the extraction-pending list
(the forgotten node uids taken out).

>>> f = Forgotten(ids=frozenset({"s:1"}), terms=frozenset({"zoltan"}))  # a node forget
>>> [f.names(v) for v in ["node:s:1", "s:10", "where does Zoltan live", "sun"]]
[True, False, True, False]
>>> f = Forgotten(ids=frozenset({"s"}))  # a session forget: its nodes' ids name it too
>>> [f.names(v) for v in ["session:s", "s:10", "sun", "its"]]
[True, True, False, False]
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ..graphdb import redact as gr
from ..graphdb.kuzu_db import EXTRACT_PENDING_KEY, LAST_CONTEXT_KEY
from ..text.edges import LATIN
from ..text.gates import GATE_META
from ..text.tokenize import TermRules
from ..text.tokenize import terms as index_terms
from ..vectors import queries as vq

if TYPE_CHECKING:
    from ..store.store import Store

__all__ = ["Forgotten", "forgotten_nodes", "scrub"]



@dataclass(frozen=True)
class Forgotten:
    """What names a forgotten thing (see the module docstring)."""

    ids: frozenset[str]
    terms: frozenset[str] = frozenset()
    texts: tuple[str, ...] = ()
    sessions: frozenset[str] = frozenset()
    nodes: frozenset[str] = frozenset()
    rules: TermRules = field(default_factory=TermRules)
    """The store's term rules: what counts as a word of a forgotten message."""
    _ids_re: re.Pattern[str] | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.ids:
            alt = "|".join(re.escape(i) for i in sorted(self.ids, key=len, reverse=True))
            object.__setattr__(self, "_ids_re",
                               re.compile(rf"(?<![{LATIN}.\-])(?:{alt})(?![{LATIN}.\-])"))

    def names(self, value: str | None) -> bool:
        """True when ``value`` holds a forgotten id or a word only the forgotten had."""
        if not value or value == gr.REDACTED:
            return False
        if self._ids_re is not None and self._ids_re.search(value):
            return True
        return bool(self.terms) and not self.terms.isdisjoint(
            index_terms(value, rules=self.rules))

    def quotes(self, query: str | None) -> bool:
        """True when ``query`` is part of a forgotten text or holds one whole."""
        return bool(query) and any(t and (query in t or t in query)  # type: ignore[operator]
                                   for t in self.texts)


def forgotten_nodes(store: Store, uids: list[str], msg_uids: list[str],
                    session: str | None) -> Forgotten:
    """The :class:`Forgotten` of a node or session forget, computed before anything is
    deleted: ``uids`` the nodes, ``msg_uids`` their messages."""
    m, n = store.mirror, store.mirror.nodes
    s = store.settings
    gone_rows = sorted({j for u in uids if (i := n.index.get(u)) is not None
                        for j in range(int(n.first_msg[i]), int(n.first_msg[i] + n.n_msg[i]))})
    gone = np.zeros(n.m, bool)
    gone[gone_rows] = True
    keep = n.msg_alive & ~gone
    words = {t for j in gone_rows for t in m.msg_terms[j]}
    rows = vq.messages(store.vectors, ["uid", "node", "speaker", "meta"]).to_pylist()
    forgotten_msgs = set(msg_uids)
    kept_speakers = {r["speaker"] for r in rows if r["uid"] not in forgotten_msgs}
    extra: set[str] = set()
    for r in rows:
        if r["uid"] not in forgotten_msgs:
            continue
        if r["speaker"] and r["speaker"] not in kept_speakers:
            extra.add(r["speaker"])
        meta = json.loads(r["meta"]) if r["meta"] else {}
        for k in GATE_META:
            meta.pop(k, None)
        extra.update(_strings(meta))
    rules = TermRules.of(s)
    for text in extra:
        words.update(index_terms(text, rules=rules))
    kept_words = {t for sp in kept_speakers if sp for t in index_terms(sp, rules=rules)}
    only = frozenset(t for t in words if t not in kept_words
                     and not keep[m.postings.postings(t)[0]].any())
    texts = tuple(store.stored.texts().get(u, "") for u in msg_uids)
    ids = frozenset(uids) | frozenset(msg_uids) | ({session} if session else frozenset())
    return Forgotten(ids=ids, terms=only, texts=texts,
                     sessions=frozenset({session}) if session else frozenset(),
                     nodes=frozenset(uids), rules=rules)


def _strings(value: Any) -> Iterable[str]:
    """Every string (keys too) inside a JSON value."""
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, str):
            yield v
        elif isinstance(v, dict):
            stack.extend(v.keys())
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)


def _uids_in(doc: str | None) -> set[str]:
    """Node uids in a query-log ``seeds`` / ``items`` column (``[[uid, …], …]`` JSON)."""
    try:
        rows = json.loads(doc) if doc else []
    except ValueError:
        return set()
    return {str(r[0]) for r in rows if isinstance(r, list) and r}


def scrub(store: Store, f: Forgotten) -> dict[str, int]:
    """Delete or redact every row naming ``f`` (see the module docstring); call inside the
    forget's transaction. Returns counts per kind."""
    g = store.graph
    queries = [r["uid"] for r in gr.text_rows(g, "QueryLog")
               if r["session"] in f.sessions or (_uids_in(r["seeds"]) | _uids_in(r["items"]))
               & (f.nodes | f.ids) or f.names(r["query"]) or f.quotes(r["query"])]
    gr.delete_rows(g, "QueryLog", queries)
    reviews = gr.text_rows(g, "ReviewItem")
    gone_reviews = [r["uid"] for r in reviews if f.names(r["subject"]) or f.names(r["payload"])]
    gr.delete_rows(g, "ReviewItem", gone_reviews)
    why_reviews = [r["uid"] for r in reviews
                   if r["uid"] not in set(gone_reviews) and f.names(r["why"])]
    gr.redact(g, "ReviewItem", ("why",), why_reviews)
    audit = [r["uid"] for r in gr.text_rows(g, "AuditLog")
             if any(f.names(r[c]) for c in ("target", "why", "before", "after"))]
    gr.redact(g, "AuditLog", ("target", "why", "before", "after"), audit)
    labels = [r["uid"] for r in gr.text_rows(g, "Label")
              if r["node"] in f.nodes or f.names(r["node"]) or f.names(r["query"])
              or f.quotes(r["query"])]
    gr.delete_rows(g, "Label", labels)
    notes = [r["uid"] for r in gr.text_rows(g, "Anchor") if f.names(r["note"])]
    gr.redact(g, "Anchor", ("note",), notes)
    saved = 0
    raw = g.meta_get(LAST_CONTEXT_KEY)
    if raw:
        try:
            block = json.loads(raw)
            named = f.names(block.get("query")) or f.quotes(block.get("query")) or any(
                u in f.nodes or f.names(u) for u in block.get("handles", {}).values())
        except (ValueError, AttributeError):
            named = True
        if named:
            g.meta_delete(LAST_CONTEXT_KEY)
            saved = 1
    pending = g.meta_get(EXTRACT_PENDING_KEY, "") or ""
    if pending and f.nodes:
        try:
            was = json.loads(pending)
        except ValueError:
            was = []
        left = [u for u in was if u not in f.nodes]
        if left != was:
            g.meta_set(EXTRACT_PENDING_KEY, json.dumps(left, ensure_ascii=False,
                                                       separators=(",", ":")))
    last = store.last_trace
    if last is not None and (f.names(last.query) or f.quotes(last.query) or f.nodes & set(
            last.dense.uids + last.ripple.uids + last.activation.uids)):
        store.last_trace = None
    return {"queries": len(queries), "review_items": len(gone_reviews),
            "review_reasons_redacted": len(why_reviews), "audit_redacted": len(audit),
            "anchor_notes_redacted": len(notes), "labels": len(labels),
            "saved_context": saved}

