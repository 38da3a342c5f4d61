"""Lexical terms for the index and for queries (SPEC §2 step 5, §4 stage 1).

Normalisation happens here and only here (raw text is never altered): NFKC, case folding,
jieba segmentation for CJK, latin/digit words as they come. Which tokens become *terms* is
set by :class:`TermRules` (from the store's settings):

- a latin/digit word of at least ``latin_min`` characters (English stop words dropped when
  ``stopwords`` is on) — ``FTS_MIN_TOKEN_LEN`` — reduced to its stem when ``stem`` names a
  Snowball language (**[ours]**, ``FTS_STEM``: cities → citi, played → play, so a query
  for "cities" finds "city");
- a CJK word of at least ``cjk_min`` characters — ``FTS_CJK_MIN_LEN`` — that is not a
  Chinese function word (:data:`CJK_STOPWORDS`, with ``cjk_stopwords``);
- with ``cjk_subwords`` (**[ours]**, ``FTS_CJK_SUBWORDS``), the dictionary words inside a
  longer CJK word as well (jieba's search mode: 杀戮尖塔 also gives 杀戮 and 尖塔), so a
  query word matches the longer words that contain it;
- with ``parts`` (**[ours]**, ``FTS_WORD_PARTS``), the parts of a latin word that mixes
  case or letters and digits as well (:func:`word_parts`: ZBDongle-E also gives dongle,
  HomeAssistant home and assistant, RTX4090 rtx and 4090), so "which dongle" finds the
  product named in camel case;
- with ``cjk_join`` (V1, ``FTS_CJK_JOIN``), two adjacent CJK words joined when one of them
  has exactly two characters (SPEC: "CJK 2-character words joined with a neighbour") — so
  引流 + 条 gives 引流条.

V1 used one length rule, 3 characters, for both scripts — and jieba's Chinese words are
mostly two characters long (阿岚, 手指, 换药), so nearly every Chinese word reached the
index only glued to a neighbour (和阿岚, 阿岚打), and a one-word query found nothing. The
default rules index CJK words from two characters and their sub-words (measured on
MADial-Bench-zh dev: BM25 R@10 .444 with V1's rules, .561 with plain jieba words, .644 with
these, .664 without Chinese function words; single characters: .620, so they stay out).
Latin words keep V1's length rule and are stemmed (LoCoMo dev BM25 R@10 .607 → .653,
multi-hop .270 → .359).

Documents and queries go through the same function, so a query term matches exactly the
index terms the same text would produce.

>>> terms("昨天和 Limboo 玩杀戮尖塔，拔引流条的时候出血了")
['昨天', 'limboo', '杀戮', '尖塔', '引流', '出血']
>>> terms("我们的自然语言处理课")          # function words out; a long word and its parts in
['自然语言', '自然', '语言', '处理']
>>> V1 = TermRules(latin_min=3, cjk_min=3, cjk_join=True, cjk_subwords=False,
...                cjk_stopwords=False, stem="")
>>> terms("昨天和 Limboo 玩杀戮尖塔，拔引流条的时候出血了", rules=V1)
['昨天和', 'limboo', '玩杀戮', '杀戮尖塔', '拔引流', '引流条', '的时候', '时候出血', '出血了']
>>> terms("The cats and the hat went to Tokyo")
['cat', 'hat', 'went', 'tokyo']
>>> terms("The cats and the hat went to Tokyo", rules=V1)
['cats', 'hat', 'went', 'tokyo']
"""

from __future__ import annotations

import logging
import re
import threading
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import jieba

from .edges import LATIN

__all__ = ["CJK_STOPWORDS", "STOPWORDS", "TOKENIZER_VERSION", "TermRules", "is_cjk",
           "is_identifier",
           "normalize", "segment", "terms"]

TOKENIZER_VERSION = f"jieba-{jieba.__version__}+akasha-terms-2"
"""The segmenter and the code of the term rules; a store records it with its
:attr:`TermRules.signature` — a store whose signature differs is re-indexed."""

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

CJK_STOPWORDS = frozenset("""
的 了 是 我 你 他 她 它 们 在 有 和 就 都 也 还 吗 呢 吧 啊 呀 哦 嗯 哈 这 那 个 一 不 没 很 太 又
被 把 给 让 跟 与 及 或 而 但 但是 然后 所以 因为 如果 虽然 已经 一下 一些 一个 这个 那个 这些
那些 这样 那样 怎么 怎么样 什么 为什么 哪 哪里 哪儿 哪个 多少 几 我们 你们 他们 她们 它们 自己
大家 时候 现在 可以 可能 应该 需要 就是 还是 只是 不是 没有 知道 觉得 感觉 真的 非常 特别 一直
一起 一定 还有 或者 而且 以后 之后 之前 以前 其实 当然 对 嘛 啦 呗 哇
""".split())
"""Chinese function words and fillers (怎么样, 我们, 时候…); dropped with ``cjk_stopwords``
(**[ours]** ``FTS_CJK_STOPWORDS``; MADial-zh dev BM25 R@10 .644 → .664)."""


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


