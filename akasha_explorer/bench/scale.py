"""Scale: recall latency, memory and write-path costs of real stores at 1k–100k nodes.

Each size runs in its own process, and each store is measured in a fresh one (so open
time and RSS are those of an agent opening its memory, nothing of the builder's). A
synthetic store is written in the real layout — LanceDB messages/turns, Kuzu
turns/sessions/COACT — with clustered 384-dim vectors, sessions over 60 days, random
lexical terms, and an Akasha-like degree (``edges_per_node`` ≈ 38, the design's real
store: 127,696 edges on 3,378 nodes).
Then the store is opened from disk (mirror load) and closed, as a first session does
(``open_first_s``, ``rss_open_first_mb``, ``close_first_s``: every edge read from Kuzu; the
close leaves them beside the stores when there are ``EDGE_CACHE_MIN_EDGES``), and opened
again and timed, in one run:

- ``open_s`` and ``rss_open_mb`` (resident memory the open added, vectors included),
- ``recall`` (engine stages 1–4 + lexical; query embedding excluded) p50/p95,
- the physical floor: ``bytes_per_recall_mb`` the recall reads in full (vectors + per-node
  and per-message arrays) and ``floor_ms``, one pass over the vectors alone (``np.einsum``,
  as recall scans them): recall can be no faster than that on this machine,
- a numpy brute-force top-10 (that pass + ``argpartition``) and a plain LanceDB top-10
  vector search on the same vectors (after ``optimize``) p50/p95,
- the live loop (``live_loop_p50_ms`` / ``p99``): ``Memory.recall`` with a precomputed query
  vector (its text tokenised, the query-log row journaled, the context's messages
  attached) then ``Memory.commit`` — what an agent pays per turn apart from the model
  (after ``WARM`` untimed rounds and a garbage collection: the steady state),
- ``commit`` (plan + apply + fsync'ed journal append) p50, and ``commit_journal_p50_ms``,
  the journal append alone (what the disk's fdatasync costs is in it),
- a checkpoint of the journaled commits into Kuzu,
- RSS after the recalls, the machine's load average and CPU count,
- replay throughput (nodes/s, embedding excluded) on a copy without edges (``--replay``).

Run: ``akasha bench scale [--sizes 1000,10000,100000] [--out FILE]``; every number is
printed as JSON and as a table.
"""

from __future__ import annotations

import gc
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from .._proc import resident_bytes
from ..config import DAY, Settings
from ..embed import get_embedder
from ..engine.recall import plan_writeback
from ..engine.recall import recall as engine_recall
from ..engine.writeback import apply_plan
from ..ingest.replay import replay_rows
from ..memory import Memory
from ..vectors import messages_schema, turns_schema
from ..vectors import queries as vq
from .engine import DIM, unit_rows

__all__ = ["build_synthetic_store", "measure", "run_scale"]

WARM = 20
"""Live-loop rounds run before the clock starts (the first recall imports the brief)."""
VOCAB = [f"w{i:05d}" for i in range(20_000)]


def _rss_mb() -> float:
    n = resident_bytes()
    return n / 2**20 if n is not None else float("nan")


