"""``akasha serve`` (issue 15) with the official MCP SDK's own client, over stdio and
streamable HTTP, a notebook client (``ak.connect``) beside an agent, kill -9 of the server
mid-write, and the loopback/token rule. Real server processes, real stores."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

import akasha_explorer as ak
from akasha_explorer.embed import native_bfloat16
from akasha_explorer.engine.trace import RecallTrace
from akasha_explorer.server.mcp_tools import TOOLS

from .served import AKASHA, free_port, serve_env, serving, small_store

T0 = 1_790_000_000.0  # 2026-09-21


@pytest.fixture
def served(tmp_path: Path, embedder: Any) -> Iterator[tuple[str, Path, subprocess.Popen[bytes]]]:
    """A small store served over HTTP by a real ``akasha serve`` process."""
    store = small_store(tmp_path / "store")
    with serving(store, "--checkpoint-seconds", "1") as (url, proc):
        yield url, store, proc


def _json(result: Any) -> Any:
    assert not result.is_error, result.content[0].text
    return json.loads(result.content[0].text)


async def _live_loop(client: Client, turns: int, session: str) -> list[str]:
    """The agent's loop: context before answering, add_turn after (with its recall_id)."""
    nodes = []
    for k in range(turns):
        q = f"第{k}次问：阿岚的杀戮尖塔打到第几层了" if k % 2 else f"question {k}: how is my finger"
        ctx = _json(await client.call_tool("context", {"query": q, "now": T0 + 600 * k}))
        assert ctx["text"].startswith("memory") and ctx["recall_id"]
        out = _json(await client.call_tool("add_turn", {
            "session": session, "user": q, "assistant": f"answer {k}", "ts": T0 + 600 * k + 5,
            "recall_id": ctx["recall_id"]}))
        nodes.append(out["node"])
    return nodes


@pytest.mark.slow
def test_mcp_over_stdio_with_the_sdk_client(tmp_path: Path, embedder: Any) -> None:
    store = small_store(tmp_path / "store")
    params = StdioServerParameters(command=AKASHA, args=["serve", str(store), "--stdio",
                                                         "--no-http"], env=serve_env())

    async def run() -> None:
        async with Client(params, read_timeout_seconds=120) as c:
            names = [t.name for t in (await c.list_tools()).tools]
            assert names == list(TOOLS)
            nodes = await _live_loop(c, 3, "live")
            assert nodes == ["live:0", "live:2", "live:4"]
            ctx = _json(await c.call_tool("context", {"query": "阿岚 杀戮尖塔", "now": T0 + 9e3}))
            x = _json(await c.call_tool("expand", {"handle": "[1]",
                                                   "context_id": ctx["context_id"]}))
            assert x["verified"] and ("阿岚" in x["text"] or "finger" in x["text"])
            # refusals are tool errors that say what to do; the server keeps answering
            bad = await c.call_tool("forget", {"session": "live"})
            assert bad.is_error and "confirm=true" in bad.content[0].text
            bad = await c.call_tool("add_turn", {"session": "live", "ts": 1e13, "user": "x"})
            assert bad.is_error and "between 1970 and 2200" in bad.content[0].text
            bad = await c.call_tool("expand", {"handle": "[77]",
                                               "context_id": ctx["context_id"]})
            assert bad.is_error and "no handle [77]" in bad.content[0].text
            bad = await c.call_tool("context", {"query": "   "})
            assert bad.is_error and "empty" in bad.content[0].text
            stats = _json(await c.call_tool("stats", {}))
            assert stats["nodes"] == 5 and stats["version"] >= 6
            done = _json(await c.call_tool("forget", {"session": "live", "confirm": True}))
            assert done["nodes"] == 3
            assert _json(await c.call_tool("stats", {}))["nodes"] == 2

    anyio.run(run)
    with ak.open(store, read_only=True) as mem:        # the server closed the store cleanly
        assert mem.stats()["nodes"] == 2 and mem.stats()["journal_pending"] == 0


@pytest.mark.slow
def test_an_agent_writes_over_http_while_a_notebook_reads(served: Any) -> None:
    url, store, _proc = served
    nb = ak.connect(url)
    assert nb.path == store.resolve() and nb.settings == ak.Settings()
    v0 = nb.version

    async def agent() -> list[str]:
        async with Client(url + "/mcp", read_timeout_seconds=120) as c:
            return await _live_loop(c, 4, "agent")

    nodes = anyio.run(agent)
    assert nb.wait(since=v0, timeout=5) > v0         # the notebook sees the change
    # the server's model runs on one thread by default (it shares its cores), in bfloat16
    # where the CPU has it natively
    info = ak.connect(url).info
    assert info["torch_threads"] == 1
    assert info["embed_dtype"] == ("bfloat16" if native_bfloat16() else "float32")
    assert nb.stats()["nodes"] == 2 + 4
    assert {s.session for s in nb.sessions()} == {"s0", "agent"}
    assert [m.text for m in nb.messages(nodes[-1])] == [
        "第3次问：阿岚的杀戮尖塔打到第几层了", "answer 3"]
    # the recall the agent just made is in the query log, committed, and replays exactly
    t = nb.recall("第3次问：阿岚的杀戮尖塔打到第几层了", now=T0 + 1800, log=False)
    assert isinstance(t, RecallTrace) and t.floor.uids
    assert nb.replay_trace(t).to_dict()["floor"] == t.to_dict()["floor"]
    # curation through the server; its refusals are the store's own errors
    with pytest.raises(ak.NotFound, match="no node 'nobody'"):
        nb.node("nobody")
    items = nb.review()
    assert isinstance(items, list)
    with pytest.raises(ak.InvalidInput, match="cannot be called through the server"):
        nb.call("close")
    # a local open is refused, and the refusal says where the store is served
    with pytest.raises(ak.StoreLocked, match=f"ak.connect\\('{url}'\\)"):
        ak.open(store, read_only=True)
    # a server that is gone: the client is told so, in one line
    _proc.send_signal(signal.SIGINT)
    _proc.wait(timeout=30)
    with pytest.raises(ak.StoreError, match="cannot reach the memory server"):
        nb.stats()


