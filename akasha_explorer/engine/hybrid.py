"""SPEC §4 stage 1, **[ours]** (``HYBRID``): fused lexical + dense relevance, the floor and
the seeds chosen from it.

V1 hands the agent a dense-only block (``dense_items``, MiniLM's top 10) and seeds the
ripple with Dense / FTS / BlackHole nodes whose only relevance term is ``cos_node``. On
LoCoMo dev that block finds the evidence turn for .49 of questions where plain BM25 finds
.61, and on Chinese text (which the default model cannot read) dense is a weak lexical
channel. Here both channels are fused into one relevance per node:

- ``lexical = bm25 / bm25_top`` — BM25 (every kept query term) of the node's best message,
  scaled by the best hit of this query (the top ``FUSION_POOL`` messages are read);
- ``dense = clip((cos_msg − zero) / (top − zero), 0, 1)`` — ``cos_msg`` min-max scaled
  between the best visible node (``top``) and the ``FUSION_POOL``-th best (``zero``), so a
  weak dense channel (a CJK query on an English model) cannot outweigh a clear lexical hit
  (when ``top == zero`` — one node, or all tied — the tied best get 1);
- ``base = lexical + w · dense`` — a calibrated linear fusion, measured against
  reciprocal-rank fusion on both dev sets (LoCoMo R@10: RRF k=60 .594, k=10 .666, linear
  .678; MADial-zh: .572 / .610 / .628). ``w`` is ``FUSION_DENSE_WEIGHT`` (0.5) for text the
  model reads, ``FUSION_DENSE_WEIGHT_CJK`` for the CJK share of a query when the model
  reads no CJK (:func:`dense_weight`): then the dense vector is hashed CJK words — a
  weaker lexical channel (MADial-zh floor R@10 .646 at 0.5, .664 at 0.1, .640 at 0) — and
  the model's reading of the dictionary glosses (``EMBED_CJK_GLOSS``; with them MADial-zh
  context R@10 is .681 at 0.1 and .686 at 0.5, the default);
- ``context = CONTEXT_NEIGHBOR · max(base(prev), base(next))`` — the turns just before and
  after a node in its session lend it their relevance: an answer is often the reply next
  to the line that matches (LoCoMo dev R@10 .678 → .736 with 0.5); **[ours]**
  ``CONTEXT_HOPS`` = 2: the turns two places away lend ``CONTEXT_NEIGHBOR²`` of theirs
  (a fault found two replies after the question; LoCoMo dev .775 → .784);
- ``score = base + context``, times ``1 + TIME_PRIOR`` for a node inside a time window
  the query names (``last week``, ``in May 2023``, 最近, 去年…; LoCoMo dev R@10 .755 →
  .763, MADial-zh unchanged), ``norm = score / top score``.

The top ``DENSE_TOP_K`` by ``score`` are the floor (the first block of the context), the
graph seeds of stage 2b and — with the BlackHole seeds of V1 after them — the seeds of
stage 2a, each with energy ``SEED_ENERGY · norm``. Settlement uses ``norm`` as the direct
term of every candidate (V1: ``cos_node``).

>>> from akasha_explorer.engine.bm25 import LexicalHits
>>> from akasha_explorer.engine.toy import toy_nodes
>>> nodes = toy_nodes([[1, 0], [0.6, 0.8], [0, 1]], ts=[0, 1, 2])
>>> cos = nodes.vec.astype(float) @ [1.0, 0.0]
>>> rel, score = relevance(nodes, cos, np.ones(3, bool), LexicalHits((), (2,), (4.0,), 3),
...                        settings=Settings(CONTEXT_NEIGHBOR=0.0))
>>> rel.uids, [round(x, 3) for x in rel.score]
(['n2', 'n0', 'n1'], [1.0, 0.5, 0.3])
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..config import Settings
from .bm25 import MENTIONS, NAMES, SAYS, LexicalHits
from .seeds import blackhole_rows, lexical_node_ranks, seed_table, top_k
from .state import F64, EdgeStore, NodeTable
from .trace import ItemList, Relevance, SeedTable

__all__ = ["asking_nodes", "dense_weight", "floor_items", "hybrid_seeds", "knowable",
           "relevance"]


def _node_bm25(nodes: NodeTable, visible: NDArray[np.bool_], lexical: LexicalHits
               ) -> F64:
    """Best BM25 score of each node's hit messages (0 without a hit)."""
    out = np.zeros(nodes.n, np.float64)
    if not lexical.msg_rows:
        return out
    rows = np.asarray(lexical.msg_rows, np.int64)
    ok = (rows >= 0) & (rows < nodes.m)
    rows, sc = rows[ok], np.asarray(lexical.scores, np.float64)[ok]
    ok = nodes.msg_alive[rows]
    rows, sc = rows[ok], sc[ok]
    node = nodes.msg_node[rows]
    ok = visible[node]
    np.maximum.at(out, node[ok], sc[ok])
    return out


