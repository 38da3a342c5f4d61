"""A/B of ``akasha bench serve``: the same runs against several code trees, interleaved
(per store: A, B, C …) so they see the same machine load; prints and writes every table
and the ratios of each tree to the first.

Run: ``python benchmarks/serve_ab.py --tree before=/path/a --tree after=. [--store
demo_store] [--clients 1,8] [--loops 15] [--busy 0] [--think 0] [--env after:NAME=VALUE] [--out
benchmarks/results/serve-ab.json]`` (each tree is put first on the server's
``PYTHONPATH``; the client is this tree's; ``--env TREE:NAME=VALUE`` sets the server's
environment for that tree only).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
from pathlib import Path
from typing import Any

from akasha_explorer.bench.serve import markdown, run_serve


def _ratio(a: dict[str, Any], b: dict[str, Any]) -> list[str]:
    out = []
    for la, lb in zip(a["levels"], b["levels"], strict=True):
        parts = [f"loops/s ×{lb['loops_per_s'] / la['loops_per_s']:.2f}"]
        for tool in ("context", "add_turn", "first context"):
            pa, pb = la["client_ms"].get(tool, {}), lb["client_ms"].get(tool, {})
            if pa and pb:
                parts.append(f"{tool} p50 ×{pb['p50'] / pa['p50']:.2f} p99 "
                             f"×{pb['p99'] / pa['p99']:.2f}")
        out.append(f"- {la['clients']} client(s): " + ", ".join(parts))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tree", action="append", required=True, help="NAME=PATH, repeatable")
    ap.add_argument("--store", action="append", default=None)
    ap.add_argument("--clients", default="1,8")
    ap.add_argument("--loops", type=int, default=15)
    ap.add_argument("--busy", type=int, default=0)
    ap.add_argument("--think", type=float, default=0.0,
                    help="seconds each client pauses after each answer (akasha bench serve)")
    ap.add_argument("--env", action="append", default=[], help="TREE:NAME=VALUE")
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    command = "python benchmarks/serve_ab.py " + " ".join(shlex.quote(x) for x in sys.argv[1:])
    counts = [int(x) for x in args.clients.split(",")]
    trees = [t.split("=", 1) for t in args.tree]
    extra: dict[str, dict[str, str]] = {}
    for e in args.env:
        tree, _, kv = e.partition(":")
        k, _, v = kv.partition("=")
        extra.setdefault(tree, {})[k] = v
    runs, md = [], [f"Command: `{command}`", ""]
    for store in args.store or ["demo_store"]:
        done: dict[str, Any] = {}
        for name, path in trees:
            env = {"PYTHONPATH": str(Path(path).resolve()), **extra.get(name, {})}
            r = run_serve(store, clients=counts, loops=args.loops, busy=args.busy, env=env,
                          think=args.think)
            r["variant"] = name
            done[name] = r
            md += [f"### {name} ({path}); load after {os.getloadavg()[0]:.2f}", "",
                   markdown(r)]
            print(md[-1], flush=True)
        first = trees[0][0]
        for name, _ in trees[1:]:
            md += [f"### {name} / {first} on `{store}`", "", *_ratio(done[first], done[name]),
                   ""]
            print("\n".join(md[-3:]), flush=True)
        runs.append(done)
    if args.out:
        Path(args.out).write_text(json.dumps({"command": command, "runs": runs}, indent=2,
                                             ensure_ascii=False) + "\n", "utf-8")
        Path(args.out).with_suffix(".md").write_text("\n".join(md) + "\n", "utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
