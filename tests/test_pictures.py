"""The pictures are legible, measured in a real browser (Debian's Chromium via Playwright,
every request but the page's own aborted): the graph view's own JavaScript hosted with a
stand-in for the anywidget model that Python's traits are pushed into, in the order the
widget would sync them.

- the RecallStepper keeps one zoom and one layout for a recall: the scale, the view's
  centre and the position of every node are the same at every stage;
- node discs stay under a cap on screen and inside the canvas; every drawn label lies
  inside the canvas and no two overlap (read from vis-network's own label boxes, not from our declutter);
- every colour a view draws (fills, rings, halos, edges) and its sizes are named by a
  legend in the page, and no two label boxes intersect at all (notebook 01's explorer
  after searching 阿岚, notebook 04's community view, stage 2b of the stepper);
- the panels' tables show the text column first, at least 14em wide, one line per row.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

import akasha_explorer as ak
from akasha_explorer.widgets import (
    CommunitiesPanel,
    MemoryExplorer,
    RecallStepper,
    TimeTravelPanel,
)
from akasha_explorer.widgets._html import STYLE
from akasha_explorer.widgets.canvas import MAX_EDGE_WIDTH, MAX_NODE_SIZE, vis_source
from akasha_explorer.widgets.stages import STAGES

from .browser import OfflinePage

pytestmark = pytest.mark.browser

QUERY = "最近手指的伤怎么样了"
MAX_ZOOM = 1.3  # canvas.js
WIDTH, HEIGHT = 900, 460






class Host(OfflinePage):
    LOCAL = ("file:", "blob:", "data:", "about:")


HOST = (f'<!doctype html><meta charset="utf-8"><body style="margin:0">{STYLE}'
        f'<div id="graph" style="width:{WIDTH}px"></div>'
        f'<div id="table" style="width:{WIDTH}px"></div></body>')

RENDER = """async ([esm, state]) => {
    const handlers = {};
    const model = { get: k => state[k], set: (k, v) => { state[k] = v; }, save_changes() {},
                    send() {}, on(ev, cb) { (handlers[ev] ||= []).push(cb); }, off() {} };
    window.__push = (key, value) => {
        state[key] = value;
        for (const cb of handlers['change:' + key] || []) cb();
    };
    const url = URL.createObjectURL(new Blob([esm], {type: 'text/javascript'}));
    const mod = await import(url);
    mod.default.render({model, el: document.getElementById('graph')});
}"""

MEASURE = """async () => {
    await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
    const root = document.querySelector('.ak-graph');
    const net = root.akashaNetwork;
    const c = root.querySelector('canvas').getBoundingClientRect();
    const s = net.getScale();
    const nodes = {};
    for (const id of net.body.nodeIndices) {
        const n = net.body.nodes[id];
        const p = net.canvasToDOM({x: n.x, y: n.y});
        let label = null;
        if (n.options.label) {
            const z = n.labelModule.size;
            const a = net.canvasToDOM({x: z.left, y: z.top});
            const b = net.canvasToDOM({x: z.left + z.width, y: z.top + z.height});
            label = [a.x, a.y, b.x, b.y];
        }
        nodes[id] = {x: p.x, y: p.y, r: n.options.size * s, label};
    }
    return {scale: s, view: net.getViewPosition(), width: c.width, height: c.height, nodes};
}"""


class View:
    """A GraphCanvas's front end in the page, fed the widget's traits."""

    def __init__(self, host: Host, canvas: Any) -> None:
        self.page = host.page
        self.canvas = canvas
        self.sent: dict[str, Any] = {}
        esm = (Path(ak.__file__).parent / "widgets" / "canvas.js").read_text("utf-8")
        state = {"vis_source": vis_source(), "selected": [], "drawn": 0, **self._traits()}
        self.sent = dict(state)
        css = (Path(ak.__file__).parent / "widgets" / "canvas.css").read_text("utf-8")
        self.page.add_style_tag(content=css)  # anywidget adds the widget's _css so
        self.page.evaluate(RENDER, [esm, state])
        self.page.wait_for_function("() => document.querySelector('.ak-graph')?.dataset.scale")

    def _traits(self) -> dict[str, Any]:
        c = self.canvas
        return {"nodes": list(c.nodes), "edges": list(c.edges), "caption": c.caption,
                "legend": list(c.legend),
                "height": c.height, "fit_token": c.fit_token, "fit_ids": list(c.fit_ids)}

    def sync(self) -> dict[str, Any]:
        """Push what changed (edges emptied first, as set_graph does), then measure."""
        now = self._traits()
        order = ["nodes", "edges", "caption", "legend", "height", "fit_ids", "fit_token"]
        if now["nodes"] != self.sent["nodes"]:
            self.page.evaluate("([k, v]) => window.__push(k, v)", ["edges", []])
        for k in order:
            if now[k] != self.sent.get(k):
                self.page.evaluate("([k, v]) => window.__push(k, v)", [k, now[k]])
        self.sent.update(now)
        return self.page.evaluate(MEASURE)


def _overlap(a: list[float], b: list[float]) -> bool:
    return min(a[2], b[2]) - max(a[0], b[0]) > 1 and min(a[3], b[3]) - max(a[1], b[1]) > 1


def _legible(m: dict[str, Any]) -> list[list[float]]:
    """Every disc under the cap and inside the canvas; every drawn label inside the canvas,
    none overlapping."""
    boxes = []
    for uid, n in m["nodes"].items():
        assert n["r"] <= MAX_NODE_SIZE * MAX_ZOOM + 0.01, (uid, n["r"])
        assert n["r"] - 1 <= n["x"] <= m["width"] - n["r"] + 1, (uid, n)
        assert n["r"] - 1 <= n["y"] <= m["height"] - n["r"] + 1, (uid, n)
        if n["label"] is not None:
            x0, y0, x1, y1 = n["label"]
            assert x0 >= -1 and y0 >= -1 and x1 <= m["width"] + 1 and y1 <= m["height"] + 1, (
                uid, n["label"], m["width"], m["height"])
            boxes.append(n["label"])
    for i, a in enumerate(boxes):
        assert not any(_overlap(a, b) for b in boxes[i + 1:]), a
    return boxes


def test_stepper_keeps_one_zoom_and_one_layout_and_stays_legible(ro_mem: ak.Memory,
                                                                  browser: Any) -> None:
    s = RecallStepper(ro_mem, query=QUERY)
    s.view.height = f"{HEIGHT}px"
    host = Host(browser)
    host.page.set_content(HOST)
    view = View(host, s.view)
    first = None
    for stage in STAGES:
        s.goto(stage)
        m = view.sync()
        assert len(m["nodes"]) > 40
        boxes = _legible(m)
        assert 3 <= len(boxes) <= 12, stage  # labels for the top items only
        if first is None:
            first = m
            continue
        assert m["scale"] == pytest.approx(first["scale"], abs=1e-9), stage
        assert m["view"] == pytest.approx(first["view"], abs=1e-6), stage
        for uid, n in m["nodes"].items():  # every node stays where it was
            assert (n["x"], n["y"]) == pytest.approx(
                (first["nodes"][uid]["x"], first["nodes"][uid]["y"]), abs=0.01), (stage, uid)
    assert first is not None and first["scale"] <= MAX_ZOOM
    # write-back: thin edges, one line per pair, the two directions of A→T / T→A curved apart
    edges = s.view.edges
    assert edges and max(e["width"] for e in edges) <= MAX_EDGE_WIDTH
    pairs = [tuple(sorted((e["from"], e["to"]))) for e in edges
             if e.get("arrows", {}).get("to", {}).get("enabled") is False]
    assert pairs and len(pairs) == len(set(pairs))
    ends = {(e["from"], e["to"]) for e in edges}
    both = [e for e in edges if (e["to"], e["from"]) in ends]
    assert both and all(e["smooth"]["type"] == "curvedCW" for e in both)
    assert host.blocked == [] and host.errors == []
    host.ctx.close()


def test_explorer_and_communities_views_are_legible(ro_mem: ak.Memory, browser: Any) -> None:
    x = MemoryExplorer(ro_mem)
    x.view.height = f"{HEIGHT}px"
    x.search("换药 引流条")
    host = Host(browser)
    host.page.set_content(HOST)
    view = View(host, x.view)
    _legible(view.sync())
    x.set_filters(community=0)
    m = view.sync()
    assert 10 <= len(m["nodes"]) <= 30
    _legible(m)
    assert "strongest" in x.view.caption and "hidden" not in x.view.caption
    host.ctx.close()


IN_USE = """() => {
    const root = document.querySelector('.ak-graph');
    const net = root.akashaNetwork;
    const used = [];
    const sizes = new Set();
    for (const id of net.body.nodeIndices) {
        const o = net.body.nodes[id].options;
        sizes.add(o.size);
        used.push([o.shape === 'dot' ? 'fill' : 'marker', o.color.background]);
        if (o.borderWidth >= 2) used.push(['ring', o.color.border]);
        if (o.shadow && o.shadow.enabled) used.push(['halo', o.shadow.color]);
    }
    for (const id of net.body.edgeIndices) used.push(['edge', net.body.edges[id].options.color.color]);
    const box = root.getBoundingClientRect();
    const legend = [...root.querySelectorAll('.ak-graph-legend .ak-legend-item')].map(i => {
        const r = i.getBoundingClientRect();
        const sw = i.querySelector('.ak-swatch').getBoundingClientRect();
        return {kind: i.dataset.kind, colour: i.dataset.colour, text: i.textContent.trim(),
                swatch: sw.width >= 10 && (sw.height >= 10 || i.dataset.kind === 'edge'),
                px: parseFloat(getComputedStyle(i).fontSize),
                inside: r.width > 0 && r.left >= box.left && r.right <= box.right + 0.5};
    });
    return {used: used.map(([k, c]) => [k, String(c).toLowerCase()]), sizes: sizes.size, legend};
}"""


def _touching(a: list[float], b: list[float]) -> bool:
    return min(a[2], b[2]) > max(a[0], b[0]) and min(a[3], b[3]) > max(a[1], b[1])


def _explained(host: Host) -> dict[str, Any]:
    """Every (kind, colour) drawn has a legend entry of that kind and colour, with text,
    readable and inside the view; a size entry when the discs differ in size."""
    got = host.page.evaluate(IN_USE)
    named = {(e["kind"], e["colour"]) for e in got["legend"]}
    missing = sorted({tuple(u) for u in got["used"]} - named)
    assert missing == [], (missing, got["legend"])
    assert all(e["text"] and e["px"] >= 11 and e["inside"] and e["swatch"]
               for e in got["legend"]), got["legend"]
    if got["sizes"] > 1:
        assert any(e["kind"] == "size" and "size" in e["text"] for e in got["legend"])
    return got


def test_notebook_graph_views_name_every_colour_and_no_labels_touch(ro_mem: ak.Memory,
                                                                     browser: Any) -> None:
    x = MemoryExplorer(ro_mem)
    x.search("阿岚")                                   # notebook 01, searching 阿岚
    panel = CommunitiesPanel(ro_mem)                   # notebook 04's community view
    s = RecallStepper(ro_mem, query=QUERY)
    s.goto("graph_expand")                             # stage 2b
    for canvas, width in ((x.view, 560), (panel.view, 560), (s.view, 620), (x.view, 900)):
        canvas.height = f"{HEIGHT}px"
        host = Host(browser)
        host.page.set_content(HOST.replace(f"width:{WIDTH}px", f"width:{width}px", 1))
        m = View(host, canvas).sync()
        boxes = [n["label"] for n in m["nodes"].values() if n["label"] is not None]
        assert len(boxes) >= 3
        touching = sum(_touching(a, b) for i, a in enumerate(boxes) for b in boxes[i + 1:])
        assert touching == 0, canvas.caption
        got = _explained(host)
        assert len({c for k, c in got["used"] if k == "fill"}) >= 2 or canvas is panel.view
        assert host.errors == [] and host.blocked == []
        host.ctx.close()
    assert "one colour" in panel.view.caption and "colour = community" not in panel.view.caption


def test_time_travel_shows_dated_ticks_and_names_its_colours(ro_mem: ak.Memory,
                                                             browser: Any) -> None:
    t = TimeTravelPanel(ro_mem, query="和阿岚打杀戮尖塔，A10 过了吗")
    t.go(-30)
    host = Host(browser)
    host.page.set_content(HOST)
    m = View(host, t.view).sync()
    boxes = [n["label"] for n in m["nodes"].values() if n["label"] is not None]
    assert sum(_touching(a, b) for i, a in enumerate(boxes) for b in boxes[i + 1:]) == 0
    shown = host.page.evaluate("""() => {
        const net = document.querySelector('.ak-graph').akashaNetwork;
        return net.body.nodeIndices.map(id => net.body.nodes[id].options.label || '');
    }""")
    dates = [x for x in shown if re.fullmatch(r"\d{4}-\d{2}-\d{2}", x)]
    assert len(dates) >= 3, shown                    # the axis says when, drawn on the canvas
    _explained(host)
    assert host.errors == [] and host.blocked == []
    host.ctx.close()


TABLE = """() => {
    const t = document.querySelector('#table table');
    const box = document.querySelector('#table .ak-table').getBoundingClientRect();
    const heads = [...t.querySelectorAll('thead th')].map(h => h.textContent);
    const k = heads.indexOf('text');
    const rows = [...t.querySelectorAll('tbody tr')];
    const cell = rows[0].children[k].getBoundingClientRect();
    return {heads, k, width: cell.width, right: cell.right, visible: box.right,
            tallest: Math.max(...rows.map(r => r.getBoundingClientRect().height))};
}"""


def test_tables_show_the_text_first_wide_and_on_one_line(ro_mem: ak.Memory, browser: Any) -> None:
    s = RecallStepper(ro_mem, query=QUERY)
    x = MemoryExplorer(ro_mem)
    x.search("换药 引流条")
    x.view.select(x.shown[:5])
    host = Host(browser)
    host.page.set_content(HOST)
    tables = []
    for stage in STAGES:
        s.goto(stage)
        tables.append(s.table.value)
    tables.append(x.selection.value)
    for html in tables:
        host.page.evaluate("h => { document.getElementById('table').innerHTML = h; }", html)
        t = host.page.evaluate(TABLE)
        assert t["k"] == 0, t["heads"]            # the text column comes first
        assert t["width"] >= 14 * 12 - 1          # at least 14em of 12 px
        assert t["right"] <= t["visible"]         # not behind a sideways scroll
        assert t["tallest"] <= 30                 # one line per row
    assert host.errors == []
    host.ctx.close()
