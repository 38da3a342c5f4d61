"""float32 against bfloat16 for the embedding model, side by side in one process
(``AKASHA_EMBED_DTYPE``, :data:`akasha_explorer.embed.DTYPE_ENV`; here each model's
``dtype`` is passed to it).

Both models are loaded; each measurement alternates them round by round, so the machine's
noise falls on both. Printed, and written as JSON to OUT:

- one query (the demo's labelled questions, one call each): p50 / p90 ms;
- eight queries in one call (what a server's micro-batch embeds at once);
- the demo's first 256 messages at batch 64 (what an ingest does);
- how far the vectors move: the cosine between a text's two vectors (min, mean), and
  whether each question's ten nearest messages are the same set (dense top-10 overlap).

Run: ``python benchmarks/embed_dtype.py OUT [--threads N]`` (default: one thread, as
``akasha serve`` runs the model).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path

import numpy as np

from akasha_explorer.embed import SentenceTransformerEmbedder, native_bfloat16

DATA = Path(__file__).resolve().parent.parent / "akasha_explorer" / "data"


def _timed(models: dict[str, SentenceTransformerEmbedder], calls: list[list[str]],
           rounds: int) -> dict[str, list[float]]:
    """Milliseconds per call for each model, the models alternating call by call."""
    out: dict[str, list[float]] = {k: [] for k in models}
    for _ in range(rounds):
        for texts in calls:
            for name, m in models.items():
                t0 = time.perf_counter()
                m.encode(texts)
                out[name].append((time.perf_counter() - t0) * 1000)
    return out


def _row(ms: list[float]) -> dict[str, float]:
    return {"p50_ms": round(statistics.median(ms), 2),
            "p90_ms": round(float(np.percentile(ms, 90)), 2), "calls": len(ms)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out")
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    import torch
    torch.set_num_threads(args.threads)

    queries = list(dict.fromkeys(
        json.loads(line)["query"] for line in (DATA / "demo_labels.jsonl").open(encoding="utf-8")))
    messages = [json.loads(line)["text"]
                for line in (DATA / "demo_conversations.jsonl").open(encoding="utf-8")][:256]
    models = {d: SentenceTransformerEmbedder(dtype=d) for d in ("float32", "bfloat16")}
    for m in models.values():   # warm both (first calls allocate)
        m.encode(queries[:8])
        m.encode(messages[:64])

    result: dict[str, object] = {
        "threads": args.threads, "native_bfloat16": native_bfloat16(),
        "torch": torch.__version__, "load": round(os.getloadavg()[0], 2)}
    one = _timed(models, [[q] for q in queries], rounds=2)
    eight = _timed(models, [queries[i:i + 8] for i in range(0, len(queries) - 7, 8)], rounds=2)
    bulk = _timed(models, [messages], rounds=3)
    for what, got in (("one query", one), ("eight queries", eight),
                      ("256 messages", bulk)):
        result[what] = {k: _row(v) for k, v in got.items()}

    q = {k: m.encode(queries) for k, m in models.items()}
    v = {k: m.encode(messages) for k, m in models.items()}
    cq = (q["float32"] * q["bfloat16"]).sum(1)
    cm = (v["float32"] * v["bfloat16"]).sum(1)
    top = {k: np.argsort(-(q[k] @ v[k].T), axis=1)[:, :10] for k in models}
    same = [set(a) == set(b) for a, b in zip(top["float32"], top["bfloat16"], strict=True)]
    overlap = [len(set(a) & set(b)) / 10 for a, b in
               zip(top["float32"], top["bfloat16"], strict=True)]
    result["agreement"] = {
        "query_cos_min": round(float(cq.min()), 6), "query_cos_mean": round(float(cq.mean()), 6),
        "message_cos_min": round(float(cm.min()), 6),
        "message_cos_mean": round(float(cm.mean()), 6),
        "top10_same_set": round(float(np.mean(same)), 3),
        "top10_overlap": round(float(np.mean(overlap)), 3), "queries": len(queries),
        "messages": len(messages)}
    result["load_after"] = round(os.getloadavg()[0], 2)
    print(json.dumps(result, indent=1))
    Path(args.out).write_text(json.dumps(result, indent=1) + "\n", "utf-8")


if __name__ == "__main__":
    main()
