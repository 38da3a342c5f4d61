"""What a query names beyond its own words (SPEC §4 stage 1, **[ours]**): anchors it
mentions by any alias, and its words in the other language — extra lexical terms for the
recall's BM25 (:class:`~akasha_explorer.engine.bm25.TermGroup`).

- **Anchors** (``ANCHOR_WEIGHT``). The store's anchors carry aliases across scripts and
  forms (阿岚 = 岚姐 = 林岚 = Lan; 老周 = Zhou), and extraction records which messages
  mention each anchor under which alias. A query that names an anchor by any alias gets
  one anchor term whose postings are those mentions, in place of the alias's own words:
  "Who is Lan?" reaches 岚是我大学同学，我们都叫她阿岚. A curated alias (``mem.add_alias``)
  counts from the next recall on.
- **Roles** (``ANCHOR_ROLES``). "my manager", 我妈, 老板 name whoever the user's relation
  triples give that role (:data:`ROLE_WORDS`: Grace 是我老板 → works_with, slot 老板), as an
  alias would.
- **Facts** (``FACT_WEIGHT``). A query that asks about a kind of fact — likes, dislikes,
  owns (bought), uses, plays, where someone lives or went, a goal, a side project
  (:func:`query_facts`: the cue words of :data:`FACT_WORDS` and :data:`_EN_FACTS`, in
  either language) — gets one term per predicate whose postings are the messages
  extraction read such a triple from (not rejected or superseded), only those of the
  anchors the query names when it names any (as subject or object). The predicate is
  the same in both languages: "What kind of coffee do I like?" reaches 我喜欢喝燕麦拿铁
  (likes), 国庆去了哪里 到杭州了 (visited), "What did I buy…?" 买的蒸发式 (owns).
- **Translations** (``XLING_WEIGHT``). Each English word of the query gives the Chinese
  words the bilingual dictionary lists for it, each Chinese word its English glosses
  (:mod:`akasha_explorer.text.xling`); of those the store holds, the best
  ``XLING_PER_WORD`` stand for the word as one group (a message counts its best one); a
  one-character Chinese word is looked up in a character index (:class:`CharIndex`). An
  English word with few kinds in WordNet (``XLING_KINDS``: finger → forefinger) also gets
  a group of its kinds' Chinese words (食指: "How did I hurt my finger?" reaches 左手食指).
- **One-character words** (``CHAR_WEIGHT``). A Chinese query word of one character (住,
  区, 喝) makes no index term under the default rules (``FTS_CJK_MIN_LEN`` = 2), so
  "我住在上海哪个区" searched only 上海; each such word that carries content (not in
  :data:`CHAR_STOPWORDS`, not part of an alias the anchors search) is looked up in the
  character index as a group of its own, weighted ``CHAR_WEIGHT``.

Alias search in a query: a latin alias matches whole words; a CJK alias of two or more
characters matches anywhere; a one-character CJK alias (岚) only where jieba does not read
it as part of a dictionary word (上周 holds 周 but names no one) nor alone as a common word
(很美: 美). An anchor term must pass the same IDF floor as any query term (``FTS_MIN_IDF``
over its mentions): the person whose memory it is (mentioned everywhere) names nothing.

>>> lex = AnchorLexicon([("an-1", "阿岚"), ("an-1", "Lan"), ("an-1", "岚"), ("an-2", "周")],
...                     {"an-1": "阿岚", "an-2": "老周"})
>>> [(h.anchor, h.surface) for h in lex.find("Where does Lan live?")]
[('an-1', 'lan')]
>>> [(h.anchor, h.surface) for h in lex.find("岚住在哪个城市，上周末呢")]
[('an-1', '岚')]
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import numpy as np
from numpy.typing import NDArray

from ..engine.bm25 import Postings, TermGroup, idf_select, select_terms
from ..graphdb import anchors as ga
from ..text.edges import latin_word
from ..text.tokenize import CJK_STOPWORDS, STOPWORDS, TermRules, is_cjk, normalize, segment, terms
from ..text.xling import CANDIDATES, kind_translations, translate

if TYPE_CHECKING:
    from ..config import Settings
    from ..graphdb import GraphDB
    from .mirror import Mirror

__all__ = ["CHAR_STOPWORDS", "FACT_WORDS", "ROLE_WORDS", "AnchorChannel", "AnchorHit",
           "AnchorLexicon", "query_facts", "query_groups", "query_roles"]

Row = TypeVar("Row")


@dataclass(frozen=True)
class AnchorHit:
    """An alias found in a query: the anchor, the normalised surface and where."""

    anchor: str
    surface: str
    start: int
    end: int


RARE_CHAR = 500
"""A one-character alias standing alone as a jieba token names someone only when the
character is this rare as a word in jieba's dictionary (岚: 63; 美: 16,809, 周: 8,326)."""


