"""Edge pruning (SPEC §3, **[ours]**, v2 only): at a checkpoint a COACT edge whose ``w_eff``
decayed below ``EDGE_PRUNE_BELOW`` at the store's time is dropped from the mirror and Kuzu,
its co-activations kept in both end points' pruned totals and still counted in their fan,
so a recall ranks the same (only sums of weights below the threshold are gone); v1 keeps
every edge; doctor checks the totals; forget removes them with the turn."""

from __future__ import annotations

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
        assert mem.settings.EDGE_PRUNE_BELOW == 0
        mem.add_turn("四个月后", "好久不见", session="later", ts=mem.last_ts() + 120 * DAY)
        e = mem.store.mirror.edges
        weff = edge_eff(e.w, e.last_ts, mem.store.mirror.store_time(), mem.settings.EDGE_TAU)
        assert (e.alive & (weff < ak.Settings().EDGE_PRUNE_BELOW)).any()  # v2 would prune
        edges, had = e.n_alive(), gt.pruned_coactivations(mem.store.graph)
        assert mem.checkpoint()["pruned"] == 0
        assert mem.store.mirror.edges.n_alive() == edges
        assert gt.pruned_coactivations(mem.store.graph) == had   # (the demo's v2 build's)
