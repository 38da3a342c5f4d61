"""How long the notebook panels take on the demo store (prints numbers; not a test).

    .venv/bin/python benchmarks/bench_widgets.py [STORE]

STORE defaults to ./demo_store (``akasha demo`` builds it). Opens it read-only.
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable

import numpy as np

import akasha_explorer as ak
from akasha_explorer.widgets import CommunitiesPanel, GraphCanvas, MemoryExplorer, RecallStepper
from akasha_explorer.widgets.canvas import layout

QUERIES = ["最近手指的伤怎么样了", "加湿器 湿度 自动化", "Lan Ironclad A11", "星图 release"]


def timed(label: str, fn: Callable[[], object], runs: int = 3) -> None:
    ts = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        ts.append((time.perf_counter() - t0) * 1000.0)
    print(f"{label:52s} median {statistics.median(ts):8.1f} ms  (min {min(ts):.1f}, n={runs})")


def main() -> None:
    path = sys.argv[1] if len(sys.argv) > 1 else "demo_store"
    mem = ak.open(path, read_only=True)
    mem.store.embeddings.query("warm up the model")
    print(mem)
    rng = np.random.default_rng(0)
    for n, m in ((100, 1000), (500, 5000)):
        edges = [tuple(int(x) for x in rng.choice(n, 2, replace=False)) for _ in range(m)]
        timed(f"igraph layout, {n} nodes / {m} edges", lambda n=n, e=edges: layout(n, e))
    nodes = [{"id": f"n{k}", "label": f"turn {k}"} for k in range(500)]
    edges = [{"from": f"n{a}", "to": f"n{b}"} for a, b in
             (rng.choice(500, 2, replace=False) for _ in range(3000))]
    timed("GraphCanvas.set_graph, 500 nodes / 3000 edges",
          lambda: GraphCanvas().set_graph(nodes, edges))
    s = RecallStepper(mem)
    for q in QUERIES:
        timed(f"RecallStepper.run {q!r}", lambda q=q: s.run(q))
    timed("RecallStepper: step through all six stages",
          lambda: [s.goto(x) for x in ("seeds", "rwr", "graph_expand", "settlement", "groups",
                                       "writeback")])
    x = MemoryExplorer(mem)
    for q in QUERIES[:2]:
        timed(f"MemoryExplorer.search {q!r}", lambda q=q: x.search(q))
    first = x.hits["uid"].iloc[0]
    timed("MemoryExplorer.open_node", lambda: x.open_node(first))
    timed("MemoryExplorer.expand (25 neighbours)", lambda: x.expand([first]))
    timed("CommunitiesPanel(mem) (communities + surprises)", lambda: CommunitiesPanel(mem), 2)
    mem.close()


if __name__ == "__main__":
    main()