def _dictionary_word(word: str) -> bool:
    import jieba
    return bool(jieba.dt.FREQ.get(word))


def _rare_word(word: str) -> bool:
    import jieba
    return int(jieba.dt.FREQ.get(word) or 0) < RARE_CHAR


ROLE_WORDS: dict[str, tuple[str, ...]] = {
    "boss": ("老板", "经理", "上司", "领导", "老大", "主管", "boss", "manager", "supervisor"),
    "colleague": ("同事", "搭档", "colleague", "coworker"),
    "report": ("下属", "subordinate"),
    "classmate": ("同学", "大学同学", "高中同学", "初中同学", "小学同学", "classmate"),
    "friend": ("朋友", "好朋友", "闺蜜", "发小", "兄弟", "friend", "best friend", "bestie"),
    "roommate": ("室友", "roommate", "flatmate"),
    "teammate": ("队友", "teammate"),
    "mother": ("妈妈", "妈", "母亲", "老妈", "mom", "mother", "mum"),
    "father": ("爸爸", "爸", "父亲", "老爸", "dad", "father"),
    "brother": ("哥哥", "弟弟", "brother"),
    "sister": ("姐姐", "妹妹", "sister"),
    "wife": ("老婆", "妻子", "wife"),
    "husband": ("老公", "丈夫", "husband"),
    "girlfriend": ("女朋友", "女友", "girlfriend"),
    "boyfriend": ("男朋友", "男友", "boyfriend"),
    "son": ("儿子", "son"),
    "daughter": ("女儿", "daughter"),
    "cousin": ("表哥", "表姐", "表妹", "表弟", "cousin"),
}
"""Who someone is to the user, in both languages (``ANCHOR_ROLES``): the role words
extraction's relation rules record as a triple's slot (Grace 是我老板 → works_with, slot
老板), grouped with their synonyms and English words — a question about "my manager"
names whoever the user called 老板. Every role word extraction can record is here
(``test_every_relation_word_extraction_records_names_a_role``)."""
_ROLE_OF = {w: role for role, words in ROLE_WORDS.items() for w in words}
_EN_ROLE = re.compile(r"\b(?:my|our)\s+(?:[a-z]+\s+)?("
                      + "|".join(sorted((w for w in _ROLE_OF if not is_cjk(w)),
                                        key=len, reverse=True)) + r")s?\b")


FACT_WORDS: dict[str, tuple[str, ...]] = {
    "dislikes": ("不喜欢", "讨厌", "不爱", "受不了", "不吃", "不喝"),
    "likes": ("喜欢", "最爱", "爱吃", "爱喝", "爱玩"),
    "lives_in": ("住在", "住哪", "住"),
    "uses": ("在用", "用的是", "用什么", "用哪", "用"),
    "plays": ("玩",),
    "visited": ("去过", "去了", "去哪", "到过"),
    "owns": ("买了", "买的", "买什么", "买哪"),
    "has_goal": ("目标",),
    "works_on": ("业余项目", "个人项目", "副业"),
}
"""Chinese words that ask about a predicate of extraction's vocabulary (the words its
rules read the triple from: 不喜欢 → dislikes, 住在 → lives_in), longest first in a query,
each span once (不喜欢 is not also 喜欢); a one-character word (住, 用, 玩) only where
jieba reads it as a word of its own. Relations to the user (friend_of, works_with) are
:data:`ROLE_WORDS`' part."""

