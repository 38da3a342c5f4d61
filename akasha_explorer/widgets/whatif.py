"""WhatIfPanel — "what would this recall be if…": move one of the constants that matter
most (SPEC §3–4), or switch the settings profile, and the recall re-settles as a dry run;
the panel draws the difference from the baseline — items that entered, left or moved,
and the score terms that changed — and, on request, how the change moves recall@k and MRR
on the store's labelled queries (``mem.evaluate``). The picture stands the items in rank
order, best on top — the ones that left the top k to the left, at their old rank — with the
border colour saying what changed and the co-activation edges between them.

Every recall here is ``mem.recall(..., settings=…, log=False)``: nothing is written. The
one write is **Make these the store's settings**, which calls ``mem.migrate`` (the
deliberate way a store changes its constants); labels are written by the label bar. A
slider offers only values inside its setting's range (``akasha settings``); a value
outside it, given to :meth:`WhatIfPanel.set`, is refused with the setting's one-line
message in the panel's status, and nothing moves.

>>> WhatIfPanel.__mro__[1].__name__
'VBox'
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import ipywidgets as W
import pandas as pd

from ..analysis.whatif import WHATIF_SETTINGS, WhatIfDiff, changed_settings, diff_traces
from ..config import DAY, PROFILES, Settings, setting_problem
from ..errors import AkashaError
from ..ranges import Range
from ._data import StoreGraph
from ._html import STYLE, esc, frame_html, iso, note, short
from ._inputs import read_query
from .canvas import GraphCanvas
from .labelbar import LabelBar

if TYPE_CHECKING:
    from ..engine.trace import RecallTrace
    from ..protocol import MemoryAPI

__all__ = ["CHANGE_COLOURS", "CONTROLS", "LEFT_X", "ROW_PX", "UNITS", "WHATIF_METHODS",
           "WhatIfPanel", "slider_bounds"]

log = logging.getLogger(__name__)

CONTROLS: dict[str, tuple[float, float, float, float, str]] = {
    "STRENGTH_TAU": (0.5, 60.0, 0.5, DAY, "days"),
    "EDGE_TAU": (1.0, 120.0, 1.0, DAY, "days"),
    "RESOURCE_TAU": (1.0, 240.0, 1.0, 60.0, "min"),
    "DENSE_SEED_MIN": (0.3, 0.95, 0.005, 1.0, ""),
    "FTS_MIN_IDF": (0.0, 8.0, 0.1, 1.0, ""),
    "FUSION_DENSE_WEIGHT": (0.0, 2.0, 0.05, 1.0, ""),
    "CONTEXT_NEIGHBOR": (0.0, 1.0, 0.05, 1.0, ""),
    "TIME_PRIOR": (0.0, 2.0, 0.05, 1.0, ""),
    "CROSS_BOOST": (0.0, 100.0, 1.0, 1.0, ""),
    "RWR_STEPS": (0, 6, 1, 1.0, ""),
    "RWR_ALPHA": (0.05, 0.95, 0.05, 1.0, ""),
    "GRAPH_LIMIT": (0, 24, 1, 1.0, ""),
    "ACTIVATION_THRESHOLD": (0.0, 1.0, 0.01, 1.0, ""),
    "ACTIVATION_K": (1, 24, 1, 1.0, ""),
}
"""Per numeric constant of :data:`~akasha_explorer.analysis.whatif.WHATIF_SETTINGS`: slider
minimum, maximum, step, the unit it is shown in (seconds per unit) and the unit's name.
The switches (``RELEVANCE_FLOOR``, ``USE_SALIENCE``) are check boxes. A slider never goes
beyond its setting's range (:func:`slider_bounds`)."""

UNITS = {k: (scale, unit) for k, (_lo, _hi, _step, scale, unit) in CONTROLS.items() if unit}
"""The controls shown in a unit of their own (days, minutes): summaries say them so."""


