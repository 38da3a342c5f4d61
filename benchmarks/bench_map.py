"""Benchmark of the whole-memory map (issue 26): ``MemoryMap`` in Python and its sigma.js
front end (``widgets/mapview.js``) in headless Chromium, on synthetic stores.

    python benchmarks/bench_map.py [--sizes 1000,10000,100000] [--workdir DIR]
                                   [--out benchmarks/results/map.json] [--no-lab]

For each size (1k and 10k turns: turn level; 100k: community level, then a drill-down
into the largest community, then back):

- Python: the first atlas of the store (the layout made: measured when the store has no
  cached layout, labelled ``atlas_uncached_s``; 1k and 10k are re-laid out every run, the
  100k one only when its cache file is missing or with ``--relayout``), then, read-only as
  a notebook opens it, ``ak.open`` and ``MemoryMap(mem)`` (the layout read from the cache
  file), the JSON bytes of ``view.data`` (what is synced to the browser) and of the
  vendored library, ``drill(k)`` and ``back()``;
- Chromium (/usr/bin/chromium, headless, never ``playwright install``): mapview.js hosted
  in a plain page with a stand-in anywidget model (as tests/test_pictures.py does), fed the
  MapView's traits as ONE JSON string that the page parses (a notebook's comm message is
  one JSON text too; Playwright's own serialisation of big arrays is slow and is reported
  apart as ``playwright_transfer_ms``). Measured: open (hand-off → the widget's first frame,
  then → a double requestAnimationFrame after it), frame time while panning and zooming
  (``camera.setState`` once per frame: rAF-to-rAF intervals p50/p90 beside sigma's JS
  ``render()`` time p50; and an animated zoom, during which sigma hides the edges of a
  big map), a relight (a ``lit`` of 30 items: the change handler's JS time and the
  interval of the next frame), and the labels drawn (``akMap.labelBoxes``) and how many
  pairs overlap;
- optionally one end-to-end open in JupyterLab for the 10k store: Run All on a notebook
  whose cell makes ``MemoryMap(ak.open(STORE, read_only=True))``, from the click until
  ``.ak-map[data-first-frame-ms]`` appears.

On a machine without a GPU Chromium draws WebGL with SwiftShader (software): the frame
interval (rAF to rAF, which includes the GPU process's rasterising) is then far longer
than the JS ``render()`` call; both are reported. Prints numbers, asserts nothing; writes
JSON to ``--out`` and a table beside it (``.md``) with the command and the machine facts
(cores, load average at start and end, Chromium version, WebGL renderer string).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import shlex
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # tests.browser / tests.test_browser host the browser set-up
    sys.path.insert(0, str(ROOT))

import akasha_explorer as ak  # noqa: E402
from akasha_explorer.bench.scale import build_synthetic_store  # noqa: E402

WIDGETS = ROOT / "akasha_explorer" / "widgets"
TRAITS = ("lib", "data", "lit", "lit_edges", "window", "selected", "focus", "height",
          "item_name")
"""The MapView's synced traits, as the front end reads them."""
STAGE_WIDTH = 900
"""Pixel width of the map's box in the page (68 % of a notebook's ~1300 px)."""
FRAMES = 30
"""Frames of camera motion measured."""
LIT_ITEMS = 30
"""Items lit by the relight (MemoryMap lights at most HIT_LIMIT = 30 search hits)."""
TURNS_MAX_LEVEL = 25_000
"""Above this many turns MemoryMap opens at community level (atlas TURNS_MAX)."""


# -- small helpers -----------------------------------------------------------------------------
def _pct(xs: list[float], q: float) -> float | None:
    if not xs:
        return None
    s = sorted(xs)
    return round(s[min(len(s) - 1, int(q * (len(s) - 1) + 0.5))], 2)


def _say(msg: str) -> None:
    print(msg, flush=True)


def _load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


@contextlib.contextmanager
def _timer(out: dict[str, Any], key: str) -> Iterator[None]:
    t0 = time.perf_counter()
    yield
    out[key] = round(time.perf_counter() - t0, 3)


def _level(n: int) -> str:
    return "turns" if n <= TURNS_MAX_LEVEL else "communities"


def _json_bytes(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))


def _state(view: Any) -> dict[str, Any]:
    return {k: getattr(view, k) for k in TRAITS}


# -- the store and the Python side -------------------------------------------------------------
def ensure_store(path: Path, n: int) -> None:
    if (path / "akasha.json").exists():
        return
    _say(f"building a synthetic store of {n:,} turns in {path} (about 40 s at 100k) …")
    t0 = time.perf_counter()
    build_synthetic_store(path, n)
    _say(f"  built in {time.perf_counter() - t0:.1f} s")


