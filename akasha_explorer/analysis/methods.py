"""One query through every recall method, over the same nodes (SPEC §10): the rankings the
benchmark scores, the labelled-set evaluation behind ``akasha eval``, and the side-by-side
table the CompareMethods panel draws — functions of a :class:`~akasha_explorer.store.Store`.

Methods (:data:`RANK_METHODS`):

- ``context`` — the order an agent receives (:meth:`RecallTrace.context`): the first block,
  then the ripple items, then any other activated node;
- ``akasha`` — Akasha's candidates by final score (``trace.ranking()``);
- ``akasha-activation`` — the (up to) eight activated items;
- ``dense`` — ``cos_msg`` over the store's own vectors;
- ``bm25`` — BM25 over the store's lexical index, every query term;
- ``rrf`` — reciprocal-rank fusion of dense and bm25, k = 60;
- ``ppr`` — personalized PageRank from Akasha's own seeds.

Every ranking :func:`rank_methods` returns is completed by the dense order (the tail), so
recall@k is defined for any k (``akasha eval`` scores those). The side-by-side table
(:func:`compare_methods`) shows only what a method itself ranked — its *head*: a turn BM25
did not score (none of the query's words), a turn the agent is not sent, has no rank there
(:data:`UNRANKED` says what the gap means) — and says of each row what the agent receives
(the ``context`` column, :func:`sent_order`) and why the methods disagree, each with its
own evidence. Nothing here writes: every recall is a dry run, none is logged.
"""

from __future__ import annotations

import math
import time
from collections import defaultdict
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from ..engine.bm25 import bm25_rank, select_terms
from ..engine.trace import RecallTrace
from ..errors import InvalidInput
from ..text.tokenize import TermRules, is_cjk, terms

if TYPE_CHECKING:
    from ..config import Settings
    from ..store.store import Store

__all__ = ["EVAL_METHODS", "RANK_METHODS", "RRF_K", "UNRANKED", "check_methods",
           "compare_methods", "context_order", "evaluate", "query_vectors", "rank_methods", "rrf",
           "score_ranking", "sent_order", "with_tail"]

RANK_METHODS = ("context", "akasha", "akasha-activation", "dense", "bm25", "rrf", "ppr")
"""Every ranking :func:`rank_methods` knows."""

EVAL_METHODS = ("context", "akasha", "dense", "bm25", "rrf", "ppr")
"""What ``akasha eval`` and the panels compare by default."""

UNRANKED = {
    "context": "not sent",
    "akasha": "not a candidate",
    "akasha-activation": "not activated",
    "bm25": "no query word",
    "ppr": "not reached",
}
"""What a gap in a method's column means: the method did not rank the turn at all (dense
and rrf rank every visible turn). The side-by-side table shows these words, never the
dense order a ranking is padded with for scoring."""

RRF_K = 60
"""The reciprocal-rank fusion constant (Cormack et al. 2009): a hit at rank r (from 1)
scores ``1 / (RRF_K + r)`` — in :func:`rrf` and in the search panel's fusion."""


def context_order(trace: RecallTrace) -> list[str]:
    """Node uids in the order :meth:`RecallTrace.context` hands them to an agent: the first
    block, then the ripple items, then the other activated nodes (no repeats).

    >>> context_order(RecallTrace.empty())
    []
    """
    return list(dict.fromkeys(trace.first_block().uids + trace.ripple.uids
                              + trace.activation.uids))


def sent_order(trace: RecallTrace) -> list[str]:
    """Node uids in the order the agent's context block names them (``[1]``, ``[2]``, …):
    :func:`context_order`, or none at all when nothing was activated — the block then says
    there is no relevant memory (:func:`~akasha_explorer.brief.context.build_context`).

    >>> sent_order(RecallTrace.empty())
    []
    """
    return context_order(trace) if trace.activation.uids else []


def with_tail(head: Sequence[str], tail: Sequence[str]) -> list[str]:
    """``head`` then every item of ``tail`` not in it.

    >>> with_tail(["b"], ["a", "b", "c"])
    ['b', 'a', 'c']
    """
    seen = dict.fromkeys(head)
    return list(seen) + [u for u in tail if u not in seen]


