"""The map view: one anywidget that draws a whole memory with sigma.js (WebGL) and reports
clicks back to Python — the canvas behind :class:`~.memorymap.MemoryMap`.

- Nothing is fetched from the network: sigma.js 3 and graphology are vendored as one ES
  module in ``widgets/vendor/sigma.mjs`` (MIT; licences in ``vendor/LICENSES.txt``, the
  pinned build recipe in ``vendor/recipe/``), read by :func:`sigma_source` and sent to the
  front end as a synced trait; our own code is ``mapview.js`` beside this file.
- Render-only: Python sends the items with their positions (the store's cached layout,
  :meth:`Neighbourhood.atlas <akasha_explorer.analysis.neighbourhood.Neighbourhood.atlas>`),
  pixel sizes and colours once (:attr:`MapView.data`, :meth:`MapView.draw`); searching,
  a time window, a recall's lights and a selection change small traits (``lit``,
  ``lit_edges``, ``window``, ``selected``) and the front end restyles what it drew — the
  graph is never rebuilt for them.
- Labels are chosen by sigma's label grid (the largest item of each cell, lit items
  forced) and drawn only where they touch no label already drawn, so none overlap.
- A click selects (shift/ctrl-click adds), a click on empty space clears, a double-click
  asks Python to open the item (:meth:`MapView.on_open`).

>>> v = MapView()
>>> v.draw(["a", "b"], x=[0.0, 1.0], y=[0.0, 1.0], size=[3.0, 4.0], color=["#4e79a7"] * 2,
...        label=["A", "B"], ts=[1.0, 2.0], src=[0], dst=[1], width=[1.0])
>>> v.data["ids"], v.data["src"], len(v.lib) > 100_000
(['a', 'b'], [0], True)
>>> v.light({"a": "hit"}); v.lit
{'a': 'hit'}
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import anywidget
import traitlets

from ..errors import InvalidInput, StoreError

__all__ = ["DIM_COLOUR", "LIT_COLOURS", "LIT_ROLES", "MapView", "sigma_source"]

log = logging.getLogger(__name__)

LIT_COLOURS = {"hit": "#e6007e", "near": "#f7a1cf", "seed": "#0050ff",
               "delivered": "#e6007e", "written": "#00a651", "selected": "#111111"}
"""How an item can be lit on the map, and the colour it then takes (mapview.js
``ROLE_COLOUR`` holds the same): a search hit and its neighbours, a recall's seeds, the
items it delivered and the turn it was written back to (its new links too), the selection.
Vivid, apart from the community palette; while anything is lit, the rest is dimmed."""

DIM_COLOUR = "#e4e4e4"
"""An item outside the time window, or not lit while something is (mapview.js ``DIM``)."""

LIT_ROLES = tuple(LIT_COLOURS)
"""The lights, in the order the legend names them."""

_HERE = Path(__file__).resolve().parent


@functools.lru_cache(maxsize=1)
def sigma_source() -> str:
    """The vendored sigma.js + graphology ES module (``widgets/vendor/sigma.mjs``).

    >>> "sigma 3.0.3" in sigma_source()[:120]
    True
    """
    path = _HERE / "vendor" / "sigma.mjs"
    try:
        return path.read_text("utf-8")
    except OSError as err:
        raise StoreError(f"the map's library {path} is missing ({err}); reinstall "
                         "akasha_explorer (its package data holds widgets/vendor/)") from err


class MapView(anywidget.AnyWidget):
    """A WebGL map of many items (see the module docstring).

    Traits (synced): ``data`` (parallel lists ``ids``, ``x``, ``y``, ``size`` in pixels,
    ``color``, ``label``, ``ts``, ``t0`` (an item's time span), edges ``src`` / ``dst`` as
    item indices with widths ``ew``; set by :meth:`draw`), ``lit`` (item id → one of
    :data:`LIT_ROLES`), ``lit_edges`` (pairs of item ids drawn on top), ``window``
    (``[t0, t1]`` seconds, or ``[]``: items wholly outside are dimmed), ``selected`` (item
    ids; written by the front end on click), ``focus`` (``[id, token]``: the camera moves
    there), ``height`` (CSS), ``item_name`` (what the status line calls an item).
    """

    _esm = _HERE / "mapview.js"
    _css = "\n".join((_HERE / f).read_text("utf-8") for f in ("canvas.css", "mapview.css"))
    """The map's styles and the legend's (canvas.css: a panel shows the legend beside it)."""

    lib = traitlets.Unicode("").tag(sync=True)
    data = traitlets.Dict().tag(sync=True)
    lit = traitlets.Dict().tag(sync=True)
    lit_edges = traitlets.List(traitlets.List(traitlets.Unicode())).tag(sync=True)
    window = traitlets.List(traitlets.Float()).tag(sync=True)
    selected = traitlets.List(traitlets.Unicode()).tag(sync=True)
    focus = traitlets.List(traitlets.Any()).tag(sync=True)
    height = traitlets.Unicode("560px").tag(sync=True)
    item_name = traitlets.Unicode("turns").tag(sync=True)

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(lib=sigma_source(), **kwargs)
        self._open_handlers: list[Callable[[str], object]] = []
        self._focus_token = 0
        self.on_msg(self._on_front_msg)

    def draw(self, ids: Sequence[str], *, x: Sequence[float], y: Sequence[float],
             size: Sequence[float], color: Sequence[str], label: Sequence[str],
             ts: Sequence[float], t0: Sequence[float] | None = None,
             src: Sequence[int] = (), dst: Sequence[int] = (),
             width: Sequence[float] = (), edge_colour: str = "#d0d0d0") -> None:
        """Show these items and edges (the one call that rebuilds the front end's graph);
        lights, window and selection of items no longer drawn are dropped."""
        n = len(ids)
        cols = {"x": x, "y": y, "size": size, "color": color, "label": label, "ts": ts}
        if t0 is not None:
            cols["t0"] = t0
        bad = [k for k, v in cols.items() if len(v) != n]
        if bad or not len(src) == len(dst) == len(width):
            raise InvalidInput(f"map view: columns {bad or ['src', 'dst', 'width']} do not "
                               "match the items in length")
        keep = set(ids)
        self.lit = {k: v for k, v in self.lit.items() if k in keep}
        self.lit_edges = [e for e in self.lit_edges if e[0] in keep and e[1] in keep]
        self.selected = [s for s in self.selected if s in keep]
        self.data = {"ids": [str(i) for i in ids], "x": [round(float(v), 5) for v in x],
                     "y": [round(float(v), 5) for v in y],
                     "size": [round(float(v), 2) for v in size], "color": list(color),
                     "label": list(label), "ts": [float(v) for v in ts],
                     "t0": [float(v) for v in (t0 if t0 is not None else ts)],
                     "src": [int(v) for v in src], "dst": [int(v) for v in dst],
                     "ew": [round(float(v), 2) for v in width], "ec": edge_colour}

    def light(self, roles: dict[str, str], edges: Sequence[tuple[str, str]] = ()) -> None:
        """Light items (``id → role``, one of :data:`LIT_ROLES`; ids not drawn are
        ignored) and draw ``edges`` on top; an empty dict puts every light out."""
        unknown = sorted({r for r in roles.values() if r not in LIT_ROLES})
        if unknown:
            raise InvalidInput(f"map view: unknown light {unknown[0]!r}; use one of "
                               f"{', '.join(LIT_ROLES)}")
        drawn = set(self.data.get("ids", ()))
        self.lit = {str(k): v for k, v in roles.items() if str(k) in drawn}
        self.lit_edges = [[str(a), str(b)] for a, b in edges if a in drawn and b in drawn]

    def move_to(self, item: str) -> None:
        """Move the camera onto ``item`` (zooming in if the view is far out); ``""``
        shows the whole map again."""
        self._focus_token += 1
        self.focus = [str(item), self._focus_token]

    def on_open(self, handler: Callable[[str], object]) -> None:
        """Call ``handler(id)`` when a person double-clicks an item."""
        self._open_handlers.append(handler)

    def _on_front_msg(self, _widget: Any, content: dict[str, Any], _buffers: Any) -> None:
        if isinstance(content, dict) and content.get("event") == "open":
            for h in self._open_handlers:
                try:
                    h(str(content.get("id", "")))
                except Exception:  # a handler error must not break the comm
                    log.exception("map view open handler failed")
