"""The graph view: one anywidget that draws nodes and edges with the vis-network JavaScript
the installed pyvis package ships, and reports clicks back to Python.

- Nothing is fetched from the network: the vis-network source is read from the pyvis
  package folder at run time (:func:`vis_source`) and sent to the front end as a synced
  trait; our own code is ``canvas.js`` beside this file.
- Positions come from Python (:func:`pixel_layout`: igraph Fruchterman–Reingold with a private,
  seeded random generator, so the same graph always lays out the same); the front end runs
  with ``physics: false``.
- Tooltips are HTML built by Python with every text escaped (:func:`~._html.tooltip`); the
  front end turns them into DOM elements (vis-network shows plain strings as text). Node
  labels are drawn on the canvas as text, never parsed as HTML.
- Legible at any size: node discs are capped at :data:`MAX_NODE_SIZE` and edges at
  :data:`MAX_EDGE_WIDTH` (so arrowheads stay small); an edge whose reverse is also drawn
  curves, so the two never lie on top of each other; the front end zooms to fit every node
  *and its label* (at most 1.3×, labels 12 px on screen), only when asked (:meth:`fit`),
  and hides labels that would overlap a more important one (a node's ``rank``, lower
  first) or leave the canvas.
- Every colour and size a view uses is named in its legend (:attr:`GraphCanvas.legend`,
  entries made by :func:`legend_entry`), drawn under the caption as swatches and text.
- Selection (click, ctrl/long-press for multi-select) lands in :attr:`GraphCanvas.selected`
  as node ids; a double-click asks Python to expand that node (:meth:`GraphCanvas.on_expand`).

>>> v = GraphCanvas()
>>> v.set_graph([{"id": "a", "label": "A"}, {"id": "b"}], [{"from": "a", "to": "b"}])
>>> [n["id"] for n in v.nodes], sorted(v.nodes[0]) == ["id", "label", "x", "y"]
(['a', 'b'], True)
>>> len(v.vis_source) > 100_000
True
"""

from __future__ import annotations

import functools
import logging
import random
from collections.abc import Callable, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

import anywidget
import igraph as ig
import numpy as np
import traitlets

from ..errors import InvalidInput, StoreError

__all__ = ["DEFAULT_CAP", "EDGE_COLOUR", "LEGEND_KINDS", "MAX_EDGE_WIDTH", "MAX_NODE_SIZE",
           "GraphCanvas", "legend_entry", "pixel_layout", "separate", "vis_source"]

log = logging.getLogger(__name__)

DEFAULT_CAP = 500
"""Most nodes a graph view shows (expansion stops there)."""

MAX_NODE_SIZE = 18.0
"""Largest node radius, in canvas units (the view zooms in at most 1.3×: ≤ 24 px)."""

MAX_EDGE_WIDTH = 3.0
"""Widest edge (vis-network draws an arrowhead about ``5 + 3·width`` long)."""

EDGE_COLOUR = "#c8c8c8"
"""Colour of an edge that sets none (canvas.js ``OPTIONS.edges.color``)."""

LEGEND_KINDS = ("fill", "ring", "halo", "edge", "size", "marker")
"""What a legend entry explains: a disc's fill, its ring (border), its glow, an edge's
colour, what a disc's size means, a marker that is not a turn."""

ASPECT = 1.4
"""Width / height the layout is stretched to (a graph view is wider than tall)."""

_HERE = Path(__file__).resolve().parent


@functools.lru_cache(maxsize=1)
def vis_source() -> str:
    """The vis-network standalone JavaScript shipped inside the installed pyvis package
    (the newest ``lib/vis-*/vis-network.min.js``), read at run time — never vendored.

    >>> "vis-network" in vis_source()[:200]
    True
    """
    root = resources.files("pyvis")
    found: list[tuple[tuple[int, ...], Any]] = []
    for sub in ("lib", "templates/lib"):
        base = root.joinpath(sub)
        if not base.is_dir():
            continue
        for d in base.iterdir():
            js = d.joinpath("vis-network.min.js")
            if d.name.startswith("vis-") and js.is_file():
                version = tuple(int(p) for p in d.name[4:].split(".") if p.isdigit())
                found.append((version, js))
    if not found:
        raise StoreError("the installed pyvis package has no lib/vis-*/vis-network.min.js; "
                         "reinstall pyvis (pip install --force-reinstall pyvis)")
    return max(found, key=lambda f: f[0])[1].read_text("utf-8")


