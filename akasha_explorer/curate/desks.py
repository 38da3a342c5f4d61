"""The curation desks ``Memory`` hands out: ``mem.anchors`` (the entity anchors and their
names) and ``mem.labels`` (the store's labelled queries). The review queue's desk is
:class:`~.review.ReviewDesk` (``mem.review``).

Each desk is called to list (``mem.anchors("lan")``, ``mem.labels()``) and has a method per
edit; every edit is recorded in the audit log (anchors) or the ``Label`` table (labels).
The desks are thin: the work is in :mod:`.api` and :mod:`.labels`.
"""

from __future__ import annotations

import builtins
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..model import Anchor, AnchorDetail, Label, MentionedAnchor
from ..served import reads, writes
from . import api
from . import labels as lb

if TYPE_CHECKING:
    from ..store.store import Store

__all__ = ["AnchorDesk", "LabelDesk"]


class AnchorDesk:
    """The entity anchors (SPEC §6): ``mem.anchors()`` lists them (default: active ones,
    most mentioned first); ``.get(uid)`` shows one with its aliases, mentions and facts;
    ``.rename``, ``.merge``, ``.split``, ``.add_alias``, ``.remove_alias``, ``.attach``,
    ``.detach`` edit (each returns its audit uid, which ``mem.undo`` reverses)."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def __call__(self, search: str | None = None, *, kind: str | None = None,
                 status: str | None = "active") -> builtins.list[Anchor]:
        """The same as :meth:`list`."""
        return self.list(search, kind=kind, status=status)

    @reads
    def list(self, search: str | None = None, *, kind: str | None = None,
             status: str | None = "active") -> builtins.list[Anchor]:
        """Anchors (default: active ones) with aliases and mention counts, most mentioned
        first; ``search`` matches names and aliases after normalisation."""
        return api.anchors(self.store, search, kind=kind, status=status)

    @reads
    def get(self, uid: str) -> AnchorDetail:
        """One anchor with its aliases, mentions (node, message, span, surface) and
        triples; raises :class:`~akasha_explorer.errors.NotFound`."""
        return api.anchor(self.store, uid)

    @reads
    def of(self, node: str) -> builtins.list[MentionedAnchor]:
        """The anchors node ``node`` mentions, one row per mention, in text order."""
        return api.anchors_of(self.store, node)

    @writes
    def rename(self, uid: str, name: str, *, why: str | None = None,
               by: str = "user") -> str:
        """Rename an anchor (the new name also becomes an alias); returns the audit uid."""
        return api.rename_anchor(self.store, uid, name, why=why, by=by)

    @writes
    def merge(self, keep: str, absorb: str, *, why: str | None = None,
              by: str = "user") -> str:
        """Move every alias, mention and fact of ``absorb`` onto ``keep``."""
        return api.merge_anchors(self.store, keep, absorb, why=why, by=by)

    @writes
    def split(self, uid: str, aliases: Sequence[str], *, name: str | None = None,
              why: str | None = None, by: str = "user") -> tuple[str, str]:
        """Move ``aliases`` (with their mentions and facts) to a new anchor; returns
        ``(new anchor uid, audit uid)``."""
        return api.split_anchor(self.store, uid, aliases, name=name, why=why, by=by)

    @writes
    def add_alias(self, uid: str, surface: str, *, why: str | None = None,
                  by: str = "user") -> str:
        """Add an alias (stored verbatim; matched after normalisation)."""
        return api.add_alias(self.store, uid, surface, why=why, by=by)

    @writes
    def remove_alias(self, uid: str, surface: str, *, why: str | None = None,
                     by: str = "user") -> str:
        """Remove an alias (its mentions stay)."""
        return api.remove_alias(self.store, uid, surface, why=why, by=by)

    @writes
    def attach(self, uid: str, msg: str, start: int, end: int, *,
               why: str | None = None, by: str = "user") -> str:
        """Say that ``text[start:end]`` of message ``msg`` names anchor ``uid``."""
        return api.attach_mention(self.store, uid, msg, start, end, why=why, by=by)

    @writes
    def detach(self, uid: str, msg: str, start: int, *, why: str | None = None,
               by: str = "user") -> str:
        """Remove the mention of anchor ``uid`` at ``start`` in message ``msg``."""
        return api.detach_mention(self.store, uid, msg, start, why=why, by=by)


class LabelDesk:
    """The store's labelled queries — its own recall test set (:mod:`.labels`):
    ``mem.labels()`` lists them; ``.add(query, node)`` says a node should come up for a
    query (``relevant=False``: that it should not), ``.remove`` takes a label back,
    ``.load(file)`` adds a JSON Lines file's. ``mem.evaluate()`` scores recall on them."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def __call__(self, query: str | None = None) -> builtins.list[Label]:
        """The same as :meth:`list`."""
        return self.list(query)

    @reads
    def list(self, query: str | None = None) -> builtins.list[Label]:
        """Every label, oldest first; ``query``: only that query's."""
        return lb.labels(self.store, query)

    @writes
    def add(self, query: str, node_id: str, relevant: bool = True, *,
            by: str = "user") -> str:
        """Say that node ``node_id`` should come up for ``query`` (``relevant=False``: that
        it should not). Stored in the store (exported, imported and forgotten with it); one
        label per pair, so labelling again replaces the verdict. Returns the label's uid."""
        return lb.label(self.store, query, node_id, relevant, by=by)

    @writes
    def remove(self, query: str, node_id: str) -> bool:
        """Remove the label of ``node_id`` for ``query``; False when there was none."""
        return lb.unlabel(self.store, query, node_id)

    @writes
    def load(self, source: str | Path | Iterable[dict[str, Any]], *,
             by: str = "import") -> int:
        """Add labels from a JSON Lines file or a list of ``{"query", "node", "relevant"}``
        dicts, all or none; returns how many."""
        return lb.load_labels(self.store, source, by=by)
