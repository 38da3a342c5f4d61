"""Recall quality: Akasha beside the baselines users would pick instead (SPEC §10), on any
corpus of conversations with questions whose evidence turns are known.

:mod:`.locomo` (LoCoMo) and :mod:`.madial` (MADial-Bench-zh) turn their data into
:class:`Corpus` objects; :func:`run_recall` does the rest, the same way for both. For each
corpus: a fresh store built with the settings of a profile and ingested **with replay** (the
graph grows as a live agent grows it); then every question asked as a dry-run recall one
day after the last message. Every method ranks the same nodes built from the same text:

- ``context`` — the order an agent receives (:meth:`RecallTrace.context`): the first block
  (the floor: V1's dense items, or the default profile's fused floor), then the ripple
  items, then any other activated node; reported first;
- ``akasha`` — Akasha's candidates by final score (``trace.ranking()``);
- ``akasha-activation`` — the (up to) eight activated items (what a commit writes back);
- ``dense`` — ``cos_msg`` over the store's own vectors;
- ``bm25`` — BM25 (Lucene) over the store's lexical index, every query term (the store's
  BM25 channel alone; its term rules are the profile's);
- ``rrf`` — reciprocal-rank fusion of dense and bm25, k = 60 (the memoirs approach);
- ``ppr`` — personalized PageRank from Akasha's own seeds (``Memory.recall(method="ppr")``).

Every ranking is completed by the dense order (the tail), so recall@25/50 are defined.
Ablations change one setting at query time on the same store (the graph it grew under the
full profile stays) — except the two that need a store of their own: one ingested without
replay and one built with ``USE_SALIENCE`` off. Constants are never fitted to questions.
"""

from __future__ import annotations

import logging
import math
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray
from tqdm.auto import tqdm

from ..analysis.ppr import ppr_recall
from ..config import Settings
from ..embed import Embedder, make_embedder
from ..engine.bm25 import bm25_rank, select_terms
from ..engine.recall import recall as engine_recall
from ..engine.trace import RecallTrace
from ..errors import InvalidInput
from ..ingest.importers import Imported
from ..memory import Memory
from ..text.tokenize import TermRules, terms

__all__ = ["KS", "METHODS", "CachedEmbedder", "Corpus", "Question", "ablations_for",
           "context_order", "run_recall", "score_ranking"]

log = logging.getLogger(__name__)

METHODS = ("context", "akasha", "akasha-activation", "dense", "bm25", "rrf", "ppr")
KS = (5, 10, 25, 50)
RRF_K = 60


@dataclass(frozen=True)
class Question:
    """One question: its text, the node uids of its evidence, a category label."""

    text: str
    gold: frozenset[str]
    category: str = "all"


@dataclass
class Corpus:
    """One store's worth of conversations and the questions asked of it.

    ``questions`` turns the map from the source's own message ids (``ext_id``) to node uids
    into the questions, and returns them with a dict of counts (dropped evidence…).
    """

    name: str
    imported: Imported
    questions: Callable[[dict[str, str]], tuple[list[Question], dict[str, int]]]


