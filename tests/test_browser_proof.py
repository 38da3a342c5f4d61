"""The proof of issue 25 (done-when 2) as a person sees it: JupyterLab on loopback in
headless Chromium, notebooks 01–05 run top to bottom on a served copy of the demo store
(as ``make lab`` serves it, ``AKASHA_URL``) — each with no error output — then, with 02
open, an agent — the official MCP SDK client,
``context`` then ``add_turn`` with its ``recall_id`` — writes 20 turns while the notebook's
agent stepper follows it.

Afterwards no panel is stale or contradicts another: the following stepper and the
finger stepper (after a press on its **Latest recall**) both show the agent's last recall
as it was made — its query, marked written back, by whom and to which turn, as the server's
own record says — and Commit is off and writes nothing when pressed. The page logs no
console error and makes no request off the machine.

The other notebooks run first, each in its own tab, and stay open (their kernels hold the
served store as a person's would).
"""

from __future__ import annotations

import json
import shutil
import threading
from pathlib import Path
from typing import Any

import anyio
import pytest

import akasha_explorer as ak

from .browser import launch, require_chromium
from .served import serving
from .test_browser import ROOT, _is_local, _shot, run_all, serve_lab

pytestmark = [pytest.mark.browser, pytest.mark.slow]

NOTEBOOK = "02_step_through_a_recall.ipynb"
OTHERS = ("01_explore_memories.ipynb", "03_curate_anchors_and_review.ipynb",
          "04_export_graphs.ipynb", "05_test_and_tune_your_agents_memory.ipynb")
TURNS = 20
ASK = "agent · 阿岚这周杀戮尖塔打到第几层了 #"


def _agent(url: str, start: float) -> list[dict[str, Any]]:
    """An agent's live loop over MCP: ``context`` before each answer, ``add_turn`` with
    its ``recall_id`` after it; returns what each add_turn answered."""
    from mcp import Client

    out: list[dict[str, Any]] = []

    async def run() -> None:
        async with Client(url + "/mcp", read_timeout_seconds=120) as c:
            for k in range(TURNS):
                ctx = await c.call_tool("context", {"query": f"{ASK}{k}", "now": start + 60 * k})
                assert not ctx.is_error, ctx.content[0].text
                rid = json.loads(ctx.content[0].text)["recall_id"]
                got = await c.call_tool("add_turn", {
                    "session": "agent-proof", "user": f"{ASK}{k}",
                    "assistant": f"第 {k} 层，还在打", "ts": start + 60 * k + 5,
                    "recall_id": rid})
                assert not got.is_error, got.content[0].text
                out.append(json.loads(got.content[0].text))

    def loop() -> None:
        try:
            anyio.run(run)
        except BaseException as err:  # handed to the test below
            failed.append(err)

    failed: list[BaseException] = []
    # its own thread: Playwright's sync API keeps an event loop running in this one
    agent = threading.Thread(target=loop, name="mcp-agent")
    agent.start()
    agent.join(timeout=600)
    assert not agent.is_alive(), "the agent's turns did not finish in 10 minutes"
    if failed:
        raise failed[0]
    return out


def _stepper(page: Any, k: int) -> Any:
    """The ``k``-th stepper on the page (0: the finger one, 1: the agent one)."""
    return page.locator(".jp-OutputArea-output",
                        has=page.locator("button", has_text="Latest recall")).nth(k)


def _ran(page: Any) -> None:
    """Wait until every cell of the open notebook ran, and assert none raised (stderr —
    a warning, a progress bar — is not an error)."""
    page.wait_for_function(
        "() => [...document.querySelectorAll('.jp-InputPrompt')]"
        ".every(e => !e.textContent.includes('*'))", timeout=300_000)
    failed = page.locator(".jp-RenderedText[data-mime-type='application/vnd.jupyter.error']")
    assert failed.count() == 0, failed.first.inner_text()[:500]


def _shows(page: Any, stepper: Any, query: str, said: str) -> None:
    """Wait until ``stepper``'s query box holds ``query`` and its text says ``said``."""
    page.wait_for_function(
        """([el, q, s]) => el.querySelector('.widget-text input').value === q
                          && el.innerText.includes(s)""",
        arg=[stepper.element_handle(), query, said], timeout=90_000)


