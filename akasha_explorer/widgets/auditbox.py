"""The audit-log box shared by the AnchorCurator and ReviewQueue panels: a picker of recent
audit entries, an Undo button and the log as a table. Render-only: it reads
``mem.audit()`` and undoes through ``mem.undo()``, nothing else."""

from __future__ import annotations

from typing import TYPE_CHECKING

import ipywidgets as W
import pandas as pd

from ._html import frame_html, iso

if TYPE_CHECKING:
    from ..protocol import MemoryAPI

__all__ = ["AuditBox"]


class AuditBox:
    """``pick`` (Dropdown of audit uids), ``undo_button`` and ``table`` (HTML)."""

    def __init__(self) -> None:
        self.pick = W.Dropdown(options=[], description="audit", layout=W.Layout(width="70%"))
        self.undo_button = W.Button(description="Undo", icon="undo", button_style="warning")
        self.table = W.HTML(layout=W.Layout(width="100%"))
        self.table.add_class("ak-wide")

    def frame(self, mem: MemoryAPI, limit: int = 50) -> pd.DataFrame:
        """The audit log, newest first: uid, time, actor, action, target, why, undone."""
        rows = mem.audit(limit=limit)
        return pd.DataFrame([{"uid": r.uid, "time": iso(r.ts), "actor": r.actor,
                              "action": r.action, "target": r.target, "why": r.why,
                              "undone": bool(r.undone)} for r in rows],
                            columns=["uid", "time", "actor", "action", "target", "why",
                                     "undone"])

    def refresh(self, mem: MemoryAPI) -> None:
        """Reload the picker and the table from the store's audit log."""
        df = self.frame(mem, 30)
        self.pick.options = [("—", "")] + [
            (f"{r.time} · {r.action} {r.target}" + (" (undone)" if r.undone else ""), r.uid)
            for r in df.itertuples()]
        self.pick.value = ""
        self.table.value = ('<div class="ak-note">audit log (newest first)</div>'
                            + frame_html(df))

    def widget(self) -> W.Widget:
        """The box as laid out in a panel."""
        return W.VBox([W.HBox([self.pick, self.undo_button]), self.table])