def slider_bounds(name: str) -> tuple[float, float]:
    """The slider's minimum and maximum for setting ``name``, in the unit it shows:
    :data:`CONTROLS`' bounds narrowed to the setting's range (an open end one step inside).

    >>> slider_bounds("EDGE_TAU"), slider_bounds("RWR_ALPHA")
    ((1.0, 120.0), (0.05, 0.95))
    """
    lo, hi, step, unit, _ = CONTROLS[name]
    valid = Settings.__dataclass_fields__[name].metadata["valid"]
    assert isinstance(valid, Range), name
    a, b = valid.inside(lo * unit, hi * unit, step * unit)
    return a / unit, b / unit

CHANGE_COLOURS = {"entered": "#2ca02c", "left": "#d62728", "up": "#ff7f0e", "down": "#1f77b4",
                  "same": "#9e9e9e"}
"""Ring colour per change of an item."""

ROW_PX = 46.0
"""Vertical distance between two ranks in the picture (items stand in rank order)."""

LEFT_X = 320.0
"""How far left the items that left the top k stand (at their old rank)."""

WHATIF_METHODS = ("context", "akasha", "dense", "bm25")
"""Methods the panel scores on the labelled set before and after a change — fewer than
``akasha eval``'s :data:`~akasha_explorer.analysis.methods.EVAL_METHODS` (no ``rrf``, no
``ppr``): once the set is scored, every run of a change scores it again."""


