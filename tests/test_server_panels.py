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
    MemoryMap,
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


def test_the_map_follows_an_agent_writing_through_the_server(served_demo: tuple[str, Path]
                                                             ) -> None:
    url, _store = served_demo
    mem = ak.connect(url)
    m = MemoryMap(mem)
    before = len(m.view.data["ids"])
    assert m.atlas is not None and before == mem.stats()["nodes"]
    m.view.selected = [m.atlas.ids[3]]                # a click reads one turn
    assert f"<b>{m.atlas.ids[3]}</b>" in m.detail.value
    # the map and a clicked turn never ask the server for every node's info (and its
    # Leiden communities): a 100k-turn served store opens as fast as its atlas
    assert m.data.hood._all is None
    assert m.search("手指") is not None and m.view.lit
    assert m.follow.box is not None
    m.follow.box.value = True                  # the map follows the agent
    turn = _agent_turn(url, 7, mem.last_ts() + 7200)
    end = time.time() + 30
    while turn["node"] not in m.view.lit and time.time() < end:
        time.sleep(0.2)
    m.follow.box.value = False
    assert len(m.view.data["ids"]) == mem.stats()["nodes"] > before
    assert m.view.lit.get(turn["node"]) == "written" and m.view.lit_edges
    assert m.recall is not None and m.recall.query == turn["query"]
    assert f"written back to {turn['node']}" in m.status.value


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


def _legend_ring(explorer: MemoryExplorer, starts: str) -> dict[str, str] | None:
    return next((e for e in explorer.view.legend if e["text"].startswith(starts)), None)


def test_issue_25_explorer_marks_what_is_new_and_keeps_nothing_stale(
        served_demo: tuple[str, Path]) -> None:
    """Issue 25 item 8: after a refresh the explorer rings the turns the agent added since
    the last read and says how many; its caption counts what the memory holds and what the
    picture shows of it; the hit list, the side panel and the selection are of the new read
    (a turn forgotten meanwhile says so), not of the old one."""
    import re

    url, _store = served_demo
    mem = ak.connect(url)
    explorer = MemoryExplorer(mem)
    assert f"the memory holds {mem.stats()['nodes']} turns" in explorer.view.caption
    now = mem.last_ts() + 7200
    first, _ = mem.add_turn("手指换药了吗", "换了", session="follow-25", ts=now)
    explorer.refresh()
    assert explorer.new == [first]
    assert re.search(r"\b1 new turn since \d\d:\d\d:\d\d", explorer.status.value)
    explorer.open_node(first)
    query = "手指 换药"
    hits = explorer.search(query)
    assert first in set(hits["uid"])
    explorer.view.select([first])
    assert first in explorer.selection.value and first in explorer.detail.value

    # the agent writes three turns and the first one is forgotten
    added = [mem.add_turn(u, a, session="follow-25", ts=now + 60 * (k + 1))[0]
             for k, (u, a) in enumerate([("手指的纱布今天又换药了", "好"),
                                          ("晚饭吃了番茄炒蛋", "不错"),
                                          ("周末去爬山", "注意安全")])]
    mem.forget(node=first, why="test: a turn gone between two reads")
    explorer.refresh()
    total = mem.stats()["nodes"]

    # marks: exactly the three new turns are ringed, in the legend's colour, and counted
    assert explorer.new == added
    assert re.search(r"\b3 new turns since \d\d:\d\d:\d\d", explorer.status.value)
    ring = _legend_ring(explorer, "new since")
    assert ring is not None and "(3)" in ring["text"]
    drawn = {n["id"]: n for n in explorer.view.nodes}
    ringed = {u for u, n in drawn.items() if n["color"]["border"] == ring["colour"]}
    assert ringed == set(added)
    # counts: what the memory holds, what the picture shows of it
    assert f"{len(drawn)} turns shown — the memory holds {total} turns" in explorer.view.caption
    assert f"{total} turns, read at" in explorer.status.value
    # nothing stale: the forgotten turn is nowhere, the hits are a search of this read
    assert first not in drawn
    assert list(explorer.hits["uid"]) == list(mem.search(query, now=explorer.data.now)
                                               .frame["uid"])
    assert first not in [v for _k, v in explorer.results.options]
    assert added[0] in [v for _k, v in explorer.results.options]
    assert explorer.opened is None
    assert f"turn {first} is no longer in the memory" in explorer.detail.value
    assert first not in explorer.view.selected and first not in explorer.selection.value

    # a community picked: its count is what the store's communities say at this read
    comm = mem.graph_view("nodes", now=explorer.data.now).nodes
    sizes = comm["community"].value_counts()
    c = int(sizes.index[0])
    explorer.community.value = c
    shown = len(explorer.view.nodes)
    assert (f"community {c}: its {shown} strongest turns, of its {int(sizes[c])} — the "
            f"memory holds {total} turns") in explorer.view.caption
    # a refresh with nothing new rings nothing and says so
    explorer.refresh()
    assert explorer.new == [] and _legend_ring(explorer, "new since") is None
    assert re.search(r"\b0 new turns since \d\d:\d\d:\d\d", explorer.status.value)


