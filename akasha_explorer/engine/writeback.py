"""SPEC §4 stage 5 — write-back as a *plan* of absolute new values, and applying it.

A recall's activated nodes ``A`` (scores ``s_A``) and the current node ``T`` (the turn the
recall served) become:

- per node: ``strength ← bounded_add(strength_eff, STRENGTH_LR · s, STRENGTH_CAP)``,
  ``resource ← resource_eff · max(RESOURCE_FLOOR, 1 − RESOURCE_COST · min(1, s))``, both
  stamped ``now``, ``recall_count += 1`` (§3);
- per edge (STDP + Hebb): ``A → T`` with ``Δ = STDP_CAUSAL · s_A · b_A``, ``T → A`` with
  ``Δ = STDP_ANTI · s_A · b_A``, every activated pair ``A ↔ B`` both ways with
  ``Δ = sqrt(s_A · s_B)``; each by the §3 edge rule ``w ← bounded_add(w_eff, EDGE_LR · Δ,
  EDGE_CAP)``, ``last_ts ← now``, ``co_count += 1`` (a new edge starts at
  ``bounded_add(0, EDGE_LR · Δ, EDGE_CAP) = EDGE_LR · Δ``);
- heterosynaptic depression: every source that had an edge strengthened has each of its
  *other* alive out-edges' stored weight multiplied by ``1 − HETERO_DEPRESSION`` (its
  ``last_ts`` is left alone).

The plan carries node uids beside mirror rows and stores only absolute values, so the store
layer can journal it (:meth:`WritebackPlan.to_dict`), and :func:`apply_plan` can apply it
again after a crash, by uid, any number of times with the same result.

>>> import numpy as np
>>> from akasha_explorer.config import Settings
>>> from akasha_explorer.engine.state import EdgeStore, NodeTable
>>> nodes = NodeTable(dim=2)
>>> for k in range(3):
...     _ = nodes.add_node(f"n{k}", ts=0.0, session="s", vector=[1.0, 0.0], sigma=0.0,
...                        strength=2.1, resource=1.0, assistant_only=False,
...                        msg_vectors=[[1.0, 0.0]], msg_ts=[0.0], msg_uids=[f"m{k}"])
>>> edges = EdgeStore()
>>> plan = compute_plan(nodes, edges, [0, 1], [1.0, 0.5], [0.9, 0.5], 2, now=60.0,
...                     settings=Settings())
>>> plan.edges.kind
['causal', 'anti', 'causal', 'anti', 'pair', 'pair']
>>> round(plan.edges.w_after[0], 6)   # new edge n0 -> n2 starts at EDGE_LR * 1.0
0.12
>>> apply_plan(plan, nodes, edges); edges.count, int(nodes.recall_count[0])
(6, 1)
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ..config import Settings
from ..errors import InvalidInput, NotFound
from ._codec import dumps, from_plain, to_plain
from .dynamics import bounded_add, edge_eff, resource_eff, strength_eff
from .state import EdgeStore, NodeTable

__all__ = [
    "Depressions",
    "EdgeUpdates",
    "NodeUpdates",
    "WritebackPlan",
    "apply_plan",
    "compute_plan",
    "link_plan",
    "plan_edge_ids",
    "reinforce_boost",
]


@dataclass
class NodeUpdates:
    """Per activated node (columns): score and state before → after (absolute values)."""

    uids: list[str] = field(default_factory=list)
    rows: list[int] = field(default_factory=list)
    score: list[float] = field(default_factory=list)
    strength_before: list[float] = field(default_factory=list)
    strength_ts_before: list[float] = field(default_factory=list)
    strength_eff: list[float] = field(default_factory=list)
    strength_after: list[float] = field(default_factory=list)
    resource_before: list[float] = field(default_factory=list)
    resource_ts_before: list[float] = field(default_factory=list)
    resource_eff: list[float] = field(default_factory=list)
    resource_after: list[float] = field(default_factory=list)
    recall_before: list[int] = field(default_factory=list)
    recall_after: list[int] = field(default_factory=list)


@dataclass
class EdgeUpdates:
    """Per strengthened edge, in application order (columns).

    ``kind`` is ``"causal"`` (A → T), ``"anti"`` (T → A) or ``"pair"`` (A ↔ B); ``boost`` the
    reinforce factor ``b_A`` used in ``delta``; ``new`` whether the edge did not exist;
    ``w_before`` / ``last_ts_before`` the stored values (0.0 / None for a new edge),
    ``w_eff_before`` the decayed weight at ``now``; ``w_after`` / ``co_after`` the absolute
    values written (``last_ts`` becomes the plan's ``now``).
    """

    src_uid: list[str] = field(default_factory=list)
    dst_uid: list[str] = field(default_factory=list)
    src: list[int] = field(default_factory=list)
    dst: list[int] = field(default_factory=list)
    kind: list[str] = field(default_factory=list)
    delta: list[float] = field(default_factory=list)
    boost: list[float] = field(default_factory=list)
    new: list[bool] = field(default_factory=list)
    w_before: list[float] = field(default_factory=list)
    last_ts_before: list[float | None] = field(default_factory=list)
    w_eff_before: list[float] = field(default_factory=list)
    w_after: list[float] = field(default_factory=list)
    co_before: list[int] = field(default_factory=list)
    co_after: list[int] = field(default_factory=list)


@dataclass
class Depressions:
    """Edges weakened by heterosynaptic depression: stored weight before → after.

    ``sources`` (rows) and ``factor`` (``1 − HETERO_DEPRESSION``) say how the rows were
    made: every alive out-edge of each source that the plan did not strengthen, its stored
    weight times ``factor``. They are not part of the record (a plan read back from JSON
    has ``factor`` None); the store layer journals them instead of the rows
    (:meth:`~akasha_explorer.store.mirror.Mirror.journal_plan`).
    """

    src_uid: list[str] = field(default_factory=list)
    dst_uid: list[str] = field(default_factory=list)
    src: list[int] = field(default_factory=list)
    dst: list[int] = field(default_factory=list)
    w_before: list[float] = field(default_factory=list)
    w_after: list[float] = field(default_factory=list)
    sources: list[int] = field(default_factory=list, compare=False,
                               metadata={"record": False})
    factor: float | None = field(default=None, compare=False, metadata={"record": False})


@dataclass
class WritebackPlan:
    """The whole write-back of one recall (SPEC §4 stage 5, §5), JSON-ready by uid."""

    now: float
    current_uid: str
    current_row: int
    reinforce: bool
    reinforce_boost: float
    nodes: NodeUpdates
    edges: EdgeUpdates
    depressed: Depressions
    applied: bool = False

    def __post_init__(self) -> None:
        self._hint: tuple[int, int, int, np.ndarray, np.ndarray] | None = None
        """(nodes, edges, edges.version, strengthened ids found, depressed ids) at planning."""
        self._written: tuple[int, int, np.ndarray, np.ndarray] | None = None
        """(edges, edges.version, strengthened ids, depressed ids) right after
        :func:`apply_plan`."""

    def to_dict(self) -> dict[str, Any]:
        """Plain dict (what the journal stores).

        >>> p = WritebackPlan(1.0, "t", 0, False, 1.0, NodeUpdates(), EdgeUpdates(), Depressions())
        >>> WritebackPlan.from_dict(p.to_dict()) == p
        True
        """
        out: dict[str, Any] = to_plain(self)
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> WritebackPlan:
        """Inverse of :meth:`to_dict`."""
        return from_plain(cls, data)

    def to_json(self) -> str:
        """Compact JSON (floats via ``repr``; round-trips exactly).

        >>> p = WritebackPlan(0.1, "t", 0, True, 3.0, NodeUpdates(), EdgeUpdates(), Depressions())
        >>> WritebackPlan.from_json(p.to_json()) == p
        True
        """
        return dumps(self)

    @classmethod
    def from_json(cls, text: str) -> WritebackPlan:
        """Inverse of :meth:`to_json`."""
        return cls.from_dict(json.loads(text))


def reinforce_boost(direct: ArrayLike, *, reinforce: bool, settings: Settings) -> np.ndarray:
    """SPEC §4 stage 5: ``b_A = 1 + (B − 1) · min(1, direct_A / REINFORCE_DIRECT)`` when the
    turn is marked "reinforce" (B = ``REINFORCE_BOOST``), else 1.

    Settings read: ``REINFORCE_BOOST``, ``REINFORCE_DIRECT``.

    >>> reinforce_boost([0.3, 0.9], reinforce=True, settings=Settings()).tolist()
    [2.0, 3.0]
    >>> reinforce_boost([0.3], reinforce=False, settings=Settings()).tolist()
    [1.0]
    """
    d = np.asarray(direct, dtype=np.float64)
    if not reinforce:
        return np.ones_like(d)
    b = settings.REINFORCE_BOOST
    return 1.0 + (b - 1.0) * np.minimum(1.0, np.maximum(0.0, d) / settings.REINFORCE_DIRECT)


def _node_updates(nodes: NodeTable, rows: np.ndarray, s: np.ndarray, now: float,
                  cfg: Settings) -> NodeUpdates:
    s_before, s_ts = nodes.strength[rows], nodes.strength_ts[rows]
    r_before, r_ts = nodes.resource[rows], nodes.resource_ts[rows]
    s_eff = np.asarray(strength_eff(s_before, s_ts, now, cfg.STRENGTH_TAU))
    s_after = np.asarray(bounded_add(s_eff, cfg.STRENGTH_LR * s, cfg.STRENGTH_CAP))
    r_eff = np.asarray(resource_eff(r_before, r_ts, now, cfg.RESOURCE_TAU))
    r_after = r_eff * np.maximum(cfg.RESOURCE_FLOOR, 1.0 - cfg.RESOURCE_COST * np.minimum(1.0, s))
    rc = nodes.recall_count[rows]
    return NodeUpdates(
        uids=[nodes.uid[i] for i in rows.tolist()], rows=rows.tolist(), score=s.tolist(),
        strength_before=s_before.tolist(), strength_ts_before=s_ts.tolist(),
        strength_eff=s_eff.tolist(), strength_after=s_after.tolist(),
        resource_before=r_before.tolist(), resource_ts_before=r_ts.tolist(),
        resource_eff=r_eff.tolist(), resource_after=r_after.tolist(),
        recall_before=rc.tolist(), recall_after=(rc + 1).tolist())


def _edge_list(rows: list[int], s: list[float], b: list[float], t: int,
               cfg: Settings) -> tuple[list[int], list[int], list[str], list[float], list[float]]:
    src: list[int] = []
    dst: list[int] = []
    kind: list[str] = []
    delta: list[float] = []
    boost: list[float] = []
    for a, sa, ba in zip(rows, s, b, strict=True):
        if a == t:
            continue
        src += [a, t]
        dst += [t, a]
        kind += ["causal", "anti"]
        delta += [cfg.STDP_CAUSAL * sa * ba, cfg.STDP_ANTI * sa * ba]
        boost += [ba, ba]
    for i in range(len(rows)):
        for j in range(i + 1, len(rows)):
            d = math.sqrt(s[i] * s[j])
            src += [rows[i], rows[j]]
            dst += [rows[j], rows[i]]
            kind += ["pair", "pair"]
            delta += [d, d]
            boost += [1.0, 1.0]
    return src, dst, kind, delta, boost


def compute_plan(
    nodes: NodeTable,
    edges: EdgeStore,
    rows: ArrayLike,
    scores: ArrayLike,
    direct: ArrayLike,
    current_row: int,
    *,
    now: float,
    settings: Settings,
    reinforce: bool = False,
) -> WritebackPlan:
    """SPEC §4 stage 5 (and §3): the write-back plan of one recall; nothing is changed.

    Settings read: ``STRENGTH_CAP``, ``STRENGTH_LR``, ``STRENGTH_TAU``, ``RESOURCE_COST``,
    ``RESOURCE_FLOOR``, ``RESOURCE_TAU``, ``EDGE_LR``, ``EDGE_CAP``, ``EDGE_TAU``,
    ``STDP_CAUSAL``, ``STDP_ANTI``, ``HETERO_DEPRESSION``, ``REINFORCE_BOOST``,
    ``REINFORCE_DIRECT``.

    Parameters
    ----------
    nodes, edges
        The mirror, read only.
    rows, scores, direct
        Activated node rows (activation order), their scores ``s_A`` and
        ``direct_A = max(0, cos_node)`` (used by the reinforce boost only).
    current_row
        Row of the current node ``T``; edges ``A → T`` / ``T → A`` with ``A == T`` are
        skipped, pairs are not.
    now
        Time of the write-back; every written ``strength_ts``/``resource_ts``/``last_ts``.
    reinforce
        The turn is marked "reinforce": ``b_A`` of :func:`reinforce_boost`.

    Notes
    -----
    An edge hit twice in one plan (only when ``T`` is itself activated: ``A → T`` causal and
    pair) gets both updates in order, the second starting from the first's result.
    Depression covers every alive out-edge of a source that was not strengthened, whatever
    the recall could see (it acts on the store, not on the query's view).

    >>> from akasha_explorer.engine.state import EdgeStore, NodeTable
    >>> nodes = NodeTable(dim=1)
    >>> for k in range(3):
    ...     _ = nodes.add_node(f"n{k}", ts=0.0, session="s", vector=[1.0], sigma=0.0,
    ...                        strength=3.0, resource=1.0, assistant_only=False,
    ...                        msg_vectors=[[1.0]], msg_ts=[0.0], msg_uids=[f"m{k}"])
    >>> edges = EdgeStore(); _ = edges.upsert(0, 1, w=1.0, last_ts=0.0, co_count=3)
    >>> p = compute_plan(nodes, edges, [0], [0.5], [0.8], 2, now=0.0, settings=Settings())
    >>> p.nodes.strength_after, p.depressed.w_after   # strength at cap; 0 -> 1 depressed
    ([3.0], [0.95])
    """
    cfg = settings
    r = np.asarray(rows, dtype=np.int64).ravel()
    s = np.asarray(scores, dtype=np.float64).ravel()
    d = np.asarray(direct, dtype=np.float64).ravel()
    t = int(current_row)
    if not 0 <= t < nodes.n or not nodes.alive[t]:
        raise InvalidInput(f"current node row {t} is not an alive node of this mirror; "
                           "add the turn first, then plan its write-back")
    if not (r.shape == s.shape == d.shape):
        raise InvalidInput("rows, scores and direct must have the same length")
    b = reinforce_boost(d, reinforce=reinforce, settings=cfg)
    node_up = _node_updates(nodes, r, s, now, cfg)
    src, dst, kind, delta, boost = _edge_list(r.tolist(), s.tolist(), b.tolist(), t, cfg)
    edge_up, eid = _edge_updates(nodes, edges, src, dst, kind, delta, boost, now, cfg)
    dep, dep_ids = _depressions(nodes, edges, src, eid[eid >= 0], cfg)
    plan = WritebackPlan(now=float(now), current_uid=nodes.uid[t], current_row=t,
                         reinforce=bool(reinforce), reinforce_boost=float(cfg.REINFORCE_BOOST),
                         nodes=node_up, edges=edge_up, depressed=dep)
    plan._hint = (id(nodes), id(edges), edges.version, eid, dep_ids)
    return plan


def link_plan(nodes: NodeTable, edges: EdgeStore, a: int, b: int, *, now: float,
              settings: Settings) -> WritebackPlan:
    """A person's confirmed link between nodes ``a`` and ``b`` as a write-back plan
    (**[ours]**; SPEC §6/§7 leave approving a suggested link open).

    Settings read: ``EDGE_LR``, ``EDGE_CAP``, ``EDGE_TAU``, ``REINFORCE_BOOST``.

    It counts as one co-activation of the pair at full score: both edges ``a → b`` and
    ``b → a`` take the §3 edge rule with ``Δ = 1`` (the §4.5 Hebb pair term
    ``sqrt(s_A · s_B)`` with both scores 1), kind ``"link"``. No node state changes and no
    heterosynaptic depression: nothing was recalled. ``current_uid`` is ``a``.

    >>> from akasha_explorer.engine.toy import toy_nodes
    >>> p = link_plan(toy_nodes([[1.0], [1.0]]), EdgeStore(), 0, 1, now=5.0,
    ...               settings=Settings())
    >>> p.edges.kind, p.edges.w_after, p.edges.new
    (['link', 'link'], [0.12, 0.12], [True, True])
    """
    cfg = settings
    for r in (a, b):
        if not 0 <= r < nodes.n or not nodes.alive[r]:
            raise InvalidInput(f"node row {r} is not an alive node of this mirror")
    if a == b:
        raise InvalidInput("a link joins two different nodes")
    up, _ = _edge_updates(nodes, edges, [a, b], [b, a], ["link", "link"], [1.0, 1.0],
                          [1.0, 1.0], now, cfg)
    return WritebackPlan(now=float(now), current_uid=nodes.uid[a], current_row=int(a),
                         reinforce=False, reinforce_boost=float(cfg.REINFORCE_BOOST),
                         nodes=NodeUpdates(), edges=up, depressed=Depressions())


def _edge_updates(nodes: NodeTable, edges: EdgeStore, src: list[int], dst: list[int],
                  kind: list[str], delta: list[float], boost: list[float], now: float,
                  cfg: Settings) -> tuple[EdgeUpdates, np.ndarray]:
    k = len(src)
    eid = edges.find_many(src, dst)
    have = eid >= 0
    e = np.where(have, eid, 0)
    w0 = np.where(have, edges.w[e] if edges.count else 0.0, 0.0)
    last0 = np.where(have, edges.last_ts[e] if edges.count else 0.0, now)
    co0 = np.where(have, edges.co_count[e] if edges.count else 0, 0)
    dl = np.asarray(delta, dtype=np.float64)
    weff = np.where(have, np.asarray(edge_eff(w0, last0, now, cfg.EDGE_TAU)), 0.0)
    after = np.asarray(bounded_add(weff, cfg.EDGE_LR * dl, cfg.EDGE_CAP))
    new = ~have
    co1 = co0 + 1
    last_before: list[float | None] = [float(x) if h else None
                                       for x, h in zip(last0.tolist(), have.tolist(), strict=True)]
    keys = [(a << 32) | c for a, c in zip(src, dst, strict=True)]
    if len(set(keys)) < k:  # T activated: the same edge twice, applied in order
        seen: dict[int, int] = {}
        for i, key in enumerate(keys):
            p = seen.get(key)
            if p is not None:
                w0[i], last_before[i], co0[i], new[i] = after[p], float(now), co1[p], False
                weff[i] = after[p]
                after[i] = float(bounded_add(after[p], cfg.EDGE_LR * dl[i], cfg.EDGE_CAP))
                co1[i] = co1[p] + 1
            seen[key] = i
    uid = nodes.uid
    up = EdgeUpdates(
        src_uid=[uid[i] for i in src], dst_uid=[uid[i] for i in dst], src=list(src),
        dst=list(dst), kind=list(kind), delta=dl.tolist(), boost=list(boost),
        new=new.tolist(), w_before=w0.tolist(), last_ts_before=last_before,
        w_eff_before=weff.tolist(), w_after=after.tolist(), co_before=co0.tolist(),
        co_after=co1.tolist())
    return up, eid


def _depressions(nodes: NodeTable, edges: EdgeStore, src: list[int], touched: np.ndarray,
                 cfg: Settings) -> tuple[Depressions, np.ndarray]:
    sources = list(dict.fromkeys(src))
    ids, _ = edges.out_edges_many(sources)
    ids = ids[~np.isin(ids, touched)]
    factor = 1.0 - cfg.HETERO_DEPRESSION
    w0 = edges.w[ids]
    w1 = w0 * factor
    s_rows, d_rows = edges.src[ids].tolist(), edges.dst[ids].tolist()
    uid = nodes.uid
    dep = Depressions(src_uid=[uid[i] for i in s_rows], dst_uid=[uid[i] for i in d_rows],
                      src=s_rows, dst=d_rows, w_before=w0.tolist(), w_after=w1.tolist(),
                      sources=sources, factor=factor)
    return dep, ids


def _row(nodes: NodeTable, uid: str) -> int:
    i = nodes.index.get(uid)
    if i is None or not nodes.alive[i]:
        raise NotFound(f"node {uid!r} of a write-back plan is not in the mirror (forgotten?); "
                       "drop the plan's journal record or re-open the store")
    return i


def apply_plan(plan: WritebackPlan, nodes: NodeTable, edges: EdgeStore) -> None:
    """Write a plan's absolute values into the mirror (SPEC §1 write path, §4 stage 5).

    Nodes and edges are located by uid (rows are only a hint), so a plan journaled before a
    crash re-applies to a rebuilt mirror. Applying the same plan twice leaves the mirror as
    applying it once. Sets ``plan.applied``.

    >>> from akasha_explorer.engine.state import EdgeStore, NodeTable
    >>> nodes = NodeTable(dim=1)
    >>> for k in range(2):
    ...     _ = nodes.add_node(f"n{k}", ts=0.0, session="s", vector=[1.0], sigma=0.0,
    ...                        strength=1.0, resource=1.0, assistant_only=False,
    ...                        msg_vectors=[[1.0]], msg_ts=[0.0], msg_uids=[f"m{k}"])
    >>> edges = EdgeStore()
    >>> p = compute_plan(nodes, edges, [0], [1.0], [1.0], 1, now=10.0, settings=Settings())
    >>> apply_plan(p, nodes, edges); apply_plan(p, nodes, edges)
    >>> edges.count, int(nodes.recall_count[0]), p.applied
    (2, 1, True)
    """
    nu = plan.nodes
    for k, u in enumerate(nu.uids):
        nodes.set_state(_row(nodes, u), strength=nu.strength_after[k], strength_ts=plan.now,
                        resource=nu.resource_after[k], resource_ts=plan.now,
                        recall_count=nu.recall_after[k])
    eu = plan.edges
    row = _row_cache(nodes)
    k = len(eu.src_uid)
    hint = plan._hint
    fresh = (hint is not None and hint[0] == id(nodes) and hint[1] == id(edges)
             and hint[2] == edges.version and hint[3].shape[0] == k == len(eu.src)
             and bool(nodes.alive[np.r_[eu.src, eu.dst].astype(np.int64)].all()))
    ids = np.zeros(0, np.int64)
    if k:  # the planning's rows and edge lookups, while the same mirror has no new edge
        src, dst = ((eu.src, eu.dst) if fresh else
                    ([row(u) for u in eu.src_uid], [row(u) for u in eu.dst_uid]))
        ids = edges.upsert_many(src, dst, w=eu.w_after, last_ts=np.full(k, plan.now),
                                co_count=eu.co_after,
                                found=(hint[2], hint[3]) if fresh and hint else None)
    dp = plan.depressed
    dep = np.zeros(0, np.int64)
    if dp.src_uid:
        dep = _depressed_ids(plan, nodes, edges, row)
        edges.set_weights(dep, dp.w_after)
    plan._written = (id(edges), edges.version, ids, dep)
    plan.applied = True


def plan_edge_ids(plan: WritebackPlan, nodes: NodeTable, edges: EdgeStore) -> np.ndarray:
    """Edge ids of every edge an applied plan wrote — strengthened, then depressed — each
    once, in that order (what the store layer journals).

    >>> from akasha_explorer.engine.toy import toy_nodes
    >>> nodes, edges = toy_nodes([[1.0], [1.0], [1.0]]), EdgeStore()
    >>> _ = edges.upsert(0, 1, w=1.0, last_ts=0.0, co_count=1)
    >>> p = compute_plan(nodes, edges, [0], [1.0], [1.0], 2, now=0.0, settings=Settings())
    >>> apply_plan(p, nodes, edges); plan_edge_ids(p, nodes, edges).tolist()   # 0->2, 2->0, 0->1
    [1, 2, 0]
    """
    eu = plan.edges
    done = plan._written
    if done is not None and done[0] == id(edges) and done[1] == edges.version:
        up, dep = done[2].tolist(), done[3]  # what apply_plan wrote, no edge made since
    else:
        up = edges.find_many(eu.src, eu.dst).tolist()
        dep = (_depressed_ids(plan, nodes, edges, _row_cache(nodes))
               if plan.depressed.src_uid else np.zeros(0, np.int64))
    ids = dict.fromkeys(e for e in up if e >= 0)
    ids.update(dict.fromkeys(dep.tolist()))
    return np.fromiter(ids, np.int64, len(ids))


def _row_cache(nodes: NodeTable) -> Any:
    """``uid -> row`` of ``nodes``, remembering what it looked up."""
    cache: dict[str, int] = {}

    def row(u: str) -> int:
        i = cache.get(u)
        if i is None:
            i = cache[u] = _row(nodes, u)
        return i

    return row


def _depressed_ids(plan: WritebackPlan, nodes: NodeTable, edges: EdgeStore,
                   row: Any) -> np.ndarray:
    dp = plan.depressed
    hint = plan._hint
    if hint is not None and hint[0] == id(nodes) and hint[1] == id(edges):
        ids = hint[4]
        if (ids.shape[0] == len(dp.src) and bool(edges.alive[ids].all())
                and np.array_equal(edges.src[ids], dp.src)
                and np.array_equal(edges.dst[ids], dp.dst)):
            return ids
    out = np.empty(len(dp.src_uid), np.int64)
    for k in range(len(dp.src_uid)):
        e = edges.find(row(dp.src_uid[k]), row(dp.dst_uid[k]))
        if e < 0:
            raise NotFound(f"edge {dp.src_uid[k]!r} -> {dp.dst_uid[k]!r} of a write-back plan "
                           "is not in the mirror; re-open the store to rebuild it")
        out[k] = e
    return out