class CachedEmbedder:
    """An :class:`Embedder` that remembers every text it embedded (one model pass per text
    across the several stores an ablation builds)."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.name = inner.name
        self.dim = inner.dim
        self._cache: dict[str, NDArray[np.float32]] = {}

    def encode(self, texts: Sequence[str], *, batch_size: int = 64,
               progress: bool = False) -> NDArray[np.float32]:
        """Vectors of ``texts``; only texts not seen before reach the model."""
        todo = list(dict.fromkeys(t for t in texts if t not in self._cache))
        if todo:
            vecs = self.inner.encode(todo, batch_size=batch_size, progress=progress)
            self._cache.update(zip(todo, vecs, strict=True))
        if not texts:
            return np.zeros((0, self.dim), np.float32)
        return np.stack([self._cache[t] for t in texts]).astype(np.float32)


def score_ranking(ranking: Sequence[str], gold: set[str] | frozenset[str]) -> dict[str, float]:
    """recall@k, hit@k (k in 5/10/25/50), MRR and nDCG@10 of one ranking (binary gains).

    >>> r = score_ranking(["a", "b", "c"], {"b", "z"})
    >>> r["recall@5"], r["hit@5"], r["mrr"], round(r["ndcg@10"], 4)
    (0.5, 1.0, 0.5, 0.3869)
    """
    out: dict[str, float] = {}
    pos = {u: i for i, u in enumerate(ranking)}
    ranks = sorted(pos[g] for g in gold if g in pos)
    for k in KS:
        found = sum(1 for r in ranks if r < k)
        out[f"recall@{k}"] = found / len(gold)
        out[f"hit@{k}"] = 1.0 if found else 0.0
    out["mrr"] = 1.0 / (ranks[0] + 1) if ranks else 0.0
    dcg = sum(1.0 / math.log2(r + 2) for r in ranks if r < 10)
    idcg = sum(1.0 / math.log2(i + 2) for i in range(min(10, len(gold))))
    out["ndcg@10"] = dcg / idcg
    return out


def context_order(trace: RecallTrace) -> list[str]:
    """Node uids in the order :meth:`RecallTrace.context` hands them to an agent: the first
    block, then the ripple items, then the other activated nodes (no repeats).

    >>> context_order(RecallTrace.empty())
    []
    """
    return list(dict.fromkeys(trace.first_block().uids + trace.ripple.uids
                              + trace.activation.uids))


def ablations_for(profile: str) -> dict[str, dict[str, Any]]:
    """The ablation rows of a profile: name -> settings changed at query time.

    For v2, each **[ours]** departure from v1 switched back on its own (leave one out);
    for v1, V1's stages added one at a time.
    """
    if profile == "v1":
        return {
            "dense-seeds-only": dict(FTS_TOP_K=0, BLACKHOLE_MAX=0, RWR_STEPS=0, GRAPH_LIMIT=0),
            "+fts-seeds": dict(BLACKHOLE_MAX=0, RWR_STEPS=0, GRAPH_LIMIT=0),
            "+rwr": dict(GRAPH_LIMIT=0),
            "+graph-expand (full)": {},
            "full, RELEVANCE_FLOOR on": dict(RELEVANCE_FLOOR=True),
        }
    return {
        "full": {},
        "- stemming (FTS_STEM='')": dict(FTS_STEM=""),
        "- CJK words (V1 term rules)": dict(FTS_CJK_MIN_LEN=3, FTS_CJK_JOIN=True,
                                            FTS_CJK_SUBWORDS=False),
        "- CJK sub-words": dict(FTS_CJK_SUBWORDS=False),
        "- CJK stop words": dict(FTS_CJK_STOPWORDS=False),
        "- skip unseen terms": dict(FTS_SKIP_UNSEEN=False),
        "- IDF floor off in small stores": dict(FTS_MIN_IDF_DOCS=0),
        "- CJK dense weight (FUSION_DENSE_WEIGHT_CJK=0.5)": dict(FUSION_DENSE_WEIGHT_CJK=0.5),
        "- neighbour context": dict(CONTEXT_NEIGHBOR=0.0),
        "- graph settle (V1 score_graph)": dict(GRAPH_SETTLE=False),
        "- graph expand": dict(GRAPH_LIMIT=0),
        "- RWR": dict(RWR_STEPS=0),
        "- hybrid (V1 seeds, dense floor)": dict(HYBRID=False),
        "RELEVANCE_FLOOR on": dict(RELEVANCE_FLOOR=True),
        "- time prior (TIME_PRIOR=0)": dict(TIME_PRIOR=0.0),
    }


STORE_ABLATIONS = ("full, no replay write-back", "full, USE_SALIENCE off")
"""Ablations that need a store of their own."""


@dataclass
class _Built:
    mem: Memory
    ext_to_uid: dict[str, str]
    now: float
    seconds: dict[str, float] = field(default_factory=dict)


def _build(corpus: Corpus, folder: Path, settings: Settings, *, replay: bool,
           embedder: Embedder) -> _Built:
    mem = Memory(folder, settings, embedder=embedder)
    t0 = time.perf_counter()
    report = mem.ingest(corpus.imported, replay=replay, progress=False)
    seconds = {"ingest": report.seconds.get("total_write", 0.0),
               "embed": report.seconds.get("embed", 0.0),
               "replay": report.seconds.get("replay", 0.0),
               "total": time.perf_counter() - t0}
    ext = {m.ext_id: m.uid for m in corpus.imported.messages if m.ext_id}
    return _Built(mem, ext, mem.last_ts() + 86400.0, seconds)


def _dense_order(mem: Memory, q: NDArray[np.float32]) -> list[str]:
    n = mem.mirror.nodes
    cos = n.cos_msg_max(n.msg_vec @ q)
    cos = np.where(n.alive, cos, -np.inf)
    order = np.lexsort((np.arange(n.n), -cos))
    return [n.uid[i] for i in order]


def _bm25_order(mem: Memory, text: str, now: float, settings: Settings) -> list[str]:
    """The store's BM25 channel alone: every query term, every hit."""
    s, n = settings, mem.mirror.nodes
    q = terms(text, rules=TermRules.of(s))
    postings = mem.postings(s)
    sel = select_terms(q, postings, n.msg_ts, n.msg_alive, now=now, min_idf=-1e9,
                       unseen_idf=s.FTS_UNSEEN_IDF, max_terms=10_000, min_len=1)
    hits = bm25_rank(sel, postings, n.msg_ts, n.msg_alive, now=now, k1=s.BM25_K1,
                     b=s.BM25_B, top_k=n.m)
    seen: dict[str, None] = {}
    for r in hits.msg_rows:
        seen.setdefault(n.uid[int(n.msg_node[r])], None)
    return list(seen)


