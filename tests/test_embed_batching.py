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


def test_a_short_call_gives_the_vectors_encode_gives(embedder: Any) -> None:
    """A call of at most a batch runs the model's modules directly (no per-call
    bookkeeping); its vectors are the library's ``encode``'s — for one text, for a batch
    of mixed lengths and scripts (padded together), and past the model's sequence length."""
    texts = ["Where does Lan live?", "岚姐说下周三要去体检，记得空腹。", "  ok  ",
             "a long one " * 200, "ZBDongle-E v0.3.1 🏹", ""]
    assert embedder._direct
    model = embedder._model
    want = model.encode(texts, batch_size=64, normalize_embeddings=True,
                        convert_to_numpy=True)
    got = embedder.encode(texts)
    assert got.dtype == np.float32 and got.flags.c_contiguous
    np.testing.assert_allclose(got, want, atol=1e-6)
    for t, w in zip(texts, want, strict=True):
        np.testing.assert_allclose(embedder.encode([t])[0], w, atol=1e-6)
    # a call larger than a batch goes through encode itself
    np.testing.assert_allclose(embedder.encode(texts, batch_size=2), want, atol=1e-6)
