"""RecallStepper — type a query (or pick one from the query log), then step through one
recall: seeds → RWR micrograph → graph_expand → settlement → three groups → write-back
(SPEC §4, §5, §8).

The recall runs once (``mem.recall(..., log=False)``, a dry run); every stage is a view of
the trace it returned (:func:`~.stages.stage_views`), so stepping back and forth recomputes
nothing. The write-back stage shows the plan ``mem.plan_writeback`` computes (a dry run) for
the chosen current node — before → after, nothing applied — and only the **Commit** button
writes, through ``mem.commit(trace, node)``.

A recall picked from the query log, or **Latest recall** (the agent's newest, on a served
store), is shown as it was made and delivered (``mem.logged_recall``), not recalled again:
the status line says whether it was written back, to which turn and by whom, and Commit is
off once it was — a recall is written back once. Recall re-runs its query at its time on
today's state: a separate dry run, labelled so.

>>> RecallStepper.__mro__[1].__name__
'VBox'
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import ipywidgets as W
import numpy as np
import pandas as pd

from ..config import PROFILES, Settings
from ..engine.trace import RecallTrace
from ..errors import AkashaError
from ..text.timewords import parse_time
from ._data import StoreGraph, turn_legend
from ._html import STYLE, esc, frame_html, iso, kv_html, messages_html, note, short, stamp
from .canvas import DEFAULT_CAP, GraphCanvas, legend_entry
from .follow import Follow
from .stages import STAGES, TITLES, StageView, all_uids, stage_views

if TYPE_CHECKING:
    from ..engine.writeback import WritebackPlan
    from ..protocol import MemoryAPI

__all__ = ["EDGE_COLOURS", "HALO", "RING_COLOURS", "STAGE_LABELS", "RecallStepper", "labelled",
           "stage_legend", "style_stage"]

log = logging.getLogger(__name__)

RING_COLOURS = {
    "Dense": "#1f77b4", "Dense(FB)": "#9e9e9e", "Dense+FTS": "#7b3fbf",
    "Dense(FB)+FTS": "#c9a227", "FTS": "#ff7f0e",
    "BlackHole": "#000000", "seed": "#1f77b4", "graph_seed": "#17becf", "Graph": "#8c564b",
    "Bridge": "#e377c2", "candidate": "#1f77b4", "activation": "#2ca02c",
    "ripple": "#98df8a", "floor": "#1f77b4", "suppressed": "#9e9e9e", "current": "#d62728",
}
"""Ring (border) colour per seed source / role / group."""

EDGE_COLOURS = {
    "transition": "#f2a65a", "graph": "#17becf", "path": "#7f7f7f", "bridge": "#e377c2",
    "causal": "#d62728", "anti": "#ff9896", "pair": "#2ca02c",
}
"""Edge colour per kind."""

HALO = "rgba(255,150,0,0.85)"
"""Glow (shadow) of a node by its energy or score at a stage."""

UNDIRECTED = frozenset({"pair"})
"""Edge kinds drawn as one line without arrowheads (a pair A↔B is written both ways)."""

FADED = {"color": {"background": "#eeeeee", "border": "#dddddd"},
         "font": {"color": "#bbbbbb"}, "borderWidth": 1, "shadow": {"enabled": False}}


STAGE_LABELS = 12
"""Most text labels a stage shows on the graph (its most important nodes; hover shows all)."""


def _ranked(view: StageView) -> list[str]:
    """The nodes a stage touched, most important first (size, then halo, then id)."""
    return sorted(set(view.focus) | set(view.rings),
                  key=lambda u: (-view.size.get(u, 0.0), -view.halo.get(u, 0.0), u))


def labelled(views: Sequence[StageView], *, labels: int = STAGE_LABELS) -> set[str]:
    """Every node some stage labels (the view reserves room for these labels once, so one
    zoom serves every stage).

    >>> labelled([StageView("x", "x", "", focus=["b", "a"], halo={"a": 1.0})], labels=1)
    {'a'}
    """
    return {u for v in views for u in _ranked(v)[:labels]}


def style_stage(base: dict[str, dict[str, Any]], view: StageView, *,
                labels: int = STAGE_LABELS) -> tuple[list[dict], list[dict]]:
    """vis-network node and edge dicts for one stage: nodes the stage did not touch are
    faded; touched ones keep their community colour, get a ring (border) by role and an
    orange halo (shadow) by energy/score; edges are the ones the stage used. Only the
    ``labels`` brightest touched nodes keep their text label, ranked (``rank``) by
    importance so the view hides the lesser of two labels that would overlap (hover shows
    every node's). Positions come from ``base`` unchanged.

    >>> v = StageView("x", "x", "", focus=["a"], rings={"a": "FTS"}, halo={"a": 1.0},
    ...               edges=[{"from": "a", "to": "b", "kind": "graph", "value": 1.0}])
    >>> nodes, edges = style_stage({"a": {"id": "a"}, "b": {"id": "b"}}, v)
    >>> nodes[0]["color"]["border"], nodes[0]["shadow"]["size"], nodes[1]["borderWidth"]
    ('#ff7f0e', 18.0, 1)
    >>> edges[0]["color"]["color"], edges[0]["width"]
    ('#17becf', 3.0)
    """
    focus = set(view.focus)
    ranked = _ranked(view)
    rank = {u: k for k, u in enumerate(ranked)}
    named = set(ranked[:labels])
    nodes = []
    for uid, b in base.items():
        n = dict(b)
        n["rank"] = rank.get(uid, len(rank))
        if uid not in named:
            n["label"] = ""
        if uid not in focus and uid not in view.rings:
            n.update(FADED)
            n["size"] = 5
            nodes.append(n)
            continue
        colour = dict(n.get("color") or {})
        ring = view.rings.get(uid)
        if ring is not None:
            colour["border"] = RING_COLOURS.get(ring, "#333333")
            n["borderWidth"] = 4 if ring == "current" else 3
        else:
            n["borderWidth"] = 1
        n["color"] = colour
        n["font"] = {"color": "#222222"}
        h = view.halo.get(uid, 0.0)
        n["shadow"] = ({"enabled": True, "color": HALO, "size": round(
            4.0 + 14.0 * h, 2), "x": 0, "y": 0} if h > 0 else {"enabled": False})
        if uid in view.size:
            n["size"] = round(7.0 + 11.0 * view.size[uid], 2)
        nodes.append(n)
    edges = []
    seen: set[tuple[str, str, str]] = set()
    for k, e in enumerate(view.edges):
        if e["from"] not in base or e["to"] not in base:
            continue
        undirected = e["kind"] in UNDIRECTED
        if undirected:  # one line per pair, no arrowheads
            key = (e["kind"], *sorted((e["from"], e["to"])))
            if key in seen:
                continue
            seen.add(key)
        title = e.get("title") or []
        d = {"id": f"{view.name}:{k}", "from": e["from"], "to": e["to"],
             "color": {"color": EDGE_COLOURS.get(e["kind"], "#999999"), "opacity": 0.9},
             "width": round(0.75 + 2.25 * float(e.get("value", 0.5)), 2),
             "dashes": bool(e.get("new", False)),
             "title": "<br>".join(esc(x) for x in title)}
        if undirected:
            d["arrows"] = {"to": {"enabled": False}}
        edges.append(d)
    return nodes, edges


def _legend(view: StageView) -> str:
    keys = sorted(set(view.rings.values()))
    kinds = sorted({e["kind"] for e in view.edges})
    parts = [f'<span style="border:3px solid {RING_COLOURS.get(k, "#333")};border-radius:8px;'
             f'padding:0 5px;margin-right:4px">{esc(k)}</span>' for k in keys]
    parts += [f'<span style="border-bottom:3px solid {EDGE_COLOURS.get(k, "#999")};'
              f'margin-right:6px">{esc(k)} edge</span>' for k in kinds]
    return f'<div class="ak-note">{"".join(parts)}</div>'


def stage_legend(view: StageView, nodes: Sequence[dict[str, Any]]) -> list[dict[str, str]]:
    """The graph view's legend for one stage drawn as ``nodes`` (:func:`style_stage`): the
    community fills of the touched nodes, the faded rest, each ring and edge colour the
    stage uses (one entry per colour), the halo and what size means."""
    faded = FADED["color"]["background"]  # type: ignore[index]
    out = turn_legend([n for n in nodes if n.get("color", {}).get("background") != faded],
                      size=("size = score at this stage" if view.size
                            else "size = strength (decayed, at the recall's time)"))
    if any(n.get("color", {}).get("background") == faded for n in nodes):
        out.append(legend_entry("fill", faded, "not touched by this stage"))
    rings: dict[str, list[str]] = {}
    for ring in sorted(set(view.rings.values())):
        rings.setdefault(RING_COLOURS.get(ring, "#333333"), []).append(ring)
    out += [legend_entry("ring", c, " / ".join(names) + " (ring)") for c, names in rings.items()]
    if view.halo:
        out.append(legend_entry("halo", HALO, "halo = energy or score (brighter = more)"))
    kinds: dict[str, list[str]] = {}
    for kind in sorted({e["kind"] for e in view.edges}):
        kinds.setdefault(EDGE_COLOURS.get(kind, "#999999"), []).append(kind)
    out += [legend_entry("edge", c, " / ".join(names) + " edge") for c, names in kinds.items()]
    return out


class RecallStepper(W.VBox):
    """Step through one recall of ``mem`` (see the module docstring).

    Parameters
    ----------
    mem
        An open :class:`~akasha_explorer.memory.Memory` (read-only is fine; Commit is then
        disabled).
    query
        A query to recall right away.
    now
        Time of the recall: ``"last"`` (the store's newest message, default), ``"now"``,
        ISO 8601 or epoch seconds.
    settings
        Recall with other constants (an experiment; the write-back uses the store's).
        The **profile** picker does the same with a named profile (v1, the V1-faithful
        engine; v2, the default): a dry run only — Commit needs the store's own profile.

    Public parts for scripting and tests: :attr:`query`, :attr:`when`, :attr:`run_button`,
    :attr:`back_button`, :attr:`next_button`, :attr:`stage`, :attr:`view` (the
    :class:`GraphCanvas`), :attr:`current`, :attr:`reinforce`, :attr:`commit_button`,
    :attr:`trace`, :attr:`views`, :meth:`frame`, :meth:`stage_frame`.
    """

    def __init__(self, mem: MemoryAPI, *, query: str = "", now: str | float = "last",
                 settings: Settings | None = None, cap: int = DEFAULT_CAP) -> None:
        self.mem = mem
        self.settings = settings
        self.trace: RecallTrace | None = None
        self.views: list[StageView] = []
        self.index = 0
        self.committed: WritebackPlan | None = None
        self._data: StoreGraph | None = None
        self._lines: dict[str, str] = {}  # node uid → its messages as the context shows them
        self._base: dict[str, dict[str, Any]] = {}
        self._busy = False
        self._exact: tuple[str, float] | None = None  # the now box's text, the time it means

        self.query = W.Text(value=query, placeholder="ask the memory, e.g. 最近手指的伤怎么样了",
                            description="query", layout=W.Layout(width="60%"))
        self.run_button = W.Button(description="Recall (dry run)", button_style="primary",
                                   icon="search")
        self.log_pick = W.Dropdown(description="query log", layout=W.Layout(width="60%"))
        self.when = W.Text(value=str(now), description="now",
                           tooltip="'last' = newest message; 'now'; ISO 8601; epoch seconds",
                           layout=W.Layout(width="30%"))
        own = mem.settings.profile_name()[0]
        self.profile = W.Dropdown(
            options=[(f"store's own ({own})", "")] + [(f"{p} (dry run)", p) for p in PROFILES
                                                      if p != own],
            value="", description="profile", layout=W.Layout(width="30%"),
            tooltip="recall under another settings profile, as a dry run")
        self.back_button = W.Button(description="back", icon="arrow-left", disabled=True)
        self.next_button = W.Button(description="next", icon="arrow-right", disabled=True)
        self.stage = W.ToggleButtons(options=[(TITLES[s], s) for s in STAGES], value=STAGES[0],
                                     style={"button_width": "auto"}, disabled=True)
        self.caption = W.HTML()
        self.view = GraphCanvas(height="460px", cap=cap)
        self.detail = W.HTML(layout=W.Layout(width="34%", max_height="520px",
                                             overflow="auto"))
        self.detail.add_class("ak-detail")
        self.table_pick = W.Dropdown(description="table")
        self.table = W.HTML(layout=W.Layout(width="100%"))
        self.table.add_class("ak-wide")
        self.current = W.Dropdown(description="current node", layout=W.Layout(width="55%"),
                                  style={"description_width": "initial"})
        self.reinforce = W.Checkbox(value=False, description="reinforce",
                                    layout=W.Layout(width="auto"))
        self.commit_button = W.Button(description="Commit write-back", button_style="danger",
                                      icon="save", disabled=True,
                                      layout=W.Layout(width="auto", flex="0 0 auto"))
        self.status = W.HTML()
        self.why_box = W.Text(placeholder="any turn id, e.g. 2026-09-20-evening:2",
                              description="why not", layout=W.Layout(width="60%"))
        self.why_button = W.Button(description="Why not this turn?", icon="question",
                                   layout=W.Layout(width="auto"))
        self.why_button.on_click(lambda _b: self.why_not(self.why_box.value.strip()))
        self.detail.value = note("click a node to read its messages and every term of its "
                                 "score; ctrl-click selects several")

        self.run_button.on_click(lambda _b: self.run())
        self.back_button.on_click(lambda _b: self.step(-1))
        self.next_button.on_click(lambda _b: self.step(1))
        self.commit_button.on_click(lambda _b: self.commit())
        self.stage.observe(self._on_stage, names="value")
        self.table_pick.observe(lambda _c: self._show_table(), names="value")
        self.current.observe(self._on_current, names="value")
        self.reinforce.observe(self._on_current, names="value")
        self.log_pick.observe(self._on_log_pick, names="value")
        self.latest_button = W.Button(description="Latest recall", icon="history",
                                      tooltip="step through the newest recall of the query log")
        self.latest_button.on_click(lambda _b: self.latest())
        self.follow = Follow(mem, self.latest, description="follow the agent's recalls")
        self.profile.observe(self._on_profile, names="value")
        self.view.on_select(self._on_select)
        self.view.layout = W.Layout(width="65%")
        self.refresh_query_log()

        super().__init__([
            W.HTML(STYLE),
            W.HBox([self.query, self.run_button]),
            W.HBox([self.log_pick, self.when, self.profile]),
            W.HBox([self.latest_button] + ([self.follow.box] if self.follow.box else [])),
            W.HBox([self.back_button, self.stage, self.next_button]),
            self.caption,
            W.HBox([self.view, self.detail]),
            W.HBox([self.why_box, self.why_button]),
            self.table_pick, self.table,
            W.HBox([self.current, self.reinforce, self.commit_button]),
            self.status,
        ])
        self.add_class("ak-panel")
        if mem.read_only:
            self.commit_button.tooltip = "the store is open read-only"
        if query:
            self.run()
        else:
            self.status.value = note("type a query (or pick one from the query log), then "
                                     "press Recall; nothing is written until you press Commit")

    # -- running ---------------------------------------------------------------------------
    def refresh_query_log(self) -> None:
        """Reload the query log into the picker."""
        try:
            rows = sorted(self.mem.query_log(limit=200),
                          key=lambda r: (-(r["ts"] or 0.0), r["uid"]))  # newest first
        except AkashaError as err:  # an old store without a query log
            log.warning("cannot read the query log: %s", err)
            rows = []
        opts: list[tuple[str, Any]] = [(f"— {len(rows)} logged queries —", "")]
        opts += [(f"{iso(r['ts'])} · {short(r['query'], 60)}"
                  + (" · written back" if r.get("committed") else ""), r["uid"]) for r in rows]
        self.log_pick.options = opts
        self.log_pick.value = ""

    def latest(self) -> RecallTrace | None:
        """Step through the newest recall in the query log — with a served store, the one
        the agent just made — as it was made and delivered (:meth:`show_logged`)."""
        self.refresh_query_log()
        rows = self.mem.query_log(limit=1)
        if not rows:
            self.status.value = note("the query log is empty: nothing has been recalled yet",
                                     error=True)
            return None
        return self.show_logged(rows[-1]["uid"])

    def show_logged(self, log_uid: str) -> RecallTrace | None:
        """Step through the logged recall ``log_uid`` as it was made and delivered
        (``mem.logged_recall``), not recalled again: marked written back or not, and
        committable only when it was not. Its query and time go in the boxes, so Recall
        re-runs it on today's state — a separate dry run, labelled so."""
        try:
            trace = self.mem.logged_recall(log_uid)
        except AkashaError as err:
            self.status.value = note(f"{err} — press Recall to re-run it on today's state "
                                     "(a dry run)", error=True)
            rows = [r for r in self.mem.query_log() if r["uid"] == log_uid]
            if rows:
                self.query.value = rows[0]["query"]
                self._set_when(rows[0]["ts"])
            return None
        self.query.value = trace.query
        self._set_when(trace.now)
        self.settings = None
        done = trace.written_back or {}
        if done.get("committed"):
            who = (f" to {done['node']}" if done.get("node") else "") + \
                  (f" by {done['by']}" if done.get("by") else "") + \
                  (f" at {iso(done['at'])}" if done.get("at") else "")
            said = (f"the recall {log_uid} as it was made at {iso(trace.now)}: written back"
                    f"{who} — it cannot be written again; Recall re-runs it on today's "
                    "state (a dry run)")
        else:
            said = (f"the recall {log_uid} as it was made at {iso(trace.now)}: not written "
                    "back — Commit writes it once; Recall re-runs it on today's state "
                    "(a dry run)")
        self._show(trace, said, committable=not done.get("committed"))
        return trace

    def _on_log_pick(self, change: dict[str, Any]) -> None:
        if change["new"]:
            self.show_logged(change["new"])

    def _on_profile(self, change: dict[str, Any]) -> None:
        """Another profile: the store's own settings moved onto it (what the store set
        apart from its profile kept), then recall again if there is a query."""
        name = change["new"]
        if name:
            self.settings = Settings.profile(name, **self.mem.settings.profile_name()[1])
        else:
            self.settings = None
        if self.query.value.strip():
            self.run()

    def run(self, query: str | None = None, now: str | float | None = None) -> RecallTrace | None:
        """Recall ``query`` (default: the query box) at ``now`` (default: the now box) and show
        stage 1. Returns the trace, or None when the input was refused (see :attr:`status`)."""
        if query is not None:
            self.query.value = query
        if now is not None:
            if isinstance(now, int | float):
                self._set_when(float(now))
            else:
                self.when.value = str(now)
        text = self.query.value.strip()
        if not text:
            self.status.value = note("type a query first", error=True)
            return None
        try:
            when = self._parse_now(self.when.value)
            trace = self.mem.recall(text, now=when, settings=self.settings, log=False)
        except AkashaError as err:
            self.status.value = note(str(err), error=True)
            return None
        other = self.settings is not None and self.settings != self.mem.settings
        profile = (self.settings or self.mem.settings).profile_name()[0]
        self._show(trace,
                   f"recalled {text!r} at {iso(trace.now)} over {trace.n_visible} visible "
                   f"nodes and {trace.n_edges} edges with profile {profile} — a dry run: "
                   "nothing was written"
                   + ("; other settings than the store's, so Commit is off" if other else ""),
                   committable=not other)
        return trace

    def _show(self, trace: RecallTrace, said: str, *, committable: bool) -> None:
        """Show ``trace`` from stage 1, ``said`` in the status line; Commit is on when
        ``committable`` (and the store writable and the plan not empty)."""
        self.trace = trace
        written = trace.writeback if trace.writeback is not None and \
            trace.writeback.applied else None
        self.committed = written
        self._data = StoreGraph(self.mem, now=trace.now)
        self._lines = self._data.hood.lines(all_uids(trace))
        self._fill_current()
        if written is not None and written.current_uid in {v for _k, v in self.current.options}:
            self._busy = True
            try:
                self.current.value = written.current_uid
            finally:
                self._busy = False
        self._plan()
        self._layout()
        self.status.value = note(said + self._missed())
        self.commit_button.disabled = (self.mem.read_only or written is not None
                                       or trace.writeback is None or not committable)
        self.stage.disabled = False
        self.goto(STAGES[0])

    def _set_when(self, ts: float) -> None:
        """Put time ``ts`` in the now box to the second (what a person reads); the box
        still means ``ts`` exactly while it shows that text."""
        shown = stamp(float(int(ts)))
        self._exact = (shown, float(ts))
        self.when.value = shown

    def _parse_now(self, value: str) -> float:
        if self._exact is not None and value.strip() == self._exact[0]:
            return self._exact[1]
        got = parse_time(value.strip() or "last", self.mem.last_ts)
        return _wall() if got is None else got

    def _fill_current(self) -> None:
        """Candidate current nodes: the newest nodes at or before the recall's time."""
        assert self.trace is not None
        assert self._data is not None
        newest = self._data.hood.newest(self.trace.now, 30)
        opts = [(f"{u} · {short(self._data.text(u), 40)}", u) for u in newest]
        self._busy = True
        try:
            self.current.options = opts
            self.current.value = opts[0][1] if opts else None
        finally:
            self._busy = False

    def _plan(self) -> None:
        """The dry-run write-back plan for the chosen current node (nothing applied)."""
        t = self.trace
        if t is None:
            return
        if self.committed is not None:
            t.writeback = self.committed
        elif self.current.value is None or not t.activation.uids:
            t.writeback = None
        else:
            self.mem.plan_writeback(t, self.current.value, reinforce=self.reinforce.value)
        plan = [] if t.writeback is None else list(t.writeback.nodes.uids)
        missing = [u for u in plan if u not in self._lines]
        if missing and self._data is not None:
            self._lines.update(self._data.hood.lines(missing))
        # every turn reads as the agent's context block would show it (a withheld message
        # as its marker), sent or not; a turn the memory no longer holds reads ''
        self.views = stage_views(t, lambda u: self._lines.get(u, ""))

    def _on_current(self, _change: dict[str, Any]) -> None:
        if self._busy or self.trace is None or self.committed is not None:
            return
        self._plan()
        self._layout(keep=True)
        self._render()

    def _layout(self, *, keep: bool = False) -> None:
        """Lay out every node any stage touches once, so stepping never moves a node, and
        zoom once: the view fits every node with room for every label some stage shows,
        and no stage zooms again."""
        assert self.trace is not None
        assert self._data is not None
        uids = all_uids(self.trace)[: self.view.cap]
        old = {n["id"]: (n["x"], n["y"]) for n in self.view.nodes} if keep else {}
        named = labelled(self.views)
        self._base = {}
        for u in uids:
            d = self._data.node(u)
            if u in named:
                d["fit_label"] = d["label"]
            else:
                d["label"] = ""
            if u in old:
                d["x"], d["y"] = old[u]
            self._base[u] = d
        # the write-back's edges join every activated turn to every other: as springs they
        # would pull those turns into one knot, so only the recall's own edges lay out
        layout_edges = [{"from": e["from"], "to": e["to"], "weight": 0.5 + e.get("value", 0.5)}
                        for v in self.views if v.name != "writeback" for e in v.edges]
        self.view.set_graph(list(self._base.values()), layout_edges, relayout=not keep,
                            fit=not keep)
        for n in self.view.nodes:
            self._base[n["id"]]["x"], self._base[n["id"]]["y"] = n["x"], n["y"]

    # -- stepping --------------------------------------------------------------------------
    def goto(self, name: str) -> None:
        """Show stage ``name`` (one of :data:`~.stages.STAGES`)."""
        if name not in STAGES:
            raise ValueError(f"unknown stage {name!r}; stages: {', '.join(STAGES)}")
        if self.stage.value != name:
            self.stage.value = name  # _on_stage renders
        else:
            self.index = STAGES.index(name)
            self._render()

    def step(self, delta: int) -> None:
        """Move ``delta`` stages (clamped to the first / last)."""
        k = min(len(STAGES) - 1, max(0, STAGES.index(self.stage.value) + delta))
        self.goto(STAGES[k])

    def _on_stage(self, change: dict[str, Any]) -> None:
        self.index = STAGES.index(change["new"])
        self._render()

    def _render(self) -> None:
        if self.trace is None or not self.views:
            self.caption.value = note("no recall yet")
            return
        v = self.views[self.index]
        nodes, edges = style_stage(self._base, v)
        self.view.set_graph(nodes, edges, fit=False)  # one zoom for every stage (_layout)
        self.view.caption = f"{v.title}: {len(v.focus)} nodes touched"
        self.view.legend = stage_legend(v, nodes)
        self.caption.value = (f'<div class="ak-caption">{esc(v.caption)}</div>' + _legend(v))
        self.back_button.disabled = self.index == 0
        self.next_button.disabled = self.index == len(STAGES) - 1
        names = [t for t, _ in v.tables]
        self._busy = True
        try:
            self.table_pick.options = names
            self.table_pick.value = names[0] if names else None
        finally:
            self._busy = False
        self._show_table()

    def _show_table(self) -> None:
        if self._busy or not self.views:
            return
        v = self.views[self.index]
        tables = dict(v.tables)
        df = tables.get(self.table_pick.value) if self.table_pick.value else None
        if df is None:
            self.table.value = note("this stage has no table")
            return
        self.table.value = frame_html(df, highlight=self.view.selected)

    def frame(self) -> pd.DataFrame:
        """The table on screen (the current stage's chosen table) as a DataFrame."""
        if not self.views:
            return pd.DataFrame()
        tables = dict(self.views[self.index].tables)
        return tables.get(self.table_pick.value, self.views[self.index].frame).copy()

    def stage_frame(self, stage: str, table: str | None = None) -> pd.DataFrame:
        """A table of any stage (default: its main table) without changing what is shown.

        ``stage`` is one of :data:`~.stages.STAGES`; ``table`` one of that stage's table
        titles (the "table" picker lists them)."""
        if not self.views:
            raise ValueError("no recall yet: call run() or press Recall first")
        view = self.views[STAGES.index(stage)]
        if table is None:
            return view.frame.copy()
        tables = dict(view.tables)
        if table not in tables:
            raise ValueError(f"stage {stage!r} has no table {table!r}; it has "
                             f"{', '.join(tables) or 'none'}")
        return tables[table].copy()

    # -- why (not) this turn -----------------------------------------------------------------
    def why_not(self, uid: str) -> dict[str, Any] | None:
        """Show where turn ``uid`` fell out of this recall (``mem.why_not``) in the side
        panel, with its messages; returns the answer (None when refused)."""
        if self.trace is None:
            self.status.value = note("recall first, then ask about a turn", error=True)
            return None
        try:
            got = self.mem.why_not(self.trace, uid)
        except AkashaError as err:
            self.detail.value = note(str(err), error=True)
            return None
        try:
            msgs = messages_html(self.mem.messages(uid))
        except AkashaError as err:
            msgs = note(str(err), error=True)
        self.detail.value = f"<b>{esc(uid)}</b>" + _why_html(got) + msgs
        return got

    def _missed(self) -> str:
        """For each turn labelled relevant to this query that the first block lacks: where
        it was lost (said without being asked)."""
        t = self.trace
        if t is None:
            return ""
        try:
            wanted = [lab.node for lab in self.mem.labels(t.query) if lab.relevant]
            first = set(t.first_block().uids)
            lost = [self.mem.why_not(t, u) for u in wanted if u not in first]
        except AkashaError as err:
            log.warning("cannot check the labelled turns: %s", err)
            return ""
        return "".join(f" · labelled turn {w['uid']} missed: lost at {w['stage']} "
                       f"({w['reason']})" for w in lost)

    # -- selection -------------------------------------------------------------------------
    def _on_select(self, ids: list[str]) -> None:
        self._show_table()
        if not ids or self.trace is None:
            self.detail.value = note("click a node to see every term for it")
            return
        uid = ids[0]
        ex = self.trace.explain(uid)
        pairs = [(k, v) for k, v in ex.items() if v is not None and k != "uid"
                 and not (isinstance(v, float) and np.isnan(v))]
        try:
            msgs = messages_html(self.mem.messages(uid))
        except AkashaError as err:
            msgs = note(str(err), error=True)
        try:
            why = _why_html(self.mem.why_not(self.trace, uid))
        except AkashaError as err:
            why = note(str(err), error=True)
        more = f" (+{len(ids) - 1} more selected)" if len(ids) > 1 else ""
        self.detail.value = (f"<b>{esc(uid)}</b>{esc(more)}" + why + msgs + kv_html(pairs))

    # -- commit ----------------------------------------------------------------------------
    def commit(self) -> Any:
        """Write the recall back with the chosen current node (``mem.commit``); the
        write-back stage then shows the applied plan. Returns the plan (None if refused)."""
        t = self.trace
        if t is None or self.committed is not None:
            self.status.value = note("nothing to commit: recall first (a trace commits once)",
                                     error=True)
            return None
        node = self.current.value
        if node is None:
            self.status.value = note("choose the current node first", error=True)
            return None
        if self.settings is not None and self.settings != self.mem.settings:
            self.status.value = note("this recall ran with other settings than the store's "
                                     "(a dry run); pick the store's own profile to commit",
                                     error=True)
            return None
        try:
            plan = self.mem.commit(t, node, reinforce=self.reinforce.value)
        except AkashaError as err:
            self.status.value = note(str(err), error=True)
            return None
        self.committed = plan
        self.commit_button.disabled = True
        self._plan()
        if STAGES[self.index] == "writeback":
            self._render()
        else:
            self.goto("writeback")
        self.status.value = note(
            f"committed: {len(plan.nodes.uids)} nodes and {len(plan.edges.kind)} edges "
            f"written back with current node {node} (journaled; recall again to see the "
            "new state)")
        return plan


def _why_html(got: dict[str, Any]) -> str:
    """A ``why_not`` answer as HTML: the stage and reason, then its numbers."""
    nums = [(k, v) for k, v in got.get("numbers", {}).items()
            if not (isinstance(v, float) and np.isnan(v))]
    return (f"<div class='ak-why'><b>{esc(got['stage'])}</b>: {esc(got['reason'])}</div>"
            + kv_html(nums))


def _wall() -> float:
    import time
    return time.time()
