"""CommunitiesPanel — Leiden communities of the co-activation graph and the surprises the
analytics found: cross-community bridges, suggested links (strong two-hop, no edge),
semantic-vs-lived mismatches and knowledge gaps (SPEC §7, §8).

It shows ``mem.communities(...)`` and ``mem.surprises(..., queue=False)``; the two buttons
that write are explicit API calls: **Queue suggested links** (``mem.surprises(queue=True)``,
review items) and **Store as episodes** (``mem.communities(save=True)``).

>>> CommunitiesPanel.__mro__[1].__name__
'VBox'
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import ipywidgets as W
import pandas as pd

from ..analysis.surprises import SURPRISE_KINDS
from ..errors import AkashaError
from ..text.timewords import parse_time
from ._data import FOCUS_RING, StoreGraph, turn_legend
from ._html import STYLE, esc, frame_html, kv_html, note, short, tooltip
from ._inputs import ALL
from .canvas import DEFAULT_CAP, GraphCanvas, legend_entry

if TYPE_CHECKING:
    from ..protocol import MemoryAPI

__all__ = ["CommunitiesPanel"]

COMMUNITY_EDGES_PER_NODE = 4
"""Strongest co-activation edges drawn per shown turn of a community (the explorer draws
:data:`~akasha_explorer.widgets.explorer.EDGES_PER_NODE`)."""
TOP_TURNS = 30
"""Turns a community view draws: its strongest (all of a big community is a hairball)."""
LINK_COLOURS = {"suggested_link": "#e15759", "semantic_mismatch": "#7b3fbf"}


class CommunitiesPanel(W.VBox):
    """Communities and surprises of ``mem`` at ``now`` (see the module docstring).

    Scripting: :meth:`compute`, :meth:`show_community`, :meth:`show_surprise`,
    :attr:`table` (communities DataFrame), :attr:`surprises` (DataFrame); widgets
    :attr:`resolution`, :attr:`compute_button`, :attr:`community_list`, :attr:`kind`,
    :attr:`surprise_list`, :attr:`queue_button`, :attr:`store_button`, :attr:`view`.
    """

    def __init__(self, mem: MemoryAPI, *, now: str | float = "last",
                 resolution: float | None = None, cap: int = DEFAULT_CAP) -> None:
        self.mem = mem
        self.now = parse_time(str(now), mem.last_ts)
        self.data = StoreGraph(mem, now=self.now)
        self.table = pd.DataFrame()
        self.surprises = pd.DataFrame()

        self.resolution = W.BoundedFloatText(
            value=mem.settings.LEIDEN_RESOLUTION if resolution is None else resolution,
            min=0.01, max=20.0, step=0.1, description="resolution")
        self.compute_button = W.Button(description="Compute", icon="refresh",
                                       button_style="primary")
        self.summary = W.HTML()
        self.communities_html = W.HTML(layout=W.Layout(width="100%"))
        self.communities_html.add_class("ak-wide")
        self.community_list = W.Select(options=[], rows=7, description="community",
                                       layout=W.Layout(width="98%"))
        self.kind = W.Dropdown(options=[("all surprises", ALL)] + [(k, k)
                                                                    for k in SURPRISE_KINDS],
                               description="surprises")
        self.surprise_list = W.Select(options=[], rows=8, description="found",
                                      layout=W.Layout(width="98%"))
        self.view = GraphCanvas(height="460px", cap=cap, layout=W.Layout(width="62%"))
        self.detail = W.HTML(layout=W.Layout(width="37%", max_height="520px",
                                             overflow="auto"))
        self.queue_button = W.Button(description="Queue suggested links for review",
                                     icon="inbox", disabled=mem.read_only,
                                     layout=W.Layout(width="auto"))
        self.store_button = W.Button(description="Store communities as episodes",
                                     icon="save", disabled=mem.read_only,
                                     layout=W.Layout(width="auto"))
        self.status = W.HTML()

        self.compute_button.on_click(lambda _b: self.compute())
        self.community_list.observe(lambda c: c["new"] is not None
                                    and self.show_community(c["new"]), names="value")
        self.kind.observe(lambda _c: self._fill_surprises(), names="value")
        self.surprise_list.observe(lambda c: c["new"] is not None
                                   and self.show_surprise(c["new"]), names="value")
        self.queue_button.on_click(lambda _b: self.queue_links())
        self.store_button.on_click(lambda _b: self.store_episodes())
        self.view.on_select(self._on_select)

        super().__init__([
            W.HTML(STYLE),
            W.HBox([self.resolution, self.compute_button]),
            self.summary,
            self.communities_html,
            self.community_list,
            W.HBox([self.kind]),
            self.surprise_list,
            W.HBox([self.view, self.detail]),
            W.HBox([self.queue_button, self.store_button]),
            self.status,
        ])
        self.add_class("ak-panel")
        self.compute()

    # -- computing -------------------------------------------------------------------------
    def compute(self) -> pd.DataFrame:
        """Leiden communities at the chosen resolution, and the surprises (read only)."""
        try:
            self.table = self.mem.communities(now=self.now, resolution=self.resolution.value)
            self.surprises = self.mem.surprises(now=self.now,
                                                resolution=self.resolution.value, queue=False)
            nodes = self.mem.graph_view("nodes", now=self.now,
                                        resolution=self.resolution.value).nodes
        except AkashaError as err:
            self.status.value = note(str(err), error=True)
            return self.table
        self.data = StoreGraph(self.mem, now=self.now, communities=dict(
            zip(nodes["id"].astype(str), nodes["community"].astype(int), strict=True)))
        t = self.table
        cols = [c for c in ("community", "size", "label", "conductance", "w_internal", "w_cut",
                            "sessions", "first_time", "last_time", "examples") if c in t]
        self.communities_html.value = frame_html(t[cols])
        self.summary.value = note(
            f"{len(t)} communities of {int(t['size'].sum()) if len(t) else 0} turns at "
            f"resolution {self.resolution.value:g}; {len(self.surprises)} surprises")
        self.community_list.options = [
            (f"#{int(r.community)} · {int(r.size)} turns · {short(str(r.label), 50)}",
             int(r.community)) for r in t.itertuples()]
        self._fill_surprises()
        if len(t):
            self.community_list.value = int(t["community"].iloc[0])
        return self.table

    def _fill_surprises(self) -> None:
        s = self.surprises
        if self.kind.value != ALL and len(s):
            s = s[s["kind"] == self.kind.value]
        self.surprise_list.options = [
            (f"[{r.kind}] {short(str(r.subject_text or r.subject), 40)}"
             + (f" ↔ {short(str(r.other_text or r.other), 30)}" if r.other else "")
             + f" · {r.score:.3g}", int(i)) for i, r in s.iterrows()]
        self.surprise_list.value = None

    # -- showing ---------------------------------------------------------------------------
    def _members(self, community: int) -> list[str]:
        row = self.table[self.table["community"] == community]
        if not len(row):
            return []
        return [u for u in str(row["members"].iloc[0]).split(",") if u]

    def show_community(self, community: int, *, top: int = TOP_TURNS) -> list[str]:
        """Draw community ``community``: its ``top`` strongest turns (decayed strength at
        ``now``), their strongest edges, sized by strength. Returns the uids drawn."""
        everyone = self._members(community)
        strength = self.data.strength(everyone)
        order = sorted(range(len(everyone)), key=lambda i: (-float(strength[i]), everyone[i]))
        members = [everyone[i] for i in order[: min(top, self.view.cap)]]
        nodes = self.data.nodes(members, labels=12)
        edges = self.data.edges_among(members, per_node=COMMUNITY_EDGES_PER_NODE)
        self.view.set_graph(nodes, edges, relayout=True)
        row = self.table[self.table["community"] == community].iloc[0]
        self.view.legend = turn_legend(nodes, edges,
                                       names={community: f"{community} ({row['label']})"})
        self.view.caption = (f"community {community} ({row['label']}): its {len(members)} "
                             f"strongest turns of {len(everyone)} (the memory holds "
                             f"{len(self.data.texts())}); one community, one colour; "
                             "size = strength")
        self.detail.value = kv_html([(k, row[k]) for k in ("community", "size", "label",
                                                           "conductance", "sessions",
                                                           "top_sessions", "examples")
                                     if k in row])
        return members

    def show_surprise(self, index: int) -> list[str]:
        """Draw one surprise: the turn(s) it names, their strongest neighbours coloured by
        community, and the suggested / semantic link dashed."""
        r = self.surprises.loc[index]
        nums: dict[str, Any] = r["numbers"] if isinstance(r["numbers"], dict) else {}
        self.detail.value = (f"<b>{esc(r['kind'])}</b> — {esc(r['why'])}"
                             + kv_html([("subject", r["subject"]),
                                        ("subject text", r["subject_text"]),
                                        ("other", r["other"]), ("other text", r["other_text"]),
                                        ("score", r["score"])])
                             + kv_html(sorted(nums.items())))
        focus = [u for u in (r["subject"], r["other"]) if u and self.mem.has_node(u)]
        via = [u for u in str(nums.get("via", "")).split(",") if u and self.mem.has_node(u)]
        if not focus:  # a knowledge gap names a query, not a turn
            self.view.set_graph([], [])
            self.view.legend = []
            self.view.caption = f"{r['kind']}: {short(str(r['subject']), 80)} (no turn to draw)"
            return []
        shown = list(dict.fromkeys(focus + via + self.data.neighbours(focus, limit=30)))
        nodes = self.data.nodes(shown)
        for d in nodes:
            if d["id"] in focus:
                d["borderWidth"] = 5
                d["color"] = {**d["color"], "border": FOCUS_RING}
        edges = self.data.edges_among(shown, per_node=COMMUNITY_EDGES_PER_NODE)
        legend = [*turn_legend(nodes, edges),
                  legend_entry("ring", FOCUS_RING, "the turn(s) it is about")]
        if r["other"] and len(focus) == 2 and r["kind"] in LINK_COLOURS:
            edges.append({"from": r["subject"], "to": r["other"], "dashes": True, "width": 3,
                          "color": {"color": LINK_COLOURS[r["kind"]]},
                          "title": tooltip(r["kind"], str(r["why"]))})
            legend.append(legend_entry("edge", LINK_COLOURS[r["kind"]],
                                       f"the proposed link (dashed, {r['kind']})"))
        self.view.set_graph(nodes, edges, relayout=True)
        self.view.legend = legend
        self.view.caption = (f"{r['kind']}: red ring = the turn(s) it is about, colour = "
                             "community" + ("; dashed = the proposed link" if r["other"] else ""))
        return shown

    def _on_select(self, ids: list[str]) -> None:
        if ids:
            rows = self.data.node_table(ids[:1])
            self.detail.value = kv_html(sorted(rows[0].items()))

    # -- the two writes --------------------------------------------------------------------
    def queue_links(self) -> int:
        """Put the best suggested links on the review queue (``mem.surprises(queue=True)``);
        returns how many new review items that made."""
        if self.mem.read_only:
            self.status.value = note("the store is open read-only", error=True)
            return 0
        try:
            before = len(self.mem.review.list(kind="suggested_link", status=None))
            self.mem.surprises(now=self.now, resolution=self.resolution.value, queue=True)
            after = len(self.mem.review.list(kind="suggested_link", status=None))
        except AkashaError as err:
            self.status.value = note(str(err), error=True)
            return 0
        self.status.value = note(f"{after - before} suggested link(s) queued for review "
                                 f"({after} in the queue in all); see the ReviewQueue panel")
        return after - before

    def store_episodes(self) -> int:
        """Keep the communities as episodes of kind ``community``
        (``mem.communities(save=True)``); returns how many."""
        if self.mem.read_only:
            self.status.value = note("the store is open read-only", error=True)
            return 0
        try:
            t = self.mem.communities(now=self.now, resolution=self.resolution.value,
                                     save=True)
        except AkashaError as err:
            self.status.value = note(str(err), error=True)
            return 0
        self.status.value = note(f"{len(t)} communities stored as episodes")
        return len(t)
