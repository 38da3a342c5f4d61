"""TimeTravelPanel — move ``now`` into the past or the future and watch the memory as it
would look then: strengths fade (node size), co-activation edges decay (edge width), turns
not yet said are not there, and a recall of the query, made at that time, lets items enter
and leave. **Play** steps through the days. The turns stand left to right by when they were
said (a red marker shows the slider's time), so going back in time empties the picture from
the right. The turns stand evenly spaced in the order they were said, so the time axis is
not linear: date ticks under the turns (:data:`TICKS`) say when each place on it is, and the
legend names every colour. The caption counts against one number for every frame: the
turns the picture was chosen with (:meth:`run`), however many of them were said by then.

All computed dry: every picture is ``mem.neighbourhood(now=t)`` (decay at ``t``, SPEC §3)
and ``mem.recall(query, now=t, log=False)`` — nothing is written. The store keeps no
history of weights: for a past ``t`` the stored weights are read as of then (a weight
last changed after ``t`` counts from its last change, never grown by looking back), and
turns said after ``t`` are left out, as a recall at ``t`` leaves them out.

>>> TimeTravelPanel.__mro__[1].__name__
'VBox'
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any

import ipywidgets as W
import numpy as np
import pandas as pd

from ..analysis.methods import context_order
from ..config import DAY
from ..errors import AkashaError
from ._data import StoreGraph, turn_legend
from ._html import STYLE, esc, frame_html, iso, note, short, tooltip
from ._inputs import read_query
from .canvas import GraphCanvas, legend_entry
from .labelbar import LabelBar

if TYPE_CHECKING:
    from ..engine.trace import RecallTrace
    from ..protocol import MemoryAPI

__all__ = ["LANES", "LANE_PX", "NOW_ID", "RECALLED", "TICKS", "TICK_COLOUR", "WIDTH_PX",
           "TimeTravelPanel"]

log = logging.getLogger(__name__)

RECALLED = "#2ca02c"
"""Ring of the nodes the recall at that time puts in its top k."""

WIDTH_PX = 1100.0
"""Width of the time axis in the picture: the first turn chosen at the left, the last at
the right."""

LANES = 7
LANE_PX = 55.0
"""Turns stand in :data:`LANES` staggered lanes, this far apart."""

NOW_ID = "now"
"""The marker of the slider's time above the turns."""

NOW_COLOUR = "#d62728"
"""Colour of the slider's time marker."""

TICKS = 6
"""Date ticks under the turns: at most this many, evenly along the axis (one per date)."""

TICK_COLOUR = "#888888"
"""Colour of a date tick."""

TICK_PREFIX = "tick:"
"""Node id of a date tick: this and the tick's date."""