def first_atlas(path: Path, n: int, relayout: bool) -> dict[str, Any]:
    """The store's first atlas at its level with no cached layout (the layout made and
    written to STORE/cache/), when there is none or ``relayout``; else nothing timed."""
    cache = list((path / "cache").glob("atlas-*.npz"))
    out: dict[str, Any] = {"atlas_uncached_s": None, "layout_cache_file": None}
    if cache and not (relayout or n <= TURNS_MAX_LEVEL):
        out["atlas_uncached_note"] = "layout cache present (pass --relayout to time it)"
        out["layout_cache_file"] = cache[0].name
        return out
    level = _level(n)
    _say(f"  laying out {n:,} turns ({level} level; minutes at 100k) …")
    with ak.open(path) as mem:
        for f in mem.store.cache_dir.glob("atlas-*.npz"):
            f.unlink()
        hood = mem.neighbourhood()
        t0 = time.perf_counter()
        a = hood.atlas(level=level)
        out["atlas_uncached_s"] = round(time.perf_counter() - t0, 3)
        out["atlas_uncached_repr"] = repr(a)
    out["layout_cache_file"] = next(iter((path / "cache").glob("atlas-*.npz"))).name
    _say(f"  first atlas (uncached, layout made): {out['atlas_uncached_s']:.2f} s")
    return out


def python_side(mem: Any, n: int) -> tuple[Any, dict[str, Any]]:
    from akasha_explorer.widgets import MemoryMap

    out: dict[str, Any] = {}
    with _timer(out, "memorymap_s"):
        m = MemoryMap(mem)
    a = m.atlas
    out["level"] = a.level
    out["items"] = len(a.ids)
    out["edges"] = len(a.src)
    out["data_json_bytes"] = _json_bytes(m.view.data)
    out["data_json_bytes_by_key"] = {k: _json_bytes(v) for k, v in m.view.data.items()}
    out["lib_bytes"] = len(m.view.lib.encode("utf-8"))
    _say(f"  MemoryMap(mem) {out['memorymap_s']:.2f} s: {a.level}, {out['items']:,} items, "
         f"{out['edges']:,} edges, view.data {out['data_json_bytes'] / 1e6:.2f} MB JSON")
    return m, out


# -- the browser side --------------------------------------------------------------------------
PAGE = """<!doctype html><meta charset="utf-8"><style>{css}</style>
<body style="margin:0"><div id="graph" style="width:{w}px"></div></body>"""

LOAD_ESM = """async (esm) => {
    const url = URL.createObjectURL(new Blob([esm], {type: 'text/javascript'}));
    window.__mod = await import(url);
    URL.revokeObjectURL(url);
}"""

OPEN = """async (json) => {
    const raf = () => new Promise(q => requestAnimationFrame(q));
    const t0 = performance.now();
    const state = JSON.parse(json);
    const t1 = performance.now();
    const handlers = {};
    const model = { get: k => state[k], set: (k, v) => { state[k] = v; }, save_changes() {},
                    send() {}, on(ev, cb) { (handlers[ev] ||= []).push(cb); }, off() {} };
    window.__push = (key, value) => {
        state[key] = value;
        for (const cb of handlers['change:' + key] || []) cb();
    };
    window.__pushJSON = (key, text) => {
        const a = performance.now();
        const value = JSON.parse(text);
        const b = performance.now();
        window.__push(key, value);
        return [b - a, performance.now() - b];
    };
    await window.__mod.default.render({model, el: document.getElementById('graph')});
    const t2 = performance.now();
    const root = document.querySelector('.ak-map');
    while (!root.dataset.firstFrameMs) await raf();
    const t3 = performance.now();
    await raf(); await raf();
    const t4 = performance.now();
    return {parse_ms: t1 - t0, render_returned_ms: t2 - t0,
            first_frame_ms: +root.dataset.firstFrameMs, first_frame_seen_ms: t3 - t0,
            open_ms: t4 - t0,
            nodes: +root.dataset.nodes, edges: +root.dataset.edges};
}"""

FACTS = """() => {
    const c = document.createElement('canvas');
    const gl = c.getContext('webgl2') || c.getContext('webgl');
    if (!gl) return {renderer: 'no webgl'};
    const e = gl.getExtension('WEBGL_debug_renderer_info');
    return {renderer: gl.getParameter(e ? e.UNMASKED_RENDERER_WEBGL : gl.RENDERER),
            vendor: gl.getParameter(e ? e.UNMASKED_VENDOR_WEBGL : gl.VENDOR),
            hardwareConcurrency: navigator.hardwareConcurrency,
            devicePixelRatio: window.devicePixelRatio};
}"""

