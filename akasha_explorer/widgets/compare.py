"""CompareMethods — one query through context / akasha / bm25 / dense / rrf / ppr side
by side: the rank of each item in each method (a cell per method, darker = better), and
for each item each method's own evidence for where it put it — Akasha's source and graph
path (or where the turn fell out of the recall), the query's words its messages hold, how
close it is in meaning (``mem.compare_methods``, a dry run). The turns labelled for the
query (✓ / ✗) are marked and always listed, wherever they rank — "why did it not recall
X?" — and the label bar writes new ones.

What a person reads is what the agent would read: the caption names the list the agent
receives (the ``context`` column: the context block, ``[1]``, ``[2]``, … in order) and
says the other columns are only rankings to compare with; a cell is a rank only where the
method ranked the turn itself (a gap says why: "no query word", "not sent", …); and a turn
whose message the context withholds (flagged as injection, or failing its sha256 check)
shows the same ``[withheld: …]`` marker, never the text.

>>> CompareMethods.__mro__[1].__name__
'VBox'
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

import ipywidgets as W
import pandas as pd

from ..analysis.methods import EVAL_METHODS, UNRANKED
from ..errors import AkashaError
from ._html import STYLE, esc, note, short
from ._inputs import read_query
from .labelbar import LabelBar

if TYPE_CHECKING:
    from ..protocol import MemoryAPI

__all__ = ["HEADS", "CompareMethods", "rank_table_html", "receives_line"]

log = logging.getLogger(__name__)


HEADS = {"context": "context = what the agent receives"}
"""Column titles that say more than the method's name."""


def _cell(rank: Any, k: int, method: str = "") -> str:
    if rank is None or pd.isna(rank):
        gap = UNRANKED.get(method, "")
        return (f'<td class="ak-rank" style="background:#f4f4f4;color:#aaa;font-size:11px" '
                f'title="{esc(method)} did not rank it: {esc(gap or "no rank")}">'
                f"– {esc(gap)}</td>")
    r = int(rank)
    if r <= k:
        shade = 0.25 + 0.75 * (k - r + 1) / k
        fg = "#fff" if shade > 0.6 else "#222"
        return (f'<td class="ak-rank" style="background:rgba(44,160,44,{shade:.2f});'
                f'color:{fg}"><b>{r}</b></td>')
    return f'<td class="ak-rank" style="background:#f4f4f4;color:#888">{r}</td>'


def rank_table_html(frame: pd.DataFrame, methods: list[str], k: int,
                    texts: dict[str, str] | None = None, marks: dict[str, str] | None = None
                    ) -> str:
    """The side-by-side table as escaped HTML: one row per item — its text first (one line,
    the whole text on hover; a withheld message as its ``[withheld: …]`` marker, the row
    marked ⚠), then one coloured rank cell per method (within the top ``k``: green, darker
    = better; a method that did not rank the item says so, :data:`UNRANKED`), the label
    mark, the ``why`` (each method's evidence) and the item's id.

    >>> f = pd.DataFrame({"uid": ["<a>"], "rank_dense": [1], "rank_bm25": [None],
    ...                   "why": ["top 10 in dense, not bm25"]})
    >>> s = rank_table_html(f, ["dense", "bm25"], 10)
    >>> "&lt;a&gt;" in s and "<b>1</b>" in s and "<a>" not in s and "no query word" in s
    True
    """
    texts, marks = texts or {}, marks or {}
    head = ("<th>text</th>" + "".join(f"<th>{esc(HEADS.get(m, m))}</th>" for m in methods)
            + "<th>label</th><th>why they disagree (each method's evidence)</th>"
            "<th>item</th>")
    body = []
    for r in frame.to_dict(orient="records"):
        u = str(r["uid"])
        cells = "".join(_cell(r.get(f"rank_{m}"), k, m) for m in methods)
        text = texts.get(u, "")
        held = str(r.get("withheld") or "")
        flag = (f'<span class="ak-withheld" title="withheld from the agent\'s context: '
                f'{esc(held)}">⚠ </span>' if held else "")
        body.append(f'<tr><td title="{esc(text)}" style="min-width:220px;max-width:320px;'
                    f'overflow:hidden;text-overflow:ellipsis;white-space:nowrap">'
                    f"{flag}{esc(short(text, 40))}</td>{cells}<td>{esc(marks.get(u, ''))}</td>"
                    f'<td style="white-space:normal;min-width:360px">{esc(r.get("why") or "")}'
                    f"</td><td>{esc(u)}</td></tr>")
    return (f'<div class="ak-table" style="max-height:560px"><table><thead><tr>{head}</tr>'
            f'</thead><tbody>{"".join(body)}</tbody></table></div>')


