"""What each stage of one recall touched, for the :class:`~.stepper.RecallStepper` — a pure
function of a :class:`~akasha_explorer.engine.trace.RecallTrace` (and its write-back plan):
no store, no widget, no recomputation.

:func:`stage_views` returns one :class:`StageView` per stage of SPEC §4 — seeds, RWR
micrograph, graph_expand, settlement, the three groups, write-back — naming the nodes the
stage touched, their ring (a seed source or a group), halo (energy or score, 0..1), size,
the edges it used, a caption and its tables (DataFrames with every term).

Every stage says which list the agent receives — the context block, ``[1]``, ``[2]``, … in
:func:`~akasha_explorer.analysis.methods.sent_order` (the first block, then ripple, then
the other activated turns) — and how its own list relates to it: each table of turns has
the column :data:`SENT_COLUMN` (``#n``: the agent's ``[n]``; ``not sent``), and each
caption ends with :func:`context_caption`. Settlement's score order and stage 4's groups
are not that order.

>>> import numpy as np
>>> from akasha_explorer.config import Settings
>>> from akasha_explorer.engine.bm25 import LexicalHits
>>> from akasha_explorer.engine.recall import recall
>>> from akasha_explorer.engine.toy import toy_edges, toy_nodes
>>> t = recall(toy_nodes([[1, 0], [0.8, 0.6], [0, 1]]), toy_edges([(0, 2, 1.0)]),
...            np.array([1, 0], np.float32), LexicalHits.empty(), now=1000.0,
...            settings=Settings())
>>> views = stage_views(t)
>>> [v.name for v in views]
['seeds', 'rwr', 'graph_expand', 'settlement', 'groups', 'writeback']
>>> views[0].rings, views[1].edges[0]["kind"]
({'n0': 'Dense', 'n1': 'Dense', 'n2': 'Context'}, 'transition')
>>> views[4].rings["n1"], views[5].caption.startswith("Stage 5 — write-back: no plan")
('activation', True)
>>> views[3].frame[SENT_COLUMN].tolist()  # settlement's best is the agent's [2]
['#2', '#1', '#3']
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from ..analysis.methods import sent_order
from ..brief.context import item_line
from ..engine.trace import RecallTrace

__all__ = ["SENT_COLUMN", "STAGES", "StageView", "all_uids", "context_caption", "stage_views"]

SENT_COLUMN = "in the agent's context"
"""The column of every stage table of turns that says where the turn is in what the agent
receives: ``#n`` (its handle ``[n]`` in the context block) or ``not sent``."""

STAGES = ("seeds", "rwr", "graph_expand", "settlement", "groups", "writeback")
"""Stage names, in order."""

TITLES = {
    "seeds": "1 · seeds",
    "rwr": "2a · RWR micrograph",
    "graph_expand": "2b · graph_expand",
    "settlement": "3 · settlement",
    "groups": "4 · groups",
    "writeback": "5 · write-back",
}

TRANSITIONS_PER_NODE = 3
"""Kept transition entries drawn per source node in the RWR stage (the trace keeps all)."""


@dataclass
class StageView:
    """One stage as the panel shows it (see the module docstring).

    ``rings`` maps uid → a label (seed source, ``graph_seed``, ``Bridge``, a group name,
    ``current``); ``halo`` uid → 0..1; ``size`` uid → 0..1 (relative score), ``edges`` are
    dicts ``from``, ``to``, ``kind``, ``value`` (0..1 for width) and ``title`` lines;
    ``tables`` (title, DataFrame) pairs, the first being the stage's main table.
    """

    name: str
    title: str
    caption: str
    focus: list[str] = field(default_factory=list)
    rings: dict[str, str] = field(default_factory=dict)
    halo: dict[str, float] = field(default_factory=dict)
    size: dict[str, float] = field(default_factory=dict)
    edges: list[dict[str, Any]] = field(default_factory=list)
    tables: list[tuple[str, pd.DataFrame]] = field(default_factory=list)

    @property
    def frame(self) -> pd.DataFrame:
        """The stage's main table."""
        return self.tables[0][1] if self.tables else pd.DataFrame()


def _norm(values: dict[str, float]) -> dict[str, float]:
    top = max((v for v in values.values() if v > 0), default=0.0)
    return {k: (max(0.0, v) / top if top > 0 else 0.0) for k, v in values.items()}


