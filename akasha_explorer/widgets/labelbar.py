"""LabelBar — label what a panel shows: pick a node, say it should (✓) or should not (✗)
come up for the panel's query, or remove the label. The what-if, time-travel and
compare-methods panels carry one; :meth:`LabelBar.beside` gives one that follows a
RecallStepper or a MemoryExplorer (``VBox([stepper, LabelBar.beside(stepper)])``); any
other panel can build one (``LabelBar(mem, lambda: query)`` and :meth:`LabelBar.offer`).
The only write is ``mem.labels.add`` / ``mem.labels.remove`` behind a button.

>>> LabelBar.__mro__[1].__name__
'HBox'
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import ipywidgets as W

from ..errors import AkashaError
from ._html import esc, note, short

if TYPE_CHECKING:
    from ..protocol import MemoryAPI

__all__ = ["LabelBar"]


class LabelBar(W.HBox):
    """Label nodes for a query (see the module docstring).

    ``query`` returns the query the panel shows; :meth:`offer` fills the node picker with
    ``(uid, text)`` pairs. Public parts: :attr:`node`, :attr:`yes_button`,
    :attr:`no_button`, :attr:`remove_button`, :attr:`status`; :meth:`label`.
    """

    def __init__(self, mem: MemoryAPI, query: Callable[[], str],
                 on_change: Callable[[], object] | None = None) -> None:
        self.mem = mem
        self.query = query
        self.on_change = on_change
        self.node = W.Dropdown(description="label", layout=W.Layout(width="46%"),
                               style={"description_width": "initial"})
        self.yes_button = W.Button(description="✓ should come up", button_style="success",
                                   layout=W.Layout(width="auto"),
                                   tooltip="mem.labels.add(query, node, relevant=True)")
        self.no_button = W.Button(description="✗ should not", button_style="warning",
                                  layout=W.Layout(width="auto"),
                                  tooltip="mem.labels.add(query, node, relevant=False)")
        self.remove_button = W.Button(description="remove label", layout=W.Layout(width="auto"))
        self.status = W.HTML()
        self.items: list[tuple[str, str]] = []
        self.yes_button.on_click(lambda _b: self.label(True))
        self.no_button.on_click(lambda _b: self.label(False))
        self.remove_button.on_click(lambda _b: self.label(None))
        if mem.read_only:
            for b in (self.yes_button, self.no_button, self.remove_button):
                b.disabled = True
                b.tooltip = "the store is open read-only"
        super().__init__([self.node, self.yes_button, self.no_button, self.remove_button,
                          self.status])

    @classmethod
    def beside(cls, panel: Any) -> LabelBar:
        """A label bar that follows ``panel``: a RecallStepper (its query; the nodes of its
        recall, best first) or a MemoryExplorer (its search box; the nodes on its graph),
        refreshed whenever the panel says something new (its ``status``)."""
        mem = getattr(panel, "mem", None)
        if mem is not None and hasattr(panel, "trace") and hasattr(panel, "query"):
            bar = cls(mem, lambda: panel.query.value)

            def items() -> list[str]:
                t = panel.trace
                return [] if t is None else list(dict.fromkeys(
                    t.first_block().uids + t.ranking() + t.dense.uids))
        elif mem is not None and hasattr(panel, "search_box") and hasattr(panel, "view"):
            bar = cls(mem, lambda: panel.search_box.value)

            def items() -> list[str]:
                return [str(n["id"]) for n in panel.view.nodes]
        else:
            raise TypeError(f"LabelBar.beside takes a RecallStepper or a MemoryExplorer, not "
                            f"{type(panel).__name__}; build LabelBar(mem, query) and offer()")
        texts: dict[str, str] = {}

        def follow(_change: object = None) -> None:
            uids = items()
            if uids and not texts:
                texts.update(mem.neighbourhood().texts())
            bar.offer([(u, texts.get(u, "")) for u in uids])

        panel.status.observe(follow, names="value")
        follow()
        return bar

    def offer(self, items: Sequence[tuple[str, str]]) -> None:
        """Offer ``(uid, text)`` pairs in the node picker (the first one chosen)."""
        self.items = list(items)
        marks = self.marks()
        opts = [(f"{marks.get(u, ' ')} {u} · {short(t, 40)}", u) for u, t in items]
        self.node.options = opts
        self.node.value = opts[0][1] if opts else None

    def marks(self) -> dict[str, str]:
        """``uid -> ✓ / ✗`` for the nodes labelled for the current query."""
        q = self.query().strip()
        if not q:
            return {}
        try:
            rows = self.mem.labels(q)
        except AkashaError:
            return {}
        return {r.node: "✓" if r.relevant else "✗" for r in rows}

    def label(self, relevant: bool | None) -> bool:
        """Label the chosen node for the query (``None``: remove its label); True when
        something was written."""
        q, node = self.query().strip(), self.node.value
        if not q or node is None:
            self.status.value = note("recall something first, then pick a node", error=True)
            return False
        try:
            if relevant is None:
                done = bool(self.mem.labels.remove(q, node))
                msg = f"removed the label of {node}" if done else f"{node} had no label"
            else:
                self.mem.labels.add(q, node, relevant)
                done = True
                msg = f"{node} {'should' if relevant else 'should not'} come up for {q!r}"
        except AkashaError as err:
            self.status.value = note(str(err), error=True)
            return False
        self.offer(self.items)
        self.node.value = node
        n = len(self.mem.labels(q))
        self.status.value = (f'<span class="ak-note">{esc(msg)} · {n} label'
                             f'{"s" if n != 1 else ""} for this query</span>')
        if self.on_change is not None:
            self.on_change()
        return done