def rrf(*rankings: Sequence[str], k: int = RRF_K) -> list[str]:
    """Reciprocal-rank fusion: ``Σ 1 / (k + rank)`` over ``rankings``, best first.

    >>> rrf(["a", "b"], ["b", "c"])
    ['b', 'a', 'c']
    """
    score: dict[str, float] = defaultdict(float)
    for ranking in rankings:
        for i, u in enumerate(ranking):
            score[u] += 1.0 / (k + i + 1)
    return sorted(score, key=lambda u: (-score[u], u))


def score_ranking(ranking: Sequence[str], gold: set[str] | frozenset[str],
                  ks: Sequence[int] = (5, 10, 25, 50)) -> dict[str, float]:
    """recall@k, hit@k (each k of ``ks``), MRR and nDCG@10 of one ranking (binary gains).

    >>> r = score_ranking(["a", "b", "c"], {"b", "z"})
    >>> r["recall@5"], r["hit@5"], r["mrr"], round(r["ndcg@10"], 4)
    (0.5, 1.0, 0.5, 0.3869)
    """
    out: dict[str, float] = {}
    pos = {u: i for i, u in enumerate(ranking)}
    ranks = sorted(pos[g] for g in gold if g in pos)
    for k in ks:
        found = sum(1 for r in ranks if r < k)
        out[f"recall@{k}"] = found / len(gold)
        out[f"hit@{k}"] = 1.0 if found else 0.0
    out["mrr"] = 1.0 / (ranks[0] + 1) if ranks else 0.0
    dcg = sum(1.0 / math.log2(r + 2) for r in ranks if r < 10)
    idcg = sum(1.0 / math.log2(i + 2) for i in range(min(10, len(gold))))
    out["ndcg@10"] = dcg / idcg
    return out


# -- rankings ------------------------------------------------------------------------------------
def _visible(store: Store, now: float) -> NDArray[np.bool_]:
    n = store.mirror.nodes
    return np.asarray(n.alive[: n.n] & (n.ts[: n.n] <= now))


def dense_order(store: Store, q: NDArray[np.float32], now: float) -> list[str]:
    """Node uids by ``cos_msg`` (the best message cosine), nodes said after ``now`` left out."""
    n = store.mirror.nodes
    cos = n.cos_msg_max(n.msg_vec @ q)
    cos = np.where(_visible(store, now), cos, -np.inf)
    order = np.lexsort((np.arange(n.n), -cos))
    vis = _visible(store, now)
    return [n.uid[i] for i in order if vis[i]]


def bm25_order(store: Store, text: str, now: float, settings: Settings) -> list[str]:
    """The store's BM25 channel alone: every query term, every hit, as node uids."""
    s, n = settings, store.mirror.nodes
    q = terms(text, rules=TermRules.of(s))
    postings = store.index.postings(s)
    alive = n.msg_alive & (n.msg_ts <= now)
    sel = select_terms(q, postings, n.msg_ts, alive, now=now, min_idf=-1e9,
                       unseen_idf=s.FTS_UNSEEN_IDF, max_terms=10_000, min_len=1)
    hits = bm25_rank(sel, postings, n.msg_ts, alive, now=now, k1=s.BM25_K1,
                     b=s.BM25_B, top_k=n.m)
    seen: dict[str, None] = {}
    for r in hits.msg_rows:
        seen.setdefault(n.uid[int(n.msg_node[r])], None)
    return list(seen)


