"""SPEC §7 surprise discovery (memvault ``surprise_ops``): four kinds, each a pure function
returning :class:`Surprise` records that carry the numbers that made them one.

(a) :func:`bridges` — cross-community bridges: nodes whose co-activation weight spreads
    over several Leiden communities (participation coefficient
    ``P_i = 1 − Σ_c (k_ic / k_i)²``, ``k_ic`` = effective weight from i into community c),
    ranked by the weight that leaves their own community; and the strongest edges between
    two communities.
(b) :func:`indirect_pairs` — indirect-strong pairs: two nodes with no edge between them
    but several strong two-hop paths, ranked by a weighted Adamic–Adar score
    ``Σ_b sqrt(w_ib · w_bj) / ln(1 + deg_b)`` over each node's strongest edges (a hub
    ``b`` counts for less). These become suggested links on the review queue.
(c) :func:`knowledge_gaps` — queries in the query log that activated nothing relevant
    (no item, or only the Dense(FB) fallback seeds: nothing above DENSE_SEED_MIN, no
    lexical hit, no BlackHole) at least ``min_misses`` times.
(d) :func:`semantic_mismatches` — lived-vs-semantic mismatches: nodes whose nearest dense
    neighbours (cosine of node vectors ≥ ``min_cos``) sit mostly in other co-activation
    communities: what the text says is close, use never connected.

>>> s = Surprise("bridge", "n1", 0.8, {"participation": 0.8}, "why")
>>> surprise_frame([s])[["kind", "subject", "score"]].values.tolist()
[['bridge', 'n1', 0.8]]
"""

from __future__ import annotations

import unicodedata
from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp
from numpy.typing import NDArray

from .views import GraphView, adjacency, backbone, iso_time

__all__ = [
    "SURPRISE_KINDS",
    "Surprise",
    "bridges",
    "indirect_pairs",
    "knowledge_gaps",
    "semantic_mismatches",
    "surprise_frame",
]

SURPRISE_KINDS = ("bridge", "suggested_link", "knowledge_gap", "semantic_mismatch")
"""What a surprise can be, in the order ``akasha surprises`` lists them."""


@dataclass(frozen=True)
class Surprise:
    """One surprise: its ``kind`` (one of :data:`SURPRISE_KINDS`), the node / pair / query it is
    about (``subject``, and ``other`` for pairs and edges), a ranking ``score``, the
    ``numbers`` behind it and one sentence saying ``why``."""

    kind: str
    subject: str
    score: float
    numbers: dict[str, Any]
    why: str
    other: str = ""
    extra: dict[str, Any] = field(default_factory=dict, compare=False)


def surprise_frame(items: Sequence[Surprise]) -> pd.DataFrame:
    """One row per surprise: kind, subject, other, score, why, numbers (a dict)."""
    cols = ["kind", "subject", "other", "score", "why", "numbers"]
    return pd.DataFrame([{k: asdict(s)[k] for k in cols} for s in items], columns=cols)


