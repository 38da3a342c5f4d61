"""Benchmark of ``akasha serve``: an MCP client (the official SDK's, streamable HTTP)
drives live turns into a served copy of the demo store — ``context`` before each answer,
``add_turn`` after it — while a notebook client (``ak.connect``) reads beside it; prints
p50/p99 per tool call and per notebook call, then what a client sees once the server is
gone.

Run: ``python benchmarks/bench_server.py [--turns 100] [--store PATH]`` (default: a copy of
``./demo_store``, built with ``akasha demo`` if missing).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import anyio
import numpy as np
from mcp import Client

import akasha_explorer as ak

AKASHA = str(Path(sys.executable).parent / "akasha")


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--turns", type=int, default=100)
    ap.add_argument("--store", default="demo_store")
    args = ap.parse_args(argv)
    src = Path(args.store)
    if not (src / "akasha.json").exists():
        subprocess.run([AKASHA, "demo", str(src)], check=True)
    tmp = Path(tempfile.mkdtemp(prefix="akasha-bench-serve-"))
    store = tmp / "store"
    shutil.copytree(src, store)
    port = _port()
    url = f"http://127.0.0.1:{port}"
    proc = subprocess.Popen([AKASHA, "serve", str(store), "--port", str(port)],
                            env={**os.environ, "HF_HUB_OFFLINE": "1"})
    try:
        while True:
            try:
                nb = ak.connect(url, timeout=2)
                break
            except ak.StoreError:
                time.sleep(0.3)
        t0 = nb.last_ts() + 3600
        times: dict[str, list[float]] = defaultdict(list)

        async def agent() -> None:
            async with Client(url + "/mcp", read_timeout_seconds=120) as c:
                await c.call_tool("context", {"query": "warm up", "now": t0})
                for k in range(args.turns):
                    q = ["阿岚最近怎么样", "手指换药了吗", "what did I say about the humidifier",
                         "杀戮尖塔 A10"][k % 4] + f" #{k}"
                    s = time.perf_counter()
                    r = await c.call_tool("context", {"query": q, "now": t0 + 60 * k})
                    times["mcp context"].append(time.perf_counter() - s)
                    rid = json.loads(r.content[0].text)["recall_id"]
                    s = time.perf_counter()
                    await c.call_tool("add_turn", {"session": "bench", "user": q,
                                                   "assistant": f"answer {k}",
                                                   "ts": t0 + 60 * k + 5, "recall_id": rid})
                    times["mcp add_turn"].append(time.perf_counter() - s)
                    if k % 10 == 0:
                        s = time.perf_counter()
                        nb.stats()
                        times["notebook stats()"].append(time.perf_counter() - s)
                        s = time.perf_counter()
                        nb.recall(q, now=t0 + 60 * k, log=False)
                        times["notebook recall()"].append(time.perf_counter() - s)

        anyio.run(agent)
        load = os.getloadavg()[0]
        print(f"{args.turns} live turns into {src} served at {url}; load average {load:.2f}")
        print(f"{'call':<20} {'n':>4} {'p50 ms':>8} {'p99 ms':>8}")
        for name, xs in times.items():
            a = np.array(xs) * 1000
            print(f"{name:<20} {len(a):>4} {np.percentile(a, 50):>8.1f} "
                  f"{np.percentile(a, 99):>8.1f}")
        print(f"store now: {nb.stats()['nodes']} nodes")
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=60)
    try:
        nb.stats()
    except ak.StoreError as e:
        print(f"after the server stopped, a notebook call raises {type(e).__name__}: {e}")
    shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