def test_an_agent_writes_while_notebook_02_follows_it(
        demo_store_template: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    require_chromium()
    from playwright.sync_api import sync_playwright

    served = tmp_path / "served"
    shutil.copytree(demo_store_template, served)
    requests: list[str] = []
    blocked: list[str] = []
    console: list[str] = []
    errors: list[str] = []
    with serving(served) as (url, _proc):
        monkeypatch.setenv("AKASHA_URL", url)              # what `make lab` sets
        mem = ak.connect(url)
        with serve_lab(tmp_path / "lab", demo_store_template, ROOT / "notebooks") as lab, \
                sync_playwright() as p:
            browser = launch(p)
            try:
                ctx = browser.new_context(viewport={"width": 1400, "height": 1000})

                def guard(route: Any) -> None:
                    if _is_local(route.request.url):
                        route.continue_()
                    else:
                        blocked.append(route.request.url)
                        route.abort()

                ctx.route("**/*", guard)
                ctx.on("request", lambda r: requests.append(r.url))
                page = ctx.new_page()
                page.on("console", lambda m: console.append(m.text) if m.type == "error"
                        else None)
                page.on("pageerror", lambda e: errors.append(str(e)))
                for name in OTHERS:                     # each in a tab of its own
                    other = ctx.new_page()
                    other.on("console", lambda m: console.append(m.text)
                             if m.type == "error" else None)
                    other.on("pageerror", lambda e: errors.append(str(e)))
                    run_all(other, lab, name)
                    other.locator(".jp-OutputArea-output").first.wait_for(timeout=300_000)
                    _ran(other)
                nodes = mem.stats()["nodes"]
                run_all(page, lab, NOTEBOOK)
                page.locator(".ak-graph[data-drawn]").first.wait_for(timeout=300_000)
                _ran(page)
                assert page.locator(".jp-OutputArea-output",
                                    has_text=f"served at {url}").count() >= 1
                finger, follower = _stepper(page, 0), _stepper(page, 1)
                _shows(page, finger, "最近手指的伤怎么样了", "recalled '最近手指的伤怎么样了'")
                follower.locator(".widget-checkbox", has_text="follow the agent's recalls") \
                    .locator("input").check()

                turns = _agent(url, mem.last_ts() + 86400)

                # the server's own record of the agent's last recall
                newest = mem.query_log(limit=1)[-1]
                assert newest["query"] == f"{ASK}{TURNS - 1}" and newest["committed"]
                made = mem.logged_recall(newest["uid"]).written_back
                assert made is not None and made["node"] == turns[-1]["node"]
                said = (f"the recall {newest['uid']} as it was made at ", "written back to "
                        f"{made['node']} by {made['by']}", "it cannot be written again")

                # the follower got there by itself; the finger stepper on a press
                for part in said:
                    _shows(page, follower, newest["query"], part)
                finger.locator("button", has_text="Latest recall").click()
                for part in said:
                    _shows(page, finger, newest["query"], part)
                for stepper in (finger, follower):
                    commit = stepper.locator("button", has_text="Commit write-back")
                    assert commit.is_disabled()
                    commit.click(force=True)        # a disabled button does nothing
                _shot(finger, "agent_recall_as_made.png")
                page.wait_for_timeout(1_000)
                follower.locator(".widget-checkbox", has_text="follow the agent's recalls") \
                    .locator("input").uncheck()
            finally:
                browser.close()
        after = mem.logged_recall(newest["uid"]).written_back
        assert after == made                                 # still written back once
        assert mem.stats()["nodes"] == nodes + TURNS         # and nothing else was written
        assert mem.query_log(limit=1)[-1]["uid"] == newest["uid"]
    assert requests, "no request was recorded at all"
    assert not [u for u in requests if not _is_local(u)], "requests left the machine"
    assert not blocked, f"requests tried to leave the machine: {blocked}"
    assert not errors, f"page errors: {errors}"
    assert not console, f"console errors: {console}"