def _with_text(df: pd.DataFrame, text: Callable[[str], str] | None) -> pd.DataFrame:
    if text is not None and "uid" in df.columns:
        df = df.copy()
        df["text"] = [text(u) for u in df["uid"]]
    return df


def _as_sent(trace: RecallTrace, text: Callable[[str], str] | None
             ) -> Callable[[str], str] | None:
    """``text``, except that a turn the agent is sent reads as its context block shows it:
    from the messages the recall attached, a withheld one (flagged as injection, failing
    its sha256 check) as its ``[withheld: …]`` marker (:func:`item_line`)."""
    attached = getattr(trace, "messages", None) or {}
    if text is None or not attached:
        return text

    def shown(uid: str) -> str:
        rows = attached.get(uid)
        return item_line(rows)[0] if rows else text(uid)
    return shown


def all_uids(trace: RecallTrace) -> list[str]:
    """Every node any stage touches, most important first: seeds, candidates, graph seeds and
    neighbours, the floor and dense items, the current node, then micrograph carriers by
    final energy.

    >>> all_uids(RecallTrace.empty())
    []
    """
    m = trace.micro
    first: list[str] = list(trace.seeds.uids)
    first += [u for u, s in zip(m.uids, trace.settle.source, strict=True) if s]
    gx = trace.graph_expand
    first += gx.seed_uids + [u for u, sel in zip(gx.uids, gx.selected, strict=True) if sel]
    first += trace.first_block().uids + trace.dense.uids + trace.graph_expand.uids
    if trace.writeback is not None:
        first.append(trace.writeback.current_uid)
    energy = m.current[-1] if m.current else [0.0] * len(m.uids)
    carriers = sorted(range(len(m.uids)), key=lambda i: (-energy[i], i))
    first += [m.uids[i] for i in carriers]
    return list(dict.fromkeys(first))


def _seeds(t: RecallTrace, text: Callable[[str], str] | None) -> StageView:
    s = t.seeds
    counts = Counter(s.source)
    terms = [x.term for x in s.terms if x.kept]
    cap = (f"Stage 1 — seeds: {len(s.uids)} seed(s) "
           f"({', '.join(f'{n} {k}' for k, n in counts.items()) or 'none'}). "
           f"Lexical terms used: {', '.join(terms) or 'none'}. Ring colour = seed source; "
           "halo = energy after the FTS boost and the division by sqrt(1 + fan).")
    if s.searched:
        cap += (" The query is a transcript: its words were read from the lines the user "
                f"said ({len(s.searched.splitlines())} of them; QUERY_USER_LINES).")
    if s.fallback:
        cap += " No node passed DENSE_SEED_MIN: these are the Dense(FB) fallback."
    seeds = pd.DataFrame({"uid": s.uids, "source": s.source, "cos_node": s.cos_node,
                          "cos_msg": s.cos_msg,
                          "bm25_rank": pd.array(s.bm25_rank, dtype="Int64"), "sigma": s.sigma,
                          "fan": s.fan, "energy": s.energy, "energy_boosted": s.energy_boosted,
                          "energy_fan": s.energy_fan})
    term_df = pd.DataFrame([{"term": x.term, "df": x.df, "idf": x.idf, "kept": x.kept,
                             "reason": x.reason} for x in s.terms],
                           columns=["term", "df", "idf", "kept", "reason"])
    return StageView("seeds", TITLES["seeds"], cap, focus=list(s.uids),
                     rings=dict(zip(s.uids, s.source, strict=True)),
                     halo=_norm(dict(zip(s.uids, s.energy_fan, strict=True))),
                     tables=[("seeds", _with_text(seeds, text)), ("query terms", term_df)])