def rank_methods(store: Store, text: str, q: NDArray[np.float32], methods: Sequence[str], *,
                 now: float, settings: Settings, keep: dict[str, Any] | None = None
                 ) -> dict[str, tuple[list[str], float]]:
    """Each method's ranking of every visible node for ``text`` (query vector ``q``) at
    ``now``, with its milliseconds: ``{method: (uids best first, ms)}``. ``keep`` (a dict)
    receives the Akasha and PPR traces (``"trace"``, ``"ppr"``), the dense and bm25 heads
    (``"dense"``, ``"bm25"``) and ``"heads"``: per method what it ranked itself, before the
    dense tail (the context head is :func:`sent_order`, what the agent is sent)."""
    from ..recalls import method_input, run_method
    check_methods(methods)
    cfg = settings
    out: dict[str, tuple[list[str], float]] = {}
    t0 = time.perf_counter()
    dense = dense_order(store, q, now)
    t_dense = (time.perf_counter() - t0) * 1000
    out["dense"] = (dense, t_dense)
    heads: dict[str, list[str]] = {"dense": dense}
    if keep is not None:
        keep["dense"] = dense
        keep["heads"] = heads
    if "bm25" in methods or "rrf" in methods:
        t0 = time.perf_counter()
        bm = bm25_order(store, text, now, cfg)
        t_bm = (time.perf_counter() - t0) * 1000
        out["bm25"] = (with_tail(bm, dense), t_bm)
        t0 = time.perf_counter()
        fused = rrf(dense, bm)
        out["rrf"] = (with_tail(fused, dense),
                      t_dense + t_bm + (time.perf_counter() - t0) * 1000)
        heads.update(bm25=bm, rrf=fused)
        if keep is not None:
            keep["bm25"] = bm
    if {"context", "akasha", "akasha-activation"} & set(methods):
        t0 = time.perf_counter()
        lex = store.index.lexical(text, now=now, settings=cfg)
        trace = run_method(store, "akasha", q, lex,
                           method_input(store, "akasha", text, now=now, settings=cfg))
        ms = (time.perf_counter() - t0) * 1000
        out["context"] = (with_tail(context_order(trace), dense), ms)
        out["akasha"] = (with_tail(trace.ranking(), dense), ms)
        out["akasha-activation"] = (with_tail(trace.activation.uids, dense), ms)
        heads.update({"context": sent_order(trace), "akasha": trace.ranking(),
                      "akasha-activation": list(trace.activation.uids)})
        if keep is not None:
            keep["trace"] = trace
    if "ppr" in methods:
        t0 = time.perf_counter()
        lex = store.index.lexical(text, now=now, settings=cfg)
        ptrace = run_method(store, "ppr", q, lex,
                            method_input(store, "ppr", text, now=now, settings=cfg))
        out["ppr"] = (with_tail(ptrace.ranking(), dense), (time.perf_counter() - t0) * 1000)
        heads["ppr"] = ptrace.ranking()
        if keep is not None:
            keep["ppr"] = ptrace
    return {m: out[m] for m in methods if m in out}


def check_methods(methods: Sequence[str]) -> None:
    """Refuse a method name :func:`rank_methods` does not know, naming the known ones.

    >>> check_methods(["dense", "bm25"])
    >>> check_methods(["dense", "bogus"])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    akasha_explorer.errors.InvalidInput: unknown method(s) bogus; known: context, akasha, ...
    """
    unknown = sorted(set(methods) - set(RANK_METHODS))
    if unknown:
        raise InvalidInput(f"unknown method(s) {', '.join(unknown)}; "
                           f"known: {', '.join(RANK_METHODS)}")


def _methods(methods: Sequence[str] | None) -> list[str]:
    got = list(EVAL_METHODS if methods is None else methods)
    if not got:
        raise InvalidInput("name at least one method")
    check_methods(got)
    return list(dict.fromkeys(got))


# -- the labelled set ----------------------------------------------------------------------------
_QVEC: dict[tuple[str, str], NDArray[np.float32]] = {}
_QVEC_MAX = 4096


def query_vectors(store: Store, texts: Sequence[str]) -> list[NDArray[np.float32]]:
    """The query vectors of ``texts``: the ones not seen before embedded in one batch, then
    kept per model (a labelled set is scored again and again while a person tunes)."""
    emb = store.embedder
    todo = list(dict.fromkeys(t for t in texts if (emb.name, t) not in _QVEC))
    if todo:
        if len(_QVEC) + len(todo) > _QVEC_MAX:
            _QVEC.clear()
        for t, v in zip(todo, emb.encode(todo), strict=True):
            _QVEC[(emb.name, t)] = v
    return [_QVEC[(emb.name, t)] for t in texts]