def _with_tail(head: Sequence[str], tail: Sequence[str]) -> list[str]:
    seen = dict.fromkeys(head)
    return list(seen) + [u for u in tail if u not in seen]


def _rrf(*rankings: Sequence[str], k: int = RRF_K) -> list[str]:
    score: dict[str, float] = defaultdict(float)
    for ranking in rankings:
        for i, u in enumerate(ranking):
            score[u] += 1.0 / (k + i + 1)
    return sorted(score, key=lambda u: (-score[u], u))


def _rank(b: _Built, text: str, q: NDArray[np.float32], methods: Sequence[str],
          settings: Settings, keep: dict[str, Any] | None = None
          ) -> dict[str, tuple[list[str], float]]:
    mem, now, st = b.mem, b.now, settings
    out: dict[str, tuple[list[str], float]] = {}
    t0 = time.perf_counter()
    dense = _dense_order(mem, q)
    t_dense = (time.perf_counter() - t0) * 1000
    out["dense"] = (dense, t_dense)
    if "bm25" in methods or "rrf" in methods:
        t0 = time.perf_counter()
        bm = _bm25_order(mem, text, now, st)
        t_bm = (time.perf_counter() - t0) * 1000
        out["bm25"] = (_with_tail(bm, dense), t_bm)
        t0 = time.perf_counter()
        out["rrf"] = (_with_tail(_rrf(dense, bm), dense),
                      t_dense + t_bm + (time.perf_counter() - t0) * 1000)
    if {"context", "akasha", "akasha-activation"} & set(methods):
        t0 = time.perf_counter()
        lex = mem.lexical(text, now=now, settings=st)
        trace = engine_recall(mem.mirror.nodes, mem.mirror.edges, q, lex, now=now, settings=st,
                              query=text, windows=mem.time_windows(text, now=now, settings=st))
        ms = (time.perf_counter() - t0) * 1000
        out["context"] = (_with_tail(context_order(trace), dense), ms)
        out["akasha"] = (_with_tail(trace.ranking(), dense), ms)
        out["akasha-activation"] = (_with_tail(trace.activation.uids, dense), ms)
        if keep is not None:
            keep["trace"], keep["dense"] = trace, dense
    if "ppr" in methods:
        t0 = time.perf_counter()
        lex = mem.lexical(text, now=now, settings=st)
        trace = ppr_recall(mem.mirror.nodes, mem.mirror.edges, q, lex, now=now, settings=st,
                           query=text)
        out["ppr"] = (_with_tail(trace.ranking(), dense), (time.perf_counter() - t0) * 1000)
    return {m: out[m] for m in methods if m in out}