# -- (a) bridges -----------------------------------------------------------------------------
def bridges(view: GraphView, *, min_participation: float = 0.5, top: int = 10,
            exclude: Collection[str] = ()) -> list[Surprise]:
    """Cross-community bridges of a view whose ``community`` column is filled: up to
    ``top`` nodes with participation ≥ ``min_participation`` by weight leaving their own
    community, then up to ``top`` edges joining two communities by weight. Nodes in
    ``exclude`` (e.g. greetings flagged noise) are not reported as bridges.

    >>> import pandas as pd
    >>> nodes = pd.DataFrame({"id": list("abcde"), "community": [0, 0, 1, 1, 0]})
    >>> edges = pd.DataFrame({"source": ["a", "e", "e", "c"], "target": ["e", "b", "c", "d"],
    ...                       "weight": [1.0, 1.0, 1.0, 1.0]})
    >>> b = bridges(GraphView("x", nodes, edges, directed=False), top=1)
    >>> [(s.subject, s.other, round(s.numbers["participation"], 3)) for s in b]
    [('c', '', 0.5), ('e', 'c', 0.444)]
    """
    a, n = adjacency(view)
    if n == 0 or a.nnz == 0:
        return []
    ids = view.nodes["id"].to_numpy()
    comm = view.nodes["community"].to_numpy(np.int64)
    k = np.asarray(a.sum(axis=1)).ravel()
    coo = a.tocoo()
    nc = int(comm.max()) + 2
    kc = sp.coo_matrix((coo.data, (coo.row, comm[coo.col] + 1)), shape=(n, nc)).tocsr()
    kc.sum_duplicates()
    share = sp.diags(1.0 / np.where(k > 0, k, 1.0)) @ kc
    part = 1.0 - np.asarray(share.multiply(share).sum(axis=1)).ravel()
    own = np.asarray(kc[np.arange(n), comm + 1]).ravel()
    outside = k - own
    skip = np.isin(ids, list(exclude)) | (comm < 0) | (k <= 0)
    cand = np.flatnonzero(~skip & (part >= min_participation - 1e-12))
    order = cand[np.lexsort((cand, -outside[cand]))][:top]
    out = []
    for i in order.tolist():
        row = kc.getrow(i)
        touched = sorted(zip(row.indices - 1, row.data, strict=True), key=lambda x: -x[1])
        nums = {"participation": float(part[i]), "w_degree": float(k[i]),
                "w_outside": float(outside[i]), "share_outside": float(outside[i] / k[i]),
                "community": int(comm[i]), "n_communities": len(touched),
                "communities": ", ".join(f"{c}:{w:.3f}" for c, w in touched[:5])}
        out.append(Surprise(
            "bridge", str(ids[i]), float(outside[i]), nums,
            f"participation {part[i]:.2f}: {outside[i] / k[i]:.0%} of its weight "
            f"{k[i]:.3f} leaves community {comm[i]} for {len(touched) - 1} other(s)"))
    u = view.undirected()
    s, t = u.positions()
    w = u.edges["weight"].to_numpy(np.float64)
    cross = np.flatnonzero((comm[s] != comm[t]) & (comm[s] >= 0) & (comm[t] >= 0)
                           & ~np.isin(ids[s], list(exclude)) & ~np.isin(ids[t], list(exclude)))
    for e in cross[np.lexsort((cross, -w[cross]))][:top].tolist():
        i, j = int(s[e]), int(t[e])
        nums = {"weight": float(w[e]), "communities": f"{comm[i]}-{comm[j]}",
                "participation": float(part[i]), "participation_other": float(part[j])}
        out.append(Surprise(
            "bridge", str(ids[i]), float(w[e]), nums,
            f"edge of weight {w[e]:.3f} joins community {comm[i]} and {comm[j]}",
            other=str(ids[j]), extra={"element": "edge"}))
    return out


