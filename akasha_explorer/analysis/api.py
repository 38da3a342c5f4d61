"""Memory methods for graph views, personalized PageRank, communities, surprises and
export (SPEC §7, §9). Mixed into :class:`~akasha_explorer.memory.Memory`.

Every method reads the store at ``now``; ``now=None`` means the time of the store's
newest message (not the wall clock: a memory analysed later should not look faded just
because time passed since it was last used — pass ``now`` to see it as of another
moment). Resolution and seed default to ``LEIDEN_RESOLUTION`` / ``LEIDEN_SEED``.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import numpy as np
import pandas as pd

from ..errors import InvalidInput, NotFound
from . import adapters
from .communities import community_table
from .ppr import personalized_pagerank, ppr_recall
from .surprises import (
    bridges,
    indirect_pairs,
    knowledge_gaps,
    semantic_mismatches,
    surprise_frame,
)
from .views import VIEWS, GraphView

if TYPE_CHECKING:
    from ..memory import Memory

__all__ = ["EXPORT_FORMATS", "METHODS", "AnalysisMixin"]

METHODS = ("akasha", "ppr")
"""Recall methods ``Memory.recall(method=...)`` knows."""

EXPORT_FORMATS = ("graphml", "gexf", "json", "parquet", "csv", "html", "store")


class AnalysisMixin:
    """Analytics / export part of the Memory facade."""

    def _mem(self) -> Memory:
        return cast("Memory", self)

    def _analysis_args(self, now: float | None, resolution: float | None,
                       seed: int | None) -> tuple[float, float, int]:
        m = self._mem()
        m._check_open()
        s = m.settings
        return (m.last_ts() if now is None else float(now),
                s.LEIDEN_RESOLUTION if resolution is None else float(resolution),
                s.LEIDEN_SEED if seed is None else int(seed))

    # -- views -----------------------------------------------------------------------------
    def graph_view(self, view: str = "nodes", *, now: float | None = None,
                   resolution: float | None = None, seed: int | None = None) -> GraphView:
        """A projection of the store (SPEC §7): ``"nodes"`` (turns + co-activation edges
        at ``now``), ``"anchors"`` or ``"bipartite"``, with Leiden communities filled.
        ``.nodes`` / ``.edges`` are pandas frames; ``.to_igraph()`` / ``.to_networkx()``
        give the graph objects."""
        if view not in VIEWS:
            raise InvalidInput(f"unknown view {view!r}; use one of {', '.join(VIEWS)}")
        when, res, sd = self._analysis_args(now, resolution, seed)
        return adapters.build_view(self._mem(), view, now=when, resolution=res, seed=sd)

    # -- personalized PageRank ---------------------------------------------------------------
    def _resolve_seeds(self, view: GraphView, seeds: Any) -> dict[str, float]:
        ids = set(view.nodes["id"])
        reset: dict[str, float] = {}
        names = [seeds] if isinstance(seeds, str) else list(seeds)
        for s in names:
            if s in ids:
                reset[s] = reset.get(s, 0.0) + 1.0
                continue
            rows = self._mem().graph.rows(
                "MATCH (a:Anchor) WHERE a.uid = $s OR a.name = $s RETURN a.uid AS a UNION "
                "MATCH (al:Alias)-[:ALIAS_OF]->(a:Anchor) WHERE al.surface = $s OR al.norm = $s "
                "RETURN a.uid AS a", {"s": s})
            found = False
            for r in rows:
                if r["a"] in ids:
                    reset[r["a"]] = reset.get(r["a"], 0.0) + 1.0
                    found = True
                turns = self._mem().graph.rows(
                    "MATCH (t:Turn)-[:MENTIONS]->(a:Anchor {uid: $a}) RETURN t.uid AS t",
                    {"a": r["a"]})
                for t in turns:
                    if t["t"] in ids:
                        reset[t["t"]] = reset.get(t["t"], 0.0) + 1.0
                        found = True
            if not found:
                raise NotFound(f"seed {s!r} is neither a node of the {view.name} view nor an "
                               "anchor with mentions; `akasha stats` / the anchors list show "
                               "what is there")
        if not reset:
            raise InvalidInput("name at least one seed (node uid, anchor uid, name or alias)")
        return reset

    def ppr(self, seeds: str | list[str], *, view: str = "nodes", now: float | None = None,
            damping: float | None = None, top: int = 20) -> pd.DataFrame:
        """What do these seeds reach? Personalized PageRank (SPEC §7) from node uids —
        or anchors (uid, name or alias: their mentioning turns in the nodes view) — over
        a view at ``now``; the ``top`` nodes, best first, with ``ppr``, ``rank``, whether
        each is a seed, and its label, text, session, time and community."""
        v = self.graph_view(view, now=now)
        reset = self._resolve_seeds(v, seeds)
        s = self._mem().settings
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

    def _recall_method(self, method: str, q: Any, lexical: Any, *, now: float,
                       settings: Any, query: str, session: str | None) -> Any:
        """Recall by another method than Akasha's own (``Memory.recall(method=...)``):
        ``"ppr"`` — personalized PageRank from the same seeds (:func:`.ppr.ppr_recall`)."""
        if method == "ppr":
            m = self._mem().mirror
            return ppr_recall(m.nodes, m.edges, q, lexical, now=now, settings=settings,
                              query=query, session=session)
        raise InvalidInput(f"unknown recall method {method!r}; known: {', '.join(METHODS)}")

    # -- communities -------------------------------------------------------------------------
    def communities(self, view: str = "nodes", *, now: float | None = None,
                    resolution: float | None = None, seed: int | None = None,
                    store: bool = False) -> pd.DataFrame:
        """Leiden communities of a view (SPEC §7), one row per community, largest first
        (:func:`.communities.community_table`; labelled by distinctive terms for turns).
        ``store=True`` (nodes view, writable store) keeps them as episodes of kind
        ``community`` (replacing the previous ones)."""
        v = self.graph_view(view, now=now, resolution=resolution, seed=seed)
        terms = adapters.node_terms(self._mem(), list(v.nodes["id"])) if view == "nodes" else None
        table = community_table(v, terms=terms)
        if store:
            if view != "nodes":
                raise InvalidInput("only communities of the nodes view are stored as episodes")
            adapters.store_communities(self._mem(), v, table)
        return table

    # -- surprises ---------------------------------------------------------------------------
    def surprises(self, *, now: float | None = None, resolution: float | None = None,
                  seed: int | None = None, top: int = 10, queue: bool = True) -> pd.DataFrame:
        """Surprise discovery (SPEC §7): cross-community bridges, indirect-strong pairs,
        knowledge gaps and lived-vs-semantic mismatches, each with the numbers behind it
        (:mod:`.surprises`). Greetings and fillers (noise) are left out as subjects.
        With ``queue`` (and a writable store) the best ``SUGGEST_MAX`` indirect pairs go
        on the review queue as ``suggested_link`` items (once per pair); column
        ``review_uid`` names them."""
        mem = self._mem()
        v = self.graph_view("nodes", now=now, resolution=resolution, seed=seed)
        s = mem.settings
        noise = adapters.noise_ids(v)
        vectors = mem.mirror.nodes.vec[v.nodes["row"].to_numpy(np.int64)]
        items = bridges(v, min_participation=s.BRIDGE_MIN_PARTICIPATION, top=top, exclude=noise)
        pairs = indirect_pairs(v, per_node=s.SUGGEST_STRONG_EDGES, min_via=s.SUGGEST_MIN_VIA,
                               top=max(top, s.SUGGEST_MAX), exclude=noise, vectors=vectors)
        items += pairs
        items += knowledge_gaps(adapters.query_rows(mem), min_misses=s.GAP_MIN_MISSES, top=top)
        items += semantic_mismatches(v, vectors, k=s.MISMATCH_K, min_cos=s.MISMATCH_MIN_COS,
                                     top=top, exclude=noise)
        if queue and not mem.read_only:
            adapters.queue_suggested_links(mem, pairs[: s.SUGGEST_MAX], now=v.now or 0.0)
        frame = surprise_frame(items)
        text = dict(zip(v.nodes["id"], v.nodes["text"], strict=True))
        frame["subject_text"] = [text.get(x, "") for x in frame["subject"]]
        frame["other_text"] = [text.get(x, "") for x in frame["other"]]
        frame["element"] = [it.extra.get("element", "node") for it in items]
        frame["review_uid"] = [adapters.suggested_uid(it.subject, it.other)
                               if it.kind == "suggested_link" else "" for it in items]
        return frame

    # -- export ------------------------------------------------------------------------------
    def export(self, path: str | Path, *, format: str, view: str = "nodes",
               now: float | None = None, resolution: float | None = None,
               seed: int | None = None) -> Path:
        """Export a view (graphml, gexf, json, parquet, csv, html) or the whole store
        (``format="store"``: raw messages + graph state, see
        :mod:`akasha_explorer.export.store`; :func:`~akasha_explorer.export.store.import_store`
        reads it back). Returns the file or folder written."""
        from ..export import formats, gexf, graphml, html, store

        if format not in EXPORT_FORMATS:
            raise InvalidInput(f"unknown export format {format!r}; use one of "
                               f"{', '.join(EXPORT_FORMATS)}")
        from ..store.paths import output_path  # never into a store (it would overwrite it)
        path = output_path(self._mem().path, path, folder=format in ("parquet", "csv", "store"))
        if format == "store":
            return store.export_store(self._mem(), path)
        v = self.graph_view(view, now=now, resolution=resolution, seed=seed)
        lay_seed = self._analysis_args(now, resolution, seed)[2]
        if format == "graphml":
            return graphml.write_graphml(v, path, seed=lay_seed)
        if format == "gexf":
            return gexf.write_gexf(v, path, seed=lay_seed)
        if format == "json":
            return formats.write_json(v, path)
        if format == "parquet":
            return formats.write_parquet(v, path)
        if format == "csv":
            return formats.write_csv(v, path)
        labels = None
        if view == "nodes":
            t = community_table(v, terms=adapters.node_terms(self._mem(), list(v.nodes["id"])))
            labels = dict(zip(t["community"], t["label"], strict=True))
        return html.write_html(v, path, seed=lay_seed, labels=labels,
                               title=f"akasha — {view} view of {self._mem().path.name}")