class TimeTravelPanel(W.VBox):
    """A ``now`` slider over the memory's graph and one recall (see the module docstring).

    Parameters
    ----------
    mem
        An open :class:`~akasha_explorer.memory.Memory` or a served store.
    query
        A query recalled at every time (optional: without one the panel shows the
        strongest turns).
    k
        How many items of the recall are marked (the context order, what an agent
        receives).
    nodes
        How many turns the picture holds (the recall's items and their neighbours, or
        the strongest turns).
    future
        How many days past the newest message the slider reaches.

    Public parts for scripting and tests: :attr:`query`, :attr:`days` (the slider: days
    from the newest message), :attr:`play`, :attr:`view`, :attr:`trace` (the recall at
    the slider's time), :attr:`entered`, :attr:`left`, :attr:`last_ms`; :meth:`run`,
    :meth:`go`, :meth:`frame`.
    """

    def __init__(self, mem: MemoryAPI, *, query: str = "", k: int = 10, nodes: int = 40,
                 future: int = 60) -> None:
        self.mem = mem
        self.k = int(k)
        self.n_nodes = int(nodes)
        self.trace: RecallTrace | None = None
        self.entered: list[str] = []
        self.left: list[str] = []
        self.last_ms = 0.0
        self.uids: list[str] = []
        self._last = float(mem.last_ts())
        self._comm: dict[str, int] | None = None
        self._top: list[str] = []
        self._text: dict[str, str] = {}
        self._rows: list[dict[str, Any]] = []
        self._positions: dict[str, tuple[float, float]] = {}
        self._axis: tuple[list[float], list[float]] = ([self._last], [0.0])

        self.query = W.Text(value=query, placeholder="a query to recall at every time "
                            "(optional)", description="query", layout=W.Layout(width="60%"))
        self.run_button = W.Button(description="Travel", button_style="primary",
                                   icon="clock-o")
        first = self._first_day()
        self.days = W.IntSlider(value=0, min=first, max=int(future), step=1,
                                description="days from newest", continuous_update=False,
                                style={"description_width": "initial"},
                                layout=W.Layout(width="60%"))
        self.play = W.Play(value=0, min=first, max=int(future), step=1, interval=900,
                           description="play", tooltip="step through the days")
        W.jslink((self.play, "value"), (self.days, "value"))
        self.date = W.HTML()
        self.summary = W.HTML()
        self.view = GraphCanvas(height="420px")
        self.view.layout = W.Layout(width="100%")
        self.detail = W.HTML(layout=W.Layout(width="100%", max_height="240px", overflow="auto"))
        self.table = W.HTML(layout=W.Layout(width="100%"))
        self.table.add_class("ak-wide")
        self.labels = LabelBar(mem, lambda: self.query.value)
        self.status = W.HTML()

        self.run_button.on_click(lambda _b: self.run())
        self.days.observe(lambda _c: self.go(), names="value")
        super().__init__([
            W.HTML(STYLE),
            W.HBox([self.query, self.run_button]),
            W.HBox([self.play, self.days, self.date]),
            self.summary,
            self.view, self.detail,
            self.table, self.labels, self.status,
        ])
        self.run()

    def _first_day(self) -> int:
        try:
            sessions = self.mem.sessions()
        except AkashaError:
            return 0
        firsts = [float(s.first_ts) for s in sessions if s.first_ts is not None]
        return -int((self._last - min(firsts)) // DAY) if firsts else 0  # never before the first

    def now(self) -> float:
        """The time the slider names (epoch seconds)."""
        return self._last + self.days.value * DAY

    # -- choosing the turns ----------------------------------------------------------------
    def run(self, query: str | None = None) -> None:
        """Choose the turns the picture holds — the recall of the query at the newest time
        and its neighbours, or the strongest turns — lay them out once, and show the
        slider's time."""
        self._last = float(self.mem.last_ts())
        hood = self.mem.neighbourhood(now=self._last)
        self._comm = hood.communities()
        self._text = hood.texts()
        if query is not None:
            self.query.value = query
        uids: list[str] = []
        if self.query.value.strip():
            try:
                text, when = read_query(self.mem, self.query, None)
                t = self.mem.recall(text, now=when, log=False)
            except AkashaError as err:
                self.status.value = note(str(err), error=True)
                return
            uids = list(dict.fromkeys(context_order(t)[: self.k] + t.ranking()[: self.k]))
            uids += hood.neighbours(uids, exclude=uids,
                                    limit=max(0, self.n_nodes - len(uids)))
        else:
            alive = list(self._text)
            strength = hood.strength(alive)
            order = sorted(range(len(alive)), key=lambda i: (-float(strength[i]), alive[i]))
            uids = [alive[i] for i in order[: self.n_nodes]]
        self.uids = uids
        self._top = []
        said = sorted((hood.time_of(u), u) for u in uids)
        self._axis = ([ts for ts, _ in said] or [self._last],
                      [WIDTH_PX * k / max(1, len(said) - 1) for k in range(len(said))] or [0.0])
        self._positions = {}
        for ts, u in said:
            self._place(u, ts)
        self.view.set_graph([], [])
        self.go()
        self.view.fit()

    def _x(self, ts: float) -> float:
        """The time axis: the chosen turns evenly spaced in the order they were said (a
        busy day does not pile up), other times in between."""
        return round(float(np.interp(ts, *self._axis)), 2)

    def ticks(self) -> list[tuple[float, str]]:
        """The date ticks of the time axis: (x, date) for at most :data:`TICKS` evenly
        spaced places from the first chosen turn to the last, each labelled with the date
        (UTC) of that place; a date already ticked is not repeated."""
        times, xs = self._axis
        out: list[tuple[float, str]] = []
        for k in range(TICKS):
            x = xs[-1] * k / max(1, TICKS - 1)
            day = iso(float(np.interp(x, xs, times)), minutes=False)
            if day and all(day != d for _, d in out):
                out.append((round(x, 2), day))
        return out

    def _tick_nodes(self) -> list[dict[str, Any]]:
        y = (LANES / 2 + 0.6) * LANE_PX
        return [{"id": f"{TICK_PREFIX}{day}", "label": day, "shape": "square", "size": 3,
                 "x": x, "y": y, "rank": -1, "chosen": False,
                 "title": tooltip(day, "date (UTC) at this place of the time axis"),
                 "color": {"background": TICK_COLOUR, "border": TICK_COLOUR},
                 "font": {"color": "#555555"}} for x, day in self.ticks()]

    def _place(self, uid: str, ts: float) -> tuple[float, float]:
        """Where a turn stands: left to right by when it was said, in one of
        :data:`LANES` staggered lanes (so turns said close together do not overlap)."""
        if uid not in self._positions:
            x = self._x(ts)
            lane = len(self._positions) % LANES
            self._positions[uid] = (x, (lane - (LANES - 1) / 2) * LANE_PX)
        return self._positions[uid]

    # -- one time --------------------------------------------------------------------------
    def go(self, days: int | None = None) -> None:
        """Show the memory ``days`` from its newest message (default: the slider's value)."""
        if days is not None and days != self.days.value:
            self.days.value = int(days)  # the observer draws
            return
        t0 = time.perf_counter()
        when = self.now()
        self.date.value = (f'<span class="ak-caption"><b>{esc(iso(when))}</b> UTC · '
                           f"{self.days.value:+d} days</span>")
        g = StoreGraph(self.mem, now=when, communities=self._comm)
        top: list[str] = []
        if self.query.value.strip():
            try:
                self.trace = self.mem.recall(self.query.value.strip(), now=when, log=False)
            except AkashaError as err:
                self.status.value = note(str(err), error=True)
                return
            top = context_order(self.trace)[: self.k]
        self.entered = [u for u in top if u not in self._top]
        self.left = [u for u in self._top if u not in top]
        self._top = top
        shown = list(dict.fromkeys(self.uids + [u for u in top if u not in self.uids]))
        said = [u for u in shown if g.hood.time_of(u) <= when]
        rank = {u: i + 1 for i, u in enumerate(top)}
        nodes = []
        for u in sorted(said, key=lambda u: (g.hood.time_of(u), u)):
            n = g.node(u)
            n["x"], n["y"] = self._place(u, g.hood.time_of(u))
            n["label"] = f"#{rank[u]} " + short(self._text.get(u, ""), 8) if u in rank else ""
            if u in rank:
                n["color"] = {**n["color"], "border": RECALLED}
                n["borderWidth"] = 4
            nodes.append(n)
        nodes.append({"id": NOW_ID, "label": f"now {iso(when, minutes=False)}",
                      "shape": "triangleDown", "size": 9, "x": self._x(when),
                      "y": -(LANES / 2 + 0.6) * LANE_PX,
                      "rank": -2, "color": {"background": NOW_COLOUR, "border": NOW_COLOUR},
                      "font": {"color": NOW_COLOUR}})
        turns = nodes[:-1]
        nodes += self._tick_nodes()
        edges = [e for e in g.edges_among(said, per_node=4) if e["weight"] >= 0.01]
        self.view.set_graph(nodes, edges, fit=False)
        self.view.legend = [
            *turn_legend(turns, edges),
            *([legend_entry("ring", RECALLED, f"in the recall's top {self.k} at this time "
                                              "(#rank)")] if top else []),
            legend_entry("marker", NOW_COLOUR, "now: the slider's time"),
            legend_entry("marker", TICK_COLOUR, "date ticks: left to right in the order said"),
        ]
        strength = dict(zip(said, g.strength(said), strict=True))
        self._rows = [{"uid": u, "rank": rank.get(u), "said": iso(g.hood.time_of(u)),
                       "strength_eff": float(strength[u]), "text": short(self._text.get(u, ""),
                                                                         60)}
                      for u in sorted(said, key=lambda u: (rank.get(u, 10**6), -strength[u]))]
        self.last_ms = (time.perf_counter() - t0) * 1000.0
        mean = sum(strength.values()) / len(strength) if strength else 0.0
        chosen = set(self.uids)
        mine = sum(1 for u in said if u in chosen)
        extra = len(said) - mine
        line = (f"{mine} of the picture's {len(self.uids)} turns said by then"
                + (f" (+{extra} more recalled at this time)" if extra else "")
                + f" · mean strength {mean:.2f} · {len(edges)} edges above 0.01")
        if self.query.value.strip():
            line += f" · recall: {len(self.entered)} entered, {len(self.left)} left"
        self.view.caption = f"{iso(when)}: {line}"
        self.summary.value = (f'<div class="ak-caption">{esc(line)} <span class="ak-note">'
                              f"({self.last_ms:.0f} ms)</span></div>")
        self.detail.value = self._changes(g)
        self.table.value = frame_html(self.frame())
        self.labels.offer([(u, self._text.get(u, "")) for u in (top or said)])
        self.status.value = note("computed dry: decay at this time, nothing written")

    def _changes(self, g: StoreGraph) -> str:
        parts = []
        for title, colour, uids in (("entered the recall", RECALLED, self.entered),
                                    ("left the recall", "#d62728", self.left)):
            if uids:
                parts.append(f'<div style="border-left:4px solid {colour};padding-left:4px;'
                             f'margin:4px 0"><b>{esc(title)}</b>')
                parts += [f'<div class="ak-note">{esc(u)} · {esc(short(g.text(u), 50))}</div>'
                          for u in uids]
                parts.append("</div>")
        return "".join(parts) or note("no item entered or left since the last time shown")

    def frame(self) -> pd.DataFrame:
        """The turns shown at the slider's time: uid, rank in the recall (None: not in its
        top k), when it was said, decayed strength, text."""
        f = pd.DataFrame(self._rows, columns=["uid", "rank", "said", "strength_eff", "text"])
        f["rank"] = f["rank"].astype("Int64")
        return f