# -- (b) indirect-strong pairs -----------------------------------------------------------------
def indirect_pairs(view: GraphView, *, per_node: int = 10, min_via: int = 2, top: int = 10,
                   exclude: Collection[str] = (),
                   vectors: NDArray[np.float32] | None = None) -> list[Surprise]:
    """Pairs with no direct edge and strong two-hop paths (weighted Adamic–Adar over each
    node's ``per_node`` strongest edges), at least ``min_via`` paths, best ``top``.
    ``exclude`` nodes are neither ends nor middles; ``vectors`` (one per view node) add
    the pair's cosine to the numbers.

    >>> import pandas as pd
    >>> nodes = pd.DataFrame({"id": list("abxy")})
    >>> edges = pd.DataFrame({"source": ["a", "a", "b", "b"], "target": ["x", "y", "x", "y"],
    ...                       "weight": [1.0, 1.0, 1.0, 1.0]})
    >>> p = indirect_pairs(GraphView("x", nodes, edges, directed=False))
    >>> [(s.subject, s.other, s.numbers["n_via"]) for s in p]
    [('a', 'b', 2), ('x', 'y', 2)]
    """
    a, n = adjacency(view)
    if n == 0 or a.nnz == 0:
        return []
    ids = view.nodes["id"].to_numpy()
    deg = np.diff(a.indptr)
    ex = np.isin(ids, list(exclude))
    keep = sp.diags((~ex).astype(np.float64))
    strong = keep @ backbone(a, per_node) @ keep
    root = strong.sqrt()
    aa = root @ sp.diags(1.0 / np.log1p(np.maximum(deg, 1))) @ root.T
    binary = (strong > 0).astype(np.float64)
    via = sp.triu(binary @ binary.T, k=1).tocoo()
    aa = sp.triu(aa, k=1).tocsr()
    if via.nnz == 0:
        return []
    sel = via.data >= min_via
    rows, cols, nvia = via.row[sel], via.col[sel], via.data[sel]
    score = np.asarray(aa[rows, cols]).ravel()
    up = sp.triu(a, k=1).tocoo()
    direct = np.isin(rows.astype(np.int64) * n + cols, up.row.astype(np.int64) * n + up.col)
    rows, cols, score, nvia = rows[~direct], cols[~direct], score[~direct], nvia[~direct]
    order = np.lexsort((cols, rows, -score))[:top]
    out = []
    for k in order.tolist():
        i, j = int(rows[k]), int(cols[k])
        wi, wj = strong.getrow(i).toarray().ravel(), strong.getrow(j).toarray().ravel()
        both = np.flatnonzero((wi > 0) & (wj > 0))
        paths = sorted(((float(np.sqrt(wi[b] * wj[b])), int(b)) for b in both), reverse=True)
        nums = {"adamic_adar": float(score[k]), "n_via": int(nvia[k]),
                "two_hop": float((wi[both] * wj[both]).sum()),
                "via": ",".join(str(ids[b]) for _, b in paths[:3]),
                "via_weights": ",".join(f"{wi[b]:.3f}/{wj[b]:.3f}" for _, b in paths[:3])}
        if vectors is not None:
            nums["cos"] = float(np.dot(vectors[i], vectors[j]))
        out.append(Surprise(
            "suggested_link", str(ids[i]), float(score[k]), nums,
            f"no direct edge, but {int(nvia[k])} strong two-hop paths (Adamic-Adar "
            f"{score[k]:.3f}), strongest via {ids[paths[0][1]]}", other=str(ids[j])))
    return out


