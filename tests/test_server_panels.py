"""Every panel on a served store (issue 15): the panels draw a ``RemoteMemory`` exactly as
they draw a local Memory; while an agent writes through the server, a panel shows the new
turns after a refresh — or by itself with "follow" ticked — and the RecallStepper steps
through the recall the agent just made. Real server process, real demo store."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

import akasha_explorer as ak
from akasha_explorer.widgets import (
    AnchorCurator,
    CommunitiesPanel,
    MemoryExplorer,
    RecallStepper,
    ReviewQueue,
    notebook_store,
)
from akasha_explorer.widgets.notebook import NotebookBlocked

from .served import serving


@pytest.fixture(scope="module")
def served_demo(demo_store_template: Path, tmp_path_factory: pytest.TempPathFactory
                ) -> Iterator[tuple[str, Path]]:
    import shutil
    store = tmp_path_factory.mktemp("served") / "demo"
    shutil.copytree(demo_store_template, store)
    with serving(store) as (url, _proc):
        yield url, store


def _agent_turn(url: str, k: int, now: float) -> dict[str, Any]:
    async def run() -> dict[str, Any]:
        async with Client(url + "/mcp", read_timeout_seconds=120) as c:
            q = f"阿岚的杀戮尖塔 A11 打到第几层了 ({k})"
            ctx = json.loads((await c.call_tool("context", {"query": q, "now": now}))
                             .content[0].text)
            out = await c.call_tool("add_turn", {"session": "agent", "user": q,
                                                 "assistant": "第二层", "ts": now + 5,
                                                 "recall_id": ctx["recall_id"]})
            return {"query": q, **json.loads(out.content[0].text)}
    return anyio.run(run)


@pytest.mark.slow
def test_panels_draw_a_served_store(served_demo: tuple[str, Path]) -> None:
    url, _store = served_demo
    mem = ak.connect(url)
    stepper = RecallStepper(mem, query="阿岚的生日是哪天")
    assert stepper.trace is not None and stepper.trace.floor.uids
    for stage in ("seeds", "rwr", "graph_expand", "settlement", "groups", "writeback"):
        stepper.goto(stage)
        assert stepper.view.nodes
    assert stepper.trace.writeback is not None and not stepper.trace.writeback.applied
    explorer = MemoryExplorer(mem)
    hits = explorer.search("手指")
    assert len(hits) and "text" in hits.columns
    assert explorer.show_session("2026-09-13-evening")
    explorer.open_node(explorer.shown[0])
    curator = AnchorCurator(mem)
    assert curator.refresh()
    review = ReviewQueue(mem)
    assert isinstance(review.refresh(), list)
    panel = CommunitiesPanel(mem)
    assert len(panel.compute())


def test_panels_follow_an_agent_writing_through_the_server(served_demo: tuple[str, Path]
                                                           ) -> None:
    url, _store = served_demo
    mem = ak.connect(url)
    explorer = MemoryExplorer(mem)
    stepper = RecallStepper(mem)
    before = mem.stats()["nodes"]
    assert explorer.follow.box is not None and stepper.follow.box is not None
    stepper.follow.box.value = True            # push: the stepper follows the agent
    now = mem.last_ts() + 3600
    turn = _agent_turn(url, 0, now)
    end = time.time() + 30
    while (stepper.trace is None or stepper.trace.query != turn["query"]) and time.time() < end:
        time.sleep(0.2)
    stepper.follow.box.value = False
    assert stepper.trace is not None and stepper.trace.query == turn["query"]
    assert stepper.trace.now == pytest.approx(now)
    # the explorer shows the new turn after a refresh
    assert "agent" not in [v for _k, v in explorer.sessions.options]
    explorer.refresh()
    assert "agent" in [v for _k, v in explorer.sessions.options]
    assert mem.stats()["nodes"] == before + 1
    assert turn["node"] in explorer.show_session("agent")
    # the stepper steps through the agent's latest recall on demand too
    turn2 = _agent_turn(url, 1, now + 600)
    t = stepper.latest()
    assert t is not None and t.query == turn2["query"]
    # as the agent received it, marked written back to the agent's own turn, and refused
    assert t.written_back is not None and t.written_back["node"] == turn2["node"]
    assert "written back to " + turn2["node"] in stepper.status.value
    assert stepper.commit_button.disabled
    pending = mem.stats()["journal_pending"]
    assert stepper.commit() is None and "nothing to commit" in stepper.status.value
    assert mem.stats()["journal_pending"] == pending                # nothing written


def test_notebooks_connect_to_the_served_store(served_demo: tuple[str, Path],
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    url, store = served_demo
    monkeypatch.setenv("AKASHA_URL", url)
    mem = notebook_store(write=True)
    assert isinstance(mem, ak.RemoteMemory) and mem.path == store.resolve()
    monkeypatch.delenv("AKASHA_URL")
    monkeypatch.setenv("AKASHA_STORE", str(store))   # found through the lock file
    assert isinstance(notebook_store(), ak.RemoteMemory)
    monkeypatch.setenv("AKASHA_URL", "http://127.0.0.1:9")      # nobody there
    with pytest.raises(NotebookBlocked, match="make lab") as err:
        notebook_store()
    assert len(err.value._render_traceback_()) == 1          # one line, no traceback


def test_issue_16_panels_on_a_served_store(served_demo: tuple[str, Path]) -> None:
    """What-if, time travel, methods side by side and labels through the server; the one
    write of the what-if (its settings made the store's) reaches the server's store and the
    client's settings follow."""
    from akasha_explorer.widgets import CompareMethods, TimeTravelPanel, WhatIfPanel

    url, _store = served_demo
    mem = ak.connect(url)
    compare = CompareMethods(mem, query="Where does Lan live?", k=5)
    assert compare.result is not None and len(compare.result)
    uid = str(compare.result["uid"].iloc[0])
    compare.labels.node.value = uid
    assert compare.labels.label(True)
    assert [r.node for r in mem.labels("Where does Lan live?")] == [uid]
    assert mem.evaluate(methods=["dense", "bm25"], k=5)["scored"] == 1
    whatif = WhatIfPanel(mem, query="和阿岚打杀戮尖塔，A10 过了吗")
    diff = whatif.set(RWR_STEPS=0, GRAPH_LIMIT=0)
    assert diff is not None and (diff.entered or diff.moved)
    assert whatif.score() is not None
    travel = TimeTravelPanel(mem, query="和阿岚打杀戮尖塔，A10 过了吗")
    travel.go(-30)
    assert travel.entered and len(travel.frame()) < len(travel.uids)
    whatif.set(ACTIVATION_K=6)
    assert whatif.apply() == {"ACTIVATION_K": (8, 6), "GRAPH_LIMIT": (8, 0),
                              "RWR_STEPS": (2, 0)}
    assert mem.settings.ACTIVATION_K == 6
    assert ak.connect(url).settings.RWR_STEPS == 0
    mem.migrate("v2", ACTIVATION_K=8, GRAPH_LIMIT=8, RWR_STEPS=2)  # back, for who runs next
    assert ak.connect(url).settings == mem.settings and mem.settings.RWR_STEPS == 2
    assert mem.labels.remove("Where does Lan live?", uid)
