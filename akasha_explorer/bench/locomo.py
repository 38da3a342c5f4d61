"""LoCoMo evidence recall: Akasha beside the baselines users would pick instead (SPEC §10).

For each conversation of a LoCoMo-format file: a fresh store; the sessions ingested in time
order with replay (one node per dialogue line, line time = session time + 30 s per line);
then every question asked as a dry-run recall one day after the last session. Gold = the
nodes whose ``dia_id`` is in the question's evidence (packed ids split on ``[;\\s]+``,
malformed or dangling ids dropped and counted; questions left without evidence excluded and
counted).

Every method ranks the same nodes built from the same text — each line indexed and embedded
as ``"(session date) speaker: text [shares caption]"``, English stop words dropped from the
lexical index (``INDEX_DATE``, ``INDEX_SPEAKER``, ``INDEX_STOPWORDS``):

- ``akasha`` — Akasha's candidates by final score (``trace.ranking()``), then every other
  node by ``cos_msg`` (the tail, so recall@25/50 are defined);
- ``akasha-activation`` — the (up to) eight activated items, then the dense tail;
- ``dense`` — ``cos_msg`` over the store's own vectors;
- ``bm25`` — BM25 (Lucene) over the lexical index's tokens, every query term;
- ``rrf`` — reciprocal-rank fusion of dense and bm25, k = 60 (the memoirs approach);
- ``ppr`` — personalized PageRank from Akasha's own seeds (``Memory.recall(method="ppr")``),
  then the dense tail.

Ablations (on ``akasha``): dense seeds only → + FTS seeds → + RWR → + graph_expand (= full),
full without replay write-back (a store ingested without replay), ``USE_SALIENCE`` off (a
store built and replayed with it off), ``RELEVANCE_FLOOR`` on. Constants are never tuned on
the questions: every run uses the SPEC defaults apart from the switches named.
"""

from __future__ import annotations

import json
import logging
import math
import re
import tempfile
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray
from tqdm.auto import tqdm

from ..config import Settings
from ..embed import Embedder, make_embedder
from ..engine.bm25 import bm25_rank, select_terms
from ..engine.recall import recall as engine_recall
from ..errors import InvalidInput
from ..ingest.importers import read_locomo
from ..memory import Memory
from ..text.tokenize import TermRules, terms

__all__ = ["CATEGORIES", "METHODS", "CachedEmbedder", "parse_evidence", "run_locomo",
           "score_ranking", "write_reports"]

log = logging.getLogger(__name__)

METHODS = ("akasha", "akasha-activation", "dense", "bm25", "rrf", "ppr")
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
KS = (5, 10, 25, 50)
RRF_K = 60
BENCH_SETTINGS = dict(INDEX_DATE=True, INDEX_SPEAKER=True, INDEX_STOPWORDS=True)
"""What every LoCoMo store is built with (the text every method sees)."""

ABLATIONS: dict[str, dict[str, Any]] = {
    "dense-seeds-only": dict(FTS_TOP_K=0, BLACKHOLE_MAX=0, RWR_STEPS=0, GRAPH_LIMIT=0),
    "+fts-seeds": dict(BLACKHOLE_MAX=0, RWR_STEPS=0, GRAPH_LIMIT=0),
    "+rwr": dict(GRAPH_LIMIT=0),
    "+graph-expand (full)": {},
    "full, no replay write-back": {},
    "full, USE_SALIENCE off": {},
    "full, RELEVANCE_FLOOR on": dict(RELEVANCE_FLOOR=True),
}
_EVIDENCE = re.compile(r"^D\d+:\d+$")


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
        todo = list(dict.fromkeys(t for t in texts if t not in self._cache))
        if todo:
            vecs = self.inner.encode(todo, batch_size=batch_size, progress=progress)
            self._cache.update(zip(todo, vecs, strict=True))
        if not texts:
            return np.zeros((0, self.dim), np.float32)
        return np.stack([self._cache[t] for t in texts]).astype(np.float32)


def parse_evidence(evidence: Sequence[Any], known: set[str]) -> tuple[list[str], int]:
    """Split packed ids (``"D8:6; D9:17"``), keep well-formed ids that exist; count the rest.

    >>> parse_evidence(["D8:6; D9:17", "D", "D:11:26", "D1:3", "D99:1"], {"D8:6", "D9:17", "D1:3"})
    (['D8:6', 'D9:17', 'D1:3'], 3)
    """
    keep: list[str] = []
    dropped = 0
    for item in evidence:
        for part in re.split(r"[;\s]+", str(item).strip()):
            if not part:
                continue
            if _EVIDENCE.match(part) and part in known:
                if part not in keep:
                    keep.append(part)
            else:
                dropped += 1
    return keep, dropped


