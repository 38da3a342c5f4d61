"""Soak: committed recalls interleaved with ingests on a 10k-node store, without an error.

A synthetic 10k-node store (``akasha_explorer.bench.scale.build_synthetic_store``: the real
LanceDB/Kuzu layout, ~38 co-activation edges per node) is opened for writing and driven
like a live agent for ``--commits`` rounds. Two workloads:

- ``--workload conversation`` (the default; issue 28): each round is an agent's loop — the
  user's text is recalled in its session and the turn stored with that recall
  (``add_turn(…, recall=trace)``: a new node, the write-back to it, its extraction).
  Sessions follow a topic (their words come from the topic's 40, a few from anywhere), run
  8–30 turns, and one in three later sessions returns to an earlier topic — so what a recall
  activates repeats, as it does for a real agent.
- ``--workload recall``: the conversation workload's user texts, recalled in their session
  and committed with the session's newest stored turn as the current one; every
  ``--ingest-every`` rounds the conversation so far is stored (its newest
  ``--ingest-size`` messages, ingested with replay) — an agent that recalls every turn and
  stores its turns in batches, so most commits learn nothing new: what the issue-28 target
  "RSS growth after the first 1,000 commits ≤ 30 MB, disk ≤ 2 KB per commit" is about
  (with ``conversation`` every round adds a node, its two messages and vectors, so the
  store grows with what it learns).
- ``--workload random``: each round recalls six random words and commits the trace with a
  random node as the current turn; every ``--ingest-every`` rounds a new session of
  ``--ingest-size`` messages is ingested with replay (the issue-14 soak).

Either way the journal is fsync'ed per commit and Kuzu checkpointed every
``CHECKPOINT_EVERY``; time moves forward one minute per round.

Printed (and returned as JSON): throughput, recall+commit latency p50/p99/max, ingest
latency, RSS at start / end / peak (growth), store size on disk at start / end (growth,
per commit) and after a compaction (``Store.compact``: LanceDB's older versions deleted,
the Kuzu file rebuilt) — over the whole run and, like the RSS, after the warm round: a copy
of the store is compacted there by another process, so what the bounded parts take once
they are full (the recall records' ``KEEP_BYTES``) is told from what grows with every
commit — checkpoints, and every error (there must be none). At the end the
store is closed, reopened and checked with ``doctor`` (the synthetic rows carry no sha256,
no session links and no NEXT chain, so those three checks are left out).

The process limits glibc's arenas as ``akasha serve`` does (``--arenas``; measured in
``benchmarks/results/soak-arenas.md``).

Run: ``python benchmarks/soak.py [--nodes 10000] [--commits 10000]``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any

import numpy as np


def _rss_mb() -> float:
    from akasha_explorer._proc import resident_bytes
    n = resident_bytes()
    return n / 2**20 if n is not None else float("nan")


def _du(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def _parts(store: Path) -> dict[str, float]:
    """MB on disk per part of the store."""
    parts = {"graph.kuzu": store / "graph.kuzu", "messages.lance": store / "vectors" /
             "messages.lance", "turns.lance": store / "vectors" / "turns.lance",
             "journal.jsonl": store / "journal.jsonl", "recalls": store / "recalls"}
    return {k: round((_du(v) if v.is_dir() else v.stat().st_size if v.exists() else 0)
                     / 2**20, 2) for k, v in parts.items()}


def _sample(mem: Any, k: int, rss0: float) -> dict[str, Any]:
    """Where memory and disk stand after ``k`` rounds (for finding what grows)."""
    m = mem.store.mirror
    from akasha_explorer.store.heap import heap_in_use
    heap = heap_in_use()
    return {"round": k, "rss_growth_mb": round(_rss_mb() - rss0, 1),
            "c_heap_in_use_mb": round(heap / 2**20, 1) if heap is not None else None,
            "mirror_nodes_mb": round(m.nodes.nbytes() / 2**20, 1),
            "mirror_edges_mb": round(m.edges.nbytes() / 2**20, 1), "edges": m.edges.count,
            "edges_alive": m.edges.n_alive(),
            "pending_queries": len(m.pending_queries), "journal_pending": mem.store.journal.pending,
            "disk_mb": _parts(mem.path)}


def _compacted_copy(mem: Any, folder: Path) -> tuple[int, dict[str, float]]:
    """Bytes the store would take compacted now: its journal checkpointed into Kuzu and the
    recall records written, the folder is copied and the copy compacted by another process
    (this one's memory, measured by the soak, is not touched), measured and removed."""
    import shutil
    import subprocess
    import sys
    mem.store.checkpoint()
    mem.store.recalls.flush()
    copy = folder / "compacted-copy"
    shutil.copytree(mem.path, copy, ignore=shutil.ignore_patterns("writer.lock"))
    try:
        subprocess.run([sys.executable, "-c", "import sys, akasha_explorer as ak\n"
                        "with ak.open(sys.argv[1]) as m: m.store.compact()", str(copy)],
                       check=True, env={**os.environ, "HF_HUB_OFFLINE": "1"})
        return _du(copy), _parts(copy)
    finally:
        shutil.rmtree(copy, ignore_errors=True)


def _pct(xs: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(xs), q)) if xs else float("nan")