class WhatIfPanel(W.VBox):
    """Change constants and watch one recall re-settle (see the module docstring).

    Parameters
    ----------
    mem
        An open :class:`~akasha_explorer.memory.Memory` or a served store
        (``ak.connect(url)``).
    query
        A query to recall right away.
    now
        Time of the recall: ``"last"`` (default), ``"now"``, ISO 8601 or epoch seconds.
    k
        How many items of what the agent receives (the context order) are compared.

    Public parts for scripting and tests: :attr:`query`, :attr:`when`, :attr:`run_button`,
    :attr:`profile`, :attr:`order`, :attr:`controls` (setting name -> widget), :attr:`reset_button`,
    :attr:`score_button`, :attr:`apply_button`, :attr:`view`, :attr:`diff`,
    :attr:`baseline`, :attr:`variant`, :attr:`last_ms`, :attr:`labels`; :meth:`run`,
    :meth:`set`, :meth:`settings`, :meth:`score`, :meth:`frame`.
    """

    def __init__(self, mem: MemoryAPI, *, query: str = "", now: str | float = "last",
                 k: int = 10) -> None:
        self.mem = mem
        self.k = int(k)
        self.baseline: RecallTrace | None = None
        self.variant: RecallTrace | None = None
        self.diff: WhatIfDiff | None = None
        self.base_settings: Settings = mem.settings
        self.last_ms = 0.0
        self.runs = 0
        self.scores: pd.DataFrame | None = None
        self._base_eval: dict[str, Any] | None = None
        self._graph: StoreGraph | None = None
        self._nodes: dict[str, dict[str, Any]] = {}
        self._edges: dict[frozenset[str], list[dict[str, Any]]] = {}
        self._busy = False
        self._extent: tuple[bool, int] = (False, 0)

        self.query = W.Text(value=query, placeholder="a query, e.g. 阿岚的生日是哪天",
                            description="query", layout=W.Layout(width="55%"))
        self.when = W.Text(value=str(now), description="now", layout=W.Layout(width="25%"),
                           tooltip="'last' = newest message; 'now'; ISO 8601; epoch seconds")
        self.run_button = W.Button(description="Recall (dry run)", button_style="primary",
                                   icon="search")
        own = mem.settings.profile_name()[0]
        self.profile = W.Dropdown(
            options=[(f"store's own ({own})", "")] + [(p, p) for p in PROFILES if p != own],
            value="", description="profile", layout=W.Layout(width="25%"),
            tooltip="the baseline's settings profile (a dry run)")
        self.order = W.Dropdown(options=[("akasha ranking", "akasha"),
                                         ("what the agent receives", "context")],
                                value="akasha", description="compare",
                                layout=W.Layout(width="30%"),
                                tooltip="Akasha's candidates by final score, or the context "
                                        "order (led by the fused first block)")
        self.reset_button = W.Button(description="reset to baseline", icon="undo")
        self.score_button = W.Button(description="score on labelled queries", icon="check",
                                     layout=W.Layout(width="auto"),
                                     tooltip="recall@k and MRR of the labelled set, baseline "
                                             "vs this change (mem.evaluate; a dry run)")
        self.apply_button = W.Button(description="Make these the store's settings",
                                     button_style="danger", icon="save", disabled=True,
                                     layout=W.Layout(width="auto"),
                                     tooltip="mem.migrate: the store keeps these constants")
        self.controls: dict[str, W.ValueWidget] = {}
        for name in WHATIF_SETTINGS:
            self.controls[name] = self._control(name)
        self.summary = W.HTML()
        self.view = GraphCanvas(height="420px")
        self.view.layout = W.Layout(width="62%")
        self.detail = W.HTML(layout=W.Layout(width="36%", max_height="440px", overflow="auto"))
        self.table = W.HTML(layout=W.Layout(width="100%"))
        self.table.add_class("ak-wide")
        self.eval_box = W.HTML()
        self.labels = LabelBar(mem, lambda: self.query.value, on_change=self._labels_changed)
        self.status = W.HTML()

        self.run_button.on_click(lambda _b: self.run())
        self.reset_button.on_click(lambda _b: self.reset())
        self.score_button.on_click(lambda _b: self.score())
        self.apply_button.on_click(lambda _b: self.apply())
        self.profile.observe(self._on_profile, names="value")
        self.order.observe(lambda _c: self.update(), names="value")
        for w in self.controls.values():
            w.observe(self._on_control, names="value")
        self.view.on_select(self._on_select)
        for w in self.controls.values():
            w.layout.width = "98%"
        grid = W.GridBox(list(self.controls.values()),
                         layout=W.Layout(grid_template_columns="repeat(2, 1fr)"))
        super().__init__([
            W.HTML(STYLE),
            W.HBox([self.query, self.when, self.run_button]),
            W.HBox([self.profile, self.order, self.reset_button]),
            W.HBox([self.score_button, self.apply_button]),
            grid, self.summary,
            W.HBox([self.view, self.detail]),
            self.table, self.eval_box, self.labels, self.status,
        ])
        if mem.read_only:
            self.apply_button.tooltip = "the store is open read-only"
        if query:
            self.run()
        else:
            self.status.value = note("type a query and press Recall; then move a constant — "
                                     "nothing is written")

    # -- controls --------------------------------------------------------------------------
    def _control(self, name: str) -> W.ValueWidget:
        value = getattr(self.base_settings, name)
        style = {"description_width": "175px"}
        if isinstance(value, bool):
            return W.Checkbox(value=value, description=name, style=style, indent=False)
        _, _, step, unit, unit_name = CONTROLS[name]
        lo, hi = slider_bounds(name)
        shown = value / unit
        desc = f"{name} ({unit_name})" if unit_name else name
        if isinstance(value, int):
            return W.IntSlider(value=int(shown), min=int(min(lo, shown)), max=int(max(hi, shown)),
                               step=int(step), description=desc, continuous_update=False,
                               style=style)
        return W.FloatSlider(value=shown, min=min(lo, shown), max=max(hi, shown), step=step,
                             description=desc, continuous_update=False, style=style,
                             readout_format=".3g")

    def settings(self) -> Settings:
        """The settings the controls say (the baseline's, with the controls on top)."""
        changes: dict[str, Any] = {}
        for name, w in self.controls.items():
            base = getattr(self.base_settings, name)
            if isinstance(base, bool):
                value: Any = bool(w.value)
            else:
                unit = CONTROLS[name][3]
                value = int(w.value) if isinstance(base, int) else float(w.value) * unit
                if isinstance(base, float) and abs(value - base) <= 1e-9 * max(1.0, abs(base)):
                    value = base  # the slider's rounding is no change
            if value != base:
                changes[name] = value
        return self.base_settings.replace(**changes) if changes else self.base_settings

    def set(self, **values: Any) -> WhatIfDiff | None:
        """Move controls from code, in the units they show (days, minutes…), then
        re-settle once; returns the difference (None when there is no baseline, or when a
        value is outside its setting's range: the status says which, nothing moves)."""
        unknown = sorted(set(values) - set(self.controls))
        if unknown:
            raise ValueError(f"no control {', '.join(unknown)}; controls: "
                             f"{', '.join(self.controls)}")
        for name, v in values.items():
            problem = self._refusal(name, v)
            if problem:
                self.status.value = note(problem, error=True)
                return None
        self._busy = True
        try:
            for name, v in values.items():
                w = self.controls[name]
                if not isinstance(v, bool):  # a value in range the slider did not reach
                    w.min, w.max = min(w.min, v), max(w.max, v)
                w.value = v
        finally:
            self._busy = False
        return self.update()

    def _refusal(self, name: str, shown: Any) -> str | None:
        """Why ``shown`` (in the control's unit) is refused for setting ``name``, or None."""
        base = getattr(self.base_settings, name)
        if isinstance(base, bool) or isinstance(shown, bool):
            return setting_problem(name, shown)
        unit = CONTROLS[name][3]
        value = shown * unit if isinstance(shown, int | float) and unit != 1.0 else shown
        return setting_problem(name, value)

    def _show_baseline_values(self) -> None:
        self._busy = True
        try:
            for name, w in self.controls.items():
                value = getattr(self.base_settings, name)
                if isinstance(value, bool):
                    w.value = value
                    continue
                shown = value / CONTROLS[name][3]
                w.min, w.max = min(w.min, shown), max(w.max, shown)
                w.value = int(shown) if isinstance(value, int) else shown
        finally:
            self._busy = False

    def _on_control(self, _change: dict[str, Any]) -> None:
        if not self._busy:
            self.update()

    def _on_profile(self, change: dict[str, Any]) -> None:
        name = change["new"]
        own = self.mem.settings
        self.base_settings = (Settings.profile(name, **own.profile_name()[1]) if name else own)
        self._base_eval = None
        if self.query.value.strip():
            self.run()
        else:
            self._show_baseline_values()

    def reset(self) -> WhatIfDiff | None:
        """Put every control back to the baseline's value and re-settle."""
        self._show_baseline_values()
        return self.update()

    # -- running ---------------------------------------------------------------------------
    def run(self, query: str | None = None, now: str | float | None = None
            ) -> RecallTrace | None:
        """Recall the baseline (``query`` / ``now`` default to the boxes) and the what-if of
        the controls; returns the baseline trace (None when the input was refused)."""
        try:
            text, when = read_query(self.mem, self.query, self.when, query, now)
            base = self.mem.recall(text, now=when, settings=self.base_settings, log=False)
        except AkashaError as err:
            self.status.value = note(str(err), error=True)
            return None
        self.baseline = base
        self._base_eval = None
        self.eval_box.value = ""
        self._graph = StoreGraph(self.mem, now=base.now)
        self._nodes, self._edges, self._extent = {}, {}, (False, 0)
        self.view.set_graph([], [])
        self._show_baseline_values()
        self.update()
        self.status.value = note(
            f"baseline: {text!r} at {iso(base.now)} with profile "
            f"{self.base_settings.profile_name()[0]} — move a constant; every recall here is "
            "a dry run")
        return base

    def update(self) -> WhatIfDiff | None:
        """Re-settle the recall under the controls' settings and redraw (a dry run)."""
        base = self.baseline
        if base is None:
            return None
        t0 = time.perf_counter()
        try:
            s = self.settings()
            variant = base if s == self.base_settings else self.mem.recall(
                base.query, now=base.now, settings=s, log=False)
        except AkashaError as err:
            self.status.value = note(str(err), error=True)
            return None
        self.variant = variant
        self.diff = diff_traces(base, variant, k=self.k, order=self.order.value)
        self.runs += 1
        self._draw()
        self.last_ms = (time.perf_counter() - t0) * 1000.0
        changed = s != self.mem.settings
        self.apply_button.disabled = self.mem.read_only or not changed
        self.summary.value = (f'<div class="ak-caption"><b>what-if</b>: '
                              f'{esc(self.diff.summary(UNITS))}'
                              f' <span class="ak-note">({self.last_ms:.0f} ms)</span></div>')
        if self._base_eval is not None:
            self.score()
        return self.diff

    def _node(self, uid: str) -> dict[str, Any]:
        assert self._graph is not None
        if uid not in self._nodes:
            self._nodes[uid] = self._graph.node(uid)
        return dict(self._nodes[uid])

    def _draw(self) -> None:
        d = self.diff
        if d is None or self._graph is None:
            return
        rows = d.frame.to_dict(orient="records")
        uids = [r["uid"] for r in rows]
        key = frozenset(uids)
        if key not in self._edges:
            self._edges[key] = self._graph.edges_among(uids, per_node=4)
        nodes = []
        for r in rows:
            n = self._node(r["uid"])
            left = r["change"] == "left"
            rank = _rank(r["rank_before"] if left else r["rank_after"]) or 0
            n.update(shape="box", x=-LEFT_X if left else 0.0, y=(rank - 1) * ROW_PX,
                     borderWidth=3 if r["change"] != "same" else 1,
                     widthConstraint={"maximum": 320},
                     label=("✗ " if left else f"#{rank} ") + short(self._graph.text(r["uid"]),
                                                                    15),
                     color={"background": "#fbeaea" if left else "#ffffff",
                            "border": CHANGE_COLOURS[r["change"]]},
                     font={"color": "#a05050" if left else "#222222"})
            nodes.append(n)
        edges = [{**e, "color": {"color": "#c8c8c8"},
                  "smooth": {"enabled": True, "type": "curvedCW", "roundness": 0.35}}
                 for e in self._edges[key]]
        self.view.set_graph(nodes, edges, fit=False)
        extent = (any(r["change"] == "left" for r in rows), len(rows))
        if self.runs == 1 or extent > self._extent:  # zoom out only when the picture grew
            self.view.fit()
            self._extent = extent
        self.view.caption = f"what-if {self.runs}: {d.summary(UNITS)}"
        self.table.value = frame_html(self.frame(), highlight=self.view.selected)
        self.detail.value = _changes_html(d, self._graph.text)
        self.labels.offer([(u, self._graph.text(u)) for u in uids])

    def frame(self) -> pd.DataFrame:
        """The difference as a table: one row per item of either top k (see
        :class:`~akasha_explorer.analysis.whatif.WhatIfDiff`), with the item's text."""
        if self.diff is None or self._graph is None:
            return pd.DataFrame()
        f = self.diff.frame.copy()
        f.insert(2, "text", [short(self._graph.text(u), 60) for u in f["uid"]])
        return f

    def _on_select(self, ids: list[str]) -> None:
        if ids and self.diff is not None:
            self.labels.node.value = ids[0] if ids[0] in [v for _, v in
                                                          self.labels.node.options] else None
        self.table.value = frame_html(self.frame(), highlight=ids)

    # -- the labelled set ------------------------------------------------------------------
    def score(self) -> pd.DataFrame | None:
        """recall@k and MRR of the labelled queries under the baseline and under the
        controls' settings, per method (``mem.evaluate``, dry runs); None when the store
        has no labels."""
        if self.baseline is None:
            self.eval_box.value = note("recall something first", error=True)
            return None
        try:
            if self._base_eval is None:
                self._base_eval = self.mem.evaluate(methods=WHATIF_METHODS, k=self.k,
                                                    now=self.baseline.now,
                                                    settings=self.base_settings)
            s = self.settings()
            after = self._base_eval if s == self.base_settings else self.mem.evaluate(
                methods=WHATIF_METHODS, k=self.k, now=self.baseline.now, settings=s)
        except AkashaError as err:
            self.eval_box.value = note(str(err), error=True)
            return None
        k, rows = self.k, []
        for m in WHATIF_METHODS:
            a, b = self._base_eval["methods"][m], after["methods"][m]
            rows.append({"method": m, f"recall@{k} before": a[f"recall@{k}"],
                         f"recall@{k} after": b[f"recall@{k}"],
                         f"Δ recall@{k}": b[f"recall@{k}"] - a[f"recall@{k}"],
                         "MRR before": a["mrr"], "MRR after": b["mrr"],
                         "Δ MRR": b["mrr"] - a["mrr"]})
        self.scores = pd.DataFrame(rows)
        self.eval_box.value = (
            f'<div class="ak-caption">labelled queries: {after["scored"]} scored, at '
            f'{esc(iso(after["now"]))}</div>' + frame_html(self.scores, key="method"))
        return self.scores

    def _labels_changed(self) -> None:
        self._base_eval = None
        if self.scores is not None:
            self.score()

    # -- the one write ---------------------------------------------------------------------
    def apply(self) -> dict[str, tuple[Any, Any]] | None:
        """Make the controls' settings the store's own (``mem.migrate``); returns what
        changed ({setting: (old, new)}), None when refused."""
        s = self.settings()
        if s == self.mem.settings:
            self.status.value = note("these are the store's settings already", error=True)
            return None
        profile, own = s.profile_name()
        # migrate keeps what the store set apart from its profile: name every difference
        differ = {k: b for k, (_a, b) in changed_settings(self.mem.settings.to_dict(),
                                                           s.to_dict()).items()}
        try:
            changed = self.mem.migrate(profile, **{**own, **differ})
        except AkashaError as err:
            self.status.value = note(str(err), error=True)
            return None
        self.profile.value = ""
        self.base_settings = self.mem.settings
        self.run()
        self.status.value = note(f"the store now uses profile {profile} with "
                                 f"{len(changed)} setting(s) changed: "
                                 + ", ".join(f"{k} {a!r} → {b!r}" for k, (a, b) in changed.items()))
        return dict(changed)