def asking_nodes(nodes: NodeTable, lexical: LexicalHits, asks: NDArray[np.bool_]
                 ) -> NDArray[np.bool_]:
    """Per node: its matching message asks something (``asks``, per message) — the best
    BM25 message of a node the query's terms hit, else the node's last message.

    >>> from akasha_explorer.engine.toy import toy_nodes
    >>> nodes = toy_nodes([[1, 0], [0, 1]])                  # one message per node
    >>> asking_nodes(nodes, LexicalHits((), (1,), (2.0,), 2), np.array([False, True]))
    array([False,  True])
    """
    m = nodes.m
    flags = np.zeros(m, bool)
    k = min(m, asks.shape[0])
    flags[:k] = asks[:k]
    last = nodes.first_msg + np.maximum(nodes.n_msg, 1) - 1
    out = np.where(nodes.n_msg > 0, flags[np.clip(last, 0, max(m - 1, 0))], False) \
        if m else np.zeros(nodes.n, bool)
    if lexical.msg_rows:
        rows = np.asarray(lexical.msg_rows, np.int64)
        sc = np.asarray(lexical.scores, np.float64)
        ok = (rows >= 0) & (rows < m)
        rows, sc = rows[ok], sc[ok]
        rows = rows[np.argsort(-sc, kind="stable")]          # best first
        node, first = np.unique(nodes.msg_node[rows], return_index=True)
        out[node] = flags[rows[first]]                       # each node's best message
    return out


def dense_weight(q: NDArray[np.floating[Any]], settings: Settings) -> tuple[float, float]:
    """``(weight, share)``: the dense channel's weight for query vector ``q`` and the
    query's CJK share. With ``EMBED_CJK_DIMS > 0`` the model reads no CJK and a vector is
    ``[sqrt(1 − share) · model, sqrt(share) · hashed CJK]`` (:mod:`akasha_explorer.embed`),
    so the share is the squared norm of its last ``EMBED_CJK_DIMS`` values; the weight moves
    from ``FUSION_DENSE_WEIGHT`` to ``FUSION_DENSE_WEIGHT_CJK`` with it.

    Settings read: ``FUSION_DENSE_WEIGHT``, ``FUSION_DENSE_WEIGHT_CJK``, ``EMBED_CJK_DIMS``.

    >>> q = np.array([0.6, 0.0, 0.8], np.float32)        # 1 model dim + 2 CJK dims
    >>> w, share = dense_weight(q, Settings(EMBED_CJK_DIMS=2, FUSION_DENSE_WEIGHT_CJK=0.1))
    >>> round(share, 4), round(w, 4)                     # 0.5 * 0.36 + 0.1 * 0.64
    (0.64, 0.244)
    """
    cfg = settings
    dims = cfg.EMBED_CJK_DIMS
    share = float(np.dot(q[-dims:], q[-dims:])) if 0 < dims < q.shape[0] else 0.0
    share = min(1.0, max(0.0, share))
    return cfg.FUSION_DENSE_WEIGHT * (1.0 - share) + cfg.FUSION_DENSE_WEIGHT_CJK * share, share


def knowable(nodes: NodeTable, share: float, rows: NDArray[np.bool_], *,
             settings: Settings) -> F64:
    """How much of a node's dense score the model could know (**[ours]**
    ``DENSE_KNOWABLE``), for the nodes ``rows`` (1 elsewhere).

    With hashed CJK features (``EMBED_CJK_DIMS > 0``) a vector is ``[sqrt(1 − s) · model,
    sqrt(s) · hashed]`` with ``s`` its CJK share (:func:`dense_weight`): a query and a node
    are compared like with like only on the part both have, ``k = sqrt((1 − s_q)(1 − s_n))
    + sqrt(s_q s_n)`` — 1 for two English texts or two Chinese ones, 0 for an English
    question and a Chinese answer, whose cosine says nothing about relevance. The fusion
    then takes ``k · dense + (1 − k) · lexical`` as the node's dense part: what the model
    cannot know is not counted as "far in meaning", so an English question no longer
    favours every English turn over the Chinese one that answers it. Without hashed
    features (a model that reads both) ``k = 1``: no change.

    >>> from akasha_explorer.engine.toy import toy_nodes
    >>> nodes = toy_nodes([[1, 0, 0], [0, 0.6, 0.8], [0, 0, 1]])    # 1 model + 2 CJK dims
    >>> knowable(nodes, 0.0, np.ones(3, bool), settings=Settings(EMBED_CJK_DIMS=2)).round(3)
    array([1., 0., 0.])
    >>> knowable(nodes, 1.0, np.ones(3, bool), settings=Settings(EMBED_CJK_DIMS=2)).round(3)
    array([0., 1., 1.])
    """
    out = np.ones(nodes.n, np.float64)
    dims = settings.EMBED_CJK_DIMS
    if not settings.DENSE_KNOWABLE or not 0 < dims < nodes.dim:
        return out
    idx = np.flatnonzero(rows)
    tail = nodes.vec.rows(idx)[:, nodes.dim - dims:].astype(np.float64)
    s_n = np.clip(np.einsum("ij,ij->i", tail, tail), 0.0, 1.0)
    out[idx] = np.sqrt((1.0 - share) * (1.0 - s_n)) + np.sqrt(share * s_n)
    return np.clip(out, 0.0, 1.0)


