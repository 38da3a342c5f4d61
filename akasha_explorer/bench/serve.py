"""``akasha bench serve``: many agents on one served memory (issue 28).

A copy of a store (the demo store, or a synthetic one of ``synthetic:N`` turns, see
:func:`~.scale.build_synthetic_store`) is served by ``akasha serve`` in its own process,
with ``$AKASHA_TIMINGS`` set so the server writes where each call's time went
(:mod:`akasha_explorer.server.timings`). Then, for each client count (default 1, 4, 8),
that many MCP clients — the official SDK's, streamable HTTP, each its own MCP session —
follow conversations at once: the user turns of the bundled demo conversations, in order,
each client its own sessions, continued turn after turn. A loop is what an agent does per
user message: ``context`` (the user text), then ``add_turn`` (user text, the demo's reply,
the session, the ``recall_id``, a ``turn_id``).

Reported per client count: loops per second, p50 / p99 of each tool as the client sees it,
the first call of each new MCP session, errors, the server's RSS, the load average before
and after, and the **time split** of each tool: the mean seconds of each phase the server
measured, and ``transport`` (what the client saw less what the server measured: HTTP, the
client SDK). ``busy``: processes kept spinning on a core beside the run (a competing load).
Before the first client count, one MCP session calls ``health`` once per process
(:func:`_warm_client`), so the client SDK's own first-call cost in this process is not
counted as the server's "first context".

``think``: seconds each client waits after each answer — an agent's model writing its
reply after ``context``, the user reading and typing after ``add_turn``. The default 0 is
the worst case: no pause ever lets the server write the waiting turns to the graph while
nobody waits (``FOLD_IDLE``), so every 32nd ``add_turn`` folds them on its own request. A
pause longer than ``FOLD_IDLE`` plus the server's wake-up (0.5 + 0.5 s) measures the pace
of an agent whose model takes that long to answer.
"""

from __future__ import annotations

import contextlib
import json
import multiprocessing as mp
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["run_serve", "script"]

PHASES = ("transport", "sdk_http", "sdk_call", "validate", "embed", "lock_wait",
          "batch_wait", "recall", "brief", "lookup", "ingest", "lance", "kuzu", "kuzu_commit",
          "extract", "commit", "journal_fsync", "rest")
"""The split's columns, in the order a call meets them (see :mod:`.timings`)."""


def script() -> list[tuple[str, str, str]]:
    """``(source session, user text, reply)`` of every user turn of the bundled demo
    conversations, in order (the reply: the assistant message after it, or "")."""
    from importlib import resources
    rows = [json.loads(x) for x in resources.files("akasha_explorer.data").joinpath(
        "demo_conversations.jsonl").read_text("utf-8").splitlines() if x.strip()]
    out = []
    for k, r in enumerate(rows):
        if r["role"] != "user":
            continue
        nxt = rows[k + 1] if k + 1 < len(rows) else None
        reply = nxt["text"] if nxt and nxt["role"] == "assistant" and \
            nxt["session_id"] == r["session_id"] else ""
        out.append((r["session_id"], r["text"], reply))
    return out


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status", encoding="ascii") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return round(int(line.split()[1]) / 1024.0, 1)
    return float("nan")


def _spin() -> None:
    while True:
        pass


@contextlib.contextmanager
def _busy(n: int) -> Iterator[None]:
    """``n`` processes each busy on a core (a competing load), stopped after the block."""
    procs = [mp.get_context("spawn").Process(target=_spin, daemon=True) for _ in range(n)]
    for p in procs:
        p.start()
    try:
        yield
    finally:
        for p in procs:
            p.kill()
            p.join()


def _copy_store(source: str, into: Path) -> Path:
    store = into / "store"
    if source.startswith("synthetic:"):
        from .scale import build_synthetic_store
        build_synthetic_store(store, int(source.split(":", 1)[1]))
        return store
    src = Path(source)
    if not (src / "akasha.json").exists():
        subprocess.run([sys.executable, "-m", "akasha_explorer", "demo", str(src)], check=True)
    shutil.copytree(src, store)
    return store


def _pct(xs: Sequence[float], q: float) -> float:
    return round(float(np.percentile(np.asarray(xs) * 1000, q)), 1) if xs else float("nan")


def _text(result: Any) -> str:
    """The text of a tool's answer."""
    return str(getattr(result.content[0], "text", ""))