def _rwr(t: RecallTrace, text: Callable[[str], str] | None) -> StageView:
    m = t.micro
    cur = m.current[-1] if m.current else [0.0] * len(m.uids)
    by_src: dict[int, list[int]] = {}
    for k, j in enumerate(m.t_j):
        if m.t_i[k] != j:
            by_src.setdefault(j, []).append(k)
    edges = []
    for j, ks in by_src.items():
        for k in sorted(ks, key=lambda k: (-m.t_p[k], m.t_i[k]))[:TRANSITIONS_PER_NODE]:
            i = m.t_i[k]
            edges.append({"from": m.uids[j], "to": m.uids[i], "kind": "transition",
                          "value": m.t_p[k],
                          "title": [f"T[{m.uids[i]}, {m.uids[j]}] = {m.t_p[k]:.4f}",
                                    f"before normalising {m.t_raw[k]:.4f}"]})
    steps = {f"current_{k + 1}": c for k, c in enumerate(m.current)}
    df = pd.DataFrame({"uid": m.uids, "seed": m.is_seed, "cos_node": m.cos_node,
                       "sigma": m.sigma, "long": m.long, "resource_eff": m.resource_eff,
                       "fan": m.fan, "state": m.state, "e0": m.e0, "te0": m.te0, **steps,
                       "path": m.path, "path_seed": m.path_seed, "path_bridge": m.path_bridge,
                       "c0": m.c0, "c1": m.c1, "c2": m.c2})
    n_seed = sum(m.is_seed)
    cap = (f"Stage 2a — RWR on the micrograph: {len(m.uids)} nodes ({n_seed} seeds + "
           f"{len(m.uids) - n_seed} within NEARBY_SECONDS of a seed and similar enough), "
           f"{len(m.t_i)} kept transition entries ({TRANSITIONS_PER_NODE} strongest per node "
           f"drawn), {len(m.current)} steps. Halo = energy after the last step.")
    return StageView("rwr", TITLES["rwr"], cap, focus=list(m.uids),
                     rings={u: "seed" for u, s in zip(m.uids, m.is_seed, strict=True) if s},
                     halo=_norm(dict(zip(m.uids, cur, strict=True))), edges=edges,
                     tables=[("micrograph", _with_text(df, text))])


def _graph_expand(t: RecallTrace, text: Callable[[str], str] | None) -> StageView:
    g = t.graph_expand
    top = max(g.pair_candidate_signal, default=0.0) or 1.0
    edges = [{"from": s, "to": n, "kind": "graph", "value": c / top,
              "title": [f"{s} → {n}", f"w_eff {w:.3f}, out(s) {o:.3f}, in(n) {i:.3f}",
                        f"edge_signal {es:.4f}, candidate_signal {c:.4f}"]}
             for s, n, w, o, i, es, c in zip(g.pair_seed, g.pair_nbr, g.pair_w_eff, g.pair_out,
                                             g.pair_in, g.pair_edge_signal,
                                             g.pair_candidate_signal, strict=True)]
    sel = [u for u, s in zip(g.uids, g.selected, strict=True) if s]
    rings = dict.fromkeys(g.seed_uids, "graph_seed")
    rings.update(dict.fromkeys(sel, "Graph"))
    nbr = pd.DataFrame({"uid": g.uids, "selected": g.selected, "signal": g.signal,
                        "paths": g.paths, "cos_node": g.cos_node, "long": g.long,
                        "resource_eff": g.resource_eff, "fan": g.fan,
                        "score_graph": g.score_graph, "best_seed": g.best_seed})
    nbr = nbr.sort_values("score_graph", ascending=False, kind="stable")
    pairs = pd.DataFrame({"seed": g.pair_seed, "uid": g.pair_nbr, "w_eff": g.pair_w_eff,
                          "out_s": g.pair_out, "in_n": g.pair_in,
                          "edge_signal": g.pair_edge_signal,
                          "candidate_signal": g.pair_candidate_signal})
    seeds = pd.DataFrame({"uid": g.seed_uids, "cos_node": g.seed_cos_node,
                          "cos_msg": g.seed_cos_msg, "out": g.seed_out,
                          "considered": g.seed_considered})
    cap = (f"Stage 2b — graph_expand: one hop over the whole graph from {len(g.seed_uids)} "
           f"graph seeds (top by cos_msg, teal ring) along {len(g.pair_seed)} kept edges to "
           f"{len(g.uids)} neighbours; {len(sel)} selected as Graph candidates (halo = "
           "score_graph).")
    return StageView("graph_expand", TITLES["graph_expand"], cap,
                     focus=list(dict.fromkeys(g.seed_uids + g.uids)), rings=rings,
                     halo=_norm(dict(zip(sel, [g.score_graph[g.uids.index(u)] for u in sel],
                                         strict=True))),
                     edges=edges, tables=[("neighbours", _with_text(nbr, text)),
                                          ("kept pairs", pairs), ("graph seeds", seeds)])