_EN_FACTS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("dislikes", re.compile(r"\b(?:hate[sd]?|hating|dislike[sd]?|can'?t stand|(?:do|does|did)"
                            r"(?:n'?t| not)\s+(?:\w+\s+){0,2}(?:like|love|enjoy))\b", re.I)),
    ("likes", re.compile(r"\b(?:(?:do|does|did)\s+(?:\w+\s+){1,3}|(?:i|you|he|she|we|they)"
                         r"\s+(?:really\s+|also\s+|still\s+)?)(?:like[sd]?|love[sd]?|"
                         r"enjoy(?:s|ed)?)\b|\bfavou?rites?\b", re.I)),
    ("lives_in", re.compile(r"\b(?:live[sd]?|living)\b", re.I)),
    ("uses", re.compile(r"\b(?:use[sd]?|using)\b", re.I)),
    ("plays", re.compile(r"\bplay(?:s|ed|ing)?\b", re.I)),
    ("visited", re.compile(r"\b(?:visit(?:s|ed)?|been to|travell?ed to)\b|"
                           r"\bwhere\b.*\b(?:go|went|going)\b", re.I)),
    ("owns", re.compile(r"\bbu(?:y|ys|ying|ought)\b", re.I)),
    ("has_goal", re.compile(r"\bgoals?\b", re.I)),
    ("works_on", re.compile(r"\bside[- ]projects?\b|\bwork(?:s|ed|ing)? on\b", re.I)),
)
"""English questions about a predicate: a verb with its subject ("do I like", "she
loves" — not "what was it like?"), its negation for dislikes ("don't like"), "where …
go" for visited."""


def query_facts(text: str) -> list[tuple[str, str]]:
    """The predicates a query asks about, as ``(predicate, the words that ask)``.

    >>> query_facts("What kind of coffee do I like?"), query_facts("What food do I hate?")
    ([('likes', 'do I like')], [('dislikes', 'hate')])
    >>> query_facts("我不吃什么"), query_facts("国庆去了哪里"), query_facts("我住在上海哪个区")
    ([('dislikes', '不吃')], [('visited', '去了')], [('lives_in', '住在')])
    >>> query_facts("What was the weather like?"), query_facts("我们用户很多")
    ([], [])
    """
    out: list[tuple[str, str]] = []
    taken = [False] * len(text)

    def claim(m: re.Match[str], pred: str) -> None:   # each span of the query asks once
        a, b = m.span()
        if not any(taken[a:b]):
            taken[a:b] = [True] * (b - a)
            out.append((pred, " ".join(m.group().split())))

    if is_cjk(text):
        words = {w for w in segment(text) if len(w) == 1}
        cues = sorted(((w, p) for p, ws in FACT_WORDS.items() for w in ws),
                      key=lambda x: -len(x[0]))
        for w, pred in cues:
            if len(w) == 1 and w not in words:
                continue
            for m in re.finditer(re.escape(w), text):
                claim(m, pred)
    for pred, pat in _EN_FACTS:
        for m in pat.finditer(text):
            claim(m, pred)
    first: dict[str, str] = {}
    for p, w in out:
        first.setdefault(p, w)
    return list(first.items())


def query_roles(text: str) -> list[tuple[str, str]]:
    """The roles a query names, as ``(role, the words that name it)``: an English role
    word after "my" / "our" (one word may sit between: my old manager), a Chinese one as a
    word of its own, after 我 / 我的 or not (Chinese drops the possessive).

    >>> query_roles("Did I tell my manager about my finger?")
    [('boss', 'manager')]
    >>> query_roles("我妈说了什么"), query_roles("跟老板请假了吗")
    ([('mother', '妈')], [('boss', '老板')])
    >>> query_roles("The boss of level 2")
    []
    """
    low = normalize(text)
    out = [(_ROLE_OF[m.group(1)], m.group(1)) for m in _EN_ROLE.finditer(low)]
    for tok in segment(low):
        if not is_cjk(tok):
            continue
        word = tok.removeprefix("我的") if tok.startswith("我的") else tok.removeprefix("我")
        role = _ROLE_OF.get(word) or _ROLE_OF.get(tok)
        if role:
            out.append((role, word if word in _ROLE_OF else tok))
    return list(dict.fromkeys(out))


