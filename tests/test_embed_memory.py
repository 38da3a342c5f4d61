"""The embedding model's memory stays bounded however many text lengths it sees
(issue 28's soak): in bfloat16 each new input shape compiles kernels that torch keeps (its
oneDNN caches, 1,024 entries by default, ~1.3 MB of C heap per new length); the embedder
caps them (:data:`akasha_explorer.embed.KERNEL_CACHE`). Each run is a fresh process: the
caches' sizes are read once, when the first kernel is made."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from akasha_explorer.embed import KERNEL_CACHE, native_bfloat16

RUN = """
import json, random
from akasha_explorer.embed import SentenceTransformerEmbedder
from akasha_explorer.store.heap import heap_in_use
e = SentenceTransformerEmbedder(dtype="bfloat16")
random.seed(0)
words = "the humidifier in the bedroom kept the air wet enough for my finger to heal".split()
text = lambda n: " ".join(random.choice(words) for _ in range(n))
for _ in range(5):
    e.encode([text(8)])
before = heap_in_use()
for n in range(1, 61):      # sixty texts, each of a length not seen before
    e.encode([text(n)])
print(json.dumps({"grown_mb": (heap_in_use() - before) / 2**20}))
"""


def _grown(env: dict[str, str]) -> float:
    out = subprocess.run([sys.executable, "-c", RUN], capture_output=True, text=True,
                         env=env, timeout=600, cwd=Path(__file__).resolve().parents[1])
    assert out.returncode == 0, out.stderr[-2000:]
    return float(json.loads(out.stdout.strip().splitlines()[-1])["grown_mb"])


def test_new_text_lengths_leave_the_model_memory_flat() -> None:
    env = {k: v for k, v in os.environ.items()
           if k not in ("ONEDNN_PRIMITIVE_CACHE_CAPACITY", "LRU_CACHE_CAPACITY")}
    env.update(HF_HUB_OFFLINE="1", TOKENIZERS_PARALLELISM="false", AKASHA_TORCH_THREADS="1")
    capped = _grown(env)
    assert capped < 8, f"the C heap grew {capped:.1f} MB over 60 new text lengths"
    if not native_bfloat16():
        pytest.skip("bfloat16 is emulated on this CPU: torch's default caches not measured")
    # the same run with torch's defaults: what the cap is for
    defaults = _grown({**env, "ONEDNN_PRIMITIVE_CACHE_CAPACITY": "1024",
                       "LRU_CACHE_CAPACITY": "1024"})
    assert defaults > capped + 30, (defaults, capped, KERNEL_CACHE)