def relevance(nodes: NodeTable, cos_msg: F64, visible: NDArray[np.bool_],
              lexical: LexicalHits, *, settings: Settings,
              windows: Sequence[tuple[float, float, str]] = (),
              q: NDArray[np.floating[Any]] | None = None,
              filler: NDArray[np.bool_] | None = None,
              asks: NDArray[np.bool_] | None = None) -> tuple[Relevance, F64]:
    """Fused relevance of every visible node (see the module docstring).

    Settings read: ``FUSION_POOL``, ``CONTEXT_NEIGHBOR``, ``CONTEXT_HOPS``, ``TIME_PRIOR``,
    ``TIME_FLOOR``, ``FILLER_FACTOR``, ``DENSE_KNOWABLE``, ``ANSWER_HANDOFF``,
    ``UNNAMED_FACTOR``, ``DENSE_TOP_K`` (the floor
    :attr:`Relevance.apart` reads) and those of :func:`dense_weight`.

    ``q`` (the query vector) sets the dense weight (:func:`dense_weight`; without it,
    ``FUSION_DENSE_WEIGHT``) and what the model can know (:func:`knowable`). ``windows`` are
    the time windows ``(start, end, phrase)`` the query named; with ``TIME_PRIOR`` > 0 a
    node whose time is inside one has its score multiplied by ``1 + TIME_PRIOR`` — and, when
    no lexical term matched (the query's only content is a time), ranks above every node
    outside the windows: its score (at least ``TIME_FLOOR``) is raised by the best score
    outside. ``filler`` marks nodes with nothing to remember (greetings, "good
    night": the write gates' ``noise``); their score is multiplied by ``FILLER_FACTOR`` (the
    caller passes None when the query is itself such a greeting). ``asks`` marks messages
    that ask something ("How's the finger today?"); a node whose matching message asks (its
    best BM25 message, or its last message when no term matched: :func:`asking`) is
    answered by the next turn, which takes ``ANSWER_HANDOFF`` times the node's base as its
    context (instead of ``CONTEXT_NEIGHBOR`` times it) — so the answer ranks beside or
    above the question that matched the query's words. When the query names an anchor (or
    an identifier: a version, a code — ``UNNAMED_IDENTIFIERS``) beside other words, a node
    whose hit messages hold those words but never name the anchor (under any alias) counts
    ``UNNAMED_FACTOR`` times its BM25 in ``lexical`` ("老周的生日" over 阿岚's birthday, "When
    did I release v0.3?" over "v0.3.1 released": the words are about something else).
    Returns the trace part (the pool nodes, best first, ties by row) and ``norm`` for
    every node of the mirror (0 for invisible nodes and nodes no channel reached).
    """
    cfg = settings
    n = nodes.n
    bm = _node_bm25(nodes, visible, lexical)
    held = bm
    named = (_node_holds(nodes, visible, lexical)
             if cfg.UNNAMED_FACTOR < 1.0 and _names_something(lexical) else None)
    if named is not None:   # holds the query's other words, never the anchor it names
        held = np.where((named & NAMES) == 0, bm * cfg.UNNAMED_FACTOR, bm)
    bm_top = float(held.max()) if n else 0.0
    lex = held / bm_top if bm_top > 0 else np.zeros(n)
    pool = top_k(cos_msg, cfg.FUSION_POOL, visible)
    if pool.size:
        top, zero = float(cos_msg[pool[0]]), float(cos_msg[pool[-1]])
    else:
        top = zero = 0.0
    if top > zero:
        dense = np.where(visible, np.clip((cos_msg - zero) / (top - zero), 0.0, 1.0), 0.0)
    else:  # one visible node, or all tied: each is the best there is
        dense = np.where(visible & (cos_msg >= top), 1.0, 0.0) if pool.size else np.zeros(n)
    weight, share = (cfg.FUSION_DENSE_WEIGHT, 0.0) if q is None else dense_weight(q, cfg)
    known = knowable(nodes, share, (lex > 0) | (dense > 0), settings=cfg)
    base = lex + weight * (known * dense + (1.0 - known) * lex)
    context = np.zeros(n)
    source = np.full(n, -1, np.int64)
    asking = (asking_nodes(nodes, lexical, asks)
              if asks is not None and cfg.ANSWER_HANDOFF > cfg.CONTEXT_NEIGHBOR else None)
    if cfg.CONTEXT_NEIGHBOR > 0 or asking is not None:
        prev, nxt = nodes.neighbors()
        for nb in (prev, nxt):      # prev first: on a tie the earlier turn gives context
            far = nb                # the turn `hop` places away in this direction
            for hop in range(1, cfg.CONTEXT_HOPS + 1):
                if hop > 1:
                    far = np.where(far >= 0, nb[far], -1)
                ok = (far >= 0) & visible
                val = np.zeros(n)
                val[ok] = base[far[ok]] * cfg.CONTEXT_NEIGHBOR ** hop
                if hop == 1 and nb is prev and asking is not None:
                    answered = ok.copy()
                    answered[ok] = asking[nb[ok]]
                    val[answered] = base[nb[answered]] * cfg.ANSWER_HANDOFF
                better = val > context
                context[better], source[better] = val[better], far[better]
        context[~visible] = 0.0
        source[~visible] = -1
    score = base + context
    in_time = np.zeros(n, bool)
    if cfg.TIME_PRIOR > 0 and windows:
        for a, b, _ in windows:
            in_time |= (nodes.ts >= a) & (nodes.ts < b)
        score = np.where(in_time, score * (1.0 + cfg.TIME_PRIOR), score)
        inside = in_time & visible
        if cfg.TIME_FLOOR > 0 and bm.max(initial=0.0) <= 0 and inside.any():  # only: a time
            # every turn of the window above every other: their own order among them,
            # each at least TIME_FLOOR, lifted by the best score outside
            outside = float(score[visible & ~in_time].max(initial=0.0))
            score = np.where(inside, np.maximum(score, cfg.TIME_FLOOR) + outside, score)
    if filler is not None and cfg.FILLER_FACTOR < 1.0:
        score = np.where(filler[:n], score * cfg.FILLER_FACTOR, score)
    best = float(score.max()) if n else 0.0
    norm = score / best if best > 0 else np.zeros(n)
    rows = np.flatnonzero(score > 0)
    rows = rows[np.lexsort((rows, -score[rows]))]
    uid = nodes.uid
    rel = Relevance(
        rows=rows.tolist(), uids=[uid[i] for i in rows.tolist()], bm25=bm[rows].tolist(),
        lexical=lex[rows].tolist(), cos_msg=cos_msg[rows].tolist(), dense=dense[rows].tolist(),
        base=base[rows].tolist(), context=context[rows].tolist(),
        context_from=[uid[j] if j >= 0 else None for j in source[rows].tolist()],
        score=score[rows].tolist(), norm=norm[rows].tolist(), in_time=in_time[rows].tolist(),
        dense_known=known[rows].tolist(),
        bm25_top=bm_top, dense_top=top, dense_zero=zero, dense_weight=weight, cjk_share=share,
        windows=[[float(a), float(b)] for a, b, _ in windows],
        window_phrases=[str(p) for _, _, p in windows],
        lexical_groups=[dict(g) for g in lexical.groups],
        apart=_apart(nodes, visible, lexical, rows[:cfg.DENSE_TOP_K]))
    return rel, norm