# sigma's own render() timed by wrapping it on the instance (its scheduled frames call
# this.render()); camera.setState once per frame, a pan with a zoom in, edges drawn
PAN = """async (frames) => {
    const m = document.querySelector('.ak-map').akMap, r = m.renderer, cam = r.getCamera();
    const raf = () => new Promise(q => requestAnimationFrame(q));
    const js = [], iv = [];
    const orig = r.render;
    r.render = function () { const t = performance.now(); const o = orig.apply(this, arguments);
                             js.push(performance.now() - t); return o; };
    cam.setState({x: 0.5, y: 0.5, ratio: 1, angle: 0});
    await raf(); await raf();
    let last = performance.now();
    for (let i = 1; i <= frames; i++) {
        const f = i / frames;
        cam.setState({x: 0.5 + 0.15 * Math.sin(2 * Math.PI * f), y: 0.5 + 0.1 * f,
                      ratio: 1 - 0.6 * f});
        await raf();
        const t = performance.now(); iv.push(t - last); last = t;
    }
    delete r.render;
    cam.setState({x: 0.5, y: 0.5, ratio: 1, angle: 0});
    await raf(); await raf();
    return {intervals: iv, js};
}"""

# an animated zoom in and out, as a wheel or a double-click does (camera.isAnimated():
# sigma skips the edges while it runs, with hideEdgesOnMove on: a map of > 5000 edges)
ZOOM = """async (ms) => {
    const m = document.querySelector('.ak-map').akMap, r = m.renderer, cam = r.getCamera();
    const raf = () => new Promise(q => requestAnimationFrame(q));
    const js = [], iv = [];
    const orig = r.render;
    r.render = function () { const t = performance.now(); const o = orig.apply(this, arguments);
                             js.push(performance.now() - t); return o; };
    await raf();
    let last = performance.now(), going = true;
    const done = cam.animate({x: 0.45, y: 0.55, ratio: 0.3}, {duration: ms})
        .then(() => cam.animate({x: 0.5, y: 0.5, ratio: 1}, {duration: ms}))
        .then(() => { going = false; });
    while (going) { await raf(); const t = performance.now(); iv.push(t - last); last = t; }
    await done;
    delete r.render;
    await raf(); await raf();
    return {intervals: iv, js};
}"""

# a person's drag across the map (real mouse events: sigma hides the edges of a map of
# > 5000 links while it moves): every rAF interval while the mouse moves, and sigma's renders
DRAG_START = """() => {
    const m = document.querySelector('.ak-map').akMap, r = m.renderer;
    window.__drag = {iv: [], renders: 0, go: true};
    r.on('afterRender', window.__dragCount = () => { window.__drag.renders++; });
    let last = performance.now();
    const tick = () => { const t = performance.now(); window.__drag.iv.push(t - last); last = t;
                         if (window.__drag.go) requestAnimationFrame(tick); };
    requestAnimationFrame(tick);
}"""

DRAG_STOP = """async () => {
    await new Promise(q => requestAnimationFrame(() => requestAnimationFrame(q)));
    window.__drag.go = false;
    document.querySelector('.ak-map').akMap.renderer.off('afterRender', window.__dragCount);
    const d = window.__drag;
    return {intervals: d.iv.slice(1), js: [], renders: d.renders};
}"""

RELIGHT = """async (lit) => {
    const m = document.querySelector('.ak-map').akMap, r = m.renderer;
    const raf = () => new Promise(q => requestAnimationFrame(q));
    const js = [];
    const orig = r.render;
    r.render = function () { const t = performance.now(); const o = orig.apply(this, arguments);
                             js.push(performance.now() - t); return o; };
    await raf();
    const a = performance.now();
    window.__push('lit', lit);
    const b = performance.now();
    await raf();
    const c = performance.now();
    await raf();
    const d = performance.now();
    delete r.render;
    return {handler_ms: b - a, next_frame_ms: c - a, shown_ms: d - a, render_js_ms: js};
}"""

REBUILD = """async ([json, others]) => {
    // a new `data` (MemoryMap.drill / back): parsed in the page, the change handler
    // rebuilds the graph; then the small traits MemoryMap sets after it
    const raf = () => new Promise(q => requestAnimationFrame(q));
    await raf();
    const a = performance.now();
    const [parse, handler] = window.__pushJSON('data', json);
    for (const [k, v] of Object.entries(others)) window.__push(k, v);
    const b = performance.now();
    await raf();
    const c = performance.now();
    await raf();
    const d = performance.now();
    const root = document.querySelector('.ak-map');
    return {parse_ms: parse, data_handler_ms: handler, handlers_ms: b - a,
            other_traits: Object.keys(others),
            next_frame_ms: c - a, shown_ms: d - a, nodes: +root.dataset.nodes,
            edges: +root.dataset.edges, builds: +root.dataset.builds};
}"""

