"""The store side of analysis: read what the views need from a
:class:`~akasha_explorer.store.Store` (mirror arrays, texts, Kuzu rows) and write what
analysis produces back (community episodes, suggested links on the review queue). The
algorithms never see a store.

Writes go to Kuzu only (they are not dynamic state): community episodes replace the
previous ones in one transaction (:func:`akasha_explorer.curate.api.set_episodes`);
suggested links are created once per pair — an existing item (pending or already decided)
is never touched again.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ..graphdb import anchors as ga
from ..graphdb import logs
from .communities import leiden
from .surprises import Surprise
from .views import GraphView, anchor_view, bipartite_view, coact_view

if TYPE_CHECKING:
    from ..store.store import Store

__all__ = [
    "anchor_rows",
    "build_view",
    "node_anchor_names",
    "node_names",
    "node_terms",
    "noise_ids",
    "queue_suggested_links",
    "store_communities",
    "suggested_uid",
]


def _comm(resolution: float, seed: int) -> Any:
    return lambda v: leiden(v, resolution=resolution, seed=seed)


def anchor_rows(store: Store) -> tuple[list[dict[str, Any]], list[dict[str, Any]],
                                      list[dict[str, Any]]]:
    """``(anchors, mentions, facts)`` rows from Kuzu (empty lists when the tables are)."""
    anchors, mentions, roles = ga.anchor_graph_rows(store.graph)
    facts: dict[str, dict[str, Any]] = {}
    for r in roles:
        f = facts.setdefault(r["triple"], {"triple": r["triple"], "predicate": r["predicate"],
                                           "status": r["status"]})
        f[str(r["role"] or "").lower()] = r["anchor"]
    return anchors, mentions, list(facts.values())


def build_view(store: Store, view: str, *, now: float, resolution: float, seed: int,
               texts: bool = True) -> GraphView:
    """The named view of ``store`` at ``now`` with Leiden communities filled."""
    m = store.mirror
    comm = _comm(resolution, seed)
    nodes_view = coact_view(m.nodes, m.edges, now=now, settings=store.settings,
                            texts=store.stored.texts() if texts else None, msg_role=m.msg_role,
                            msg_flags=m.msg_flags,
                            communities=comm if view == "nodes" else None)
    if view == "nodes":
        return nodes_view
    anchors, mentions, facts = anchor_rows(store)
    if view == "anchors":
        ts = dict(zip(nodes_view.nodes["id"], nodes_view.nodes["ts"], strict=True))
        return anchor_view(anchors, mentions, facts, turn_ts=ts, now=now, communities=comm)
    return bipartite_view(nodes_view.nodes, anchors, mentions, now=now, communities=comm)


def node_terms(store: Store, ids: Sequence[str]) -> dict[str, list[str]]:
    """Lexical terms of each node's user messages (all its messages for an
    assistant-only node) — for community labels: the assistant's stock phrases
    ("记下了", "noted") would label every community alike."""
    m = store.mirror
    n = m.nodes
    out = {}
    for u in ids:
        i = n.index[u]
        a, k = int(n.first_msg[i]), int(n.n_msg[i])
        rows = [j for j in range(a, a + k) if m.msg_role[j] == "user"] or list(range(a, a + k))
        out[u] = [t for j in rows for t in m.msg_terms[j]]
    return out


def node_anchor_names(store: Store, ids: Sequence[str]) -> dict[str, list[str]]:
    """Names of the anchors (people, places, projects, things; not rejected or merged
    ones) each node mentions — what a community is labelled by: greetings and fillers
    ("good night", "早安") are no anchors, so they never name a community."""
    anchors, mentions, _facts = anchor_rows(store)
    name = {a["uid"]: str(a["name"]) for a in anchors
            if str(a["status"] or "") not in ("rejected", "merged")}
    out: dict[str, list[str]] = {u: [] for u in ids}
    for m in mentions:
        if m["turn"] in out and m["anchor"] in name:
            out[m["turn"]].append(name[m["anchor"]])
    return out


def node_names(store: Store) -> dict[str, str]:
    """Node uid → the text that names it (every live node): its first user message, else
    its first message — a message flagged ``injection`` by the marker the agent's context
    shows in its place (``[withheld: flagged as injection]``)."""
    from ..brief.context import INJECTION, withheld
    n, m = store.mirror.nodes, store.mirror
    stored = store.stored.texts()
    out: dict[str, str] = {}
    for i in np.flatnonzero(n.alive).tolist():
        a, k = int(n.first_msg[i]), int(n.n_msg[i])
        rows = [j for j in range(a, a + k) if n.msg_uid[j] in stored]
        user = [j for j in rows if m.msg_role[j] == "user"]
        if rows:
            j = (user or rows)[0]
            out[n.uid[i]] = (withheld(INJECTION) if "injection" in m.msg_flags[j]
                             else stored[n.msg_uid[j]])
    return out


def noise_ids(view: GraphView) -> set[str]:
    """Nodes with a message flagged ``noise`` (greetings, fillers): not reported as
    surprises (they bridge everything by being about nothing)."""
    if "flags" not in view.nodes:
        return set()
    f = view.nodes["flags"].fillna("").astype(str)
    return set(view.nodes["id"][f.str.split(",").apply(lambda x: "noise" in x)])


# -- writing ---------------------------------------------------------------------------------
def _wall() -> float:
    return dt.datetime.now(dt.UTC).timestamp()


def store_communities(store: Store, view: GraphView, table: pd.DataFrame) -> int:
    """Replace the stored community episodes (Episode ``kind = 'community'`` + IN_EPISODE
    from each member turn) with the communities of a nodes ``view``, labelled by their
    terms — through the curate area's ``set_episodes`` hook (one transaction). Returns
    the number of episodes written."""
    if view.name != "nodes":
        raise ValueError("only communities of turns (the nodes view) are episodes")
    groups = [str(m).split(",") for m in table["members"]]
    from ..curate.api import set_episodes
    return int(set_episodes(store, "community", groups, [str(x) for x in table["label"]]))


def suggested_uid(a: str, b: str) -> str:
    """Stable review-item uid of a suggested link (the pair, order-free).

    >>> suggested_uid("y", "x") == suggested_uid("x", "y")
    True
    """
    lo, hi = sorted((a, b))
    return "rv-suggested_link-" + hashlib.sha1(f"{lo}\n{hi}".encode()).hexdigest()[:16]


def queue_suggested_links(store: Store, items: Sequence[Surprise], *, now: float) -> list[str]:
    """Put indirect-strong pairs on the review queue as ``suggested_link`` items (once per
    pair, whatever became of an earlier one). Returns the uids created."""
    store.check_write()
    links = [s for s in items if s.kind == "suggested_link"]
    if not links:
        return []
    top = max(s.score for s in links) or 1.0
    uids = [suggested_uid(s.subject, s.other) for s in links]
    have = logs.review_uids_among(store.graph, uids)
    created = _wall()
    rows: list[dict[str, Any]] = []
    for uid, s in zip(uids, links, strict=True):
        if uid in have or uid in {r["uid"] for r in rows}:
            continue
        payload = {"a": s.subject, "b": s.other, "now": now, **s.numbers, "why": s.why}
        rows.append({"uid": uid, "kind": "suggested_link", "status": "pending",
                     "subject": s.subject, "payload": json.dumps(payload, ensure_ascii=False),
                     "confidence": float(np.clip(s.score / top, 0.0, 1.0)),
                     "created_ts": created, "decided_ts": None, "decided_by": None,
                     "why": None})
    if rows:
        with store.graph.transaction():
            logs.add_review_items(store.graph, rows)
    return [str(r["uid"]) for r in rows]
