"""Edge pruning (SPEC §3, **[ours]**, v2 only): at a checkpoint a COACT edge whose ``w_eff``
decayed below ``EDGE_PRUNE_BELOW`` at the store's time is dropped from the mirror and Kuzu,
its co-activations kept in both end points' pruned totals and still counted in their fan,
so a recall ranks the same (only sums of weights below the threshold are gone); then every
turn keeps at most ``EDGE_BUDGET`` edges, its strongest. v1 keeps every edge; doctor checks
the totals and counts what is due; forget removes them with the turn."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import numpy as np

import akasha_explorer as ak
from akasha_explorer.engine.dynamics import edge_eff
from akasha_explorer.graphdb import turns as gt

DAY = 86400.0
QUERIES = ("阿岚最近怎么样", "what did I say about the humidifier", "手指换药了吗")


def _decayed_edges(mem: ak.Memory, now: float) -> tuple[set[tuple[str, str]], dict[str, int]]:
    """The live edges below the threshold at ``now`` and the co-activations per end point."""
    m, s = mem.store.mirror, mem.settings
    e = m.edges
    ids = np.flatnonzero(e.alive & (edge_eff(e.w, e.last_ts, now, s.EDGE_TAU)
                                    < s.EDGE_PRUNE_BELOW))
    uid = m.nodes.uid
    pairs = {(uid[int(e.src[i])], uid[int(e.dst[i])]) for i in ids}
    per: dict[str, int] = {}
    for i in ids:
        for end in (uid[int(e.src[i])], uid[int(e.dst[i])]):
            per[end] = per.get(end, 0) + int(e.co_count[i])
    return pairs, per


def _recalls(mem: ak.Memory, now: float) -> list[tuple[list[str], list[float]]]:
    out = []
    for q in QUERIES:
        t = mem.recall(q, now=now, log=False)
        out.append((list(t.activation.uids), [float(x) for x in t.activation.scores]))
    return out


def test_checkpoint_prunes_decayed_edges_keeps_counts_and_recall(demo_store: Path) -> None:
    with ak.open(demo_store) as mem:
        assert mem.settings.EDGE_PRUNE_BELOW > 0          # the v2 default
        mem.migrate("v2", EDGE_BUDGET=0)                  # decay alone (budget: below)
        later = mem.last_ts() + 120 * DAY                   # some edges decayed, not all
        mem.add_turn("四个月后：阿岚的新游戏", "好久不见", session="later", ts=later)
        # the turn's graph rows and anchors first (add_turn leaves them waiting): the
        # recalls before and after differ only by the pruning
        had = gt.pruned_coactivations(mem.store.graph)     # the demo's own build pruned some
        now = mem.store.mirror.store_time()
        pairs, per = _decayed_edges(mem, now)
        edges_before = mem.store.mirror.edges.n_alive()
        assert 0 < len(pairs) < edges_before
        before = _recalls(mem, now)
        fan = mem.store.mirror.edges.fan(mem.store.mirror.nodes.n)
        stats = mem.checkpoint()
        assert stats["pruned"] == len(pairs)
        assert mem.store.mirror.edges.n_alive() == edges_before - len(pairs)
        assert (mem.store.mirror.edges.fan(len(fan)) == fan).all()
        after = _recalls(mem, now)
        for (ua, sa), (ub, sb) in zip(before, after, strict=True):
            assert ua == ub                        # the same turns, in the same order
            np.testing.assert_allclose(sa, sb, rtol=1e-2)   # only the tiny w_eff sums moved
        assert gt.pruned_coactivations(mem.store.graph) == {
            u: had.get(u, 0) + per.get(u, 0) for u in set(had) | set(per)}
        kuzu = gt.coact_edges(mem.store.graph).select(["s", "d"]).to_pydict()
        assert not pairs & set(zip(kuzu["s"], kuzu["d"], strict=True))
    with ak.open(demo_store) as mem:                          # what Kuzu holds, reopened
        assert mem.store.mirror.edges.n_alive() == edges_before - len(pairs)
        assert (mem.store.mirror.edges.fan(len(fan)) == fan).all()
        assert _recalls(mem, now) == after
        report = mem.doctor()
        assert report.ok, report.summary()
        assert report.checked["pruned_coactivations"] == sum(per.values()) + sum(had.values())
        gone = next(iter(per))
        mem.forget(node=gone, why="test")
        assert gone not in gt.pruned_coactivations(mem.store.graph)
        assert mem.doctor().ok


def test_v1_keeps_every_edge(demo_store: Path) -> None:
    with ak.open(demo_store) as mem:
        mem.migrate("v1")
        assert mem.settings.EDGE_PRUNE_BELOW == 0 and mem.settings.EDGE_BUDGET == 0
        mem.add_turn("四个月后", "好久不见", session="later", ts=mem.last_ts() + 120 * DAY)
        e = mem.store.mirror.edges
        weff = edge_eff(e.w, e.last_ts, mem.store.mirror.store_time(), mem.settings.EDGE_TAU)
        assert (e.alive & (weff < ak.Settings().EDGE_PRUNE_BELOW)).any()  # v2 would prune
        edges, had = e.n_alive(), gt.pruned_coactivations(mem.store.graph)
        assert mem.checkpoint()["pruned"] == 0
        assert mem.store.mirror.edges.n_alive() == edges
        assert gt.pruned_coactivations(mem.store.graph) == had   # (the demo's v2 build's)


def _degrees(mem: ak.Memory) -> np.ndarray:
    e = mem.store.mirror.edges
    return np.bincount(np.concatenate([e.src[e.alive], e.dst[e.alive]]),
                       minlength=mem.store.mirror.nodes.n)


def _pairs(mem: ak.Memory, ids: Iterable[int]) -> set[tuple[str, str]]:
    e, uid = mem.store.mirror.edges, mem.store.mirror.nodes.uid
    return {(uid[int(e.src[i])], uid[int(e.dst[i])]) for i in ids}


def test_budget_keeps_each_turns_strongest_edges(demo_store: Path) -> None:
    with ak.open(demo_store) as mem:
        assert mem.settings.EDGE_BUDGET > 0                # the v2 default
        assert _degrees(mem).max() <= mem.settings.EDGE_BUDGET   # the build checkpointed
        mem.migrate("v2", EDGE_BUDGET=16)
        mem.add_turn("四个月后：阿岚的新游戏", "好久不见", session="later",
                     ts=mem.last_ts() + 120 * DAY)          # something to checkpoint
        m = mem.store.mirror
        e, uid = m.edges, m.nodes.uid
        now = m.store_time()
        weff = edge_eff(e.w, e.last_ts, now, mem.settings.EDGE_TAU)
        # the 16 strongest of each turn, by hand, among the edges not decayed below
        # EDGE_PRUNE_BELOW (those go first): an edge stays when both ends keep it
        live = np.flatnonzero(e.alive & (weff >= mem.settings.EDGE_PRUNE_BELOW)).tolist()
        keep: dict[int, set[int]] = {}
        for i in live:
            for end in (int(e.src[i]), int(e.dst[i])):
                keep.setdefault(end, set()).add(i)
        strongest = {n: set(sorted(ids, key=lambda i: (-weff[i], e.src[i], e.dst[i]))[:16])
                     for n, ids in keep.items()}
        stays = {i for i in live
                 if i in strongest[int(e.src[i])] and i in strongest[int(e.dst[i])]}
        gone = set(np.flatnonzero(e.alive).tolist()) - stays
        kept = _pairs(mem, stays)
        assert gone
        per: dict[str, int] = {}
        for i in gone:
            for end in (uid[int(e.src[i])], uid[int(e.dst[i])]):
                per[end] = per.get(end, 0) + int(e.co_count[i])
        had = gt.pruned_coactivations(mem.store.graph)
        fan = e.fan(m.nodes.n)
        assert mem.checkpoint()["pruned"] == len(gone)
        assert _degrees(mem).max() <= 16
        assert _pairs(mem, np.flatnonzero(e.alive).tolist()) == kept   # (ids renumbered)
        assert (e.fan(len(fan)) == fan).all()               # pruned edges still count
        assert gt.pruned_coactivations(mem.store.graph) == {
            u: had.get(u, 0) + per.get(u, 0) for u in set(had) | set(per)}
        assert mem.doctor().checked["edges_due_for_pruning"] == 0
    with ak.open(demo_store) as mem:                        # Kuzu holds the same
        assert mem.store.mirror.edges.n_alive() == len(stays)
        assert mem.doctor().ok


def test_doctor_counts_edges_over_the_budget(demo_store: Path) -> None:
    with ak.open(demo_store) as mem:
        mem.migrate("v2", EDGE_BUDGET=0)
        over = int(np.maximum(_degrees(mem) - 8, 0).sum())
        assert over > 0
        mem.migrate("v2", EDGE_BUDGET=8)       # checkpoints before it switches: due, not gone
        checked = mem.doctor().checked
        assert over // 2 <= checked["edges_due_for_pruning"] <= over


def test_pruned_slots_are_freed_and_recall_reads_what_kuzu_holds(demo_store: Path) -> None:
    """A checkpoint that removed many edges renumbers the rest (the edge arrays keep no slot
    per pair ever linked); the renumbered mirror recalls exactly what a store reopened
    from Kuzu recalls, and later commits land in Kuzu."""
    with ak.open(demo_store) as mem:
        mem.migrate("v2", EDGE_BUDGET=8)
        mem.add_turn("四个月后：阿岚的新游戏", "好久不见", session="later",
                     ts=mem.last_ts() + 120 * DAY)
        stats = mem.checkpoint()
        e = mem.store.mirror.edges
        assert stats["pruned"] > 4096 and stats["compacted"] == 1
        assert e.count == e.n_alive() and _degrees(mem).max() <= 8
        now = mem.store.mirror.store_time() + 60
        t = mem.recall("阿岚的生日礼物", now=now)
        mem.commit(t, t.ranking()[0])                         # new pairs after the renumbering
        mem.checkpoint()
        after = _recalls(mem, now + 1)
        edges = _pairs(mem, np.flatnonzero(e.alive).tolist())
    with ak.open(demo_store) as mem:
        e = mem.store.mirror.edges
        assert _pairs(mem, np.flatnonzero(e.alive).tolist()) == edges
        assert _recalls(mem, now + 1) == after
        report = mem.doctor()
        assert report.ok, report.summary()