def evaluate(store: Store, labelled: Sequence[dict[str, Any]], *, now: float,
             settings: Settings, methods: Sequence[str] | None = None,
             k: int = 10) -> dict[str, Any]:
    """Score every method on ``labelled`` queries (``{"query", "relevant": [uids],
    "not_relevant": [uids]}``, queries with no relevant node left out of the means): per
    method the mean ``recall@k``, ``hit@k``, ``mrr`` and ``false@k`` (the share of queries
    with a node labelled not relevant in the top k), and per query the rank of each
    relevant node; with queries in both Chinese and other scripts, the same means per
    language (``by_language``: ``"zh"`` for a query with CJK characters, else ``"en"``).
    Dry: nothing is logged or written."""
    if int(k) < 1:
        raise InvalidInput(f"k={k!r}: give a cut-off of at least 1")
    k = int(k)
    ms = _methods(methods)
    per_query = []
    scored = 0
    vectors = query_vectors(store, [item["query"] for item in labelled])
    for item, q in zip(labelled, vectors, strict=True):
        gold = frozenset(item.get("relevant", ()))
        bad = frozenset(item.get("not_relevant", ()))
        ranked = rank_methods(store, item["query"], q, ms, now=now, settings=settings)
        row: dict[str, Any] = {"query": item["query"], "relevant": sorted(gold),
                               "not_relevant": sorted(bad), "ranks": {}}
        for m, (ranking, _ms) in ranked.items():
            pos = {u: i + 1 for i, u in enumerate(ranking)}
            row["ranks"][m] = {u: pos.get(u) for u in sorted(gold | bad)}
        scored += bool(gold)
        per_query.append(row)
    out = _means(per_query, ms, k)
    langs: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in per_query:
        langs["zh" if is_cjk(row["query"]) else "en"].append(row)
    by_language = ({lang: {"queries": len(rows), "methods": _means(rows, ms, k)}
                    for lang, rows in sorted(langs.items())} if len(langs) > 1 else {})
    return {"k": k, "now": now, "queries": len(per_query), "scored": scored,
            "profile": settings.profile_name()[0], "methods": out, "per_query": per_query,
            "by_language": by_language}


def _means(rows: Sequence[dict[str, Any]], ms: Sequence[str], k: int
           ) -> dict[str, dict[str, float]]:
    """Per method: mean recall@k, hit@k and MRR over the rows with a relevant node, and
    false@k over the rows with a node labelled not relevant (NaN: no such row)."""
    out = {}
    nan = float("nan")
    for m in ms:
        rec, hit, mrr, scored, bad, n_bad = 0.0, 0.0, 0.0, 0, 0.0, 0
        for r in rows:
            ranks = r["ranks"][m]
            if r["relevant"]:
                got = [ranks[u] for u in r["relevant"] if ranks[u] is not None]
                rec += sum(1 for x in got if x <= k) / len(r["relevant"])
                hit += float(any(x <= k for x in got))
                mrr += 1.0 / min(got) if got else 0.0
                scored += 1
            if r["not_relevant"]:
                n_bad += 1
                bad += float(any((ranks[u] or k + 1) <= k for u in r["not_relevant"]))
        out[m] = {f"recall@{k}": rec / scored if scored else nan,
                  f"hit@{k}": hit / scored if scored else nan,
                  "mrr": mrr / scored if scored else nan,
                  f"false@{k}": bad / n_bad if n_bad else nan}
    return out


# -- side by side --------------------------------------------------------------------------------
def _matched_words(store: Store, text: str, uids: Sequence[str], settings: Settings
                   ) -> dict[str, list[str]]:
    """Per node, the query's lexical terms its messages hold (the store's index under
    ``settings``' term rules)."""
    n = store.mirror.nodes
    postings = store.index.postings(settings)
    want = {n.index[u]: u for u in uids if u in n.index}
    out: dict[str, list[str]] = {u: [] for u in uids}
    for t in dict.fromkeys(terms(text, rules=TermRules.of(settings))):
        if t not in postings.vocab:
            continue
        rows = postings.postings(t)[0]
        for r in {int(n.msg_node[int(j)]) for j in rows}:
            if r in want:
                out[want[r]].append(t)
    return out


