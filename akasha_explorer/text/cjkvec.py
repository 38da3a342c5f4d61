"""Hashed CJK features: a vector for the Chinese/Japanese/Korean part of a text.

Why: the default model (all-MiniLM-L6-v2) reads English only — its tokenizer turns most CJK
characters into ``[UNK]``, so unrelated Chinese sentences get near-identical vectors (cosine
0.5–1.0) and dense recall on Chinese text is noise. Until a user sets a Chinese-capable
model, :class:`~akasha_explorer.embed.CJKAugmentedEmbedder` appends this vector: jieba words
(weight 1) and character bigrams inside CJK runs (weight 0.5), stop words left out,
feature-hashed with a stable hash (blake2b, never Python's salted ``hash``) and signed into
``dims`` dimensions, L2-normalised. It is lexical, not semantic — a floor, not a model.

>>> a, b, c = (cjk_vector(t, 256) for t in ("拔引流条的时候出血了", "引流条拔出来又出血",
...                                           "卧室湿度太低了"))
>>> float(a @ b) > 0.3 > float(a @ c)
True
>>> round(cjk_fraction("HA 的 Zigbee dongle 又掉线了"), 2), cjk_fraction("hi"), cjk_fraction("你好")
(0.45, 0.0, 1.0)
"""

from __future__ import annotations

import hashlib
import itertools
import re

import numpy as np
from numpy.typing import NDArray

from .tokenize import is_cjk, normalize, segment

__all__ = ["cjk_fraction", "cjk_vector"]

_CJK_CLASS = ("[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af"
              "\U00020000-\U0002ffff]")
_CJK_CHAR = re.compile(_CJK_CLASS)
_CJK_RUN = re.compile(_CJK_CLASS + "+")
_LATIN_WORD = re.compile(r"[A-Za-z0-9]+")
_STOP = frozenset("的 了 是 我 你 他 她 它 们 在 吗 啊 吧 呢 呀 哦 嗯 和 就 也 都 这 那 有 不 一 个 很 "  # noqa: E501
                  "好 要 会 说 还 又 着 过 给 让 把 被 对 到 去 来 上 下 里 么 什么 怎么 我们 你们 "
                  "他们 一下 一个 这个 那个 就是 还是 可以 没有 现在 今天 感觉".split())


def cjk_fraction(text: str) -> float:
    """Share of the text that is CJK: CJK characters / (CJK characters + 2 × latin words)
    (a Chinese word is about two characters)."""
    cjk = len(_CJK_CHAR.findall(text))
    latin = len(_LATIN_WORD.findall(text))
    total = cjk + 2 * latin
    return cjk / total if total else 0.0


def _slot(feature: str, dims: int) -> tuple[int, float]:
    h = int.from_bytes(hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest(), "big")
    return h % dims, (1.0 if (h >> 63) & 1 else -1.0)


def cjk_vector(text: str, dims: int) -> NDArray[np.float32]:
    """Signed feature-hash vector of the CJK words and bigrams of ``text`` (zeros if none)."""
    v = np.zeros(dims, np.float64)
    for tok in segment(text):
        if not is_cjk(tok):
            continue
        if tok not in _STOP:
            i, s = _slot("w:" + tok, dims)
            v[i] += s
    for run in _CJK_RUN.findall(normalize(text)):
        for a, b in itertools.pairwise(run):
            if a in _STOP and b in _STOP:
                continue
            i, s = _slot("b:" + a + b, dims)
            v[i] += 0.5 * s
    n = float(np.linalg.norm(v))
    return (v / n if n > 0 else v).astype(np.float32)
