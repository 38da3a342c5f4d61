"""Micro-batching in the real model (:meth:`SentenceTransformerEmbedder.encode`): texts
that wait for the model while it is busy are embedded in one call by whoever gets it next,
and each caller gets exactly its own vectors back, in its own order. And the model's two
dtypes (``AKASHA_EMBED_DTYPE``): bfloat16's vectors agree with float32's.

The exactness tests use a float32 model: in bfloat16 a text padded in a batch and the same
text alone differ in the fourth decimal (their cosine is ~0.99998), so "exactly its own
vectors" is checked where it is exact."""

from __future__ import annotations

import threading
import time
from typing import Any

import numpy as np
import pytest

from akasha_explorer.embed import DTYPE_ENV, TRACE_ENV, SentenceTransformerEmbedder
from akasha_explorer.errors import InvalidSettings


@pytest.fixture(scope="module")
def embedder32() -> SentenceTransformerEmbedder:
    """A float32 model of its own (not the process-wide one, whose dtype is ``auto``)."""
    return SentenceTransformerEmbedder(dtype="float32")


def test_concurrent_callers_each_get_their_own_vectors(embedder32: Any) -> None:
    groups = [[f"question {k} about the humidifier", f"第{k}个回答"] for k in range(8)]
    groups += [[f"one alone {k}"] for k in range(4)]
    alone = [embedder32.encode(g) for g in groups]
    got: list[Any] = [None] * len(groups)
    start = threading.Barrier(len(groups))

    def run(k: int) -> None:
        start.wait()
        got[k] = embedder32.encode(groups[k])

    threads = [threading.Thread(target=run, args=(k,)) for k in range(len(groups))]
    with embedder32._lock:        # the model busy: every caller queues behind it
        for t in threads:
            t.start()
        deadline = time.monotonic() + 60
        while len(embedder32._queue) < len(groups) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert len(embedder32._queue) == len(groups)
    for t in threads:
        t.join(timeout=120)
    for a, g, texts in zip(alone, got, groups, strict=True):
        assert g.shape == (len(texts), embedder32.dim)
        np.testing.assert_allclose(g, a, atol=1e-5)
    assert not embedder32._queue


def test_a_short_call_gives_the_vectors_encode_gives(embedder32: Any) -> None:
    """A call of at most a batch runs the model's modules directly (no per-call
    bookkeeping); its vectors are the library's ``encode``'s — for one text, for a batch
    of mixed lengths and scripts (padded together), and past the model's sequence length."""
    texts = ["Where does Lan live?", "岚姐说下周三要去体检，记得空腹。", "  ok  ",
             "a long one " * 200, "ZBDongle-E v0.3.1 🏹", ""]
    assert embedder32._direct
    model = embedder32._model
    want = model.encode(texts, batch_size=64, normalize_embeddings=True,
                        convert_to_numpy=True)
    got = embedder32.encode(texts)
    assert got.dtype == np.float32 and got.flags.c_contiguous
    np.testing.assert_allclose(got, want, atol=1e-6)
    for t, w in zip(texts, want, strict=True):
        np.testing.assert_allclose(embedder32.encode([t])[0], w, atol=1e-6)
    # a call larger than a batch goes through encode itself
    np.testing.assert_allclose(embedder32.encode(texts, batch_size=2), want, atol=1e-6)


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_the_traced_model_gives_the_modules_vectors_bit_for_bit(
        dtype: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A short call runs the transformer traced (TorchScript, frozen) once a first call
    traced it; its vectors are exactly those of the model's modules run as they are
    (``AKASHA_EMBED_TRACE=0``) — one text at a time, a padded batch, past the sequence
    length, in either dtype."""
    texts = ["Where does Lan live?", "岚姐说下周三要去体检，记得空腹。", "ok",
             "a long one " * 200, "ZBDongle-E v0.3.1 🏹"]
    traced = SentenceTransformerEmbedder(dtype=dtype)
    first = traced.encode(texts[:1])
    assert traced._traced, "the default model traces"
    monkeypatch.setenv(TRACE_ENV, "0")
    plain = SentenceTransformerEmbedder(dtype=dtype)
    assert np.array_equal(first, plain.encode(texts[:1]))
    assert plain._traced is False
    assert np.array_equal(traced.encode(texts), plain.encode(texts))
    for t in texts:
        assert np.array_equal(traced.encode([t]), plain.encode([t]))


def test_bfloat16_vectors_agree_with_float32(embedder32: Any) -> None:
    """The same texts through the model in bfloat16 and in float32: each text's two vectors
    have a cosine of at least 0.9995 (0.9998 measured on the demo's texts), unit length
    both; and which message each question is nearest to does not change."""
    bf = SentenceTransformerEmbedder(dtype="bfloat16")
    assert (bf.dtype, embedder32.dtype, bf.dim) == ("bfloat16", "float32", embedder32.dim)
    assert str(next(bf._model.parameters()).dtype) == "torch.bfloat16"
    messages = ["我住在上海徐汇区，每天骑车去公司，大概二十分钟。",
                "Merged the Markdown exporter PR today, the contributor finally added tests",
                "The humidifier arrived — an evaporative one, on a smart plug.",
                "My left index finger got cut while slicing potatoes. " * 12,
                "ok", "SONOFF 的 ZBDongle-E"]
    questions = ["Which Zigbee dongle do I use?", "What did I merge today?",
                 "What did I buy for the dry bedroom?", "How did I hurt my finger?"]
    for texts in (messages, questions, [questions[0]]):
        a, b = embedder32.encode(texts), bf.encode(texts)
        assert b.dtype == np.float32 and b.shape == a.shape
        np.testing.assert_allclose(np.linalg.norm(b, axis=1), 1.0, atol=1e-5)
        assert (a * b).sum(axis=1).min() >= 0.9995
    m32, m16 = embedder32.encode(messages), bf.encode(messages)
    q32, q16 = embedder32.encode(questions), bf.encode(questions)
    assert ((q32 @ m32.T).argmax(axis=1) == (q16 @ m16.T).argmax(axis=1)).all()


def test_an_unknown_dtype_is_refused_by_name(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(DTYPE_ENV, "float16")
    with pytest.raises(InvalidSettings, match="AKASHA_EMBED_DTYPE='float16': use auto"):
        SentenceTransformerEmbedder()
    with pytest.raises(InvalidSettings, match="dtype='int8': use auto"):
        SentenceTransformerEmbedder(dtype="int8")


def test_the_v1_profile_computes_in_float32(tmp_path: Any) -> None:
    """V1's engine ranking amplifies bfloat16's small differences through its write-back
    replay, so the v1 profile pins float32 (``EMBED_DTYPE``); v2 follows ``auto``; a
    migration between them switches the model."""
    import akasha_explorer as ak
    from akasha_explorer.config import Settings
    from akasha_explorer.embed import _dtype

    assert Settings.profile("v1").EMBED_DTYPE == "float32"
    assert Settings().EMBED_DTYPE == "auto"
    with ak.open(tmp_path / "v1", Settings.profile("v1")) as mem:
        assert mem.store.embedder.dtype == "float32"
    with ak.open(tmp_path / "v2") as mem:
        assert mem.store.embedder.dtype == _dtype("auto")
        mem.migrate("v1")
        assert mem.store.embedder.dtype == "float32"
    with pytest.raises(InvalidSettings, match="EMBED_DTYPE"):
        Settings(EMBED_DTYPE="float16")