def test_issue_25_agent_turns_show_the_speakers_names(served_demo: tuple[str, Path]) -> None:
    """Issue 25 item 11: the names an agent passes with ``add_turn`` (over MCP and over the
    HTTP client) are stored, and the explorer's and the stepper's side panels show who said
    each message by that name — the role only for a message stored without one."""
    import html

    url, _store = served_demo
    mem = ak.connect(url)
    now = mem.last_ts() + 9000

    async def run() -> str:
        async with Client(url + "/mcp", read_timeout_seconds=120) as c:
            out = await c.call_tool("add_turn", {
                "session": "names-25", "user": "阿岚说周六再打一局杀戮尖塔",
                "assistant": "好，记下了", "ts": now, "user_speaker": "小林",
                "assistant_speaker": "Akasha"})
            return str(json.loads(out.content[0].text)["node"])
    by_mcp = anyio.run(run)
    by_http, _ = mem.add_turn("周六几点？", "晚上八点", session="names-25", ts=now + 60,
                              user_speaker="阿岚", assistant_speaker="Akasha")
    nameless, _ = mem.add_turn("no names here", "none", session="names-25", ts=now + 120)
    stored = {u: [(m.role, m.speaker) for m in mem.messages(u)]
              for u in (by_mcp, by_http, nameless)}
    assert stored == {by_mcp: [("user", "小林"), ("assistant", "Akasha")],
                      by_http: [("user", "阿岚"), ("assistant", "Akasha")],
                      nameless: [("user", None), ("assistant", None)]}

    def who(panel_html: str) -> list[str]:
        """The names the side panel puts over the messages, in order."""
        import re
        return re.findall(r'<div class="ak-meta">[^·]*· <span title="role: \w+">([^<]*)</span>',
                          html.unescape(panel_html))

    explorer = MemoryExplorer(mem)
    stepper = RecallStepper(mem, query="阿岚 周六 杀戮尖塔")
    assert stepper.trace is not None
    for uid, names in [(by_mcp, ["小林", "Akasha"]), (by_http, ["阿岚", "Akasha"]),
                       (nameless, ["user", "assistant"])]:
        explorer.open_node(uid)
        assert who(explorer.detail.value) == names
        stepper.why_not(uid)
        assert who(stepper.detail.value) == names


RINGS = """() => {
    const net = document.querySelector('.ak-graph').akashaNetwork;
    const out = {};
    for (const id of net.body.nodeIndices) out[id] = net.body.nodes[id].options.color.border;
    return out;
}"""
"""The border colour vis-network draws each node with."""


def test_issue_25_explorer_refresh_as_a_person_sees_it(served_demo: tuple[str, Path],
                                                       browser: Any) -> None:
    """Issue 25 item 8 in Chromium: after the agent writes two turns and the explorer
    refreshes, the page's caption counts what the memory holds, the legend names the new
    turns' ring, and exactly those two turns are drawn with it."""
    from .test_pictures import HOST, Host, View

    url, _store = served_demo
    mem = ak.connect(url)
    explorer = MemoryExplorer(mem)
    explorer.search("手指")
    now = mem.last_ts() + 12000
    added = [mem.add_turn(u, "好", session="seen-25", ts=now + 60 * k)[0]
             for k, u in enumerate(["手指今天不疼了", "明天去复查手指"])]
    explorer.refresh()
    host = Host(browser)
    host.page.set_content(HOST)
    View(host, explorer.view)
    graph = host.page.locator(".ak-graph")
    caption = graph.locator(".ak-graph-caption").inner_text()
    drawn = host.page.evaluate(RINGS)
    assert f"{len(drawn)} turns shown — the memory holds {mem.stats()['nodes']} turns" in caption
    item = graph.locator(".ak-legend-item", has_text="new since")
    assert item.count() == 1 and "(2)" in item.inner_text()
    colour = str(item.get_attribute("data-colour"))
    assert {u for u, c in drawn.items() if str(c).lower() == colour} == set(added)
    assert host.blocked == [] and host.errors == []
    host.ctx.close()
