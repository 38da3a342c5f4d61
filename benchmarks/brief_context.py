"""Context blocks on a store: attach + build times, tokens and item levels per budget.

    .venv/bin/akasha demo /tmp/demo_store        # once
    .venv/bin/python benchmarks/brief_context.py /tmp/demo_store
"""

from __future__ import annotations

import sys
import time
from collections import Counter

import akasha_explorer as ak
from akasha_explorer.brief.api import messages_of

QUERIES = ["what humidity threshold did I set", "阿岚的生日是哪天", "瑞金医院换药",
           "Slay the Spire A10", "星图 v0.3.1 修了什么"]


def main(path: str) -> None:
    with ak.open(path, read_only=True) as mem:
        now = mem.last_ts()
        for q in QUERIES:
            trace = mem.recall(q, now=now, log=False)
            uids = list(dict.fromkeys(trace.dense.uids + trace.ripple.uids
                                      + trace.activation.uids))
            t0 = time.perf_counter()
            for _ in range(5):
                messages_of(mem.store, uids)
            attach = (time.perf_counter() - t0) / 5 * 1000
            print(f"{q!r}: {len(uids)} items, attach {attach:.1f} ms")
            for budget in (30, 100, 300, 1000, 3000):
                t0 = time.perf_counter()
                block = trace.context(budget)
                ms = (time.perf_counter() - t0) * 1000
                levels = Counter(i.level for i in block.items)
                print(f"  budget {budget:>5}: {block.tokens:>5} tokens"
                      f"{' OVER' if block.over_budget else '     '} {ms:6.1f} ms  "
                      + " ".join(f"{k}={levels[k]}" for k in ("full", "atoms", "pointer",
                                                              "withheld", "folded")))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "demo_store")
