"""Screenshots of the panels for ``docs/``: JupyterLab on loopback over a copy of a store,
one notebook that shows each panel in the state a page of the docs describes, run in
headless Chromium; each panel's output is saved as ``<folder>/<name>.png``.

    python -m tests.screenshots STORE [FOLDER]     # FOLDER defaults to docs/

STORE is a built store (``make demo-store`` builds ``demo_store``); it is copied first, so
the screenshots never change it. Chinese text needs a CJK font (``apt-get install
fonts-noto-cjk``; ``.ci/run`` installs it). Look at every picture before committing it.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import nbformat

from .browser import launch, require_chromium
from .test_browser import run_all, serve_lab

QUERY = "最近手指的伤怎么样了"
SETUP = """from akasha_explorer.widgets import (AnchorCurator, CommunitiesPanel, CompareMethods,
                                     MemoryExplorer, MemoryMap, RecallStepper, ReviewQueue,
                                     TimeTravelPanel, WhatIfPanel, notebook_store)
mem = notebook_store(write=True)"""
PANELS = {
    "memory_map": "mm = MemoryMap(mem)\nmm.search('换药 引流条')\nmm",
    "memory_map_recall": f"mr = MemoryMap(mem)\nt = mem.recall({QUERY!r}, now=mem.last_ts() + 3600)\n"
                         "n, _ = mem.add_turn(t.query, '好多了', session='shots', recall=t,\n"
                         "                    ts=t.now + 60)\nmr.refresh()\nmr.show_recall(t.log_uid)\nmr",
    "memory_map_communities": "mc = MemoryMap(mem, level='communities')\nmc",
    "recall_stepper_seeds": f"RecallStepper(mem, query={QUERY!r})",
    "recall_stepper_graph_expand": f"s = RecallStepper(mem, query={QUERY!r})\n"
                                   "s.goto('graph_expand')\ns",
    "recall_stepper_writeback": f"s = RecallStepper(mem, query={QUERY!r})\n"
                                "s.goto('writeback')\ns",
    "memory_explorer": "x = MemoryExplorer(mem)\nx.search('换药 引流条')\n"
                       "x.open_node(x.hits.sort_values('bm25_rank')['uid'].iloc[0])\nx",
    "anchor_curator": "c = AnchorCurator(mem)\nc.anchor_list.value = mem.anchors('岚')[0].uid\nc",
    "review_queue": "ReviewQueue(mem)",
    "communities": "CommunitiesPanel(mem)",
    "whatif": "w = WhatIfPanel(mem, query='和阿岚打杀戮尖塔，A10 过了吗')\n"
              "w.set(GRAPH_LIMIT=0, RWR_STEPS=0)\nw.score()\nw",
    "time_travel": "t = TimeTravelPanel(mem, query='和阿岚打杀戮尖塔，A10 过了吗')\nt.go(-30)\nt",
    "compare_methods": "CompareMethods(mem, query='阿岚的生日是哪天', k=10)",
}
"""File name → the cell that shows that panel."""


def notebook() -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    nb.cells = [nbformat.v4.new_markdown_cell("# screenshots"),
                nbformat.v4.new_code_cell(SETUP)]
    nb.cells += [nbformat.v4.new_code_cell(src) for src in PANELS.values()]
    return nb


def main(store: Path, out: Path) -> list[Path]:
    """Take every screenshot of :data:`PANELS` over a copy of ``store`` into ``out``."""
    require_chromium()
    from playwright.sync_api import sync_playwright

    out.mkdir(parents=True, exist_ok=True)
    written = []
    with tempfile.TemporaryDirectory(prefix="akasha-shots-") as tmp:
        base = Path(tmp)
        nbs = base / "src"
        nbs.mkdir()
        nbformat.write(notebook(), nbs / "shots.ipynb")
        with serve_lab(base / "lab", store, nbs) as url, sync_playwright() as p:
            browser = launch(p)
            page = browser.new_context(viewport={"width": 1400, "height": 2400}).new_page()
            run_all(page, url, "shots.ipynb")
            outputs = page.locator(".jp-OutputArea-output:has(.jupyter-widgets)")
            outputs.nth(len(PANELS) - 1).wait_for(timeout=600_000)
            page.wait_for_function(
                "() => [...document.querySelectorAll('.jp-InputPrompt')]"
                ".every(e => !e.textContent.includes('*'))", timeout=900_000)
            page.wait_for_timeout(3000)  # the graph views fit and draw
            for k, name in enumerate(PANELS):
                el = outputs.nth(k)
                el.scroll_into_view_if_needed()
                page.wait_for_timeout(500)
                path = out / f"{name}.png"
                el.screenshot(path=str(path))
                written.append(path)
            browser.close()
    return written


if __name__ == "__main__":
    args = sys.argv[1:]
    if not args:
        sys.exit(__doc__)
    for p in main(Path(args[0]), Path(args[1]) if len(args) > 1 else Path("docs")):
        print(p)
