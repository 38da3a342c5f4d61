"""SPEC §4 — one recall, five stages, as a pure function of the mirror: :func:`recall`
returns a :class:`~akasha_explorer.engine.trace.RecallTrace`; :func:`plan_writeback`
turns it into a write-back plan (stage 5) that
:func:`~akasha_explorer.engine.writeback.apply_plan` writes into the mirror.

Nothing here reads the clock, a file or a store; the same mirror, query vector, lexical
hits, ``now`` and settings give a bit-identical trace.

Decisions
---------
Where SPEC.md leaves a choice open, the engine does this (each is also in the docstring
of the function concerned):

1. **Visibility.** ``visible`` defaults to ``alive & (ts <= now)``; a caller's mask is
   AND-ed with ``alive``. Invisible nodes are never seeds, micrograph nodes, graph seeds
   or neighbours, dense items, and their edges count in no graph_expand sum. ``fan`` is the
   node's degree in the mirror (all alive COACT edges, V1's ``fan_counts``).
2. **cos_msg** is the max over all messages of a visible node.
3. **Ties.** Every top-k is exact with ties to the lower row (:func:`~.seeds.top_k`). The
   per-column top ``RWR_TOP_EDGES`` keeps exactly k entries (V1 kept every entry tied with
   the k-th). argmax ties (path seed, bridge) go to the lower micrograph position.
4. **FTS seeds.** Hits are mapped to nodes in first-occurrence order and counted once per
   node (a node with two hit messages is boosted once); ``bm25_rank`` is the 1-based rank
   of its first hit. Hits on forgotten messages or invisible nodes are skipped.
5. **Micrograph order.** Seeds in seed order, then neighbours in ascending row order
   (V1 scanned per seed); "within NEARBY_SECONDS" is inclusive.
6. **Paths.** V1's tie order (direct if ``c0 ≥ c1, c2``; else 1hop if ``c1 ≥ c2``); a
   direct path names no seed. A non-seed with no incoming transition is "direct" with
   ``c0 = 0`` (V1).
7. **Bridge promotion** uses the normalised state (V1's ``candidate.state``); several
   children accumulate the max, the bridge's seed is the last child's (V1).
8. **graph_expand.** The candidate's cosine term is ``max(0, cos_node(n))`` (the direct
   term; a negative cosine would make a negative brightness); edges with zero effective
   weight are ignored; the trace keeps each seed's kept pairs (with how many neighbours
   were considered), not every edge read.
9. **Merging candidates.** A node's final score is its best *passing* score (activation
   pool), else its best score; its source is the label of that role (ties: the micrograph
   role). ``ranking()`` orders all candidates by it.
10. **RELEVANCE_FLOOR [ours]** applies the activation threshold to Graph candidates and,
    when stage 1 found no relevant seed (only the Dense(FB) fallback: nothing above
    DENSE_SEED_MIN, no lexical hit, no BlackHole), lets nothing pass: the threshold alone
    cannot make an unrelated query activate nothing, because fallback seeds carry
    ``ripple ≈ 3 · current`` by construction. dense_items are still returned.
11. **Suppressed reasons** add ``over_k`` (passed, outranked beyond ACTIVATION_K) and
    ``no_relevant_seed`` to SPEC's ``below_threshold`` and ``soft_hit``.
12. **ripple_items**: Graph candidates follow the same threshold rule as in activation;
    duplicates are byte-identical node vectors (the engine holds no text); the cut to
    ``max(24, 3 · max(10, RIPPLE_LIMIT))`` comes after removing dense items and duplicates.
13. **Write-back.** A new edge is ``bounded_add(0, EDGE_LR · Δ, EDGE_CAP)`` (= ``EDGE_LR ·
    Δ`` below the cap); the reinforce boost ``b_A`` multiplies the causal and anti-causal
    Δ only (SPEC); an edge updated twice in one plan (only when ``T`` is activated) gets
    both updates in order; depression multiplies the *stored* weight of every other alive
    out-edge of each strengthened source (also edges to nodes the recall could not see)
    and leaves its ``last_ts`` alone; ``A == T`` causal/anti edges are skipped.
14. **bounded_add** also clamps at the cap (**[ours]**, see :mod:`.dynamics`): a score
    above 1 times a reinforce boost can make a step larger than the cap.
15. ``cos_node`` and the message cosines are computed with ``np.einsum`` — the same numbers
    as ``nodes.vec @ q`` up to float32 rounding, but single-threaded, so the result does not
    depend on the BLAS thread count, and measured 2–10× faster than a contended BLAS gemv.
    A node whose vector is its one message's is read once (:meth:`~.state.NodeTable.cosines`).
16. ``session`` is recorded in the trace; no formula uses it (SPEC names it as an input
    only). ``q`` must be finite, of the mirror's dimension and of unit length (±1e-3); it
    is not re-normalised.
17. A micrograph carrier that is also a selected Graph candidate is a candidate (kind
    ``graph`` in the frame).
18. ``edge`` in the settlement is ``min(1, max_j cross[i, j])`` as SPEC says (the essay's
    "divided by 2.0" is not applied).
19. ``USE_SALIENCE`` off makes σ = 0 in BlackHole selection, state and the salience gain;
    the trace records the σ used.
20. **Reproducible sums.** Every sum over a node's edges (``out(s)``, ``in(n)``) runs in
    the EdgeStore's canonical adjacency order (by the other end's row), and the micrograph
    similarities are computed blockwise in float32 (the vectors' precision) without BLAS
    threads, so a mirror rebuilt from the store gives a bit-identical trace.

>>> from akasha_explorer.engine.toy import toy_edges, toy_nodes
>>> nodes = toy_nodes([[1, 0], [0.8, 0.6], [0, 1]])
>>> t = recall(nodes, toy_edges([(0, 2, 1.0)]), np.array([1, 0], np.float32),
...            LexicalHits.empty(), now=1000.0, settings=Settings.profile("v1"))
>>> t.seeds.source, t.activation.uids, t.ranking()[:2]
(['Dense', 'Dense'], ['n1', 'n0'], ['n1', 'n0'])

The default profile (v2) fuses relevance first; n2, the next turn after n1 in the toy's
one session, gets context from it:

>>> t = recall(nodes, toy_edges([(0, 2, 1.0)]), np.array([1, 0], np.float32),
...            LexicalHits.empty(), now=1000.0, settings=Settings())
>>> t.floor.uids, t.floor.sources
(['n0', 'n1', 'n2'], ['Dense', 'Dense', 'Context'])
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..config import Settings
from ..errors import InvalidInput
from .bm25 import LexicalHits
from .hybrid import floor_items, hybrid_seeds, relevance
from .ripple import graph_expand, micrograph
from .seeds import select_seeds, top_k
from .settle import dense_items, groups, settle
from .state import EdgeStore, NodeTable
from .trace import RecallTrace, Relevance
from .writeback import WritebackPlan, compute_plan

__all__ = ["plan_writeback", "recall"]


@lru_cache(maxsize=16)
def _settings_dict(settings: Settings) -> dict[str, Any]:
    return settings.to_dict()


def _query_vector(nodes: NodeTable, q: ArrayLike) -> np.ndarray:
    v = np.asarray(q, dtype=np.float32).ravel()
    if v.shape[0] != nodes.dim:
        raise InvalidInput(f"query vector has dimension {v.shape[0]}, the memory uses "
                           f"{nodes.dim}; embed the query with the store's model")
    if not np.all(np.isfinite(v)):
        raise InvalidInput("query vector has NaN or inf; check the embedding model output")
    norm = float(np.linalg.norm(v.astype(np.float64)))
    if abs(norm - 1.0) > 1e-3:
        raise InvalidInput(f"query vector has norm {norm:.4f}; L2-normalise it first")
    return v


def _visible(nodes: NodeTable, visible: ArrayLike | None, now: float) -> np.ndarray:
    if visible is None:
        return nodes.alive & (nodes.ts <= now)
    vis = np.asarray(visible, dtype=bool)
    if vis.shape != (nodes.n,):
        raise InvalidInput(f"visible mask has shape {vis.shape}, expected ({nodes.n},): one "
                           "flag per node of the mirror")
    return vis & nodes.alive


def recall(
    nodes: NodeTable,
    edges: EdgeStore,
    q: ArrayLike,
    lexical: LexicalHits,
    *,
    now: float,
    settings: Settings,
    visible: ArrayLike | None = None,
    query: str = "",
    session: str | None = None,
    windows: Sequence[tuple[float, float, str]] = (),
    filler: ArrayLike | None = None,
    asks: ArrayLike | None = None,
) -> RecallTrace:
    """SPEC §4 stages 1–4: recall for one query over the mirror; nothing is written.

    Settings read: ``HYBRID`` (which stage-1 path runs), ``DENSE_TOP_K``, and every setting
    its stages read: :func:`~.seeds.select_seeds` or :func:`~.hybrid.relevance`,
    :func:`~.hybrid.floor_items` and :func:`~.hybrid.hybrid_seeds`;
    :func:`~.ripple.micrograph`; :func:`~.ripple.graph_expand`; :func:`~.settle.settle`;
    :func:`~.settle.groups`.

    Parameters
    ----------
    nodes, edges
        The in-memory mirror (read only).
    q
        The L2-normalised float32 query vector.
    lexical
        BM25 hits of the query's lexical terms (:func:`~.bm25.bm25_rank`).
    now
        Time of the recall (seconds); every decay is read at ``now``.
    settings
        The constants (recorded in the trace).
    visible
        Optional bool mask over nodes; default ``alive & (ts <= now)``.
    query, session
        Recorded in the trace.
    windows
        Time windows ``(start, end, phrase)`` the query named
        (:func:`akasha_explorer.text.timewords.time_windows`), used with ``TIME_PRIOR``.
    filler
        Optional bool mask over nodes: turns with nothing to remember (greetings,
        acknowledgements), demoted by ``FILLER_FACTOR`` (:func:`~.hybrid.relevance`).
    asks
        Optional bool mask over messages: those that ask something; the turn after a turn
        whose matching message asks takes its relevance by ``ANSWER_HANDOFF``
        (:func:`~.hybrid.relevance`).

    Returns
    -------
    RecallTrace
        Seeds, micrograph and RWR, graph_expand, settlement, the three groups and the
        suppressed candidates. See the module docstring for the decisions taken where
        SPEC is silent.

    >>> from akasha_explorer.engine.toy import toy_edges, toy_nodes
    >>> nodes = toy_nodes([[1, 0]])
    >>> recall(nodes, toy_edges([]), [1.0, 0.0], LexicalHits.empty(), now=-1.0,
    ...        settings=Settings()).counts["seeds"]      # the node is in the future
    0
    """
    cfg = settings
    qv = _query_vector(nodes, q)
    vis = _visible(nodes, visible, now)
    n_vis = int(vis.sum())
    qlist = [float(x) for x in qv.tolist()]
    if n_vis == 0:
        return RecallTrace.empty(query=query, q=qlist, now=now, session=session,
                                 settings=dict(_settings_dict(cfg)), n_nodes=nodes.n,
                                 n_edges=int(np.count_nonzero(edges.alive)))
    cos_node, cos_msg = nodes.cosines(qv)
    top_msg = top_k(cos_msg, cfg.DENSE_TOP_K, vis)
    dense = dense_items(nodes, cos_msg, cos_node, vis, settings=cfg, rows=top_msg)
    direct: NDArray[np.float64] | None = None
    if cfg.HYBRID:
        rel, direct = relevance(nodes, cos_msg, vis, lexical, settings=cfg, windows=windows,
                                q=qv, filler=None if filler is None
                                else np.asarray(filler, dtype=bool),
                                asks=None if asks is None else np.asarray(asks, dtype=bool))
        floor = floor_items(rel, cos_node, settings=cfg)
        seeds = hybrid_seeds(nodes, edges, cos_node, cos_msg, vis, lexical, rel, floor,
                             settings=cfg)
        graph_seeds = np.asarray(floor.rows, np.int64)
    else:  # V1: dense items are the floor and the graph seeds
        rel, floor = Relevance(), dense
        seeds = select_seeds(nodes, edges, cos_node, cos_msg, vis, lexical, settings=cfg)
        graph_seeds = top_msg
    micro = micrograph(nodes, edges, seeds, cos_node, cos_msg, vis, now=now, settings=cfg)
    graph = graph_expand(nodes, edges, cos_node, cos_msg, vis, now=now, settings=cfg,
                         graph_seeds=graph_seeds, direct=direct)
    sett = settle(micro, seeds, settings=cfg,
                  direct=None if direct is None else direct[micro.rows])
    act, rip, sup = groups(micro, sett, graph, floor, nodes.vec, relevant=seeds.relevant,
                           settings=cfg)
    counts = {"seeds": len(seeds.rows), "pool": len(micro.rows),
              "graph": sum(graph.selected), "activated": len(act), "dense": len(dense),
              "ripple": len(rip), "suppressed": len(sup)}
    return RecallTrace(query=query, q=qlist, now=float(now), session=session,
                       settings=dict(_settings_dict(cfg)), n_nodes=nodes.n, n_visible=n_vis,
                       n_edges=int(np.count_nonzero(edges.alive)),
                       seeds=seeds, micro=micro, graph=graph, settle=sett, dense=dense,
                       activation=act, ripple=rip, suppressed=sup, relevant=seeds.relevant,
                       counts=counts, relevance=rel, floor=floor)


def plan_writeback(
    trace: RecallTrace,
    nodes: NodeTable,
    edges: EdgeStore,
    current_row: int,
    *,
    now: float,
    settings: Settings,
    reinforce: bool = False,
) -> WritebackPlan:
    """SPEC §4 stage 5: the write-back plan of a recall's ``activation_items`` with the
    current node at ``current_row``; attaches it to ``trace.writeback`` and returns it.

    Settings read: those of :func:`~.writeback.compute_plan`.

    Activated nodes are found by uid (their recorded rows are only a hint), with
    ``s_A`` = activation score and ``direct_A = max(0, cos_node)``. Nothing is written:
    pass the plan to :func:`~.writeback.apply_plan` (and the store's journal) to commit.

    >>> from akasha_explorer.engine.toy import toy_edges, toy_nodes
    >>> nodes, edges = toy_nodes([[1, 0], [0, 1]]), toy_edges([])
    >>> t = recall(nodes, edges, [1.0, 0.0], LexicalHits.empty(), now=60.0,
    ...            settings=Settings())
    >>> p = plan_writeback(t, nodes, edges, 1, now=60.0, settings=Settings())
    >>> t.writeback is p, p.edges.kind[:2], p.applied
    (True, ['causal', 'anti'], False)
    """
    a = trace.activation
    rows = []
    for u, r in zip(a.uids, a.rows, strict=True):
        if 0 <= r < nodes.n and nodes.uid[r] == u:
            rows.append(r)
        elif u in nodes.index:
            rows.append(nodes.index[u])
        else:
            raise InvalidInput(f"activated node {u!r} is not in this mirror; plan the "
                               "write-back on the mirror the recall ran on")
    plan = compute_plan(nodes, edges, rows, a.scores, a.direct, current_row, now=now,
                        settings=settings, reinforce=reinforce)
    trace.writeback = plan
    return plan
