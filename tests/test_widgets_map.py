"""MemoryMap and its map view driven the way a person drives them — ``button.click()``,
trait changes as the front end makes them, its custom messages — against the real demo
store (Kuzu + LanceDB, the real model, real igraph). The front end itself is covered by
tests/test_browser_map.py (Chromium) and benchmarks/bench_map.py.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import akasha_explorer as ak
from akasha_explorer.errors import InvalidInput
from akasha_explorer.widgets import MemoryMap
from akasha_explorer.widgets._html import PALETTE
from akasha_explorer.widgets.mapview import DIM_COLOUR, LIT_COLOURS, MapView, sigma_source
from akasha_explorer.widgets.memorymap import SMALL_COLOUR, group_colour

QUERY = "最近手指的伤怎么样了"


def _front(view: MapView, content: dict) -> None:
    """A custom message as the front end sends it (ipywidgets' comm entry point)."""
    view._handle_custom_msg(content, [])


def test_the_library_is_vendored_whole_with_its_licences() -> None:
    src = sigma_source()
    assert src.startswith("/* sigma 3.0.3 + graphology 0.26.0")
    assert "export{" in src.replace(" ", "")[-400:]
    vendor = Path(ak.__file__).parent / "widgets" / "vendor"
    licences = (vendor / "LICENSES.txt").read_text("utf-8")
    for name in ("sigma", "graphology", "graphology-utils", "events"):
        assert f"== {name} " in licences
    assert "http://" not in src and "https://" not in src.replace("https://github.com", "")
    assert "fetch(" not in src and "XMLHttpRequest" not in src


def test_every_turn_is_drawn_once_with_colour_size_and_its_links(ro_mem: ak.Memory) -> None:
    m = MemoryMap(ro_mem)
    d = m.view.data
    turns = ro_mem.stats()["nodes"]
    assert m.atlas is not None and m.atlas.level == "turns"
    assert len(d["ids"]) == len(set(d["ids"])) == turns == m.atlas.total_turns
    assert {len(d[k]) for k in ("x", "y", "size", "color", "label", "ts", "t0")} == {turns}
    assert min(d["size"]) >= 2.0 and max(d["size"]) <= 9.0
    for g, c in zip(m.atlas.group, d["color"], strict=True):
        assert c == group_colour(g)
    assert len(d["src"]) == len(d["dst"]) == len(d["ew"]) > turns // 2
    assert all(0 <= i < turns for i in d["src"] + d["dst"])
    assert f"{turns} of {turns}" in m.caption.value
    # the legend names every colour drawn and what size means
    named = {e["colour"] for e in m.legend_entries if e["kind"] == "fill"}
    assert set(d["color"]) <= named
    assert any(e["kind"] == "size" for e in m.legend_entries)


def test_search_relights_the_same_map_without_redrawing_it(ro_mem: ak.Memory) -> None:
    m = MemoryMap(ro_mem)
    data = m.view.data
    hits = m.search("阿岚 杀戮尖塔")
    assert not hits.empty and m.view.data is data          # the map was not sent again
    lit = m.view.lit
    assert lit and set(lit.values()) == {"hit"}
    assert set(lit) == set(hits["uid"]) & set(data["ids"])
    assert "hits for “阿岚 杀戮尖塔”" in m.status.value
    assert {e["colour"] for e in m.legend_entries} >= {LIT_COLOURS["hit"], DIM_COLOUR}
    m.search_box.value = "换药"
    m.search_button.click()
    assert m.view.lit and set(m.view.lit) != set(lit) and m.view.data is data
    m.clear_button.click()
    assert m.view.lit == {} and m.view.selected == [] and m.view.data is data
    assert "type something" in (m.search("  ").to_string() + m.status.value)


def test_the_time_window_dims_by_date_and_whole_time_lifts_it(ro_mem: ak.Memory) -> None:
    m = MemoryMap(ro_mem)
    days = [d for _, d in m.time_range.options]
    assert len(days) > 20 and m.view.window == []
    m.set_window(days[3], days[9])
    lo, hi = m.view.window
    assert hi - lo == pytest.approx(7 * 86400, abs=1.0)
    inside = [u for u, t in zip(m.atlas.ids, m.atlas.ts, strict=True) if lo <= t <= hi]
    assert 0 < len(inside) < len(m.atlas.ids)
    assert any("outside the time window" in e["text"] for e in m.legend_entries)
    assert str(days[3]) in m.time_label.value and str(days[9]) in m.time_label.value
    with pytest.raises(InvalidInput, match="starts"):
        m.set_window(days[9], days[3])
    m.refresh()                                 # a refresh keeps the window a person chose
    assert m.view.window == [lo, hi] and str(days[3]) in m.time_label.value
    m.set_window()
    assert m.view.window == []


def test_a_recall_lights_its_seeds_delivery_and_write_back(rw_mem: ak.Memory) -> None:
    m = MemoryMap(rw_mem)
    trace = rw_mem.recall(QUERY)
    m.show_recall(trace)
    roles = m.view.lit
    delivered = {it.node for it in trace.context().items}
    assert {u for u, r in roles.items() if r == "delivered"} == delivered & set(m.atlas.ids)
    assert {u for u, r in roles.items() if r == "seed"} == set(trace.seeds.uids) - delivered
    assert m.view.lit_edges == [] and "not written back" in m.status.value
    # the agent's loop: a turn written with this recall; the map reads the store again
    node, _ = rw_mem.add_turn(QUERY, "好多了", session="map-test", recall=trace)
    m.refresh()
    assert node in m.view.data["ids"]
    got = m.latest()
    assert got is not None and got.query == QUERY
    assert m.view.lit.get(node) == "written" and f"written back to {node}" in m.status.value
    assert m.view.lit_edges
    plan = got.writeback
    assert plan is not None
    pairs = {(a, b) for a, b in zip(plan.edges.src_uid, plan.edges.dst_uid, strict=True)}
    assert {tuple(e) for e in m.view.lit_edges} <= pairs
    assert any(e["text"].startswith("the turn it was written") for e in m.legend_entries)


def test_a_click_reads_the_turn_and_the_selection_comes_back(ro_mem: ak.Memory) -> None:
    m = MemoryMap(ro_mem)
    a, b = m.atlas.ids[5], m.atlas.ids[40]
    m.view.selected = [a]                      # what the front end sets on a click
    assert f"<b>{a}</b>" in m.detail.value and "ak-msg" in m.detail.value
    m.view.selected = [a, b]                   # shift-click adds
    df = m.selection_df()
    assert list(df["uid"]) == [a, b] and "text" in df and df["text"].str.len().min() > 0
    assert "selection_df()" in m.selection.value
    _front(m.view, {"event": "open", "id": b})  # a double-click opens it
    assert f"<b>{b}</b>" in m.detail.value


def test_a_drilled_community_that_is_gone_falls_back_to_the_whole_map(ro_mem: ak.Memory
                                                                      ) -> None:
    m = MemoryMap(ro_mem)
    m.drilled = 10_000                          # as if the memory was laid out again since
    m.refresh()
    assert m.drilled is None and m.atlas is not None and m.atlas.community is None
    assert "no community 10000" in m.status.value


def test_community_level_drills_in_and_back_with_the_same_places(ro_mem: ak.Memory) -> None:
    m = MemoryMap(ro_mem, level="communities")
    a = m.atlas
    assert a is not None and a.level == "communities" and all(
        i.startswith("community:") for i in a.ids)
    assert sum(a.size) == a.total_turns == sum(len(us) for us in a.members)
    hits = m.search("阿岚")
    assert set(m.view.lit) <= set(a.ids) and m.view.lit
    # each hit lights the community the map puts it in (the atlas's members)
    where = {u: f"community:{g}" for g, us in zip(a.group, a.members, strict=True) for u in us}
    assert set(m.view.lit) == {where[u] for u in hits["uid"] if u in where}
    k = max(range(len(a.ids)), key=lambda i: a.size[i] if a.group[i] >= 0 else -1)
    whole = MemoryMap(ro_mem).atlas
    _front(m.view, {"event": "open", "id": a.ids[k]})       # double-click a community
    assert m.drilled == a.group[k] and m.atlas.level == "turns"
    assert m.back_button.layout.display == "" and len(m.atlas.ids) == int(a.size[k])
    places = dict(zip(whole.ids, zip(whole.x, whole.y, strict=True), strict=True))
    for u, x, y in zip(m.atlas.ids, m.atlas.x, m.atlas.y, strict=True):
        assert places[u] == pytest.approx((x, y))
    assert set(m.view.lit) <= set(hits["uid"])               # the search stays lit, per turn
    m.view.selected = [m.atlas.ids[0]]
    assert list(m.selection_df()["uid"]) == [m.atlas.ids[0]]
    m.back_button.click()
    assert m.drilled is None and m.atlas.level == "communities"
    m.view.selected = [a.ids[k]]
    assert list(m.selection_df()["turns"]) == [int(a.size[k])]
    assert f"community {a.group[k]}" in m.detail.value


def test_the_map_view_refuses_what_it_cannot_draw() -> None:
    v = MapView()
    with pytest.raises(InvalidInput, match="length"):
        v.draw(["a", "b"], x=[0.0], y=[0.0, 1.0], size=[1.0, 1.0], color=["#000"] * 2,
               label=["", ""], ts=[0.0, 0.0])
    v.draw(["a"], x=[0.0], y=[0.0], size=[1.0], color=["#000"], label=["a"], ts=[0.0])
    with pytest.raises(InvalidInput, match="unknown light"):
        v.light({"a": "glow"})
    v.light({"a": "hit", "zz": "hit"}, [("a", "zz")])
    assert v.lit == {"a": "hit"} and v.lit_edges == []


def test_colours_keep_to_the_palette_then_one_for_the_rest() -> None:
    assert [group_colour(g) for g in range(len(PALETTE))] == list(PALETTE)
    assert group_colour(len(PALETTE) + 3) == SMALL_COLOUR
    assert not set(LIT_COLOURS.values()) & set(PALETTE)
    assert np.unique(list(LIT_COLOURS.values())).size >= 5