class AnchorLexicon:
    """Alias surfaces (normalised) → anchors, searched in query text."""

    def __init__(self, aliases: Iterable[tuple[str, str]], names: Mapping[str, str]) -> None:
        self.names = dict(names)
        by: dict[str, list[str]] = {}
        for anchor, surface in aliases:
            n = normalize(surface).strip().lstrip("@")
            if n and anchor not in by.setdefault(n, []):
                by[n].append(anchor)
        # longest first, so 阿岚 wins over 岚 where both match
        self.surfaces = dict(sorted(by.items(), key=lambda kv: (-len(kv[0]), kv[0])))
        self.forms: dict[str, int] = {}
        """Per anchor: how many alias forms it has (one form: its mentions are the alias's
        own text, which the lexical index already finds)."""
        for anchors in by.values():
            for a in anchors:
                self.forms[a] = self.forms.get(a, 0) + 1
        self._latin = {n: re.compile(latin_word(re.escape(n)))  # 跟Grace说
                       for n in self.surfaces if not is_cjk(n)}

    def __len__(self) -> int:
        return len(self.surfaces)

    def find(self, text: str) -> list[AnchorHit]:
        """Aliases named in ``text``, non-overlapping, longest first, in text order."""
        low = normalize(text)
        taken = np.zeros(len(low) + 1, bool)
        hits: list[AnchorHit] = []
        tokens: list[tuple[str, int, int]] | None = None
        for n, anchors in self.surfaces.items():
            spans: list[tuple[int, int]] = []
            if n in self._latin:
                spans = [m.span() for m in self._latin[n].finditer(low)]
            elif n in low:
                spans = [(m.start(), m.start() + len(n)) for m in re.finditer(re.escape(n), low)]
                if len(n) == 1:
                    if tokens is None:
                        tokens = _jieba_tokens(low)
                    spans = [sp for sp in spans if _free_char(tokens, sp[0])]
            for a, b in spans:
                if taken[a:b].any():
                    continue
                taken[a:b] = True
                hits.extend(AnchorHit(x, n, a, b) for x in anchors)
        return sorted(hits, key=lambda h: (h.start, h.anchor))


def _jieba_tokens(text: str) -> list[tuple[str, int, int]]:
    import jieba

    from ..text.tokenize import segment
    segment("")  # jieba initialised
    return [(w, a, b) for w, a, b in jieba.tokenize(text)]


def _free_char(tokens: list[tuple[str, int, int]], pos: int) -> bool:
    """A one-character alias at ``pos`` names someone when jieba reads it inside a word it
    does not know (岚住, glued by its HMM) or alone and it is a rare word (岚), not inside a
    dictionary word (上周) nor as a common one (很美 → 美)."""
    for w, a, b in tokens:
        if a <= pos < b:
            return _rare_word(w) if len(w) == 1 else not _dictionary_word(w)
    return True


class CharIndex:
    """One-character Chinese words as lexical terms, for translations only (住, 切, 药: an
    English word's Chinese equivalent is often one character, which the index leaves out
    — on its own a character is too vague a query term, but as the dictionary's reading
    of a query word it is evidence). A message holds a character where jieba reads it as
    a word of its own, or inside a word jieba does not know (岚住 — its HMM glued them);
    not inside a dictionary word (记住 holds 住 but says "remember"). Built from the texts
    the mirror holds on first use, extended as messages are added."""

    def __init__(self, mirror: int = 0) -> None:
        self.postings = Postings()
        self.mirror = mirror
        """The ``id`` of the mirror whose rows these are."""

    def update(self, texts: Sequence[str | None]) -> Postings:
        """Index the rows of ``texts`` not indexed yet; returns the postings."""
        for j in range(self.postings.n_rows, len(texts)):
            self.postings.add(j, _free_chars(texts[j] or ""))
        return self.postings


def _free_chars(text: str) -> list[str]:
    out: list[str] = []
    if not is_cjk(text):   # nothing to find: not worth jieba's time (90 µs a message)
        return out
    for w in segment(text):
        if not is_cjk(w):
            continue
        if len(w) == 1:
            out.append(w)
        elif not _dictionary_word(w):
            out.extend(c for c in w if is_cjk(c))
    return out


class ChannelStore(Protocol):
    """What the channels read of a store (:class:`~akasha_explorer.store.store.Store`
    satisfies it; typed here so the store imports this module, not the reverse)."""

    mirror: Mirror
    anchor_channel: AnchorChannel

    @property
    def graph_as_is(self) -> GraphDB: ...

    @property
    def anchor_version(self) -> int: ...

    def waiting_messages(self) -> list[int]: ...


