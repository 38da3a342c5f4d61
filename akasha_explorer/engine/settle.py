"""SPEC §4 stages 3–4 — settlement (V1 ``score_candidates``) and the three groups.

Stage 3 scores every micrograph node; only seeds and promoted bridges are candidates, the
rest only carried energy. Stage 4 merges those candidates with the Graph candidates of
stage 2b into ``activation_items`` (what write-back learns from), ``ripple_items`` (soft
recall, shown to the LLM) and keeps ``dense_items`` (top ``cos_msg``, the accuracy floor).

>>> _ripple_limit(Settings())
30
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from ..config import Settings
from .seeds import top_k
from .state import NodeTable, NodeVectors
from .trace import GraphExpand, ItemList, MicroGraph, SeedTable, Settlement

__all__ = ["dense_items", "groups", "settle"]

_PATH_CODE = {"direct": 0, "1hop": 1, "2hop": 2}


def settle(micro: MicroGraph, seeds: SeedTable, *, settings: Settings,
           direct: NDArray[np.float64] | None = None) -> Settlement:
    """SPEC §4 stage 3 for every micrograph node.

    Settings read: ``DIRECT_W_SEED``, ``DIRECT_W_OTHER``, ``RIPPLE_GAIN``, ``GAIN_SIGMA``,
    ``GAIN_LONG``, ``GAIN_EDGE``, ``HOP_DIRECT``, ``HOP_1``, ``HOP_2``,
    ``ASSISTANT_ONLY_PENALTY``, ``FAN_EXP``, ``BRIDGE_CHILD``, ``BRIDGE_DIRECT``,
    ``BRIDGE_STATE``.

    ``direct = max(0, cos_node)`` (with ``HYBRID`` **[ours]**, the caller passes the fused
    relevance ``norm`` of each micrograph node instead); ``w_d`` = DIRECT_W_SEED for a seed
    else DIRECT_W_OTHER;
    ``state_norm = min(1, state / max state)``; ``ripple = current · RIPPLE_GAIN ·
    state_norm`` (``current`` after the last step); ``strong``/``weak`` = max/min of ripple
    and ``w_d · direct``; ``content_base = strong + weak · max(0, 1 − strong)``; ``edge =
    max_j cross[i, j]``; ``score = content_base · (1 + 0.8 σ) · (1 + 0.6 long) · (1 + 0.5
    min(1, edge)) · resource_eff · hop · role / (1 + fan)^0.1``.

    Bridge promotion, children in micrograph order: a 2hop node whose bridge is not
    assistant-only sets the bridge's ``score_final = max(score_final, BRIDGE_CHILD · child
    score, BRIDGE_DIRECT · direct + BRIDGE_STATE · state_norm)`` (V1 uses the normalised
    state here), its source ``Bridge``, path ``bridge`` and seed the child's seed (the last
    child's, as V1). ``max state`` is floored at 1e-10 (V1).

    >>> mg = MicroGraph(rows=[0], uids=["a"], is_seed=[True], cos_node=[0.8], cos_msg=[0.8],
    ...                 sigma=[0.0], long=[0.7], resource_eff=[1.0], fan=[0],
    ...                 assistant_only=[False], state=[2.0], e0=[1.0], current=[[1.0]],
    ...                 path=["direct"], path_seed=[None], path_bridge=[None])
    >>> s = settle(mg, SeedTable(rows=[0], source=["Dense"]), settings=Settings())
    >>> s.ripple, s.content_base, round(s.score[0], 4)     # 3.0 * 1.42
    ([3.0], [3.0], 4.26)
    """
    cfg = settings
    m = len(micro.rows)
    if m == 0:
        return Settlement()
    f = np.asarray
    is_seed = f(micro.is_seed, bool)
    direct = (np.maximum(0.0, f(micro.cos_node, np.float64)) if direct is None
              else f(direct, np.float64))
    w_d = np.where(is_seed, cfg.DIRECT_W_SEED, cfg.DIRECT_W_OTHER)
    state = f(micro.state, np.float64)
    state_norm = np.minimum(1.0, state / max(float(state.max()), 1e-10))
    current = f(micro.current[-1] if micro.current else micro.e0, np.float64)
    ripple = current * cfg.RIPPLE_GAIN * state_norm
    dterm = w_d * direct
    strong, weak = np.maximum(ripple, dterm), np.minimum(ripple, dterm)
    base = strong + weak * np.maximum(0.0, 1.0 - strong)
    edge = np.zeros(m, np.float64)
    if micro.cross_i:
        np.maximum.at(edge, f(micro.cross_i, np.int64), f(micro.cross_w, np.float64))
    g_sigma = 1.0 + cfg.GAIN_SIGMA * f(micro.sigma, np.float64)
    g_long = 1.0 + cfg.GAIN_LONG * f(micro.long, np.float64)
    g_edge = 1.0 + cfg.GAIN_EDGE * np.minimum(1.0, edge)
    hops = np.array([cfg.HOP_DIRECT, cfg.HOP_1, cfg.HOP_2])
    hop = hops[[_PATH_CODE[p] for p in micro.path]]
    aonly = f(micro.assistant_only, bool)
    role = np.where(aonly, cfg.ASSISTANT_ONLY_PENALTY, 1.0)
    fan_pen = (1.0 + f(micro.fan, np.float64)) ** cfg.FAN_EXP
    score = (base * g_sigma * g_long * g_edge * f(micro.resource_eff, np.float64) * hop * role
             / fan_pen)
    final = score.copy()
    k = len(seeds.source)
    source = list(seeds.source) + [""] * (m - k)
    path, seed, bridge = list(micro.path), list(micro.path_seed), list(micro.path_bridge)
    promoted: list[list[str]] = [[] for _ in range(m)]
    pos = {u: i for i, u in enumerate(micro.uids)}
    for c in range(m):
        bu = micro.path_bridge[c]
        if micro.path[c] != "2hop" or bu is None:
            continue
        b = pos[bu]
        if aonly[b]:
            continue
        final[b] = max(final[b], cfg.BRIDGE_CHILD * score[c],
                       cfg.BRIDGE_DIRECT * direct[b] + cfg.BRIDGE_STATE * state_norm[b])
        source[b], path[b], seed[b], bridge[b] = "Bridge", "bridge", micro.path_seed[c], None
        promoted[b].append(micro.uids[c])
    return Settlement(
        direct=direct.tolist(), w_d=w_d.tolist(), state_norm=state_norm.tolist(),
        ripple=ripple.tolist(), strong=strong.tolist(), weak=weak.tolist(),
        content_base=base.tolist(), gain_sigma=g_sigma.tolist(), gain_long=g_long.tolist(),
        gain_edge=g_edge.tolist(), edge=edge.tolist(), hop=hop.tolist(), role=role.tolist(),
        fan_penalty=fan_pen.tolist(), score=score.tolist(), score_final=final.tolist(),
        source=source, path=path, seed=seed, bridge=bridge, promoted_by=promoted)


def dense_items(nodes: NodeTable, cos_msg: NDArray[np.float64], cos_node: NDArray[np.float64],
                visible: NDArray[np.bool_], *, settings: Settings,
                rows: NDArray[np.int64] | None = None) -> ItemList:
    """SPEC §4 stage 4: ``dense_items`` = top ``DENSE_TOP_K`` visible nodes by ``cos_msg``
    (score = ``cos_msg``, source ``Dense``, ties by row); ``rows`` may pass them when
    already computed (they are also the graph seeds).

    Settings read: ``DENSE_TOP_K``.

    >>> from akasha_explorer.engine.toy import toy_nodes
    >>> n = toy_nodes([[1, 0], [0, 1]])
    >>> dense_items(n, np.array([0.2, 0.9]), np.array([0.2, 0.9]), np.ones(2, bool),
    ...             settings=Settings()).uids
    ['n1', 'n0']
    """
    r = top_k(cos_msg, settings.DENSE_TOP_K, visible) if rows is None else rows
    return ItemList(uids=[nodes.uid[i] for i in r.tolist()], rows=r.tolist(),
                    scores=cos_msg[r].tolist(), sources=["Dense"] * r.size,
                    direct=np.maximum(0.0, cos_node[r]).tolist())


def _ripple_limit(cfg: Settings) -> int:
    return max(cfg.RIPPLE_MIN_ITEMS, cfg.RIPPLE_LIMIT_MULT * max(cfg.RIPPLE_LIMIT_FLOOR,
                                                                 cfg.RIPPLE_LIMIT))


@dataclass
class _Cand:
    uid: str
    row: int
    direct: float
    best: tuple[float, str] = (-np.inf, "")      # any role
    act: tuple[float, str] | None = None        # roles passing the activation threshold
    soft: tuple[float, str] | None = None       # roles passing threshold or soft recall

    def offer(self, score: float, source: str, passes: bool, soft: bool) -> None:
        if score > self.best[0]:
            self.best = (score, source)
        if passes and (self.act is None or score > self.act[0]):
            self.act = (score, source)
        if (passes or soft) and (self.soft is None or score > self.soft[0]):
            self.soft = (score, source)


def _candidates(micro: MicroGraph, sett: Settlement, graph: GraphExpand, *, gate: bool,
                cfg: Settings) -> list[_Cand]:
    thr = cfg.ACTIVATION_THRESHOLD
    cands: dict[str, _Cand] = {}
    for i, src in enumerate(sett.source):
        if not src:
            continue
        sc, d = sett.score_final[i], sett.direct[i]
        c = cands.setdefault(micro.uids[i], _Cand(micro.uids[i], micro.rows[i], d))
        soft = src == "Bridge" and sc >= cfg.SOFT_SCORE and d >= cfg.SOFT_DIRECT
        c.offer(sc, src, gate and sc >= thr, gate and soft)
    for k, u in enumerate(graph.uids):
        if not graph.selected[k]:
            continue
        sc = graph.score_graph[k]
        c = cands.setdefault(u, _Cand(u, graph.rows[k], max(0.0, graph.cos_node[k])))
        passes = gate and (sc >= thr or not cfg.RELEVANCE_FLOOR)
        c.offer(sc, "Graph", passes, False)
    return list(cands.values())


def _items(entries: list[tuple[float, str, _Cand]], reasons: list[str] | None = None) -> ItemList:
    return ItemList(uids=[c.uid for _, _, c in entries], rows=[c.row for _, _, c in entries],
                    scores=[s for s, _, _ in entries], sources=[src for _, src, _ in entries],
                    direct=[c.direct for _, _, c in entries], reasons=reasons or [])


def _by_score(entries: list[tuple[float, str, _Cand]]) -> list[tuple[float, str, _Cand]]:
    return sorted(entries, key=lambda e: (-e[0], e[2].row))


def groups(micro: MicroGraph, sett: Settlement, graph: GraphExpand, floor: ItemList,
           vec: NodeVectors | NDArray[np.float32], *, relevant: bool, settings: Settings
           ) -> tuple[ItemList, ItemList, ItemList]:
    """SPEC §4 stage 4: ``(activation_items, ripple_items, suppressed)``.

    Settings read: ``ACTIVATION_THRESHOLD``, ``ACTIVATION_K``, ``RELEVANCE_FLOOR``,
    ``SOFT_SCORE``, ``SOFT_DIRECT``, ``RIPPLE_LIMIT``, ``RIPPLE_LIMIT_FLOOR``,
    ``RIPPLE_LIMIT_MULT``, ``RIPPLE_MIN_ITEMS``.

    - activation: candidates (seeds, bridges) with ``score ≥ ACTIVATION_THRESHOLD``, merged
      with the selected Graph candidates (V1: they bypass the threshold; with
      ``RELEVANCE_FLOOR`` **[ours]** they need it too); per node the higher passing score
      wins (ties: the micrograph role); top ``ACTIVATION_K`` by score, ties by row.
    - ripple: the same with soft recall (Bridge items with ``score ≥ SOFT_SCORE`` and
      ``direct ≥ SOFT_DIRECT`` also pass), best first, without the nodes of ``floor`` (the
      first block: V1's ``dense_items``, or with ``HYBRID`` the fused floor)
      and without duplicate texts (the engine holds no text: a duplicate is a node whose
      vector is byte-identical to an earlier item's — identical text embeds identically),
      then cut to ``max(24, 3 · max(10, RIPPLE_LIMIT))`` items.
    - suppressed: every candidate not activated, with its best score and the reason:
      ``over_k`` (passed, outranked), ``soft_hit`` (only soft recall), ``below_threshold``,
      or ``no_relevant_seed``.
    - **[ours]** with ``RELEVANCE_FLOOR`` and no relevant seed (only the Dense(FB) fallback:
      no node above DENSE_SEED_MIN, no lexical hit, no BlackHole), nothing passes: the
      threshold alone cannot make an unrelated query activate nothing, because fallback
      seeds carry ``ripple ≈ 3 · current`` by construction.

    >>> g = GraphExpand(uids=["x"], rows=[4], score_graph=[0.1], cos_node=[0.2],
    ...                 selected=[True])
    >>> a, r, s = groups(MicroGraph(), Settlement(), g, ItemList(), np.zeros((5, 2), np.float32),
    ...                  relevant=True, settings=Settings())
    >>> a.uids, a.sources, len(s)
    (['x'], ['Graph'], 0)
    """
    cfg = settings
    gate = relevant or not cfg.RELEVANCE_FLOOR
    cands = _candidates(micro, sett, graph, gate=gate, cfg=cfg)
    act = _by_score([(*c.act, c) for c in cands if c.act is not None])
    activated = act[: cfg.ACTIVATION_K]
    chosen = {c.uid for _, _, c in activated}
    in_dense = set(floor.uids)
    seen: set[bytes] = set()
    ripple: list[tuple[float, str, _Cand]] = []
    for e in _by_score([(*c.soft, c) for c in cands if c.soft is not None]):
        key = vec[e[2].row].tobytes()
        if e[2].uid in in_dense or key in seen:
            continue
        seen.add(key)
        ripple.append(e)
    ripple = ripple[: _ripple_limit(cfg)]
    sup: list[tuple[float, str, _Cand]] = []
    reasons: dict[str, str] = {}
    for c in cands:
        if c.uid in chosen:
            continue
        if not gate:
            entry, why = c.best, "no_relevant_seed"
        elif c.act is not None:
            entry, why = c.act, "over_k"
        elif c.soft is not None:
            entry, why = c.soft, "soft_hit"
        else:
            entry, why = c.best, "below_threshold"
        sup.append((*entry, c))
        reasons[c.uid] = why
    sup = _by_score(sup)
    return (_items(activated), _items(ripple),
            _items(sup, [reasons[c.uid] for _, _, c in sup]))