def receives_line(frame: pd.DataFrame, methods: list[str]) -> str:
    """The caption that says which list the agent receives and how the others relate to it.

    >>> f = pd.DataFrame({"uid": ["a", "b"], "rank_context": [1, None],
    ...                   "withheld": ["flagged as injection", ""]})
    >>> print(receives_line(f, ["context", "dense"]))  # doctest: +NORMALIZE_WHITESPACE
    The agent receives the context column: its context block, [1], [2], … in that order
    (the first block, then ripple, then the other activated turns); 1 of these rows are
    sent. The other columns rank the same turns for comparison; the agent reads none of
    them. A gap means the method did not rank the turn (dense: every turn is ranked).
    1 row holds a message the context withholds (flagged as injection): its text is
    withheld here too.
    """
    if "context" in methods and "rank_context" in frame:
        sent = int(frame["rank_context"].notna().sum())
        out = ("The agent receives the context column: its context block, [1], [2], … in "
               "that order (the first block, then ripple, then the other activated turns); "
               f"{sent} of these rows are sent. The other columns rank the same turns for "
               "comparison; the agent reads none of them.")
    else:
        out = ("The agent receives the context block (pick the context method to see it); "
               "these columns only rank the same turns for comparison.")
    out += (" A gap means the method did not rank the turn ("
            + ", ".join(f"{m}: {UNRANKED[m]}" if m in UNRANKED else f"{m}: every turn is ranked"
                        for m in methods if m != "context") + ").")
    held = frame.loc[frame["withheld"] != "", "withheld"] if "withheld" in frame else []
    if len(held):
        out += (f" {len(held)} row{'s hold' if len(held) > 1 else ' holds'} a message the "
                f"context withholds ({'; '.join(sorted(set(held)))}): "
                f"{'their' if len(held) > 1 else 'its'} text is withheld here too.")
    return out


class CompareMethods(W.VBox):
    """One query, every recall method, side by side (see the module docstring).

    Parameters
    ----------
    mem
        An open :class:`~akasha_explorer.memory.Memory` or a served store.
    query
        A query to compare right away.
    now
        Time of the recalls: ``"last"`` (default), ``"now"``, ISO 8601 or epoch seconds.
    k
        The cut-off: an item is "in" a method when its rank is at most ``k``.

    Public parts for scripting and tests: :attr:`query`, :attr:`when`, :attr:`k`,
    :attr:`methods`, :attr:`run_button`, :attr:`result` (the frame
    ``mem.compare_methods`` returned), :attr:`labels`; :meth:`run`, :meth:`frame`.
    """

    def __init__(self, mem: MemoryAPI, *, query: str = "", now: str | float = "last",
                 k: int = 10) -> None:
        self.mem = mem
        self.result: pd.DataFrame | None = None
        self.query = W.Text(value=query, placeholder="a query, e.g. Where does Lan live?",
                            description="query", layout=W.Layout(width="55%"))
        self.when = W.Text(value=str(now), description="now", layout=W.Layout(width="25%"))
        self.k = W.BoundedIntText(value=int(k), min=1, max=100, description="top k",
                                  layout=W.Layout(width="15%"))
        self.methods = W.SelectMultiple(options=list(EVAL_METHODS), value=list(EVAL_METHODS),
                                        description="methods", rows=len(EVAL_METHODS))
        self.run_button = W.Button(description="Compare (dry run)", button_style="primary",
                                   icon="columns", layout=W.Layout(width="auto"))
        self.summary = W.HTML()
        self.table = W.HTML(layout=W.Layout(width="100%"))
        self.table.add_class("ak-wide")
        self.labels = LabelBar(mem, lambda: self.query.value, on_change=self._redraw)
        self.status = W.HTML()
        self.run_button.on_click(lambda _b: self.run())
        super().__init__([
            W.HTML(STYLE),
            W.HBox([self.query, self.when, self.k]),
            W.HBox([self.methods, self.run_button]),
            self.summary, self.table, self.labels, self.status,
        ])
        if query:
            self.run()
        else:
            self.status.value = note("type a query and press Compare; nothing is written")

    def run(self, query: str | None = None, now: str | float | None = None
            ) -> pd.DataFrame | None:
        """Compare the methods on ``query`` (default: the query box); returns the frame."""
        methods = list(self.methods.value)
        try:
            text, when = read_query(self.mem, self.query, self.when, query, now)
            if not methods:
                raise AkashaError("pick at least one method")
            labelled = [r.node for r in self.mem.labels(text)]
            self.result = self.mem.compare_methods(text, now=when, methods=methods,
                                                   k=int(self.k.value), include=labelled)
        except AkashaError as err:
            self.status.value = note(str(err), error=True)
            return None
        self._redraw()
        self.status.value = note(f"{len(self.result)} items in some method's top "
                                 f"{self.k.value}; every recall was a dry run")
        return self.result

    def _redraw(self) -> None:
        f = self.result
        if f is None:
            return
        texts = dict(zip(f["uid"], f["text"], strict=True)) if "text" in f else {}
        methods = [m for m in self.methods.value if f"rank_{m}" in f]
        marks = self.labels.marks()
        k = int(self.k.value)
        agree = int((f["in_top"] == len(methods)).sum()) if "in_top" in f else 0
        n_labels = sum(1 for m in marks.values() if m == "✓")
        found = {m: sum(1 for u, mk in marks.items() if mk == "✓" and u in set(
            f.loc[f[f"rank_{m}"] <= k, "uid"])) for m in methods}
        found_line = (" · labelled ✓ in the top k: " + ", ".join(
            f"{m} {n}/{n_labels}" for m, n in found.items()) if n_labels else "")
        self.summary.value = (f'<div class="ak-caption">{esc(receives_line(f, methods))}</div>'
                              f'<div class="ak-caption">{len(f)} items: every method agrees '
                              f"on {agree}, disagrees on {len(f) - agree}{esc(found_line)}</div>")
        self.table.value = rank_table_html(f, methods, k, texts, marks)
        self.labels.offer([(u, texts.get(u, "")) for u in f["uid"]])

    def frame(self) -> pd.DataFrame:
        """The comparison on screen (a copy of :attr:`result`: each item's text as the
        agent's context shows it, withheld messages as their marker)."""
        return pd.DataFrame() if self.result is None else self.result.copy()
