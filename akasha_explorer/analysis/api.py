"""Analysis of one store (SPEC §7): graph views, personalized PageRank, communities and
surprises — functions of a :class:`~akasha_explorer.store.Store`
(``Memory`` delegates its methods of the same names here).

Every function reads the store at ``now``; ``now=None`` means the time of the store's
newest message (not the wall clock: a memory analysed later should not look faded just
because time passed since it was last used — pass ``now`` to see it as of another
moment). Resolution and seed default to ``LEIDEN_RESOLUTION`` / ``LEIDEN_SEED``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ..errors import InvalidInput, NotFound
from ..graphdb import anchors as ga
from . import adapters
from .communities import community_table
from .ppr import personalized_pagerank
from .surprises import (
    bridges,
    indirect_pairs,
    knowledge_gaps,
    semantic_mismatches,
    surprise_frame,
)
from .views import VIEWS, GraphView

if TYPE_CHECKING:
    from ..store.store import Store

__all__ = ["analysis_args", "communities", "graph_view", "ppr", "surprises"]


def analysis_args(store: Store, now: float | None, resolution: float | None,
                  seed: int | None) -> tuple[float, float, int]:
    """``now``, resolution and seed with their defaults filled (see the module docstring)."""
    store.check_open()
    s = store.settings
    return (store.last_ts() if now is None else float(now),
            s.LEIDEN_RESOLUTION if resolution is None else float(resolution),
            s.LEIDEN_SEED if seed is None else int(seed))


# -- views ---------------------------------------------------------------------------------------
def graph_view(store: Store, view: str = "nodes", *, now: float | None = None,
               resolution: float | None = None, seed: int | None = None) -> GraphView:
    """A projection of the store (SPEC §7): ``"nodes"`` (turns + co-activation edges
    at ``now``), ``"anchors"`` or ``"bipartite"``, with Leiden communities filled.
    ``.nodes`` / ``.edges`` are pandas frames; ``.to_igraph()`` / ``.to_networkx()``
    give the graph objects."""
    if view not in VIEWS:
        raise InvalidInput(f"unknown view {view!r}; use one of {', '.join(VIEWS)}")
    when, res, sd = analysis_args(store, now, resolution, seed)
    return adapters.build_view(store, view, now=when, resolution=res, seed=sd)


# -- personalized PageRank -----------------------------------------------------------------------
def _resolve_seeds(store: Store, view: GraphView, seeds: Any) -> dict[str, float]:
    ids = set(view.nodes["id"])
    reset: dict[str, float] = {}
    names = [seeds] if isinstance(seeds, str) else list(seeds)
    for s in names:
        if s in ids:
            reset[s] = reset.get(s, 0.0) + 1.0
            continue
        found = False
        for a in ga.anchors_named(store.graph, s):
            if a in ids:
                reset[a] = reset.get(a, 0.0) + 1.0
                found = True
            for t in ga.turns_mentioning(store.graph, a):
                if t in ids:
                    reset[t] = reset.get(t, 0.0) + 1.0
                    found = True
        if not found:
            raise NotFound(f"seed {s!r} is neither a node of the {view.name} view nor an "
                           "anchor with mentions; `akasha stats` / the anchors list show "
                           "what is there")
    if not reset:
        raise InvalidInput("name at least one seed (node uid, anchor uid, name or alias)")
    return reset


def ppr(store: Store, seeds: str | list[str], *, view: str = "nodes", now: float | None = None,
        damping: float | None = None, top: int = 20) -> pd.DataFrame:
    """What do these seeds reach? Personalized PageRank (SPEC §7) from node uids —
    or anchors (uid, name or alias: their mentioning turns in the nodes view) — over
    a view at ``now``; the ``top`` nodes, best first, with ``ppr``, ``rank``, whether
    each is a seed, and its label, text, session, time and community.

    Settings read: ``PPR_DAMPING`` (unless ``damping``), ``PPR_DIRECTED``."""
    v = graph_view(store, view, now=now)
    reset = _resolve_seeds(store, v, seeds)
    s = store.settings
    pr = personalized_pagerank(v, reset, damping=s.PPR_DAMPING if damping is None
                               else float(damping),
                               directed=v.directed and s.PPR_DIRECTED)
    f = v.nodes
    order = np.lexsort((np.arange(len(f)), -pr))[:top]
    out = pd.DataFrame({"id": f["id"].to_numpy()[order], "rank": np.arange(1, order.size + 1),
                        "ppr": pr[order], "seed": f["id"].iloc[order].isin(reset).to_numpy()})
    keep = [c for c in ("label", "text", "type", "kind", "session", "time", "community")
            if c in f]
    return pd.concat([out, f[keep].iloc[order].reset_index(drop=True)], axis=1)


# -- communities ---------------------------------------------------------------------------------
def communities(store: Store, view: str = "nodes", *, now: float | None = None,
                resolution: float | None = None, seed: int | None = None,
                save: bool = False) -> pd.DataFrame:
    """Leiden communities of a view (SPEC §7), one row per community, largest first
    (:func:`.communities.community_table`; turns are labelled by the anchors they
    mention, most distinctive first).
    ``save=True`` (nodes view, writable store) keeps them as episodes of kind
    ``community`` (replacing the previous ones)."""
    v = graph_view(store, view, now=now, resolution=resolution, seed=seed)
    terms = adapters.node_anchor_names(store, list(v.nodes["id"])) if view == "nodes" else None
    table = community_table(v, terms=terms)
    if save:
        if view != "nodes":
            raise InvalidInput("only communities of the nodes view are stored as episodes")
        adapters.store_communities(store, v, table)
    return table


# -- surprises -----------------------------------------------------------------------------------
def surprises(store: Store, *, now: float | None = None, resolution: float | None = None,
              seed: int | None = None, top: int = 10, queue: bool = True) -> pd.DataFrame:
    """Surprise discovery (SPEC §7): cross-community bridges, indirect-strong pairs,
    knowledge gaps and lived-vs-semantic mismatches, each with the numbers behind it
    (:mod:`.surprises`). Greetings and fillers (noise) are left out as subjects.
    With ``queue`` (and a writable store) the best ``SUGGEST_MAX`` indirect pairs go
    on the review queue as ``suggested_link`` items (once per pair); column
    ``review_uid`` names them.

    Settings read: ``BRIDGE_MIN_PARTICIPATION``, ``SUGGEST_STRONG_EDGES``,
    ``SUGGEST_MIN_VIA``, ``SUGGEST_MAX``, ``GAP_MIN_MISSES``, ``MISMATCH_K``,
    ``MISMATCH_MIN_COS`` (and the Leiden ones of :func:`graph_view`)."""
    v = graph_view(store, "nodes", now=now, resolution=resolution, seed=seed)
    s = store.settings
    noise = adapters.noise_ids(v)
    vectors = store.mirror.nodes.vec[v.nodes["row"].to_numpy(np.int64)]
    items = bridges(v, min_participation=s.BRIDGE_MIN_PARTICIPATION, top=top, exclude=noise)
    pairs = indirect_pairs(v, per_node=s.SUGGEST_STRONG_EDGES, min_via=s.SUGGEST_MIN_VIA,
                           top=max(top, s.SUGGEST_MAX), exclude=noise, vectors=vectors)
    items += pairs
    items += knowledge_gaps(store.queries.rows(), min_misses=s.GAP_MIN_MISSES, top=top)
    items += semantic_mismatches(v, vectors, k=s.MISMATCH_K, min_cos=s.MISMATCH_MIN_COS,
                                 top=top, exclude=noise)
    if queue and not store.read_only:
        adapters.queue_suggested_links(store, pairs[: s.SUGGEST_MAX], now=v.now or 0.0)
    frame = surprise_frame(items)
    text = dict(zip(v.nodes["id"], v.nodes["text"], strict=True))
    frame["subject_text"] = [text.get(x, "") for x in frame["subject"]]
    frame["other_text"] = [text.get(x, "") for x in frame["other"]]
    frame["element"] = [it.extra.get("element", "node") for it in items]
    frame["review_uid"] = [adapters.suggested_uid(it.subject, it.other)
                           if it.kind == "suggested_link" else "" for it in items]
    return frame
