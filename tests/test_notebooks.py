"""The four notebooks run top to bottom (nbclient, a real kernel), so they never rot; and
they are committed as sources, without outputs. They run the way ``make lab`` runs them:
every notebook connected to one ``akasha serve`` of the demo store (so none locks another
out) — and while notebook 02 runs, an agent drives 100 live turns into the same server over
MCP, and the notebook steps through the agent's latest recall (issue 15). Running a
notebook leaves nothing behind: no temp folder, no audit entry the second time, no epoch
in what it shows (issue 16)."""

from __future__ import annotations

import json
import re
import shutil
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import nbformat
import pytest
from mcp import Client
from nbclient import NotebookClient

import akasha_explorer as ak

from .served import serving

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
NAMES = ["01_explore_memories.ipynb", "02_step_through_a_recall.ipynb",
         "03_curate_anchors_and_review.ipynb", "04_export_graphs.ipynb",
         "05_test_and_tune_your_agents_memory.ipynb"]


@pytest.fixture(scope="module")
def notebook_server(demo_store_template: Path, tmp_path_factory: pytest.TempPathFactory
           ) -> Iterator[tuple[Path, str]]:
    """One private copy of the demo store, served by ``akasha serve`` for every notebook of
    this module (what ``make lab`` does)."""
    dst = tmp_path_factory.mktemp("nb") / "store"
    shutil.copytree(demo_store_template, dst)
    with serving(dst) as (url, _proc):
        yield dst, url


AGENT = "agent · 阿岚最近 A11 打得怎么样 #"


def _agent(url: str, turns: int, start: float, done: list[str], stop: threading.Event) -> None:
    """An agent's live loop over MCP: context before each answer, add_turn after it."""
    async def run() -> None:
        async with Client(url + "/mcp", read_timeout_seconds=120) as c:
            for k in range(turns):
                if stop.is_set():
                    return
                q = f"{AGENT}{k}"
                ctx = json.loads((await c.call_tool("context", {
                    "query": q, "now": start + 60 * k})).content[0].text)
                out = await c.call_tool("add_turn", {
                    "session": "agent-live", "user": q, "assistant": f"还在第二层 {k}",
                    "ts": start + 60 * k + 5, "recall_id": ctx["recall_id"]})
                assert not out.is_error, out.content[0].text
                done.append(q)
    anyio.run(run)


@pytest.mark.parametrize("name", NAMES)
def test_notebook_is_a_clean_source(name: str) -> None:
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    nbformat.validate(nb)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code, name
    assert all(not c.outputs and c.execution_count is None for c in code), (
        f"{name} has committed outputs; clear them before committing")
    assert "widgets" not in nb.metadata, f"{name} has saved widget state"
    assert nb.cells[0].cell_type == "markdown"
    assert nb.cells[0].source.startswith("# ")
    # what a notebook says about opening the store is what happens under `make lab` (issue
    # 25 item 5): served, nothing locks; opened without a server, a writer needs it alone
    for c in nb.cells:
        if c.cell_type == "markdown" and "needs it to itself" in c.source:
            assert "never lock each other out" in c.source and "akasha serve" in c.source, name


EPOCH = re.compile(r"(?<![\d.])1[5-9]\d{8}(?:\.\d+)?(?![\d])")
"""Epoch seconds of 2017–2033 as a person would see them in an output."""


def _shown(output: nbformat.NotebookNode) -> str:
    """What a person reads of an output: its text, or its HTML / plain-text rendering."""
    if output.output_type == "stream":
        return str(output.text)
    data = output.get("data", {})
    return str(data.get("text/html") or data.get("text/plain") or "")


def _run(name: str, url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
         extra: str = "") -> nbformat.NotebookNode:
    """Run notebook ``name`` against the server at ``url`` (with ``extra`` as one more
    cell at the end), its kernel's temp folder private; checks that it shows a panel,
    leaves no temp folder behind and shows no epoch seconds."""
    tmp = tmp_path / "tmp"
    tmp.mkdir(parents=True, exist_ok=True)
    monkeypatch.setenv("AKASHA_URL", url)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")
    monkeypatch.setenv("TMPDIR", str(tmp))
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    if extra:
        nb.cells.append(nbformat.v4.new_code_cell(extra))
    client = NotebookClient(nb, timeout=600, kernel_name="python3",
                            resources={"metadata": {"path": str(tmp_path)}})
    client.execute()  # raises CellExecutionError naming the cell on any error
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    widgets = [o for o in outputs if o.output_type in ("display_data", "execute_result")
               and "application/vnd.jupyter.widget-view+json" in o.data]
    assert widgets, f"{name} shows no panel"
    assert sorted(p.name for p in tmp.glob("akasha-*")) == [], f"{name} left temp folders"
    epochs = [m for o in outputs for m in EPOCH.findall(_shown(o))]
    assert not epochs, f"{name} shows epoch seconds where a person reads: {epochs[:5]}"
    return nb