class AnchorChannel:
    """The store's anchors as a recall channel: the alias lexicon and each anchor's
    mentions as message rows, read from the graph and kept until anchors, aliases or
    mentions change (``Store.anchor_version``) or messages are forgotten. Turns whose
    graph rows still wait (``add_turn``'s write-behind) have no mentions in the graph
    yet: their messages are searched for the lexicon's aliases here, as extraction's
    gazetteer will (the new anchors extraction may add come with the graph rows)."""

    def __init__(self) -> None:
        self._key: tuple[Any, ...] | None = None
        self._waiting: tuple[int, ...] = ()
        self._waiting_hits: dict[int, tuple[str, ...]] = {}
        """Per waiting message row: the anchors its aliases name, once per mention."""
        self._lexicon = AnchorLexicon((), {})
        self._roles: dict[str, tuple[str, ...]] = {}
        self._facts: dict[str, list[tuple[frozenset[str], int]]] | None = None
        self._rows: dict[str, tuple[NDArray[np.int64], NDArray[np.float64]]] = {}
        self._graph_counts: dict[str, dict[int, int]] = {}
        """Per anchor: message row → its mentions in the graph (what a waiting message's
        new hit leaves as it is: only anchors, aliases or mentions written change it)."""
        self._chars = CharIndex()
        self._cjk: tuple[int, bool, object] = (0, False, None)
        """Terms of the lexical index read so far, whether one is Chinese, which index."""

    def chars(self, store: ChannelStore) -> Postings | None:
        """The character index (:class:`CharIndex`) of the store's messages, or None when
        no indexed term of the store is Chinese (nothing to find, nothing to build)."""
        vocab = store.mirror.postings.vocab
        seen, found, of = self._cjk
        if of is not vocab:   # another mirror's index: read it from the start
            seen, found = 0, False
        if not found and seen != len(vocab):   # only the terms added since (terms stay)
            found = any(is_cjk(t) for t in itertools.islice(vocab, seen, None))
        self._cjk = (len(vocab), found, vocab)
        if not found:
            return None
        if self._chars.mirror != id(store.mirror):  # a reloaded mirror: rows may differ
            self._chars = CharIndex(id(store.mirror))
        return self._chars.update(store.mirror.msg_text)

    def _refresh(self, store: ChannelStore) -> None:
        # every write of a mention, alias or anchor moves anchor_version (extraction,
        # curation, forget); a new message adds none until its extraction does, and a
        # message forgotten leaves its row dead
        n = store.mirror.nodes
        g = store.graph_as_is   # turns waiting for the graph have no anchors yet
        key = (id(g), store.anchor_version, id(store.mirror), n.m - int(n.msg_alive[: n.m].sum()))
        if key != self._key:
            self._lexicon = AnchorLexicon(((r["a"], r["s"]) for r in ga.alias_surfaces(g)),
                                          ga.anchor_names(g))
            roles: dict[str, list[str]] = {}
            for r in ga.relation_roles(g):
                role = _ROLE_OF.get(normalize(r["slot"] or ""))
                if role and r["anchor"] not in roles.setdefault(role, []):
                    roles[role].append(r["anchor"])
            self._roles = {k: tuple(sorted(v)) for k, v in roles.items()}
            self._rows, self._graph_counts = {}, {}
            self._facts = None
            self._key = key
            self._waiting, self._waiting_hits = (), {}
        waiting = tuple(store.waiting_messages())
        if waiting != self._waiting:
            # their aliases, as extraction's gazetteer finds them — searched once per
            # message while the lexicon stands (an agent's loop adds a turn or two to up
            # to FOLD_AFTER waiting ones; searching them all again was 40 % of a recall)
            texts = store.mirror.msg_text
            old, hits = self._waiting_hits, {}
            changed: set[str] = set()
            for j in waiting:
                got = old.pop(j, None)
                if got is None:
                    got = tuple(h.anchor for h in self._lexicon.find(texts[j] or ""))
                    changed.update(got)
                hits[j] = got
            for gone in old.values():  # folded into the graph (its mentions come with it)
                changed.update(gone)
            for a in changed:
                self._rows.pop(a, None)
            self._waiting, self._waiting_hits = waiting, hits

    def lexicon(self, store: ChannelStore) -> AnchorLexicon:
        """The alias lexicon as of now."""
        self._refresh(store)
        return self._lexicon

    def roles(self, store: ChannelStore) -> dict[str, tuple[str, ...]]:
        """Role (:data:`ROLE_WORDS`) → the anchors the user's relation triples give it, as of
        now."""
        self._refresh(store)
        return self._roles

    def facts(self, store: ChannelStore) -> dict[str, list[tuple[frozenset[str], int]]]:
        """Predicate → ``(its anchors, message row)`` of each triple the fact channel
        searches (``FACT_WEIGHT``: :func:`~akasha_explorer.graphdb.anchors.fact_rows`;
        the anchors: its subject and object; the row: the message of its turn whose text
        holds its quote), read once per anchor version."""
        self._refresh(store)
        if self._facts is None:
            rows = self._stable(store, ga.fact_rows)
            n, texts = store.mirror.nodes, store.mirror.msg_text
            facts: dict[str, list[tuple[frozenset[str], int]]] = {}
            for r in rows:
                i = n.index.get(r["node"] or "")
                if i is None or not n.alive[i]:
                    continue
                a, k = int(n.first_msg[i]), int(n.n_msg[i])
                quote = r["quote"] or ""
                row = next((j for j in range(a, a + k) if quote and quote in (texts[j] or "")),
                           a)
                who = frozenset(x for x in (r["subject"], r["object"]) if x)
                facts.setdefault(r["p"], []).append((who, row))
            self._facts = facts
        return self._facts

    def _stable(self, store: ChannelStore, read: Callable[[GraphDB], Row]) -> Row:
        """``read(graph)`` as of one anchor version: a fold (another thread's) that commits
        during the read moves the version — the turns it wrote are no longer waiting, and
        what was read may be its — so it is read again."""
        while True:
            key = self._key
            got = read(store.graph_as_is)
            self._refresh(store)
            if self._key == key:
                return got

    def postings(self, store: ChannelStore, anchor: str
                 ) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
        """Message rows that mention ``anchor`` and how often each does."""
        self._refresh(store)
        got = self._rows.get(anchor)
        if got is None:
            counts = dict(self._in_graph(store, anchor))
            for j, named in self._waiting_hits.items():
                c = named.count(anchor)
                if c:
                    counts[j] = counts.get(j, 0) + c
            rows = np.array(sorted(counts), np.int64)
            got = (rows, np.array([counts[int(r)] for r in rows], np.float64))
            self._rows[anchor] = got
        return got

    def _in_graph(self, store: ChannelStore, anchor: str) -> dict[int, int]:
        """Message row → mentions of ``anchor`` in the graph, read once per anchor version:
        a turn stored since (waiting for the graph) changes the waiting hits, not this — so
        a recall that names an anchor the newest turns name reads no statement, and does
        not wait for a fold another thread is writing."""
        got = self._graph_counts.get(anchor)
        if got is None:
            mentions = self._stable(store, lambda g: ga.mentions_of(g, anchor))
            index = store.mirror.nodes.msg_index
            got = {}
            for m in mentions:
                j = index.get(m["msg"])
                if j is not None:
                    got[int(j)] = got.get(int(j), 0) + 1
            self._graph_counts[anchor] = got
        return got