LABELS = """() => {
    const boxes = document.querySelector('.ak-map').akMap.labelBoxes;
    const ov = (a, b) => a[0] < b[2] && b[0] < a[2] && a[1] < b[3] && b[1] < a[3];
    let n = 0;
    for (let i = 0; i < boxes.length; i++) {
        for (let j = 0; j < i; j++) if (ov(boxes[i], boxes[j])) n++;
    }
    return {labels: boxes.length, overlapping_pairs: n};
}"""

IDLE = """async (frames) => {
    const raf = () => new Promise(q => requestAnimationFrame(q));
    await raf();
    let last = performance.now();
    const iv = [];
    for (let i = 0; i < frames; i++) {
        await raf();
        const t = performance.now(); iv.push(t - last); last = t;
    }
    return iv;
}"""

TWO_FRAMES = "() => new Promise(q => requestAnimationFrame(() => requestAnimationFrame(q)))"

SIGMA_IMPORT = """async (src) => {
    const url = URL.createObjectURL(new Blob([src], {type: 'text/javascript'}));
    const t = performance.now();
    await import(url);
    const ms = performance.now() - t;
    URL.revokeObjectURL(url);
    return ms;
}"""


def _r(d: dict[str, Any]) -> dict[str, Any]:
    return {k: (round(v, 2) if isinstance(v, float) else v) for k, v in d.items()}


def _frames(got: dict[str, Any]) -> dict[str, Any]:
    iv, js = got["intervals"], got["js"]
    return {"frames": len(iv), "raf_interval_p50_ms": _pct(iv, 0.5),
            "raf_interval_p90_ms": _pct(iv, 0.9), "render_js_p50_ms": _pct(js, 0.5),
            "render_js_p90_ms": _pct(js, 0.9), "renders": len(js)}


