"""The whole memory as a map (issue 26): ``Neighbourhood.atlas`` on the demo store and on
a synthetic store of a few thousand turns — real stores, real igraph, no mocks."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

import akasha_explorer as ak
from akasha_explorer.analysis.atlas import ATLAS_LABEL_CHARS, Atlas, atlas, layout_version
from akasha_explorer.bench.scale import build_synthetic_store
from akasha_explorer.brief.context import INJECTION, withheld
from akasha_explorer.errors import InvalidInput

from .served import serving

INJECTED = "2026-09-10-evening:0"
"""The demo turn whose user message the write gates flag as injection."""


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 3,000-turn synthetic store (about 20 communities), built once."""
    path = tmp_path_factory.mktemp("atlas") / "s3000"
    build_synthetic_store(path, 3000)
    return path


@pytest.fixture
def syn_mem(synthetic: Path) -> Iterator[ak.Memory]:
    m = ak.open(synthetic)
    yield m
    m.close()


def _live(mem: ak.Memory) -> list[str]:
    n = mem.store.mirror.nodes
    return [n.uid[r] for r in np.flatnonzero(n.alive[: n.n]).tolist()]


def _places(a: Atlas) -> dict[str, tuple[float, float]]:
    return {u: (x, y) for u, x, y in zip(a.ids, a.x, a.y, strict=True)}


def test_every_live_turn_once_and_drill_down_keeps_places(syn_mem: ak.Memory) -> None:
    whole = syn_mem.neighbourhood().atlas()
    assert whole.level == "turns" and whole.community is None
    assert Counter(whole.ids) == Counter(_live(syn_mem))
    assert whole.total_turns == len(whole.ids) == 3000
    cols = (whole.x, whole.y, whole.size, whole.group, whole.ts, whole.t0, whole.label,
            whole.session)
    assert all(len(c) == len(whole.ids) for c in cols)
    assert np.isfinite(whole.x).all() and np.isfinite(whole.y).all()
    assert max(np.hypot(whole.x, whole.y)) <= 1.0 + 1e-9
    assert all(len(x) <= ATLAS_LABEL_CHARS for x in whole.label)
    place = _places(whole)
    by_group = Counter(whole.group)
    biggest = by_group.most_common(1)[0][0]
    assert biggest == 0                                  # numbered by size, largest first
    part = syn_mem.neighbourhood().atlas(community=biggest)
    assert part.community == biggest and set(part.group) == {biggest}
    assert len(part.ids) == by_group[biggest]
    for u, xy in _places(part).items():
        assert xy == place[u]
    inside = set(part.ids)
    assert all(part.ids[a] in inside and part.ids[b] in inside
               for a, b in zip(part.src, part.dst, strict=True))
    frame = whole.to_frame()
    assert list(frame.columns[:3]) == ["id", "label", "group"] and len(frame) == 3000


def test_groups_are_the_store_communities(syn_mem: ak.Memory) -> None:
    hood = syn_mem.neighbourhood()
    a = hood.atlas()
    comm = hood.communities()
    assert all(comm.get(u, -1) == g for u, g in zip(a.ids, a.group, strict=True))


def test_edges_above_min_weight_and_at_most_per_node(syn_mem: ak.Memory) -> None:
    a = syn_mem.neighbourhood().atlas(min_weight=0.02, per_node=3)
    assert a.src and min(a.weight) >= 0.02
    ends = Counter(a.src) + Counter(a.dst)
    assert max(ends.values()) <= 3
    assert len({(min(s, d), max(s, d)) for s, d in zip(a.src, a.dst, strict=True)}) \
        == len(a.src)
    assert all(s != d for s, d in zip(a.src, a.dst, strict=True))
    assert a.weight == sorted(a.weight, reverse=True)
    looser = syn_mem.neighbourhood().atlas(min_weight=0.0, per_node=8)
    assert len(looser.src) > len(a.src)


def test_community_level_one_item_per_community(syn_mem: ak.Memory) -> None:
    hood = syn_mem.neighbourhood()
    turns = hood.atlas()
    comms = hood.atlas(level="communities", per_node=4)
    assert comms.level == "communities"
    assert sorted(comms.group) == sorted(set(turns.group))
    assert comms.ids == [f"community:{g}" for g in comms.group]
    assert sum(comms.size) == comms.total_turns == 3000
    for g, size, newest, oldest in zip(comms.group, comms.size, comms.ts, comms.t0,
                                       strict=True):
        mine = [t for t, gg in zip(turns.ts, turns.group, strict=True) if gg == g]
        assert size == len(mine) and newest == max(mine) and oldest == min(mine)
    assert all(lab for lab in comms.label) and comms.session == [""] * len(comms.ids)
    assert max((Counter(comms.src) + Counter(comms.dst)).values()) <= 4


def test_layout_deterministic_cached_and_rebuilt(synthetic: Path) -> None:
    with ak.open(synthetic) as m:
        version = layout_version(m.store)
        cache = m.store.cache_dir / f"atlas-{version}.npz"
        cache.unlink(missing_ok=True)
        m.store.derived.clear()
        t0 = time.perf_counter()
        first = m.neighbourhood().atlas()
        made = time.perf_counter() - t0
        assert cache.is_file()                           # written by a writable store
        m.store.derived.clear()
        t0 = time.perf_counter()
        again = m.neighbourhood().atlas()
        read = time.perf_counter() - t0
    assert again == first and read < made
    with ak.open(synthetic) as m:                        # a fresh open reads the file
        assert layout_version(m.store) == version
        assert m.neighbourhood().atlas() == first
        cache.unlink()                                   # and without it, makes the same
        m.store.derived.clear()
        assert m.neighbourhood().atlas() == first
        assert cache.is_file()


