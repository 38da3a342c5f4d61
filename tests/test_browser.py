"""What a person sees: JupyterLab on loopback, notebook 02 opened in headless Chromium
(Playwright driving Debian's /usr/bin/chromium), run top to bottom.

Asserts that the graph view drew nodes on a canvas, that the stepper's "next" button moves
the recall to the next stage without zooming again, that the DataFrames the notebook shows
keep their text column first, wide and on one line, that no button's label is cut and no
box shows epoch seconds, and that no request left the machine. Set
``AKASHA_SCREENSHOTS=<folder>`` to keep screenshots of what was checked.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pytest

from .browser import launch, require_chromium

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK = "02_step_through_a_recall.ipynb"
LOCAL = {"127.0.0.1", "localhost", "::1", "[::1]"}


def _need_browser() -> None:
    require_chromium()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _lab_settings(folder: Path) -> Path:
    """JupyterLab user settings for the test: no news or update checks, and every cell
    kept in the page (no windowing) so the test can find the output."""
    for plugin, values in {
        "@jupyterlab/apputils-extension/notification": {"fetchNews": "false",
                                                       "checkForUpdates": False},
        "@jupyterlab/notebook-extension/tracker": {"windowingMode": "none"},
    }.items():
        path = folder / f"{plugin}.jupyterlab-settings"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values), "utf-8")
    return folder


@pytest.fixture(scope="module")
def lab(demo_store_template: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A JupyterLab server on 127.0.0.1 (no token) over a copy of the notebooks, with
    AKASHA_STORE naming a private copy of the demo store. Yields its base URL."""
    _need_browser()
    base = tmp_path_factory.mktemp("lab")
    with serve_lab(base, demo_store_template, ROOT / "notebooks") as url:
        yield url


@contextlib.contextmanager
def serve_lab(base: Path, store_from: Path, notebooks_from: Path) -> Iterator[str]:
    """JupyterLab on loopback over copies (in ``base``) of a store and a notebooks folder
    (autosave must not touch the repo); yields its base URL (also used by
    ``python -m tests.screenshots``)."""
    store = base / "store"
    shutil.copytree(store_from, store)
    notebooks = base / "notebooks"
    shutil.copytree(notebooks_from, notebooks)
    settings = _lab_settings(base / "settings")
    port = _free_port()
    env = {**os.environ, "AKASHA_STORE": str(store), "HF_HUB_OFFLINE": "1",
           "TRANSFORMERS_OFFLINE": "1", "JUPYTER_CONFIG_DIR": str(base / "config"),
           "JUPYTERLAB_WORKSPACES_DIR": str(base / "workspaces")}
    cmd = [sys.executable, "-m", "jupyterlab", "--no-browser", f"--port={port}",
           "--ServerApp.ip=127.0.0.1", "--IdentityProvider.token=", "--ServerApp.password=",
           f"--ServerApp.root_dir={notebooks}", f"--LabApp.user_settings_dir={settings}",
           f"--LabApp.workspaces_dir={base / 'workspaces'}", "--LabApp.news_url=None",
           "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
           "--LabApp.extension_manager=readonly"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        cmd.append("--allow-root")
    log = (base / "lab.log").open("w")
    proc = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                with urllib.request.urlopen(f"{url}/api/status", timeout=2):
                    break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("JupyterLab did not start:\n"
                                       + (base / "lab.log").read_text()[-3000:]) from None
                time.sleep(0.5)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


def run_all(page: Any, url: str, name: str) -> None:
    """Open notebook ``name`` in JupyterLab at ``url``, Run All, wait until every cell ran."""
    page.goto(f"{url}/lab/tree/{name}")
    page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=90_000)
    with contextlib.suppress(Exception):  # the kernel dialog shows only sometimes
        page.locator(".jp-Dialog .jp-mod-accept").click(timeout=5_000)
    page.locator(".lm-MenuBar-itemLabel", has_text="Run").first.click()
    page.locator(".lm-Menu-itemLabel", has_text="Run All Cells").first.click()


