"""Micro-batching in the real model (:meth:`SentenceTransformerEmbedder.encode`): texts
that wait for the model while it is busy are embedded in one call by whoever gets it next,
and each caller gets exactly its own vectors back, in its own order."""

from __future__ import annotations

import threading
import time
from typing import Any

import numpy as np


def test_concurrent_callers_each_get_their_own_vectors(embedder: Any) -> None:
    groups = [[f"question {k} about the humidifier", f"第{k}个回答"] for k in range(8)]
    groups += [[f"one alone {k}"] for k in range(4)]
    alone = [embedder.encode(g) for g in groups]
    got: list[Any] = [None] * len(groups)
    start = threading.Barrier(len(groups))

    def run(k: int) -> None:
        start.wait()
        got[k] = embedder.encode(groups[k])

    threads = [threading.Thread(target=run, args=(k,)) for k in range(len(groups))]
    with embedder._lock:        # the model busy: every caller queues behind it
        for t in threads:
            t.start()
        deadline = time.monotonic() + 60
        while len(embedder._queue) < len(groups) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert len(embedder._queue) == len(groups)
    for t in threads:
        t.join(timeout=120)
    for a, g, texts in zip(alone, got, groups, strict=True):
        assert g.shape == (len(texts), embedder.dim)
        np.testing.assert_allclose(g, a, atol=1e-5)
    assert not embedder._queue