def pixel_layout(n: int, edges: Sequence[tuple[int, int]],
                 weights: Sequence[float] | None = None, *,
                 fixed: dict[int, tuple[float, float]] | None = None, seed: int = 0,
                 spread: float = 70.0, aspect: float = 1.0,
                 radii: Sequence[float] | None = None) -> np.ndarray:
    """Positions ``(n, 2)`` in pixels for a graph of ``n`` nodes (igraph Fruchterman–Reingold).

    Deterministic: igraph's random generator is swapped for ``random.Random(seed)`` during
    the call. ``fixed`` node positions (e.g. nodes already on screen) seed the layout and are
    put back exactly afterwards, so expanding a graph does not move what was there.
    The result spans about ``spread · sqrt(n)`` pixels, stretched towards width / height
    ``aspect`` (without ``fixed`` nodes). With ``radii`` the nodes that are not fixed are
    then pushed apart until no two discs overlap (:func:`separate`).

    >>> p = pixel_layout(4, [(0, 1), (1, 2), (2, 3)])
    >>> p.shape, bool(np.allclose(p, pixel_layout(4, [(0, 1), (1, 2), (2, 3)])))
    ((4, 2), True)
    >>> q = pixel_layout(5, [(0, 1), (1, 2), (2, 3), (3, 4)], fixed={0: (10.0, 20.0)})
    >>> q[0].tolist()
    [10.0, 20.0]
    """
    if n == 0:
        return np.zeros((0, 2))
    if n == 1:
        return np.array([list(fixed[0])]) if fixed and 0 in fixed else np.zeros((1, 2))
    g = ig.Graph(n=n, edges=list(edges), directed=False)
    w = None if weights is None else [max(float(x), 1e-6) for x in weights]
    size = spread * np.sqrt(n)
    init = None
    if fixed:  # seed with the fixed positions (in igraph's scale), others scattered
        keys = list(fixed)
        f = np.array([fixed[i] for i in keys], dtype=np.float64)
        centre = f.mean(axis=0)
        ext = float(np.abs(f - centre).max()) or size / 2
        unit = np.sqrt(n) / 2
        init_arr = np.random.default_rng(seed).uniform(-unit, unit, size=(n, 2))
        init_arr[keys] = (f - centre) / ext * unit
        init = init_arr.tolist()
    ig.set_random_number_generator(random.Random(seed))
    try:
        coords = np.array(g.layout_fruchterman_reingold(weights=w, niter=300, seed=init).coords)
    finally:
        ig.set_random_number_generator(random)
    if not fixed:
        coords = coords - coords.mean(axis=0)
        ex, ey = (float(v) or 1.0 for v in np.abs(coords).max(axis=0))
        c = min(max(aspect / (ex / ey), 0.4), 2.5)  # towards the aspect, at most 2.5×
        coords = coords * np.array([np.sqrt(c), 1 / np.sqrt(c)])
        extent = float(np.abs(coords).max()) or 1.0
        out = coords / extent * (size / 2)
        return out if radii is None else separate(out, radii, seed=seed)
    # map the layout onto the fixed nodes (least-squares scale + shift), then pin them
    lf = coords[keys]
    lm, fm = lf.mean(axis=0), f.mean(axis=0)
    den = float(((lf - lm) ** 2).sum())
    scale = float(((lf - lm) * (f - fm)).sum()) / den if den > 1e-12 else 0.0
    if scale <= 0:
        scale = size / 2 / (float(np.abs(coords - coords.mean(axis=0)).max()) or 1.0)
    out = (coords - lm) * scale + fm
    out[keys] = f
    if radii is not None:
        movable = np.ones(n, bool)
        movable[keys] = False
        out = separate(out, radii, movable=movable, seed=seed)
    return out


