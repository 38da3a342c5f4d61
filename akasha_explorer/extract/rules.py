"""The default extractor: offline rules, no model (SPEC §6).

Mentions come from five rules, each with a kind guess and a confidence:

- ``handle``: ``@name`` handles (account, 0.9);
- ``quoted``: names in 《》「」『』 (thing, 0.75);
- ``honorific``: 阿岚, 老周, 小林, 岚姐 — a CJK name with an honorific (person, 0.85);
- ``pos``: jieba part of speech ``nr`` / ``ns`` / ``nt`` (person / place / org, 0.5–0.6),
  minus a list of common words jieba mis-tags and very frequent dictionary words;
- ``latin``: capitalised or all-caps latin words not at a sentence start, runs of them
  joined ("Home Assistant", "Raspberry Pi 5") (thing, 0.45–0.65).

Triples come from clause patterns on the *user's* messages (what a person says about
themselves and others; the assistant's restatements are not facts): "我住在X", "X是我的同事",
"我喜欢X", "我不喜欢X", "我在用X的Y", "我换成了X的Y", "(我)打X", "目标是X", "I'm the X",
"Y is the Z", "I like X", "I use X for Y", "I live in X" … Each keeps the clause as its
verbatim quote. Object phrases that look like names become mention candidates too, so
"我喜欢喝燕麦拿铁" makes 燕麦拿铁 an anchor candidate.

>>> from akasha_explorer.extract.base import MessageIn
>>> x = RuleExtractor().extract([MessageIn("s:0", "s:0", "s", 0.0, "user", "Ann",
...     "岚是我大学同学，我们都叫她阿岚。I'm the Defect, Lan is the Ironclad")])[0]
>>> sorted({(m.surface, m.kind) for m in x.mentions})  # doctest: +NORMALIZE_WHITESPACE
[('Defect', 'thing'), ('Ironclad', 'thing'), ('Lan', 'thing'), ('岚', 'person'),
 ('阿岚', 'person')]
>>> [(t.subject.key(), t.predicate, t.object.key()) for t in x.triples]
[('岚', 'friend_of', '@self'), ('@self', 'is_a', 'Defect'), ('Lan', 'is_a', 'Ironclad')]
"""

from __future__ import annotations

import itertools
import logging
import re
import threading
from collections import OrderedDict
from collections.abc import Iterator, Sequence

from ..text.edges import LATIN
from ..text.tokenize import STOPWORDS, cut, pieces
from .base import Extraction, MentionCandidate, MessageIn, Ref, TripleCandidate
from .normalize import HONORIFIC_PREFIXES, HONORIFIC_SUFFIXES, SURNAMES

__all__ = ["RuleExtractor"]

log = logging.getLogger(__name__)
_lock = threading.Lock()

def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


POS_KIND = {"nr": "person", "nrfg": "person", "nrt": "person", "ns": "place", "nt": "org"}
POS_CONF = {"person": 0.5, "place": 0.55, "org": 0.6}
POS_STOP = _words("""
    东西 太阳 下山 礼拜 谢谢 普通 挪 换 多云 蓝牙 阿姨 祝你们 张牌 太晚
    空格键 燕麦 静默 延长线 布洛芬 乌鸦嘴 今天上午 酒都 沙发 聊天 高铁
    老样子 老家 老板 老师 老公 老婆 小孩 小姐 小心 小时 阿公 阿婆 阿爸
    阿妈 小伙 小组 小题 老大 小区 小说 老人 小朋友 小学 老乡 小雨 黑名单
""")
"""Common words jieba's dictionary tags as names or places."""
POS_MAX_FREQ = 20000
"""Dictionary words more frequent than this are common words, not names."""
PLACE_SUFFIX = tuple("区市省县路街镇村湖山州岛港站")
WEEKDAYS = _words("""
    monday tuesday wednesday thursday friday saturday sunday january february march
    april may june july august september october november december
""")
KINSHIP = _words("""
    小雨 阿姨 阿公 阿婆 阿爸 阿妈 阿哥 阿姐 老公 老婆 老板 老师 老家
    老大 老乡 老人 小孩 小姐 小伙 小心 小时 小区 小说 小组
""")

