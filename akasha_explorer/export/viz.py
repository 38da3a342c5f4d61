"""Visual attributes shared by the GEXF, GraphML and HTML exports: a seeded igraph layout,
one colour per community and a size per node.

- **positions**: Fruchterman–Reingold on the undirected, weighted view — on its backbone
  (each node's :data:`BACKBONE` strongest edges) when the graph is denser than that, with
  FR's grid approximation from :data:`GRID_FROM` nodes — seeded, scaled to
  ``[-scale, scale]`` (10k nodes / 380k edges: about 1 s; DrL took minutes);
- **colour**: community ``c`` gets :data:`EXPORT_PALETTE` ``[c % 20]``; no community (−1) is grey;
- **size**: ``5 + 20 · long`` for turns (decayed strength, SPEC §3), ``5 + 4 ln(1 + n)``
  for anchors (``n`` mentions), else from the weighted degree.

>>> colour(0), colour(-1)
('#1f77b4', '#b0b0b0')
>>> rgb("#1f77b4")
(31, 119, 180)
"""

from __future__ import annotations

import contextlib
import random
from collections.abc import Iterator

import igraph as ig
import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from ..analysis.views import GraphView, adjacency, backbone

__all__ = ["BACKBONE", "EXPORT_PALETTE", "GRID_FROM", "colour", "layout", "rgb", "sizes"]

EXPORT_PALETTE = (
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
    "#bcbd22", "#17becf", "#aec7e8", "#ffbb78", "#98df8a", "#ff9896", "#c5b0d5", "#c49c94",
    "#f7b6d2", "#c7c7c7", "#dbdb8d", "#9edae5",
)
"""Community colours of exported graphs: matplotlib's tab10 + tab20 light shades, 20
distinguishable colours (the panels use their own, ``widgets._html.PALETTE``)."""

BACKBONE = 8
"""Dense graphs are laid out on each node's this many strongest edges."""
GRID_FROM = 1000
"""From this many nodes FR uses its grid approximation."""


def colour(community: int) -> str:
    """Hex colour of a community id (−1: grey)."""
    return "#b0b0b0" if community < 0 else EXPORT_PALETTE[int(community) % len(EXPORT_PALETTE)]


def rgb(hex_colour: str) -> tuple[int, int, int]:
    """``#rrggbb`` as three ints."""
    h = hex_colour.lstrip("#")
    return int(h[0:2], 16), int(h[2:4], 16), int(h[4:6], 16)


@contextlib.contextmanager
def _seeded(seed: int) -> Iterator[None]:
    """igraph's layouts draw from Python's ``random`` by default: give them a private,
    seeded generator for the block (the global one is left untouched)."""
    ig.set_random_number_generator(random.Random(seed))
    try:
        yield
    finally:
        ig.set_random_number_generator(random)


def layout(view: GraphView, *, seed: int = 0, scale: float = 1000.0) -> NDArray[np.float64]:
    """``(n, 2)`` positions of the view's nodes (row order), reproducible for a seed.

    >>> import pandas as pd
    >>> v = GraphView("x", pd.DataFrame({"id": ["a", "b", "c"]}),
    ...               pd.DataFrame({"source": ["a"], "target": ["b"], "weight": [1.0]}), False)
    >>> p = layout(v, seed=3)
    >>> p.shape, bool(np.abs(p).max() <= 1000.0), bool((layout(v, seed=3) == p).all())
    ((3, 2), True, True)
    """
    n = len(view.nodes)
    if n == 0:
        return np.zeros((0, 2), np.float64)
    a, _ = adjacency(view)
    if a.nnz > 2 * BACKBONE * n:
        a = backbone(a, BACKBONE)
    up = sp.triu(a, k=1).tocoo()
    g = ig.Graph(n=n, edges=np.column_stack([up.row, up.col]).tolist())
    with _seeded(seed):
        lay = g.layout_fruchterman_reingold(weights=up.data.tolist() or None, niter=500,
                                            grid=n > GRID_FROM)
    xy = np.asarray(lay.coords, np.float64).reshape(n, 2)
    xy -= xy.mean(axis=0)
    span = float(np.abs(xy).max()) if n > 1 else 0.0
    return xy * (scale / span) if span > 0 else xy


def sizes(view: GraphView) -> NDArray[np.float64]:
    """Display size of every node (see the module docstring).

    >>> import pandas as pd
    >>> v = GraphView("x", pd.DataFrame({"id": ["a", "b"], "long": [0.0, 1.0]}),
    ...               pd.DataFrame(), False)
    >>> sizes(v).tolist()
    [5.0, 25.0]
    """
    f = view.nodes
    out = np.full(len(f), 5.0)
    if "long" in f:
        v = f["long"].to_numpy(np.float64)
        ok = np.isfinite(v)
        out[ok] = 5.0 + 20.0 * v[ok]
    if "n_mentions" in f:
        v = f["n_mentions"].to_numpy(np.float64)
        ok = np.isfinite(v) & ~np.isfinite(f["long"].to_numpy(np.float64)
                                           if "long" in f else np.full(len(f), np.nan))
        out[ok] = 5.0 + 4.0 * np.log1p(v[ok])
    elif "long" not in f and "w_degree" in f:
        v = f["w_degree"].to_numpy(np.float64)
        top = float(np.nanmax(v)) if len(v) and np.nanmax(v) > 0 else 1.0
        out = 5.0 + 20.0 * np.nan_to_num(v) / top
    return out