def _lit_of(ids: list[str]) -> dict[str, str]:
    """Thirty items spread over the map (every k-th id) lit as search hits."""
    step = max(1, len(ids) // LIT_ITEMS)
    return dict.fromkeys(ids[::step][:LIT_ITEMS], "hit")


class Browser:
    """One headless Chromium; a fresh offline page per map opened."""

    def __init__(self) -> None:
        from playwright.sync_api import sync_playwright

        from tests.browser import launch

        self._pw = sync_playwright().start()
        self.browser = launch(self._pw)
        self.version = self.browser.version
        self.esm = (WIDGETS / "mapview.js").read_text("utf-8")
        self.css = "\n".join((WIDGETS / f).read_text("utf-8")
                             for f in ("canvas.css", "mapview.css"))
        self.host: Any = None
        self.sent: dict[str, Any] = {}

    def facts(self) -> dict[str, Any]:
        host = self._host()
        got = host.page.evaluate(FACTS)
        host.ctx.close()
        return {"chromium": self.version, **got}

    def _host(self) -> Any:
        from tests.browser import OfflinePage

        class Host(OfflinePage):
            LOCAL = ("file:", "blob:", "data:", "about:")

        host = Host(self.browser)
        host.page.set_content(PAGE.format(css=self.css, w=STAGE_WIDTH))
        host.page.evaluate(LOAD_ESM, self.esm)
        return host

    def open(self, state: dict[str, Any]) -> dict[str, Any]:
        """A new page, the map opened in it from one JSON string."""
        if self.host is not None:
            self.host.ctx.close()
        self.host = self._host()
        self.sent = {k: v for k, v in state.items() if k != "lib"}
        text = json.dumps(state, ensure_ascii=False, separators=(",", ":"))
        page = self.host.page
        t0 = time.perf_counter()
        page.evaluate("(s) => s.length", text)
        transfer = (time.perf_counter() - t0) * 1e3
        t0 = time.perf_counter()
        got = page.evaluate(OPEN, text)
        wall = (time.perf_counter() - t0) * 1e3
        return _r({**got, "state_json_bytes": len(text.encode("utf-8")),
                   "playwright_transfer_ms": transfer, "evaluate_wall_ms": wall})

    def floor(self) -> dict[str, Any]:
        """What a frame costs with nothing to draw: an empty page's rAF interval, and the
        pan of a two-item map (sigma's layers cleared and composited, no items to speak of)."""
        from akasha_explorer.widgets.mapview import MapView

        host = self._host()
        empty = host.page.evaluate(IDLE, FRAMES)
        host.ctx.close()
        v = MapView(height="600px")
        v.draw(["a", "b"], x=[0.0, 1.0], y=[0.0, 1.0], size=[4.0, 4.0],
               color=["#4e79a7"] * 2, label=["a", "b"], ts=[0.0, 1.0], src=[0], dst=[1],
               width=[1.0])
        self.open(_state(v))
        pan = _frames(self.host.page.evaluate(PAN, FRAMES))
        return {"empty_page_raf_p50_ms": _pct(empty, 0.5),
                "empty_page_raf_p90_ms": _pct(empty, 0.9),
                "two_item_map_pan_raf_p50_ms": pan["raf_interval_p50_ms"],
                "two_item_map_pan_raf_p90_ms": pan["raf_interval_p90_ms"],
                "two_item_map_render_js_p50_ms": pan["render_js_p50_ms"]}

    def interact(self, ids: list[str]) -> dict[str, Any]:
        """Labels, pan/zoom frames, an animated zoom and a relight of the map shown."""
        page = self.host.page
        out: dict[str, Any] = {"labels_at_open": page.evaluate(LABELS)}
        out["pan_zoom"] = _frames(page.evaluate(PAN, FRAMES))
        out["animated_zoom"] = _frames(page.evaluate(ZOOM, 600))
        out["drag"] = self.drag()
        got = page.evaluate(RELIGHT, _lit_of(ids))
        js = got.pop("render_js_ms")
        out["relight"] = _r({**got, "render_js_ms": js[0] if js else None, "renders": len(js),
                             "items_lit": min(LIT_ITEMS, len(ids))})
        out["labels_lit"] = page.evaluate(LABELS)
        page.evaluate("() => window.__push('lit', {})")
        page.evaluate(TWO_FRAMES)
        return out

    def drag(self) -> dict[str, Any]:
        """A mouse drag across the stage, as a person pans: rAF intervals while it moves."""
        page = self.host.page
        box = page.locator(".ak-map-stage").first.bounding_box()
        x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
        page.mouse.move(x, y)
        page.evaluate(DRAG_START)
        page.mouse.down()
        page.mouse.move(x + box["width"] / 4, y + box["height"] / 6, steps=FRAMES)
        page.mouse.up()
        got = page.evaluate(DRAG_STOP)
        page.evaluate("() => document.querySelector('.ak-map').akMap.renderer.getCamera()"
                      ".setState({x: 0.5, y: 0.5, ratio: 1, angle: 0})")
        page.evaluate(TWO_FRAMES)
        return {**_frames(got), "renders": got["renders"]}

    def rebuild(self, view: Any) -> dict[str, Any]:
        """Push the view's new ``data`` (one JSON string), then those of its small traits
        that changed (a notebook syncs only a changed trait)."""
        text = json.dumps(view.data, ensure_ascii=False, separators=(",", ":"))
        others = {k: getattr(view, k) for k in TRAITS if k not in ("lib", "data")
                  and getattr(view, k) != self.sent.get(k)}
        self.sent.update(others, data=view.data)
        return _r({**self.host.page.evaluate(REBUILD, [text, others]),
                   "data_json_bytes": len(text.encode("utf-8"))})

    def sigma_import_ms(self, lib: str) -> float:
        return round(float(self.host.page.evaluate(SIGMA_IMPORT, lib)), 2)

    def errors(self) -> list[str]:
        return list(self.host.errors) + [f"blocked {u}" for u in self.host.blocked]

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.browser.close()
        self._pw.stop()


def _print_browser(tag: str, o: dict[str, Any], it: dict[str, Any] | None) -> None:
    _say(f"  [{tag}] open {o['open_ms']:.0f} ms (parse {o['parse_ms']:.0f}, first frame "
         f"{o['first_frame_ms']:.0f}) · {o['nodes']:,} nodes {o['edges']:,} edges · "
         f"{o['state_json_bytes'] / 1e6:.2f} MB state")
    if it:
        p, z, r = it["pan_zoom"], it["animated_zoom"], it["relight"]
        _say(f"  [{tag}] pan/zoom rAF p50 {p['raf_interval_p50_ms']} / p90 "
             f"{p['raf_interval_p90_ms']} ms, render() JS p50 {p['render_js_p50_ms']} ms · "
             f"animated zoom rAF p50 {z['raf_interval_p50_ms']} ms · mouse drag rAF p50 "
             f"{it['drag']['raf_interval_p50_ms']} / p90 {it['drag']['raf_interval_p90_ms']} ms"
             " · relight handler "
             f"{r['handler_ms']:.0f} ms, next frame {r['next_frame_ms']:.0f} ms · labels "
             f"{it['labels_at_open']['labels']} (overlapping pairs "
             f"{it['labels_at_open']['overlapping_pairs']})")


# -- one size ----------------------------------------------------------------------------------
def run_size(n: int, work: Path, browser: Browser | None, relayout: bool) -> dict[str, Any]:
    path = work / f"synthetic-{n}"
    _say(f"\n== {n:,} turns ({path})")
    ensure_store(path, n)
    res: dict[str, Any] = {"turns": n, "store": str(path), **first_atlas(path, n, relayout)}
    with _timer(res, "open_read_only_s"):
        mem = ak.open(path, read_only=True)
    try:
        m, py = python_side(mem, n)
        res["python"] = py
        if browser is not None:
            o = browser.open(_state(m.view))
            it = browser.interact(list(m.view.data["ids"]))
            _print_browser(m.atlas.level, o, it)
            res["browser"] = {"open": o, **it}
        if m.atlas.level == "communities":
            a = m.atlas
            k = max(range(len(a.ids)), key=lambda i: (a.size[i], -i))
            community = int(a.ids[k].split(":", 1)[1])
            drill: dict[str, Any] = {"community": community, "community_turns": int(a.size[k])}
            with _timer(drill, "drill_s"):
                m.drill(community)
            drill["items"] = len(m.atlas.ids)
            drill["edges"] = len(m.atlas.src)
            drill["data_json_bytes"] = _json_bytes(m.view.data)
            _say(f"  drill({community}) {drill['drill_s']:.2f} s: {drill['items']:,} turns, "
                 f"{drill['edges']:,} edges")
            if browser is not None:
                drill["browser_rebuild"] = browser.rebuild(m.view)
                drill["browser"] = browser.interact(list(m.view.data["ids"]))
                rb = drill["browser_rebuild"]
                _say(f"  [drill] rebuild: handlers {rb['handlers_ms']:.0f} ms, next frame "
                     f"{rb['next_frame_ms']:.0f} ms")
                _print_browser("drill", {**rb, "open_ms": rb["shown_ms"],
                                         "first_frame_ms": rb["next_frame_ms"],
                                         "state_json_bytes": rb["data_json_bytes"]},
                               drill["browser"])
            back: dict[str, Any] = {}
            with _timer(back, "back_s"):
                m.back()
            if browser is not None:
                back["browser_rebuild"] = browser.rebuild(m.view)
            _say(f"  back() {back['back_s']:.2f} s")
            res["drill"] = drill
            res["back"] = back
        if browser is not None:
            res["browser_errors"] = browser.errors()
            res["sigma_import_ms"] = browser.sigma_import_ms(m.view.lib)
    finally:
        mem.close()
    return res


# -- JupyterLab, end to end --------------------------------------------------------------------
LAB_CELLS = [
    "import os\nimport akasha_explorer as ak\nfrom akasha_explorer.widgets import MemoryMap",
    "m = MemoryMap(ak.open(os.environ['AKASHA_STORE'], read_only=True))\nm",
]


def lab_open(store: Path, work: Path) -> dict[str, Any]:
    """Run All on a two-cell notebook in JupyterLab (loopback) over a copy of ``store``;
    the time from the click to the map's first frame."""
    import nbformat
    from playwright.sync_api import sync_playwright

    from tests.browser import launch
    from tests.test_browser import serve_lab

    base = Path(tempfile.mkdtemp(prefix="lab-", dir=work))
    nbdir = base / "nb-src"
    nbdir.mkdir()
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(c) for c in LAB_CELLS]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    nbformat.write(nb, str(nbdir / "map.ipynb"))
    out: dict[str, Any] = {"store": str(store), "cells": LAB_CELLS}
    _say(f"\n== JupyterLab end to end ({store.name})")
    with serve_lab(base / "srv", store, nbdir) as url, sync_playwright() as p:
        b = launch(p)
        try:
            ctx = b.new_context(viewport={"width": 1400, "height": 1000})
            page = ctx.new_page()
            page.goto(f"{url}/lab/tree/map.ipynb")
            page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=120_000)
            with contextlib.suppress(Exception):  # the kernel dialog shows only sometimes
                page.locator(".jp-Dialog .jp-mod-accept").click(timeout=5_000)
            try:  # the kernel started, so the time below is not the kernel's start-up
                page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']",
                                       timeout=120_000)
                out["kernel_idle_before_click"] = True
            except Exception:
                out["kernel_idle_before_click"] = False
            page.locator(".lm-MenuBar-itemLabel", has_text="Run").first.click()
            item = page.locator(".lm-Menu-itemLabel", has_text="Run All Cells").first
            item.wait_for(timeout=10_000)
            t0 = time.perf_counter()
            item.click()
            page.wait_for_selector(".ak-map[data-first-frame-ms]", timeout=600_000)
            out["click_to_first_frame_s"] = round(time.perf_counter() - t0, 3)
            root = page.locator(".ak-map").first
            out["widget_first_frame_ms"] = float(root.get_attribute("data-first-frame-ms")
                                                 or "nan")
            page.wait_for_function("() => document.querySelector('.ak-map').dataset.nodes")
            out["nodes"] = int(root.get_attribute("data-nodes") or 0)
            out["edges"] = int(root.get_attribute("data-edges") or 0)
            page.evaluate(TWO_FRAMES)
            out["click_to_shown_s"] = round(time.perf_counter() - t0, 3)
        finally:
            b.close()
    _say(f"  Run All → first frame {out['click_to_first_frame_s']:.1f} s (the widget's own "
         f"render → first frame {out['widget_first_frame_ms']:.0f} ms), {out['nodes']:,} nodes")
    return out


