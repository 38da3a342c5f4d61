"""MemoryMap — the whole memory on one map: every turn of a store (up to
:data:`~akasha_explorer.analysis.atlas.TURNS_MAX`; a larger one opens at community level and
drills into one community), coloured by community, sized by decayed strength, with its
strongest co-activation links; search, a time window and a recall light up the same map.

Everything is read: the items, their positions (computed once per store version and
cached by the store's analytics) and edges come from
:meth:`Neighbourhood.atlas <akasha_explorer.analysis.neighbourhood.Neighbourhood.atlas>`;
search is ``mem.search``; a recall is a trace (the stepper's, ``mem.recall``'s) or a logged
one (``mem.logged_recall``: the agent's, as it was made). The map itself
(:class:`~.mapview.MapView`, sigma.js) is drawn once; everything after only relights it.
Nothing is written to the store.

>>> MemoryMap.__mro__[1].__name__
'VBox'
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import TYPE_CHECKING

import ipywidgets as W
import numpy as np
import pandas as pd

from ..errors import AkashaError, InvalidInput
from ..text.timewords import parse_time
from ._data import StoreGraph, turn_detail_html
from ._html import PALETTE, STYLE, UNKNOWN_COLOUR, esc, frame_html, iso, legend_html, note, short
from ._inputs import as_date, days_of
from .canvas import legend_entry
from .follow import Follow
from .mapview import DIM_COLOUR, LIT_COLOURS, MapView

if TYPE_CHECKING:
    from ..analysis.atlas import Atlas
    from ..engine.trace import RecallTrace
    from ..protocol import MemoryAPI

__all__ = ["MemoryMap"]

SMALL_COLOUR = "#c3cad3"
"""Colour of every community past the palette's (the largest ones get their own)."""

HIT_LIMIT = 30
"""Search hits lit on the map (the best first)."""

ROLE_TEXT = {
    "hit": "search hit", "near": "linked to a hit (a drawn co-activation link)",
    "seed": "the recall's seeds", "delivered": "what the recall delivered (its context block)",
    "written": "the turn it was written back to, and its new links",
    "selected": "selected",
}
"""What each light means, for the legend (mapview.py ``LIT_COLOURS`` colours them)."""

MAP_LABEL_CHARS = 20
"""Characters of a turn's text its label on the map shows (a CJK character is wide)."""
def _sizes(values: Sequence[float], lo: float, hi: float) -> list[float]:
    """Pixel radii from ``lo`` to ``hi`` by the square root of each value over the largest.

    >>> _sizes([0.0, 1.0, 4.0], 2.0, 10.0)
    [2.0, 6.0, 10.0]
    """
    v = np.sqrt(np.clip(np.asarray(values, np.float64), 0.0, None))
    top = float(v.max()) if v.size else 0.0
    return [round(float(s), 2) for s in (lo + (hi - lo) * (v / top if top > 0 else v))]


def group_colour(group: int) -> str:
    """The map's colour of community ``group`` (the largest get the palette's own colours;
    the rest share :data:`SMALL_COLOUR`; turns without a link, group -1, are grey).

    >>> group_colour(0), group_colour(len(PALETTE)), group_colour(-1)
    ('#4e79a7', '#c3cad3', '#b0b0b0')
    """
    if group < 0:
        return UNKNOWN_COLOUR
    return PALETTE[group] if group < len(PALETTE) else SMALL_COLOUR