MAX_RUN = 256
"""Longest stretch without a space or punctuation mark that jieba is given at once: its
time grows with the square of such a stretch (10,000 characters of one word took 2 s, of
real text with punctuation 0.1 s), so a longer one is cut into pieces of this length —
which no real sentence reaches; a text without such a stretch is cut exactly as before."""

_LONG_RUN = re.compile(r"[^\s\u3000-\u303f\uff00-\uff0f\uff1a-\uff20\u2000-\u206f"
                       r"!-/:-@\[-`{-~]" + f"{{{MAX_RUN + 1},}}")


def pieces(text: str) -> list[str]:
    """``text`` in order, with every stretch longer than :data:`MAX_RUN` cut into pieces of
    that length (what jieba is given; see there).

    >>> pieces("短句，" + "岚" * 600) == ["短句，", "岚" * 256, "岚" * 256, "岚" * 88]
    True
    >>> pieces("和阿岚打杀戮尖塔")
    ['和阿岚打杀戮尖塔']
    """
    if len(text) <= MAX_RUN:
        return [text]
    out: list[str] = []
    pos = 0
    for m in _LONG_RUN.finditer(text):
        out.append(text[pos:m.start()])
        run = m.group()
        out.extend(run[i:i + MAX_RUN] for i in range(0, len(run), MAX_RUN))
        pos = m.end()
    out.append(text[pos:])
    return [p for p in out if p]


def cut(text: str, *, hmm: bool = True) -> list[str]:
    """jieba's words of ``text`` (every piece of :func:`pieces` cut on its own)."""
    _ensure_jieba()
    return [w for p in pieces(text) for w in jieba.cut(p, HMM=hmm)]


def _tokens(text: str) -> list[tuple[str, bool]]:
    """(token, follows a separator) pairs: words only, punctuation/space become the flag."""
    out: list[tuple[str, bool]] = []
    gap = True
    for tok in cut(normalize(text)):
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


@dataclass(frozen=True)
class TermRules:
    """Which tokens become lexical terms (see the module docstring); the defaults are the
    default profile's, :meth:`of` reads them from a store's settings.

    >>> TermRules().signature
    'latin>=3;cjk>=2;join=0;sub=1;stop=1;zhstop=1;stem=english;ver=1;parts=1'
    """

    latin_min: int = 3
    cjk_min: int = 2
    cjk_join: bool = False
    cjk_subwords: bool = True
    stopwords: bool = True
    cjk_stopwords: bool = True
    stem: str = "english"
    versions: bool = True
    parts: bool = True

    @classmethod
    def of(cls, settings: Any) -> TermRules:
        """The rules of a :class:`~akasha_explorer.config.Settings` (``FTS_MIN_TOKEN_LEN``,
        ``FTS_CJK_MIN_LEN``, ``FTS_CJK_JOIN``, ``FTS_CJK_SUBWORDS``, ``INDEX_STOPWORDS``,
        ``FTS_CJK_STOPWORDS``, ``FTS_STEM``, ``FTS_VERSIONS``, ``FTS_WORD_PARTS``)."""
        return cls(latin_min=settings.FTS_MIN_TOKEN_LEN, cjk_min=settings.FTS_CJK_MIN_LEN,
                   cjk_join=settings.FTS_CJK_JOIN, cjk_subwords=settings.FTS_CJK_SUBWORDS,
                   stopwords=settings.INDEX_STOPWORDS,
                   cjk_stopwords=settings.INDEX_STOPWORDS and settings.FTS_CJK_STOPWORDS,
                   stem=settings.FTS_STEM, versions=settings.FTS_VERSIONS,
                   parts=settings.FTS_WORD_PARTS)

    @property
    def signature(self) -> str:
        """A short string naming the rules; stored terms made under other rules are rebuilt."""
        return (f"latin>={self.latin_min};cjk>={self.cjk_min};join={int(self.cjk_join)};"
                f"sub={int(self.cjk_subwords)};stop={int(self.stopwords)};"
                f"zhstop={int(self.cjk_stopwords)};stem={self.stem or '-'}"
                + (";ver=1" if self.versions else "") + (";parts=1" if self.parts else ""))

    @property
    def min_len(self) -> int:
        """The shortest term these rules can make (either script)."""
        return min(self.latin_min, self.cjk_min)


def _subwords(word: str, min_len: int) -> list[str]:
    """Dictionary words inside a CJK word (jieba search mode), the word itself excluded."""
    return [w for p in pieces(word) for w in jieba.cut_for_search(p)
            if w != word and len(w) >= min_len and is_cjk(w)]


