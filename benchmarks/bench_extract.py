"""Demo ingest time with and without extraction (SPEC §6), and extraction alone.

Run: ``.venv/bin/python benchmarks/bench_extract.py [--replay]``. Prints seconds; the
embedding model is loaded and warmed up before timing.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import akasha_explorer as ak
from akasha_explorer.config import Settings
from akasha_explorer.embed import get_embedder

ROOT = Path(__file__).resolve().parent.parent
DEMO = ROOT / "akasha_explorer" / "data" / "demo_conversations.jsonl"


def main() -> None:
    replay = "--replay" in sys.argv
    emb = get_embedder()
    emb.encode(["warm up"])
    with tempfile.TemporaryDirectory() as tmp:
        for extract in (False, True):
            t0 = time.perf_counter()
            with ak.open(Path(tmp) / f"s{int(extract)}", Settings(EXTRACT=extract),
                         embedder=emb) as mem:
                rep = mem.ingest(DEMO, replay=replay, progress=False)
                t1 = time.perf_counter()
                print(f"ingest (replay={replay}) extract={extract}: {t1 - t0:.2f}s "
                      f"(embed {rep.seconds['embed']:.2f}s)")
                if not extract:
                    t2 = time.perf_counter()
                    x = mem.extract(list(mem.store.mirror.nodes.uid))
                    print(f"extraction alone over {x.messages} messages: "
                          f"{time.perf_counter() - t2:.2f}s — {x.anchors} anchors, "
                          f"{x.mentions} mentions, {x.triples} triples, {x.episodes} episodes, "
                          f"{x.review} review items")


if __name__ == "__main__":
    main()
