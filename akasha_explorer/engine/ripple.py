"""SPEC §4 stage 2 — the two right brains: RWR on the micrograph (2a, near field) and
graph_expand over the whole graph (2b, far field).

Stage 2a is small dense linear algebra on the micrograph (tens of nodes); stage 2b reads
one hop of the :class:`~akasha_explorer.engine.state.EdgeStore` adjacency for the graph
seeds with fancy indexing — neither touches every node or every edge.

>>> import numpy as np
>>> P = np.array([[0.0, 1.0], [1.0, 0.0]])
>>> [c.tolist() for c in rwr(P, np.array([1.0, 0.0]), alpha=0.2, steps=2)]
[[0.2, 0.8], [0.8400000000000001, 0.16000000000000003]]
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..config import Settings
from .dynamics import edge_eff, long_term, resource_eff, strength_eff
from .seeds import effective_sigma, top_k
from .state import F64, EdgeStore, NodeTable
from .trace import GraphExpand, MicroGraph, SeedTable

__all__ = [
    "cross_matrix",
    "gram",
    "graph_expand",
    "initial_energy",
    "micrograph",
    "micrograph_rows",
    "node_long",
    "node_state",
    "path_info",
    "rwr",
    "transition",
]

PATHS = ("direct", "1hop", "2hop")


def micrograph_rows(seed_rows: ArrayLike, ts: F64, cos_node: F64, visible: NDArray[np.bool_],
                    *, window: float, min_cos: float) -> NDArray[np.int64]:
    """SPEC §4 stage 2a: the seeds in seed order, then every visible non-seed node within
    ``window`` seconds (inclusive) of some seed's time with ``cos_node > min_cos``, in
    ascending row order.

    >>> ts = np.array([0.0, 100.0, 5000.0, 50.0])
    >>> micrograph_rows([3], ts, np.array([0.5, 0.5, 0.5, 0.9]), np.ones(4, bool),
    ...                 window=1800.0, min_cos=0.28).tolist()
    [3, 0, 1]
    """
    seeds = np.asarray(seed_rows, dtype=np.int64)
    if seeds.size == 0:
        return seeds
    cand = np.flatnonzero(visible & (cos_node > min_cos))
    cand = cand[~np.isin(cand, seeds)]
    if cand.size:
        seed_ts = np.sort(ts[seeds])
        t = ts[cand]
        j = np.searchsorted(seed_ts, t)
        left = np.abs(t - seed_ts[np.maximum(j - 1, 0)])
        right = np.abs(seed_ts[np.minimum(j, seed_ts.size - 1)] - t)
        cand = cand[np.minimum(left, right) <= window]
    return np.concatenate([seeds, cand])


def node_long(nodes: NodeTable, rows: ArrayLike, now: float, settings: Settings,
              *, decayed: bool = True) -> F64:
    """SPEC §3: ``long = min(1, strength_eff / STRENGTH_CAP)`` (or, ``decayed=False``, of the
    stored strength — V1's graph_expand).

    Settings read: ``STRENGTH_CAP``, ``STRENGTH_TAU``.

    >>> from akasha_explorer.engine.toy import toy_nodes
    >>> n = toy_nodes([[1, 0]], strength=[3.0])
    >>> node_long(n, [0], 0.0, Settings()).tolist()
    [1.0]
    """
    r = np.asarray(rows, dtype=np.int64)
    s = nodes.strength[r]
    if decayed:
        s = np.asarray(strength_eff(s, nodes.strength_ts[r], now, settings.STRENGTH_TAU))
    return np.asarray(long_term(s, settings.STRENGTH_CAP))


def node_state(sigma: F64, long: F64, resource: F64, fan: ArrayLike, *,
               settings: Settings) -> F64:
    """SPEC §4 stage 2a: ``state = exp(1.4 σ + 1.0 long) · resource_eff / sqrt(1 + fan)``
    (anti-hub 1).

    Settings read: ``STATE_SIGMA_GAIN``, ``STATE_LONG_GAIN``.

    >>> round(float(node_state(np.array([0.5]), np.array([1.0]), np.array([1.0]), [3],
    ...                        settings=Settings())[0]), 6)
    2.736974
    """
    f = np.asarray(fan, dtype=np.float64)
    return (np.exp(settings.STATE_SIGMA_GAIN * sigma + settings.STATE_LONG_GAIN * long)
            * resource / np.sqrt(1.0 + f))


def cross_matrix(rows: ArrayLike, edges: EdgeStore, now: float, *, tau: float
                 ) -> tuple[F64, NDArray[np.int64], NDArray[np.int64]]:
    """SPEC §4 stage 2a: ``cross[i, j]`` = effective weight of the edge ``rows[j] → rows[i]``
    at ``now`` (0 if none). Returns the matrix and the non-zero positions ``(i, j)``.

    >>> from akasha_explorer.engine.toy import toy_edges
    >>> c, i, j = cross_matrix([5, 7], toy_edges([(7, 5, 0.5)]), 0.0, tau=1.0)
    >>> c.tolist(), i.tolist(), j.tolist()
    ([[0.0, 0.5], [0.0, 0.0]], [0], [1])
    """
    r = np.asarray(rows, dtype=np.int64)
    m = r.shape[0]
    cross = np.zeros((m, m), np.float64)
    ids, owner = edges.in_edges_many(r)
    if ids.size:
        order = np.argsort(r, kind="stable")
        sorted_r = r[order]
        src = edges.src[ids]
        k = np.minimum(np.searchsorted(sorted_r, src), m - 1)
        ok = sorted_r[k] == src
        ids, pi, pj = ids[ok], owner[ok], order[k[ok]]
        cross[pi, pj] = edge_eff(edges.w[ids], edges.last_ts[ids], now, tau)
    nz_i, nz_j = np.nonzero(cross)
    return cross, nz_i.astype(np.int64), nz_j.astype(np.int64)


_GRAM_BLOCK = 24
"""Rows per block of the micrograph Gram matrix: 24 x 24 x 384 stays under OpenBLAS's
multithreading threshold (2^18 multiply-adds), so a busy machine cannot turn a 120 x 120
product into a 15 ms thread fight (measured)."""


def gram(vec: ArrayLike) -> F64:
    """``V Vᵀ`` of the micrograph's unit vectors (the similarity base of SPEC §4 stage 2a),
    blockwise and single-threaded (see ``_GRAM_BLOCK``); float64, exactly symmetric.

    >>> gram(np.array([[1, 0], [0.6, 0.8]], np.float32)).round(6).tolist()
    [[1.0, 0.6], [0.6, 1.0]]
    """
    v = np.asarray(vec, dtype=np.float32)
    m, b = v.shape[0], _GRAM_BLOCK
    out = np.empty((m, m), np.float32)
    for i in range(0, m, b):
        vi = v[i:i + b]
        for j in range(i, m, b):
            blk = vi @ v[j:j + b].T
            out[i:i + b, j:j + b] = blk
            out[j:j + b, i:i + b] = blk.T
    return out.astype(np.float64)


def _mv(p: F64, x: F64) -> F64:
    """``p @ x`` without BLAS threads (einsum), for the small micrograph matrices."""
    return np.einsum("ij,j->i", p, x)


def transition(vec: ArrayLike, state: F64, cross: F64, *, cross_boost: float,
               top_edges: int) -> tuple[F64, F64]:
    """SPEC §4 stage 2a: ``T = max(0, V Vᵀ)`` (zero diagonal) ``⊙ state[:, None] ⊙ (1 +
    CROSS_BOOST · cross)``; keep the ``top_edges`` largest entries of each column (anti-hub
    3; ties go to the lower row), then normalise columns to sum 1 (an all-zero column stays
    zero). Returns ``(kept entries before normalising, normalised T)``.

    >>> V = np.eye(3)[[0, 0, 1]]          # nodes 0 and 1 identical, node 2 orthogonal
    >>> raw, P = transition(V, np.ones(3), np.zeros((3, 3)), cross_boost=36.0, top_edges=12)
    >>> P.tolist()
    [[0.0, 1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 0.0]]
    """
    sim = np.maximum(gram(vec), 0.0)
    np.fill_diagonal(sim, 0.0)
    # work on tt = Tᵀ (row j = column j of T): the per-column operations run along
    # contiguous memory
    tt = sim.T * state[None, :] * (1.0 + cross_boost * cross.T)
    m = tt.shape[0]
    if m > top_edges:
        kth = np.partition(tt, m - top_edges, axis=1)[:, m - top_edges]  # k-th largest
        keep = tt > kth[:, None]
        tied = tt == kth[:, None]
        need = top_edges - keep.sum(axis=1)
        keep |= tied & (np.cumsum(tied, axis=1) <= need[:, None])       # ties: lower rows
        tt = np.where(keep, tt, 0.0)
    sums = tt.sum(axis=1)
    pt = np.divide(tt, sums[:, None], out=np.zeros_like(tt), where=sums[:, None] > 0)
    return np.ascontiguousarray(tt.T), np.ascontiguousarray(pt.T)


def initial_energy(energy: ArrayLike, fan: ArrayLike, m: int) -> F64:
    """SPEC §4 stage 2a: ``e0_i = energy_i / sqrt(1 + fan_i)`` for the seeds (the first
    ``len(energy)`` micrograph nodes; anti-hub 2), zero elsewhere, normalised to sum 1.

    >>> initial_energy([1.0, 1.0], [0, 3], 3).tolist()
    [0.6666666666666666, 0.3333333333333333, 0.0]
    """
    e = np.asarray(energy, dtype=np.float64) / np.sqrt(1.0 + np.asarray(fan, dtype=np.float64))
    out = np.zeros(m, np.float64)
    out[: e.shape[0]] = e
    total = out.sum()
    return out / total if total > 0 else out


def rwr(p: F64, e0: F64, *, alpha: float, steps: int) -> list[F64]:
    """SPEC §4 stage 2a: exactly ``steps`` steps of ``current ← (1 − α) T current + α e0``
    from ``current = e0``; returns ``current`` after each step (not rescaled).

    >>> [c.tolist() for c in rwr(np.zeros((2, 2)), np.array([1.0, 0.0]), alpha=0.2, steps=1)]
    [[0.2, 0.0]]
    """
    out: list[F64] = []
    cur = e0
    for _ in range(steps):
        cur = (1.0 - alpha) * _mv(p, cur) + alpha * e0
        out.append(cur)
    return out


def path_info(p: F64, e0: F64, is_seed: NDArray[np.bool_], *, alpha: float
              ) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64], F64, F64, F64]:
    """SPEC §4 stage 2a (V1 ``path_info``): with ``te0 = T e0``,
    ``c0 = α e0_i``; ``c1 = max_j α(1 − α) T[i, j] e0_j`` (argmax j is the seed);
    ``c2 = max_b (1 − α)² T[i, b] te0_b`` over non-seed ``b ≠ i`` (b is the bridge, its seed
    ``argmax_j T[b, j] e0_j``). The path is direct if ``c0 ≥ c1`` and ``c0 ≥ c2``, else 1hop
    if ``c1 ≥ c2``, else 2hop (V1's tie order); argmax ties go to the lower position.

    Returns ``(path code 0/1/2, seed position, bridge position, c0, c1, c2)``; positions
    are -1 where they do not apply.

    >>> P = np.array([[0, 0, 0], [1.0, 0, 0], [0, 1.0, 0]])   # 0 -> 1 -> 2
    >>> code, seed, bridge, *_ = path_info(P, np.array([1.0, 0, 0]),
    ...                                    np.array([True, False, False]), alpha=0.2)
    >>> code.tolist(), seed.tolist(), bridge.tolist()
    ([0, 1, 2], [-1, 0, 0], [-1, -1, 1])
    """
    m = p.shape[0]
    ar = np.arange(m)
    te0 = _mv(p, e0)
    c0 = alpha * e0
    m1 = alpha * (1.0 - alpha) * p * e0[None, :]
    s1 = np.argmax(m1, axis=1) if m else np.zeros(0, np.int64)
    c1 = m1[ar, s1]
    m2 = (1.0 - alpha) ** 2 * p * te0[None, :]
    m2[:, is_seed] = 0.0
    m2[ar, ar] = 0.0
    b = np.argmax(m2, axis=1) if m else np.zeros(0, np.int64)
    c2 = m2[ar, b]
    s2 = np.argmax(p[b, :] * e0[None, :], axis=1) if m else np.zeros(0, np.int64)
    code = np.where((c0 >= c1) & (c0 >= c2), 0, np.where(c1 >= c2, 1, 2)).astype(np.int64)
    seed = np.where(code == 1, s1, np.where(code == 2, s2, -1)).astype(np.int64)
    bridge = np.where(code == 2, b, -1).astype(np.int64)
    return code, seed, bridge, c0, c1, c2


def micrograph(nodes: NodeTable, edges: EdgeStore, seeds: SeedTable, cos_node: F64,
               cos_msg: F64, visible: NDArray[np.bool_], *, now: float,
               settings: Settings) -> MicroGraph:
    """SPEC §4 stage 2a, whole: micrograph, state, cross, transition, e0, RWR and paths.

    Settings read: ``NEARBY_SECONDS``, ``NEARBY_COS``, ``CROSS_BOOST``, ``RWR_TOP_EDGES``,
    ``RWR_ALPHA``, ``RWR_STEPS``, ``EDGE_TAU``, ``RESOURCE_TAU``, ``STRENGTH_CAP``,
    ``STRENGTH_TAU``, ``STATE_SIGMA_GAIN``, ``STATE_LONG_GAIN``.

    >>> from akasha_explorer.engine.bm25 import LexicalHits
    >>> from akasha_explorer.engine.seeds import select_seeds
    >>> from akasha_explorer.engine.toy import toy_edges, toy_nodes
    >>> nodes = toy_nodes([[1, 0], [0.9, 0.44], [0.5, 0.87]], ts=[0, 60, 9999])
    >>> edges = toy_edges([])
    >>> cos = nodes.vec.astype(float) @ [1.0, 0.0]
    >>> vis = np.ones(3, bool)
    >>> sd = select_seeds(nodes, edges, cos, cos, vis, LexicalHits.empty(), settings=Settings())
    >>> mg = micrograph(nodes, edges, sd, cos, cos, vis, now=10000.0, settings=Settings())
    >>> mg.uids, mg.path
    (['n0', 'n1'], ['direct', 'direct'])
    """
    cfg = settings
    rows = micrograph_rows(seeds.rows, nodes.ts, cos_node, visible,
                           window=cfg.NEARBY_SECONDS, min_cos=cfg.NEARBY_COS)
    m = rows.shape[0]
    if m == 0:
        return MicroGraph()
    k = len(seeds.rows)
    is_seed = np.zeros(m, bool)
    is_seed[:k] = True
    sigma = effective_sigma(nodes, rows, cfg)
    long = node_long(nodes, rows, now, cfg)
    res = np.asarray(resource_eff(nodes.resource[rows], nodes.resource_ts[rows], now,
                                  cfg.RESOURCE_TAU))
    fan = edges.fan_of(rows)
    state = node_state(sigma, long, res, fan, settings=cfg)
    cross, ci, cj = cross_matrix(rows, edges, now, tau=cfg.EDGE_TAU)
    raw, p = transition(nodes.vec[rows], state, cross, cross_boost=cfg.CROSS_BOOST,
                        top_edges=cfg.RWR_TOP_EDGES)
    e0 = initial_energy(seeds.energy_boosted, fan[:k], m)
    currents = rwr(p, e0, alpha=cfg.RWR_ALPHA, steps=cfg.RWR_STEPS)
    code, sp, bp, c0, c1, c2 = path_info(p, e0, is_seed, alpha=cfg.RWR_ALPHA)
    ti, tj = np.nonzero(raw)
    uids = [nodes.uid[i] for i in rows.tolist()]
    return MicroGraph(
        rows=rows.tolist(), uids=uids, is_seed=is_seed.tolist(),
        cos_node=cos_node[rows].tolist(), cos_msg=cos_msg[rows].tolist(),
        sigma=sigma.tolist(), long=long.tolist(), resource_eff=res.tolist(),
        fan=fan.tolist(), assistant_only=nodes.assistant_only[rows].tolist(),
        state=state.tolist(), cross_i=ci.tolist(), cross_j=cj.tolist(),
        cross_w=cross[ci, cj].tolist(), t_i=ti.tolist(), t_j=tj.tolist(),
        t_raw=raw[ti, tj].tolist(), t_p=p[ti, tj].tolist(), e0=e0.tolist(),
        te0=_mv(p, e0).tolist(), current=[c.tolist() for c in currents],
        path=[PATHS[c] for c in code.tolist()],
        path_seed=[uids[s] if s >= 0 else None for s in sp.tolist()],
        path_bridge=[uids[b] if b >= 0 else None for b in bp.tolist()],
        c0=c0.tolist(), c1=c1.tolist(), c2=c2.tolist())


def _unique(a: NDArray[np.int64]) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Sorted unique values and the inverse index (sort based: numpy's hash-based
    ``np.unique`` is several times slower on these few hundred ints)."""
    order = np.argsort(a, kind="stable")
    s = a[order]
    start = np.r_[True, s[1:] != s[:-1]] if s.size else np.zeros(0, bool)
    inv = np.empty(a.size, np.int64)
    inv[order] = np.cumsum(start) - 1
    return s[start], inv


def _per_group_top(group: NDArray[np.int64], score: F64, tie: NDArray[np.int64],
                   k: int) -> NDArray[np.int64]:
    """Positions of the top ``k`` by ``score`` within each ``group`` (ties: lower ``tie``)."""
    if group.size == 0:
        return group
    order = np.lexsort((tie, -score, group))
    g = group[order]
    starts = np.flatnonzero(np.r_[True, g[1:] != g[:-1]])
    rank = np.arange(g.size) - np.repeat(starts, np.diff(np.r_[starts, g.size]))
    return order[rank < k]


def graph_expand(nodes: NodeTable, edges: EdgeStore, cos_node: F64, cos_msg: F64,
                 visible: NDArray[np.bool_], *, now: float, settings: Settings,
                 graph_seeds: ArrayLike | None = None, direct: F64 | None = None
                 ) -> GraphExpand:
    """SPEC §4 stage 2b: one hop over the whole graph from the graph seeds, no time limit.

    Settings read: ``DENSE_TOP_K``, ``GRAPH_PER_SEED``, ``GRAPH_LIMIT``, ``GRAPH_SCALE``,
    ``GRAPH_SEED_COS_FLOOR``, ``GRAPH_COS_BASE``, ``GRAPH_LONG_GAIN``,
    ``GRAPH_DECAYED_LONG``, ``GRAPH_SETTLE`` (and with it the settlement gains
    ``DIRECT_W_OTHER``, ``RIPPLE_GAIN``, ``GAIN_SIGMA``, ``GAIN_LONG``, ``GAIN_EDGE``,
    ``HOP_1``, ``FAN_EXP``), ``EDGE_TAU``, ``RESOURCE_TAU``, ``STRENGTH_CAP``,
    ``STRENGTH_TAU``.

    Graph seeds are the top ``DENSE_TOP_K`` visible nodes by ``cos_msg``. For each seed
    ``s``: ``out(s)`` = Σ effective weights of its out-edges; for each out-edge ``s → n`` to
    a neighbour that is not a graph seed and not assistant-only: ``in(n)`` = Σ effective
    weights into ``n``; ``edge_signal = w_eff / sqrt(out(s) · in(n))`` (anti-hub 4);
    ``candidate_signal = edge_signal · max(GRAPH_SEED_COS_FLOOR, cos_node(s))``; each seed
    keeps its top ``GRAPH_PER_SEED`` neighbours (ties: lower row). Per neighbour:
    ``signal = Σ candidate_signal``, ``paths`` = seeds that kept it, ``score_graph =
    GRAPH_SCALE · signal · (1 + ln paths) · (GRAPH_COS_BASE + max(0, cos_node(n))) ·
    (1 + GRAPH_LONG_GAIN · long_n) · resource_eff_n``; the top ``GRAPH_LIMIT`` are selected.

    With ``GRAPH_SETTLE`` (**[ours]**) a neighbour settles like a micrograph node instead:
    its ``energy`` is one random-walk step from the graph seeds on RWR's scale,
    ``RIPPLE_GAIN · Σ_s share_s · edge_signal(s, n)`` over the seeds that kept it, with
    ``share_s`` = the seed's direct term over the seeds' sum; ``content_base`` = noisy-OR of
    ``energy`` and ``DIRECT_W_OTHER · direct`` (SPEC §4 stage 3's strong/weak rule), and
    ``score_graph = content_base · (1 + GAIN_SIGMA σ) · (1 + GAIN_LONG long) · (1 +
    GAIN_EDGE min(1, edge)) · resource_eff · HOP_1 / (1 + fan)^FAN_EXP`` with ``edge`` the
    strongest kept edge into it — one scale for every candidate, so a weak graph hop cannot
    outrank a direct match.

    ``graph_seeds`` may pass the seed rows when already known (V1: the dense items; with
    ``HYBRID`` **[ours]** the floor). ``direct`` (per node of the mirror) replaces
    ``max(0, cos_node)`` as the candidate's direct term (``HYBRID``: the fused relevance).
    Only edges between visible nodes count, in the sums too; edges whose effective weight is
    0 are ignored, and where ``out(s) · in(n)`` underflows to 0 (weights decayed below about
    1e-162: a recall decades after the last one) ``sqrt(out(s)) · sqrt(in(n))`` keeps the
    signal finite. ``long_n`` is decayed (**[ours]**, ``GRAPH_DECAYED_LONG``; V1 used the
    stored strength). ``max(0, cos_node(n))`` is the candidate's direct term (a negative
    cosine would make the brightness negative).

    >>> from akasha_explorer.engine.toy import toy_edges, toy_nodes
    >>> nodes = toy_nodes([[1, 0], [0, 1]])
    >>> edges = toy_edges([(0, 1, 1.0)])
    >>> cos = np.array([1.0, 0.0])
    >>> g = graph_expand(nodes, edges, cos, cos, np.ones(2, bool), now=0.0,
    ...                  settings=Settings.profile("v1", DENSE_TOP_K=1))
    >>> g.uids, g.pair_edge_signal, round(g.score_graph[0], 4)   # 6 * 1 * 1 * 0.25 * 1.105
    (['n1'], [1.0], 1.6575)
    >>> g = graph_expand(nodes, edges, cos, cos, np.ones(2, bool), now=0.0,
    ...                  settings=Settings(DENSE_TOP_K=1))      # GRAPH_SETTLE: one seed, all
    >>> g.energy, round(g.score_graph[0], 4)      # its share: 3 * 1.6 (long) * 1.5 (edge) * 0.86
    ([3.0], 5.1274)
    """
    cfg = settings
    seeds = (top_k(cos_msg, cfg.DENSE_TOP_K, visible) if graph_seeds is None
             else np.asarray(graph_seeds, dtype=np.int64))
    out = GraphExpand(seed_rows=seeds.tolist(), seed_uids=[nodes.uid[i] for i in seeds.tolist()],
                      seed_cos_node=cos_node[seeds].tolist(), seed_cos_msg=cos_msg[seeds].tolist())
    ids, owner = edges.out_edges_many(seeds)
    dst = edges.dst[ids]
    n_visible = int(np.count_nonzero(visible))
    if n_visible < nodes.n:
        ok = visible[dst]
        ids, owner, dst = ids[ok], owner[ok], dst[ok]
    w = np.asarray(edge_eff(edges.w[ids], edges.last_ts[ids], now, cfg.EDGE_TAU))
    out_sum = np.bincount(owner, weights=w, minlength=seeds.size).astype(np.float64)
    is_gseed = np.zeros(nodes.n, bool)
    is_gseed[seeds] = True
    cand = (w > 0) & ~is_gseed[dst] & ~nodes.assistant_only[dst]
    out.seed_out = out_sum.tolist()
    out.seed_considered = np.bincount(owner[cand], minlength=seeds.size).tolist()
    ids, owner, dst, w = ids[cand], owner[cand], dst[cand], w[cand]
    if ids.size == 0:
        return out
    nbrs, npos = _unique(dst)
    in_ids, in_owner = edges.in_edges_many(nbrs)
    if n_visible < nodes.n:
        vis_src = visible[edges.src[in_ids]]
        in_ids, in_owner = in_ids[vis_src], in_owner[vis_src]
    w_in = np.asarray(edge_eff(edges.w[in_ids], edges.last_ts[in_ids], now, cfg.EDGE_TAU))
    in_sum = np.bincount(in_owner, weights=w_in, minlength=nbrs.size).astype(np.float64)
    o, i_ = out_sum[owner], in_sum[npos]
    den = np.sqrt(o * i_)
    tiny = den == 0.0  # o · in underflowed (weights decayed below ~1e-162): w / 0 = inf
    if tiny.any():
        den[tiny] = np.sqrt(o[tiny]) * np.sqrt(i_[tiny])
    esig = w / den
    csig = esig * np.maximum(cfg.GRAPH_SEED_COS_FLOOR, cos_node[seeds][owner])
    keep = _per_group_top(owner, csig, dst, cfg.GRAPH_PER_SEED)  # per seed, best first
    owner, dst = owner[keep], dst[keep]
    w, o, i_, esig, csig = w[keep], o[keep], i_[keep], esig[keep], csig[keep]
    s_rows = seeds[owner]
    uid = nodes.uid
    out.pair_seed = [uid[i] for i in s_rows.tolist()]
    out.pair_seed_row = s_rows.tolist()
    out.pair_nbr = [uid[i] for i in dst.tolist()]
    out.pair_nbr_row = dst.tolist()
    out.pair_w_eff, out.pair_out, out.pair_in = w.tolist(), o.tolist(), i_.tolist()
    out.pair_edge_signal, out.pair_candidate_signal = esig.tolist(), csig.tolist()
    seed_direct = np.maximum(0.0, cos_node[seeds] if direct is None else direct[seeds])
    share = seed_direct / max(float(seed_direct.sum()), 1e-12)
    _aggregate(out, nodes, edges, dst, s_rows, csig, w, esig * share[owner], cos_node, cos_msg,
               now, cfg, direct)
    return out


def _aggregate(out: GraphExpand, nodes: NodeTable, edges: EdgeStore, dst: NDArray[np.int64],
               s_rows: NDArray[np.int64], csig: F64, w_pairs: F64, step_pairs: F64,
               cos_node: F64, cos_msg: F64, now: float, cfg: Settings,
               direct_all: F64 | None) -> None:
    kept, inv = _unique(dst)
    signal = np.bincount(inv, weights=csig, minlength=kept.size).astype(np.float64)
    paths = np.bincount(inv, minlength=kept.size)
    best = np.lexsort((s_rows, -csig, inv))
    first = best[np.r_[True, inv[best][1:] != inv[best][:-1]]]
    long = node_long(nodes, kept, now, cfg, decayed=cfg.GRAPH_DECAYED_LONG)
    res = np.asarray(resource_eff(nodes.resource[kept], nodes.resource_ts[kept], now,
                                  cfg.RESOURCE_TAU))
    direct = (np.maximum(0.0, cos_node[kept]) if direct_all is None else direct_all[kept])
    fan = edges.fan_of(kept)
    if cfg.GRAPH_SETTLE:
        # one random-walk step from the graph seeds: each seed's share of their summed
        # direct terms times the anti-hub edge signal, on RWR's scale (RIPPLE_GAIN)
        energy = cfg.RIPPLE_GAIN * np.bincount(inv, weights=step_pairs,
                                               minlength=kept.size)
        dterm = cfg.DIRECT_W_OTHER * direct
        strong, weak = np.maximum(energy, dterm), np.minimum(energy, dterm)
        base = strong + weak * np.maximum(0.0, 1.0 - strong)
        w_best = np.zeros(kept.size)
        np.maximum.at(w_best, inv, w_pairs)
        sigma = effective_sigma(nodes, kept, cfg)
        score = (base * (1.0 + cfg.GAIN_SIGMA * sigma) * (1.0 + cfg.GAIN_LONG * long)
                 * (1.0 + cfg.GAIN_EDGE * np.minimum(1.0, w_best)) * res * cfg.HOP_1
                 / (1.0 + fan) ** cfg.FAN_EXP)
        out.energy, out.content_base, out.edge = energy.tolist(), base.tolist(), w_best.tolist()
    else:
        score = (cfg.GRAPH_SCALE * signal * (1.0 + np.log(paths)) * (cfg.GRAPH_COS_BASE + direct)
                 * (1.0 + cfg.GRAPH_LONG_GAIN * long) * res)
    sel = np.zeros(kept.size, bool)
    sel[top_k(score, cfg.GRAPH_LIMIT)] = True
    uid = nodes.uid
    out.rows = kept.tolist()
    out.uids = [uid[i] for i in out.rows]
    out.signal, out.paths = signal.tolist(), paths.tolist()
    out.cos_node, out.cos_msg = cos_node[kept].tolist(), cos_msg[kept].tolist()
    out.long, out.resource_eff = long.tolist(), res.tolist()
    out.fan = fan.tolist()
    out.score_graph = score.tolist()
    out.best_seed = [uid[i] for i in s_rows[first].tolist()]
    out.selected = sel.tolist()
