"""Lexical terms for the index and for queries (SPEC §2 step 5, §4 stage 1).

Normalisation happens here and only here (raw text is never altered): NFKC, case folding,
jieba segmentation for CJK, latin/digit words as they come. A *term* is

- a latin/digit word of at least ``min_len`` characters (English stop words dropped when
  ``stopwords`` is on),
- a CJK word of at least ``min_len`` characters,
- two adjacent CJK words joined, when one of them has exactly two characters (SPEC: "CJK
  2-character words joined with a neighbour") — so 引流 + 条 gives 引流条.

Documents and queries go through the same function, so a query term matches exactly the
index terms the same text would produce.

>>> terms("昨天和 Limboo 玩杀戮尖塔，拔引流条的时候出血了")
['昨天和', 'limboo', '玩杀戮', '杀戮尖塔', '拔引流', '引流条', '的时候', '时候出血', '出血了']
>>> terms("The cat and the hat went to Tokyo")
['cat', 'hat', 'went', 'tokyo']
"""

from __future__ import annotations

import logging
import re
import threading
import unicodedata
from functools import lru_cache

import jieba

__all__ = ["STOPWORDS", "TOKENIZER_VERSION", "is_cjk", "normalize", "segment", "terms"]

TOKENIZER_VERSION = f"jieba-{jieba.__version__}+akasha-terms-1"
"""Recorded in every store: changing the term rules means re-indexing."""

jieba.setLogLevel(logging.WARNING)
_init_lock = threading.Lock()

_CJK = re.compile(
    "[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af\U00020000-\U0002ffff]")
_WORD = re.compile(r"^[\w]+$")

STOPWORDS = frozenset("""
a about above after again against all also am an and any are aren't as at be because been
before being below between both but by can can't cannot could couldn't did didn't do does
doesn't doing don't down during each few for from further get got had hadn't has hasn't
have haven't having he he'd he'll he's her here here's hers herself him himself his how
how's i i'd i'll i'm i've if in into is isn't it it's its itself just let's me more most
much mustn't my myself no nor not now of off on once only or other ought our ours ourselves
out over own really same shan't she she'd she'll she's should shouldn't so some such than
that that's the their theirs them themselves then there there's these they they'd they'll
they're they've this those through to too under until up very was wasn't we we'd we'll
we're we've were weren't what what's when when's where where's which while who who's whom
why why's will with won't would wouldn't yeah yes you you'd you'll you're you've your yours
yourself yourselves oh ok okay hey hi hmm lol
""".split())
"""English stop words (a common list, lower case); dropped when ``stopwords=True``."""


def normalize(text: str) -> str:
    """Index normalisation: NFKC then case folding. Used for indexes, never for storage.

    >>> normalize("ＡＢＣ Straße")
    'abc strasse'
    """
    return unicodedata.normalize("NFKC", text).casefold()


def is_cjk(token: str) -> bool:
    """True if the token contains a CJK (Han, kana, hangul) character."""
    return bool(_CJK.search(token))


def _ensure_jieba() -> None:
    if not jieba.dt.initialized:
        with _init_lock:
            if not jieba.dt.initialized:
                jieba.initialize()


def _tokens(text: str) -> list[tuple[str, bool]]:
    """(token, follows a separator) pairs: words only, punctuation/space become the flag."""
    _ensure_jieba()
    out: list[tuple[str, bool]] = []
    gap = True
    for tok in jieba.cut(normalize(text), HMM=True):
        if tok.strip() and (_WORD.match(tok) or is_cjk(tok)):
            out.append((tok, gap))
            gap = False
        else:
            gap = True
    return out


def segment(text: str) -> list[str]:
    """Normalised word tokens of ``text`` (jieba for CJK, latin/digit runs), no punctuation.

    >>> segment("Hello, 世界!")
    ['hello', '世界']
    """
    return [t for t, _ in _tokens(text)]


@lru_cache(maxsize=4096)
def _terms_cached(text: str, min_len: int, stopwords: bool) -> tuple[str, ...]:
    toks = _tokens(text)
    out: list[str] = []
    for i, (t, _) in enumerate(toks):
        cjk = is_cjk(t)
        if len(t) >= min_len and (cjk or not (stopwords and t in STOPWORDS)):
            out.append(t)
        if cjk and i + 1 < len(toks):
            nxt, gap = toks[i + 1]
            if (not gap and is_cjk(nxt) and (len(t) == 2 or len(nxt) == 2)
                    and len(t) + len(nxt) >= min_len):
                out.append(t + nxt)
    return tuple(out)


def terms(text: str, *, min_len: int = 3, stopwords: bool = True) -> list[str]:
    """Lexical terms of ``text`` (see module docstring); duplicates are kept (they are tf)."""
    return list(_terms_cached(text, min_len, stopwords))