def _node_holds(nodes: NodeTable, visible: NDArray[np.bool_], lexical: LexicalHits
                ) -> NDArray[np.int64] | None:
    """Per node, the :data:`NAMES` / :data:`SAYS` bits of its hit messages OR-ed (0: no hit
    or not visible); None when the query named no anchor beside other words."""
    if not lexical.holds:
        return None
    rows = np.asarray(lexical.msg_rows, np.int64)
    holds = np.asarray(lexical.holds, np.int64)
    ok = (rows >= 0) & (rows < nodes.m)
    rows, holds = rows[ok], holds[ok]
    node = nodes.msg_node[rows]
    ok = visible[node]
    mask = np.zeros(nodes.n, np.int64)
    np.bitwise_or.at(mask, node[ok], holds[ok])
    return mask


def _names_something(lexical: LexicalHits) -> bool:
    """Whether the query named an anchor by an alias group or an identifier (what
    ``UNNAMED_FACTOR`` reads; an anchor known by one form only is not enough)."""
    return bool(lexical.named) or any(g.get("kind") == "anchor" for g in lexical.groups)


def _apart(nodes: NodeTable, visible: NDArray[np.bool_], lexical: LexicalHits,
           floor: NDArray[np.int64]) -> list[str]:
    """The anchors the query named (their aliases as written; an anchor known by one form,
    Grace, too) when no turn of the floor mentions one of them together with another of
    the query's words, though some message holds those words — "老周的生日" over a memory
    that knows 老周 and 阿岚's birthday, never 老周's; "Where does Grace live?" over one
    that never said. Empty otherwise (no anchor named, no other word anywhere, or a turn
    that holds both)."""
    mask = _node_holds(nodes, visible, lexical)
    if mask is None or not (mask & SAYS).any():
        return []
    held = mask[floor]
    if ((held & (NAMES | MENTIONS) != 0) & (held & SAYS != 0)).any():   # a turn holds both
        return []
    return list(dict.fromkeys([*(str(g["source"]) for g in lexical.groups
                                 if g.get("kind") == "anchor"), *lexical.mentioned]))