def query_groups(store: ChannelStore, text: str, *, now: float, settings: Settings,
                 alive: NDArray[np.bool_], postings: Postings, time_words: Iterable[str] = ()
                 ) -> tuple[list[TermGroup], set[str], dict[str, str]]:
    """The extra term groups of query ``text`` (anchors named by an alias or a role,
    one-character words, then translations), the query terms the anchors replace, and the
    query terms that are the only form of an anchor the query names (Grace: searched as
    the word itself, no group), each with the alias as written — for the context block's
    note (:data:`~akasha_explorer.engine.bm25.MENTIONS`); ``postings``: the lexical index
    under ``settings``' term rules. All empty when ``HYBRID`` is off
    or the channels' weights are 0 (the v1 profile).

    Settings read: ``HYBRID``, ``ANCHOR_WEIGHT``, ``ANCHOR_ROLES``, ``FACT_WEIGHT``,
    ``CHAR_WEIGHT``, ``XLING_KINDS``,
    ``XLING_WEIGHT``,
    ``XLING_PER_WORD``, and the term rules and IDF floor (``FTS_MIN_IDF``,
    ``FTS_MIN_IDF_DOCS``, ``CAUSAL_IDF``).
    ``time_words`` (the query's relative time phrases: last weekend, 上周末) are not
    translated — they name a window, not a topic.
    """
    s = settings
    groups: list[TermGroup] = []
    replaced: set[str] = set()
    alone: dict[str, str] = {}
    if not s.HYBRID or max(s.ANCHOR_WEIGHT, s.XLING_WEIGHT, s.CHAR_WEIGHT, s.FACT_WEIGHT) <= 0:
        return groups, replaced, alone
    rules = TermRules.of(s)
    skip: set[str] = set()
    named: set[str] = set()   # the characters of the aliases the anchor channel searches
    for phrase in time_words:
        skip.update(normalize(phrase).split())
        skip.update(terms(phrase, rules=TermRules(cjk_stopwords=False, stopwords=False,
                                                  stem="")))
    channel = store.anchor_channel
    if s.ANCHOR_WEIGHT > 0 or s.FACT_WEIGHT > 0:
        lexicon = channel.lexicon(store)
        hits = lexicon.find(text)
        passes = _idf_gate(store, alive, now=now, settings=s)
    if s.ANCHOR_WEIGHT > 0:
        seen: dict[str, bool] = {}

        def member(anchor: str) -> tuple[str, NDArray[np.int64], NDArray[np.float64]] | None:
            if anchor not in seen:
                rows, tf = channel.postings(store, anchor)
                seen[anchor] = passes(rows)
                if seen[anchor]:
                    return (f"@{lexicon.names.get(anchor, anchor)}", rows, tf)
            return None

        for hit in hits:
            if lexicon.forms.get(hit.anchor, 0) < 2:
                # one form: nothing the words alone would not find; noted, not weighed
                member(hit.anchor)
                if seen[hit.anchor]:
                    name = lexicon.names.get(hit.anchor, hit.surface)
                    alone.update(dict.fromkeys(terms(hit.surface, rules=rules), name))
                continue
            got = member(hit.anchor)
            if got is not None:
                groups.append(TermGroup("anchor", hit.surface, s.ANCHOR_WEIGHT, (got,)))
            if seen[hit.anchor]:
                replaced.update(terms(hit.surface, rules=rules))
                named.update(hit.surface)
        if s.ANCHOR_ROLES:
            roles = channel.roles(store)
            for role, surface in query_roles(text):
                found = [m for a in roles.get(role, ()) if (m := member(a)) is not None]
                if found:  # "my manager": whoever the user called 老板, by any alias
                    groups.append(TermGroup("anchor", surface, s.ANCHOR_WEIGHT,
                                            tuple(found)))
                    replaced.update(terms(surface, rules=rules))
                    named.update(surface)
    if s.FACT_WEIGHT > 0:
        groups.extend(_fact_groups(store, text, {h.anchor for h in hits}, passes,
                                   weight=s.FACT_WEIGHT))
    if s.CHAR_WEIGHT > 0 and rules.cjk_min > 1:   # else one character is a term already
        groups.extend(_char_groups(store, text, now=now, settings=s, alive=alive,
                                   skip=skip | named))
    if s.XLING_WEIGHT > 0:
        chars: Postings | None = None
        said = translate(text, rules=rules, per_word=CANDIDATES, skip=skip)
        if s.XLING_KINDS > 0:
            said += kind_translations(text, rules=rules, per_word=CANDIDATES,
                                      limit=s.XLING_KINDS,   # a name has no kinds (Lan)
                                      skip=skip | replaced | set(alone))
        for tr in said:
            members = []
            for t in tr.targets:
                index: Postings | None = postings
                if len(t) == 1 and is_cjk(t) and rules.cjk_min > 1:
                    chars = chars or store.anchor_channel.chars(store)
                    index = chars
                if index is None:
                    continue
                if _passes(t, index, store, alive, now=now, settings=s):
                    members.append((t, *index.postings(t)))
                if len(members) == s.XLING_PER_WORD:
                    break
            if members:  # a phrase (west lake -> 西湖) stands for each of its words
                words = sum(1 for w in tr.source.split() if w not in STOPWORDS) or 1
                groups.append(TermGroup(tr.direction, tr.source, s.XLING_WEIGHT * words,
                                        tuple(members)))
    return groups, replaced, alone