def score_ranking(ranking: Sequence[str], gold: set[str]) -> dict[str, float]:
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


@dataclass
class _Conv:
    sample_id: str
    mem: Memory
    ext_to_uid: dict[str, str]
    now: float
    seconds: dict[str, float] = field(default_factory=dict)


def _build(sample: dict[str, Any], folder: Path, settings: Settings, *, replay: bool,
           embedder: Embedder) -> _Conv:
    imported = read_locomo(sample, source=str(sample.get("sample_id", "locomo")))
    mem = Memory(folder, settings, embedder=embedder)
    t0 = time.perf_counter()
    report = mem.ingest(imported, replay=replay, progress=False)
    seconds = {"ingest": report.seconds.get("total_write", 0.0),
               "embed": report.seconds.get("embed", 0.0),
               "replay": report.seconds.get("replay", 0.0),
               "total": time.perf_counter() - t0}
    ext = {m.ext_id: m.uid for m in imported.messages if m.ext_id}
    return _Conv(str(sample.get("sample_id")), mem, ext, mem.last_ts() + 86400.0, seconds)


def _dense_order(mem: Memory, q: NDArray[np.float32]) -> tuple[list[str], NDArray[np.float64]]:
    n = mem.mirror.nodes
    cos = n.cos_msg_max(n.msg_vec @ q)
    cos = np.where(n.alive, cos, -np.inf)
    order = np.lexsort((np.arange(n.n), -cos))
    return [n.uid[i] for i in order], cos


