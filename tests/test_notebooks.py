"""The four notebooks run top to bottom (nbclient, a real kernel), so they never rot; and
they are committed as sources, without outputs. They run the way ``make lab`` runs them:
every notebook connected to one ``akasha serve`` of the demo store (so none locks another
out) — and while notebook 02 runs, an agent drives 100 live turns into the same server over
MCP, and the notebook steps through the agent's latest recall (issue 15)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
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

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
NAMES = ["01_explore_memories.ipynb", "02_step_through_a_recall.ipynb",
         "03_curate_anchors_and_review.ipynb", "04_export_graphs.ipynb"]


@pytest.fixture(scope="module")
def served(demo_store_template: Path, tmp_path_factory: pytest.TempPathFactory
           ) -> Iterator[tuple[Path, str]]:
    """One private copy of the demo store, served by ``akasha serve`` for every notebook of
    this module (what ``make lab`` does)."""
    dst = tmp_path_factory.mktemp("nb") / "store"
    shutil.copytree(demo_store_template, dst)
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    proc = subprocess.Popen([str(Path(sys.executable).parent / "akasha"), "serve", str(dst),
                             "--port", str(port)], env={**os.environ, "HF_HUB_OFFLINE": "1"},
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}"
    end = time.time() + 90
    while True:
        try:
            ak.connect(url, timeout=2)
            break
        except ak.StoreError:
            assert proc.poll() is None and time.time() < end, proc.stderr.read().decode()
            time.sleep(0.3)
    yield dst, url
    proc.send_signal(signal.SIGINT)
    proc.wait(timeout=60)


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


def _run(name: str, url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> nbformat.NotebookNode:
    monkeypatch.setenv("AKASHA_URL", url)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    client = NotebookClient(nb, timeout=600, kernel_name="python3",
                            resources={"metadata": {"path": str(tmp_path)}})
    client.execute()  # raises CellExecutionError naming the cell on any error
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    widgets = [o for o in outputs if o.output_type in ("display_data", "execute_result")
               and "application/vnd.jupyter.widget-view+json" in o.data]
    assert widgets, f"{name} shows no panel"
    return nb


@pytest.mark.parametrize("name", [n for n in NAMES if not n.startswith("02")])
def test_notebook_runs_top_to_bottom(name: str, served: tuple[Path, str], tmp_path: Path,
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    _run(name, served[1], tmp_path, monkeypatch)


def test_notebook_02_steps_through_the_recall_an_agent_just_made(
        served: tuple[Path, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _store, url = served
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
    cell = next(c for c in nb.cells if c.cell_type == "code" and "stepper.latest()" in c.source)
    shown = cell.outputs[-1]["data"]["text/plain"]
    assert AGENT in shown                 # a recall the agent made while the notebook ran
    assert int(shown.split("#")[1].rstrip("'")) >= before - 1  # made while the notebook ran
    mem = ak.connect(url)
    assert len(mem.sessions()) and mem.stats()["nodes"] >= 342 + 100


def test_the_four_notebooks_again_in_reverse_order(served: tuple[Path, str], tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 15: the notebooks run in any order, twice, on one served store — no
    StoreLocked or ReadOnlyStore (any error output fails :func:`_run`). The tests above ran
    each once in order on this module's server; this runs them all again, backwards."""
    url = served[1]
    for name in reversed(NAMES):
        _run(name, url, tmp_path, monkeypatch)
    assert ak.connect(url).stats()["nodes"] >= 342