@pytest.mark.slow
def test_kill_9_mid_write_loses_nothing_acknowledged(served: Any) -> None:
    url, store, proc = served
    acked: list[str] = []

    async def agent() -> None:
        async with Client(url + "/mcp", read_timeout_seconds=60) as c:
            for k in range(40):
                out = _json(await c.call_tool("add_turn", {
                    "session": "k9", "user": f"turn {k} about the finger", "assistant": "ok",
                    "ts": T0 + 60 * k}))
                acked.append(out["node"])

    def kill_later() -> None:
        while len(acked) < 6:
            time.sleep(0.05)
        os.kill(proc.pid, signal.SIGKILL)

    import threading
    killer = threading.Thread(target=kill_later)
    killer.start()
    with pytest.raises(BaseException):  # noqa: B017 - the transport dies with the server
        anyio.run(agent)
    killer.join()
    proc.wait(timeout=30)
    assert len(acked) >= 6
    with ak.open(store) as mem:                     # recovery on the next open
        have = set(mem.store.mirror.nodes.uid)
        assert set(acked) <= have
        for uid in acked:
            assert mem.messages(uid)[0].text.startswith("turn ")
        assert mem.doctor().ok


@pytest.mark.slow
def test_20_kills_during_4_agents_writing_lose_nothing_acknowledged(tmp_path: Path,
                                                                    embedder: Any) -> None:
    """Four MCP clients store turns at once (each with a turn_id); the server is killed -9
    twenty times at random moments. Every acknowledged turn survives, and a turn whose
    answer was lost, retried with the same turn_id on the next server, is stored once."""
    import random
    store = small_store(tmp_path / "store")
    rng = random.Random(20)
    acked: dict[str, str] = {}          # turn_id -> node
    pending: dict[int, dict[str, Any]] = {}   # client -> the add_turn that got no answer
    next_k = dict.fromkeys(range(4), 0)

    def args(i: int, k: int) -> dict[str, Any]:
        return {"session": f"c{i}", "user": f"turn {k} of client {i}: the finger",
                "assistant": "noted", "ts": T0 + 60 * k + i, "turn_id": f"c{i}-{k}"}

    for _round in range(20):
        with serving(store, "--checkpoint-seconds", "0.5") as (url, proc):
            target = len(acked) + rng.randint(2, 10)

            async def agent(i: int, url: str = url) -> None:
                async with Client(url + "/mcp", read_timeout_seconds=60) as c:
                    while True:
                        a = pending.pop(i, None) or args(i, next_k[i])
                        pending[i] = a
                        out = _json(await c.call_tool("add_turn", a))
                        acked[a["turn_id"]] = out["node"]
                        del pending[i]
                        if a["turn_id"] == f"c{i}-{next_k[i]}":
                            next_k[i] += 1

            async def agents() -> None:
                async with anyio.create_task_group() as tg:
                    for i in range(4):
                        tg.start_soon(agent, i)

            def kill_later(proc: Any = proc, target: int = target) -> None:
                end = time.time() + 120
                while len(acked) < target and time.time() < end:
                    time.sleep(0.01)
                os.kill(proc.pid, signal.SIGKILL)

            import threading
            killer = threading.Thread(target=kill_later)
            killer.start()
            with pytest.raises(BaseException):  # noqa: B017 - the transport dies
                anyio.run(agents)
            killer.join()
            proc.wait(timeout=30)
    assert len(acked) >= 20 * 2
    with ak.open(store) as mem:
        texts: dict[str, int] = {}
        for s in mem.sessions():
            for node in mem.neighbourhood().session_nodes(s.session) or []:
                t = mem.messages(node)[0].text
                texts[t] = texts.get(t, 0) + 1
        for tid, node in acked.items():
            i, k = tid[1:].split("-")
            assert mem.messages(node)[0].text == args(int(i), int(k))["user"]
        assert all(n == 1 for n in texts.values()), {t: n for t, n in texts.items() if n > 1}
        assert mem.doctor().ok


def test_serving_beyond_loopback_needs_a_token(tmp_path: Path, embedder: Any) -> None:
    store = small_store(tmp_path / "store")
    r = subprocess.run([AKASHA, "serve", str(store), "--host", "0.0.0.0", "--port",
                        str(free_port())], env={**serve_env(), "AKASHA_TOKEN": ""},
                       capture_output=True, text=True, timeout=120)
    assert r.returncode != 0 and "Give a token" in r.stderr
    with ak.open(store, read_only=True) as mem:     # nothing was opened for writing
        assert mem.stats()["nodes"] == 2
    # with a token, every request must carry it (loopback too)
    with serving(store, "--token", "s3cret", token="s3cret") as (url, _proc):
        with pytest.raises(ak.AkashaError, match="needs a token"):
            ak.connect(url, timeout=5)
        with pytest.raises(ak.AkashaError, match="needs a token"):
            ak.connect(url, token="wrong", timeout=5)
        assert ak.connect(url, token="s3cret").stats()["nodes"] == 2
