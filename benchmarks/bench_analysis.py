"""Benchmark of the analysis views, algorithms and exports (SPEC §7, §9).

Two sizes:

- **demo** — the bundled demo store (342 nodes, ~8.7k COACT edges, anchors from the
  extraction), built with ``akasha demo`` into a temporary folder unless ``--store`` names
  one; timed through the :class:`Memory` methods, including the whole-store export and
  import;
- **10k** — a synthetic mirror built directly with the engine arrays: 10,000 nodes in
  sessions over 60 days, 384-dim unit vectors around 40 topics, a heavy-tailed COACT
  degree (380k edges drawn, ~287k distinct pairs after duplicates; SPEC §1 measures Kuzu
  at 380k) and synthetic anchors (2,000 anchors, 30,000 mentions, 3,000 triples) and a
  10,000-row query log; timed through the pure functions the Memory methods call (no
  text previews, no query embedding).

Each line is the median wall time of ``--repeat`` runs (1 for the slow ones). Run:
``python benchmarks/bench_analysis.py [--store PATH] [--quick] [--json]``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from akasha_explorer.analysis.communities import community_table, leiden
from akasha_explorer.analysis.ppr import personalized_pagerank, ppr_recall
from akasha_explorer.analysis.surprises import (
    bridges,
    indirect_pairs,
    knowledge_gaps,
    semantic_mismatches,
)
from akasha_explorer.analysis.views import (
    anchor_view,
    bipartite_view,
    coact_view,
    with_communities,
)
from akasha_explorer.config import DAY, Settings
from akasha_explorer.engine.bm25 import LexicalHits
from akasha_explorer.engine.recall import recall
from akasha_explorer.engine.state import EdgeStore, NodeTable
from akasha_explorer.export.formats import write_csv, write_json, write_parquet
from akasha_explorer.export.gexf import write_gexf
from akasha_explorer.export.graphml import write_graphml
from akasha_explorer.export.html import write_html
from akasha_explorer.export.viz import layout

DIM = 384
RESULTS: list[dict[str, Any]] = []


def timed(size: str, name: str, fn: Callable[[], Any], repeat: int = 3) -> Any:
    out, times = None, []
    for _ in range(max(1, repeat)):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    RESULTS.append({"size": size, "step": name, "seconds": statistics.median(times),
                    "runs": len(times)})
    print(f"  {size:5s} {name:36s} {statistics.median(times) * 1000:10.1f} ms", flush=True)
    return out


# -- synthetic 10k mirror ------------------------------------------------------------------------
def _unit(a: np.ndarray) -> np.ndarray:
    return a / np.linalg.norm(a, axis=-1, keepdims=True)


def synthetic(n: int, edges: int, seed: int = 11) -> tuple[NodeTable, EdgeStore, np.ndarray,
                                                         float]:
    """Nodes in sessions of ~8 over 60 days around 40 topics; ``edges`` directed COACT
    edges, mostly within a topic, with a heavy-tailed (Zipf) choice of endpoints."""
    rng = np.random.default_rng(seed)
    centers = _unit(rng.standard_normal((40, DIM)))
    topic = rng.integers(0, 40, n)
    vec = _unit(centers[topic] + 0.8 * rng.standard_normal((n, DIM)) / np.sqrt(DIM))
    ts = np.sort(rng.uniform(0, 60 * DAY, n))
    nodes = NodeTable(DIM)
    for i in range(n):
        mv = _unit(np.stack([vec[i] + 0.05 * rng.standard_normal(DIM) / np.sqrt(DIM)
                             for _ in range(2)]))
        nodes.add_node(f"s{i // 8}:{i % 8}", ts=float(ts[i]), session=f"s{i // 8}",
                       vector=vec[i], sigma=float(rng.uniform(0, 1)),
                       strength=float(rng.uniform(0.5, 3.0)), resource=1.0,
                       assistant_only=False, msg_vectors=mv, msg_ts=[ts[i], ts[i] + 5],
                       msg_uids=[f"m{i}a", f"m{i}b"])
    es = EdgeStore()
    weight = 1.0 / np.arange(1, n + 1) ** 0.8
    weight /= weight.sum()
    perm = rng.permutation(n)
    order = np.argsort(topic, kind="stable")
    count = np.bincount(topic, minlength=40)
    start = np.concatenate([[0], np.cumsum(count)[:-1]])
    src = perm[rng.choice(n, edges, p=weight)]
    same = rng.random(edges) < 0.8
    mate = order[start[topic[src]] + (rng.random(edges) * count[topic[src]]).astype(np.int64)]
    dst = np.where(same, mate, rng.integers(0, n, edges))
    w = rng.gamma(1.2, 0.25, edges)
    last = np.maximum(ts[src], ts[dst]) + rng.uniform(0, 3 * DAY, edges)
    now = float(ts.max() + DAY)
    last = np.minimum(last, now)
    for s, d, ww, lt in zip(src.tolist(), dst.tolist(), w.tolist(), last.tolist(), strict=True):
        if s != d:
            es.upsert(s, d, w=ww, last_ts=lt, co_count=1)
    return nodes, es, topic, now


def synthetic_anchors(nodes: NodeTable, rng: np.random.Generator
                      ) -> tuple[list[dict], list[dict], list[dict]]:
    anchors = [{"uid": f"an{k}", "name": f"anchor {k}", "kind": "thing", "status": "active",
                "created_ts": 0.0, "note": ""} for k in range(2000)]
    zipf = 1.0 / np.arange(1, 2001)
    zipf /= zipf.sum()
    turns = rng.integers(0, nodes.n, 30_000)
    which = rng.choice(2000, 30_000, p=zipf)
    mentions = [{"turn": nodes.uid[t], "anchor": f"an{a}"} for t, a in zip(turns, which,
                                                                          strict=True)]
    facts = [{"triple": f"t{k}", "predicate": "related_to", "status": "approved",
              "subject": f"an{rng.integers(0, 2000)}", "object": f"an{rng.integers(0, 2000)}"}
             for k in range(3000)]
    return anchors, mentions, facts


def bench_synthetic(n: int, n_edges: int, quick: bool, out: Path) -> None:
    size = f"{n // 1000}k"
    print(f"\nsynthetic mirror: {n} nodes, {n_edges} COACT edges (building …)", flush=True)
    t0 = time.perf_counter()
    nodes, edges, _, now = synthetic(n, n_edges)
    print(f"  built in {time.perf_counter() - t0:.1f} s: {edges.n_alive()} alive edges", flush=True)
    cfg = Settings()
    rep = 1 if quick else 3
    def comm(v: Any) -> Any:
        return leiden(v, resolution=1.0, seed=0)

    view = timed(size, "view nodes (no communities)",
                 lambda: coact_view(nodes, edges, now=now, settings=cfg), rep)
    timed(size, "view nodes (with Leiden)",
          lambda: coact_view(nodes, edges, now=now, settings=cfg, communities=comm), 1)
    timed(size, "view -> undirected", view.undirected, rep)
    timed(size, "view -> igraph (all attributes)", view.to_igraph, rep)
    timed(size, "view -> networkx", view.to_networkx, 1)
    memb = timed(size, "leiden (resolution 1)", lambda: leiden(view, seed=0), rep)
    print(f"        {len(set(memb.tolist()))} communities")
    view = with_communities(view, comm)
    timed(size, "community_table", lambda: community_table(view), rep)
    g = view.to_igraph(attributes=False)
    seeds = {view.nodes["id"].iloc[k]: 1.0 for k in range(0, n, n // 10)}
    timed(size, "ppr explorer (igraph built)",
          lambda: personalized_pagerank(g, seeds, damping=0.5), rep)
    rng = np.random.default_rng(3)
    q = _unit(nodes.vec[123] + 0.3 * rng.standard_normal(DIM) / np.sqrt(DIM)).astype(np.float32)
    timed(size, "recall akasha (no embedding)",
          lambda: recall(nodes, edges, q, LexicalHits.empty(), now=now, settings=cfg), rep)
    timed(size, "recall ppr (no embedding)",
          lambda: ppr_recall(nodes, edges, q, LexicalHits.empty(), now=now, settings=cfg), rep)
    vecs = nodes.vec[view.nodes["row"].to_numpy()]
    timed(size, "surprise (a) bridges", lambda: bridges(view, top=10), rep)
    timed(size, "surprise (b) indirect pairs", lambda: indirect_pairs(view, top=10), 1)
    log = [{"query": f"q{k % 3000}", "ts": float(k), "n_activated": int(k % 7 != 0),
            "empty": k % 7 == 0, "seeds": '[["x","Dense"]]', "method": "akasha"}
           for k in range(10_000)]
    timed(size, "surprise (c) knowledge gaps (10k log)", lambda: knowledge_gaps(log), rep)
    timed(size, "surprise (d) semantic mismatches",
          lambda: semantic_mismatches(view, vecs, k=5, min_cos=0.5), 1)
    anchors, mentions, facts = synthetic_anchors(nodes, rng)
    ts = dict(zip(view.nodes["id"], view.nodes["ts"], strict=True))
    timed(size, "view anchors (with Leiden)",
          lambda: anchor_view(anchors, mentions, facts, turn_ts=ts, now=now,
                              communities=comm), rep)
    timed(size, "view bipartite (with Leiden)",
          lambda: bipartite_view(view.nodes, anchors, mentions, now=now, communities=comm), 1)
    timed(size, "layout (FR on the backbone, seeded)", lambda: layout(view, seed=0), 1)
    timed(size, "export graphml", lambda: write_graphml(view, out / "s.graphml"), 1)
    timed(size, "export gexf", lambda: write_gexf(view, out / "s.gexf"), 1)
    timed(size, "export json", lambda: write_json(view, out / "s.json"), 1)
    timed(size, "export parquet", lambda: write_parquet(view, out / "pq"), 1)
    timed(size, "export csv", lambda: write_csv(view, out / "csv"), 1)
    timed(size, "export html", lambda: write_html(view, out / "s.html"), 1)


# -- the demo store ------------------------------------------------------------------------------
def bench_demo(store: Path | None, quick: bool, out: Path) -> None:
    import akasha_explorer as ak
    from akasha_explorer.export.store import import_store

    if store is None:
        store = out / "demo"
        print("\nbuilding the demo store (akasha demo) …", flush=True)
        subprocess.run([sys.executable, "-m", "akasha_explorer", "demo", str(store)],
                       check=True, capture_output=True)
    rep = 1 if quick else 5
    with ak.open(store, read_only=True) as mem:
        s = mem.stats()
        print(f"\ndemo store {store}: {s['nodes']} nodes, {s['edges']} edges", flush=True)
        now = mem.last_ts()
        mem.store.embeddings.query("warm up")          # load the model outside the timings
        for name in ("nodes", "anchors", "bipartite"):
            v = timed("demo", f"view {name} (with Leiden)", lambda n=name: mem.graph_view(n), rep)
            print(f"        {v}")
        v = mem.graph_view()
        timed("demo", "view -> igraph (all attributes)", v.to_igraph, rep)
        timed("demo", "view -> networkx", v.to_networkx, rep)
        timed("demo", "leiden (resolution 1)", lambda: leiden(v, seed=0), rep)
        timed("demo", "communities (table + labels)", mem.communities, rep)
        timed("demo", "ppr explorer (view built)", lambda: mem.ppr(v.nodes["id"].iloc[0]), rep)
        timed("demo", "recall akasha (with embedding)",
              lambda: mem.recall("手指换药", now=now, log=False), rep)
        timed("demo", "recall ppr (with embedding)",
              lambda: mem.recall("手指换药", now=now, method="ppr", log=False), rep)
        timed("demo", "surprises (all four, no queue)", lambda: mem.surprises(queue=False), rep)
        for fmt, target in (("graphml", "d.graphml"), ("gexf", "d.gexf"), ("json", "d.json"),
                            ("parquet", "dpq"), ("csv", "dcsv"), ("html", "d.html")):
            timed("demo", f"export {fmt}",
                  lambda f=fmt, t=target: mem.export(out / t, format=f), 1)
        timed("demo", "export store (whole)",
              lambda: mem.export(out / "dstore", format="store"), 1)
    timed("demo", "import store (whole)", lambda: import_store(out / "dstore", out / "dcopy"), 1)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--store", type=Path, default=None, help="An existing demo store.")
    ap.add_argument("--quick", action="store_true", help="One run per step, 2k synthetic.")
    ap.add_argument("--json", action="store_true", help="Print the results as JSON at the end.")
    args = ap.parse_args(argv)
    out = Path(tempfile.mkdtemp(prefix="akasha-bench-analysis-"))
    try:
        bench_demo(args.store, args.quick, out)
        n = 2_000 if args.quick else 10_000
        bench_synthetic(n, 38 * n, args.quick, out)
    finally:
        shutil.rmtree(out, ignore_errors=True)
    if args.json:
        print(json.dumps(RESULTS, indent=1))
    else:
        frame = pd.DataFrame(RESULTS)
        frame["ms"] = (frame["seconds"] * 1000).round(1)
        print("\n" + frame.pivot_table(index="step", columns="size", values="ms",
                                       sort=False).to_string())


if __name__ == "__main__":
    main()