def _label(lexical: float, strong_dense: bool, dense: float, base: float,
           context: float) -> str:
    parts = []
    if lexical > 0:
        parts.append("FTS")
    if strong_dense:
        parts.append("Dense")
    elif dense > 0 and lexical <= 0:
        parts.append("Dense(FB)")
    if context > base or not parts:
        parts.append("Context")
    return "+".join(parts)


def floor_items(rel: Relevance, cos_node: F64, *, settings: Settings) -> ItemList:
    """The floor: the top ``DENSE_TOP_K`` nodes by fused relevance (score = ``score``).

    Settings read: ``DENSE_TOP_K``, ``DENSE_SEED_MIN``.

    The source names what reached the node, in V1's words: ``FTS`` (a BM25 hit), ``Dense``
    (``cos_node > DENSE_SEED_MIN``, a relevant dense match), ``Dense(FB)`` (only a weak
    dense match: V1's fallback), ``Context`` when its session neighbours gave it more than
    its own match (or all it has), joined with ``+``.
    """
    k = min(settings.DENSE_TOP_K, len(rel.rows))
    rows = rel.rows[:k]
    return ItemList(uids=rel.uids[:k], rows=list(rows), scores=rel.score[:k],
                    sources=[_label(rel.lexical[i], bool(cos_node[r] > settings.DENSE_SEED_MIN),
                                    rel.dense[i], rel.base[i], rel.context[i])
                             for i, r in enumerate(rows)],
                    direct=rel.norm[:k])


def hybrid_seeds(nodes: NodeTable, edges: EdgeStore, cos_node: F64, cos_msg: F64,
                 visible: NDArray[np.bool_], lexical: LexicalHits, rel: Relevance,
                 floor: ItemList, *, settings: Settings) -> SeedTable:
    """Stage 1 seeds under ``HYBRID``: the floor nodes in floor order, energy
    ``SEED_ENERGY · norm``, then V1's BlackHole seeds (``σ > BLACKHOLE_SIGMA`` and
    ``cos_node > BLACKHOLE_COS``, top ``BLACKHOLE_MAX``). ``relevant`` is True when some
    seed has a lexical hit, a ``cos_node`` above ``DENSE_SEED_MIN``, or is a BlackHole;
    ``fallback`` is its negation (the floor is then only the best of weak matches).

    Settings read: ``DENSE_SEED_MIN``, ``SEED_ENERGY``.
    """
    cfg = settings
    rows = list(floor.rows)
    source = list(floor.sources)
    energy = [cfg.SEED_ENERGY * float(x) for x in floor.direct]
    hit = lexical_node_ranks(nodes, visible, lexical, len(lexical.msg_rows))
    relevant = any(hit.get(r) is not None or cos_node[r] > cfg.DENSE_SEED_MIN for r in rows)
    for node in blackhole_rows(nodes, cos_node, visible, rows, settings=cfg):
        rows.append(node)
        source.append("BlackHole")
        energy.append(cfg.SEED_ENERGY)
        relevant = True
    return seed_table(nodes, edges, cos_node, cos_msg, lexical, rows, source, energy,
                      list(energy), hit, settings=cfg, fallback=not relevant, relevant=relevant)