def _settlement(t: RecallTrace, text: Callable[[str], str] | None) -> StageView:
    m, sett = t.micro, t.settle
    cand = [i for i, s in enumerate(sett.source) if s]
    scores = {m.uids[i]: sett.score_final[i] for i in cand}
    edges: list[dict[str, Any]] = []
    for i in cand:
        u = m.uids[i]
        seed, bridge, path = sett.seed[i], sett.bridge[i], sett.path[i]
        if path == "1hop" and seed:
            edges.append({"from": seed, "to": u, "kind": "path", "value": 0.6,
                          "title": [f"1hop path {seed} → {u}"]})
        elif path == "2hop" and seed and bridge:
            edges += [{"from": seed, "to": bridge, "kind": "path", "value": 0.4,
                       "title": [f"2hop path via bridge {bridge}"]},
                      {"from": bridge, "to": u, "kind": "path", "value": 0.4,
                       "title": [f"2hop path {seed} → {bridge} → {u}"]}]
        for child in sett.promoted_by[i]:
            edges.append({"from": u, "to": child, "kind": "bridge", "value": 0.8,
                          "title": [f"bridge {u} promoted by 2hop child {child}"]})
    rings = {m.uids[i]: ("Bridge" if sett.source[i] == "Bridge" else "candidate") for i in cand}
    frame = _with_text(t.to_frame(), text)
    frame = frame.sort_values("score", ascending=False, kind="stable", na_position="last")
    n_bridge = sum(1 for i in cand if sett.source[i] == "Bridge")
    cap = (f"Stage 3 — settlement: {len(cand)} candidates of {len(m.uids)} micrograph nodes "
           f"({n_bridge} promoted bridges); the rest only carried energy. Size and halo = "
           "final score (brightness, not probability). The table has every term.")
    return StageView("settlement", TITLES["settlement"], cap, focus=list(scores), rings=rings,
                     halo=_norm(scores), size=_norm(scores), edges=edges,
                     tables=[("every term per candidate (trace.to_frame())", frame)])


def _groups(t: RecallTrace, text: Callable[[str], str] | None) -> StageView:
    floor = t.first_block()
    rows = []
    for name, items in (("floor", floor), ("activation", t.activation), ("ripple", t.ripple),
                        ("suppressed", t.suppressed)):
        for k, u in enumerate(items.uids):
            rows.append({"group": name, "rank": k + 1, "uid": u, "score": items.scores[k],
                         "source": items.sources[k],
                         "direct": items.direct[k] if k < len(items.direct) else None,
                         "reason": items.reasons[k] if k < len(items.reasons) else ""})
    df = pd.DataFrame(rows, columns=["group", "rank", "uid", "score", "source", "direct",
                                     "reason"])
    rings: dict[str, str] = {}
    for name, items in (("suppressed", t.suppressed), ("floor", floor),
                        ("ripple", t.ripple), ("activation", t.activation)):
        rings.update(dict.fromkeys(items.uids, name))  # later groups win the ring
    act = dict(zip(t.activation.uids, t.activation.scores, strict=True))
    what = ("fused lexical + dense relevance" if t.settings.get("HYBRID", False)
            else "V1's dense items")
    cap = (f"Stage 4 — groups: {len(floor)} in the floor (blue: what an agent sees first, "
           f"{what}), {len(t.activation)} activated (green: what a commit writes back), "
           f"{len(t.ripple)} ripple (light green), {len(t.suppressed)} suppressed (grey "
           f"ring, reason in the table). Relevant seeds: {'yes' if t.relevant else 'no'}.")
    focus = list(dict.fromkeys(floor.uids + t.activation.uids + t.ripple.uids))
    return StageView("groups", TITLES["groups"], cap, focus=focus, rings=rings,
                     halo=_norm(act), size=_norm(act),
                     tables=[("groups", _with_text(df, text))])


