"""MemoryExplorer — search (dense + lexical), browse sessions and the timeline, open a turn
to read its verbatim messages, anchors and neighbours, expand the graph around it, filter by
time range and community; the selection comes back as a DataFrame (SPEC §8).

Everything is read: search is ``mem.search`` (the dense items of a dry-run recall and the
BM25 hits of the same lexical pass, fused by reciprocal rank); the graph comes from the
memory's COACT edges at ``now`` (``mem.neighbourhood``, drawn by
:class:`~._data.StoreGraph`). Nothing is written to the store.

>>> MemoryExplorer.__mro__[1].__name__
'VBox'
"""

from __future__ import annotations

import datetime as dt
import time
from typing import TYPE_CHECKING, Any

import ipywidgets as W
import pandas as pd

from ..errors import AkashaError
from ..text.timewords import parse_time
from ._data import FOCUS_RING, NEW_RING, StoreGraph, turn_detail_html, turn_legend
from ._html import (
    STYLE,
    esc,
    frame_html,
    iso,
    note,
    short,
    timeline_svg,
)
from ._inputs import ALL, as_date, days_of
from .canvas import DEFAULT_CAP, GraphCanvas, legend_entry
from .follow import Follow

if TYPE_CHECKING:
    from ..protocol import MemoryAPI

__all__ = ["MemoryExplorer"]

NEIGHBOURS_ON_OPEN = 20
"""Neighbours added around a node when it is opened."""

EDGES_PER_NODE = 6
"""Strongest co-activation edges drawn per shown turn (all of them would hide the graph)."""

EXPAND_STEP = 25
"""Neighbours added per expand click (per click, not per node; the cap still applies)."""

COMMUNITY_TOP = 30
"""Turns a community shows when picked: its strongest (a whole community is a hairball)."""


