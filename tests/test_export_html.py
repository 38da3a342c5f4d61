"""The offline HTML export in a real headless Chromium (SPEC §8, §9): every request that
is not ``file://`` is blocked and must never be attempted; the graph renders (a canvas
with every node on it); text a person wrote stays text — a message carrying
``<img src=x onerror=…>`` or ``</script>`` shows literally and never runs."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

import akasha_explorer as ak

from .browser import OfflinePage

pytestmark = pytest.mark.browser

HOSTILE = [
    'look at this <img src=x onerror="window.__pwned = 1; alert(1)"> ok?',
    "</script><script>window.__pwned2 = 1</script> and &amp; &lt;b&gt;",
    "<b>bold</b> <svg onload=alert(3)> \u2028 line sep",
]




class Page(OfflinePage):
    """A page with every non-file request aborted and recorded — also the requests that
    reach the page without going through the route."""

    LOCAL = ("file://",)
    HEIGHT = 800

    def __init__(self, browser: Any) -> None:
        super().__init__(browser)
        self.page.on("request", lambda r: None if r.url.startswith("file://")
                     else self.blocked.append(r.url))

    def open(self, path: Path) -> Any:
        self.page.goto(path.resolve().as_uri())
        self.page.wait_for_selector('body[data-rendered="1"]', timeout=60_000)
        return self.page


def _painted(page: Any) -> int:
    """Non-blank pixels on the graph canvas."""
    return page.evaluate("""() => {
        const c = document.querySelector('#graph canvas');
        const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
        let n = 0;
        for (let i = 3; i < d.length; i += 4) if (d[i] !== 0) n++;
        return n;
    }""")


def test_demo_html_renders_offline(demo_store: Path, tmp_path: Path, browser: Any) -> None:
    with ak.open(demo_store, read_only=True) as mem:
        path = mem.export(tmp_path / "demo.html", format="html")
        n_nodes = mem.stats()["nodes"]
    p = Page(browser)
    page = p.open(path)
    assert page.locator("#graph canvas").count() == 1
    assert page.evaluate("() => window.akasha.nodes.length") == n_nodes
    assert page.evaluate("() => Object.keys(window.akasha.network.getPositions()).length") \
        == n_nodes
    assert _painted(page) > 10_000
    assert page.locator("#legend li").count() > 1
    subtitle = page.locator("header p").text_content() or ""
    assert re.search(r"as of \d{4}-\d\d-\d\dT\d\d:\d\d", subtitle), subtitle  # a date,
    assert not re.search(r"\d{9,}", subtitle), subtitle                          # no epoch
    assert "阿岚" in (page.locator("#legend").text_content() or "")  # named by anchors
    assert p.blocked == []
    assert p.errors == []
    # the demo's own hostile message (2026-10-11-night) shows as text
    node = "2026-10-11-night:0"
    page.evaluate("id => window.akasha.showNode(id)", node)
    assert "<img src=x onerror=alert(1)>" in page.locator("#text").text_content()
    assert page.locator("img").count() == 0
    assert p.dialogs == []
    p.ctx.close()


def test_hostile_text_stays_text(mem: ak.Memory, tmp_path: Path, browser: Any) -> None:
    msgs = []
    for k, text in enumerate(HOSTILE):
        msgs += [{"role": "user", "content": text}, {"role": "assistant", "content": f"ok {k}"}]
    mem.ingest(msgs, session="x", progress=False)
    now = mem.last_ts() + 60
    for text in HOSTILE:   # grow a few co-activation edges so there is a graph to draw
        t = mem.recall(text, now=now)
        mem.commit(t, mem.store.mirror.nodes.uid[0])
    path = mem.export(tmp_path / "x.html", format="html")
    html = path.read_text("utf-8")
    assert "onerror=" not in html.split("<script>")[0]
    p = Page(browser)
    page = p.open(path)
    for k, uid in enumerate(mem.store.mirror.nodes.uid):
        page.evaluate("id => window.akasha.showNode(id)", uid)
        shown = page.locator("#text").text_content()
        assert shown == " ".join(HOSTILE[k].split())
    # hover the first node: vis-network's tooltip shows the text with innerText
    pos = page.evaluate("""id => { const n = window.akasha.network;
        return n.canvasToDOM(n.getPositions([id])[id]); }""", mem.store.mirror.nodes.uid[0])
    box = page.locator("#graph").bounding_box()
    page.mouse.move(box["x"] + pos["x"], box["y"] + pos["y"])
    tip = page.locator(".vis-tooltip")
    tip.wait_for(state="visible", timeout=10_000)
    assert "<img src=x onerror=" in tip.inner_text()
    # innerText turns the newline into <br>; nothing else may be an element
    assert page.evaluate("""() => [...document.querySelector('.vis-tooltip').children]
        .map(c => c.tagName)""") in ([], ["BR"])
    assert page.locator("img, svg").count() == 0
    assert page.evaluate("() => [window.__pwned, window.__pwned2]") == [None, None]
    assert p.dialogs == []
    assert p.blocked == []
    assert p.errors == []
    p.ctx.close()
