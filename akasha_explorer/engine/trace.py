"""SPEC §5 — :class:`RecallTrace`, the plain record of one recall a person steps through.

Every part is a dataclass of plain values (lists of numbers and strings, column-oriented:
one list per term, one entry per node), so a trace is JSON (:meth:`RecallTrace.to_json`,
exact round trip) and a DataFrame (:meth:`RecallTrace.to_frame`, one row per candidate).
Positions named ``*_i`` / ``*_j`` index the micrograph (``MicroGraph.rows[i]`` is the node
row); nodes are otherwise named by uid, with mirror rows beside them.

The parts, in stage order: :class:`SeedTable` (stage 1), :class:`MicroGraph` (stage 2a),
:class:`GraphExpand` (stage 2b), :class:`Settlement` (stage 3), :class:`ItemList` for the
three groups and the suppressed candidates (stage 4), and the
:class:`~akasha_explorer.engine.writeback.WritebackPlan` once one is computed (stage 5).

>>> t = RecallTrace.empty(query="hi", q=[1.0, 0.0], now=5.0)
>>> RecallTrace.from_json(t.to_json()) == t
True
>>> t.ranking(), t.explain("nobody")["candidate"]
([], False)
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ._codec import dumps, from_plain, to_plain
from .writeback import WritebackPlan

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "FRAME_COLUMNS",
    "GraphExpand",
    "ItemList",
    "MicroGraph",
    "QueryTermRecord",
    "RecallTrace",
    "Relevance",
    "SeedTable",
    "Settlement",
]


@dataclass
class QueryTermRecord:
    """One lexical query term: document frequency, IDF and whether it was used."""

    term: str
    df: int
    idf: float
    kept: bool
    reason: str = ""


@dataclass
class Relevance:
    """Stage 1 **[ours]** (``HYBRID``): the fused relevance of the nodes the floor, the seeds
    and the graph seeds are chosen from (every node with a BM25 hit among the top
    ``FUSION_POOL`` messages or a dense rank within ``FUSION_POOL``, and their session
    neighbours), best first.

    Per node: ``bm25`` (best BM25 of its messages, 0 without a hit) and ``lexical = bm25 /
    bm25_top``; ``cos_msg`` and ``dense = clip((cos_msg − dense_zero) / (dense_top −
    dense_zero), 0, 1)``; ``base = lexical + dense_weight · dense``; ``context =
    CONTEXT_NEIGHBOR^k · max(base of the session turns k places away)``, k up to
    ``CONTEXT_HOPS``, with ``context_from`` the turn that gave it; ``score = (base +
    context) · (1 + TIME_PRIOR)`` when the node is inside a time window the query named
    (``in_time``), else ``base + context``; ``norm = score / top score`` (settlement's
    direct term).
    """

    rows: list[int] = field(default_factory=list)
    uids: list[str] = field(default_factory=list)
    bm25: list[float] = field(default_factory=list)
    lexical: list[float] = field(default_factory=list)
    cos_msg: list[float] = field(default_factory=list)
    dense: list[float] = field(default_factory=list)
    base: list[float] = field(default_factory=list)
    context: list[float] = field(default_factory=list)
    context_from: list[str | None] = field(default_factory=list)
    score: list[float] = field(default_factory=list)
    norm: list[float] = field(default_factory=list)
    in_time: list[bool] = field(default_factory=list)
    dense_known: list[float] = field(default_factory=list)
    """How much of the node's dense score the model could know (``DENSE_KNOWABLE``): the
    fusion uses ``dense_known · dense + (1 − dense_known) · lexical`` as its dense part."""
    bm25_top: float = 0.0
    dense_top: float = 0.0
    dense_zero: float = 0.0
    dense_weight: float = 0.0
    """The dense channel's weight for this query (``FUSION_DENSE_WEIGHT``, moved towards
    ``FUSION_DENSE_WEIGHT_CJK`` by ``cjk_share``)."""
    cjk_share: float = 0.0
    """The query's CJK share, as its vector's hashed CJK part carries it (0 when the model
    reads CJK itself: ``EMBED_CJK_DIMS = 0``)."""
    windows: list[list[float]] = field(default_factory=list)
    """Time windows ``[start, end)`` the query named (``TIME_PRIOR``)."""
    window_phrases: list[str] = field(default_factory=list)
    lexical_groups: list[dict[str, Any]] = field(default_factory=list)
    """The extra lexical terms behind ``bm25``: anchors the query named by an alias
    (``ANCHOR_WEIGHT``), its words' translations (``XLING_WEIGHT``) and its one-character
    Chinese words (``CHAR_WEIGHT``) — per group its
    kind, the query word, the weight, the terms and their document frequencies."""
    apart: list[str] = field(default_factory=list)
    """The anchors the query named (as written) when no turn of the first block mentions
    one together with another of the query's words — its first lines are near misses
    ("老周的生日": turns about 老周, and 阿岚's birthday). The context block says so."""


@dataclass
class SeedTable:
    """Stage 1: seeds in seed order (Dense / Dense(FB), then FTS-only, then BlackHole).

    ``energy`` is the initial energy, ``energy_boosted`` after the FTS boost,
    ``energy_fan`` after the division by ``sqrt(1 + fan)``; ``bm25_rank`` is the 1-based rank
    of the node's best message among the BM25 hits (None if none). ``sigma`` is the value used
    (0 with ``USE_SALIENCE`` off). ``relevant`` is False when the only seeds are the Dense(FB)
    fallback (no node above DENSE_SEED_MIN, no lexical hit, no BlackHole).
    """

    rows: list[int] = field(default_factory=list)
    uids: list[str] = field(default_factory=list)
    source: list[str] = field(default_factory=list)
    cos_node: list[float] = field(default_factory=list)
    cos_msg: list[float] = field(default_factory=list)
    bm25_rank: list[int | None] = field(default_factory=list)
    sigma: list[float] = field(default_factory=list)
    fan: list[int] = field(default_factory=list)
    energy: list[float] = field(default_factory=list)
    energy_boosted: list[float] = field(default_factory=list)
    energy_fan: list[float] = field(default_factory=list)
    terms: list[QueryTermRecord] = field(default_factory=list)
    fallback: bool = False
    relevant: bool = False
    searched: str = ""
    """The lines of a query read as a transcript that ``terms`` came from (the user's:
    ``QUERY_USER_LINES``); empty when they came from the whole query."""


@dataclass
class MicroGraph:
    """Stage 2a: the micrograph and its random walk with restart.

    Per node (micrograph order): row, uid, seed flag, cos_node, cos_msg, sigma used, long,
    resource_eff, fan, assistant-only flag, ``state``, ``e0``, ``te0 = T e0``, ``current``
    after each step (``current[k]`` is step k + 1), and the path (``"direct"``, ``"1hop"``,
    ``"2hop"``) with its seed/bridge uids and the three contributions c0/c1/c2.
    ``cross_*`` lists the non-zero entries ``cross[i, j] = w_eff(j → i)``; ``t_*`` the kept
    transition entries, before (``t_raw``) and after (``t_p``) column normalisation.
    """

    rows: list[int] = field(default_factory=list)
    uids: list[str] = field(default_factory=list)
    is_seed: list[bool] = field(default_factory=list)
    cos_node: list[float] = field(default_factory=list)
    cos_msg: list[float] = field(default_factory=list)
    sigma: list[float] = field(default_factory=list)
    long: list[float] = field(default_factory=list)
    resource_eff: list[float] = field(default_factory=list)
    fan: list[int] = field(default_factory=list)
    assistant_only: list[bool] = field(default_factory=list)
    state: list[float] = field(default_factory=list)
    cross_i: list[int] = field(default_factory=list)
    cross_j: list[int] = field(default_factory=list)
    cross_w: list[float] = field(default_factory=list)
    t_i: list[int] = field(default_factory=list)
    t_j: list[int] = field(default_factory=list)
    t_raw: list[float] = field(default_factory=list)
    t_p: list[float] = field(default_factory=list)
    e0: list[float] = field(default_factory=list)
    te0: list[float] = field(default_factory=list)
    current: list[list[float]] = field(default_factory=list)
    path: list[str] = field(default_factory=list)
    path_seed: list[str | None] = field(default_factory=list)
    path_bridge: list[str | None] = field(default_factory=list)
    c0: list[float] = field(default_factory=list)
    c1: list[float] = field(default_factory=list)
    c2: list[float] = field(default_factory=list)


@dataclass
class GraphExpand:
    """Stage 2b: graph seeds, kept (seed, neighbour) pairs, and per-neighbour aggregates.

    ``seed_out`` is ``out(s)``; ``seed_considered`` how many out-neighbours passed the
    filters. ``pair_*`` lists each seed's top GRAPH_PER_SEED neighbours with ``w_eff``,
    ``out(s)``, ``in(n)``, ``edge_signal`` and ``candidate_signal``. The neighbour table holds
    every neighbour some seed kept: ``signal``, ``paths``, the factors of ``score_graph``,
    ``best_seed`` (largest candidate_signal) and ``selected`` (in the top GRAPH_LIMIT).
    """

    seed_rows: list[int] = field(default_factory=list)
    seed_uids: list[str] = field(default_factory=list)
    seed_cos_node: list[float] = field(default_factory=list)
    seed_cos_msg: list[float] = field(default_factory=list)
    seed_out: list[float] = field(default_factory=list)
    seed_considered: list[int] = field(default_factory=list)
    pair_seed: list[str] = field(default_factory=list)
    pair_seed_row: list[int] = field(default_factory=list)
    pair_nbr: list[str] = field(default_factory=list)
    pair_nbr_row: list[int] = field(default_factory=list)
    pair_w_eff: list[float] = field(default_factory=list)
    pair_out: list[float] = field(default_factory=list)
    pair_in: list[float] = field(default_factory=list)
    pair_edge_signal: list[float] = field(default_factory=list)
    pair_candidate_signal: list[float] = field(default_factory=list)
    rows: list[int] = field(default_factory=list)
    uids: list[str] = field(default_factory=list)
    signal: list[float] = field(default_factory=list)
    paths: list[int] = field(default_factory=list)
    cos_node: list[float] = field(default_factory=list)
    cos_msg: list[float] = field(default_factory=list)
    long: list[float] = field(default_factory=list)
    resource_eff: list[float] = field(default_factory=list)
    fan: list[int] = field(default_factory=list)
    score_graph: list[float] = field(default_factory=list)
    best_seed: list[str] = field(default_factory=list)
    selected: list[bool] = field(default_factory=list)
    energy: list[float] = field(default_factory=list)
    """With ``GRAPH_SETTLE`` **[ours]**: ``GRAPH_SCALE · signal · (1 + ln paths)``, the
    graph's share of the noisy-OR (empty otherwise)."""
    content_base: list[float] = field(default_factory=list)
    """With ``GRAPH_SETTLE``: noisy-OR of ``energy`` and ``DIRECT_W_OTHER · direct``."""
    edge: list[float] = field(default_factory=list)
    """With ``GRAPH_SETTLE``: the strongest kept edge into the neighbour (its edge gain)."""


@dataclass
class Settlement:
    """Stage 3: every term of the settlement, aligned with :class:`MicroGraph`.

    ``score`` is the formula's value, ``score_final`` after bridge promotion; ``source`` is
    the seed label, ``"Bridge"`` for a promoted bridge, ``""`` for a carrier (not a
    candidate); ``path`` is ``"bridge"`` for a promoted bridge, else the RWR path, with
    ``seed``/``bridge`` uids; ``promoted_by`` the 2hop children that promoted it.
    """

    direct: list[float] = field(default_factory=list)
    w_d: list[float] = field(default_factory=list)
    state_norm: list[float] = field(default_factory=list)
    ripple: list[float] = field(default_factory=list)
    strong: list[float] = field(default_factory=list)
    weak: list[float] = field(default_factory=list)
    content_base: list[float] = field(default_factory=list)
    gain_sigma: list[float] = field(default_factory=list)
    gain_long: list[float] = field(default_factory=list)
    gain_edge: list[float] = field(default_factory=list)
    edge: list[float] = field(default_factory=list)
    hop: list[float] = field(default_factory=list)
    role: list[float] = field(default_factory=list)
    fan_penalty: list[float] = field(default_factory=list)
    score: list[float] = field(default_factory=list)
    score_final: list[float] = field(default_factory=list)
    source: list[str] = field(default_factory=list)
    path: list[str] = field(default_factory=list)
    seed: list[str | None] = field(default_factory=list)
    bridge: list[str | None] = field(default_factory=list)
    promoted_by: list[list[str]] = field(default_factory=list)


@dataclass
class ItemList:
    """Stage 4: one group, best first — uid, row, score, source, direct (and for the
    suppressed list, the reason: ``below_threshold``, ``soft_hit``, ``over_k`` or
    ``no_relevant_seed``)."""

    uids: list[str] = field(default_factory=list)
    rows: list[int] = field(default_factory=list)
    scores: list[float] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)
    direct: list[float] = field(default_factory=list)
    reasons: list[str] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.uids)