class MemoryMap(W.VBox):
    """The whole memory as one map (see the module docstring).

    Parameters
    ----------
    mem
        An open memory (read-only is enough; a served store works too).
    now
        The time strengths and link weights are read at: ``"last"`` (the newest message,
        default), ``"now"``, ISO 8601 or epoch seconds. Positions do not depend on it.
    level
        ``"auto"`` (every turn up to ``TURNS_MAX`` turns, else one item per community),
        ``"turns"`` or ``"communities"``.
    height
        The map's height (CSS).

    Scripting: :meth:`search`, :meth:`set_window`, :meth:`show_recall`, :meth:`latest`,
    :meth:`drill`, :meth:`back`, :meth:`open_node`, :meth:`clear`, :meth:`refresh`,
    :meth:`selection_df`; :attr:`atlas` is what is drawn, :attr:`view` the map widget.
    """

    def __init__(self, mem: MemoryAPI, *, now: str | float = "last", level: str = "auto",
                 height: str = "600px") -> None:
        self.mem = mem
        self._now_arg = now
        self.level = level
        self.drilled: int | None = None
        """The community drilled into (None: the whole memory)."""
        self.atlas: Atlas | None = None
        self.hits = pd.DataFrame()
        self.recall: RecallTrace | None = None
        """The recall lit on the map (None: none)."""
        self._turn_group: dict[str, int] | None = None

        self.search_box = W.Text(placeholder="search the memory (meaning + words)",
                                 description="search", layout=W.Layout(width="50%"))
        self.search_button = W.Button(description="Search", icon="search",
                                      button_style="primary")
        self.clear_button = W.Button(description="Clear lights", icon="eraser")
        self.latest_button = W.Button(description="Latest recall", icon="bolt",
                                      tooltip="light the newest recall of the query log "
                                              "(with a served store: the agent's)")
        self.back_button = W.Button(description="All communities", icon="arrow-left",
                                    layout=W.Layout(display="none"))
        self.time_range = W.SelectionRangeSlider(options=[("–", 0)], index=(0, 0),
                                                 description="time", continuous_update=False,
                                                 readout=False, layout=W.Layout(width="60%"))
        self.time_label = W.HTML()
        self.caption = W.HTML()
        self.view = MapView(height=height, layout=W.Layout(width="68%"))
        self.detail = W.HTML(layout=W.Layout(width="31%", max_height=height, overflow="auto"))
        self.detail.add_class("ak-detail")
        self.legend = W.HTML()
        self.selection = W.HTML(layout=W.Layout(width="100%"))
        self.selection.add_class("ak-wide")
        self.status = W.HTML()

        self.search_button.on_click(lambda _b: self.search(self.search_box.value))
        self.clear_button.on_click(lambda _b: self.clear())
        self.latest_button.on_click(lambda _b: self.latest())
        self.back_button.on_click(lambda _b: self.back())
        self.time_range.observe(lambda _c: self._apply_window(), names="value")
        self._hold = False                           # no window change while days are reset
        self.view.observe(lambda _c: self._on_select(), names="selected")
        self.view.on_open(self._on_open)
        self.follow = Follow(mem, self._followed)
        super().__init__([
            W.HTML(STYLE),
            W.HBox([self.search_box, self.search_button, self.clear_button,
                    self.latest_button, *([self.follow.box] if self.follow.box else [])]),
            W.HBox([self.time_range, self.time_label, self.back_button]),
            self.caption,
            W.HBox([self.view, self.detail]),
            self.legend,
            self.selection,
            self.status,
        ])
        self.add_class("ak-panel")
        self.refresh()

    # -- reading and drawing ---------------------------------------------------------------
    def refresh(self) -> None:
        """Read the store again (new turns, new links) and redraw the map at the same level;
        the lights of the search or recall shown are put back on."""
        got = parse_time(str(self._now_arg), self.mem.last_ts)
        self.data = StoreGraph(self.mem, now=got)
        self.now = self.data.now
        self._draw()
        self._set_days()
        self._relight()

    def _followed(self) -> None:
        """"follow the agent" ticked and something was written: the new turns drawn, the
        agent's newest recall lit."""
        self.refresh()
        self.latest()

    def _draw(self) -> None:
        hood = self.data.hood
        a = None
        if self.drilled is not None:
            try:
                a = hood.atlas(community=self.drilled)
            except AkashaError as err:   # laid out again since: that community is gone
                self.status.value = note(f"{err}; back to the whole memory", error=True)
                self.drilled = None
        if a is None:
            a = hood.atlas(level=self.level)
        self.atlas = a
        self._turn_group = None
        turns = a.level == "turns"
        size = (_sizes(a.size, 2.0, 9.0) if turns else _sizes(a.size, 4.0, 28.0))
        top = max(a.weight, default=0.0) or 1.0
        self.view.item_name = "turns" if turns else "communities"
        label = [short(t, MAP_LABEL_CHARS) for t in a.label] if turns else a.label
        self.view.draw(a.ids, x=a.x, y=a.y, size=size, label=label, ts=a.ts,
                       t0=None if turns else a.t0,
                       color=[group_colour(g) for g in a.group], src=a.src, dst=a.dst,
                       width=[0.4 + 1.6 * w / top for w in a.weight])
        self.back_button.layout.display = "" if self.drilled is not None else "none"
        self.caption.value = note(self._caption())
        self._legend()
        self.detail.value = note("click a turn to read it here; double-click a community to "
                                 "open it" if not turns else "click a turn to read it here "
                                 "(shift-click adds to the selection)")

    def _caption(self) -> str:
        a = self.atlas
        assert a is not None
        when = iso(a.now)
        if a.level == "communities":
            return (f"the whole memory by community: {len(a.ids)} communities of its "
                    f"{a.total_turns:,} turns, at {when} · size = turns in it · links = "
                    "co-activation between communities · double-click one to open it")
        if a.community is not None:
            return (f"community {a.community}: its {len(a.ids):,} turns (of {a.total_turns:,}"
                    f") at {when} · {len(a.src):,} co-activation links drawn")
        return (f"every turn of the memory: {len(a.ids):,} of {a.total_turns:,}, at {when} · "
                f"{len(a.src):,} co-activation links drawn (each turn's strongest)")

    def _legend(self) -> None:
        a = self.atlas
        assert a is not None
        groups = sorted(set(a.group))
        names = {}
        if a.level == "communities":
            names = dict(zip(a.group, a.label, strict=True))
        entries = [legend_entry("fill", group_colour(g),
                                f"community {g}" + (f": {names[g]}" if g in names else ""))
                   for g in groups if 0 <= g < len(PALETTE)]
        small = [g for g in groups if g >= len(PALETTE)]
        if small:
            entries.append(legend_entry("fill", SMALL_COLOUR,
                                        f"the {len(small)} smaller communities"))
        if -1 in groups:
            entries.append(legend_entry("fill", UNKNOWN_COLOUR, "turns without a link"))
        entries.append(legend_entry("size", "", "size = strength, decayed to this time"
                                    if a.level == "turns" else "size = turns in it"))
        lit = set(self.view.lit.values()) | ({"selected"} if self.view.selected else set())
        entries += [legend_entry("halo", LIT_COLOURS[r], ROLE_TEXT[r]) for r in ROLE_TEXT
                    if r in lit]
        if self.view.lit or self.view.selected:
            entries.append(legend_entry("fill", DIM_COLOUR, "not lit"))
        if self.view.window:
            entries.append(legend_entry("fill", DIM_COLOUR, "outside the time window"))
        self.legend_entries = entries
        self.legend.value = legend_html(entries)

    # -- the time window -------------------------------------------------------------------
    def _set_days(self) -> None:
        """The slider's days: those of the items drawn; a window already picked is kept
        when its days are still there (a refresh keeps what a person chose)."""
        a = self.atlas
        assert a is not None
        days = days_of([*a.t0, *a.ts], default=self.now)
        kept = tuple(self.time_range.value) if self.view.window else ()
        self._hold = True
        try:
            self.time_range.options = [(d.isoformat(), d) for d in days]
            self.time_range.index = (0, len(days) - 1)
        finally:
            self._hold = False
        if len(kept) == 2 and kept[0] in days and kept[1] in days:
            self.time_range.index = (days.index(kept[0]), days.index(kept[1]))
        else:
            self.view.window = []
            self.time_label.value = note(f"{days[0]} – {days[-1]}")

    def set_window(self, start: dt.date | str | None = None,
                   end: dt.date | str | None = None) -> None:
        """Dim every item outside ``start`` .. ``end`` (dates, inclusive, in UTC; None:
        the first / last day); both None shows the whole time again."""
        days = [d for _, d in self.time_range.options]
        a = 0 if start is None else days.index(as_date(start))
        b = len(days) - 1 if end is None else days.index(as_date(end))
        if a > b:
            raise InvalidInput(f"the window starts ({days[a]}) after it ends ({days[b]})")
        self.time_range.index = (a, b)

    def _apply_window(self) -> None:
        lo, hi = self.time_range.value
        self.time_label.value = note(f"{lo} – {hi}")
        if self._hold:
            return
        a, b = self.time_range.index
        n = len(self.time_range.options)
        if a == 0 and b == n - 1:
            self.view.window = []
        else:
            t0 = dt.datetime.combine(lo, dt.time.min, dt.UTC).timestamp()
            t1 = dt.datetime.combine(hi, dt.time.max, dt.UTC).timestamp()
            self.view.window = [t0, t1]
        self._legend()

    # -- lights ----------------------------------------------------------------------------
    def _groups(self) -> dict[str, int]:
        """Turn → the community the map colours it by (the atlas's, not a fresh Leiden run)."""
        a = self.atlas
        assert a is not None
        if self._turn_group is None:
            if a.level == "communities":
                self._turn_group = {u: g for g, us in zip(a.group, a.members, strict=True)
                                    for u in us}
            else:
                self._turn_group = dict(zip(a.ids, a.group, strict=True))
        return self._turn_group

    def _items(self, uids: Sequence[str]) -> list[str]:
        """The drawn items standing for turns ``uids`` (the turns themselves, or their
        communities at community level), in order, each once."""
        a = self.atlas
        assert a is not None
        if a.level == "turns":
            drawn = set(a.ids)
            return [u for u in dict.fromkeys(uids) if u in drawn]
        g = self._groups()
        return list(dict.fromkeys(f"community:{g[u]}" for u in uids if u in g))

    def search(self, text: str) -> pd.DataFrame:
        """Light the search hits for ``text`` (meaning + words, ``mem.search``) and the
        turns linked to them on the map as drawn; returns the hits (best first)."""
        text = text.strip()
        if not text:
            self.status.value = note("type something to search for", error=True)
            return pd.DataFrame()
        self.search_box.value = text
        try:
            hits = self.mem.search(text, now=self.now).frame
        except AkashaError as err:
            self.status.value = note(str(err), error=True)
            return pd.DataFrame()
        self.hits = hits.head(HIT_LIMIT).reset_index(drop=True)
        self.recall = None
        self._relight()
        shown = self._items(list(self.hits["uid"]))
        self.status.value = note(f"{len(self.hits)} hits for “{text}”, {len(shown)} lit on the "
                                 "map" + (" (by community)" if self.atlas and
                                          self.atlas.level == "communities" else ""))
        return self.hits

    def show_recall(self, recall: RecallTrace | str) -> RecallTrace | None:
        """Light a recall on the map: its seeds, the turns it delivered and, once written
        back, the turn it was written to and the links it made. ``recall`` is a trace (the
        stepper's ``trace``, ``mem.recall``'s) or a query-log uid (``mem.logged_recall``:
        the recall as it was made and delivered)."""
        if isinstance(recall, str):
            try:
                recall = self.mem.logged_recall(recall)
            except AkashaError as err:
                self.status.value = note(str(err), error=True)
                return None
        self.recall = recall
        self.hits = pd.DataFrame()
        self._relight()
        done = recall.written_back or {}
        wrote = (f"written back to {done.get('node')}" if done.get("committed") else
                 "written back" if recall.writeback is not None and recall.writeback.applied
                 else "not written back")
        self.status.value = note(f"recall “{recall.query}” at {iso(recall.now)}: "
                                 f"{len(recall.seeds.uids)} seeds, "
                                 f"{len(self._delivered(recall))} delivered, {wrote}")
        return recall

    def latest(self) -> RecallTrace | None:
        """Light the newest recall of the query log (with a served store, the agent's)."""
        rows = self.mem.query_log(limit=1)
        if not rows:
            self.status.value = note("the query log is empty: nothing has been recalled yet",
                                     error=True)
            return None
        return self.show_recall(str(rows[-1]["uid"]))

    @staticmethod
    def _delivered(trace: RecallTrace) -> list[str]:
        try:
            return [it.node for it in trace.context().items]
        except AkashaError:
            return trace.ranking()[:8]

    def _relight(self) -> None:
        roles: dict[str, str] = {}
        edges: list[tuple[str, str]] = []
        if not self.hits.empty:
            for item in self._items(list(self.hits["uid"])):
                roles.setdefault(item, "hit")
        elif self.recall is not None:
            t = self.recall
            done = t.written_back or {}
            written = [done["node"]] if done.get("committed") and done.get("node") else []
            plan = t.writeback
            if plan is not None and (plan.applied or done.get("committed")):
                written = written or [plan.current_uid]
                pairs = zip(plan.edges.src_uid, plan.edges.dst_uid, strict=True)
                if self.atlas is not None and self.atlas.level == "turns":
                    edges = [(a, b) for a, b in pairs]
            for role, uids in (("written", written), ("delivered", self._delivered(t)),
                               ("seed", list(t.seeds.uids))):
                for item in self._items(uids):
                    roles.setdefault(item, role)
        self.view.light(roles, edges)
        self._legend()

    def clear(self) -> None:
        """Put every light out (search hits, recall, selection) and show the whole time."""
        self.hits = pd.DataFrame()
        self.recall = None
        self.view.selected = []
        self._relight()
        self.view.move_to("")
        if len(self.time_range.options) > 1:
            self.time_range.index = (0, len(self.time_range.options) - 1)

    # -- communities -----------------------------------------------------------------------
    def drill(self, community: int) -> None:
        """Open one community: its turns on the map (same positions as in the whole map)."""
        self.drilled = int(community)
        try:
            self._draw()
        except AkashaError as err:
            self.drilled = None
            self.status.value = note(str(err), error=True)
            return
        self._set_days()
        self._relight()
        shown = len(self.atlas.ids) if self.atlas else 0
        self.status.value = note(f"community {community}: {shown} turns; “All communities” "
                                 "goes back")

    def back(self) -> None:
        """Back from a community to the whole memory."""
        self.drilled = None
        self._draw()
        self._set_days()
        self._relight()

    # -- clicks and selection --------------------------------------------------------------
    def _on_open(self, item: str) -> None:
        if item.startswith("community:"):
            self.drill(int(item.split(":", 1)[1]))
        else:
            self.open_node(item)

    def open_node(self, uid: str) -> None:
        """Show turn ``uid`` in the side panel (verbatim messages, state, flags, anchors)
        and move the map onto it."""
        self.detail.value = turn_detail_html(self.mem, self.data, uid,
                                             community=self._groups().get(uid))
        if uid in set(self.atlas.ids if self.atlas else ()):
            self.view.move_to(uid)

    def _on_select(self) -> None:
        sel = list(self.view.selected)
        if sel and not sel[-1].startswith("community:"):
            self.detail.value = turn_detail_html(self.mem, self.data, sel[-1],
                                                 community=self._groups().get(sel[-1]))
        elif sel:
            self.detail.value = self._community_html(int(sel[-1].split(":", 1)[1]))
        df = self.selection_df()
        self.selection.value = ("" if df.empty else '<div class="ak-note">selection '
                                "(selection_df())</div>" + frame_html(df.drop(columns=["ts"])))
        self._legend()

    def _community_html(self, k: int) -> str:
        a = self.atlas
        assert a is not None
        i = a.ids.index(f"community:{k}")
        return (f"<b>community {k}</b><div>{esc(a.label[i])}</div>"
                f"<div>{int(a.size[i]):,} turns, {esc(iso(a.t0[i]))} – {esc(iso(a.ts[i]))}"
                "</div>" + note("double-click it on the map to open it"))

    def selection_df(self) -> pd.DataFrame:
        """The selected items as a DataFrame: turns as uid, session, ts, time, community,
        strength_eff, sigma, recall_count, assistant_only, text; communities as uid,
        community, turns, label."""
        sel = list(self.view.selected)
        turns = [s for s in sel if not s.startswith("community:")]
        cols = ["uid", "session", "ts", "time", "community", "strength_eff", "sigma",
                "recall_count", "assistant_only", "text"]
        if turns or not sel:
            return pd.DataFrame(self.data.node_table(turns, groups=self._groups()),
                                columns=cols)
        a = self.atlas
        assert a is not None
        rows = []
        for s in sel:
            i = a.ids.index(s)
            rows.append({"uid": s, "community": a.group[i], "turns": int(a.size[i]),
                         "ts": a.ts[i], "label": a.label[i]})
        return pd.DataFrame(rows, columns=["uid", "community", "turns", "ts", "label"])
