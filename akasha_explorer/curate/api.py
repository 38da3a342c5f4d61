"""Curation of one store (SPEC §6): anchors, triples and episodes read and edited, the audit
log and undo. Functions of a :class:`~akasha_explorer.store.Store`; ``Memory`` delegates
its methods of the same names here. The op builders live in :mod:`.anchors`, the audit
machinery in :mod:`.ops`, confirmed links (COACT edges) in :mod:`.links`, the review queue
in :mod:`.review` and forget in :mod:`.forget`. Every edit records itself in the audit log
and returns the audit uid, which :func:`undo` reverses."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..errors import InvalidInput
from ..graphdb import anchors as ga
from ..model import (
    ANCHOR_KINDS,
    ANCHOR_STATUSES,
    TRIPLE_STATUSES,
    Anchor,
    AnchorDetail,
    AuditEntry,
    Episode,
    MentionedAnchor,
    Triple,
    check_choice,
)
from . import anchors as an
from .links import mirror_hook
from .ops import audit_rows, record
from .ops import undo as undo_entry

if TYPE_CHECKING:
    from ..store.store import Store

__all__ = ["add_alias", "anchor", "anchors", "anchors_of", "attach_mention", "audit",
           "detach_mention", "episodes", "merge_anchors", "remove_alias", "rename_anchor",
           "set_episodes", "split_anchor", "triples", "undo"]


# -- reading -------------------------------------------------------------------------------------
def anchors(store: Store, search: str | None = None, *, kind: str | None = None,
            status: str | None = "active") -> list[Anchor]:
    """Anchors (default: active ones) with aliases and mention counts, most mentioned
    first; ``search`` matches names and aliases after normalisation."""
    check_choice(kind, ANCHOR_KINDS, "anchor kind")
    check_choice(status, ANCHOR_STATUSES, "anchor status")
    return an.list_anchors(store.graph, search=search, kind=kind, status=status)


def anchor(store: Store, uid: str) -> AnchorDetail:
    """One anchor with its aliases, mentions (node, message, span, surface) and triples."""
    return an.anchor_detail(store.graph, uid)


def anchors_of(store: Store, node: str) -> list[MentionedAnchor]:
    """The anchors node ``node`` mentions, one row per mention, in text order."""
    return ga.anchors_of(store.graph, node)


def triples(store: Store, *, anchor: str | None = None, status: str | None = None
            ) -> list[Triple]:
    """Triples (optionally of one anchor as subject or object, or with one status),
    oldest first, with subject / object names and provenance."""
    check_choice(status, TRIPLE_STATUSES, "triple status")
    return ga.triples(store.graph, anchor=anchor, status=status)


def episodes(store: Store, *, kind: str | None = None, session: str | None = None
             ) -> list[Episode]:
    """Episodes with their node uids, in time order."""
    return ga.episodes(store.graph, kind=kind, session=session)


def set_episodes(store: Store, kind: str, groups: Sequence[Sequence[str]],
                 labels: Sequence[str] | None = None) -> int:
    """Replace every episode of ``kind`` with ``groups`` of node uids (the hook that
    turns co-activation communities into episodes, SPEC §6/§7). Returns the count."""
    if kind == "gap":
        raise InvalidInput("gap episodes are made by extraction; pick another kind")
    store.check_write()
    nodes = store.mirror.nodes
    eps, links = [], []
    for k, members in enumerate(groups):
        rows = [nodes.index[u] for u in members if u in nodes.index]
        if not rows:
            continue
        ts = nodes.ts[rows]
        sessions = {nodes.sessions[int(nodes.session[i])] for i in rows}
        uid = f"ep-{kind}-{k}"
        eps.append({"uid": uid, "kind": kind,
                    "label": labels[k] if labels else f"{kind} {k}",
                    "session": sessions.pop() if len(sessions) == 1 else "",
                    "start_ts": float(ts.min()), "end_ts": float(ts.max())})
        links += [(nodes.uid[i], uid) for i in rows]
    ga.replace_episodes(store.graph, kind, eps, links)
    return len(eps)


# -- curation ------------------------------------------------------------------------------------
def _record(store: Store, action: str, target: str, ops: list[dict[str, Any]],
            why: str | None, by: str) -> str:
    store.check_write()
    uid = record(store.graph, action=action, target=target, ops=ops, actor=by, why=why)
    store.anchors_changed()   # the recall's anchor channel reads them again
    return uid


def rename_anchor(store: Store, uid: str, name: str, *, why: str | None = None,
                  by: str = "user") -> str:
    """Rename an anchor (the new name also becomes an alias); returns the audit uid."""
    return _record(store, "rename", uid, an.rename_ops(store.graph, uid, name, _now()), why, by)


def merge_anchors(store: Store, keep: str, absorb: str, *, why: str | None = None,
                  by: str = "user") -> str:
    """Move every alias, mention and fact of ``absorb`` onto ``keep``."""
    return _record(store, "merge", keep, an.merge_ops(store.graph, keep, absorb), why, by)


def split_anchor(store: Store, uid: str, aliases: Sequence[str], *, name: str | None = None,
                 why: str | None = None, by: str = "user") -> tuple[str, str]:
    """Move ``aliases`` (with their mentions and facts) to a new anchor; returns
    ``(new anchor uid, audit uid)``."""
    new, ops = an.split_ops(store.graph, uid, list(aliases), name, _now())
    return new, _record(store, "split", uid, ops, why, by)


def add_alias(store: Store, uid: str, surface: str, *, why: str | None = None,
              by: str = "user") -> str:
    """Add an alias (stored verbatim; matched after normalisation)."""
    return _record(store, "add_alias", uid,
                   an.alias_ops(store.graph, uid, surface, _now(), add=True), why, by)


def remove_alias(store: Store, uid: str, surface: str, *, why: str | None = None,
                 by: str = "user") -> str:
    """Remove an alias (its mentions stay)."""
    return _record(store, "remove_alias", uid,
                   an.alias_ops(store.graph, uid, surface, _now(), add=False), why, by)


def attach_mention(store: Store, uid: str, msg: str, start: int, end: int, *,
                   why: str | None = None, by: str = "user") -> str:
    """Say that ``text[start:end]`` of message ``msg`` names anchor ``uid``."""
    an.get_anchor(store.graph, uid)
    node = store.node_of_message(msg)
    text = store.stored.texts().get(msg) if node else None
    if node is None or text is None:
        raise InvalidInput(f"no message {msg!r} in this store")
    if not 0 <= start < end <= len(text):
        raise InvalidInput(f"span {start}:{end} is outside message {msg} "
                           f"({len(text)} characters)")
    row = {"node": node, "msg": msg, "span_start": start, "span_end": end,
           "surface": text[start:end]}
    return _record(store, "attach_mention", uid,
                   [{"op": "create_mention", "rows": [row], "anchor": uid}], why, by)


def detach_mention(store: Store, uid: str, msg: str, start: int, *, why: str | None = None,
                   by: str = "user") -> str:
    """Remove the mention of anchor ``uid`` at ``start`` in message ``msg``."""
    rows = [m for m in an.mention_rows(store.graph, uid)
            if m["msg"] == msg and m["span_start"] == start]
    if not rows:
        raise InvalidInput(f"anchor {uid} has no mention at {msg}:{start}")
    return _record(store, "detach_mention", uid,
                   [{"op": "delete_mention", "rows": rows, "anchor": uid}], why, by)


def audit(store: Store, *, target: str | None = None, limit: int | None = None
          ) -> list[AuditEntry]:
    """The audit log, newest first: who did what, when and why (with the ops)."""
    return audit_rows(store.graph, target=target, limit=limit)


def undo(store: Store, audit_uid: str, *, why: str | None = None, by: str = "user") -> str:
    """Reverse one audit entry (itself recorded, so an undo can be undone).

    Undoing an approved suggested link removes the two edges it made (or puts back the
    weights they had) only while no recall has written to them since; after that the
    link is the memory's own and the undo is refused."""
    store.check_write()
    uid = undo_entry(store.graph, audit_uid, actor=by, why=why, mirror=mirror_hook(store))
    store.anchors_changed()
    return uid


def _now() -> float:
    return dt.datetime.now(dt.UTC).timestamp()