FRAME_COLUMNS = (
    "uid", "row", "kind", "source", "path", "seed", "bridge", "cos_node", "cos_msg", "sigma",
    "long", "fan", "direct", "w_d", "current", "state", "state_norm", "ripple", "strong", "weak",
    "content_base", "gain_sigma", "gain_long", "gain_edge", "edge", "resource_eff", "hop",
    "role", "fan_penalty", "score_settle", "graph_signal", "graph_paths", "score_graph",
    "score", "activated", "in_ripple", "in_dense", "suppressed_reason",
)
"""Columns of :meth:`RecallTrace.to_frame`, in order."""


@dataclass
class RecallTrace:
    """Everything one recall computed (SPEC §5); see the module docstring for the parts.

    ``q`` is the query vector, ``settings`` the settings used (a dict), ``relevant`` whether
    stage 1 found relevant seeds (RELEVANCE_FLOOR closes the gate otherwise), ``counts`` what
    V1's inspector shows (seeds, pool, graph, activated, dense, ripple, suppressed).
    ``writeback`` is set by ``plan_writeback``; its ``applied`` flag by ``apply_plan``.
    ``messages`` (node uid -> its stored messages as dicts: uid, node, role, speaker, ts,
    text, sha256, flags) is filled by ``Memory.recall`` for the items :meth:`context`
    shows; the engine itself holds no text and leaves it empty. ``log_uid`` names the
    query-log row of the recall (not part of the record).
    """

    query: str
    q: list[float]
    now: float
    session: str | None
    settings: dict[str, Any]
    n_nodes: int
    n_visible: int
    n_edges: int
    seeds: SeedTable
    micro: MicroGraph
    graph: GraphExpand
    settle: Settlement
    dense: ItemList
    activation: ItemList
    ripple: ItemList
    suppressed: ItemList
    relevant: bool
    counts: dict[str, int]
    writeback: WritebackPlan | None = None
    messages: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    relevance: Relevance = field(default_factory=Relevance)
    floor: ItemList = field(default_factory=ItemList)
    """The first block an agent sees: with ``HYBRID`` the top ``DENSE_TOP_K`` by fused
    relevance, else ``dense_items`` (V1)."""
    log_uid: str | None = field(default=None, compare=False, metadata={"record": False})
    """The query-log row this recall wrote (``Memory.recall`` sets it; a commit marks that
    row committed). Not part of the record: not serialised, not compared."""
    written_back: dict[str, Any] | None = field(default=None, compare=False,
                                                metadata={"record": False})
    """Whether this logged recall was written back — ``{"committed": bool}`` and, when
    it was, ``node`` (the turn it served), ``by`` and ``at`` (wall-clock seconds); set by
    a commit and by ``Memory.logged_recall``; None: not known. Not part of the record."""
    server_ref: str | None = field(default=None, compare=False, metadata={"record": False})
    """The name a served store's client knows this trace by (``akasha serve`` keeps each
    client's recalls; see :mod:`akasha_explorer.server.codec`). Not part of the record."""

    @property
    def graph_expand(self) -> GraphExpand:
        """Stage 2b under the stage's name: the same object as the ``graph`` field (kept so
        under that name in the record); ``graph`` elsewhere names a store's Kuzu adapter.

        >>> t = RecallTrace.empty()
        >>> t.graph_expand is t.graph
        True
        """
        return self.graph

    # -- construction / serialisation ---------------------------------------------------
    @classmethod
    def empty(cls, *, query: str = "", q: list[float] | None = None, now: float = 0.0,
              session: str | None = None, settings: dict[str, Any] | None = None,
              n_nodes: int = 0, n_edges: int = 0) -> RecallTrace:
        """The trace of a recall over no visible node.

        >>> RecallTrace.empty().counts["seeds"]
        0
        """
        counts = dict.fromkeys(("seeds", "pool", "graph", "activated", "dense", "ripple",
                                "suppressed"), 0)
        return cls(query=query, q=list(q or []), now=float(now), session=session,
                   settings=dict(settings or {}), n_nodes=n_nodes, n_visible=0,
                   n_edges=n_edges, seeds=SeedTable(), micro=MicroGraph(),
                   graph=GraphExpand(), settle=Settlement(), dense=ItemList(),
                   activation=ItemList(), ripple=ItemList(), suppressed=ItemList(),
                   relevant=False, counts=counts)

    def to_dict(self) -> dict[str, Any]:
        """Plain nested dict (JSON-ready; no NaN or inf anywhere)."""
        out: dict[str, Any] = to_plain(self)
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RecallTrace:
        """Inverse of :meth:`to_dict`."""
        return from_plain(cls, data)

    def to_json(self) -> str:
        """Compact JSON (SPEC §5); ``RecallTrace.from_json(t.to_json()) == t`` exactly.

        >>> t = RecallTrace.empty(query="引流条", q=[0.6, 0.8], now=1.5)
        >>> RecallTrace.from_json(t.to_json()).query
        '引流条'
        """
        return dumps(self)

    @classmethod
    def from_json(cls, text: str) -> RecallTrace:
        """Inverse of :meth:`to_json`."""
        return cls.from_dict(json.loads(text))

    # -- views -----------------------------------------------------------------------------
    def _final(self) -> dict[str, tuple[float, str, str]]:
        """uid -> (final score, source, suppressed reason) for every candidate."""
        out: dict[str, tuple[float, str, str]] = {}
        a = self.activation
        for k, u in enumerate(a.uids):
            out[u] = (a.scores[k], a.sources[k], "")
        s = self.suppressed
        for k, u in enumerate(s.uids):
            out[u] = (s.scores[k], s.sources[k], s.reasons[k])
        return out

    def _rows(self) -> list[dict[str, Any]]:
        final = self._final()
        dense = set(self.dense.uids)
        ripple = set(self.ripple.uids)
        active = set(self.activation.uids)
        g = self.graph
        gpos = {u: k for k, u in enumerate(g.uids) if g.selected[k]}
        nan = math.nan
        rows: list[dict[str, Any]] = []
        m, sett = self.micro, self.settle
        for i, u in enumerate(m.uids):
            src = sett.source[i]
            kind = ("seed" if m.is_seed[i] else "bridge") if src else "carrier"
            r: dict[str, Any] = {
                "uid": u, "row": m.rows[i], "kind": kind, "path": sett.path[i],
                "seed": sett.seed[i], "bridge": sett.bridge[i], "cos_node": m.cos_node[i],
                "cos_msg": m.cos_msg[i], "sigma": m.sigma[i], "long": m.long[i],
                "fan": m.fan[i], "current": m.current[-1][i] if m.current else nan,
                "state": m.state[i], "resource_eff": m.resource_eff[i],
                "score_settle": sett.score_final[i],
            }
            for name in ("direct", "w_d", "state_norm", "ripple", "strong", "weak",
                         "content_base", "gain_sigma", "gain_long", "gain_edge", "edge", "hop",
                         "role", "fan_penalty"):
                r[name] = getattr(sett, name)[i]
            rows.append(r)
        by_uid = {r["uid"]: r for r in rows}
        for u, k in gpos.items():
            found = by_uid.get(u)
            if found is not None:
                r = found
                if r["kind"] == "carrier":
                    r["kind"] = "graph"
            else:
                r = {"uid": u, "row": g.rows[k], "kind": "graph", "path": "1hop",
                     "seed": g.best_seed[k], "bridge": None, "cos_node": g.cos_node[k],
                     "cos_msg": g.cos_msg[k], "long": g.long[k], "fan": g.fan[k],
                     "direct": max(0.0, g.cos_node[k]), "resource_eff": g.resource_eff[k]}
                rows.append(r)
                by_uid[u] = r
            r["graph_signal"] = g.signal[k]
            r["graph_paths"] = g.paths[k]
            r["score_graph"] = g.score_graph[k]
        for r in rows:
            u = r["uid"]
            score, source, reason = final.get(u, (nan, "", "carrier"))
            r["score"], r["source"], r["suppressed_reason"] = score, source, reason
            r["activated"] = u in active
            r["in_ripple"] = u in ripple
            r["in_dense"] = u in dense
        return rows

    def to_frame(self) -> pd.DataFrame:
        """One row per candidate (seeds, bridges, Graph candidates) and per carrier (the rest
        of the micrograph, ``kind == "carrier"``), one column per term (:data:`FRAME_COLUMNS`);
        terms that do not apply are NaN/None.

        >>> RecallTrace.empty().to_frame().shape
        (0, 38)
        """
        import pandas as pd

        return pd.DataFrame(self._rows(), columns=list(FRAME_COLUMNS))

    def first_block(self) -> ItemList:
        """The items an agent sees first: the floor (V1: ``dense_items``; with ``HYBRID`` the
        fused floor). A trace saved before floors existed falls back to ``dense``.

        >>> RecallTrace.empty().first_block().uids
        []
        """
        return self.floor if self.floor.uids or not self.dense.uids else self.dense

    def ranking(self) -> list[str]:
        """Candidate uids by final score, best first (ties: lower row first).

        >>> RecallTrace.empty().ranking()
        []
        """
        items = [(-sc, row, u) for u, row, sc in zip(
            self.activation.uids + self.suppressed.uids,
            self.activation.rows + self.suppressed.rows,
            self.activation.scores + self.suppressed.scores, strict=True)]
        return [u for _, _, u in sorted(items)]

    def context(self, budget_tokens: int | None = None, style: str = "brief",
                **options: Any) -> Any:
        """The context block an agent's prompt receives (issue 9): handles ``[n]``, verbatim
        text within ``budget_tokens`` (default: the ``CONTEXT_BUDGET`` the trace recorded).
        See :func:`akasha_explorer.brief.context.build_context` for ``style`` and options.

        A convenience for users (``mem.recall(...).context()``): the engine holds no text
        and imports no other area at import time, so the builder is imported here, lazily,
        when the method is called — the one import of the engine outside ``config`` and
        ``errors`` (``tests/test_engine_trace.py`` allows exactly this one). It reads the
        messages ``Memory.recall`` put on :attr:`messages`.

        >>> RecallTrace.empty().context().text
        'memory: no relevant memory for this query.'
        """
        from ..brief.context import build_context
        budget = budget_tokens or int(self.settings.get("CONTEXT_BUDGET", 1000))
        options.setdefault("floor_items", int(self.settings.get("CONTEXT_FLOOR_ITEMS", 3)))
        return build_context(self, budget, style, **options)

    def why_not(self, uid: str, evidence: dict[str, Any] | None = None) -> dict[str, Any]:
        """Where turn ``uid`` fell out of this recall, as a plain value: ``stage`` (the
        last stage it reached: ``"delivered"``, ``"activated"``, ``"groups"``,
        ``"settlement"``, ``"micrograph"``, ``"graph_expand"``, ``"seeds"``,
        ``"not_reached"``, ``"invisible"``), ``reason`` (one sentence) and ``numbers``
        (what the reason rests on, against the threshold or the last item taken).

        The trace knows the nodes some stage touched. For the others, ``evidence`` — what
        the store knows of the node (its mirror ``row``, ``ts``, ``alive``,
        ``cos_node``, ``cos_msg``, its ``terms``; ``Memory.why_not`` fills it) — says
        whether the dense or the word channel could have seen it.

        >>> t = RecallTrace.empty(query="lan", now=10.0)
        >>> t.why_not("n1")["stage"]
        'not_reached'
        >>> t.why_not("n1", {"ts": 20.0, "alive": True})["stage"]
        'invisible'
        """
        cfg = self.settings
        out: dict[str, Any] = {"uid": uid, "stage": "", "reason": "", "numbers": {}}

        def said(stage: str, reason: str, **numbers: Any) -> dict[str, Any]:
            out.update(stage=stage, reason=reason,
                       numbers={k: v for k, v in numbers.items() if v is not None})
            return out

        first = self.first_block()
        if uid in first.uids:
            k = first.uids.index(uid)
            return said("delivered", f"delivered: #{k + 1} of the first block the agent "
                        "reads", rank=k + 1, score=first.scores[k])
        act = self.activation
        if uid in act.uids:
            k = act.uids.index(uid)
            return said("activated", f"activated (#{k + 1} of {len(act)}, written back on "
                        f"commit) but not in the first block of {len(first)}: it follows "
                        "the first block in what the agent receives", rank=k + 1,
                        score=act.scores[k],
                        first_block_last=first.scores[-1] if first.scores else None)
        for name, items in (("ripple", self.ripple), ("dense", self.dense)):
            if uid in items.uids:
                k = items.uids.index(uid)
                return said("groups", f"in the {name} group (#{k + 1}): passed, but neither "
                            "activated nor in the first block", rank=k + 1,
                            score=items.scores[k])
        sup = self.suppressed
        if uid in sup.uids:
            k = sup.uids.index(uid)
            why, score = sup.reasons[k], sup.scores[k]
            last = act.scores[-1] if act.scores else None
            threshold = cfg.get("ACTIVATION_THRESHOLD")
            text = {
                "over_k": f"passed the threshold ({score:.3f} ≥ {threshold}) but "
                          f"{len(act)} scored higher (ACTIVATION_K); the last activated "
                          f"scored {last if last is None else round(last, 3)}",
                "below_threshold": f"its settled score {score:.3f} is below "
                                   f"ACTIVATION_THRESHOLD {threshold}",
                "soft_hit": f"only a soft hit: its score {score:.3f} passes SOFT_SCORE "
                            f"{cfg.get('SOFT_SCORE')} but not ACTIVATION_THRESHOLD "
                            f"{threshold}",
                "no_relevant_seed": "nothing passes this recall: stage 1 found no relevant "
                                    "seed (only the dense fallback), so the relevance floor "
                                    "let no candidate through",
            }.get(why, why)
            row = next((r for r in self._rows() if r["uid"] == uid), {})
            return said("settlement", text, score=score, why=why, threshold=threshold,
                        last_activated=last, direct=row.get("direct"),
                        ripple=row.get("ripple"), state=row.get("state"),
                        resource_eff=row.get("resource_eff"), fan=row.get("fan"))
        m = self.micro
        if uid in m.uids:
            i = m.uids.index(uid)
            return said("micrograph", f"reached by the random walk ({m.path[i]} path) but "
                        "only as a carrier: it passed energy on and, with no seed label, "
                        "was not a candidate", state=m.state[i], cos_node=m.cos_node[i],
                        cos_msg=m.cos_msg[i], resource_eff=m.resource_eff[i])
        g = self.graph
        if uid in g.uids:
            k = g.uids.index(uid)
            kept = [sc for sc, sel in zip(g.score_graph, g.selected, strict=True) if sel]
            return said("graph_expand", f"a neighbour of graph seed {g.best_seed[k]} with "
                        f"score {g.score_graph[k]:.3f}, outside the {len(kept)} kept "
                        f"(GRAPH_LIMIT {cfg.get('GRAPH_LIMIT')}); the last kept scored "
                        f"{min(kept) if kept else float('nan'):.3f}",
                        score_graph=g.score_graph[k], last_kept=min(kept) if kept else None,
                        signal=g.signal[k], paths=g.paths[k])
        ev = evidence or {}
        if ev.get("alive") is False:
            return said("invisible", "forgotten: no recall sees it")
        if ev.get("row") is not None and int(ev["row"]) >= self.n_nodes:
            return said("invisible", "stored after this recall was made: it did not exist "
                        "for it", row=int(ev["row"]), n_nodes=self.n_nodes)
        if ev.get("ts") is not None and float(ev["ts"]) > self.now:
            return said("invisible", "said after this recall's time: invisible to it",
                        ts=float(ev["ts"]), now=self.now)
        rel = self.relevance
        kept_terms = [t.term for t in self.seeds.terms if t.kept]
        missing = ([t for t in kept_terms if t not in set(ev["terms"])]
                   if ev.get("terms") is not None else None)
        if uid in rel.uids:
            k = rel.uids.index(uid)
            seeded = [rel.score[rel.uids.index(u)] for u in self.seeds.uids if u in rel.uids]
            return said("seeds", f"in the fused relevance pool (#{k + 1} of {len(rel.uids)}, "
                        f"score {rel.score[k]:.3f}) but not a seed, and no stage reached it "
                        "from one", score=rel.score[k], lexical=rel.lexical[k],
                        cos_msg=rel.cos_msg[k], dense=rel.dense[k],
                        last_seed=min(seeded) if seeded else None, missing_terms=missing)
        pool_cos = min(rel.cos_msg) if rel.cos_msg else None
        cos = ev.get("cos_msg")
        parts = []
        if missing is not None:
            parts.append("it has none of the query's words" if len(missing) == len(kept_terms)
                         else f"it lacks {', '.join(missing)}" if missing else
                         "it has the query's words but ranked below the BM25 pool")
        if cos is not None:
            parts.append(f"its best message cosine {cos:.3f} is below the dense pool's "
                         f"{pool_cos:.3f}" if pool_cos is not None and cos < pool_cos else
                         f"its best message cosine is {cos:.3f}")
        return said("not_reached", "no channel reached it: " + ("; ".join(parts) if parts
                    else "not among the word or dense hits, nor a co-activation neighbour "
                    "of a seed"), cos_msg=cos, cos_node=ev.get("cos_node"),
                    dense_pool_lowest=pool_cos, dense_seed_min=cfg.get("DENSE_SEED_MIN"),
                    query_terms=kept_terms, missing_terms=missing)

    def explain(self, uid: str) -> dict[str, Any]:
        """Every term for one node (``candidate`` True), or why it was not a candidate.

        >>> RecallTrace.empty().explain("x")["reason"]
        'not in the micrograph nor among the graph_expand neighbours'
        """
        for r in self._rows():
            if r["uid"] == uid:
                out = {c: r.get(c) for c in FRAME_COLUMNS}
                out["candidate"] = r["kind"] != "carrier"
                if not out["candidate"]:
                    out["reason"] = "micrograph carrier: carried energy, has no source label"
                return out
        g = self.graph
        if uid in g.uids:
            k = g.uids.index(uid)
            return {"uid": uid, "row": g.rows[k], "candidate": False,
                    "score_graph": g.score_graph[k],
                    "reason": "graph_expand neighbour outside the top GRAPH_LIMIT"}
        if uid in self.dense.uids:
            k = self.dense.uids.index(uid)
            return {"uid": uid, "row": self.dense.rows[k], "candidate": False,
                    "in_dense": True, "cos_msg": self.dense.scores[k],
                    "reason": "dense item only: not a seed, not in the micrograph, not a "
                              "graph_expand neighbour"}
        return {"uid": uid, "candidate": False,
                "reason": "not in the micrograph nor among the graph_expand neighbours"}