def build_synthetic_store(path: Path, n: int, *, edges_per_node: float = 38.0,
                          seed: int = 0, with_edges: bool = True) -> dict[str, Any]:
    """Write a store of ``n`` one-message nodes (see module docstring); returns its facts."""
    rng = np.random.default_rng(seed)
    k = max(8, n // 50)
    centers = unit_rows(rng.standard_normal((k, DIM)))
    cluster = rng.integers(0, k, n)
    vec = unit_rows(centers[cluster] + 0.9 * rng.standard_normal((n, DIM)) / np.sqrt(DIM) * 6)
    vec = vec.astype(np.float32)
    t0 = 1_780_000_000.0
    ts = np.sort(t0 + rng.uniform(0, 60 * DAY, n))
    session = (np.arange(n) // 25).astype(np.int64)
    uid = [f"s{session[i]}:{i}" for i in range(n)]
    terms = [[VOCAB[j] for j in rng.integers(0, len(VOCAB), 8)] for _ in range(n)]
    settings = Settings(EMBED_CJK_DIMS=0)
    mem = Memory(path, settings, embedder=get_embedder(settings.EMBED_MODEL))
    fixed = pa.FixedSizeListArray.from_arrays(pa.array(vec.reshape(-1), pa.float32()), DIM)
    vq.add_messages(mem.store.vectors, pa.table({
        "uid": uid, "node": uid, "session": [f"s{x}" for x in session],
        "seq": np.arange(n), "ord": np.arange(n), "ts": ts, "role": ["user"] * n,
        "speaker": [None] * n, "text": [" ".join(t) for t in terms],
        "sha256": ["0" * 64] * n, "source": ["synthetic"] * n, "ext_id": [None] * n,
        "meta": ["{}"] * n, "flags": [[] for _ in range(n)], "sigma": rng.uniform(0, 1, n),
        "terms": terms, "vector": fixed}, schema=messages_schema(DIM)))
    vq.add_turns(mem.store.vectors, pa.table({
        "uid": uid, "session": [f"s{x}" for x in session], "ord": np.arange(n), "ts": ts,
        "message_uids": [[u] for u in uid], "vector": fixed}, schema=turns_schema(DIM)))
    sigma = rng.uniform(0, 1, n)
    with mem.store.graph.transaction():
        sess = np.unique(session)
        mem.store.graph.copy("Session", pa.table({
            "uid": [f"s{x}" for x in sess], "source": ["synthetic"] * len(sess),
            "first_ts": [float(ts[session == x].min()) for x in sess],
            "last_ts": [float(ts[session == x].max()) for x in sess]}))
        mem.store.graph.copy("Turn", pa.table({
            "uid": uid, "ord": np.arange(n), "session": [f"s{x}" for x in session], "ts": ts,
            "message_uids": [[u] for u in uid], "roles": [["user"]] * n,
            "assistant_only": np.zeros(n, bool), "sigma": sigma,
            "strength": 3.0 * (0.7 + 0.3 * sigma), "strength_ts": ts,
            "resource": np.ones(n), "resource_ts": ts, "recall_count": np.zeros(n, np.int64),
            "replayed": np.full(n, with_edges), "flags": [[] for _ in range(n)]}))
    m = 0
    if with_edges:
        per = max(1, round(edges_per_node))
        src = np.repeat(np.arange(n), per)
        # mostly within the cluster, some anywhere (hubs emerge from popular targets)
        same = rng.random(src.size) < 0.8
        members = [np.flatnonzero(cluster == c) for c in range(k)]
        dst = rng.integers(0, n, src.size)
        for c in range(k):
            sel = np.flatnonzero(same & (cluster[src] == c))
            if sel.size and members[c].size > 1:
                dst[sel] = members[c][rng.integers(0, members[c].size, sel.size)]
        ok = src != dst
        src, dst = src[ok], dst[ok]
        key = np.unique((src << 32) | dst)
        src, dst = key >> 32, key & 0xFFFFFFFF
        m = src.size
        mem.store.graph.copy("COACT", pa.table({
            "from": [uid[i] for i in src], "to": [uid[i] for i in dst],
            "weight": rng.uniform(0.05, 1.5, m), "last_ts": np.maximum(ts[src], ts[dst]),
            "co_count": rng.integers(1, 20, m)}))
    mem.store.close(checkpoint=False)  # nothing cached: the measured open loads it all
    return {"nodes": n, "edges": m, "centers": centers, "seed": seed}


class _Precomputed:
    """An embedder that returns given vectors for given texts (the live loop's query
    vectors are computed before the clock starts); name and dim are the store's."""

    def __init__(self, name: str, dim: int) -> None:
        self.name, self.dim = name, dim
        self.vectors: dict[str, np.ndarray] = {}

    def encode(self, texts: Any, *, batch_size: int = 64, progress: bool = False
               ) -> np.ndarray:
        return np.stack([self.vectors[t] for t in texts])


def _pcts(out: dict[str, Any], name: str, xs: list[float], *qs: int) -> None:
    for q in qs:
        out[f"{name}_p{q}_ms"] = 1000 * float(np.percentile(xs, q))


def _load() -> float:
    return round(os.getloadavg()[0], 2)


def measure(path: Path, *, queries: int = 200, commits: int = 1000, live: int = 500,
            seed: int = 1) -> dict[str, Any]:
    """Open the store at ``path`` and time recall, the live loop, commit, checkpoint and
    the baselines (module docstring)."""
    rng = np.random.default_rng(seed)
    get_embedder()  # model libraries loaded before the RSS baseline
    out: dict[str, Any] = {"load_avg_start": _load(), "cpus": os.cpu_count()}
    base = _rss_mb()
    pre = _Precomputed(*_model_of(path))
    t0 = time.perf_counter()
    mem = Memory(path, embedder=pre)
    out["open_s"] = time.perf_counter() - t0
    out["rss_open_mb"] = _rss_mb() - base
    nodes, edges = mem.store.mirror.nodes, mem.store.mirror.edges
    out["nodes"], out["edges"] = nodes.n, edges.count
    now = float(nodes.ts.max()) + 3600.0
    n_q = queries + WARM + live
    qs = unit_rows(nodes.vec[rng.integers(0, nodes.n, n_q)].astype(np.float64)
               + 0.3 * rng.standard_normal((n_q, DIM)) / np.sqrt(DIM) * 6).astype(np.float32)
    texts = [f"q{k} " + " ".join(VOCAB[j] for j in rng.integers(0, len(VOCAB), 5))
             for k in range(n_q)]
    rec, traces = [], []
    for q, text in zip(qs[:queries], texts[:queries], strict=True):
        t = time.perf_counter()
        lex = mem.store.index.lexical(text, now=now)
        trace = engine_recall(nodes, edges, q, lex, now=now, settings=mem.settings)
        rec.append(time.perf_counter() - t)
        traces.append(trace)
    _pcts(out, "recall", rec, 50, 95)
    out.update(_floor(nodes, qs[:queries]))
    out["recall_over_floor"] = out["recall_p50_ms"] / out["floor_ms"]
    mem.store.vectors.optimize()
    lance = []
    for q in qs[:queries]:
        t = time.perf_counter()
        vq.search_turns(mem.store.vectors, q, 10)
        lance.append(time.perf_counter() - t)
    _pcts(out, "lancedb_top10", lance, 50, 95)
    out["recall_over_lancedb"] = out["recall_p50_ms"] / out["lancedb_top10_p50_ms"]
    out["rss_after_recalls_mb"] = _rss_mb() - base
    pre.vectors = dict(zip(texts[queries:], qs[queries:], strict=True))
    for k, text in enumerate(texts[queries:queries + WARM]):  # first calls import modules
        mem.commit(mem.recall(text, now=now + k), nodes.uid[int(rng.integers(0, nodes.n))])
    gc.collect()  # the steady state: what opening and importing left is collected first
    loop = []
    for k, text in enumerate(texts[queries + WARM:], start=WARM):
        t = time.perf_counter()
        trace = mem.recall(text, now=now + k)
        mem.commit(trace, nodes.uid[int(rng.integers(0, nodes.n))])
        loop.append(time.perf_counter() - t)
    _pcts(out, "live_loop", loop, 50, 99)
    out["live_loops"] = len(loop)
    com, journal = [], []
    for k in range(commits):
        trace = traces[k % len(traces)]
        t = time.perf_counter()
        plan = plan_writeback(trace, nodes, edges, int(rng.integers(0, nodes.n)),
                              now=now + live + k, settings=mem.settings)
        apply_plan(plan, nodes, edges)
        j = time.perf_counter()
        mem.store.mirror.journal_plan(mem.store.journal, plan)
        com.append(time.perf_counter() - t)
        journal.append(time.perf_counter() - j)
    out["commit_p50_ms"] = 1000 * statistics.median(com) if com else None
    # of which the journal record (encoding, write, fdatasync): the disk's share
    out["commit_journal_p50_ms"] = 1000 * statistics.median(journal) if journal else None
    out["commits"] = commits
    t = time.perf_counter()
    stats = mem.checkpoint()
    out["checkpoint_s"] = time.perf_counter() - t
    out["checkpoint_edges"] = stats["edges"]
    out["checkpoint_rewrite"] = bool(stats["rewrite"])
    out["rss_end_mb"] = _rss_mb() - base
    t = time.perf_counter()
    mem.close()
    out["close_s"] = time.perf_counter() - t
    out["load_avg_end"] = _load()
    return out


def first_open(path: Path) -> dict[str, Any]:
    """The first open of a store just built (no earlier close left its edges: they are
    read from Kuzu) and its close (which leaves them, see ``EDGE_CACHE_MIN_EDGES``)."""
    get_embedder()
    base = _rss_mb()
    pre = _Precomputed(*_model_of(path))
    t = time.perf_counter()
    mem = Memory(path, embedder=pre)
    out = {"open_first_s": time.perf_counter() - t, "rss_open_first_mb": _rss_mb() - base}
    t = time.perf_counter()
    mem.close()
    out["close_first_s"] = time.perf_counter() - t
    return out


def _model_of(path: Path) -> tuple[str, int]:
    from ..store import Manifest
    man = Manifest.read(path)
    return man.model, man.dim


def _floor(nodes: Any, qs: np.ndarray) -> dict[str, float]:
    """The physical floor of a recall: the bytes it reads in full and one pass over the
    vectors (what the cosine scan must read), timed, with a numpy top-10 on top."""
    vec = nodes.msg_vec
    own = nodes.k_own * nodes.dim * 4
    per_node = nodes.n * (8 * 8 + 4 + 3)  # ts, sigma, strength, resource (+ts), … , flags
    per_msg = nodes.m * (8 + 8 + 1)  # msg_ts, msg_node, msg_alive
    scan, top = [], []
    for q in qs:
        t = time.perf_counter()
        c = np.einsum("ij,j->i", vec, q)
        scan.append(time.perf_counter() - t)
        np.argpartition(-c, 10)[:10]
        top.append(time.perf_counter() - t)
    total = vec.nbytes + own + per_node + per_msg
    floor = 1000 * statistics.median(scan)
    return {"bytes_per_recall_mb": total / 2**20, "vector_bytes_mb": (vec.nbytes + own) / 2**20,
            "floor_ms": floor, "floor_gb_per_s": (vec.nbytes + own) / 1e6 / floor,
            "numpy_top10_p50_ms": 1000 * statistics.median(top),
            "numpy_top10_p95_ms": 1000 * float(np.percentile(top, 95))}


def measure_replay(path: Path, limit: int | None = None) -> dict[str, Any]:
    """Replay every node of an edgeless store (embedding excluded: vectors exist)."""
    mem = Memory(path)
    rows = list(range(mem.store.mirror.nodes.n))[:limit]
    t = time.perf_counter()
    with mem.store.journaled():
        replay_rows(mem.store, rows, progress=False)
    sec = time.perf_counter() - t
    out = {"replayed": len(rows), "replay_s": sec, "replay_nodes_per_s": len(rows) / sec,
           "edges_after": mem.store.mirror.edges.n_alive()}
    mem.close()
    return out


def _child(n: int, replay: bool, commits: int) -> dict[str, Any]:
    """Build the stores of size ``n`` here and measure them each in a fresh process (open
    time and RSS are then those of an agent opening its memory, not of the builder)."""
    with tempfile.TemporaryDirectory(prefix="akasha-scale-") as tmp:
        t = time.perf_counter()
        build_synthetic_store(Path(tmp) / "s", n)
        res = {"build_s": time.perf_counter() - t, **_in_process("--first-open", Path(tmp) / "s"),
               **_in_process("--measure", Path(tmp) / "s", "--commits", str(commits))}
        if replay:
            build_synthetic_store(Path(tmp) / "r", n, with_edges=False)
            res.update(_in_process("--replay", Path(tmp) / "r"))
    return res


def _in_process(*args: Any) -> dict[str, Any]:
    proc = subprocess.run([sys.executable, "-m", "akasha_explorer.bench.scale",
                           *map(str, args)], capture_output=True, text=True, check=False,
                          env={**os.environ, "PYTHONHASHSEED": "0"})
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr[-2000:])
    out: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return out


def run_scale(sizes: list[int], *, replay_upto: int = 10_000,
              commits: int = 10_000) -> dict[int, dict[str, Any]]:
    """Each size in a fresh process; returns {size: numbers}."""
    out: dict[int, dict[str, Any]] = {}
    for n in sizes:
        args: list[Any] = ["--child", n, "--commits", min(commits, max(1000, n))]
        try:
            out[n] = _in_process(*args, *(["--replay"] if n <= replay_upto else []))
        except RuntimeError as e:
            out[n] = {"error": str(e)}
    return out


if __name__ == "__main__":
    import argparse

    ap = argparse.ArgumentParser()
    ap.add_argument("--child", type=int, default=None, help="Build and measure this size.")
    ap.add_argument("--measure", type=Path, default=None, help="Measure this store.")
    ap.add_argument("--first-open", type=Path, default=None, help="Open and close it once.")
    ap.add_argument("--replay", nargs="?", const=True, default=False,
                    help="With --child: also replay; or the edgeless store to replay.")
    ap.add_argument("--commits", type=int, default=1000)
    a = ap.parse_args()
    if a.first_open is not None:
        print(json.dumps(first_open(a.first_open)))
    elif a.measure is not None:
        print(json.dumps(measure(a.measure, commits=a.commits)))
    elif isinstance(a.replay, str):
        print(json.dumps(measure_replay(Path(a.replay))))
    else:
        print(json.dumps(_child(a.child, bool(a.replay), a.commits)))