# -- (c) knowledge gaps ----------------------------------------------------------------------
def _norm_query(q: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", q).casefold().split())


def _miss(row: Mapping[str, Any]) -> str:
    """Why a logged query activated nothing relevant ("" if it did)."""
    if row.get("empty") or int(row.get("n_activated") or 0) == 0:
        return "activated nothing"
    seeds = row.get("seeds") or []
    if isinstance(seeds, str):
        import json
        seeds = json.loads(seeds) if seeds else []
    if not any(_RELEVANT & set(str(s[1]).split("+")) for s in seeds):
        return "no relevant seed (fallback only)"
    return ""


_RELEVANT = {"Dense", "FTS", "BlackHole"}
"""Seed labels of a relevant match (a seed only labelled ``Dense(FB)`` or ``Context`` is a
weak fallback: nothing above DENSE_SEED_MIN, no lexical hit, no BlackHole)."""


def knowledge_gaps(queries: Sequence[Mapping[str, Any]], *, min_misses: int = 2,
                   top: int = 10) -> list[Surprise]:
    """Queries (case, width and spacing folded) that activated nothing relevant at least
    ``min_misses`` times. ``queries`` are query-log rows: ``query``, ``ts``,
    ``n_activated``, ``empty``, ``seeds`` (JSON list of ``[uid, source]``), ``method``.

    >>> rows = [{"query": "Where is Tom?", "ts": 0.0, "n_activated": 0, "empty": True},
    ...         {"query": "where is  tom?", "ts": 60.0, "n_activated": 8, "empty": False,
    ...          "seeds": '[["n1", "Dense(FB)"]]'},
    ...         {"query": "hi", "ts": 9.0, "n_activated": 0, "empty": True}]
    >>> [(s.subject, s.numbers["misses"]) for s in knowledge_gaps(rows)]
    [('Where is Tom?', 2)]
    """
    groups: dict[str, list[Mapping[str, Any]]] = {}
    for r in queries:
        groups.setdefault(_norm_query(str(r.get("query", ""))), []).append(r)
    out = []
    for key, rows in groups.items():
        if not key:
            continue
        rows = sorted(rows, key=lambda r: float(r.get("ts") or 0.0))
        why = [_miss(r) for r in rows]
        misses = [r for r, w in zip(rows, why, strict=True) if w]
        if len(misses) < min_misses:
            continue
        reasons = Counter(w for w in why if w)
        nums = {"asked": len(rows), "misses": len(misses),
                "first_time": iso_time(float(misses[0].get("ts") or 0.0)),
                "last_time": iso_time(float(misses[-1].get("ts") or 0.0)),
                "last_activated": int(rows[-1].get("n_activated") or 0),
                "reasons": ", ".join(f"{k} x{v}" for k, v in sorted(reasons.items())),
                "methods": ",".join(sorted({str(r.get("method") or "akasha") for r in rows}))}
        out.append(Surprise(
            "knowledge_gap", str(misses[0].get("query", key)), float(len(misses)), nums,
            f"asked {len(rows)} times, {len(misses)} found nothing relevant "
            f"({nums['reasons']})"))
    out.sort(key=lambda s: (-s.score, s.subject))
    return out[:top]


# -- (d) lived-vs-semantic mismatches ----------------------------------------------------------
def semantic_mismatches(view: GraphView, vectors: NDArray[np.float32], *, k: int = 5,
                        min_cos: float = 0.5, top: int = 10, exclude: Collection[str] = (),
                        block: int = 2048) -> list[Surprise]:
    """Nodes (in a community) whose ``k`` nearest dense neighbours among the other
    community members — cosine of ``vectors`` (one unit vector per view node) at least
    ``min_cos`` — sit mostly in *other* co-activation communities. Needs two such
    neighbours; score = share in other communities × their mean cosine.

    >>> import pandas as pd
    >>> v = np.array([[1, 0], [1, 0.05], [0.99, 0.1], [0, 1]], np.float32)
    >>> v /= np.linalg.norm(v, axis=1, keepdims=True)
    >>> nodes = pd.DataFrame({"id": list("abcd"), "community": [0, 1, 1, 0]})
    >>> s = semantic_mismatches(GraphView("x", nodes, pd.DataFrame(), False), v, k=2)
    >>> [(x.subject, x.numbers["share_other"]) for x in s]
    [('a', 1.0)]
    """
    nodes = view.nodes
    ids = nodes["id"].to_numpy()
    comm = nodes["community"].to_numpy(np.int64)
    pool = np.flatnonzero(comm >= 0)
    subj = pool[~np.isin(ids[pool], list(exclude))]
    if pool.size < 3 or subj.size == 0:
        return []
    pv = np.asarray(vectors, np.float32)[pool]
    where = {int(p): q for q, p in enumerate(pool.tolist())}
    found = []
    for lo in range(0, subj.size, block):
        part = subj[lo: lo + block]
        sims = np.asarray(vectors, np.float32)[part] @ pv.T
        sims[np.arange(part.size), [where[int(p)] for p in part]] = -np.inf
        kk = min(k, pool.size - 1)
        nn = np.argpartition(-sims, kk - 1, axis=1)[:, :kk]
        for r, i in enumerate(part.tolist()):
            cand = nn[r][np.argsort(-sims[r, nn[r]], kind="stable")]
            cs = sims[r, cand]
            good = cand[cs >= min_cos]
            if good.size < 2:
                continue
            nb = pool[good]
            other = comm[nb] != comm[i]
            share = float(other.mean())
            if share <= 0.5:
                continue
            mean_cos = float(sims[r, good].mean())
            found.append((share * mean_cos, i, nb, sims[r, good], share, mean_cos))
    found.sort(key=lambda x: (-x[0], x[1]))
    out = []
    for score, i, nb, cs, share, mean_cos in found[:top]:
        cnt = Counter(int(c) for c in comm[nb])
        nums = {"community": int(comm[i]), "share_other": share, "mean_cos": mean_cos,
                "n_neighbours": int(nb.size),
                "neighbour_communities": ", ".join(f"{c}:{n}" for c, n in cnt.most_common()),
                "nearest": str(ids[nb[0]]), "nearest_cos": float(cs[0]),
                "nearest_community": int(comm[nb[0]])}
        out.append(Surprise(
            "semantic_mismatch", str(ids[i]), float(score), nums,
            f"{share:.0%} of its {nb.size} nearest dense neighbours (mean cos "
            f"{mean_cos:.2f}) sit outside its community {comm[i]}",
            other=str(ids[nb[0]])))
    return out