# -- the report --------------------------------------------------------------------------------
def _f(v: Any, nd: int = 0, scale: float = 1.0) -> str:
    if v is None:
        return "–"
    return f"{v * scale:,.{nd}f}"


def markdown(res: dict[str, Any]) -> str:
    m = res["machine"]
    lines = [
        "# Whole-memory map benchmark (issue 26)", "",
        f"`{res['command']}`", "",
        f"- machine: {m['cores']} cores ({m['platform']}), load average at start "
        f"{m['load_start']}, at end {m['load_end']}",
        f"- Chromium {m.get('chromium', '–')}, WebGL renderer: `{m.get('renderer', '–')}`",
        f"- frame floor: {m.get('frame_floor')}",
        f"- page: map box {STAGE_WIDTH} px wide, height {m.get('map_height', '600px')}; "
        "state handed to the page as one JSON string and parsed there", "",
        "Frame times are rAF-to-rAF intervals (what a person sees; with SwiftShader they "
        "include software rasterising in the GPU process) beside sigma's JS `render()` call. "
        "Open = the state handed to the page as a JSON string → a double "
        "requestAnimationFrame after the widget's first frame; in brackets the widget's own "
        "`data-first-frame-ms` (render() called → sigma's first drawn frame). Pan/zoom: "
        "`camera.setState` once a frame (edges drawn); animated zoom: `camera.animate` (sigma "
        "hides the edges of a map of > 5000 links while it runs); mouse drag: a real drag "
        "across the stage (Playwright mouse events; sigma hides those edges while it moves), "
        "rAF intervals while the mouse moves. Relight: 30 items lit "
        "(`lit` pushed): the change handler's JS time / the time to the next frame. Labels: "
        "`akMap.labelBoxes` at open, and the pairs of them that overlap.",
        "",
        "| view | items | edges | atlas uncached s | MemoryMap s | view.data MB | "
        "open ms (1st frame) | pan/zoom rAF p50 / p90 ms | render() JS p50 ms | "
        "anim. zoom rAF p50 ms | mouse drag rAF p50 / p90 ms | relight handler / next frame "
        "ms | labels (overlaps) |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]

    def row(name: str, items: int, edges: int, unc: Any, mm: Any, mb: Any,
            o: dict[str, Any] | None, it: dict[str, Any] | None) -> None:
        cells = [name, f"{items:,}", f"{edges:,}", _f(unc, 1), _f(mm, 2), _f(mb, 2, 1e-6)]
        if o:
            cells.append(f"{_f(o.get('open_ms'))} ({_f(o.get('first_frame_ms'))})")
        else:
            cells.append("–")
        if it:
            p, z, r, lab = it["pan_zoom"], it["animated_zoom"], it["relight"], it["labels_at_open"]
            cells += [f"{_f(p['raf_interval_p50_ms'])} / {_f(p['raf_interval_p90_ms'])}",
                      _f(p["render_js_p50_ms"], 1), _f(z["raf_interval_p50_ms"]),
                      f"{_f(it['drag']['raf_interval_p50_ms'])} / "
                      f"{_f(it['drag']['raf_interval_p90_ms'])}",
                      f"{_f(r['handler_ms'])} / {_f(r['next_frame_ms'])}",
                      f"{lab['labels']} ({lab['overlapping_pairs']})"]
        else:
            cells += ["–"] * 6
        lines.append("| " + " | ".join(cells) + " |")

    for s in res["sizes"]:
        py, br = s.get("python", {}), s.get("browser")
        row(f"{s['turns']:,} turns, {py.get('level')}", py.get("items", 0), py.get("edges", 0),
            s.get("atlas_uncached_s"), py.get("memorymap_s"), py.get("data_json_bytes"),
            br["open"] if br else None, br)
        d = s.get("drill")
        if d:
            rb = d.get("browser_rebuild")
            o = ({"open_ms": rb["shown_ms"], "first_frame_ms": rb["next_frame_ms"]}
                 if rb else None)
            row(f"↳ drill into community {d['community']}", d["items"], d["edges"], None,
                d["drill_s"], d["data_json_bytes"], o, d.get("browser"))
            b = s.get("back", {})
            rb = b.get("browser_rebuild")
            o = ({"open_ms": rb["shown_ms"], "first_frame_ms": rb["next_frame_ms"]}
                 if rb else None)
            row("↳ back to communities", py.get("items", 0), py.get("edges", 0), None,
                b.get("back_s"), rb["data_json_bytes"] if rb else None, o, None)
    lines += ["", "For a drill-down and back, \"MemoryMap s\" is `drill(k)` / `back()` and the "
              "open column is the page's rebuild (parse + change handlers → the next frame, "
              "then → the frame after it).", ""]
    notes = []
    for s in res["sizes"]:
        py = s.get("python", {})
        notes.append(f"- {s['turns']:,} turns: `ak.open` read-only {s['open_read_only_s']:.2f} s"
                     + (f"; first atlas with the layout made {s['atlas_uncached_s']:.1f} s"
                        if s.get("atlas_uncached_s") is not None
                        else f"; {s.get('atlas_uncached_note', '')}")
                     + (f"; library sent once per page {py['lib_bytes'] / 1e3:.0f} kB, "
                        f"its import {s['sigma_import_ms']:.0f} ms"
                        if "sigma_import_ms" in s else "")
                     + (f"; page errors {s['browser_errors']}" if s.get("browser_errors")
                        else ""))
    lab = res.get("lab")
    if lab and "click_to_first_frame_s" in lab:
        notes.append(f"- JupyterLab end to end ({Path(lab['store']).name}): Run All → "
                     f"`.ak-map[data-first-frame-ms]` {lab['click_to_first_frame_s']:.1f} s "
                     f"(imports, `ak.open`, `MemoryMap`, the comm, the widget's render → "
                     f"first frame {lab['widget_first_frame_ms']:.0f} ms); "
                     f"{lab['nodes']:,} nodes")
    elif lab:
        notes.append(f"- JupyterLab end to end: not measured ({lab.get('skipped')})")
    return "\n".join(lines + notes) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="1000,10000,100000",
                    help="turns per synthetic store, comma-separated")
    ap.add_argument("--workdir", type=Path, default=None,
                    help="where the stores are (built if missing; default a temp folder)")
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "map.json")
    ap.add_argument("--relayout", action="store_true",
                    help="time the first atlas at every size (minutes at 100k)")
    ap.add_argument("--no-browser", action="store_true", help="the Python side only")
    ap.add_argument("--no-lab", action="store_true", help="skip the JupyterLab open")
    args = ap.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    work = args.workdir or Path(tempfile.mkdtemp(prefix="bench-map-"))
    work.mkdir(parents=True, exist_ok=True)
    cmd = "python benchmarks/bench_map.py " + " ".join(shlex.quote(a) for a in
                                                         (argv if argv is not None
                                                          else sys.argv[1:]))
    res: dict[str, Any] = {
        "command": cmd.strip(),
        "machine": {"cores": os.cpu_count(), "platform": platform.platform(),
                    "python": platform.python_version(), "load_start": _load()},
        "sizes": [],
    }
    _say(f"{cmd} · {os.cpu_count()} cores · load {res['machine']['load_start']}")
    from tests.browser import CHROMIUM

    if not args.no_browser and not CHROMIUM.exists():
        _say(f"no {CHROMIUM} (apt-get install chromium): the Python side only")
        args.no_browser = True
    browser = None if args.no_browser else Browser()
    try:
        if browser is not None:
            res["machine"].update(browser.facts())
            _say(f"Chromium {browser.version} · WebGL {res['machine'].get('renderer')}")
            res["machine"]["frame_floor"] = browser.floor()
            _say(f"frame floor: {res['machine']['frame_floor']}")
        for n in sizes:
            res["sizes"].append(run_size(n, work, browser, args.relayout))
    finally:
        if browser is not None:
            browser.close()
    if not args.no_lab and not args.no_browser and 10_000 in sizes:
        try:
            res["lab"] = lab_open(work / "synthetic-10000", work)
        except Exception as err:  # a benchmark: say what went wrong, keep the rest
            res["lab"] = {"skipped": f"{type(err).__name__}: {err}"[:500]}
            _say(f"  JupyterLab open failed: {res['lab']['skipped']}")
    res["machine"]["load_end"] = _load()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(res, indent=1, ensure_ascii=False) + "\n", "utf-8")
    md = markdown(res)
    args.out.with_suffix(".md").write_text(md, "utf-8")
    _say("\n" + md)
    _say(f"wrote {args.out} and {args.out.with_suffix('.md')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