CHAR_STOPWORDS = frozenset("做干弄搞会能要想得着过地谁啥咋")
"""One-character words the character channel does not search (``CHAR_WEIGHT``), beside the
one-character :data:`~akasha_explorer.text.tokenize.CJK_STOPWORDS`: the verbs that stand
for any action (做, 干, 弄, 搞 — "do", a stop word in English), modal verbs (会, 能, 要, 想)
and particles (得, 着, 过, 地), and question words (谁, 啥, 咋). With 干 searched,
"上周末干了什么" matched a turn saying 干 and was no longer a question about a time."""


def _idf_gate(store: ChannelStore, alive: NDArray[np.bool_], *, now: float,
              settings: Settings) -> Callable[[NDArray[np.int64]], bool]:
    """Whether a pseudo-term with these message rows (an anchor's mentions, a predicate's
    facts) is searched: some visible message holds it and it passes the IDF floor like a
    query term (``FTS_MIN_IDF`` once ``FTS_MIN_IDF_DOCS`` messages are visible; visible:
    alive, and said by ``now`` with ``CAUSAL_IDF``)."""
    s = settings
    n = store.mirror.nodes
    vis = (alive & (n.msg_ts <= now)) if s.CAUSAL_IDF else alive
    n_docs = int(vis.sum())
    floor = s.FTS_MIN_IDF if n_docs >= s.FTS_MIN_IDF_DOCS else -np.inf

    def passes(rows: NDArray[np.int64]) -> bool:
        df = int(vis[rows].sum()) if rows.size else 0
        return df > 0 and idf_select(n_docs, df) >= floor

    return passes


