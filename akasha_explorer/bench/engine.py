"""Benchmark of the pure recall engine on synthetic mirrors (SPEC §1 targets).

Builds two mirrors shaped like the real Akasha store the design describes (3,378 nodes /
127,696 edges): 384-dim unit vectors with topic clusters, nodes grouped in sessions over
60 days, a user + assistant message per node (2 % assistant-only), and a COACT degree like
the real store's (fan ≈ 60 at the median, a few hubs near 300). Then times, in one run:

- ``recall`` (stages 1–4 and the trace; query embedding excluded: vectors are given), as
  wall time and as the thread's CPU time (on a shared machine the wall time mostly measures
  the neighbours),
- ``plan_writeback`` + ``apply_plan`` (stage 5 into the mirror),
- the cosine scan inside recall (every node and every message),
- a numpy brute-force top-10 cosine search over the same node vectors (``einsum``, as
  recall does; and ``vec @ q`` through BLAS, timed apart), and the ratio recall / brute.

Both settings profiles run on the same mirrors in one run (v1: the V1-faithful engine; v2:
the default, with the fused floor) and the last column gives v2's recall p50 over v1's.

Run: ``akasha bench engine [--quick]`` (``make bench``; also
``python benchmarks/bench_engine.py``).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..config import DAY, Settings
from ..engine.bm25 import LexicalHits
from ..engine.recall import plan_writeback, recall
from ..engine.state import EdgeStore, NodeTable
from ..engine.writeback import apply_plan

__all__ = ["DIM", "SyntheticMirror", "bench", "build_mirror", "main", "queries", "unit_rows"]

DIM = 384
"""Dimension of the synthetic vectors (the default model's)."""
SPAN = 60 * DAY


@dataclass
class SyntheticMirror:
    """The engine's arrays of a made-up store, with the topic of each node (``cluster``),
    the topic centres and the time the queries are asked at."""

    nodes: NodeTable
    edges: EdgeStore
    cluster: np.ndarray
    centers: np.ndarray
    now: float


def unit_rows(a: np.ndarray) -> np.ndarray:
    """``a`` with every row (last axis) scaled to length 1."""
    return a / np.linalg.norm(a, axis=-1, keepdims=True)


def build_mirror(n: int, edges_per_node: float, seed: int = 7) -> SyntheticMirror:
    """A synthetic mirror with ``n`` nodes and about ``n * edges_per_node`` edges."""
    rng = np.random.default_rng(seed)
    k = max(8, n // 40)
    centers = unit_rows(rng.standard_normal((k, DIM)))
    # sessions of 10-60 nodes, one or two topics each, one node a minute or so
    nodes = NodeTable(dim=DIM)
    cluster = np.empty(n, np.int64)
    starts = np.sort(rng.uniform(0.0, SPAN - 3 * 3600.0, size=n // 20 + 1))
    i = 0
    s = 0
    while i < n:
        size = min(int(rng.integers(10, 61)), n - i)
        topics = rng.choice(k, size=int(rng.integers(1, 3)), replace=False)
        t0 = starts[s % starts.size] + rng.uniform(0, 3600.0)
        for j in range(size):
            c = int(rng.choice(topics))
            cluster[i] = c
            base = centers[c] * 0.75 + rng.standard_normal(DIM) / np.sqrt(DIM) * 0.66
            msgs = unit_rows(base[None, :] + rng.standard_normal((2, DIM)) / np.sqrt(DIM) * 0.35)
            aonly = rng.random() < 0.02
            mv = msgs[1:] if aonly else msgs
            vec = unit_rows(mv.mean(axis=0))
            sigma = float(np.clip(rng.beta(2, 5) * 1.4, 0, 1))
            ts = t0 + 70.0 * j
            nodes.add_node(
                f"n{i}", ts=ts, session=f"s{s}", vector=vec.astype(np.float32), sigma=sigma,
                strength=float(rng.uniform(0.3, 3.0)),
                resource=float(rng.uniform(0.4, 1.0)), assistant_only=aonly,
                msg_vectors=mv.astype(np.float32), msg_ts=[ts] * len(mv),
                msg_uids=[f"n{i}:{m}" for m in range(len(mv))],
                strength_ts=ts + rng.uniform(0, SPAN - ts), resource_ts=ts)
            i += 1
        s += 1
    edges = _edges(rng, nodes, cluster, edges_per_node)
    return SyntheticMirror(nodes, edges, cluster, centers, float(SPAN))


def _edges(rng: np.random.Generator, nodes: NodeTable, cluster: np.ndarray,
           per_node: float) -> EdgeStore:
    n = nodes.n
    hub = np.minimum(rng.pareto(2.0, size=n) + 1.0, 12.0)  # preferential attachment, capped
    hub_p = hub / hub.sum()
    outdeg = np.minimum(rng.lognormal(np.log(per_node) - 0.5, 1.0, size=n), n // 3)
    outdeg = np.maximum(1, (outdeg * per_node / outdeg.mean()).astype(np.int64))
    by_cluster = [np.flatnonzero(cluster == c) for c in range(cluster.max() + 1)]
    src_l, dst_l = [], []
    for i in range(n):
        d = int(outdeg[i])
        same = by_cluster[cluster[i]]
        a = rng.choice(same, size=int(d * 0.6) + 1)
        b = np.clip(i + rng.integers(-40, 41, size=int(d * 0.25) + 1), 0, n - 1)
        c = rng.choice(n, size=int(d * 0.15) + 1, p=hub_p)
        dst = np.unique(np.concatenate([a, b, c]))
        dst = dst[dst != i]
        src_l.append(np.full(dst.size, i))
        dst_l.append(dst)
    src = np.concatenate(src_l)
    dst = np.concatenate(dst_l)
    ts = nodes.ts
    last = np.maximum(ts[src], ts[dst]) + rng.uniform(0, 1.0, src.size) * (
        SPAN - np.maximum(ts[src], ts[dst]))
    w = np.minimum(2.0, rng.lognormal(-1.6, 0.9, size=src.size))
    es = EdgeStore()
    es.load(src, dst, w, last, rng.integers(1, 20, size=src.size))
    return es


def queries(m: SyntheticMirror, count: int, seed: int = 11
            ) -> list[tuple[np.ndarray, LexicalHits]]:
    """Query vectors near a node (half) or a topic centre (half) and a few BM25 hits."""
    rng = np.random.default_rng(seed)
    out = []
    nodes = m.nodes
    for k in range(count):
        i = int(rng.integers(nodes.n))
        if k % 2:
            base = nodes.vec[i].astype(np.float64) + rng.standard_normal(DIM) / np.sqrt(DIM) * 0.5
        else:
            base = m.centers[m.cluster[i]] + rng.standard_normal(DIM) / np.sqrt(DIM) * 0.8
        q = unit_rows(base).astype(np.float32)
        same = np.flatnonzero(m.cluster == m.cluster[i])
        hit_nodes = rng.choice(same, size=min(6, same.size), replace=False)
        rows = tuple(int(nodes.first_msg[j]) for j in hit_nodes)
        hits = LexicalHits((), rows, tuple(float(10 - r) for r in range(len(rows))), nodes.m)
        out.append((q, hits))
    return out


def _time(fn: Callable[[], object], repeat: int) -> list[float]:
    out = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        out.append((time.perf_counter() - t) * 1e3)
    return out


def bench(n: int, per_node: float, n_queries: int, cfg: Settings) -> dict[str, float]:
    t0 = time.perf_counter()
    m = build_mirror(n, per_node)
    build = time.perf_counter() - t0
    qs = queries(m, n_queries)
    nodes, edges, now = m.nodes, m.edges, m.now
    n_edges = int(np.count_nonzero(edges.alive))       # before the write-backs add edges
    for q, hits in qs[:5]:  # warm-up
        recall(nodes, edges, q, hits, now=now, settings=cfg)
    rec: list[float] = []
    brute: list[float] = []
    scan: list[float] = []
    rec_cpu: list[float] = []
    brute_blas: list[float] = []
    wb: list[float] = []
    wb_cpu: list[float] = []
    vec = np.asarray(nodes.vec)  # the node matrix, for the brute-force baselines
    rng = np.random.default_rng(3)
    traces = []
    for q, hits in qs:
        # interleaved, so each timing starts from the cache state a recall leaves behind
        def top10(q: np.ndarray = q) -> np.ndarray:
            s = np.einsum("ij,j->i", vec, q)
            idx = np.argpartition(-s, 10)[:10]
            return idx[np.argsort(-s[idx])]

        def cosines(q: np.ndarray = q) -> object:
            return nodes.cosines(q)

        brute.append(_time(top10, 1)[0])
        recall(nodes, edges, q, hits, now=now, settings=cfg)
        scan.append(_time(cosines, 1)[0])
        recall(nodes, edges, q, hits, now=now, settings=cfg)
        c = time.thread_time()
        t = time.perf_counter()
        tr = recall(nodes, edges, q, hits, now=now, settings=cfg)
        rec.append((time.perf_counter() - t) * 1e3)
        rec_cpu.append((time.thread_time() - c) * 1e3)
        traces.append(tr)
    # BLAS last and apart: a multithreaded gemv leaves OpenBLAS threads spinning, which
    # would steal the CPU from whatever is timed next on a small machine
    for q, _ in qs:
        def top10_blas(q: np.ndarray = q) -> np.ndarray:
            s = vec @ q
            idx = np.argpartition(-s, 10)[:10]
            return idx[np.argsort(-s[idx])]

        brute_blas.append(_time(top10_blas, 1)[0])
    for k, tr in enumerate(traces):
        cur = int(rng.integers(nodes.n))
        c = time.thread_time()
        t = time.perf_counter()
        plan = plan_writeback(tr, nodes, edges, cur, now=now + k, settings=cfg)
        apply_plan(plan, nodes, edges)
        wb.append((time.perf_counter() - t) * 1e3)
        wb_cpu.append((time.thread_time() - c) * 1e3)
    act = statistics.mean(len(t.activation) for t in traces)
    pool = statistics.mean(t.counts["pool"] for t in traces)
    return {
        "nodes": float(nodes.n), "edges": float(n_edges), "build_s": build,
        "recall_p50": float(np.percentile(rec, 50)), "recall_p95": float(np.percentile(rec, 95)),
        "recall_cpu_p50": float(np.percentile(rec_cpu, 50)),
        "writeback_p50": float(np.percentile(wb, 50)),
        "writeback_p95": float(np.percentile(wb, 95)),
        "writeback_cpu_p50": float(np.percentile(wb_cpu, 50)),
        "brute_p50": float(np.percentile(brute, 50)),
        "scan_p50": float(np.percentile(scan, 50)),
        "brute_blas_p50": float(np.percentile(brute_blas, 50)),
        "ratio": float(np.percentile(rec, 50) / np.percentile(brute, 50)),
        "ratio_cpu": float(np.percentile(rec_cpu, 50) / np.percentile(brute, 50)),
        "pool_mean": float(pool), "activated_mean": float(act),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer queries (CI smoke run)")
    args = ap.parse_args(argv)
    n_q = 40 if args.quick else 300
    sizes = [(3400, 52.0, 2.0), (10000, 56.2, 5.0)]
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs; "
          f"{n_q} queries per size; times in ms (p50 unless marked)")
    head = (f"{'prof':>4} {'nodes':>6} {'edges':>7} | {'recall':>6} {'p95':>6} {'cpu':>5} "
            f"{'target':>6} | {'wb':>5} {'p95':>5} {'cpu':>5} | {'scan':>5} {'brute':>5} "
            f"{'@':>5} | {'ratio':>5} {'cpu':>5} | {'pool':>4} {'act':>3} {'build s':>7} | "
            f"{'v2/v1':>5}")
    print(head)
    for n, per, target in sizes:
        base: dict[str, float] = {}
        for profile in ("v1", "v2"):
            r = bench(n, per, n_q, Settings.profile(profile))
            base = base or r
            vs = r["recall_p50"] / base["recall_p50"]
            _row(profile, r, target, vs)
    print("recall: stages 1-4 with the trace (wall, p95, thread CPU); wb: plan_writeback + "
          "apply_plan;\nscan: cos_node + cos_msg, NodeTable.cosines (inside "
          "recall); brute: numpy top-10 cosine (einsum);\n@: the same through BLAS "
          "(vec @ q), timed apart; ratio: recall / brute (wall, cpu); v2/v1: recall p50 "
          "of the profile over v1's.\nTimings are interleaved with recalls, so each starts "
          "from the cache state a recall leaves.")
    return 0


def _row(profile: str, r: dict[str, float], target: float, vs: float) -> None:
    print(f"{profile:>4} {int(r['nodes']):>6} {int(r['edges']):>7} | {r['recall_p50']:>6.2f} "
          f"{r['recall_p95']:>6.2f} {r['recall_cpu_p50']:>5.2f} {target:>6.1f} | "
          f"{r['writeback_p50']:>5.2f} {r['writeback_p95']:>5.2f} "
          f"{r['writeback_cpu_p50']:>5.2f} | {r['scan_p50']:>5.2f} {r['brute_p50']:>5.2f} "
          f"{r['brute_blas_p50']:>5.2f} | {r['ratio']:>4.1f}x {r['ratio_cpu']:>4.1f}x | "
          f"{r['pool_mean']:>4.0f} {r['activated_mean']:>3.0f} {r['build_s']:>7.1f} | "
          f"{vs:>5.2f}")
    sys.stdout.flush()


if __name__ == "__main__":
    raise SystemExit(main())