@pytest.mark.parametrize("name", ["04_export_graphs.ipynb"])
@pytest.mark.slow
def test_notebook_runs_top_to_bottom(name: str, notebook_server: tuple[Path, str], tmp_path: Path,
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    _run(name, notebook_server[1], tmp_path, monkeypatch)


STATE = """
import json
print("STATE" + json.dumps({"caption": explorer.view.caption, "shown": explorer.shown,
                           "opened": explorer.opened, "detail": explorer.detail.value,
                           "drawn": [n["id"] for n in explorer.view.nodes]}))
"""


@pytest.mark.slow
def test_notebook_01_leaves_the_explorer_in_one_state(notebook_server: tuple[Path, str], tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    nb = _run("01_explore_memories.ipynb", notebook_server[1], tmp_path, monkeypatch, extra=STATE)
    text = "".join(o.get("text", "") for o in nb.cells[-1].outputs)
    state = json.loads(text.split("STATE", 1)[1])
    assert "hidden" not in state["caption"], state["caption"]  # what it holds, it shows
    assert 10 <= len(state["drawn"]) == len(state["shown"])
    assert state["caption"].startswith(f"community 0: its {len(state['drawn'])} strongest "
                                       "turns, of its "), state["caption"]
    assert state["opened"] is None or state["opened"] in state["drawn"]
    assert state["opened"] is not None or "community 0" in state["detail"]


@pytest.mark.slow
def test_notebook_03_writes_its_demo_once(notebook_server: tuple[Path, str], tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    mem = ak.connect(notebook_server[1])
    before = len(mem.audit())
    _run("03_curate_anchors_and_review.ipynb", notebook_server[1], tmp_path / "1", monkeypatch)
    once = len(mem.audit())
    assert once - before <= 2  # the alias and its undo, the first time
    _run("03_curate_anchors_and_review.ipynb", notebook_server[1], tmp_path / "2", monkeypatch)
    assert len(mem.audit()) == once  # Run All again writes nothing


@pytest.mark.slow
def test_notebook_02_steps_through_the_recall_an_agent_just_made(
        notebook_server: tuple[Path, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _store, url = notebook_server
    start = ak.connect(url).last_ts() + 86400
    done: list[str] = []
    stop = threading.Event()
    agent = threading.Thread(target=_agent, args=(url, 100, start, done, stop))
    agent.start()
    try:
        while len(done) < 3:           # the agent is under way before the notebook starts
            assert agent.is_alive()
            time.sleep(0.2)
        before = len(done)
        nb = _run("02_step_through_a_recall.ipynb", url, tmp_path, monkeypatch)
    finally:
        agent.join(timeout=900)
        stop.set()
    assert len(done) == 100, "the agent's 100 turns went through beside the notebook"
    at = next(k for k, c in enumerate(nb.cells)
              if c.cell_type == "code" and "agent.latest()" in c.source)
    shown = nb.cells[at + 1].outputs[-1]["data"]["text/plain"]   # latest.query
    assert AGENT in shown                 # a recall the agent made while the notebook ran
    assert int(shown.split("#")[1].rstrip("'")) >= before - 1  # made while the notebook ran
    mem = ak.connect(url)
    assert len(mem.sessions()) and mem.stats()["nodes"] >= 342 + 100


@pytest.mark.slow
def test_the_four_notebooks_again_in_reverse_order(notebook_server: tuple[Path, str], tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 15: the notebooks run in any order, twice, on one served store — no
    StoreLocked or ReadOnlyStore (any error output fails :func:`_run`). The tests above ran
    each once in order on this module's server; this runs them all again, backwards."""
    url = notebook_server[1]
    for name in reversed(NAMES):
        _run(name, url, tmp_path, monkeypatch)
    assert ak.connect(url).stats()["nodes"] >= 342


STEPPERS = """
import html, json, re
from akasha_explorer.widgets import RecallStepper as _Stepper
print("STEPPERS" + json.dumps({
    name: {"box": s.query.value, "recalled": s.trace.query if s.trace is not None else None,
           "log_uid": s.trace.log_uid if s.trace is not None else None,
           "status": html.unescape(re.sub("<[^>]+>", "", s.status.value))}
    for name, s in dict(globals()).items()
    if isinstance(s, _Stepper) and not name.startswith("_")}))  # not Out[n]
"""

NEWEST = "the newest recall in the query log"
"""What notebook 02's text says of a stepper that opens on the agent's latest recall."""


@pytest.mark.slow
def test_notebook_02_s_steppers_show_what_their_text_names(
        notebook_server: tuple[Path, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 25 item 4: after Run All, each stepper shows the recall its cell's text talks
    about — the query the markdown above it names (its first `code` span), or, where that
    text says so, the newest recall in the query log as it was made — and no later cell
    moves it to another recall."""
    url = notebook_server[1]
    mem = ak.connect(url)
    mem.recall("Slay the Spire A10 with Lan", now=mem.last_ts())   # logged: the newest recall
    nb = _run("02_step_through_a_recall.ipynb", url, tmp_path, monkeypatch, extra=STEPPERS)
    text = "".join(o.get("text", "") for o in nb.cells[-1].outputs)
    steppers = json.loads(text.split("STEPPERS", 1)[1])
    assert "stepper" in steppers
    logged = mem.query_log(limit=1)
    for name, shown in steppers.items():
        at = next(k for k, c in enumerate(nb.cells)
                  if c.cell_type == "code" and f"{name} = RecallStepper(" in c.source)
        said = next(c.source for c in reversed(nb.cells[:at]) if c.cell_type == "markdown")
        if NEWEST in said:
            newest = logged[-1]
            assert shown["log_uid"] == newest["uid"], (name, shown)
            assert shown["recalled"] == shown["box"] == newest["query"], (name, shown)
            assert f"the recall {newest['uid']} as it was made" in shown["status"]
        else:
            named = re.findall(r"`([^`]+)`", said)[0]
            assert shown["recalled"] == shown["box"] == named, (name, named, shown)
            assert f"recalled {named!r}" in shown["status"], shown["status"]