def _path(trace: RecallTrace, uid: str) -> str:
    ex = trace.explain(uid)
    if not ex.get("candidate"):
        return ""
    src, path = ex.get("source") or "", ex.get("path") or ""
    via = [x for x in (ex.get("bridge"), ex.get("seed")) if x]
    if path == "direct" or not via:
        return f"{src} · {path}" if path else str(src)
    return f"{src} · {path} from {' ← '.join(str(v) for v in via)}"


def compare_methods(store: Store, text: str, *, now: float, settings: Settings,
                    methods: Sequence[str] | None = None, k: int = 10,
                    include: Sequence[str] = ()) -> pd.DataFrame:
    """One query through every method: one row per node some method itself puts in its
    top ``k`` (and per node of ``include`` — e.g. the ones labelled for the query —
    wherever it is), with

    - ``text``: the node as the agent's context block shows it — a message flagged
      ``injection`` (or failing its sha256 check) as ``[withheld: <reason>]``, never its
      text (:func:`~akasha_explorer.brief.context.item_line`) — and ``withheld``, the
      reasons ('' for none);
    - ``rank_<method>`` (1-based): its rank in what the method ranked itself — None where
      the method did not rank it at all (:data:`UNRANKED`: BM25 scores only turns holding
      a query word; ``context`` is what the agent is sent, :func:`sent_order`), never the
      dense order :func:`rank_methods` pads a ranking with for scoring;
    - the terms behind the ranks — Akasha's ``source`` and graph ``path`` (seed, bridge),
      the ``words`` of the query its messages hold, ``cos_msg``, ``bm25_rank``;
    - ``in_top`` (how many methods have it in their top ``k``) and ``why``: for every
      row, each method's own evidence for where it put the node — its rank and term (the
      words, the cosine against the dense top ``k``'s lowest, Akasha's source and path,
      and for a turn the agent is not sent, where it fell out of the recall:
      :meth:`Store.why_not <akasha_explorer.store.store.Store.why_not>`), led by which
      methods have it in their top ``k`` and which do not.

    Best consensus first."""
    from ..brief.api import messages_of
    from ..brief.context import item_line
    if not isinstance(text, str) or not text.strip():
        raise InvalidInput("type a query first")
    if int(k) < 1:
        raise InvalidInput(f"k={k!r}: give a cut-off of at least 1")
    k = int(k)
    ms = _methods(methods)
    q = store.embeddings.query(text)
    keep: dict[str, Any] = {}
    ranked = rank_methods(store, text, q, ms, now=now, settings=settings, keep=keep)
    full = {m: {u: i + 1 for i, u in enumerate(r)} for m, (r, _t) in ranked.items()}
    heads: dict[str, list[str]] = keep["heads"]
    pos = {m: {u: i + 1 for i, u in enumerate(heads[m])} for m in ms}
    top = list(dict.fromkeys([u for m in ms for u in heads[m][:k]]
                             + [u for u in include if u in full[ms[0]]]))
    n = store.mirror.nodes
    cos = n.cos_msg_max(n.msg_vec @ q)
    dense = keep["dense"]
    ev = _Evidence(store, keep.get("trace"), k=k, words=_matched_words(store, text, top, settings),
                   query_terms=list(dict.fromkeys(terms(text, rules=TermRules.of(settings)))),
                   cos={u: float(cos[n.index[u]]) for u in top if u in n.index},
                   kth_cos=float(cos[n.index[dense[min(k, len(dense)) - 1]]]) if dense else None,
                   dense=full["dense"] if "dense" in full else {u: i + 1 for i, u in
                                                                  enumerate(dense)},
                   bm25={u: i + 1 for i, u in enumerate(keep.get("bm25", []))})
    msgs = messages_of(store, top)
    rows = []
    for u in top:
        line, withheld = item_line(msgs.get(u, ()))
        row: dict[str, Any] = {"uid": u, "text": line, "withheld": "; ".join(withheld)}
        for m in ms:
            row[f"rank_{m}"] = pos[m].get(u)
        row["source"], row["path"] = ev.source(u), ev.path(u)
        row["words"] = " ".join(ev.words.get(u, []))
        row["cos_msg"] = round(ev.cos[u], 4) if u in ev.cos else None
        row["bm25_rank"] = ev.bm25.get(u)
        inside = [m for m in ms if (pos[m].get(u) or k + 1) <= k]
        outside = [m for m in ms if m not in inside]
        row["in_top"] = len(inside)
        lead = (f"top {k} in {', '.join(inside) or 'none'}, not {', '.join(outside)}"
                if outside else f"top {k} in all {len(inside)}")
        row["why"] = lead + ": " + "; ".join(ev.say(m, u, pos[m].get(u)) for m in ms)
        row["_mean"] = float(np.mean([full[m].get(u, len(dense) + 1) for m in ms]))
        rows.append(row)
    frame = pd.DataFrame(rows)
    if frame.empty:
        return frame
    frame = frame.sort_values(["in_top", "_mean", "uid"], ascending=[False, True, True])
    return frame.drop(columns=["_mean"]).reset_index(drop=True)


