"""Export of one store (SPEC §9): a view in a graph format, or the whole store — a function
of a :class:`~akasha_explorer.store.Store` (``Memory.export`` delegates here)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ..analysis import adapters
from ..analysis.api import analysis_args, graph_view
from ..analysis.communities import community_table
from ..errors import InvalidInput
from . import formats, gexf, graphml, html
from .store import export_store

if TYPE_CHECKING:
    from ..store.store import Store

__all__ = ["EXPORT_FORMATS", "export"]

EXPORT_FORMATS = ("graphml", "gexf", "json", "parquet", "csv", "html", "store")
"""What :func:`export` writes (``store``: the whole store, the rest: one view)."""


def export(store: Store, path: str | Path, *, format: str, view: str = "nodes",
           now: float | None = None, resolution: float | None = None,
           seed: int | None = None) -> Path:
    """Export a view (graphml, gexf, json, parquet, csv, html) or the whole store
    (``format="store"``: raw messages + graph state, see
    :mod:`akasha_explorer.export.store`; :func:`~akasha_explorer.export.store.import_store`
    reads it back). Returns the file or folder written."""
    if format not in EXPORT_FORMATS:
        raise InvalidInput(f"unknown export format {format!r}; use one of "
                           f"{', '.join(EXPORT_FORMATS)}")
    from ..store.paths import output_path  # never into a store (it would overwrite it)
    path = output_path(store.path, path, folder=format in ("parquet", "csv", "store"))
    if format == "store":
        return export_store(store, path)
    v = graph_view(store, view, now=now, resolution=resolution, seed=seed)
    lay_seed = analysis_args(store, now, resolution, seed)[2]
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
        t = community_table(v, terms=adapters.node_terms(store, list(v.nodes["id"])))
        labels = dict(zip(t["community"], t["label"], strict=True))
    return html.write_html(v, path, seed=lay_seed, labels=labels,
                           title=f"akasha — {view} view of {store.path.name}")