@lru_cache(maxsize=8)
def _stemmer(language: str) -> Any:
    """A Snowball stemmer (PyStemmer) for ``language``; refuses an unknown language."""
    import Stemmer

    try:
        return Stemmer.Stemmer(language)
    except KeyError:
        from ..errors import InvalidSettings
        raise InvalidSettings(
            f"FTS_STEM={language!r} is not a Snowball language; use one of "
            f"{', '.join(Stemmer.algorithms())} or '' for none") from None


_DOTTED = r"\d+(?:\.\d+)+[a-z]?"
"""A version or dotted number: 0.3.1, 3.11, 2.0b."""
_VERSION = re.compile(rf"(?<![{LATIN}.])v?({_DOTTED})(?![{LATIN}]|\.\d)")


def versions(text: str) -> list[str]:
    """Version and dotted numbers in ``text`` as one term each, without a leading v
    (``FTS_VERSIONS``): the word tokens cut them into pieces too short to index.

    >>> versions("星图 v0.3.1 released, after v0.3 and python 3.11")
    ['0.3.1', '0.3', '3.11']
    """
    return _VERSION.findall(normalize(text))


_IDENTIFIER = re.compile(rf"{_DOTTED}|[a-z]+\d+[a-z\d]*")


def is_identifier(term: str) -> bool:
    """Whether an index term names one thing the way a name does (``UNNAMED_IDENTIFIERS``):
    a version or dotted number (0.3, 3.11 — :func:`versions`) or a code of letters then
    digits (a10, rtx4090, pi5). Not a plain number, a year, an ordinal or a time (2023,
    3rd, 5pm): those say when or how many, not which.

    >>> [t for t in ("0.3", "0.3.1", "a10", "rtx4090", "2023", "3rd", "5pm", "release")
    ...  if is_identifier(t)]
    ['0.3', '0.3.1', 'a10', 'rtx4090']
    """
    return _IDENTIFIER.fullmatch(term) is not None


_MIXED = re.compile(r"[A-Za-z0-9]+")
_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")


def word_parts(text: str) -> list[str]:
    """The parts of each latin word of ``text`` that mixes case (after its first letter)
    or letters and digits, case-folded (``FTS_WORD_PARTS``): the word tokens keep such a
    word whole (zbdongle), so a question naming one of its parts found nothing.

    >>> word_parts("SONOFF 的 ZBDongle-E, HomeAssistant on an RTX4090 (iPhone15)")
    ['zb', 'dongle', 'home', 'assistant', 'rtx', '4090', 'i', 'phone', '15']
    >>> word_parts("Hello World, NASA v0.3 2026年")
    ['v', '0']
    """
    out: list[str] = []
    for w in _MIXED.findall(unicodedata.normalize("NFKC", text)):
        parts = _PART.findall(w)
        if len(parts) > 1:
            out.extend(p.casefold() for p in parts)
    return out


@lru_cache(maxsize=8192)
def _terms_cached(text: str, rules: TermRules) -> tuple[str, ...]:
    toks = _tokens(text)
    out: list[str] = versions(text) if rules.versions else []
    sub_min = max(2, rules.cjk_min)
    stem = _stemmer(rules.stem).stemWord if rules.stem else None
    for i, (t, _) in enumerate(toks):
        cjk = is_cjk(t)
        if cjk:
            stop = CJK_STOPWORDS if rules.cjk_stopwords else frozenset()
            if len(t) >= rules.cjk_min and t not in stop:
                out.append(t)
            if rules.cjk_subwords and len(t) > sub_min:
                out.extend(w for w in _subwords(t, sub_min) if w not in stop)
        elif len(t) >= rules.latin_min and not (rules.stopwords and t in STOPWORDS):
            out.append(stem(t) if stem is not None else t)
        if rules.cjk_join and cjk and i + 1 < len(toks):
            nxt, gap = toks[i + 1]
            if (not gap and is_cjk(nxt) and (len(t) == 2 or len(nxt) == 2)
                    and len(t) + len(nxt) >= rules.cjk_min):
                out.append(t + nxt)
    if rules.parts:
        for p in word_parts(text):
            if len(p) >= rules.latin_min and not (rules.stopwords and p in STOPWORDS):
                out.append(stem(p) if stem is not None else p)
    return tuple(out)


def terms(text: str, *, rules: TermRules | None = None) -> list[str]:
    """Lexical terms of ``text`` under ``rules`` (default: :class:`TermRules()`, the
    default profile's); duplicates are kept (they are tf)."""
    return list(_terms_cached(text, rules or _DEFAULT_RULES))


_DEFAULT_RULES = TermRules()