def _stage_of(trace: RecallTrace, dense: list[str], gold: frozenset[str],
              category: str) -> dict[str, Any]:
    """Where the first gold node is in one Akasha recall (for the loss analysis)."""
    seeds = set(trace.seeds.uids)
    micro = set(trace.micro.uids)
    graph = {u for u, sel in zip(trace.graph.uids, trace.graph.selected, strict=True) if sel}
    ranking = trace.ranking()
    top10 = ranking[:10]
    src = dict(zip(trace.activation.uids + trace.suppressed.uids,
                   trace.activation.sources + trace.suppressed.sources, strict=True))
    return {
        "category": category,
        "gold_in_dense10": bool(gold & set(dense[:10])),
        "gold_in_floor": bool(gold & set(trace.first_block().uids)),
        "gold_seed": bool(gold & seeds),
        "gold_micrograph": bool(gold & micro),
        "gold_graph_candidate": bool(gold & graph),
        "gold_candidate": bool(gold & set(ranking)),
        "gold_top10": bool(gold & set(top10)),
        "graph_in_top10": sum(1 for u in top10 if src.get(u) == "Graph"),
        "gold_lost_after_candidate": bool(gold & set(ranking)) and not (gold & set(top10)),
    }


def _stage_summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Fractions of questions per stage flag, overall and per category."""
    if not rows:
        return {}
    flags = [k for k in rows[0] if k != "category"]

    def frac(rs: list[dict[str, Any]]) -> dict[str, float]:
        return {k: float(np.mean([float(r[k]) for r in rs])) for k in flags} | {"n": len(rs)}

    by_cat: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        by_cat[r["category"]].append(r)
    return {"overall": frac(rows), "by_category": {c: frac(rs) for c, rs in sorted(by_cat.items())}}


def aggregate(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Mean of every metric, overall and per category, plus latency percentiles."""
    keys = list(rows[0]["metrics"]) if rows else []
    by_cat: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        by_cat[r["category"]].append(r)

    def mean(rs: list[dict[str, Any]]) -> dict[str, float]:
        return {k: float(np.mean([r["metrics"][k] for r in rs])) for k in keys} | {"n": len(rs)}

    lat = np.array([r["latency_ms"] for r in rows]) if rows else np.zeros(1)
    return {"overall": mean(rows), "by_category": {c: mean(rs) for c, rs in sorted(by_cat.items())},
            "latency_ms": {"p50": float(np.percentile(lat, 50)),
                           "p95": float(np.percentile(lat, 95))}}