def _writeback(t: RecallTrace, text: Callable[[str], str] | None) -> StageView:
    p = t.writeback
    if p is None:
        cap = ("Stage 5 — write-back: no plan yet (choose the current node — the turn this "
               "recall served — to see what a commit would change).")
        return StageView("writeback", TITLES["writeback"], cap,
                         focus=list(t.activation.uids),
                         rings=dict.fromkeys(t.activation.uids, "activation"))
    nu, eu, dp = p.nodes, p.edges, p.depressed
    nodes = pd.DataFrame({"uid": nu.uids, "score": nu.score,
                          "strength_before": nu.strength_before, "strength_eff": nu.strength_eff,
                          "strength_after": nu.strength_after,
                          "resource_before": nu.resource_before, "resource_eff": nu.resource_eff,
                          "resource_after": nu.resource_after, "recall_before": nu.recall_before,
                          "recall_after": nu.recall_after})
    edges_df = pd.DataFrame({"src": eu.src_uid, "dst": eu.dst_uid, "kind": eu.kind,
                             "delta": eu.delta, "boost": eu.boost, "new": eu.new,
                             "w_before": eu.w_before, "w_eff_before": eu.w_eff_before,
                             "w_after": eu.w_after, "co_before": eu.co_before,
                             "co_after": eu.co_after})
    dep = pd.DataFrame({"src": dp.src_uid, "dst": dp.dst_uid, "w_before": dp.w_before,
                        "w_after": dp.w_after})
    top = max(eu.w_after, default=0.0) or 1.0
    edges = [{"from": a, "to": b, "kind": k, "value": w / top, "new": new,
              "title": [f"{k} {a} → {b}", f"Δ {d:.3f} · w_eff {we:.3f} → w {w:.3f}"
                        + (" (new edge)" if new else "")]}
             for a, b, k, d, we, w, new in zip(eu.src_uid, eu.dst_uid, eu.kind, eu.delta,
                                               eu.w_eff_before, eu.w_after, eu.new, strict=True)]
    rings = dict.fromkeys(nu.uids, "activation")
    rings[p.current_uid] = "current"
    state = "applied (committed)" if p.applied else "dry run — nothing written"
    cap = (f"Stage 5 — write-back ({state}) with current node {p.current_uid}: "
           f"{len(nu.uids)} nodes strengthened, {len(eu.kind)} edge updates "
           f"({sum(eu.new)} new; red causal A→T, pink anti-causal T→A, green pairs A↔B), "
           f"{len(dp.src_uid)} other out-edges depressed by heterosynaptic depression.")
    return StageView("writeback", TITLES["writeback"], cap,
                     focus=list(dict.fromkeys([*nu.uids, p.current_uid])), rings=rings,
                     halo=_norm(dict(zip(nu.uids, nu.score, strict=True))), edges=edges,
                     tables=[("nodes before → after", _with_text(nodes, text)),
                             ("edges before → after", edges_df),
                             ("depressed edges", dep)])


def context_caption(trace: RecallTrace) -> str:
    """The line that names what the agent receives from ``trace``.

    >>> print(context_caption(RecallTrace.empty()))  # doctest: +ELLIPSIS
    What the agent receives: no memory — nothing was activated, ...
    """
    sent = sent_order(trace)
    if not sent:
        return ("What the agent receives: no memory — nothing was activated, its context "
                "block says 'no relevant memory for this query'.")
    return (f"What the agent receives: its context block, {len(sent)} turns [1]–[{len(sent)}] "
            "in this order — the first block, then ripple, then the other activated turns. "
            f"Column '{SENT_COLUMN}' gives each turn's place there (#n is [n]) or 'not sent'.")


def _with_sent(df: pd.DataFrame, sent: dict[str, int]) -> pd.DataFrame:
    if "uid" not in df.columns:
        return df
    df = df.copy()
    df.insert(list(df.columns).index("uid") + 1, SENT_COLUMN,
              [f"#{sent[u]}" if u in sent else "not sent" for u in df["uid"]])
    return df


NOT_THE_ORDER = {
    "settlement": " This is the order of settled scores, not the order the agent reads.",
    "groups": (" The groups are not the order the agent reads either: the floor comes "
               "first, then ripple, then the activated turns the two do not hold (activation "
               "is what a commit writes back)."),
}
"""What the stages whose lists look like an answer add to their caption."""


def stage_views(trace: RecallTrace, text: Callable[[str], str] | None = None) -> list[StageView]:
    """One :class:`StageView` per stage of ``trace`` (``text(uid)`` adds a text column;
    a turn the agent is sent reads as its context block shows it), each table of turns
    with :data:`SENT_COLUMN` and each caption ending with what the agent receives
    (:func:`context_caption`)."""
    text = _as_sent(trace, text)
    views = [_seeds(trace, text), _rwr(trace, text), _graph_expand(trace, text),
             _settlement(trace, text), _groups(trace, text), _writeback(trace, text)]
    sent = {u: i + 1 for i, u in enumerate(sent_order(trace))}
    line = context_caption(trace)
    for v in views:
        v.tables = [(name, _with_sent(df, sent)) for name, df in v.tables]
        v.caption = f"{v.caption}{NOT_THE_ORDER.get(v.name, '')} {line}"
    return views