class _Evidence:
    """Each method's own evidence for where it put a node (one phrase per method), for the
    ``why`` of :func:`compare_methods`."""

    def __init__(self, store: Store, trace: RecallTrace | None, *, k: int,
                 words: dict[str, list[str]], query_terms: list[str], cos: dict[str, float],
                 kth_cos: float | None, dense: dict[str, int], bm25: dict[str, int]) -> None:
        self.store, self.trace, self.k = store, trace, k
        self.words, self.query_terms, self.cos, self.kth_cos = words, query_terms, cos, kth_cos
        self.dense, self.bm25 = dense, bm25

    def source(self, u: str) -> str:
        if self.trace is None:
            return ""
        ex = self.trace.explain(u)
        return str(ex.get("source") or ("dense item" if ex.get("in_dense") else ""))

    def path(self, u: str) -> str:
        return _path(self.trace, u) if self.trace is not None else ""

    def say(self, m: str, u: str, r: int | None) -> str:
        """The phrase of method ``m`` for node ``u`` at rank ``r`` (None: not ranked)."""
        at = f"#{r}" if r is not None else ""
        if m == "dense":
            c = self.cos.get(u, float("nan"))
            below = (f", under the {self.kth_cos:.2f} of dense #{self.k}"
                     if r is not None and r > self.k and self.kth_cos is not None else "")
            return f"dense {at} (cos_msg {c:.2f}{below})"
        if m == "bm25":
            if r is None:
                return ("not scored by BM25: none of the query's words ("
                        + ", ".join(self.query_terms[:8]) + ")")
            return f"bm25 {at} (holds {' '.join(self.words.get(u, [])) or 'a query word'})"
        if m == "rrf":
            d, b = self.dense.get(u), self.bm25.get(u)
            return (f"rrf {at} (dense #{d} + bm25 #{b})" if b is not None
                    else f"rrf {at} (dense #{d} alone, no BM25 score)")
        if m == "ppr":
            return f"ppr {at}" if r is not None else "ppr: not reached from Akasha's seeds"
        if m == "akasha-activation":
            return f"activated {at}" if r is not None else "not activated"
        if self.trace is None:
            return f"{m} {at}"
        if m == "context":
            if r is not None:
                return f"sent to the agent as [{r}]"
            if not self.trace.activation.uids:
                return ("not sent: nothing was activated, the agent reads 'no relevant "
                        "memory'")
            return "not sent: " + str(self.store.why_not(self.trace, u)["reason"])
        # akasha
        if r is not None:
            return f"akasha {at} ({self.path(u) or self.source(u)})"
        return "akasha: not a candidate (" + str(self.trace.explain(u).get("reason")) + ")"