ALL_RAN = ("() => [...document.querySelectorAll('.jp-InputPrompt')]"
           ".every(e => !e.textContent.includes('*'))")
"""True once no cell of the open notebook is running or waiting to run."""


def offline_page(browser: Any, requests: list[str], errors: list[str], *,
                 height: int) -> Any:
    """A page 1400 px wide of its own context: every request recorded in ``requests``,
    those leaving the machine aborted, page errors kept in ``errors``."""
    ctx = browser.new_context(viewport={"width": 1400, "height": height})
    ctx.route("**/*", lambda r: r.continue_() if _is_local(r.request.url) else r.abort())
    ctx.on("request", lambda r: requests.append(r.url))
    page = ctx.new_page()
    page.on("pageerror", lambda e: errors.append(str(e)))
    return page


def _is_local(url: str) -> bool:
    u = urlparse(url)
    if u.scheme in ("data", "blob", "about", "chrome-error"):
        return True
    return u.hostname in LOCAL


def _shot(page_or_el: object, name: str) -> None:
    folder = os.environ.get("AKASHA_SCREENSHOTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        page_or_el.screenshot(path=str(Path(folder) / name))  # type: ignore[attr-defined]


PAINTED = """(root) => {
  const c = root.querySelector('canvas');
  if (!c || !c.width || !c.height) return -1;
  const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
  let n = 0;
  for (let i = 3; i < d.length; i += 4) if (d[i] > 0) n++;
  return n;
}"""


NODE_XY = """(root) => {
  // the most isolated node well inside the canvas, so a click cannot hit a neighbour
  const net = root.akashaNetwork;
  const c = root.querySelector('canvas').getBoundingClientRect();
  const pts = net.body.nodeIndices.map((id) => [id, net.canvasToDOM(net.getPosition(id))]);
  let best = null, gap = -1;
  for (const [id, p] of pts) {
    if (p.x < 30 || p.y < 30 || p.x > c.width - 30 || p.y > c.height - 30) continue;
    let d = Infinity;
    for (const [o, q] of pts) if (o !== id) d = Math.min(d, Math.hypot(p.x - q.x, p.y - q.y));
    if (d > gap) { gap = d; best = [id, p.x, p.y]; }
  }
  return best;
}"""


TABLES = """() => [...document.querySelectorAll('.jp-OutputArea-output table')].flatMap(t => {
  const heads = [...t.querySelectorAll('thead th')].map(h => h.textContent.trim());
  const k = heads.indexOf('text');
  const rows = [...t.querySelectorAll('tbody tr')];
  if (k < 0 || !rows.length) return [];
  return [{heads, k, width: rows[0].children[k].getBoundingClientRect().width,
           tallest: Math.max(...rows.map(r => r.getBoundingClientRect().height))}];
})"""

CUT_BUTTONS = """() => [...document.querySelectorAll('.jupyter-widgets button')]
  .filter(b => b.offsetParent !== null && b.scrollWidth > b.clientWidth + 1)
  .map(b => b.textContent.trim())"""

EPOCH_INPUTS = """() => [...document.querySelectorAll('.jupyter-widgets input')]
  .map(i => i.value).filter(v => /^\\s*1[5-9]\\d{8}(\\.\\d+)?\\s*$/.test(v))"""


def test_notebook_02_in_chromium(lab: str) -> None:
    from playwright.sync_api import sync_playwright

    requests: list[str] = []
    blocked: list[str] = []
    dialogs: list[str] = []
    errors: list[str] = []
    with sync_playwright() as p:
        browser = launch(p)
        try:
            ctx = browser.new_context(viewport={"width": 1400, "height": 1000})

            def guard(route: object) -> None:
                url = route.request.url  # type: ignore[attr-defined]
                if _is_local(url):
                    route.continue_()  # type: ignore[attr-defined]
                else:
                    blocked.append(url)
                    route.abort()  # type: ignore[attr-defined]

            ctx.route("**/*", guard)
            ctx.on("request", lambda r: requests.append(r.url))
            page = ctx.new_page()
            page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
            page.on("pageerror", lambda e: errors.append(str(e)))
            run_all(page, lab, NOTEBOOK)

            graph = page.locator(".ak-graph[data-drawn]").first
            graph.wait_for(timeout=300_000)
            page.wait_for_function(
                "() => [...document.querySelectorAll('.jp-InputPrompt')]"
                ".every(e => !e.textContent.includes('*'))", timeout=300_000)
            drawn = int(graph.get_attribute("data-drawn") or 0)
            assert drawn > 10
            assert int(graph.get_attribute("data-nodes") or 0) == drawn
            page.wait_for_timeout(500)
            assert graph.evaluate(PAINTED) > 1000, "the canvas is blank"
            caption = page.locator(".ak-graph-caption").first
            assert caption.inner_text().startswith("1 · seeds")
            tables = page.evaluate(TABLES)
            assert len(tables) >= 2  # the settlement and write-back DataFrames
            for t in tables:  # text first (after the index), wide, one line per row
                assert t["k"] <= 1 and t["width"] >= 150 and t["tallest"] <= 40, t
            assert page.evaluate(CUT_BUTTONS) == []
            assert page.evaluate(EPOCH_INPUTS) == []
            scale = graph.get_attribute("data-scale")
            assert scale and float(scale) <= 1.3
            output = page.locator(".jp-OutputArea-output", has=graph).first
            _shot(output, "stepper_seeds.png")

            page.locator(".jupyter-widgets button", has_text="next").first.click()
            page.wait_for_function(
                "(el) => el.textContent.startsWith('2a')", arg=caption.element_handle(),
                timeout=30_000)
            active = page.locator(".widget-toggle-buttons button.mod-active").first
            assert "2a" in active.inner_text()
            assert graph.get_attribute("data-scale") == scale  # one zoom for every stage
            assert int(graph.get_attribute("data-edges") or 0) > 0  # transitions appear
            page.wait_for_timeout(500)
            assert graph.evaluate(PAINTED) > 1000
            _shot(output, "stepper_rwr.png")

            # a click on a node on the canvas reaches Python (the details pane shows it);
            # the canvas is scrolled to the middle of the window first, so the node is on
            # screen and not under JupyterLab's status bar
            graph.locator("canvas").evaluate("(c) => c.scrollIntoView({block: 'center'})")
            page.wait_for_timeout(300)
            uid, x, y = graph.evaluate(NODE_XY)
            box = graph.locator("canvas").bounding_box()
            assert box is not None
            page.mouse.move(box["x"] + x, box["y"] + y)
            page.wait_for_selector(".ak-graph div.vis-tooltip", state="visible",
                                   timeout=10_000)
            tip = page.locator(".ak-graph div.vis-tooltip").first.inner_text()
            assert uid in tip
            page.mouse.click(box["x"] + x, box["y"] + y)
            page.wait_for_function(
                "(uid) => [...document.querySelectorAll('.ak-detail b')]"
                ".some(b => b.textContent === uid)",
                arg=uid, timeout=30_000)
            assert "1 selected" in graph.locator(".ak-graph-status").inner_text()
            assert page.locator("img[src='x']").count() == 0
        finally:
            browser.close()
    assert requests, "no request was recorded at all"
    outside = [u for u in requests if not _is_local(u)]
    assert not outside, f"requests left the machine: {outside}"
    assert not blocked, f"requests tried to leave the machine: {blocked}"
    assert not dialogs, f"a page dialog opened: {dialogs}"
    assert not [e for e in errors if "akasha" in e.lower() or "vis" in e.lower()], errors
