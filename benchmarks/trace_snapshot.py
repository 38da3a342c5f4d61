"""Behaviour snapshot of the demo store: traces, write-backs and context blocks as JSON.

Builds a fresh demo store with ``akasha demo`` (ingest + replay, the example recalls),
then runs 20 recalls (Chinese and English) under the store's own profile and under
``Settings.profile("v1")`` (a dry run), a few commits with recalls after them, one
``add_turn`` and the context blocks of two recalls — and writes everything that came out
(``trace.to_json()``, the applied plans, ``trace.context().text``, node state, stats
without sizes and paths) to one JSON file. A refactor that must not change behaviour is
checked by running this before and after and comparing the two files byte for byte::

    .venv/bin/python benchmarks/trace_snapshot.py /tmp/before.json
    ... change the code ...
    .venv/bin/python benchmarks/trace_snapshot.py /tmp/after.json
    cmp /tmp/before.json /tmp/after.json
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

import akasha_explorer as ak
from akasha_explorer.config import Settings

QUERIES = (
    "和阿岚打杀戮尖塔，A10 过了吗", "手指换药疼不疼", "what did I say about the finger?",
    "湿度计换成 SONOFF 了吗", "老周周末有空吗", "Slay the Spire A10 with Lan",
    "阿岚的生日是哪天", "我住在哪里", "燕麦拿铁", "how do I get to work?",
    "最近手指的伤怎么样了", "what games do I play with Lan?", "上周末做了什么",
    "who is Lao Zhou?", "咖啡", "my apartment humidity", "加班到几点", "birthday present",
    "the agent remembers things", "周末去哪儿玩",
)
"""20 queries: the demo tour's threads, Chinese and English, time words included."""


def snapshot(store: Path) -> dict[str, object]:
    """Everything the recalls, commits and context blocks of the demo store produce."""
    out: dict[str, object] = {}
    v1 = Settings.profile("v1")
    with ak.open(store) as mem:
        now = mem.last_ts() + 3600.0
        for k, q in enumerate(QUERIES):
            t = mem.recall(q, now=now + k, log=False)
            out[f"v2/{k}"] = json.loads(t.to_json())
            t1 = mem.recall(q, now=now + k, settings=v1, log=False)
            out[f"v1/{k}"] = json.loads(t1.to_json())
        out["context/0"] = mem.recall(QUERIES[6], now=now).context(budget_tokens=300).text
        out["context/1"] = mem.recall(QUERIES[2], now=now).context(budget_tokens=200).text
        nodes = _newest_nodes(mem, 6)
        for k, q in enumerate(QUERIES[:4]):
            t = mem.recall(q, now=now + 100 + k)
            plan = mem.commit(t, nodes[-1 - k], reinforce=k == 1)
            out[f"commit/{k}"] = plan.to_dict()
            out[f"after/{k}"] = json.loads(mem.recall(q, now=now + 200 + k,
                                                      log=False).to_json())
        uid, trace = mem.add_turn("还记得阿岚的生日吗", "记得，十月十号。", session="snapshot",
                                  ts=now + 300)
        out["add_turn"] = {"uid": uid, "trace": json.loads(trace.to_json()) if trace else None}
        out["node"] = {u: mem.node(u).__dict__ for u in [*nodes[-4:], uid]}
        out["replayed"] = json.loads(mem.recall(QUERIES[0], now=now + 400, log=False).to_json())
        stats = mem.stats()
        for key in ("path", "disk_bytes", "journal_pending", "queries_logged"):
            stats.pop(key, None)
        out["stats"] = stats
    return out


def _newest_nodes(mem: ak.Memory, k: int) -> list[str]:
    """The ``k`` newest node uids, oldest first (from the public API)."""
    frame = mem.graph_view("nodes").nodes.sort_values(["ts", "id"])
    return [str(u) for u in frame["id"]][-k:]


def main() -> None:
    """Build the demo store in a temporary folder and write the snapshot to argv[1]."""
    target = Path(sys.argv[1] if len(sys.argv) > 1 else "trace_snapshot.json")
    akasha = Path(sys.executable).parent / "akasha"
    with tempfile.TemporaryDirectory() as tmp:
        store = Path(tmp) / "demo_store"
        subprocess.run([str(akasha), "demo", str(store)], check=True, capture_output=True)
        data = snapshot(store)
    target.write_text(json.dumps(data, ensure_ascii=False, indent=1, sort_keys=True) + "\n",
                      encoding="utf-8")
    print(f"{len(data)} entries -> {target}")


if __name__ == "__main__":
    main()