class _Conversations:
    """The conversation workload's user and assistant texts (see the module docstring)."""

    def __init__(self, rng: np.random.Generator, vocab: list[str]) -> None:
        self.rng, self.vocab = rng, vocab
        self.topics: list[list[str]] = []
        self.session, self.left, self.n = "", 0, 0

    def next(self) -> tuple[str, str, str]:
        """``(session, user text, assistant text)`` of the next turn."""
        rng, vocab = self.rng, self.vocab
        if self.left <= 0:
            if self.topics and rng.random() < 1 / 3:  # back to an earlier topic
                topic = int(rng.integers(0, len(self.topics)))
            else:
                self.topics.append([vocab[int(i)] for i in rng.integers(0, len(vocab), 40)])
                topic = len(self.topics) - 1
            self.n += 1
            self.session, self.topic, self.left = f"conv-{self.n}-t{topic}", topic, \
                int(rng.integers(8, 31))
        self.left -= 1
        words = self.topics[self.topic]

        def say(k: int) -> str:
            own = [words[int(i)] for i in rng.integers(0, len(words), k)]
            return " ".join(own + [vocab[int(i)] for i in rng.integers(0, len(vocab), 2)])
        return self.session, say(7) + "?", say(10) + "."


def soak(folder: Path, *, nodes: int, commits: int, ingest_every: int, ingest_size: int,
         seed: int = 0, sample_every: int = 1000,
         workload: str = "conversation") -> dict[str, Any]:
    import akasha_explorer as ak
    from akasha_explorer.bench.scale import VOCAB, build_synthetic_store

    rng = np.random.default_rng(seed)
    load0 = round(os.getloadavg()[0], 2)
    store = folder / "store"
    t = time.perf_counter()
    built = build_synthetic_store(store, nodes, seed=seed)
    build_s = time.perf_counter() - t
    mem = ak.open(store)
    mem.store.embedder.encode(["warm up"])  # the model loads before the clock starts
    disk0, rss0 = _du(store), _rss_mb()
    parts0 = _parts(store)
    samples = [_sample(mem, 0, rss0)]
    uids = list(mem.store.mirror.nodes.uid)
    now = mem.last_ts() + 3600.0
    lat: list[float] = []
    ingest_lat: list[float] = []
    errors: list[str] = []
    checkpoints = 0
    added = 0
    talk = _Conversations(rng, VOCAB)
    said: list[tuple[str, str, str]] = []   # the recall workload's turns not yet stored
    tails: dict[str, str] = {}              # its sessions' newest stored turn
    # the first 1000 loops of an agent (issue 28), or two ingests with replay and a checkpoint
    warm_round = 2 * ingest_every if workload == "random" else 1000
    disk_warm: int | None = None   # the store compacted at the warm round (a copy)
    parts_warm: dict[str, float] = {}
    paused = 0.0                   # seconds spent measuring it, not in the throughput

    def sample(k: int) -> None:
        nonlocal disk_warm, parts_warm, paused
        samples.append(_sample(mem, k, rss0))
        if k == warm_round:
            a = time.perf_counter()
            disk_warm, parts_warm = _compacted_copy(mem, folder)
            paused += time.perf_counter() - a

    t0 = time.perf_counter()
    for k in range(commits):
        if workload == "conversation":
            sid, user, reply = talk.next()
            try:
                a = time.perf_counter()
                pending = mem.store.journal.pending
                trace = mem.recall(user, now=now, session=sid)
                mem.add_turn(user, reply, session=sid, ts=now, recall=trace)
                lat.append((time.perf_counter() - a) * 1000.0)
                checkpoints += mem.store.journal.pending < pending
                added += 1
            except Exception:
                errors.append(traceback.format_exc(limit=3))
            now += 60.0
            if sample_every and (k + 1) % sample_every == 0:
                sample(k + 1)
            continue
        if workload == "recall":
            sid, query, reply = talk.next()
            said.append((sid, query, reply))
            current = tails.get(sid) or uids[int(rng.integers(0, len(uids)))]
        else:
            sid = None
            query = " ".join(VOCAB[int(i)] for i in rng.integers(0, len(VOCAB), 6))
            current = uids[int(rng.integers(0, len(uids)))]
        try:
            a = time.perf_counter()
            trace = mem.recall(query, now=now, session=sid)
            pending = mem.store.journal.pending
            mem.commit(trace, current)
            lat.append((time.perf_counter() - a) * 1000.0)
            checkpoints += mem.store.journal.pending < pending
        except Exception:  # a soak counts failures instead of stopping at the first
            errors.append(traceback.format_exc(limit=3))
        now += 60.0
        if sample_every and (k + 1) % sample_every == 0:
            sample(k + 1)
        if ingest_every and (k + 1) % ingest_every == 0:
            if workload == "recall":  # the conversation's newest turns, in their sessions
                batches: dict[str, list[dict[str, Any]]] = {}
                for j, (sid, user, reply) in enumerate(said[-(ingest_size // 2):]):
                    batches.setdefault(sid, []).extend(
                        [{"role": "user", "content": user, "ts": now + 2 * j},
                         {"role": "assistant", "content": reply, "ts": now + 2 * j + 1}])
                said.clear()
            else:
                sid = f"soak-{k + 1}"
                msgs = []
                for j in range(ingest_size):
                    text = " ".join(VOCAB[int(i)] for i in rng.integers(0, len(VOCAB), 8))
                    msgs.append({"role": "user" if j % 2 == 0 else "assistant",
                                 "content": f"{text} ({sid} message {j})", "ts": now + j})
                batches = {sid: msgs}
            now += ingest_size + 60.0
            for sid, msgs in batches.items():
                try:
                    a = time.perf_counter()
                    pending = mem.store.journal.pending
                    rep = mem.ingest(msgs, session=sid, replay=True, progress=False)
                    checkpoints += mem.store.journal.pending < pending  # a replay ends with one
                    ingest_lat.append(time.perf_counter() - a)
                    added += rep.nodes_added
                    new_uids = list(mem.store.mirror.nodes.uid[len(uids):])
                    uids.extend(new_uids)
                    if new_uids:
                        tails[sid] = new_uids[-1]
                except Exception:
                    errors.append(traceback.format_exc(limit=3))
    wall = time.perf_counter() - t0 - paused
    rss1 = _rss_mb()
    warm = next((x for x in samples if warm_round and x["round"] >= warm_round), None)
    mem.close()
    disk1 = _du(store)
    parts1 = _parts(store)
    with ak.open(store) as mem:
        mem.store.compact()  # LanceDB's older versions (every ingest makes some) deleted
    disk2 = _du(store)
    parts2 = _parts(store)
    with ak.open(store) as mem:
        report = mem.doctor()
    synthetic = {"integrity", "session_links", "next_links"}  # the built rows have none
    problems = [f.line() for f in report.final if f.kind not in synthetic]
    edges_end = samples[-1]["edges"] if samples else None
    out = {
        "workload": workload, "load_avg_start": load0, "load_avg_end": round(os.getloadavg()[0], 2),
        "nodes_start": nodes, "edges_start": built["edges"], "build_s": round(build_s, 1),
        # the write-back creates ~55 edges a commit (SPEC §4.5); on unrelated queries most
        # are new pairs; decay and EDGE_BUDGET prune at checkpoints (§3): what is kept
        "new_edges_per_commit": (round((edges_end - built["edges"]) / max(1, len(lat)), 1)
                                 if edges_end is not None else None),
        "edges_alive_end": samples[-1]["edges_alive"] if samples else None,
        "commits": len(lat), "ingests": len(ingest_lat), "nodes_added": added,
        "nodes_end": nodes + added,
        "seconds": round(wall, 1),
        "throughput_commits_per_s": round(len(lat) / wall, 1) if wall else None,
        "recall_commit_ms": {"p50": round(_pct(lat, 50), 2), "p99": round(_pct(lat, 99), 2),
                             "max": round(max(lat), 2) if lat else None},
        "ingest_s": {"p50": round(_pct(ingest_lat, 50), 2),
                     "max": round(max(ingest_lat), 2) if ingest_lat else None},
        "checkpoints": checkpoints,
        "rss_mb": {"start": round(rss0, 1), "end": round(rss1, 1),
                   "growth": round(rss1 - rss0, 1),
                   # after every path ran once (an ingest with replay, its checkpoint): what
                   # keeps growing, rather than what the first calls of each path allocate
                   "warm_round": warm["round"] if warm else None,
                   "growth_after_warm": (round(rss1 - rss0 - warm["rss_growth_mb"], 1)
                                         if warm else None),
                   "peak": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)},
        "disk_mb": {"start": round(disk0 / 2**20, 1), "end": round(disk1 / 2**20, 1),
                    "growth": round((disk1 - disk0) / 2**20, 1),
                    "bytes_per_commit": round((disk1 - disk0) / max(1, len(lat))),
                    "compacted": round(disk2 / 2**20, 1),
                    "bytes_per_commit_compacted": round((disk2 - disk0) / max(1, len(lat))),
                    # the growth that goes on once the bounded parts (the recall records,
                    # KEEP_BYTES; one CoactPruned row per turn) are full, as for the RSS:
                    # compacted at the warm round (a copy) and at the end
                    "compacted_at_warm": (round(disk_warm / 2**20, 1)
                                          if disk_warm is not None else None),
                    "bytes_per_commit_compacted_after_warm": (
                        round((disk2 - disk_warm) / max(1, len(lat) - warm_round))
                        if disk_warm is not None else None),
                    "parts_start": parts0, "parts_end": parts1, "parts_compacted": parts2,
                    "parts_compacted_at_warm": parts_warm},
        "samples": samples,
        "errors": len(errors), "first_errors": errors[:3],
        "doctor_after_reopen": problems or "ok",
    }
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=10_000)
    ap.add_argument("--commits", type=int, default=10_000)
    ap.add_argument("--ingest-every", type=int, default=250)
    ap.add_argument("--ingest-size", type=int, default=12)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--workload", choices=["conversation", "recall", "random"],
                    default="conversation",
                    help="An agent's loops (recall, then add_turn with it), its recalls with "
                         "the turns stored in batches, or the issue-14 random recalls with "
                         "ingests (module docstring).")
    ap.add_argument("--sample-every", type=int, default=1000,
                    help="Record RSS, mirror size and disk per part every N rounds.")
    ap.add_argument("--folder", type=Path, default=None,
                    help="Where the store is built (default: a temporary folder).")
    ap.add_argument("--arenas", type=int, default=None,
                    help="glibc arenas, as `akasha serve` sets them (default: "
                         "store.heap.MALLOC_ARENAS; 0: glibc's own default).")
    args = ap.parse_args()
    from akasha_explorer.store.heap import MALLOC_ARENAS, limit_arenas
    arenas = MALLOC_ARENAS if args.arenas is None else args.arenas
    limited = bool(arenas) and limit_arenas(arenas)
    with tempfile.TemporaryDirectory(prefix="akasha-soak-") as tmp:
        folder = args.folder or Path(tmp)
        out = soak(folder, nodes=args.nodes, commits=args.commits,
                   ingest_every=args.ingest_every, ingest_size=args.ingest_size, seed=args.seed,
                   sample_every=args.sample_every, workload=args.workload)
    out["malloc_arenas"] = arenas if limited else os.environ.get("MALLOC_ARENA_MAX", "glibc")
    print(json.dumps(out, indent=1))
    if out["errors"] or out["doctor_after_reopen"] != "ok":
        raise SystemExit(1)


if __name__ == "__main__":
    main()