def _rank(v: Any) -> int | None:
    """A rank cell as an int (None: not ranked; pandas keeps a missing rank as NaN).

    >>> _rank(3.0), _rank(float("nan")), _rank(None)
    (3, None, None)
    """
    return None if v is None or pd.isna(v) else int(v)


def _changes_html(d: WhatIfDiff, text: Callable[[str], str]) -> str:
    """The entered / left / moved lists — what each turn says, its id and ranks — and the
    changed terms, escaped."""
    parts = [f'<div class="ak-caption">{esc(d.summary(UNITS))}</div>']
    for change in ("entered", "left", "up", "down"):
        rows = d.frame[d.frame["change"] == change]
        if rows.empty:
            continue
        colour = CHANGE_COLOURS[change]
        parts.append(f'<div style="border-left:4px solid {colour};padding-left:4px;'
                     f'margin:4px 0"><b>{esc(change)}</b>')
        for r in rows.to_dict(orient="records"):
            ranks = f"#{_rank(r['rank_before']) or '–'} → #{_rank(r['rank_after']) or '–'}"
            parts.append(f'<div class="ak-note">{esc(short(text(r["uid"]), 60))} '
                         f'<span class="ak-id">{esc(r["uid"])}</span> {esc(ranks)}'
                         f'{" · " + esc(r["terms"]) if r["terms"] else ""}</div>')
        parts.append("</div>")
    if len(parts) == 1:
        parts.append('<div class="ak-note">no item changed place</div>')
    return "".join(parts)