def test_read_only_store_writes_no_cache(ro_mem: ak.Memory) -> None:
    before = sorted(p.name for p in ro_mem.path.rglob("*"))
    a = ro_mem.neighbourhood().atlas()
    assert a.ids and not ro_mem.store.cache_dir.exists()
    assert sorted(p.name for p in ro_mem.path.rglob("*")) == before


def test_withheld_marker_instead_of_injection_text(ro_mem: ak.Memory) -> None:
    a = ro_mem.neighbourhood().atlas()
    label = dict(zip(a.ids, a.label, strict=True))
    assert label[INJECTED] == withheld(INJECTION)[:ATLAS_LABEL_CHARS - 1] + "…" \
        or label[INJECTED] == withheld(INJECTION)
    assert not any("ignore" in x.lower() and "instruction" in x.lower() for x in a.label)


def test_bad_level_or_community_is_refused(ro_mem: ak.Memory) -> None:
    hood = ro_mem.neighbourhood()
    with pytest.raises(InvalidInput, match="level"):
        hood.atlas(level="galaxies")
    with pytest.raises(InvalidInput, match="no community 9999"):
        hood.atlas(community=9999)
    with pytest.raises(InvalidInput, match="community="):
        hood.atlas(level="communities", community=0)


def test_forget_removes_the_cache(rw_mem: ak.Memory) -> None:
    a = rw_mem.neighbourhood().atlas()
    assert any(rw_mem.store.cache_dir.glob("atlas-*.npz"))
    rw_mem.forget(node=a.ids[0])
    assert not rw_mem.store.cache_dir.exists()
    b = rw_mem.neighbourhood().atlas()
    assert a.ids[0] not in b.ids and len(b.ids) == len(a.ids) - 1
    assert b.version != a.version
    for f in rw_mem.store.cache_dir.glob("atlas-*.npz"):
        assert a.ids[0] not in set(np.load(f)["uid"].tolist())


def test_new_turns_join_the_layout_where_they_belong_and_nothing_moves(rw_mem: ak.Memory
                                                                       ) -> None:
    before = rw_mem.neighbourhood().atlas()
    comm = dict(zip(before.ids, before.group, strict=True))
    trace = rw_mem.recall("和阿岚打杀戮尖塔，A10 过了吗")
    node, _ = rw_mem.add_turn("和阿岚打杀戮尖塔，A10 过了", "恭喜！", session="atlas-test",
                              recall=trace)
    after = rw_mem.neighbourhood().atlas()
    assert after.version != before.version and after.total_turns == before.total_turns + 1
    old, new = _places(before), _places(after)
    assert all(new[u] == old[u] for u in old)              # nobody moved
    assert node in new and np.isfinite(new[node]).all()
    # the new turn sits in the community of the turns it was written back with
    hood = rw_mem.neighbourhood()
    linked = [(b if a == node else a, w) for a, b, w in hood.incident([node])]
    strongest = max(linked, key=lambda p: p[1])[0]
    assert dict(zip(after.ids, after.group, strict=True))[node] == comm[strongest]
    # reopened (the close folds the edges, a new version): the same places, one cache file
    path = rw_mem.store.path
    rw_mem.close()
    with ak.open(path) as again:
        assert _places(again.neighbourhood().atlas()) == new
        assert len(list(again.store.cache_dir.glob("atlas-*.npz"))) == 1


def test_a_tenth_more_turns_lays_the_memory_out_again(rw_mem: ak.Memory) -> None:
    before = rw_mem.neighbourhood().atlas()
    extra = int(0.1 * before.total_turns) + 2
    now = rw_mem.last_ts()
    for i in range(extra):
        rw_mem.add_turn(f"第{i}个新话题：阿岚推荐的咖啡豆", "记下了", session="atlas-more",
                        ts=now + 60 * (i + 1))
    after = rw_mem.neighbourhood().atlas()
    assert after.total_turns == before.total_turns + extra == len(after.ids)
    with np.load(rw_mem.store.cache_dir / f"atlas-{after.version}.npz") as z:
        assert int(z["base"]) == after.total_turns        # communities found again


def test_a_served_store_answers_the_same_atlas(demo_store: Path) -> None:
    with ak.open(demo_store, read_only=True) as m:
        local = m.neighbourhood().atlas()
        part = m.neighbourhood().atlas(community=0)
    with serving(demo_store) as (url, _proc):
        remote = ak.connect(url)
        got = remote.neighbourhood().atlas()
        assert isinstance(got, Atlas) and got == local
        assert remote.neighbourhood().atlas(community=0) == part
        with pytest.raises(InvalidInput, match="level"):
            remote.neighbourhood().atlas(level="galaxies")


@pytest.mark.slow
def test_atlas_of_a_synthetic_10k_store_through_the_server(tmp_path: Path) -> None:
    """A 10,000-turn atlas comes back whole over HTTP (no answer cap refuses it)."""
    path = tmp_path / "s10k"
    build_synthetic_store(path, 10_000)
    with ak.open(path, read_only=True) as m:
        local = atlas(m.store)
    with serving(path) as (url, _proc):
        got = ak.connect(url).neighbourhood().atlas()
    assert got == local and len(got.ids) == 10_000
