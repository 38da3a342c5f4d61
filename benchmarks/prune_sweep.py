"""R@10 of LoCoMo and MADial-Bench-zh at several ``EDGE_PRUNE_BELOW`` values (issue 28:
the default is the largest value whose R@10 stays within .002 of no pruning and leaves the
demo's trace snapshot unchanged).

Run: ``python benchmarks/prune_sweep.py 0,1e-5,1e-3 out.json`` (methods context and akasha,
no ablations; the data under ``/work/shared/data``, or ``AKASHA_BENCH_DATA``).
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

from akasha_explorer.bench.locomo import BENCH_SETTINGS, locomo_corpora
from akasha_explorer.bench.madial import madial_corpora
from akasha_explorer.bench.recall import run_recall
from akasha_explorer.config import Settings


def main() -> None:
    data = Path(os.environ.get("AKASHA_BENCH_DATA", "/work/shared/data"))
    out = {}
    for x in [float(v) for v in sys.argv[1].split(",")]:
        for name, corpora, extra in (
                ("locomo", lambda: locomo_corpora(data / "locomo-dev.json"), BENCH_SETTINGS),
                ("madial", lambda: madial_corpora(data / "madial-zh-dev"), {})):
            t0, load = time.time(), os.getloadavg()[0]
            r = run_recall(corpora(), settings=Settings.profile("v2", EDGE_PRUNE_BELOW=x, **extra),
                           methods=("context", "akasha"), ablations=False, progress=False,
                           label=name)
            row = {m: round(r["methods"][m]["overall"]["recall@10"], 4)
                   for m in ("context", "akasha")}
            out[f"{name} {x:g}"] = {**row, "seconds": round(time.time() - t0),
                                    "load": round(load, 2)}
            print(name, x, out[f"{name} {x:g}"], flush=True)
    Path(sys.argv[2]).write_text(json.dumps(out, indent=1) + "\n", "utf-8")


if __name__ == "__main__":
    main()
