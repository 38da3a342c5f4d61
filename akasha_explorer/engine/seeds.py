"""SPEC §4 stage 1 — seeds: Dense / Dense(FB), FTS, BlackHole (V1 ``seed_pool``).

Seed order is deterministic: Dense seeds by ``cos_node`` (best first, ties by row), or the
Dense(FB) fallback likewise; then FTS-only seeds in BM25 order; then BlackHole seeds by
``cos_node``. Every top-k in the engine goes through :func:`top_k` (exact, ties by row).

>>> import numpy as np
>>> from akasha_explorer.config import Settings
>>> from akasha_explorer.engine.bm25 import LexicalHits
>>> from akasha_explorer.engine.toy import toy_edges, toy_nodes
>>> nodes = toy_nodes([[1, 0], [0.8, 0.6], [0, 1]])
>>> cos = nodes.vec.astype(np.float64) @ [1.0, 0.0]
>>> t = select_seeds(nodes, toy_edges([]), cos, cos, np.ones(3, bool),
...                  LexicalHits((), (2,), (3.0,), 3), settings=Settings())
>>> list(zip(t.uids, t.source, t.bm25_rank))
[('n0', 'Dense', None), ('n1', 'Dense', None), ('n2', 'FTS', 1)]
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..config import Settings
from .bm25 import LexicalHits
from .state import EdgeStore, NodeTable
from .trace import QueryTermRecord, SeedTable

__all__ = ["blackhole_rows", "effective_sigma", "lexical_node_ranks", "seed_table",
           "select_seeds", "top_k"]


def top_k(values: ArrayLike, k: int, mask: ArrayLike | None = None) -> NDArray[np.int64]:
    """Indices of the ``k`` largest ``values`` (only where ``mask``), best first; ties go to
    the lower index. Exact and deterministic — every top-k of SPEC §4 (pools, fallback,
    BlackHole, graph seeds, dense items, GRAPH_LIMIT) goes through it.

    For speed on long arrays, a threshold ``t`` = the k-th largest of ``4k`` block maxima
    is taken first (at least ``k`` values are ``>= t``, so every top-k value is), and only
    the values ``>= t`` are sorted.

    >>> top_k([0.1, 0.9, 0.5, 0.9], 2).tolist()
    [1, 3]
    >>> top_k([0.1, 0.9, 0.5], 5, mask=[True, False, True]).tolist()
    [2, 0]
    """
    v = np.asarray(values, dtype=np.float64)
    n = v.shape[0]
    m: NDArray[np.bool_] | None = None
    if mask is not None:
        m = np.asarray(mask, dtype=bool)
        k = min(k, int(np.count_nonzero(m)))
        v = np.where(m, v, -np.inf)
    if k <= 0 or n == 0:
        return np.zeros(0, np.int64)
    blocks = 4 * k
    if n >= 2 * blocks and n >= 64:
        size = n // blocks
        bmax = v[: blocks * size].reshape(blocks, size).max(axis=1)
        t = np.partition(bmax, blocks - k)[blocks - k]
        idx = np.flatnonzero(v >= t)
    else:
        idx = np.arange(n)
    if m is not None:
        idx = idx[m[idx]]
    order = np.lexsort((idx, -v[idx]))[:k]
    return idx[order].astype(np.int64)


def effective_sigma(nodes: NodeTable, rows: ArrayLike, settings: Settings) -> NDArray[np.float64]:
    """σ of ``rows`` as the engine uses it: the stored salience, or 0 everywhere when
    ``USE_SALIENCE`` is off (**[ours]** switch, SPEC §4).

    Settings read: ``USE_SALIENCE``.

    >>> from akasha_explorer.engine.toy import toy_nodes
    >>> nodes = toy_nodes([[1, 0]], sigma=[0.9])
    >>> effective_sigma(nodes, [0], Settings(USE_SALIENCE=False)).tolist()
    [0.0]
    """
    r = np.asarray(rows, dtype=np.int64)
    if not settings.USE_SALIENCE:
        return np.zeros(r.shape[0], np.float64)
    return np.asarray(nodes.sigma[r], dtype=np.float64)


def lexical_node_ranks(nodes: NodeTable, visible: NDArray[np.bool_], lexical: LexicalHits,
                       top: int) -> dict[int, int]:
    """Node row -> 1-based BM25 rank of its first hit message among the first ``top`` hits,
    in hit order; hits on forgotten messages or invisible nodes are skipped."""
    out: dict[int, int] = {}
    msg_alive, msg_node = nodes.msg_alive, nodes.msg_node
    for rank, mrow in enumerate(lexical.msg_rows[:top], 1):
        if not 0 <= mrow < nodes.m or not msg_alive[mrow]:
            continue
        node = int(msg_node[mrow])
        if visible[node] and node not in out:
            out[node] = rank
    return out


def select_seeds(
    nodes: NodeTable,
    edges: EdgeStore,
    cos_node: NDArray[np.float64],
    cos_msg: NDArray[np.float64],
    visible: NDArray[np.bool_],
    lexical: LexicalHits,
    *,
    settings: Settings,
) -> SeedTable:
    """SPEC §4 stage 1: the seed table of one query.

    Settings read: ``DENSE_POOL``, ``DENSE_SEED_MIN``, ``DENSE_TOP_K``, ``FTS_TOP_K``,
    ``FTS_BOOST``, ``FTS_BOOST_CAP``, ``FTS_ONLY_MAX``, ``SEED_ENERGY``, and those of
    :func:`blackhole_rows` (``BLACKHOLE_SIGMA``, ``BLACKHOLE_COS``, ``BLACKHOLE_MAX``,
    ``USE_SALIENCE``).

    - *Dense*: among the top ``DENSE_POOL`` visible nodes by ``cos_node``, those with
      ``cos_node > DENSE_SEED_MIN``; if none, the top ``DENSE_TOP_K`` as ``Dense(FB)``.
    - *FTS*: the BM25 hits (top ``FTS_TOP_K`` messages) mapped to their nodes in first-
      occurrence order; a node already a seed gets ``+FTS`` appended to its label and energy
      ``min(FTS_BOOST_CAP, e · FTS_BOOST)`` (once per node, however many of its messages
      hit); any other becomes an ``FTS`` seed, at most ``FTS_ONLY_MAX`` of them.
    - *BlackHole*: visible nodes not yet seeds with ``σ > BLACKHOLE_SIGMA`` and
      ``cos_node > BLACKHOLE_COS``, top ``BLACKHOLE_MAX`` by ``cos_node`` (none when
      ``USE_SALIENCE`` is off).

    Every seed starts with ``SEED_ENERGY``; ``energy_fan = energy_boosted / sqrt(1 + fan)``.
    Hits on forgotten messages or invisible nodes are skipped.

    >>> import numpy as np
    >>> from akasha_explorer.engine.toy import toy_edges, toy_nodes
    >>> nodes = toy_nodes([[1, 0], [0, 1]], sigma=[0.0, 0.9])
    >>> cos = np.array([0.5, 0.65])
    >>> t = select_seeds(nodes, toy_edges([(0, 1, 1.0)]), cos, cos, np.ones(2, bool),
    ...                  LexicalHits.empty(), settings=Settings())
    >>> t.source, t.fallback, [round(e, 4) for e in t.energy_fan]
    (['Dense(FB)', 'Dense(FB)'], True, [0.7071, 0.7071])
    """
    cfg = settings
    # the top DENSE_POOL by cos_node, then those above DENSE_SEED_MIN == the top DENSE_POOL
    # of those above DENSE_SEED_MIN (cheaper: usually few pass)
    above = np.flatnonzero(visible & (cos_node > cfg.DENSE_SEED_MIN))
    dense = above[top_k(cos_node[above], cfg.DENSE_POOL)]
    fallback = dense.size == 0
    if fallback:
        dense = top_k(cos_node, min(cfg.DENSE_TOP_K, cfg.DENSE_POOL), visible)
    label = "Dense(FB)" if fallback else "Dense"
    rows: list[int] = dense.tolist()
    source = [label] * len(rows)
    energy = [cfg.SEED_ENERGY] * len(rows)
    boosted = list(energy)
    pos = {r: k for k, r in enumerate(rows)}
    hits = lexical_node_ranks(nodes, visible, lexical, cfg.FTS_TOP_K)
    fts_only = 0
    for node in hits:
        k = pos.get(node)
        if k is not None:
            if "FTS" not in source[k].split("+"):
                source[k] += "+FTS"
            boosted[k] = min(cfg.FTS_BOOST_CAP, boosted[k] * cfg.FTS_BOOST)
        elif fts_only < cfg.FTS_ONLY_MAX:
            pos[node] = len(rows)
            rows.append(node)
            source.append("FTS")
            energy.append(cfg.SEED_ENERGY)
            boosted.append(cfg.SEED_ENERGY)
            fts_only += 1
    for node in blackhole_rows(nodes, cos_node, visible, rows, settings=cfg):
        rows.append(node)
        source.append("BlackHole")
        energy.append(cfg.SEED_ENERGY)
        boosted.append(cfg.SEED_ENERGY)
    return seed_table(nodes, edges, cos_node, cos_msg, lexical, rows, source, energy, boosted,
                      hits, settings=cfg, fallback=bool(fallback),
                      relevant=any(s != "Dense(FB)" for s in source))


def blackhole_rows(nodes: NodeTable, cos_node: NDArray[np.float64],
                   visible: NDArray[np.bool_], seeds: list[int], *,
                   settings: Settings) -> list[int]:
    """SPEC §4 stage 1 *BlackHole*: visible nodes not in ``seeds`` with ``σ >
    BLACKHOLE_SIGMA`` and ``cos_node > BLACKHOLE_COS``, top ``BLACKHOLE_MAX`` by ``cos_node``
    (none when ``USE_SALIENCE`` is off).

    Settings read: ``BLACKHOLE_SIGMA``, ``BLACKHOLE_COS``, ``BLACKHOLE_MAX``,
    ``USE_SALIENCE``.
    """
    cfg = settings
    if not (cfg.USE_SALIENCE and cfg.BLACKHOLE_MAX > 0):
        return []
    mask = visible & (nodes.sigma > cfg.BLACKHOLE_SIGMA) & (cos_node > cfg.BLACKHOLE_COS)
    if seeds:
        mask[np.asarray(seeds)] = False
    return top_k(cos_node, cfg.BLACKHOLE_MAX, mask).tolist()


def seed_table(nodes: NodeTable, edges: EdgeStore, cos_node: NDArray[np.float64],
               cos_msg: NDArray[np.float64], lexical: LexicalHits, rows: list[int],
               source: list[str], energy: list[float], boosted: list[float],
               bm25_rank: dict[int, int], *, settings: Settings, fallback: bool,
               relevant: bool) -> SeedTable:
    """The :class:`SeedTable` of chosen seeds: their cosines, σ, fan, ``energy_fan =
    energy_boosted / sqrt(1 + fan)`` and the query terms considered.

    Settings read: ``USE_SALIENCE``.
    """
    r = np.asarray(rows, dtype=np.int64)
    fan = edges.fan_of(r)
    e_fan = np.asarray(boosted, dtype=np.float64) / np.sqrt(1.0 + fan)
    terms = [QueryTermRecord(t.term, int(t.df), float(t.idf), bool(t.kept), t.reason)
             for t in lexical.terms]
    return SeedTable(
        rows=rows, uids=[nodes.uid[i] for i in rows], source=source,
        cos_node=cos_node[r].tolist(), cos_msg=cos_msg[r].tolist(),
        bm25_rank=[bm25_rank.get(i) for i in rows],
        sigma=effective_sigma(nodes, r, settings).tolist(), fan=fan.tolist(), energy=energy,
        energy_boosted=boosted, energy_fan=e_fan.tolist(), terms=terms, fallback=fallback,
        relevant=relevant, searched=lexical.searched)