def run_recall(corpora: Sequence[Corpus], *, settings: Settings,
               methods: Sequence[str] = METHODS, ablations: bool = True,
               progress: bool = True, embedder: Embedder | None = None,
               label: str = "recall") -> dict[str, Any]:
    """Run the benchmark (see module docstring); returns every number as a JSON-ready dict:
    ``methods.<name>.overall.recall@10``, per category, latency; ``ablations.<row>.<method>``
    for ``context`` and ``akasha``; where the engine loses the evidence; build times."""
    unknown = sorted(set(methods) - set(METHODS))
    if unknown:
        raise InvalidInput(f"unknown method(s) {', '.join(unknown)}; known: {', '.join(METHODS)}")
    profile, own = settings.profile_name()
    emb = embedder if isinstance(embedder, CachedEmbedder) else CachedEmbedder(
        embedder or make_embedder(settings.EMBED_MODEL, settings.EMBED_CJK_DIMS))
    rows_by_method: dict[str, list[dict[str, Any]]] = defaultdict(list)
    rows_by_ablation: dict[str, dict[str, list[dict[str, Any]]]] = defaultdict(
        lambda: defaultdict(list))
    stage_rows: list[dict[str, Any]] = []
    counts: dict[str, int] = defaultdict(int)
    timing: dict[str, dict[str, float]] = {}
    abl = ablations_for(profile) if ablations else {}
    t_start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix=f"akasha-{label}-") as tmp:
        for corpus in tqdm(corpora, desc=label, disable=not progress):
            b = _build(corpus, Path(tmp) / f"{corpus.name}-replay", settings, replay=True,
                       embedder=emb)
            extra: dict[str, _Built] = {}
            if ablations:
                extra[STORE_ABLATIONS[0]] = _build(
                    corpus, Path(tmp) / f"{corpus.name}-noreplay", settings, replay=False,
                    embedder=emb)
                extra[STORE_ABLATIONS[1]] = _build(
                    corpus, Path(tmp) / f"{corpus.name}-nosal",
                    settings.replace(USE_SALIENCE=False), replay=True, embedder=emb)
            timing[corpus.name] = b.seconds | {"nodes": float(b.mem.mirror.nodes.n),
                                               "edges": float(b.mem.mirror.edges.n_alive())}
            questions, qcounts = corpus.questions(b.ext_to_uid)
            for k, v in qcounts.items():
                counts[k] += v
            qvecs = emb.encode([q.text for q in questions])
            for qi, (qu, q) in enumerate(zip(questions, qvecs, strict=True)):
                keep: dict[str, Any] = {}
                for m, (ranking, ms) in _rank(b, qu.text, q, methods, settings, keep).items():
                    rows_by_method[m].append({"corpus": corpus.name, "q": qi,
                                              "category": qu.category, "latency_ms": ms,
                                              "metrics": score_ranking(ranking, qu.gold)})
                if "trace" in keep:
                    stage_rows.append(_stage_of(keep["trace"], keep["dense"], qu.gold,
                                                qu.category))
            if ablations:
                _ablate(b, extra, questions, qvecs, settings, abl, rows_by_ablation)
            for c in (b, *extra.values()):
                c.mem.close()
    return {
        "corpora": [c.name for c in corpora], "profile": profile, "settings": own,
        "model": emb.name, "counts": dict(counts),
        "methods": {m: aggregate(rows) for m, rows in rows_by_method.items()},
        "ablations": {a: {m: aggregate(rows) for m, rows in by_m.items()}
                      for a, by_m in rows_by_ablation.items()},
        "where_evidence_is_lost": _stage_summary(stage_rows),
        "ingest_seconds": timing, "total_seconds": time.perf_counter() - t_start,
    }


def _ablate(b: _Built, extra: dict[str, _Built], questions: list[Question],
            qvecs: NDArray[np.float32], settings: Settings, abl: dict[str, dict[str, Any]],
            out: dict[str, dict[str, list[dict[str, Any]]]]) -> None:
    """Every ablation row for one corpus."""
    rows: list[tuple[str, _Built, Settings]] = [
        (name, b, settings.replace(**over)) for name, over in abl.items()]
    rows += [(name, extra[name], settings) for name in STORE_ABLATIONS if name in extra]
    for name, target, st in rows:   # other term rules: Memory.postings builds their index
        for qi, (qu, q) in enumerate(zip(questions, qvecs, strict=True)):
            ranked = _rank(target, qu.text, q, ("context", "akasha"), st)
            for m, (ranking, ms) in ranked.items():
                out[name][m].append({"q": qi, "category": qu.category, "latency_ms": ms,
                                     "metrics": score_ranking(ranking, qu.gold)})


def table(results: dict[str, dict[str, Any]], categories: Sequence[str]) -> str:
    """A markdown table: one row per method (or ablation), recall@k, MRR, nDCG@10,
    latency, and R@10 per category."""
    head = ["method", "R@5", "R@10", "R@25", "R@50", "MRR", "nDCG@10", "p50 ms", "p95 ms"]
    head += [f"R@10 {c}" for c in categories]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for m, r in results.items():
        o = r["overall"]
        cells = [m] + [f"{o[f'recall@{k}']:.3f}" for k in KS] + [
            f"{o['mrr']:.3f}", f"{o['ndcg@10']:.3f}", f"{r['latency_ms']['p50']:.2f}",
            f"{r['latency_ms']['p95']:.2f}"]
        cells += [f"{r['by_category'][c]['recall@10']:.3f}" if c in r["by_category"] else "–"
                  for c in categories]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)
