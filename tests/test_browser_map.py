"""Notebook 01's map of the whole memory in a real browser (JupyterLab on loopback, headless
Chromium, every request off the machine aborted and recorded):

- the map draws every turn of the demo memory, and no two of its labels overlap;
- a search typed into the map's box lights the hits and their neighbours on the same map:
  no new widget, the front end's graph is not rebuilt (its build count stays 1);
- the time slider dims the turns outside the days it keeps;
- a click on a turn reaches Python: the side panel (made by Python) shows that turn's
  verbatim messages and the selection table (``selection_df()``) lists it;
- no request leaves the machine, and the page raises no error.
"""

from __future__ import annotations

import json

import pytest

from .browser import launch
from .test_browser import (  # noqa: F401  (lab: the JupyterLab fixture)
    ALL_RAN,
    _is_local,
    _shot,
    lab,
    offline_page,
    run_all,
)

pytestmark = pytest.mark.browser

NOTEBOOK = "01_explore_memories.ipynb"
DIM = "#e4e4e4"  # mapview.js DIM

COUNTS = """([root, dim]) => {
  const m = root.akMap, r = m.renderer, g = m.graph();
  let lit = 0, dimmed = 0, all = 0;
  g.forEachNode((n) => {
    all++;
    const d = r.getNodeDisplayData(n);
    if (m.state.lit.has(n)) lit++;
    else if (d.color === dim) dimmed++;
  });
  return {all, lit, dimmed, builds: m.state.builds, labels: m.labelBoxes.length};
}"""

OVERLAPS = """(root) => {
  const b = root.akMap.labelBoxes;
  let n = 0;
  for (let i = 0; i < b.length; i++) for (let j = 0; j < i; j++)
    if (b[i][0] < b[j][2] && b[j][0] < b[i][2] && b[i][1] < b[j][3] && b[j][1] < b[i][3]) n++;
  return n;
}"""

ISOLATED = """(root) => {
  // the turn farthest from the disc of any other (a lit one is drawn larger), well inside
  // the stage, and drawn large enough to be hit (picking reads a framebuffer of half the
  // resolution: a disc of 2 px was missed): a click on its centre cannot miss it
  const m = root.akMap, r = m.renderer, g = m.graph();
  const stage = root.querySelector('.ak-map-stage').getBoundingClientRect();
  const pts = [];
  g.forEachNode((n) => {
    const d = r.getNodeDisplayData(n);
    const v = r.framedGraphToViewport(d);
    pts.push([n, v.x, v.y, r.scaleSize(d.size)]);
  });
  let best = null, gap = -Infinity;
  for (const [n, x, y, own] of pts) {
    if (x < 40 || y < 40 || x > stage.width - 40 || y > stage.height - 40) continue;
    if (own < 4) continue;
    let d = Infinity;
    for (const [o, a, b, size] of pts) {
      if (o !== n) d = Math.min(d, Math.hypot(x - a, y - b) - size);
    }
    if (d > gap) { gap = d; best = [n, stage.left + x, stage.top + y, d]; }
  }
  return best;
}"""


def test_the_map_lights_dims_and_answers_clicks_on_one_map(lab: str) -> None:  # noqa: F811
    from playwright.sync_api import sync_playwright

    requests: list[str] = []
    errors: list[str] = []
    with sync_playwright() as p:
        browser = launch(p)
        try:
            page = offline_page(browser, requests, errors, height=1600)
            run_all(page, lab, NOTEBOOK)
            root = page.locator(".ak-map").first
            root.wait_for(timeout=300_000)
            page.wait_for_function(ALL_RAN, timeout=300_000)
            panel = page.locator(".jp-OutputArea-output", has=root).first
            maps = page.locator(".ak-map").count()
            handle = root.element_handle()
            start = page.evaluate(COUNTS, [handle, DIM])
            # every turn of the demo memory (the notebook's own search lit some of them)
            assert start["all"] >= 300 and start["builds"] == 1, start
            assert page.evaluate(OVERLAPS, handle) == 0

            # search through the map's own box: same map, not rebuilt, other turns lit
            before = json.dumps(page.evaluate("(r) => Object.fromEntries(r.akMap.state.lit)",
                                              handle), ensure_ascii=False, separators=(",", ":"))
            panel.locator("input[placeholder^='search the memory']").fill("换药 引流条")
            panel.locator("button", has_text="Search").first.click()
            panel.locator(".ak-note", has_text="hits for “换药 引流条”").wait_for(timeout=120_000)
            page.wait_for_function(
                "([r, b]) => JSON.stringify(Object.fromEntries(r.akMap.state.lit)) !== b",
                arg=[handle, before], timeout=30_000)
            after = page.evaluate(COUNTS, [handle, DIM])
            assert after["builds"] == 1 and page.locator(".ak-map").count() == maps, after
            assert after["lit"] > 0 and after["dimmed"] > 0, after
            assert after["all"] == start["all"]
            assert page.evaluate(OVERLAPS, handle) == 0
            _shot(panel, "memory_map_search.png")

            # the time slider: lights out, then keep only the first days — the rest is dimmed
            panel.locator("button", has_text="Clear lights").first.click()
            page.wait_for_function("(r) => r.akMap.state.lit.size === 0", arg=handle,
                                   timeout=30_000)
            assert page.evaluate(COUNTS, [handle, DIM])["dimmed"] == 0
            upper = panel.locator(".widget-slider .noUi-handle").last
            box = upper.bounding_box()
            track = panel.locator(".widget-slider .noUi-target").first.bounding_box()
            assert box and track
            page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
            page.mouse.down()
            page.mouse.move(track["x"] + track["width"] * 0.3, box["y"] + box["height"] / 2,
                            steps=8)
            page.mouse.up()
            page.wait_for_function("(r) => r.akMap.state.window !== null", arg=handle,
                                   timeout=30_000)
            windowed = page.evaluate(COUNTS, [handle, DIM])
            assert 0 < windowed["dimmed"] < windowed["all"], windowed
            assert "time window on" in root.locator(".ak-map-status").inner_text()
            _shot(panel, "memory_map_window.png")

            # a click on a turn: Python reads it into the side panel and the selection
            target = page.evaluate(ISOLATED, handle)
            assert target is not None
            uid, x, y, _gap = target
            page.mouse.click(x, y)
            detail = panel.locator(".ak-detail")
            detail.locator("b", has_text=uid).first.wait_for(timeout=30_000)
            assert detail.locator(".ak-msg").count() >= 1
            panel.locator(".ak-note", has_text="selection_df()").wait_for(timeout=30_000)
            assert uid in panel.locator(".ak-table").last.inner_text()
        finally:
            browser.close()
    assert requests and not [u for u in requests if not _is_local(u)], \
        [u for u in requests if not _is_local(u)][:5]
    assert not errors, errors
