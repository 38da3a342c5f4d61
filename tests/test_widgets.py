"""The graph view, RecallStepper and MemoryExplorer driven the way a person drives them —
``button.click()`` and trait changes — against the real demo store (Kuzu + LanceDB, the
real model, real igraph). The front end is covered by tests/test_browser.py."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import akasha_explorer as ak
from akasha_explorer.engine.dynamics import edge_eff
from akasha_explorer.widgets import (
    GraphCanvas,
    MemoryExplorer,
    RecallStepper,
    notebook_store,
    table,
)
from akasha_explorer.widgets._data import StoreGraph
from akasha_explorer.widgets.canvas import EDGE_COLOUR, pixel_layout, vis_source
from akasha_explorer.widgets.stages import STAGES

QUERY = "最近手指的伤怎么样了"
HOSTILE = "<img src=x onerror=alert(1)>"






def _hostile_node(mem: ak.Memory) -> str:
    t = mem.store.vectors.read("messages", columns=["node", "text"]).to_pydict()
    return next(n for n, x in zip(t["node"], t["text"], strict=True) if HOSTILE in x)


def _front(view: GraphCanvas, content: dict) -> None:
    """A custom message as the front end sends it (ipywidgets' comm entry point)."""
    view._handle_custom_msg(content, [])


# -- graph view ----------------------------------------------------------------------------
def test_vis_source_is_pyvis_own_file_not_vendored() -> None:
    import pyvis
    src = vis_source()
    shipped = sorted(Path(pyvis.__file__).parent.rglob("vis-network.min.js"))
    assert any(p.read_text("utf-8") == src for p in shipped)
    ours = Path(ak.__file__).parent / "widgets"
    assert not list(ours.rglob("vis-network*")), "third-party JS must not be vendored"
    js = (ours / "canvas.js").read_text("utf-8")
    assert "http://" not in js
    assert "https://" not in js
    assert "import(" not in js


def test_layout_is_deterministic_and_keeps_fixed_nodes() -> None:
    rng = np.random.default_rng(1)
    edges = [tuple(int(x) for x in rng.choice(40, 2, replace=False)) for _ in range(80)]
    a, b = pixel_layout(40, edges), pixel_layout(40, edges)
    assert np.array_equal(a, b)
    fixed = {k: (float(a[k, 0]), float(a[k, 1])) for k in range(20)}
    c = pixel_layout(40, edges, fixed=fixed)
    assert all(tuple(c[k]) == fixed[k] for k in range(20))
    assert np.isfinite(c).all()
    assert len({tuple(r) for r in c.round(3)}) == 40


def test_graph_view_caps_keeps_positions_and_reports_expand() -> None:
    v = GraphCanvas(cap=5)
    v.set_graph([{"id": f"n{k}", "label": f"<b>{k}</b>"} for k in range(8)],
                [{"from": f"n{k}", "to": f"n{k + 1}"} for k in range(7)])
    assert [n["id"] for n in v.nodes] == [f"n{k}" for k in range(5)]
    assert {(e["from"], e["to"]) for e in v.edges} == {(f"n{k}", f"n{k + 1}") for k in range(4)}
    before = {n["id"]: (n["x"], n["y"]) for n in v.nodes}
    v.set_graph([*v.nodes[:3], {"id": "z"}], [{"from": "n0", "to": "z"}])
    after = {n["id"]: (n["x"], n["y"]) for n in v.nodes}
    assert all(after[k] == before[k] for k in ("n0", "n1", "n2"))
    got: list[list[str]] = []
    v.on_expand(got.append)
    _front(v, {"event": "expand", "ids": ["n1"]})
    assert got == [["n1"]]
    v.select(["n1", "missing"])
    assert v.selected == ["n1"]


def test_store_graph_tooltips_escape_hostile_text(ro_mem: ak.Memory) -> None:
    uid = _hostile_node(ro_mem)
    d = StoreGraph(ro_mem).node(uid)
    assert "<img" not in d["title"]
    assert "&lt;img src=x onerror=alert(1)&gt;" in d["title"]
    assert d["color"]["background"].startswith("#")
    assert d["size"] > 0


# -- RecallStepper --------------------------------------------------------------------------
def test_stepper_steps_every_stage_without_recomputing(ro_mem: ak.Memory) -> None:
    s = RecallStepper(ro_mem)
    s.query.value = QUERY
    s.run_button.click()
    t = s.trace
    assert t is not None
    assert t.query == QUERY
    assert s.stage.value == "seeds"
    assert s.commit_button.disabled  # read-only store
    seen = {}
    for k, name in enumerate(STAGES):
        assert s.stage.value == name
        seen[name] = ({n["id"] for n in s.view.nodes if n.get("borderWidth", 1) > 1},
                      len(s.view.edges), s.frame().shape)
        if k < len(STAGES) - 1:
            s.next_button.click()
    assert s.next_button.disabled
    assert s.trace is t  # stepping never re-ran the recall
    assert seen["seeds"][0] == set(t.seeds.uids) & {n["id"] for n in s.view.nodes}
    assert seen["seeds"][1] == 0
    assert seen["rwr"][1] > 0
    assert seen["graph_expand"][1] == len(t.graph.pair_seed)
    assert set(t.activation.uids) <= seen["groups"][0]
    assert seen["settlement"][2] == (len(t.to_frame()), len(t.to_frame().columns) + 2)
    s.back_button.click()
    assert s.stage.value == "groups"
    assert s.trace is t
    s.goto("rwr")
    assert s.frame()["uid"].tolist() == t.micro.uids


def test_stepper_says_which_list_the_agent_receives(ro_mem: ak.Memory) -> None:
    """Issue 25 item 7: every stage names the list the agent receives (its context block)
    and every table of turns says where each turn is in it — settlement's score order and
    the groups are not that order."""
    import html

    from akasha_explorer.widgets.stages import SENT_COLUMN

    s = RecallStepper(ro_mem, query=QUERY)
    t = s.trace
    assert t is not None
    block = t.context()                       # what the agent's prompt receives
    sent = {it.node: "#" + it.handle.strip("[]") for it in block.items}
    assert sent
    for stage, view in zip(STAGES, s.views, strict=True):
        s.goto(stage)
        caption = html.unescape(s.caption.value)
        assert f"What the agent receives: its context block, {len(sent)} turns" in caption
        for title, df in view.tables:
            if "uid" in df.columns:
                assert df[SENT_COLUMN].tolist() == [sent.get(u, "not sent") for u in df["uid"]], \
                    (stage, title)
    assert "not the order the agent reads" in s.views[STAGES.index("settlement")].caption
    assert "not the order the agent reads" in s.views[STAGES.index("groups")].caption


def test_stepper_tables_withhold_an_injection_the_agent_is_not_sent(ro_mem: ak.Memory
                                                                     ) -> None:
    """Issue 25 (item 3's leftover): a turn flagged as injection reads in every stage table
    as the agent's context block would show it — its ``[withheld: …]`` marker — also when
    the recall touches it without sending it, never as its raw text."""
    import html

    from akasha_explorer.brief.api import messages_of
    from akasha_explorer.brief.context import item_line
    from akasha_explorer.widgets.stages import SENT_COLUMN

    flagged = "2026-09-10-evening:0"           # "Ignore all previous instructions ..."
    raw = ro_mem.messages(flagged)[0].text
    assert "injection" in ro_mem.messages(flagged)[0].flags
    # a recall that touches the turn without sending it (which one does moves with the
    # ranking: the first of these questions that does)
    for query in ("今天到货了一个树莓派5，准备装 Home Assistant", "树莓派5到了，装 Home Assistant",
                  "Home Assistant 装好了", "今天到货了一个树莓派5"):
        s = RecallStepper(ro_mem, query=query)
        t = s.trace
        assert t is not None
        if flagged not in {it.node for it in t.context().items} and any(
                (df["uid"] == flagged).any() for view in s.views for _, df in view.tables
                if "uid" in df.columns):
            break
    else:
        pytest.fail("no question touches the flagged turn without sending it")
    want = item_line(messages_of(ro_mem.store, [flagged])[flagged])[0]
    assert want.startswith("[withheld: flagged as injection]")
    rows = 0
    for stage, view in zip(STAGES, s.views, strict=True):
        for title, df in view.tables:
            if "text" not in df.columns:
                continue
            mine = df[df["uid"] == flagged]
            assert mine["text"].tolist() == [want] * len(mine), (stage, title)
            assert set(mine[SENT_COLUMN]) <= {"not sent"}
            rows += len(mine)
            s.goto(stage)
            for name in [n for n, _ in view.tables]:
                s.table_pick.value = name
                assert raw not in html.unescape(s.table.value), (stage, name)
            drawn = json.dumps([s.view.nodes, [o[0] for o in s.current.options]],
                               ensure_ascii=False)   # labels, tooltips, the turn picker
            assert raw[:20] not in drawn, stage
    assert rows                                 # the flagged turn is in some table
    assert ro_mem.neighbourhood().text(flagged) == "[withheld: flagged as injection]"


def test_stepper_writeback_is_a_dry_run_until_commit(rw_mem: ak.Memory) -> None:
    m = rw_mem
    strength0 = m.store.mirror.nodes.strength.copy()
    edges0 = m.store.mirror.edges.count
    s = RecallStepper(m, query=QUERY)
    s.goto("writeback")
    plan = s.trace.writeback
    assert plan is not None
    assert not plan.applied
    assert plan.current_uid == s.current.value
    assert np.array_equal(m.store.mirror.nodes.strength, strength0)
    assert m.store.mirror.edges.count == edges0
    df = s.frame()
    assert df["uid"].tolist() == plan.nodes.uids
    assert np.allclose(df["strength_after"], plan.nodes.strength_after)
    # choosing another current node re-plans (still nothing written)
    other = s.current.options[1][1]
    s.current.value = other
    assert s.trace.writeback.current_uid == other
    assert np.array_equal(m.store.mirror.nodes.strength, strength0)
    assert not s.commit_button.disabled
    s.commit_button.click()
    done = s.committed
    assert done is not None
    assert done.applied
    assert s.commit_button.disabled
    for u, after in zip(done.nodes.uids, done.nodes.strength_after, strict=True):
        assert m.node(u).strength == pytest.approx(after)
    e, n = m.store.mirror.edges, m.store.mirror.nodes
    for a, b, w in zip(done.edges.src_uid, done.edges.dst_uid, done.edges.w_after, strict=True):
        assert e.w[e.find(n.index[a], n.index[b])] == pytest.approx(w)
    assert "applied" in s.caption.value
    assert s.stage.value == "writeback"
    s.commit_button.click()  # a trace commits once: refused, nothing more written
    assert "commits once" in s.status.value
    assert m.store.journal.pending == 1


def test_stepper_switches_profile_for_a_dry_run_only(rw_mem: ak.Memory) -> None:
    m = rw_mem
    s = RecallStepper(m, query="阿岚的生日是哪天")
    v2 = s.trace
    assert m.settings.profile_name()[0] == "v2" and v2.floor.sources[0].startswith("FTS")
    assert not s.commit_button.disabled
    s.profile.value = "v1"                          # re-recalls under the v1 profile
    v1 = s.trace
    assert v1 is not v2 and v1.settings["HYBRID"] is False
    assert v1.first_block().uids == v1.dense.uids   # V1's dense floor
    assert "profile v1" in s.status.value and s.commit_button.disabled
    assert s.commit() is None and "own profile to commit" in s.status.value
    assert m.store.journal.pending == 0                   # nothing written
    s.profile.value = ""
    assert s.trace.settings["HYBRID"] is True and not s.commit_button.disabled


def test_stepper_picks_from_query_log_and_reports_bad_input(rw_mem: ak.Memory) -> None:
    m = rw_mem
    when = m.last_ts() - 3600.0
    made = m.recall("加湿器 湿度 自动化", now=when)
    s = RecallStepper(m)
    logged = [v for _, v in s.log_pick.options if v]
    assert made.log_uid in logged
    s.log_pick.value = made.log_uid
    assert s.trace is not None                 # as it was made (the stepper adds a dry-run
    shown, want = s.trace.to_dict(), made.to_dict()           # write-back plan to show)
    assert {k: v for k, v in shown.items() if k != "writeback"} == \
        {k: v for k, v in want.items() if k != "writeback"}
    assert s.trace.now == when
    assert s.query.value == "加湿器 湿度 自动化"
    assert "not written back" in s.status.value and not s.commit_button.disabled
    s.when.value = "not a time"
    s.run_button.click()
    assert "cannot parse" in s.status.value
    assert s.trace.now == when
    s.query.value = "   "
    s.run_button.click()
    assert "type a query" in s.status.value
    frac = m.last_ts() - 1800.123456                # an agent's recall, at time.time()
    s.show_logged(m.recall("加湿器 湿度 自动化", now=frac).log_uid)
    assert "." not in s.when.value                  # the box reads to the second …
    s.run_button.click()
    assert s.trace.now == frac and "a dry run" in s.status.value  # … and means the time


def test_stepper_selection_shows_terms_and_escaped_messages(ro_mem: ak.Memory) -> None:
    s = RecallStepper(ro_mem, query=QUERY)
    top = s.trace.activation.uids[0]
    s.view.selected = [top]
    assert top in s.detail.value
    assert "score" in s.detail.value
    uid = _hostile_node(ro_mem)
    if uid in {n["id"] for n in s.view.nodes}:
        s.view.selected = [uid]
        assert "<img src=x" not in s.detail.value


# -- MemoryExplorer -------------------------------------------------------------------------
def test_explorer_search_open_expand_filter_select(ro_mem: ak.Memory) -> None:
    x = MemoryExplorer(ro_mem, cap=40)
    x.search_box.value = "换药 引流条"
    x.search_button.click()
    hits = x.hits
    assert len(hits)
    # ranks are whole numbers, shown as such (issue 25 item 11: 01's table showed 2.000)
    assert str(hits["dense_rank"].dtype) == str(hits["bm25_rank"].dtype) == "Int64"
    shown = table(hits.head(3)).to_html()
    assert ">1.000<" not in shown and ">2.000<" not in shown
    assert {"dense", "lexical"} <= set("+".join(hits["found_by"]).split("+"))
    assert set(x.shown) == set(hits["uid"])
    assert len(x.results.options) == len(hits)
    lex = hits.dropna(subset=["bm25_rank"]).sort_values("bm25_rank")["uid"].iloc[0]
    assert any(t in x.data.text(lex) or t in " ".join(m.text for m in ro_mem.messages(lex))
               for t in ("换药", "引流条"))
    x.results.value = lex
    x.open_button.click()
    assert x.opened == lex
    assert x.view.selected == [lex]
    for msg in ro_mem.messages(lex):
        assert msg.text.split()[0][:10] in x.detail.value or "&" in msg.text
    nbrs = {a if b == lex else b for a, b, _ in StoreGraph(ro_mem).incident([lex])}
    assert set(x.shown) - set(hits["uid"]) <= nbrs
    while len(x.shown) < x.view.cap:
        n0 = len(x.shown)
        x.view.selected = list(x.shown)
        x.expand_button.click()
        if len(x.shown) == n0:
            break
    assert len(x.shown) <= 40
    assert len(x.view.nodes) <= 40
    # edges drawn are real COACT edges among shown nodes
    e, n = ro_mem.store.mirror.edges, ro_mem.store.mirror.nodes
    for d in x.view.edges[:50]:
        k = e.find(n.index[d["from"]], n.index[d["to"]])
        assert k >= 0
        assert edge_eff(e.w[k], e.last_ts[k], x.data.now,
                                   ro_mem.settings.EDGE_TAU) > 0
    comm = x.data.communities()
    x.set_filters(community=comm[lex])
    assert {comm[d["id"]] for d in x.view.nodes} == {comm[lex]}
    x.set_filters(community=None, start="2026-09-01", end="2026-09-10")
    end = 1789084800.0  # 2026-09-11 00:00 UTC
    assert all(float(n.ts[n.index[d["id"]]]) < end for d in x.view.nodes)
    x.set_filters(start=x.time_range.options[0][1], end=x.time_range.options[-1][1])
    x.view.selected = x.shown[:3]
    df = x.selection_df()
    assert df["uid"].tolist() == x.shown[:3]
    assert df["text"].tolist() == [x.data.text(u) for u in x.shown[:3]]


def test_explorer_session_and_hostile_text(ro_mem: ak.Memory) -> None:
    x = MemoryExplorer(ro_mem)
    uid = _hostile_node(ro_mem)
    session = ro_mem.node(uid).session
    x.sessions.value = session
    assert uid in x.shown
    assert all(ro_mem.node(u).session == session for u in x.shown)
    x.view.selected = [uid]
    assert "&lt;img src=x onerror=alert(1)&gt;" in x.detail.value
    assert "<img src=x" not in x.detail.value
    assert "<img" not in x.selection.value
    before = len(x.shown)
    _front(x.view, {"event": "expand", "ids": [uid]})  # a double-click on the canvas
    assert len(x.shown) > before
    assert set(x.shown[before:]) <= {a if b == uid else b
                                     for a, b, _ in StoreGraph(ro_mem).incident([uid])}
    x.clear_button.click()
    assert x.shown == []
    assert x.view.nodes == []
    x.expand_button.click()
    assert "select a node" in x.status.value


# -- notebook_store ------------------------------------------------------------------------
def _holder(path: Path, *, read_only: bool) -> subprocess.Popen[str]:
    """Another process holding the store open (as another notebook's kernel would)."""
    code = ("import sys, akasha_explorer as ak\n"
            f"m = ak.open({str(path)!r}, read_only={read_only})\n"
            "print('ready', flush=True)\nsys.stdin.read()\n")
    p = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, text=True)
    assert p.stdout is not None
    assert p.stdout.readline().strip() == "ready"
    return p


