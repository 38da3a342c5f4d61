"""A/B of ``akasha bench serve``: the same runs against two code trees, interleaved (A, B,
A, B … per store) so both see the same machine load; prints and writes both tables and
the ratios B / A.

Run: ``python benchmarks/serve_ab.py --a /path/to/tree-before --b . [--store demo_store]
[--clients 1,8] [--loops 15] [--busy 0] [--out benchmarks/results/serve-ab.json]``
(each tree is put first on the server's ``PYTHONPATH``; the client is this tree's).
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path
from typing import Any

from akasha_explorer.bench.serve import markdown, run_serve


def _ratio(a: dict[str, Any], b: dict[str, Any]) -> list[str]:
    out = []
    for la, lb in zip(a["levels"], b["levels"], strict=True):
        parts = [f"loops/s ×{lb['loops_per_s'] / la['loops_per_s']:.2f}"]
        for tool in ("context", "add_turn"):
            pa, pb = la["client_ms"].get(tool, {}), lb["client_ms"].get(tool, {})
            if pa and pb:
                parts.append(f"{tool} p50 ×{pb['p50'] / pa['p50']:.2f} p99 "
                             f"×{pb['p99'] / pa['p99']:.2f}")
        out.append(f"- {la['clients']} client(s): " + ", ".join(parts))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--a", required=True)
    ap.add_argument("--b", required=True)
    ap.add_argument("--store", action="append", default=None)
    ap.add_argument("--clients", default="1,8")
    ap.add_argument("--loops", type=int, default=15)
    ap.add_argument("--busy", type=int, default=0)
    ap.add_argument("--env", action="append", default=[], help="NAME=VALUE for B only")
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    command = "python benchmarks/serve_ab.py " + " ".join(shlex.quote(x) for x in sys.argv[1:])
    counts = [int(x) for x in args.clients.split(",")]
    extra = dict(e.split("=", 1) for e in args.env)
    runs, md = [], [f"Command: `{command}`", ""]
    for store in args.store or ["demo_store"]:
        pair = {}
        for name, tree in (("A", args.a), ("B", args.b)):
            env = {"PYTHONPATH": str(Path(tree).resolve()), **(extra if name == "B" else {})}
            r = run_serve(store, clients=counts, loops=args.loops, busy=args.busy, env=env)
            r["variant"] = name
            pair[name] = r
            md += [f"### {name}: {tree}", "", markdown(r)]
            print(md[-1], flush=True)
        md += [f"### B / A on `{store}`", "", *_ratio(pair["A"], pair["B"]), ""]
        print("\n".join(md[-4:]), flush=True)
        runs.append(pair)
    if args.out:
        Path(args.out).write_text(json.dumps({"command": command, "runs": runs}, indent=2,
                                             ensure_ascii=False) + "\n", "utf-8")
        Path(args.out).with_suffix(".md").write_text("\n".join(md) + "\n", "utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
