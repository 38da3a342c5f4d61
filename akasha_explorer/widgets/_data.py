"""What the panels draw of a store, as vis-network dicts: node labels and tooltips
(escaped), colour by community, size by strength, COACT edges at a time ``now``.

Everything is read through the Memory's public API — the numbers come from
:meth:`Memory.neighbourhood <akasha_explorer.memory.Memory.neighbourhood>` (a
:class:`~akasha_explorer.analysis.neighbourhood.Neighbourhood`); this module only turns
them into pictures. Nothing here writes to a store. :func:`turn_legend` names what those
pictures' colours and sizes mean.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ..errors import AkashaError
from ._html import (
    community_colour,
    esc,
    frame_html,
    iso,
    kv_html,
    messages_html,
    note,
    short,
    tooltip,
)
from .canvas import EDGE_COLOUR, legend_entry

if TYPE_CHECKING:
    from ..protocol import MemoryAPI

__all__ = ["FOCUS_RING", "NEW_RING", "StoreGraph", "turn_detail_html", "turn_legend"]

log = logging.getLogger(__name__)

FOCUS_RING = "#d62728"
"""Ring of the turn(s) a view is about (the open turn, a surprise's turns)."""

NEW_RING = "#00a86b"
"""Ring of the turns a refresh found new (written since the panel last read the store)."""


def turn_legend(nodes: Sequence[dict], edges: Sequence[dict] = (), *,
                names: dict[int, str] | None = None,
                size: str = "size = strength (decayed, at this time)") -> list[dict[str, str]]:
    """Legend entries for a picture of :meth:`StoreGraph.node` dicts: one per fill colour in
    use, naming the communities drawn in it (``names``: community → a longer name), what
    size means, and the co-activation edges when some are drawn in the default colour.

    >>> [e["text"] for e in turn_legend([{"community": 0, "color": {"background": "#4e79a7"}},
    ...                                  {"community": -1, "color": {"background": "#b0b0b0"}}])]
    ['community 0', 'no community', 'size = strength (decayed, at this time)']
    """
    by_colour: dict[str, list[int]] = {}
    for n in nodes:
        if "community" in n:
            cs = by_colour.setdefault(str(n["color"]["background"]).lower(), [])
            if int(n["community"]) not in cs:
                cs.append(int(n["community"]))
    out = []
    last = 1 << 30  # the unknown (-1) goes last
    for colour, cs in sorted(by_colour.items(),
                             key=lambda kv: min(c if c >= 0 else last for c in kv[1])):
        known = sorted(c for c in cs if c >= 0)
        text = ("community " + ", ".join((names or {}).get(c, str(c)) for c in known)
                if known else "no community")
        out.append(legend_entry("fill", colour, text))
    if nodes:
        out.append(legend_entry("size", "", size))
    if any("color" not in e for e in edges):
        out.append(legend_entry("edge", EDGE_COLOUR, "co-activation (width = weight)"))
    return out


class StoreGraph:
    """The vis-network picture of one store at time ``now`` (default: its newest message).

    ``communities`` maps node uid → community id; when not given they are computed once on
    first use (:meth:`communities`). ``hood`` is the
    :class:`~akasha_explorer.analysis.neighbourhood.Neighbourhood` it draws.
    """

    def __init__(self, mem: MemoryAPI, *, now: float | None = None,
                 communities: dict[str, int] | None = None) -> None:
        self.mem = mem
        self.hood = mem.neighbourhood(now=now, communities=communities)
        self.now = self.hood.now

    @functools.cached_property
    def uids(self) -> frozenset[str]:
        """Every turn the store held when this picture was first asked for them (what a
        panel counts; read on first use: the map never needs every turn's text)."""
        return frozenset(self.hood.texts())

    # -- texts -----------------------------------------------------------------------------
    def texts(self) -> dict[str, str]:
        """Node uid → the text that names it: its first user message, else its first message."""
        return self.hood.texts()

    def text(self, uid: str) -> str:
        """The text that names node ``uid``."""
        return self.hood.text(uid)

    def label(self, uid: str, n: int = 16) -> str:
        """A short canvas label (plain text; vis-network draws it, never parses it)."""
        return short(self.text(uid), n)

    # -- communities -----------------------------------------------------------------------
    def communities(self) -> dict[str, int]:
        """Node uid → Leiden community of the co-activation graph at ``now`` (computed once
        per :class:`StoreGraph`)."""
        return self.hood.communities()

    # -- nodes -----------------------------------------------------------------------------
    def strength(self, uids: Sequence[str]) -> np.ndarray:
        """Decayed strength at ``now`` (0..STRENGTH_CAP) of each node."""
        return self.hood.strength(uids)

    def node(self, uid: str, *, size: float | None = None, extra: Iterable[str] = ()) -> dict:
        """vis-network dict of a node: label, escaped tooltip, community colour, size by
        decayed strength (or ``size``)."""
        i = self.hood.info(uid)
        c, s_eff = i["community"], i["strength_eff"]
        colour = community_colour(c)
        tip = tooltip(uid, f"{iso(i['ts'])} · session {i['session']}",
                      f"community {c if c is not None else '–'} · strength {s_eff:.2f} · "
                      f"σ {i['sigma']:.2f} · recalled {i['recall_count']}×",
                      short(i["text"], 240), *extra)
        return {"id": uid, "label": self.label(uid), "title": tip,
                "size": round(size if size is not None else 6.0 + 6.0 * s_eff, 2),
                "color": {"background": colour, "border": "#555555"},
                "community": -1 if c is None else int(c)}

    def nodes(self, uids: Sequence[str], *, labels: int = 15) -> list[dict]:
        """:meth:`node` for each uid; only the ``labels`` strongest keep a canvas label (the
        rest show theirs on hover), so a big graph stays readable; ``rank`` orders them
        (strongest first) for the view, which hides the lesser of two overlapping labels."""
        out = [self.node(u) for u in uids]
        order = sorted(out, key=lambda d: (-d["size"], d["id"]))
        for k, d in enumerate(order):
            d["rank"] = k
            if k >= labels:
                d["label"] = ""
        return out

    # -- edges -----------------------------------------------------------------------------
    def incident(self, uids: Sequence[str]) -> list[tuple[str, str, float]]:
        """Every alive COACT edge touching ``uids``: (src, dst, w_eff), strongest first."""
        return self.hood.incident(uids)

    def edges_among(self, uids: Sequence[str], *, min_w: float = 0.0,
                    per_node: int | None = None) -> list[dict]:
        """vis-network dicts of the COACT edges between shown nodes (width by w_eff).

        ``per_node`` keeps only each node's strongest edges (the union over nodes), so a
        dense neighbourhood stays readable; None keeps all."""
        return [{"from": a, "to": b, "weight": w,
                 "width": round(0.5 + 1.25 * min(w, 2.0), 2),
                 "title": tooltip(f"{a} → {b}", f"w_eff {w:.3f} at {iso(self.now)}")}
                for a, b, w in self.hood.edges_among(uids, min_w=min_w, per_node=per_node)]

    def neighbours(self, uids: Sequence[str], *, exclude: Iterable[str] = (),
                   limit: int | None = None) -> list[str]:
        """COACT neighbours of ``uids`` (either direction), strongest edge first, without
        ``exclude`` and ``uids`` themselves; at most ``limit``."""
        return self.hood.neighbours(uids, exclude=exclude, limit=limit)

    def node_table(self, uids: Sequence[str], *, groups: Mapping[str, int] | None = None
                   ) -> list[dict[str, Any]]:
        """One plain row per node: uid, session, time, community, strength, σ, recall count,
        text (the machine-readable twin of what the view shows). ``groups`` gives the
        communities the picture colours by (then no node's info is read — on a served
        store that would cost the server a Leiden run)."""
        rows = []
        for u in uids:
            if groups is None:
                i = self.hood.info(u)
                comm = i["community"]
            else:
                st = self.mem.node(u)
                i = {"session": st.session, "ts": st.ts, "sigma": st.sigma,
                     "recall_count": st.recall_count, "assistant_only": st.assistant_only,
                     "strength_eff": float(self.hood.strength([u])[0]),
                     "text": self.hood.text(u)}
                comm = groups.get(u)
            rows.append({"uid": u, "session": i["session"], "ts": i["ts"],
                         "time": iso(i["ts"]),
                         "community": -1 if comm is None else comm,
                         "strength_eff": i["strength_eff"], "sigma": i["sigma"],
                         "recall_count": i["recall_count"],
                         "assistant_only": i["assistant_only"], "text": i["text"]})
        return rows


def turn_detail_html(mem: MemoryAPI, data: StoreGraph, uid: str, *,
                     community: int | None = None) -> str:
    """The side panel of one turn: its verbatim messages (flags shown), state at the
    picture's time, community (``community``: the one the picture colours it by, else
    the store's analytics), the anchors it mentions and its strongest co-activation
    edges — or the error, as a note."""
    try:
        node = mem.node(uid)
        msgs = mem.messages(uid)
        anchors = mem.anchors.of(uid)
    except AkashaError as err:
        return note(str(err), error=True)
    comm = data.communities().get(uid) if community is None else community
    state = kv_html([("session", node.session), ("time", iso(node.ts)),
                     ("community", comm), ("strength (stored)", node.strength),
                     ("strength at now", float(data.strength([uid])[0])),
                     ("resource", node.resource), ("σ salience", node.sigma),
                     ("recalled", node.recall_count)])
    anchor_html = (", ".join(f"{esc(a.name)} <i>({esc(a.kind)}: “{esc(a.surface)}”)</i>"
                             for a in anchors) or "<i>none</i>")
    nb = data.incident([uid])[:12]
    nb_df = pd.DataFrame([{"uid": b if a == uid else a, "dir": "→" if a == uid else "←",
                           "w_eff": w, "text": short(data.text(b if a == uid else a), 50)}
                          for a, b, w in nb], columns=["uid", "dir", "w_eff", "text"])
    return (f"<b>{esc(uid)}</b>" + messages_html(msgs) + state
            + f"<div><b>anchors</b>: {anchor_html}</div>"
            + "<div><b>strongest co-activation edges</b></div>" + frame_html(nb_df))