async def _level(url: str, n: int, loops: int, t0: float, lines: list[tuple[str, str, str]],
                 tag: str, think: float = 0.0) -> dict[str, Any]:
    """``n`` clients at once, ``loops`` context → add_turn each, ``think`` seconds after
    each answer; client-side numbers."""
    import anyio
    from mcp import Client

    times: dict[str, list[float]] = defaultdict(list)
    errors: list[str] = []

    async def agent(c: int) -> None:
        async with Client(url + "/mcp", read_timeout_seconds=300) as cl:
            for k in range(loops):
                src, user, reply = lines[(c * 37 + k) % len(lines)]
                now = t0 + 60.0 * (k * n + c)
                s = time.perf_counter()
                r = await cl.call_tool("context", {"query": user, "now": now})
                took = time.perf_counter() - s
                if r.is_error:
                    errors.append(_text(r)[:200])
                    continue
                times["first context" if k == 0 else "context"].append(took)
                rid = json.loads(_text(r))["recall_id"]
                if think:
                    await anyio.sleep(think)
                s = time.perf_counter()
                r = await cl.call_tool("add_turn", {
                    "session": f"bench-{tag}-{c}-{src}", "user": user,
                    "assistant": reply or None, "ts": now + 5, "recall_id": rid,
                    "turn_id": f"{tag}-{c}-{k}"})
                times["add_turn"].append(time.perf_counter() - s)
                if r.is_error:
                    errors.append(_text(r)[:200])
                if think:
                    await anyio.sleep(think)

    start = time.perf_counter()
    async with anyio.create_task_group() as tg:
        for c in range(n):
            tg.start_soon(agent, c)
    wall = time.perf_counter() - start
    out: dict[str, Any] = {"clients": n, "loops": n * loops, "think_s": think,
                           "seconds": round(wall, 2),
                           "loops_per_s": round(n * loops / wall, 2), "errors": len(errors),
                           "error_examples": errors[:3], "client_ms": {}}
    for name, xs in times.items():
        out["client_ms"][name] = {"n": len(xs), "p50": _pct(xs, 50), "p99": _pct(xs, 99),
                                  "mean": round(float(np.mean(xs)) * 1000, 1)}
    return out


_client_warm = False
"""Whether this process has made an MCP call yet (:func:`_warm_client`)."""


async def _warm_client(url: str) -> None:
    """One MCP session calling ``health``, once per process: the SDK's first call in a
    process costs ~1.3 s on the client side (measured: ``transport`` 33 ms a call over
    the 40 of the first run, ~2.5 ms in every later one), which the first run's "first
    context" counted as the server's. The server answers one ``health`` (no recall)."""
    global _client_warm
    if _client_warm:
        return
    from mcp import Client

    async with Client(url + "/mcp", read_timeout_seconds=300) as cl:
        await cl.call_tool("health", {})
    _client_warm = True


def _split(timings: Path, offset: int, client_ms: dict[str, Any]) -> tuple[dict[str, Any], int]:
    """Mean ms per phase of each tool from the server's lines after ``offset``."""
    data = timings.read_bytes() if timings.exists() else b""
    recs = [json.loads(x) for x in data[offset:].splitlines() if x.strip()]
    out: dict[str, Any] = {}
    for tool in ("context", "add_turn"):
        rs = [r for r in recs if r.get("tool") == tool]
        if not rs:
            continue
        split = {p: round(1000 * float(np.mean([r.get(p, 0.0) for r in rs])), 2)
                 for p in PHASES if p != "transport"}
        server = 1000 * float(np.mean([r["server"] for r in rs]))
        seen = [v for k, v in client_ms.items() if k.endswith(tool)]
        client = (sum(v["mean"] * v["n"] for v in seen) / sum(v["n"] for v in seen)
                  if seen else float("nan"))
        out[tool] = {"calls": len(rs), "server_ms": round(server, 1),
                     "server_p50_ms": _pct([r["server"] for r in rs], 50),
                     "transport": round(client - server, 2),
                     **{p: v for p, v in split.items() if v >= 0.005}}
    return out, len(data)


