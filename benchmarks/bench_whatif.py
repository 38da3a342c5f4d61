"""How long the issue-16 panels take to re-settle and redraw on a store (prints numbers;
not a test). The in-browser time — from the Enter key to the redrawn canvas — is printed by
``tests/test_browser_panels.py`` (run it with ``-s``).

    .venv/bin/python benchmarks/bench_whatif.py [STORE]

STORE defaults to ./demo_store (``akasha demo`` builds it, with its labelled queries).
Opens it read-only; every recall is a dry run.
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable

import akasha_explorer as ak
from akasha_explorer.widgets import CompareMethods, TimeTravelPanel, WhatIfPanel

QUERY = "和阿岚打杀戮尖塔，A10 过了吗"
CHANGES: list[dict[str, float]] = [
    {"EDGE_TAU": 2.0}, {"CROSS_BOOST": 0.0}, {"RWR_STEPS": 0}, {"GRAPH_LIMIT": 0},
    {"STRENGTH_TAU": 1.0}, {"ACTIVATION_THRESHOLD": 0.4}, {"FUSION_DENSE_WEIGHT": 1.5},
]


def timed(label: str, fn: Callable[[], object], runs: int = 5) -> None:
    ts = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        ts.append((time.perf_counter() - t0) * 1000.0)
    print(f"{label:58s} median {statistics.median(ts):8.1f} ms  (max {max(ts):.1f}, n={runs})")


def main() -> None:
    path = sys.argv[1] if len(sys.argv) > 1 else "demo_store"
    mem = ak.open(path, read_only=True)
    mem.store.embeddings.query("warm up the model")
    print(mem)
    panel = WhatIfPanel(mem, query=QUERY)
    step = iter(range(10**6))

    def change() -> None:
        k = next(step)
        panel.set(**CHANGES[k % len(CHANGES)])
        if k % len(CHANGES) == len(CHANGES) - 1:
            panel.reset()

    timed("what-if: one constant moved, re-settled, redrawn", change, runs=21)
    print(f"{'':58s} (panel's own last_ms: {panel.last_ms:.1f})")
    if mem.labels():
        panel.score()  # from now on every change also scores the labelled set
        timed("what-if: the same, and the labelled set scored again", change, runs=14)
        timed("mem.evaluate(): every method, every labelled query", mem.evaluate, runs=3)
    travel = TimeTravelPanel(mem, query=QUERY)
    days = iter(range(10**6))
    timed("time travel: one day moved (recall + picture)",
          lambda: travel.go(-(next(days) % 50)), runs=21)
    compare = CompareMethods(mem)
    timed("compare methods: one query through six methods",
          lambda: compare.run("Where does Lan live?"), runs=5)


if __name__ == "__main__":
    main()