def _bm25_order(mem: Memory, text: str, now: float) -> list[str]:
    s, n = mem.settings, mem.mirror.nodes
    q = terms(text, rules=TermRules.of(s))
    sel = select_terms(q, mem.mirror.postings, n.msg_ts, n.msg_alive, now=now, min_idf=-1e9,
                       unseen_idf=s.FTS_UNSEEN_IDF, max_terms=10_000, min_len=1)
    hits = bm25_rank(sel, mem.mirror.postings, n.msg_ts, n.msg_alive, now=now, k1=s.BM25_K1,
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


def _rank(conv: _Conv, text: str, q: NDArray[np.float32], methods: Sequence[str],
          settings: Settings | None = None,
          keep: dict[str, Any] | None = None) -> dict[str, tuple[list[str], float]]:
    mem, now = conv.mem, conv.now
    st = settings or mem.settings
    out: dict[str, tuple[list[str], float]] = {}
    t0 = time.perf_counter()
    dense, _ = _dense_order(mem, q)
    t_dense = (time.perf_counter() - t0) * 1000
    if "dense" in methods:
        out["dense"] = (dense, t_dense)
    if "bm25" in methods or "rrf" in methods:
        t0 = time.perf_counter()
        bm = _bm25_order(mem, text, now)
        t_bm = (time.perf_counter() - t0) * 1000
        out["bm25"] = (_with_tail(bm, dense), t_bm)
        if "rrf" in methods:
            t0 = time.perf_counter()
            fused = _rrf(dense, bm)
            out["rrf"] = (_with_tail(fused, dense), t_dense + t_bm
                          + (time.perf_counter() - t0) * 1000)
    if "akasha" in methods or "akasha-activation" in methods:
        t0 = time.perf_counter()
        lex = mem.lexical(text, now=now, settings=st)
        trace = engine_recall(mem.mirror.nodes, mem.mirror.edges, q, lex, now=now, settings=st,
                              query=text)
        ms = (time.perf_counter() - t0) * 1000
        out["akasha"] = (_with_tail(trace.ranking(), dense), ms)
        out["akasha-activation"] = (_with_tail(trace.activation.uids, dense), ms)
        if keep is not None:
            keep["trace"], keep["dense"] = trace, dense
    if "ppr" in methods:
        t0 = time.perf_counter()
        lex = mem.lexical(text, now=now, settings=st)
        try:
            trace = mem._recall_method("ppr", q, lex, now=now, settings=st, query=text,
                                       session=None)
        except InvalidInput:
            log.warning("method ppr is not available in this build; skipped")
        else:
            out["ppr"] = (_with_tail(trace.ranking(), dense), (time.perf_counter() - t0) * 1000)
    return {m: v for m, v in out.items() if m in methods}


def _stage_of(trace: Any, dense: list[str], gold: set[str], category: int) -> dict[str, Any]:
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
        by_cat[CATEGORIES.get(r["category"], str(r["category"]))].append(r)
    return {"overall": frac(rows), "by_category": {c: frac(rs) for c, rs in sorted(by_cat.items())}}


def _aggregate(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Mean of every metric, overall and per category, plus latency percentiles."""
    keys = list(rows[0]["metrics"]) if rows else []
    by_cat: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        by_cat[CATEGORIES.get(r["category"], str(r["category"]))].append(r)
    def mean(rs: list[dict[str, Any]]) -> dict[str, float]:
        return {k: float(np.mean([r["metrics"][k] for r in rs])) for k in keys} | {"n": len(rs)}
    lat = np.array([r["latency_ms"] for r in rows]) if rows else np.zeros(1)
    return {"overall": mean(rows), "by_category": {c: mean(rs) for c, rs in sorted(by_cat.items())},
            "latency_ms": {"p50": float(np.percentile(lat, 50)),
                           "p95": float(np.percentile(lat, 95))}}


def run_locomo(data: str | Path, *, conversations: int | None = None,
               methods: Sequence[str] = METHODS, ablations: bool = True,
               progress: bool = True, embedder: Embedder | None = None) -> dict[str, Any]:
    """Run the benchmark (see module docstring); returns every number as a JSON-ready dict."""
    unknown = sorted(set(methods) - set(METHODS))
    if unknown:
        raise InvalidInput(f"unknown method(s) {', '.join(unknown)}; known: {', '.join(METHODS)}")
    samples = json.loads(Path(data).read_text("utf-8"))
    if isinstance(samples, dict):
        samples = [samples]
    samples = samples[:conversations] if conversations else samples
    base = Settings(**BENCH_SETTINGS)
    emb = CachedEmbedder(embedder or make_embedder(base.EMBED_MODEL, base.EMBED_CJK_DIMS))
    per_method: dict[str, list[dict[str, Any]]] = defaultdict(list)
    per_ablation: dict[str, list[dict[str, Any]]] = defaultdict(list)
    stage_rows: list[dict[str, Any]] = []
    evidence = {"questions": 0, "excluded_no_evidence": 0, "evidence_ids_dropped": 0}
    timing: dict[str, dict[str, float]] = {}
    t_start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="akasha-locomo-") as tmp:
        for sample in tqdm(samples, desc="conversations", disable=not progress):
            sid = str(sample.get("sample_id"))
            conv = _build(sample, Path(tmp) / f"{sid}-replay", base, replay=True, embedder=emb)
            extra: dict[str, _Conv] = {}
            if ablations:
                extra["full, no replay write-back"] = _build(
                    sample, Path(tmp) / f"{sid}-noreplay", base, replay=False, embedder=emb)
                extra["full, USE_SALIENCE off"] = _build(
                    sample, Path(tmp) / f"{sid}-nosal", base.replace(USE_SALIENCE=False),
                    replay=True, embedder=emb)
            timing[sid] = conv.seconds | {"nodes": float(conv.mem.mirror.nodes.n),
                                          "edges": float(conv.mem.mirror.edges.n_alive())}
            known = set(conv.ext_to_uid)
            qa = sample.get("qa", [])
            for qi, item in enumerate(tqdm(qa, desc=sid, leave=False, disable=not progress)):
                evidence["questions"] += 1
                ids, dropped = parse_evidence(item.get("evidence", []), known)
                evidence["evidence_ids_dropped"] += dropped
                if not ids:
                    evidence["excluded_no_evidence"] += 1
                    continue
                gold = {conv.ext_to_uid[i] for i in ids}
                text = str(item["question"])
                q = emb.encode([text])[0]
                cat = int(item.get("category", 0))
                keep: dict[str, Any] = {}
                for m, (ranking, ms) in _rank(conv, text, q, methods, keep=keep).items():
                    per_method[m].append({"conv": sid, "q": qi, "category": cat,
                                          "metrics": score_ranking(ranking, gold),
                                          "latency_ms": ms})
                if "trace" in keep:
                    stage_rows.append(_stage_of(keep["trace"], keep["dense"], gold, cat))
                if not ablations:
                    continue
                for name, over in ABLATIONS.items():
                    target = extra.get(name, conv)
                    ranked = _rank(target, text, q, ("akasha",), base.replace(**over))
                    ranking, ms = ranked["akasha"]
                    per_ablation[name].append({"conv": sid, "q": qi, "category": cat,
                                               "metrics": score_ranking(ranking, gold),
                                               "latency_ms": ms})
            for c in (conv, *extra.values()):
                c.mem.close()
    return {
        "data": str(data), "conversations": [str(s.get("sample_id")) for s in samples],
        "settings": BENCH_SETTINGS, "model": emb.name, "evidence": evidence,
        "methods": {m: _aggregate(rows) for m, rows in per_method.items()},
        "ablations": {a: _aggregate(rows) for a, rows in per_ablation.items()},
        "where_evidence_is_lost": _stage_summary(stage_rows),
        "ingest_seconds": timing, "total_seconds": time.perf_counter() - t_start,
    }


def _table(results: dict[str, dict[str, Any]], *, with_cats: bool = True) -> str:
    cats = list(CATEGORIES.values())
    head = ["method", "R@5", "R@10", "R@25", "R@50", "MRR", "nDCG@10", "p50 ms", "p95 ms"]
    if with_cats:
        head += [f"R@10 {c}" for c in cats]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for m, r in results.items():
        o = r["overall"]
        cells = [m] + [f"{o[f'recall@{k}']:.3f}" for k in KS] + [
            f"{o['mrr']:.3f}", f"{o['ndcg@10']:.3f}", f"{r['latency_ms']['p50']:.2f}",
            f"{r['latency_ms']['p95']:.2f}"]
        if with_cats:
            cells += [f"{r['by_category'][c]['recall@10']:.3f}" if c in r["by_category"] else "–"
                      for c in cats]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def write_reports(result: dict[str, Any], out: str | Path, *, command: str = "") -> list[Path]:
    """Write ``out`` (JSON), ``out.md`` (tables) and ``out.png`` (R@10 by category)."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n", "utf-8")
    ev = result["evidence"]
    md = [f"# LoCoMo evidence recall — {', '.join(result['conversations'])}", "",
          f"Command: `{command}`" if command else "",
          f"Model {result['model']}; text indexed as "
          f"`(session date) speaker: text [shares caption]` ({json.dumps(result['settings'])}). "
          f"Questions: {ev['questions']}, excluded for no "
          f"usable evidence: {ev['excluded_no_evidence']}, evidence ids dropped: "
          f"{ev['evidence_ids_dropped']}. Total time {result['total_seconds']:.0f} s.", "",
          "## Methods", "", _table(result["methods"]), ""]
    if result.get("ablations"):
        md += ["## Ablations of Akasha (ranking by final score)", "",
               _table(result["ablations"]), ""]
    loss = result.get("where_evidence_is_lost", {}).get("overall")
    if loss:
        md += ["## Where Akasha loses the evidence (fraction of questions)", "",
               "| " + " | ".join(k for k in loss if k != "n") + " |",
               "|" + "---|" * (len(loss) - 1),
               "| " + " | ".join(f"{v:.3f}" for k, v in loss.items() if k != "n") + " |", ""]
    md += ["## Ingest + replay per conversation (seconds)", "",
           "| conversation | nodes | edges | embed | ingest | replay |",
           "|---|---|---|---|---|---|"]
    for sid, t in result["ingest_seconds"].items():
        md.append(f"| {sid} | {t['nodes']:.0f} | {t['edges']:.0f} | {t['embed']:.1f} | "
                  f"{t['ingest']:.1f} | {t['replay']:.1f} |")
    md_path = out.with_suffix(".md")
    md_path.write_text("\n".join(md) + "\n", "utf-8")
    png = out.with_suffix(".png")
    _plot(result, png)
    return [out, md_path, png]


def _plot(result: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    methods = list(result["methods"])
    cats = ["overall", *CATEGORIES.values()]
    fig, ax = plt.subplots(figsize=(11, 4.5))
    width = 0.8 / max(1, len(methods))
    for i, m in enumerate(methods):
        r = result["methods"][m]
        vals = [r["overall"]["recall@10"]] + [
            r["by_category"].get(c, {}).get("recall@10", 0.0) for c in cats[1:]]
        ax.bar(np.arange(len(cats)) + i * width, vals, width, label=m)
    ax.set_xticks(np.arange(len(cats)) + width * (len(methods) - 1) / 2, cats)
    ax.set_ylabel("recall@10 of evidence turns")
    ax.set_ylim(0, 1)
    ax.set_title("LoCoMo dev: " + ", ".join(result["conversations"]))
    ax.legend(ncol=3, fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