def run_serve(source: str = "demo_store", *, clients: Sequence[int] = (1, 4, 8),
              loops: int = 40, busy: int = 0, env: dict[str, str] | None = None,
              keep: Path | None = None, think: float = 0.0) -> dict[str, Any]:
    """Serve a copy of ``source`` and drive it (see the module docstring); returns the
    numbers. ``env``: extra environment of the server (e.g. ``AKASHA_TORCH_THREADS``);
    ``keep``: a folder to work in (default a temporary one, removed after); ``think``:
    each client's pause after each answer, seconds."""
    if not think >= 0:
        raise ValueError(f"think must be a number of seconds >= 0, not {think!r}")
    import anyio

    import akasha_explorer as ak

    tmp = keep or Path(tempfile.mkdtemp(prefix="akasha-bench-serve-"))
    store = _copy_store(source, tmp)
    timings = tmp / "timings.jsonl"
    timings.unlink(missing_ok=True)
    port = _port()
    url = f"http://127.0.0.1:{port}"
    server_env = {**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false",
                  "AKASHA_TIMINGS": str(timings), **(env or {})}
    proc = subprocess.Popen([sys.executable, "-m", "akasha_explorer", "serve", str(store),
                             "--port", str(port)], env=server_env, cwd=tmp)
    # (cwd: ``-m`` puts the working folder first on sys.path, before $PYTHONPATH)
    result: dict[str, Any] = {"store": source, "env": env or {}, "busy": busy, "think_s": think,
                              "cpus": os.cpu_count(), "levels": []}
    try:
        started = time.perf_counter()
        while True:
            try:
                nb = ak.connect(url, timeout=2)
                break
            except ak.StoreError:
                if proc.poll() is not None:
                    raise RuntimeError(f"the server of {store} exited ({proc.returncode})"
                                       ) from None
                time.sleep(0.2)
        result["server_ready_s"] = round(time.perf_counter() - started, 2)
        result["rss_start_mb"] = _rss_mb(proc.pid)
        t0 = nb.last_ts() + 3600
        lines = script()
        anyio.run(_warm_client, url)
        offset = 0
        with _busy(busy):
            for i, n in enumerate(clients):
                load0 = os.getloadavg()
                level = anyio.run(_level, url, n, loops, t0 + 86400.0 * i, lines, f"l{i}",
                                  think)
                level["load_before"] = [round(x, 2) for x in load0]
                level["load_after"] = [round(x, 2) for x in os.getloadavg()]
                level["rss_mb"] = _rss_mb(proc.pid)
                level["split_ms"], offset = _split(timings, offset, level["client_ms"])
                result["levels"].append(level)
        result["nodes_end"] = nb.stats()["nodes"]
    finally:
        proc.terminate()
        proc.wait(timeout=120)
        if keep is None:
            shutil.rmtree(tmp, ignore_errors=True)
    return result


def markdown(result: dict[str, Any], command: str = "") -> str:
    """The numbers of :func:`run_serve` as markdown tables."""
    md = [f"## `{result['store']}` — busy cores beside: {result['busy']}, think "
          f"{result.get('think_s', 0.0)} s, server env {result['env'] or 'default'}", "",
          f"Command: `{command}`" if command else "", "",
          "| clients | loops/s | context p50 | context p99 | add_turn p50 | add_turn p99 | "
          "first context p50 | errors | RSS MB | load before → after |",
          "|---|---|---|---|---|---|---|---|---|---|"]
    for lv in result["levels"]:
        c = lv["client_ms"]

        def g(name: str, q: str, c: dict[str, Any] = c) -> str:
            return str(c.get(name, {}).get(q, "–"))
        md.append(f"| {lv['clients']} | {lv['loops_per_s']} | {g('context', 'p50')} | "
                  f"{g('context', 'p99')} | {g('add_turn', 'p50')} | {g('add_turn', 'p99')} | "
                  f"{g('first context', 'p50')} | {lv['errors']} | {lv['rss_mb']} | "
                  f"{lv['load_before'][0]} → {lv['load_after'][0]} |")
    md += ["", "Time split (mean ms per call; `transport` = client − server):", "",
           "| clients | tool | server | " + " | ".join(PHASES) + " |",
           "|---|---|---|" + "---|" * len(PHASES)]
    for lv in result["levels"]:
        for tool, sp in lv["split_ms"].items():
            md.append(f"| {lv['clients']} | {tool} | {sp['server_ms']} | " +
                      " | ".join(str(sp.get(p, "")) for p in PHASES) + " |")
    return "\n".join(md) + "\n"
