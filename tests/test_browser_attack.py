"""A web page tries to use the memory a local ``akasha serve`` holds (issue 22), in a real
Chromium: pages from another origin send every write and read a page can make without
asking — ``fetch`` with ``mode: "no-cors"`` and a text body, a ``<form enctype="text/plain">``
posted into a frame, ``fetch`` with JSON (preflighted), reads of ``/api/info``,
``/api/events`` and ``/mcp``, ``<img>`` and ``<script>`` GETs — and a DNS-rebinding page
(its own name resolving to 127.0.0.1, so same-origin with the server) tries to read and
write. Every attempt fails, nothing in the store changes, and a notebook client on the same
server keeps working.

The attacker's pages come from a real HTTP server of the test on loopback (so the browser
treats them as a local page, as a page on ``localhost`` is, and its private-network rules do
not get in the way): ``attacker.test`` (another origin) on 127.0.0.1, and ``evil.test`` on
127.0.0.2 *with the server's own port*, which after the page loads forwards every request to
the real server unchanged — what the server sees when DNS rebinding points ``evil.test`` at
it (the browser reads the answers as same-origin). Chromium resolves those names through
``--host-resolver-rules``.
"""

from __future__ import annotations

import http.client
import http.server
import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import akasha_explorer as ak

from .browser import ARGS, CHROMIUM, require_chromium
from .served import free_port, serving, small_store

pytestmark = pytest.mark.browser

ATTACK = """<!doctype html><meta charset="utf-8"><title>cute cats</title>
<body><iframe name="sink" id="sink"></iframe><div id="out"></div>
<script>
const T = "{TARGET}";
window.__log = [];
const note = (what, value) => window.__log.push([what, String(value).slice(0, 300)]);
const forget = JSON.stringify({method: "forget", kwargs: {session: "s0"}});
const label = JSON.stringify({method: "labels.add", args: ["pwned", "s0:0"]});
async function attempt(what, fn) {
  try { note(what, await fn()); } catch (e) { note(what, "error: " + e); }
}
async function run() {
  await attempt("no-cors text/plain forget", () => fetch(T + "/api/call",
    {method: "POST", mode: "no-cors", headers: {"Content-Type": "text/plain"}, body: forget})
    .then(r => "type " + r.type));
  await attempt("no-cors label", () => fetch(T + "/api/call",
    {method: "POST", mode: "no-cors", body: label}).then(r => "type " + r.type));
  await attempt("cors json forget", () => fetch(T + "/api/call", {method: "POST",
    headers: {"Content-Type": "application/json"}, body: forget}).then(r => r.text()));
  await attempt("read info", () => fetch(T + "/api/info").then(r => r.text()));
  await attempt("read stats", () => fetch(T + "/api/call", {method: "POST",
    headers: {"Content-Type": "application/json"},
    body: JSON.stringify({method: "stats"})}).then(r => r.text()));
  await attempt("read events", () => fetch(T + "/api/events?since=-1&timeout=0")
    .then(r => r.text()));
  await attempt("mcp tools/list", () => fetch(T + "/mcp", {method: "POST",
    headers: {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"},
    body: JSON.stringify({jsonrpc: "2.0", id: 1, method: "tools/list"})}).then(r => r.text()));
  await attempt("mcp no-cors forget", () => fetch(T + "/mcp", {method: "POST", mode: "no-cors",
    headers: {"Content-Type": "text/plain"}, body: JSON.stringify({jsonrpc: "2.0", id: 2,
    method: "tools/call", params: {name: "forget", arguments: {session: "s0", confirm: true}}})})
    .then(r => "type " + r.type));
  const img = new Image(); img.src = T + "/api/info?img=1";
  const s = document.createElement("script"); s.src = T + "/api/info?script=1";
  document.body.appendChild(s);
  const f = document.createElement("form");
  f.method = "POST"; f.action = T + "/api/call"; f.enctype = "text/plain"; f.target = "sink";
  const i = document.createElement("input");
  i.name = '{"method":"forget","kwargs":{"session":"s0"},"x":"'; i.value = '"}';
  f.appendChild(i); document.body.appendChild(f); f.submit();
  await new Promise(r => setTimeout(r, 1500));
  window.__done = true;
}
run();
</script>"""


