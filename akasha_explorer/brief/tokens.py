"""A token estimate that does not undercount Chinese (issue 9; Mnemosyne 7.0.2 "D3").

"Four characters per token" is an English rule of thumb: it undercounts Chinese three to
four times, so a budget of 40 tokens lets 150 through and the degradation path never runs.
:func:`estimate_tokens` counts instead:

- every CJK character one token (ideographs, kana, CJK and full-width punctuation); a hangul
  syllable as many as its jamo (two or three: tokenizers decompose or byte-split it);
- every latin word one token — a word is a run of letters or a camel-case part
  (``ZBDongle`` is ``ZB`` + ``Dongle``), a long one one token per started 6 letters;
- every digit one token (LLaMA- and Qwen-family tokenizers split numbers into digits, and
  WordPiece splits unknown numbers into pieces of one or two);
- every other visible character (punctuation, symbols, emoji) one token; whitespace none.

Measured against the WordPiece tokenizer of all-MiniLM-L6-v2 on the 660 demo messages
(``benchmarks/brief_tokens.py``): never under on a message without latin letters, about
1.0x overall. A real tokenizer — any callable ``text -> token count`` — replaces the
estimate wherever a function here takes ``tokenizer``.

>>> estimate_tokens("我喜欢喝燕麦拿铁，你呢？")
12
>>> estimate_tokens("when humidity < 40% turn on the humidifier")
12
>>> estimate_tokens("ZBDongle-E")
4
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable

__all__ = ["CJK_RANGES", "Tokenizer", "count_tokens", "estimate_tokens"]

Tokenizer = Callable[[str], int]
"""A real tokenizer: text -> number of tokens."""

CJK_RANGES = (
    "\u2e80-\u2fff"  # radicals, Kangxi
    "\u3000-\u303f"  # CJK symbols and punctuation
    "\u3040-\u31ff"  # kana, bopomofo, hangul compatibility jamo, kanbun, strokes
    "\u3200-\u4dbf"  # enclosed CJK, compatibility, extension A
    "\u4e00-\u9fff"  # unified ideographs
    "\ua960-\ua97f\uac00-\ud7ff"  # hangul
    "\uf900-\ufaff"  # compatibility ideographs
    "\ufe30-\ufe4f"  # CJK compatibility forms
    "\uff00-\uffef"  # half- and full-width forms
    "\U00020000-\U0003134f"  # extensions B-G
)
"""Character ranges counted one token each."""

_CJK = re.compile(f"[{CJK_RANGES}]")
_LATIN = re.compile("[A-Za-z\u00c0-\u024f]+")
_DIGIT = re.compile("[0-9]")
_HANGUL = re.compile("[\uac00-\ud7a3]")
_OTHER = re.compile(f"[^\\s{CJK_RANGES}A-Za-z\u00c0-\u024f0-9\u00aa\u00b5\u00ba]")
"""A visible character of no other class: one token each. (ª µ º — letters below U+00C0
outside the latin class — count none, as a camel-case part never holds them.)"""
_CAMEL = re.compile(r"[A-Z\u00c0-\u00de]+(?![a-z\u00df-\u024f])|[A-Z\u00c0-\u00de]?"
                    r"[a-z\u00df-\u024f]+|[A-Za-z\u00c0-\u024f]")
_LETTERS_PER_TOKEN = 6


def estimate_tokens(text: str) -> int:
    """Conservative token count of ``text`` (see the module docstring for the rules).

    Counted class by class, each with one regular-expression scan (the brief counts every
    candidate line at every level: this is most of its time); a run of the latin class
    that starts with × or ÷ counts one.

    >>> estimate_tokens(""), estimate_tokens("  \\n ")
    (0, 0)
    >>> estimate_tokens("2026-09-17"), estimate_tokens("v0.3.1")
    (10, 6)
    """
    n = (len(_CJK.findall(text)) - text.count("\u3000")  # the ideographic space is space
         + len(_DIGIT.findall(text)) + len(_OTHER.findall(text)))
    for run in _LATIN.findall(text):
        n += sum(math.ceil(len(p) / _LETTERS_PER_TOKEN) for p in _CAMEL.findall(run)) \
            if run[0].isalpha() else 1
    for c in _HANGUL.findall(text):  # a hangul syllable: 2 or 3 jamo, counted 1 above
        n += 2 if (ord(c) - 0xAC00) % 28 else 1
    return n


def count_tokens(text: str, tokenizer: Tokenizer | None = None) -> int:
    """``tokenizer(text)`` when a real tokenizer is given, else :func:`estimate_tokens`.

    >>> count_tokens("a b c"), count_tokens("a b c", tokenizer=len)
    (3, 5)
    """
    if tokenizer is None:
        return _estimate(text)
    return int(tokenizer(text))


@functools.lru_cache(maxsize=8192)
def _estimate(text: str) -> int:
    """:func:`estimate_tokens`, kept for the texts counted last: a context block counts
    every candidate line at every level, and the same lines recur in the next recall."""
    return estimate_tokens(text)