def separate(xy: np.ndarray, radii: Sequence[float], *, movable: np.ndarray | None = None,
             gap: float = 4.0, rounds: int = 40, seed: int = 0) -> np.ndarray:
    """``xy`` with overlapping discs (``radii``) pushed apart along the line between their
    centres, ``rounds`` times at most, until every two are ``gap`` pixels apart; rows where
    ``movable`` is False stay put.

    >>> p = separate(np.array([[0.0, 0.0], [1.0, 0.0]]), [5.0, 5.0])
    >>> round(float(np.linalg.norm(p[1] - p[0])), 1)
    14.0
    """
    out = np.array(xy, dtype=np.float64)
    n = len(out)
    if n < 2:
        return out
    r = np.asarray(radii, np.float64)
    move = np.ones(n, bool) if movable is None else np.asarray(movable, bool)
    need = r[:, None] + r[None, :] + gap
    jitter = np.random.default_rng(seed).uniform(-1e-3, 1e-3, size=out.shape)
    out[move] += jitter[move]  # coincident points get a direction
    for _ in range(rounds):
        d = out[:, None, :] - out[None, :, :]
        dist = np.sqrt((d ** 2).sum(-1))
        np.fill_diagonal(dist, np.inf)
        over = np.clip(need - dist, 0.0, None)
        if not over.any():
            break
        share = np.where(move[None, :], 0.5, 1.0)[..., None]  # a fixed partner: move it all
        push = (d / np.maximum(dist, 1e-9)[..., None] * over[..., None] * share).sum(axis=1)
        push[~move] = 0.0
        out += push
    return out


def legend_entry(kind: str, colour: str, text: str) -> dict[str, str]:
    """One entry of :attr:`GraphCanvas.legend`: a swatch of ``kind`` (one of
    :data:`LEGEND_KINDS`) in ``colour`` (a CSS colour; "" for a size entry) and its text.

    >>> legend_entry("fill", "#4E79A7", "community 0")
    {'kind': 'fill', 'colour': '#4e79a7', 'text': 'community 0'}
    """
    if kind not in LEGEND_KINDS:
        raise InvalidInput(f"legend kind {kind!r} is not one of {', '.join(LEGEND_KINDS)}")
    return {"kind": kind, "colour": colour.strip().lower(), "text": text}