class MemoryExplorer(W.VBox):
    """Explore one store (see the module docstring).

    Parameters
    ----------
    mem
        An open :class:`~akasha_explorer.memory.Memory` (read-only is enough).
    now
        The time edges and strengths are read at: ``"last"`` (the newest message, default),
        ``"now"``, ISO 8601 or epoch seconds.
    cap
        Most nodes the graph shows (default 500).

    Scripting: :meth:`search`, :meth:`open_node`, :meth:`show_session`, :meth:`expand`,
    :meth:`set_filters`, :meth:`selection_df`; the widgets (:attr:`search_box`,
    :attr:`search_button`, :attr:`results`, :attr:`sessions`, :attr:`open_button`,
    :attr:`expand_button`, :attr:`clear_button`, :attr:`time_range`, :attr:`community`,
    :attr:`view`) are public.
    """

    def __init__(self, mem: MemoryAPI, *, now: str | float = "last",
                 cap: int = DEFAULT_CAP) -> None:
        self.mem = mem
        got = parse_time(str(now), mem.last_ts)
        self.data = StoreGraph(mem, now=got)
        self.shown: list[str] = []
        self.hits = pd.DataFrame()
        self.opened: str | None = None
        self.new: list[str] = []
        """The turns the last :meth:`refresh` found new (ringed in :data:`NEW_RING`)."""
        self._read_at = time.time()                  # when the store was last read
        self._new_since = ""                         # the read before it, as 12:01:05
        self._query = ""                             # the search the hit list is of
        self._detail_uid: str | None = None          # the turn the side panel shows
        self._hold = False                           # no redraw while refresh rebuilds
        # a community's top turns, of how many in the time range, of how many in all
        self._picked: tuple[list[str], int, int] | None = None

        self.search_box = W.Text(placeholder="search the memory (meaning + words)",
                                 description="search", layout=W.Layout(width="60%"))
        self.search_button = W.Button(description="Search", icon="search",
                                      button_style="primary")
        self.results = W.Select(options=[], rows=8, description="hits",
                                layout=W.Layout(width="98%"))
        self.sessions = W.Dropdown(options=self._session_options(),
                                   description="session", layout=W.Layout(width="60%"))
        self.open_button = W.Button(description="Open selected", icon="folder-open")
        self.expand_button = W.Button(description="Expand neighbours", icon="share-alt",
                                      layout=W.Layout(width="auto"))
        self.clear_button = W.Button(description="Clear graph", icon="eraser")
        self.timeline = W.HTML()
        days = self._days()
        self.time_range = W.SelectionRangeSlider(
            options=[(d.isoformat(), d) for d in days], index=(0, max(0, len(days) - 1)),
            description="time", layout=W.Layout(width="75%"), continuous_update=False,
            readout=False)
        self.time_label = W.HTML()
        self.community = W.Dropdown(options=self._community_options(),
                                    description="community")
        self.view = GraphCanvas(height="480px", cap=cap, layout=W.Layout(width="62%"))
        self.detail = W.HTML(layout=W.Layout(width="37%", max_height="560px", overflow="auto"))
        self.detail.add_class("ak-detail")
        self.selection = W.HTML(layout=W.Layout(width="100%"))
        self.selection.add_class("ak-wide")
        self.status = W.HTML()
        self.detail.value = note("click a node (or a hit) to read it here")

        self.search_button.on_click(lambda _b: self.search(self.search_box.value))
        self.results.observe(self._on_result, names="value")
        self.sessions.observe(lambda c: c["new"] and self.show_session(c["new"]), names="value")
        self.open_button.on_click(lambda _b: self._open_selected())
        self.expand_button.on_click(lambda _b: self.expand())
        self.clear_button.on_click(lambda _b: self.clear())
        self.time_range.observe(lambda _c: self._redraw(), names="value")
        self.community.observe(self._on_community, names="value")
        self.view.on_select(self._on_select)
        self.view.on_expand(lambda ids: self.expand(ids))

        self.refresh_button = W.Button(description="Refresh", icon="refresh",
                                       tooltip="read the store again (new turns, new edges)")
        self.refresh_button.on_click(lambda _b: self.refresh())
        self.follow = Follow(mem, self.refresh)
        super().__init__([
            W.HTML(STYLE),
            W.HBox([self.search_box, self.search_button, self.refresh_button,
                    *([self.follow.box] if self.follow.box else [])]),
            self.results,
            self.sessions,
            self.timeline,
            W.HBox([self.time_range, self.time_label]),
            self.community,
            W.HBox([self.open_button, self.expand_button, self.clear_button]),
            W.HBox([self.view, self.detail]),
            self.selection,
            self.status,
        ])
        self.add_class("ak-panel")
        self._show_range()
        self._redraw()
        self.status.value = note(f"{len(self.data.uids)} turns, read at {iso(self.data.now)}; "
                                 "search, pick a session, or click a node")

    def _session_options(self) -> list[tuple[str, str]]:
        sessions = self.mem.sessions()
        return [(f"— {len(sessions)} sessions —", "")] + [
            (f"{iso(s.first_ts)} · {s.session} ({s.nodes} turns)", s.session)
            for s in sessions]

    def _community_options(self) -> list[tuple[str, Any]]:
        comm = self.data.communities()
        sizes = pd.Series(list(comm.values())).value_counts().sort_index() if comm \
            else pd.Series(dtype=int)
        options: list[tuple[str, Any]] = [("all communities", ALL)]
        options += [(f"community {int(c)} ({int(k)} turns)", int(c)) for c, k in sizes.items()]
        return options

    def refresh(self) -> None:
        """Read the store again at its newest message — what a live agent wrote meanwhile
        — and show only what that read says: the sessions, days and communities anew (the
        filters back to all: communities are numbered afresh); the turns shown that still
        exist, plus the new ones (in :attr:`new`, ringed in :data:`NEW_RING`, counted in
        the status line); the hit list searched again; the side panel and the selection
        read again (or saying that their turn is gone)."""
        before = self.data.uids
        self.data = StoreGraph(self.mem, now=self.mem.last_ts())
        self._new_since = _clock(self._read_at)
        self._read_at = time.time()
        new = sorted((u for u in self.data.uids if u not in before),
                     key=lambda u: (self.data.hood.time_of(u), u))
        self._hold = True
        try:
            self.sessions.options = self._session_options()
            days = self._days()
            self.time_range.options = [(d.isoformat(), d) for d in days]
            self.time_range.index = (0, max(0, len(days) - 1))
            self._picked = None
            self.community.options = self._community_options()
            self.community.value = ALL
            self.shown = [u for u in self.shown if u in self.data.uids]
            self._add(new)
            self.new = [u for u in new if u in self.shown]
            if self.opened not in self.data.uids:
                self.opened = None
            self._search_hits(self._query)
        finally:
            self._hold = False
        self._redraw()
        self._reread_detail()
        self._show_selection()
        gone = len(before - self.data.uids)
        said = (f"{len(new)} new turn{'s' * (len(new) != 1)} since {self._new_since}"
                + (f" (ringed; {len(new) - len(self.new)} beyond the graph's cap)"
                   if len(self.new) < len(new) else " (ringed)" if new else "")
                + (f", {gone} gone" if gone else ""))
        self.status.value = note(f"{said}; {len(self.data.uids)} turns, read at "
                                 f"{iso(self.data.now)}")

    def _reread_detail(self) -> None:
        """The side panel after a refresh: its turn read again, or that it is gone."""
        uid = self._detail_uid
        if uid is None:
            return
        if uid in self.data.uids:
            self._show_detail(uid)
        else:
            self._detail_uid = None
            self.detail.value = note(f"turn {uid} is no longer in the memory (forgotten since "
                                     "it was opened); click a node to read it here")

    # -- time and filters ------------------------------------------------------------------
    def _days(self) -> list[dt.date]:
        return days_of(self.data.hood.times().tolist(), default=self.data.now)

    def _draw_timeline(self) -> None:
        ts = self.data.hood.times().tolist()
        marks = [self.data.hood.time_of(u) for u in self.shown[:50]]
        self.timeline.value = ('<div class="ak-note">turns over time (red: shown in the graph)'
                               "</div>" + timeline_svg(ts, marks=marks))

    def set_filters(self, *, start: dt.date | str | None = None, end: dt.date | str | None = None,
                    community: int | None = -1) -> None:
        """Restrict the graph to turns between ``start`` and ``end`` (dates, inclusive) and to
        one community (``None`` = all; the default ``-1`` leaves it as it is). Picking a
        community shows its :data:`COMMUNITY_TOP` strongest turns in the time range."""
        opts = list(self.time_range.options)
        days = [d for _, d in opts]
        a = days.index(as_date(start)) if start is not None else self.time_range.index[0]
        b = days.index(as_date(end)) if end is not None else self.time_range.index[1]
        self.time_range.index = (a, b)
        if community != -1:
            self.community.value = ALL if community is None else community

    def _show_range(self) -> None:
        lo, hi = self.time_range.value
        self.time_label.value = note(f"{lo.isoformat()} – {hi.isoformat()}")

    def _passes(self, uids: list[str]) -> list[str]:
        lo, hi = self.time_range.value
        self._show_range()
        start = dt.datetime.combine(lo, dt.time(), dt.UTC).timestamp()
        end = dt.datetime.combine(hi, dt.time(), dt.UTC).timestamp() + 86400.0
        comm = self.data.communities()
        want = None if self.community.value == ALL else self.community.value
        out = []
        for u in uids:
            t = self.data.hood.time_of(u)
            if start <= t < end and (want is None or comm.get(u) == want):
                out.append(u)
        return out

    def _on_community(self, change: dict[str, Any]) -> None:
        """A community picked: show its strongest turns in the time range (the opened turn
        stays open only if it is one of them)."""
        c = change["new"]
        if c != ALL:
            members = self._passes([u for u, k in self.data.communities().items() if k == c])
            strength = self.data.strength(members)
            order = sorted(range(len(members)), key=lambda i: (-float(strength[i]), members[i]))
            self.shown = [members[i] for i in order[:min(COMMUNITY_TOP, self.view.cap)]]
            in_all = sum(1 for k in self.data.communities().values() if k == c)
            self._picked = (list(self.shown), len(members), in_all)
            if self.opened not in self.shown:
                self.opened = None
                self.detail.value = note(f"community {c}: its {len(self.shown)} strongest "
                                         "turns; click one to read it")
        self._redraw()

    # -- graph -----------------------------------------------------------------------------
    def _add(self, uids: list[str]) -> int:
        have = set(self.shown)
        want = [u for u in dict.fromkeys(uids) if u not in have]
        new = want[: max(0, self.view.cap - len(self.shown))]
        self.shown += new
        if len(new) < len(want):
            self.status.value = note(f"graph is at its cap of {self.view.cap} nodes; clear it "
                                     "or raise cap= to see more")
        return len(new)

    def _redraw(self) -> None:
        if self._hold:
            return
        vis = self._passes(self.shown)
        nodes = self.data.nodes(vis)
        new = set(self.new)
        for d in nodes:
            if d["id"] == self.opened:
                d["borderWidth"] = 5
                d["color"] = {**d["color"], "border": FOCUS_RING}
            elif d["id"] in new:
                d["borderWidth"] = 4
                d["color"] = {**d["color"], "border": NEW_RING}
                d["title"] += f"<br><b>new</b> since {esc(self._new_since)}"
        hidden = len(self.shown) - len(vis)
        edges = self.data.edges_among(vis, per_node=EDGES_PER_NODE)
        self.view.set_graph(nodes, edges)
        n_new = len(new.intersection(vis) - {self.opened})
        self.view.legend = turn_legend(nodes, edges) + (
            [legend_entry("ring", FOCUS_RING, "the open turn")] if self.opened in vis else []
        ) + ([legend_entry("ring", NEW_RING, f"new since {self._new_since} ({n_new})")]
             if n_new else [])
        self.view.caption = self._caption(vis, hidden)
        self._draw_timeline()

    def _caption(self, vis: list[str], hidden: int) -> str:
        """What the picture shows of what the memory holds, in counts of this read."""
        p = self._picked
        if p is not None and p[0] == self.shown:
            in_range, in_all = p[1], p[2]
            what = (f"community {self.community.value}: its {len(vis)} strongest turns, of "
                    f"its {in_all}" if in_range == in_all else
                    f"community {self.community.value}: its {len(vis)} strongest turns, of "
                    f"its {in_range} in the time range ({in_all} in all)")
        else:
            what = f"{len(vis)} turns shown"
        return (f"{what} — the memory holds {len(self.data.uids)} turns"
                + (f" ({hidden} shown hidden by the time / community filter)" if hidden else "")
                + f"; colour = community, size = strength, edges = the {EDGES_PER_NODE} "
                  "strongest co-activation edges per turn")

    def clear(self) -> None:
        """Empty the graph."""
        self.shown = []
        self.opened = None
        self._redraw()

    def expand(self, uids: list[str] | None = None, *, limit: int = EXPAND_STEP) -> list[str]:
        """Add up to ``limit`` COACT neighbours of ``uids`` (default: the selection, else the
        opened node), strongest edges first, within the cap. Returns the added uids."""
        base = list(uids if uids is not None else (self.view.selected or
                                                   ([self.opened] if self.opened else [])))
        if not base:
            self.status.value = note("select a node (or open one) to expand around it",
                                     error=True)
            return []
        room = max(0, self.view.cap - len(self.shown))
        new = self.data.neighbours(base, exclude=self.shown, limit=min(limit, room))
        self._add(new)
        self._redraw()
        if room == 0:
            self.status.value = note(f"graph is at its cap of {self.view.cap} nodes", error=True)
        else:
            self.status.value = note(f"added {len(new)} neighbours of {len(base)} node(s)")
        return new

    # -- search ----------------------------------------------------------------------------
    def search(self, text: str) -> pd.DataFrame:
        """Dense and lexical (BM25) hits for ``text`` (``mem.search``) as a DataFrame (uid,
        dense_rank, cos_msg, bm25_rank, bm25, rrf, found_by, time, text), ordered by
        reciprocal-rank fusion (k = 60; ties: the lexical hit first); the hits fill the
        list and the graph."""
        text = text.strip()
        self.search_box.value = text
        if not text:
            self.status.value = note("type something to search for", error=True)
            return self.hits
        try:
            found = self._search_hits(text)
        except AkashaError as err:
            self.status.value = note(str(err), error=True)
            return self.hits
        df = self.hits
        self.shown = []
        self._add(list(df["uid"]))
        self._redraw()
        self.status.value = note(f"{len(df)} hits for {text!r}: {found.n_dense} by meaning, "
                                 f"{found.n_lexical} messages by words "
                                 f"({', '.join(found.terms) or 'no usable terms'})")
        return df

    def _search_hits(self, text: str) -> Any:
        """Fill :attr:`hits` and the hit list with ``mem.search(text)`` at this read's time
        (an empty ``text``: empty them); returns what ``mem.search`` found (None)."""
        self._query = text
        if not text:
            self.hits = pd.DataFrame()
            self.results.options = []
            return None
        found = self.mem.search(text, now=self.data.now)
        df = found.frame.drop(columns=["ts"])
        df.insert(len(df.columns) - 1, "time", [iso(t) for t in found.frame["ts"]])
        self.hits = df
        self.results.options = [
            (f"[{r.found_by}] {r.time} · {short(r.text, 70)}", r.uid) for r in df.itertuples()]
        return found

    def _on_result(self, change: dict[str, Any]) -> None:
        if change["new"]:
            self.view.select([change["new"]])
            self._show_detail(change["new"])

    def show_session(self, session: str) -> list[str]:
        """Show the turns of ``session`` (in time order) in the graph."""
        uids = self.data.hood.session_nodes(session)
        if uids is None:
            self.status.value = note(f"no session {session!r}", error=True)
            return []
        self.shown = []
        self._add(uids)
        self._redraw()
        self.status.value = note(f"session {session}: {len(uids)} turns")
        return uids

    # -- open a node -----------------------------------------------------------------------
    def _open_selected(self) -> None:
        sel = self.view.selected or ([self.results.value] if self.results.value else [])
        if not sel:
            self.status.value = note("select a node or a hit first", error=True)
            return
        self.open_node(sel[0])

    def open_node(self, uid: str) -> None:
        """Open turn ``uid``: its verbatim messages, state, anchors and strongest neighbours
        in the side panel; it and its neighbours in the graph."""
        try:
            self.mem.node(uid)
        except AkashaError as err:
            self.status.value = note(str(err), error=True)
            return
        self.opened = uid
        self._add([uid, *self.data.neighbours([uid], exclude=self.shown,
                                              limit=NEIGHBOURS_ON_OPEN)])
        self._redraw()
        self.view.select([uid])
        self._show_detail(uid)

    def _show_detail(self, uid: str) -> None:
        self._detail_uid = uid
        self.detail.value = turn_detail_html(self.mem, self.data, uid)

    def _on_select(self, ids: list[str]) -> None:
        if ids:
            self._show_detail(ids[0])
        self._show_selection()

    def _show_selection(self) -> None:
        df = self.selection_df()
        self.selection.value = ("" if df.empty else '<div class="ak-note">selection '
                                "(selection_df())</div>" + frame_html(df.drop(columns=["ts"])))

    def selection_df(self) -> pd.DataFrame:
        """The selected turns as a DataFrame: uid, session, ts, time, community,
        strength_eff, sigma, recall_count, assistant_only, text."""
        cols = ["uid", "session", "ts", "time", "community", "strength_eff", "sigma",
                "recall_count", "assistant_only", "text"]
        return pd.DataFrame(self.data.node_table(list(self.view.selected)), columns=cols)


def _clock(t: float) -> str:
    """A wall-clock time as the notebook's clock reads it, e.g. ``12:01:05``."""
    return dt.datetime.fromtimestamp(t).strftime("%H:%M:%S")