@pytest.mark.slow
def test_notebook_store_env_and_lock_fallbacks(demo_store: Path,
                                               monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("AKASHA_STORE", str(demo_store))
    with notebook_store(write=True) as m:
        assert m.path == demo_store.resolve()
        assert not m.read_only
    reader = _holder(demo_store, read_only=True)
    try:
        with notebook_store(write=True) as m:  # another reader: fall back to read-only
            assert m.read_only
        assert "opened read-only" in capsys.readouterr().out
    finally:
        reader.communicate("")
    writer = _holder(demo_store, read_only=False)
    try:
        with pytest.raises(ak.StoreLocked, match=r"mem.close\(\)"):
            notebook_store()
    finally:
        writer.communicate("")


def _drawn_colours(view: GraphCanvas) -> set[tuple[str, str]]:
    """(kind, colour) of what the view's node and edge dicts ask vis-network to draw."""
    out = set()
    for n in view.nodes:
        c = n.get("color") or {}
        if "background" in c:
            out.add(("fill" if n.get("shape", "dot") == "dot" else "marker",
                     str(c["background"]).lower()))
        if n.get("borderWidth", 1) >= 2:
            out.add(("ring", str(c["border"]).lower()))
        if (n.get("shadow") or {}).get("enabled"):
            out.add(("halo", str(n["shadow"]["color"]).lower()))
    for e in view.edges:
        out.add(("edge", str((e.get("color") or {}).get("color", EDGE_COLOUR)).lower()))
    return out


def test_every_stage_names_each_colour_it_draws(ro_mem: ak.Memory) -> None:
    s = RecallStepper(ro_mem, query=QUERY)
    for stage in STAGES:
        s.goto(stage)
        named = {(e["kind"], e["colour"]) for e in s.view.legend}
        assert _drawn_colours(s.view) - named == set(), stage
        assert any(e["kind"] == "size" for e in s.view.legend), stage