class GraphCanvas(anywidget.AnyWidget):
    """An offline, clickable graph (see the module docstring).

    Traits (synced): ``nodes`` / ``edges`` (vis-network dicts: ``id``, ``label``, ``title``
    as escaped HTML, ``x``, ``y``, ``size``, ``color``, ``borderWidth``, ``shadow``, …;
    edges ``from``, ``to``, ``width``, ``color``, ``dashes``, ``title``), ``selected``
    (node ids; set from Python to select), ``caption`` (plain text shown above the graph),
    ``height`` (CSS), ``cap`` (most nodes shown), ``legend`` (:func:`legend_entry` dicts,
    shown under the caption: what each colour and size on the view means). The front end
    writes ``drawn`` (how many
    nodes it drew last).
    """

    _esm = _HERE / "canvas.js"
    _css = _HERE / "canvas.css"

    vis_source = traitlets.Unicode("").tag(sync=True)
    nodes = traitlets.List(traitlets.Dict()).tag(sync=True)
    edges = traitlets.List(traitlets.Dict()).tag(sync=True)
    selected = traitlets.List(traitlets.Unicode()).tag(sync=True)
    caption = traitlets.Unicode("").tag(sync=True)
    legend = traitlets.List(traitlets.Dict()).tag(sync=True)
    height = traitlets.Unicode("520px").tag(sync=True)
    fit_token = traitlets.Int(0).tag(sync=True)
    fit_ids = traitlets.List(traitlets.Unicode()).tag(sync=True)
    drawn = traitlets.Int(0).tag(sync=True)
    cap = traitlets.Int(DEFAULT_CAP)
    aspect = traitlets.Float(ASPECT)

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(vis_source=vis_source(), **kwargs)
        self._expand_handlers: list[Callable[[list[str]], object]] = []
        self.on_msg(self._on_front_msg)

    # -- Python API ----------------------------------------------------------------------------
    def set_graph(self, nodes: Sequence[dict[str, Any]], edges: Sequence[dict[str, Any]], *,
                  relayout: bool = False, fit: bool = True, seed: int = 0) -> None:
        """Show ``nodes`` and ``edges`` (at most :attr:`cap` nodes: the rest are dropped with
        their edges). Nodes without ``x``/``y`` get a layout position; nodes already on screen
        keep theirs unless ``relayout``. ``weight`` on an edge guides the layout only.

        Node ``size`` is capped at :data:`MAX_NODE_SIZE`, edge ``width`` at
        :data:`MAX_EDGE_WIDTH`; an edge drawn in both directions is curved (unless it sets
        ``smooth``). ``fit`` zooms the view to the new graph; without it the zoom stays."""
        nodes = [dict(n) for n in nodes[: self.cap]]
        ids = [str(n["id"]) for n in nodes]
        pos = {i: k for k, i in enumerate(ids)}
        edges = [dict(e) for e in edges if str(e["from"]) in pos and str(e["to"]) in pos]
        old = {} if relayout else {str(n["id"]): (n["x"], n["y"]) for n in self.nodes
                                   if "x" in n and "y" in n}
        fixed: dict[int, tuple[float, float]] = {}
        for k, n in enumerate(nodes):
            n["id"] = ids[k]
            if "x" in n and "y" in n:
                fixed[k] = (float(n["x"]), float(n["y"]))
            elif ids[k] in old:
                fixed[k] = old[ids[k]]
        if len(fixed) < len(nodes):
            pairs = [(pos[str(e["from"])], pos[str(e["to"])]) for e in edges]
            w = [float(e.get("weight", 1.0)) for e in edges]
            radii = [min(float(n.get("size", 10.0)), MAX_NODE_SIZE) for n in nodes]
            xy = pixel_layout(len(nodes), pairs, w, fixed=fixed or None, seed=seed,
                              aspect=self.aspect, radii=radii)
            for k, n in enumerate(nodes):
                n["x"], n["y"] = round(float(xy[k, 0]), 2), round(float(xy[k, 1]), 2)
        for n in nodes:
            if "size" in n:
                n["size"] = min(float(n["size"]), MAX_NODE_SIZE)
        both = {(str(e["from"]), str(e["to"])) for e in edges}
        for e in edges:
            e.pop("weight", None)
            e["from"], e["to"] = str(e["from"]), str(e["to"])
            e.setdefault("id", f"{e['from']}->{e['to']}")
            if "width" in e:
                e["width"] = min(float(e["width"]), MAX_EDGE_WIDTH)
            if (e["to"], e["from"]) in both and e["from"] != e["to"]:
                e.setdefault("smooth", {"enabled": True, "type": "curvedCW", "roundness": 0.2})
        self.edges = []  # edges first so the front end never sees an edge without its ends
        self.nodes = nodes
        self.edges = edges
        keep = [s for s in self.selected if s in pos]
        if keep != list(self.selected):
            self.selected = keep
        if fit:
            self.fit()

    def fit(self, ids: Sequence[str] | None = None) -> None:
        """Zoom the front end to ``ids`` (default: every node)."""
        shown = {n["id"] for n in self.nodes}
        self.fit_ids = [str(i) for i in ids or () if str(i) in shown]
        self.fit_token += 1

    def restyle(self, styles: dict[str, dict[str, Any]]) -> None:
        """Update the look of nodes already shown (``id -> vis options``), keeping positions."""
        self.nodes = [{**n, **styles.get(n["id"], {})} for n in self.nodes]

    def select(self, ids: Sequence[str]) -> None:
        """Select nodes by id (ids not shown are ignored)."""
        shown = {n["id"] for n in self.nodes}
        self.selected = [str(i) for i in ids if str(i) in shown]

    def on_expand(self, handler: Callable[[list[str]], object]) -> None:
        """Call ``handler(ids)`` when a person double-clicks nodes."""
        self._expand_handlers.append(handler)

    def on_select(self, handler: Callable[[list[str]], None]) -> None:
        """Call ``handler(ids)`` whenever the selection changes."""
        self.observe(lambda change: handler(list(change["new"])), names="selected")

    def _on_front_msg(self, _widget: Any, content: dict[str, Any], _buffers: Any) -> None:
        if isinstance(content, dict) and content.get("event") == "expand":
            ids = [str(i) for i in content.get("ids", [])]
            for h in self._expand_handlers:
                try:
                    h(ids)
                except Exception:  # a handler error must not break the comm
                    log.exception("graph view expand handler failed")