@pytest.fixture(scope="module")
def victim(tmp_path_factory: pytest.TempPathFactory, embedder: Any
           ) -> Iterator[tuple[str, Path]]:
    store = small_store(tmp_path_factory.mktemp("attack") / "store")
    with serving(store) as (url, _proc):
        yield url, store


class _Attacker(http.server.ThreadingHTTPServer):
    """Serves the attack page at ``/cats.html``; with ``forward`` (the real server's
    port) every other request goes to the real server byte for byte, Host included."""

    def __init__(self, addr: tuple[str, int], page: str, forward: int | None) -> None:
        self.page, self.forward = page.encode(), forward
        self.forwarded: list[str] = []
        super().__init__(addr, _Handler)


class _Handler(http.server.BaseHTTPRequestHandler):
    server: _Attacker

    def log_message(self, *_: Any) -> None:
        pass

    def _any(self) -> None:
        if self.path.startswith("/cats.html"):
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(self.server.page)))
            self.end_headers()
            self.wfile.write(self.server.page)
            return
        if self.server.forward is None:
            self.send_error(404)
            return
        self.server.forwarded.append(f"{self.command} {self.path} Host={self.headers['Host']}")
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        conn = http.client.HTTPConnection("127.0.0.1", self.server.forward, timeout=60)
        conn.putrequest(self.command, self.path, skip_host=True, skip_accept_encoding=True)
        for k, v in self.headers.items():
            conn.putheader(k, v)
        conn.endheaders(body or None)
        resp = conn.getresponse()
        data = resp.read()
        self.send_response(resp.status)
        for k, v in resp.getheaders():
            if k.lower() not in ("transfer-encoding", "connection", "content-length"):
                self.send_header(k, v)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
        conn.close()

    do_GET = do_POST = do_OPTIONS = _any


def _run_page(url: str, host: str, bind: str, port: int, target: str,
              forward: int | None = None) -> tuple[list[list[str]], list[str]]:
    """Serve the attack page on ``bind:port`` as ``host`` (aiming at ``target``), open it
    in Chromium, wait for every attempt; returns the page's log and the requests the
    attacker's server forwarded."""
    require_chromium()
    from playwright.sync_api import sync_playwright

    attacker = _Attacker((bind, port), ATTACK.replace("{TARGET}", target), forward)
    threading.Thread(target=attacker.serve_forever, daemon=True).start()
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=str(CHROMIUM), args=[
                *ARGS, "--host-resolver-rules=MAP attacker.test 127.0.0.1, "
                       "MAP evil.test 127.0.0.2"])
            page = browser.new_context().new_page()
            page.goto(f"http://{host}:{port}/cats.html")
            page.wait_for_function("window.__done === true", timeout=60_000)
            log = page.evaluate("window.__log")
            browser.close()
    finally:
        attacker.shutdown()
        attacker.server_close()
    return log, attacker.forwarded


def _unchanged(url: str, store: Path) -> None:
    nb = ak.connect(url)                      # the notebook client still works
    assert [s.session for s in nb.sessions()] == ["s0"]
    assert nb.stats()["nodes"] == 2 and nb.labels() == [] and nb.audit() == []


def test_pages_from_another_origin_can_neither_write_nor_read(victim: tuple[str, Path]
                                                               ) -> None:
    url, store = victim
    for host in ("attacker.test", "localhost"):      # another site; the same site
        log, _ = _run_page(url, host, "127.0.0.1", free_port(), url)
        got = dict(log)
        assert got["no-cors text/plain forget"] == "type opaque"   # it was sent
        for read in ("read info", "read stats", "read events", "mcp tools/list",
                     "cors json forget"):
            assert got[read].startswith("error:"), (host, read, got[read])
        assert str(store) not in json.dumps(log)
        _unchanged(url, store)


def test_a_rebinding_page_can_neither_write_nor_read(victim: tuple[str, Path]) -> None:
    url, store = victim
    port = int(url.rsplit(":", 1)[1])
    origin = f"http://evil.test:{port}"          # same origin as the server, by its DNS
    log, forwarded = _run_page(url, "evil.test", "127.0.0.2", port, origin, forward=port)
    got = dict(log)
    assert any("/api/info" in f and f"Host=evil.test:{port}" in f for f in forwarded)
    for read in ("read info", "read stats", "read events", "mcp tools/list"):
        assert "MisdirectedRequest" in got[read] or "Invalid Host" in got[read], got[read]
        assert '"ok": true' not in got[read] and str(store) not in got[read]
    _unchanged(url, store)
