"""Curation of anchors as op lists (rename, merge, split, aliases, mentions) and the read
side (list, detail). Every function that changes something returns the ops; the caller
records them through :func:`~akasha_explorer.curate.ops.record` so each is undoable."""

from __future__ import annotations

import uuid
from typing import Any

from ..errors import InvalidInput, NotFound
from ..extract.normalize import norm
from ..extract.pipeline import uid_for
from ..graphdb import GraphDB
from ..graphdb import anchors as ga
from ..model import Alias, Anchor, AnchorDetail, Mention

__all__ = [
    "alias_ops",
    "anchor_detail",
    "get_anchor",
    "list_anchors",
    "mention_rows",
    "merge_ops",
    "rename_ops",
    "split_ops",
]


def get_anchor(g: GraphDB, uid: str) -> dict[str, Any]:
    """One anchor's fields (uid, name, kind, status, created_ts, note); raises NotFound."""
    row = ga.anchor_row(g, uid)
    if row is None:
        raise NotFound(f"no anchor {uid!r}; `akasha anchors STORE` lists them")
    return row


def list_anchors(g: GraphDB, *, search: str | None = None, kind: str | None = None,
                 status: str | None = "active") -> list[Anchor]:
    """Anchors with their aliases and mention counts (most mentioned first); ``search``
    matches names and aliases after normalisation."""
    rows = ga.anchors(g, status=status, kind=kind)
    if search:
        q = norm(search)
        rows = [a for a in rows if q in norm(a.name) or any(q in norm(s) for s in a.aliases)]
    return rows


def anchor_detail(g: GraphDB, uid: str) -> AnchorDetail:
    """One anchor with aliases, mentions (node, message, span, surface) and triples."""
    return AnchorDetail(**get_anchor(g, uid),
                        aliases=tuple(Alias(**r) for r in ga.aliases_of(g, uid)),
                        mentions=tuple(Mention(**r) for r in mention_rows(g, uid)),
                        triples=tuple(ga.triples_about(g, uid)))


def mention_rows(g: GraphDB, uid: str) -> list[dict[str, Any]]:
    """The mentions of anchor ``uid`` (node, msg, span_start, span_end, surface)."""
    return ga.mentions_of(g, uid)


def _aliases(g: GraphDB, uid: str) -> list[dict[str, Any]]:
    return ga.aliases_of(g, uid, created=True)


def _facts(g: GraphDB, uid: str) -> list[dict[str, Any]]:
    return ga.facts_of(g, uid)


def rename_ops(g: GraphDB, uid: str, name: str, now: float) -> list[dict[str, Any]]:
    a = get_anchor(g, uid)
    if not name.strip():
        raise InvalidInput("an anchor name cannot be empty")
    ops: list[dict[str, Any]] = [{"op": "set", "table": "Anchor", "uid": uid,
                                  "before": {"name": a["name"]}, "after": {"name": name}}]
    if not any(al["norm"] == norm(name) for al in _aliases(g, uid)):
        ops += alias_ops(g, uid, name, now, add=True)
    return ops


def alias_ops(g: GraphDB, uid: str, surface: str, now: float, *, add: bool
              ) -> list[dict[str, Any]]:
    get_anchor(g, uid)
    n = norm(surface)
    if not n:
        raise InvalidInput("an alias cannot be empty")
    have = [al for al in _aliases(g, uid) if al["norm"] == n]
    if add:
        if have:
            raise InvalidInput(f"{surface!r} is already an alias of {uid}")
        row = {"uid": uid_for("al", uid, n, uuid.uuid4().hex[:6]), "surface": surface,
               "norm": n, "created_ts": now}
        return [{"op": "create_alias", "row": row, "anchor": uid}]
    if not have:
        raise NotFound(f"{surface!r} is not an alias of {uid}")
    return [{"op": "delete_alias", "row": have[0], "anchor": uid}]


def merge_ops(g: GraphDB, keep: str, absorb: str) -> list[dict[str, Any]]:
    """Move every alias, mention and fact of ``absorb`` to ``keep``; mark it merged."""
    if keep == absorb:
        raise InvalidInput("cannot merge an anchor into itself")
    get_anchor(g, keep)
    b = get_anchor(g, absorb)
    ops: list[dict[str, Any]] = [{"op": "move_alias", "alias": al["uid"], "from": absorb,
                                  "to": keep} for al in _aliases(g, absorb)]
    ms = mention_rows(g, absorb)
    if ms:
        ops.append({"op": "move_mention", "rows": ms, "from": absorb, "to": keep})
    fs = [{"t": f["t"], "role": f["role"]} for f in _facts(g, absorb)]
    if fs:
        ops.append({"op": "move_fact", "rows": fs, "from": absorb, "to": keep})
    ops.append({"op": "set", "table": "Anchor", "uid": absorb,
                "before": {"status": b["status"], "note": b["note"]},
                "after": {"status": "merged", "note": f"merged into {keep}"}})
    return ops


def split_ops(g: GraphDB, uid: str, surfaces: list[str], name: str | None, now: float
              ) -> tuple[str, list[dict[str, Any]]]:
    """A new anchor taking the aliases ``surfaces`` with their mentions and the facts whose
    quote holds one of those mentions."""
    a = get_anchor(g, uid)
    norms = {norm(s) for s in surfaces}
    moving = [al for al in _aliases(g, uid) if al["norm"] in norms]
    if not moving:
        raise InvalidInput(f"none of {surfaces!r} is an alias of {uid}; "
                           "`akasha anchors STORE --search ...` shows the aliases")
    if len(moving) == len(_aliases(g, uid)):
        raise InvalidInput("a split must leave the anchor at least one alias")
    new = uid_for("an", uid, "split", uuid.uuid4().hex[:8])
    row = {"uid": new, "name": name or moving[0]["surface"], "kind": a["kind"],
           "status": "active", "created_ts": now, "note": f"split from {uid}"}
    ops: list[dict[str, Any]] = [{"op": "create_anchor", "row": row}]
    ops += [{"op": "move_alias", "alias": al["uid"], "from": uid, "to": new} for al in moving]
    ms = [m for m in mention_rows(g, uid) if norm(m["surface"]) in norms]
    if ms:
        ops.append({"op": "move_mention", "rows": ms, "from": uid, "to": new})
    fs = [{"t": f["t"], "role": f["role"]} for f in _facts(g, uid)
          if any(m["node"] == f["node"]
                 and f["span_start"] <= m["span_start"] and m["span_end"] <= f["span_end"]
                 for m in ms)]
    if fs:
        ops.append({"op": "move_fact", "rows": fs, "from": uid, "to": new})
    return new, ops