_HANDLE = re.compile(rf"(?<![{LATIN}@])[@＠][A-Za-z0-9_][A-Za-z0-9_.\-]*[A-Za-z0-9_]")
_QUOTED = re.compile(r"《([^《》\n]{1,30})》|「([^「」\n]{1,30})」|『([^『』\n]{1,30})』")
_LATIN = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:['’\-][A-Za-z0-9]+)*")
_SENT_END = ".!?。！？:：\n\"“”—"
_GLUE = set("/\\_:=<>.@#$%&*`|")
STARTERS = _words("""
    today yesterday tonight then also maybe just honest quick sounds probably nice good
    happens someone most less some congrats morning thanks noted gave got merged added
    ugh haha hmm ha anytime fair perfect sunny cold roommate typing random like one two
    everything anything nothing please sorry great cool wow yeah yep nope hi hey hello
""")

# -- triple patterns -------------------------------------------------------------------------
_CLAUSE = re.compile(r"(?:[^。！？!?；;\n，,:：.]|\.(?!\s|$))+")
_ZH_FILLER = re.compile(r"^(?:其实|现在|还有|对了|好了|嗯|哦|对|而且|另外|然后|所以|但是)+")
_REL_FRIEND = "大学同学|高中同学|初中同学|小学同学|同学|好朋友|朋友|室友|闺蜜|发小|兄弟|队友"
_REL_WORK = "同事|老板|经理|上司|领导|搭档|老大|下属"
_REL_FAMILY = ("妈妈|爸爸|妈|爸|母亲|父亲|哥哥|姐姐|弟弟|妹妹|老婆|老公|妻子|丈夫|女朋友|男朋友|"
               "儿子|女儿|表哥|表姐|表妹|表弟")
_ADV = "(?:很|最|特别|真的|也|还|一直|超|挺|比较)?"
_ZH_RULES: list[tuple[re.Pattern[str], str, float, str]] = [
    # (pattern on the clause after its subject, predicate, confidence, object kind)
    (re.compile(r"^(?:现在|也|一直|还)?住在(?P<o>.+)"), "lives_in", 0.9, "place"),
    (re.compile(rf"^是我(?:的)?(?P<rel>{_REL_FRIEND})"), "friend_of", 0.9, "person"),
    (re.compile(rf"^是我(?:的)?(?P<rel>{_REL_WORK})"), "works_with", 0.9, "person"),
    (re.compile(rf"^是我(?:的)?(?P<rel>{_REL_FAMILY})"), "family_of", 0.9, "person"),
    (re.compile(r"^是我的\s*(?P<o>.*(?:project|项目|作品).*)", re.I), "works_on", 0.9, "project"),
    (re.compile(r"^是我的(?P<o>.+)"), "is_a", 0.6, "thing"),
    (re.compile(rf"^{_ADV}(?:不喜欢|讨厌|不爱|受不了)(?:喝|吃|玩|用|看|听)?(?P<o>.+)"),
     "dislikes", 0.85, "thing"),
    (re.compile(rf"^{_ADV}(?:喜欢|爱|最爱)(?:喝|吃|玩|用|看|听)?(?P<o>.+)"), "likes", 0.85,
     "thing"),
    (re.compile(r"^(?:现在|一直|也|还)?(?:在用|用的是|用着)(?P<o>.+)"), "uses", 0.85, "device"),
    (re.compile(r"^(?:已经)?(?:换成了|换成|改用了|改用)(?P<o>.+)"), "uses+", 0.85, "device"),
    (re.compile(r"^(?:每周|经常|一般|平时|都|也|还|一起|现在|天天)*(?:玩|打)(?P<o>.+)"),
     "plays", 0.8, "game"),
    (re.compile(r"^(?:今天|昨天|刚|刚刚|终于|已经|也|又|还)*(?:买了|买的是|买的|入手了)(?P<o>.+)"),
     "owns", 0.75, "thing"),
    (re.compile(r"^(?:今天|终于|已经|也)*(?:去了|去过|到了|到)(?P<o>.+)"), "visited", 0.75,
     "place"),
    (re.compile(r"^(?:最后|已经|还是)?(?:决定|定了)(?P<o>.+)"), "decided", 0.7, "thing"),
]
_ZH_GOAL = re.compile(r"目标(?:就)?(?:是|更新为|改成|变成)(?:把)?\s*"
                      r"(?P<o>[A-Za-z]+\d+|[A-Za-z0-9\u4e00-\u9fff]{1,8})")
_EN_RULES: list[tuple[re.Pattern[str], str, float, str]] = [
    (re.compile(r"^I(?:'m| am) the (?P<o>[A-Z][\w\-]*(?: [A-Z][\w\-]*)*)"), "is_a", 0.85,
     "thing"),
    (re.compile(r"^I (?:really |also |do |totally |still )?(?:like|love|enjoy) (?P<o>.+)"),
     "likes", 0.85, "thing"),
    (re.compile(r"^I (?:really )?(?:don't|do not|dont) (?:like|enjoy) (?P<o>.+)"
                r"|^I (?:hate|dislike) (?P<o2>.+)"),
     "dislikes", 0.85, "thing"),
    (re.compile(r"^I(?:'m| am)? (?:use|using) (?P<o>.+?)(?: for (?P<f>.+))?$"), "uses", 0.85,
     "device"),
    (re.compile(r"^I (?:switched|changed|moved) to (?P<o>.+)"), "uses+", 0.85, "device"),
    (re.compile(r"^I live in (?P<o>.+)"), "lives_in", 0.9, "place"),
    (re.compile(r"^I (?:just |finally |also )?(?:bought|got myself) (?P<o>.+)"), "owns", 0.8,
     "thing"),
    (re.compile(r"^I play (?P<o>.+)"), "plays", 0.8, "game"),
    (re.compile(r"^(?:my )?(?:next )?goal is (?P<o>.+)", re.I), "has_goal", 0.85, "thing"),
]
_EN_ISA = re.compile(r"^(?P<s>[A-Z][\w\-]*) is the (?P<o>[A-Z][\w\-]*(?: [A-Z][\w\-]*)*)")
_EN_REL = {"works_with": "boss|manager|supervisor|colleague|coworker",
           "friend_of": "friend|best friend|classmate|roommate|flatmate|teammate",
           "family_of": "mom|mother|mum|dad|father|brother|sister|wife|husband|girlfriend|"
                        "boyfriend|son|daughter|cousin"}
_EN_RELATION = [(re.compile(rf"^(?P<s>[A-Z][\w\-]*) is my (?:\w+ )?(?P<rel>{words})\b"
                            rf"|^my (?:\w+ )?(?P<rel2>{words}),? (?P<s2>[A-Z][\w\-]*)\b",
                            re.I), pred) for pred, words in _EN_REL.items()]
"""English relations to the user: "Grace is my manager", "my manager Grace" (the role word
is the triple's slot, as 老板 in "Grace 是我老板")."""
_OBJ_TAIL = re.compile(r"(?:\s*(?:了|的|吧|呢|啊|哦|嘛|呀|哈+|btw|lol|though|too|now|tbh|"
                       r"[!！.。…~～?？😂🙃😭😤👍🎉☕]))+$")
_OBJ_HEAD = re.compile(r"^(?:a|an|the|my|our|some)\s+", re.I)
_PRONOUN = re.compile(r"[我你他她它们这那]|^(?:it|this|that|them|him|her|me|you)$", re.I)


MAX_CANDIDATES = 2000
"""Most mention candidates one message proposes (a long chat message has a few dozen; a
100,000-character text of one repeated name had 99,000, and resolving them held the store
for seconds): the rest of such a text proposes nothing."""


class RuleExtractor:
    """Rule-based, offline :class:`~akasha_explorer.extract.base.Extractor`."""

    name = "rules-1"

    def extract(self, messages: Sequence[MessageIn]) -> list[Extraction]:
        out = []
        for m in messages:
            x = Extraction(m)
            if "injection" not in m.flags:  # hostile text proposes nothing
                x.mentions = list(itertools.islice(self.mentions(m.text), MAX_CANDIDATES))
                if m.role == "user":
                    x.triples = list(self.triples(m.text, x.mentions))
                    x.mentions.extend(_object_mentions(x.triples, x.mentions))
            out.append(x)
        return out

    # -- mentions ------------------------------------------------------------------------
    def mentions(self, text: str) -> Iterator[MentionCandidate]:
        """Mention candidates of one text (overlaps allowed; the pipeline picks)."""
        for m in _HANDLE.finditer(text):
            yield MentionCandidate(m.start(), m.end(), m.group(), "account", 0.9, "handle")
        for m in _QUOTED.finditer(text):
            g = next(i for i in (1, 2, 3) if m.group(i) is not None)
            if m.group(g).strip():
                yield MentionCandidate(m.start(g), m.end(g), m.group(g), "thing", 0.75, "quoted")
        yield from _pos_mentions(text)
        yield from _latin_mentions(text)

    # -- triples -------------------------------------------------------------------------
    def triples(self, text: str, mentions: Sequence[MentionCandidate]) -> Iterator[TripleCandidate]:
        """Triple candidates of one user message."""
        for c in _CLAUSE.finditer(text):
            raw = c.group()
            lead = len(raw) - len(raw.lstrip())
            clause = raw.strip().rstrip(".")
            if len(clause) < 2:
                continue
            start = c.start() + lead
            if re.match(r"[A-Za-z]", clause) and not re.search("[\u4e00-\u9fff]", clause):
                yield from _en_triples(clause, start)
            else:
                yield from _zh_triples(clause, start, mentions)


_POS_CACHE: OrderedDict[str, tuple[tuple[str, str], ...]] = OrderedDict()
_POS_CACHE_MIN = 2000
"""Texts at least this long keep their part-of-speech tags (a few, the newest): tagging is
most of the cost of extracting a long Chinese text (jieba's HMM, ~0.03-0.4 ms a character),
and :func:`prepare` lets a server tag a text before it takes the store."""
_PREPARED: OrderedDict[str, tuple[tuple[str, str], ...]] = OrderedDict()
PREPARED_TAGS = 256
"""Shorter texts :func:`prepare` tagged, kept (the newest) until their extraction reads
them: a served ``add_turn`` tags its texts before it takes the store, and the fold that
extracts them (up to ``FOLD_AFTER`` = 32 turns, two texts each) comes later. Tagging was
~115 ms of a 32-turn fold on the demo store (~470 ms in all), on the request that folds."""


def prepare(texts: Sequence[str]) -> None:
    """Tag the Chinese texts among ``texts`` now (thread-safe), so their extraction later
    only reads the tags (:data:`_POS_CACHE_MIN`, :data:`PREPARED_TAGS`)."""
    for t in texts:
        if re.search("[\u4e00-\u9fff]", t):
            _jieba_pos(t, keep=True)


def _jieba_pos(text: str, *, keep: bool = False) -> tuple[tuple[str, str], ...]:
    """The part-of-speech tags of ``text``: kept if it is long, or (``keep``) prepared."""
    import jieba
    import jieba.posseg as pseg
    if not jieba.dt.initialized:
        with _lock:
            if not jieba.dt.initialized:
                jieba.setLogLevel(logging.WARNING)
                jieba.initialize()
    long = len(text) >= _POS_CACHE_MIN
    cache, limit = (_POS_CACHE, 8) if long else (_PREPARED, PREPARED_TAGS)
    with _lock:
        got = cache.get(text)
    if got is not None:
        return got
    tags = tuple((p.word, p.flag) for piece in pieces(text) for p in pseg.cut(piece))
    if long or keep:
        with _lock:
            cache[text] = tags
            while len(cache) > limit:
                cache.popitem(last=False)
    return tags


def _pos_mentions(text: str) -> Iterator[MentionCandidate]:
    if not re.search("[\u4e00-\u9fff]", text):
        return
    import jieba
    toks = _jieba_pos(text)  # initialises jieba, so FREQ is loaded
    freq = jieba.dt.FREQ
    pos = 0
    spans = []
    for w, f in toks:
        spans.append((pos, pos + len(w), w, f))
        pos += len(w)
    for k, (a, b, w, f) in enumerate(spans):
        nxt = spans[k + 1] if k + 1 < len(spans) else None
        if nxt and nxt[2] in HONORIFIC_SUFFIXES and f in ("nr", "nrfg", "nrt") and len(w) <= 2:
            yield MentionCandidate(a, nxt[1], w + nxt[2], "person", 0.85, "honorific")
        if (len(w) == 2 and w[0] in HONORIFIC_PREFIXES and w not in KINSHIP
                and (w[1] in SURNAMES or f in ("nr", "nrfg", "nrt"))):
            yield MentionCandidate(a, b, w, "person", 0.85, "honorific")
            continue
        kind = POS_KIND.get(f)
        if kind is None or w in POS_STOP or freq.get(w, 0) > POS_MAX_FREQ:
            continue
        if not re.fullmatch("[\u4e00-\u9fff]+", w):
            continue
        if kind == "person" and w not in freq and w[0] not in SURNAMES:
            continue  # a word jieba's HMM guessed, not shaped like a name
        if w.endswith(PLACE_SUFFIX) and len(w) >= 2:
            kind = "place"
        if len(w) == 1 and w in SURNAMES:
            continue  # a bare surname (周, 林) is a word like 这周 far more often than a name
        conf = POS_CONF[kind] if len(w) > 1 else 0.4
        yield MentionCandidate(a, b, w, kind, conf, "pos")


def _sentence_initial(text: str, i: int) -> bool:
    j = i - 1
    while j >= 0 and text[j] in " \t([（【":
        j -= 1
    return j < 0 or text[j] in _SENT_END


def _latin_mentions(text: str) -> Iterator[MentionCandidate]:
    toks = [m for m in _LATIN.finditer(text)
            if not ((m.start() > 0 and text[m.start() - 1] in _GLUE)
                    or (m.end() < len(text) and text[m.end()] in _GLUE - {"."})
                    or (m.end() + 1 < len(text) and text[m.end()] == "."
                        and text[m.end() + 1].isalnum()))]
    runs: list[list[re.Match[str]]] = []
    for m in toks:
        w = m.group()
        cap = w[0].isupper() and w not in ("I", "I'm", "I've", "I'll", "I'd", "OK", "Ok")
        if not cap:
            continue
        caps = w.isupper() and len(w) > 1
        prev = runs[-1][-1].group() if runs else ""
        same_style = (prev.isupper() and len(prev) > 1) == caps
        if runs and text[runs[-1][-1].end():m.start()] == " " and same_style:
            runs[-1].append(m)
        else:
            runs.append([m])
    for run in runs:
        if _sentence_initial(text, run[0].start()):
            w0 = run[0].group()
            if len(run) == 1 and not (w0.isupper() and len(w0) >= 2):
                continue
            if len(run) > 1 and (w0.lower() in STOPWORDS or w0.lower() in STARTERS
                                 or w0.lower().endswith("ed")):
                run = run[1:]
        while run and run[-1].group().lower() in STOPWORDS:
            run = run[:-1]
        if not run:
            continue
        surface = text[run[0].start():run[-1].end()]
        # a trailing number belongs to the name: "Raspberry Pi 5", "Pi 4"
        tail = re.match(r" \d{1,2}(?![\d%℃°.])\b", text[run[-1].end():])
        end = run[-1].end() + (tail.end() if tail else 0)
        surface = text[run[0].start():end]
        if surface.endswith(("'s", "’s")):
            surface, end = surface[:-2], end - 2
        if len(surface) < 2 or surface.lower() in STOPWORDS or surface.lower() in WEEKDAYS:
            continue
        acronym = surface.replace(" ", "").isupper()
        conf = 0.65 if len(run) > 1 else (0.45 if acronym else 0.55)
        yield MentionCandidate(run[0].start(), end, surface, "thing", conf, "latin")


def _clean_object(o: str, start: int) -> tuple[str, int, int]:
    """Strip fillers from an object phrase; returns (text, start, end) in message offsets."""
    lead = len(o) - len(o.lstrip())
    s = o.strip()
    h = _OBJ_HEAD.match(s)
    if h:
        lead += h.end()
        s = s[h.end():]
    t = _OBJ_TAIL.search(s)
    if t:
        s = s[: t.start()]
    s2 = s.rstrip()
    return s2, start + lead, start + lead + len(s2)


def _name_like(s: str) -> bool:
    if not s or _PRONOUN.search(s) or len(s) > 24:
        return False
    if re.search("[\u4e00-\u9fff]", s):
        return len(s) <= 10 and not re.search(r"[了过着在把被]", s)
    return len(s.split()) <= 4


def _ref(text: str, a: int, b: int, kind: str,
         mentions: Sequence[MentionCandidate] = ()) -> Ref:
    """The object as a name: the chain of mentions that starts it (上海|徐汇区 -> 徐汇区,
    杭州|这么多年 -> 杭州), else the phrase when it looks like a name, else a literal."""
    chain: list[MentionCandidate] = []
    at = a
    while True:
        nxt = [m for m in mentions if m.start == at and m.end <= b]
        if not nxt:
            break
        m = max(nxt, key=lambda m: m.end)
        chain.append(m)
        at = m.end
        while at < b and text[at - a] == " ":
            at += 1
    if chain and at - a < len(text) and not _name_like(text):
        m = chain[-1]
        return Ref(surface=m.surface, start=m.start, end=m.end, kind=kind)
    if chain and at >= b:
        m = chain[-1]
        return Ref(surface=m.surface, start=m.start, end=m.end, kind=kind)
    if _name_like(text):
        return Ref(surface=text, start=a, end=b, kind=kind)
    return Ref(literal=text, start=a, end=b, kind=kind)


def _verb_alone(rest: str, verbs: tuple[str, ...]) -> bool:
    """True when jieba reads one of ``verbs`` as a word of its own in ``rest`` (打 in
    打杀戮尖塔, not in 打字 / 打开)."""
    return any(t in verbs for t in cut(rest))


def _split_owner(o: str, a: int) -> tuple[str, int, str]:
    """'Aqara 的湿度计' -> ('Aqara', a, '湿度计'): the owner names it, the head is the slot."""
    i = o.rfind("的")
    if 0 < i < len(o) - 1:
        owner = o[:i].rstrip()
        if owner and not _PRONOUN.search(owner):
            return owner, a, o[i + 1:].strip()
    return o, a, ""


def _zh_subject(clause: str, start: int,
                mentions: Sequence[MentionCandidate]) -> tuple[Ref | None, int]:
    """Subject of a Chinese clause and where the rest begins (clause offset)."""
    f = _ZH_FILLER.match(clause)
    i = f.end() if f else 0
    if clause.startswith("我们", i):
        return None, i
    if clause.startswith("我", i):
        return Ref(self_=True), i + 1
    best = None
    for m in mentions:
        if m.start == start + i and (best is None or m.end > best.end):
            best = m
    if best is not None:
        return Ref(surface=best.surface, start=best.start, end=best.end,
                   kind=best.kind), best.end - start
    s = re.match(r"^([A-Za-z0-9\u4e00-\u9fff]{1,6}?)\s*是我的", clause[i:])
    if s and not re.search("[说想觉但是也都就]", s.group(1)):
        w = s.group(1)
        return Ref(surface=w, start=start + i, end=start + i + len(w), kind="thing"), i + len(w)
    return None, i


def _zh_triples(clause: str, start: int,
                mentions: Sequence[MentionCandidate]) -> Iterator[TripleCandidate]:
    end = start + len(clause)
    subj, k = _zh_subject(clause, start, mentions)
    g = _ZH_GOAL.search(clause)
    if g:
        who = subj or Ref(self_=True)
        o, a, b = _clean_object(g.group("o"), start + g.start("o"))
        if o:
            yield TripleCandidate(who, "has_goal", Ref(literal=o, start=a, end=b), start, end,
                                  0.85 if subj else 0.8)
        return
    rest = clause[k:].lstrip()
    off = start + len(clause) - len(rest)
    implied = subj is None
    if subj is None:
        subj = Ref(self_=True)
    for pat, pred, conf, okind in _ZH_RULES:
        m = pat.match(rest)
        if not m:
            continue
        if implied:
            conf *= 0.75
        if pred in ("friend_of", "works_with", "family_of"):
            if subj.self_:
                return
            s2 = Ref(surface=subj.surface, start=subj.start, end=subj.end, kind="person")
            yield TripleCandidate(s2, pred, Ref(self_=True), start, end, conf,
                                  slot=m.group("rel"))
            return
        o, a, b = _clean_object(m.group("o"), off + m.start("o"))
        if not o:
            return
        if pred == "works_on":
            if subj.self_:
                return
            yield TripleCandidate(Ref(self_=True), pred,
                                  Ref(surface=subj.surface, start=subj.start, end=subj.end,
                                      kind="project"), start, end, conf)
            return
        change = pred.endswith("+")
        pred = pred.rstrip("+")
        slot = ""
        if pred in ("uses", "likes", "dislikes"):
            o, a, slot = _split_owner(o, a)
            b = a + len(o)
        if pred == "plays" and (o[0] in "不了到得过完" or not _verb_alone(rest, ("玩", "打"))):
            return
        if pred == "is_a":
            obj = Ref(literal=o, start=a, end=b)
        else:
            obj = _ref(o, a, b, okind, mentions)
        if pred == "visited" and (obj.literal is not None or len(o) > 6):
            return
        yield TripleCandidate(subj, pred, obj, start, end, conf, slot=slot, change=change)
        return


def _en_triples(clause: str, start: int) -> Iterator[TripleCandidate]:
    end = start + len(clause)
    lead = re.match(r"(?:(?:and|but|so|also|then|btw|plus)\s+)+", clause, re.I)
    if lead:
        clause, start = clause[lead.end():], start + lead.end()
    for pat, pred in _EN_RELATION:
        m = pat.match(clause)
        if m is None:
            continue
        key = "s" if m.group("s") is not None else "s2"
        who = m.group(key)
        if not who[0].isupper() or who.lower() in STOPWORDS | STARTERS:
            continue
        rel = (m.group("rel") or m.group("rel2")).lower()
        yield TripleCandidate(Ref(surface=who, start=start + m.start(key),
                                  end=start + m.end(key), kind="person"),
                              pred, Ref(self_=True), start, end, 0.85, slot=rel)
        return
    m = _EN_ISA.match(clause)
    if m and m.group("s").lower() not in STOPWORDS | STARTERS:
        s = Ref(surface=m.group("s"), start=start, end=start + m.end("s"))
        o, a, b = _clean_object(m.group("o"), start + m.start("o"))
        yield TripleCandidate(s, "is_a", _ref(o, a, b, "thing"), start, end, 0.85)
        return
    for pat, pred, conf, okind in _EN_RULES:
        m = pat.match(clause)
        if not m:
            continue
        key = "o" if m.group("o") is not None else "o2"
        o, a, b = _clean_object(m.group(key), start + m.start(key))
        if not o:
            return
        change = pred.endswith("+")
        pred = pred.rstrip("+")
        slot = ""
        if pred == "uses" and "f" in m.groupdict() and m.group("f"):
            slot = _clean_object(m.group("f"), 0)[0].lower()
        obj = Ref(literal=o, start=a, end=b) if pred == "has_goal" else _ref(o, a, b, okind)
        yield TripleCandidate(Ref(self_=True), pred, obj, start, end, conf, slot=slot,
                              change=change)
        return


def _object_mentions(triples: Sequence[TripleCandidate],
                     mentions: Sequence[MentionCandidate]) -> list[MentionCandidate]:
    """Name-like subject/object phrases of triples not already covered by a mention."""
    out = []
    for t in triples:
        for r in (t.subject, t.object):
            if r.self_ or r.surface is None:
                continue
            if any(m.start <= r.start and r.end <= m.end for m in mentions):
                continue
            out.append(MentionCandidate(r.start, r.end, r.surface, r.kind,
                                        min(0.8, t.confidence), "object"))
    return out