def _fact_groups(store: ChannelStore, text: str, named: set[str],
                 passes: Callable[[NDArray[np.int64]], bool], *, weight: float
                 ) -> list[TermGroup]:
    """One group per predicate the query asks about (:func:`query_facts`) whose messages
    pass the IDF floor (``passes``; ``FACT_WEIGHT``, see the module docstring): when the
    query names anchors (``named``), only the triples with one of them as subject or
    object."""
    asked = query_facts(text)
    if not asked:
        return []
    facts = store.anchor_channel.facts(store)
    out = []
    for pred, words in asked:
        # a query that names someone asks about their facts ("Where does Grace live?" is
        # not answered by where the user lives), else about any (mostly the user's)
        rows = [r for who, r in facts.get(pred, ()) if not named or who & named]
        if not rows:
            continue
        u, c = np.unique(np.asarray(rows, np.int64), return_counts=True)
        if passes(u):
            out.append(TermGroup("fact", words, weight, ((f"#{pred}", u, c.astype(np.float64)),)))
    return out


def _char_groups(store: ChannelStore, text: str, *, now: float, settings: Settings,
                 alive: NDArray[np.bool_], skip: set[str]) -> list[TermGroup]:
    """One group per one-character Chinese content word of ``text`` that passes the IDF
    floor in the character index (``CHAR_WEIGHT``; see the module docstring)."""
    s = settings
    chars = store.anchor_channel.chars(store)
    if chars is None:
        return []
    out = []
    for ch in dict.fromkeys(segment(text)):
        if (len(ch) != 1 or not is_cjk(ch) or ch in CJK_STOPWORDS or ch in CHAR_STOPWORDS
                or ch in skip):
            continue
        if _passes(ch, chars, store, alive, now=now, settings=s):
            out.append(TermGroup("char", ch, s.CHAR_WEIGHT, ((ch, *chars.postings(ch)),)))
    return out


def _passes(term: str, index: Postings, store: ChannelStore, alive: NDArray[np.bool_], *,
            now: float, settings: Settings) -> bool:
    """Whether an extra term (a translation, a one-character word) is searched: some
    visible message of ``index`` holds it and it passes the IDF floor like a query term."""
    s = settings
    n = store.mirror.nodes
    (sel,) = select_terms([term], index, n.msg_ts, alive, now=now, min_idf=s.FTS_MIN_IDF,
                          unseen_idf=s.FTS_UNSEEN_IDF, max_terms=1, min_len=1,
                          causal=s.CAUSAL_IDF, skip_unseen=True, min_docs=s.FTS_MIN_IDF_DOCS)
    return sel.kept
