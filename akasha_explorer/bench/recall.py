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

from ..analysis.methods import (
    RANK_METHODS,
    check_methods,
    context_order,
    rank_methods,
    score_ranking,
)
from ..config import Settings
from ..embed import Embedder, store_embedder
from ..engine.trace import RecallTrace
from ..ingest.importers import Imported
from ..memory import Memory
from ..text.tokenize import is_cjk

__all__ = ["KS", "RANK_METHODS", "CachedEmbedder", "Corpus", "Question", "ablations_for",
           "context_order", "run_recall", "score_ranking"]

log = logging.getLogger(__name__)

KS = (5, 10, 25, 50)


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
        "- version numbers whole (FTS_VERSIONS off)": dict(FTS_VERSIONS=False),
        "- parts of camel-case words (FTS_WORD_PARTS off)": dict(FTS_WORD_PARTS=False),
        "- skip unseen terms": dict(FTS_SKIP_UNSEEN=False),
        "- long messages normalised at full length (BM25_LEN_CAP=0)": dict(BM25_LEN_CAP=0.0),
        "- IDF floor off in small stores": dict(FTS_MIN_IDF_DOCS=0),
        "- IDF floor as V1 (FTS_MIN_IDF=3.5)": dict(FTS_MIN_IDF=3.5),
        "- CJK dense weight as before glosses (FUSION_DENSE_WEIGHT_CJK=0.1)": dict(
            FUSION_DENSE_WEIGHT_CJK=0.1),
        "- neighbour context": dict(CONTEXT_NEIGHBOR=0.0),
        "- context from two turns away (CONTEXT_HOPS=1)": dict(CONTEXT_HOPS=1),
        "- answer takes the question's relevance (ANSWER_HANDOFF=0)": dict(ANSWER_HANDOFF=0.0),
        "- graph settle (V1 score_graph)": dict(GRAPH_SETTLE=False),
        "- graph expand": dict(GRAPH_LIMIT=0),
        "- RWR": dict(RWR_STEPS=0),
        "- hybrid (V1 seeds, dense floor)": dict(HYBRID=False),
        "RELEVANCE_FLOOR on": dict(RELEVANCE_FLOOR=True),
        "- time prior (TIME_PRIOR=0)": dict(TIME_PRIOR=0.0),
        "- time floor (TIME_FLOOR=0)": dict(TIME_FLOOR=0.0),
        "- anchor channel (ANCHOR_WEIGHT=0)": dict(ANCHOR_WEIGHT=0.0),
        "- roles name no one (ANCHOR_ROLES off)": dict(ANCHOR_ROLES=False),
        "- turns not naming the asked-about anchor kept (UNNAMED_FACTOR=1)": dict(
            UNNAMED_FACTOR=1.0),
        "- versions and codes name nothing (UNNAMED_IDENTIFIERS off)": dict(
            UNNAMED_IDENTIFIERS=False),
        "- facts by predicate (FACT_WEIGHT=0)": dict(FACT_WEIGHT=0.0),
        "- translations (XLING_WEIGHT=0)": dict(XLING_WEIGHT=0.0),
        "- kinds of a word (XLING_KINDS=0)": dict(XLING_KINDS=0),
        "- one-character words (CHAR_WEIGHT=0)": dict(CHAR_WEIGHT=0.0),
        "- dense weighed by what it knows (DENSE_KNOWABLE off)": dict(DENSE_KNOWABLE=False),
        "- filler demoted (FILLER_FACTOR=1)": dict(FILLER_FACTOR=1.0),
        "- a transcript searched by every line (QUERY_USER_LINES off)": dict(
            QUERY_USER_LINES=False),
    }


STORE_ABLATIONS = ("full, no replay write-back", "full, USE_SALIENCE off",
                   "full, edges never pruned", "full, no dictionary glosses (EMBED_CJK_GLOSS=0)")
"""Ablations that need a store of their own (the third: when the profile prunes edges,
SPEC §3 — the same store built with ``EDGE_PRUNE_BELOW=0`` and ``EDGE_BUDGET=0``; the
fourth: when the profile embeds glosses and the corpus has Chinese text — vectors without
them)."""


@dataclass
class _Built:
    mem: Memory
    ext_to_uid: dict[str, str]
    now: float
    embedder: Embedder
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
    return _Built(mem, ext, mem.last_ts() + 86400.0, embedder, seconds)


def _rank(b: _Built, text: str, q: NDArray[np.float32], methods: Sequence[str],
          settings: Settings, keep: dict[str, Any] | None = None
          ) -> dict[str, tuple[list[str], float]]:
    return rank_methods(b.mem.store, text, q, methods, now=b.now, settings=settings, keep=keep)


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
               methods: Sequence[str] = RANK_METHODS, ablations: bool = True,
               progress: bool = True, embedder: Embedder | None = None,
               label: str = "recall") -> dict[str, Any]:
    """Run the benchmark (see module docstring); returns every number as a JSON-ready dict:
    ``methods.<name>.overall.recall@10``, per category, latency; ``ablations.<row>.<method>``
    for ``context`` and ``akasha``; where the engine loses the evidence; build times."""
    check_methods(methods)
    profile, own = settings.profile_name()
    emb = embedder if isinstance(embedder, CachedEmbedder) else CachedEmbedder(
        embedder or store_embedder(settings))
    plain = settings.replace(EMBED_CJK_GLOSS=0.0)
    plain_emb: CachedEmbedder | None = None   # for the store ablation without glosses
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
                if settings.EDGE_PRUNE_BELOW > 0 or settings.EDGE_BUDGET > 0:
                    extra[STORE_ABLATIONS[2]] = _build(
                        corpus, Path(tmp) / f"{corpus.name}-noprune",
                        settings.replace(EDGE_PRUNE_BELOW=0.0, EDGE_BUDGET=0), replay=True,
                        embedder=emb)
                if settings.EMBED_CJK_GLOSS > 0 and settings.EMBED_CJK_DIMS > 0 and any(
                        is_cjk(m.text) for m in corpus.imported.messages):
                    plain_emb = plain_emb or CachedEmbedder(store_embedder(plain))
                    extra[STORE_ABLATIONS[3]] = _build(
                        corpus, Path(tmp) / f"{corpus.name}-nogloss", plain, replay=True,
                        embedder=plain_emb)
            timing[corpus.name] = b.seconds | {"nodes": float(b.mem.store.mirror.nodes.n),
                                               "edges": float(b.mem.store.mirror.edges.n_alive())}
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
    for name, target, cfg in rows:   # other term rules: Store.postings builds their index
        vecs = qvecs if target.embedder is b.embedder else target.embedder.encode(
            [qu.text for qu in questions])   # a store of other vectors: queries like them
        for qi, (qu, q) in enumerate(zip(questions, vecs, strict=True)):
            ranked = _rank(target, qu.text, q, ("context", "akasha"), cfg)
            for m, (ranking, ms) in ranked.items():
                out[name][m].append({"q": qi, "category": qu.category, "latency_ms": ms,
                                     "metrics": score_ranking(ranking, qu.gold)})


def markdown_table(results: dict[str, dict[str, Any]], categories: Sequence[str]) -> str:
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
