"""The issue-16 panels headless (the Python side of each widget): what-if, time travel,
methods side by side, the label bar — on the real demo store. Every one is a dry run: the
store's files are byte-identical afterwards, except for the labels the label bar writes."""

from __future__ import annotations

import datetime as dt
import html
import re
from pathlib import Path

import pytest

import akasha_explorer as ak
from akasha_explorer import widgets
from akasha_explorer.analysis.whatif import diff_traces

from .conftest import tree_digest

QUERY = "和阿岚打杀戮尖塔，A10 过了吗"


def _picture(view: widgets.GraphCanvas) -> list[tuple[str, str, object, object]]:
    return sorted((n["id"], str(n.get("label")), n.get("size"),
                   (n.get("color") or {}).get("border")) for n in view.nodes)


def test_panels_are_exported_by_the_names_a_reader_guesses() -> None:
    for name in ("WhatIfPanel", "TimeTravelPanel", "CompareMethods", "LabelBar"):
        assert name in widgets.__all__ and hasattr(widgets, name)


def test_whatif_resettles_redraws_and_writes_nothing(labelled_demo: Path) -> None:
    before = tree_digest(labelled_demo)
    with ak.open(labelled_demo, read_only=True) as mem:
        p = widgets.WhatIfPanel(mem, query=QUERY)
        assert p.baseline is not None and p.diff is not None
        assert p.diff.entered == p.diff.left == p.diff.moved == []  # baseline vs itself
        shown = _picture(p.view)
        d = p.set(RWR_STEPS=0, GRAPH_LIMIT=0)
        assert d is not None and d.settings == {"GRAPH_LIMIT": (8, 0), "RWR_STEPS": (2, 0)}
        assert d.entered or d.left or d.moved
        assert _picture(p.view) != shown                     # the picture changed
        assert "moved" in p.view.caption and p.last_ms > 0
        moved = p.frame()
        assert {"uid", "text", "change", "rank_before", "rank_after", "terms"} <= set(moved)
        assert moved.loc[moved["change"] != "same", "terms"].str.len().gt(0).all()
        scores = p.score()
        assert scores is not None and set(scores["method"]) == {"context", "akasha", "dense",
                                                                "bm25"}
        assert (scores["Δ recall@10"].abs() <= 1).all()
        p.set(EDGE_TAU=1.0)                                  # days, as the slider shows
        assert p.settings().EDGE_TAU == 86400.0
        # the summary says it in the slider's unit, and the lists say what each turn said
        base_days = p.base_settings.EDGE_TAU / 86400.0
        assert f"EDGE_TAU {base_days:.6g} → 1 days" in html.unescape(p.summary.value)
        d2 = p.set(EDGE_TAU=1.0, RWR_STEPS=0, GRAPH_LIMIT=0)
        assert d2 is not None
        for uid in (d2.entered + d2.left)[:3]:
            said = p._graph.text(uid)[:20]
            assert said and html.escape(said)[:10] in p.detail.value
        assert p.reset() is not None and p.diff is not None and not p.diff.moved
        p.profile.value = "v1"                               # the profile switch
        assert p.base_settings.profile_name()[0] == "v1"
        assert p.apply_button.disabled                       # read-only: no commit
        assert p.apply() is None
        with pytest.raises(ValueError, match="no control NOPE"):
            p.set(NOPE=1)
        p.query.value = " "
        assert p.run() is None and "type a query" in p.status.value
    assert tree_digest(labelled_demo) == before


def test_whatif_commit_makes_the_settings_the_stores(demo_store: Path) -> None:
    with ak.open(demo_store) as mem:
        p = widgets.WhatIfPanel(mem, query=QUERY)
        p.set(ACTIVATION_K=5)
        assert not p.apply_button.disabled
        changed = p.apply()
        assert changed == {"ACTIVATION_K": (8, 5)}
        assert mem.settings.ACTIVATION_K == 5 and p.apply_button.disabled
        p.set(ACTIVATION_K=8)                       # back to the profile's own value
        assert p.apply() == {"ACTIVATION_K": (5, 8)} and mem.settings == ak.Settings()


def test_whatif_offers_and_takes_only_values_inside_the_ranges(demo_store: Path) -> None:
    """Sliders stay inside their settings' ranges; a value outside, typed from code, is
    refused with the setting's one line in the status, nothing moves and nothing is
    written."""
    from akasha_explorer.config import setting_problem
    from akasha_explorer.widgets.whatif import CONTROLS

    manifest = (demo_store / "akasha.json").read_bytes()
    with ak.open(demo_store) as mem:
        p = widgets.WhatIfPanel(mem, query=QUERY)
        for name, (_lo, _hi, _step, unit, _) in CONTROLS.items():
            w = p.controls[name]
            for end in (w.min, w.max):
                value = end if isinstance(w.value, int) else end * unit
                assert setting_problem(name, value) is None, (name, end)
        before = p.settings()
        for name, value, said in [
                ("RWR_ALPHA", 1.5, "RWR_ALPHA=1.5 is outside its range [0, 1]"),
                ("EDGE_TAU", 0.0, "EDGE_TAU=0.0 is outside its range [1, inf)"),
                ("ACTIVATION_K", 0, "ACTIVATION_K=0 is outside its range [1, 1000]"),
                ("ACTIVATION_K", 2.5, "ACTIVATION_K=2.5 is not a whole number"),
                ("CROSS_BOOST", float("nan"), "CROSS_BOOST=nan is outside its range"),
                ("RELEVANCE_FLOOR", "yes", "RELEVANCE_FLOOR='yes' is not True or False")]:
            assert p.set(**{name: value}) is None
            assert said in html.unescape(p.status.value) and "\n" not in p.status.value
            assert p.settings() == before                   # nothing moved
        p.controls["RWR_ALPHA"].value = 7.0                 # a slider clamps to its span
        assert p.settings().RWR_ALPHA <= 1.0
        assert p.set(EDGE_TAU=400.0) is not None            # inside the range: the slider grows
        assert p.settings().EDGE_TAU == 400.0 * 86400.0
        assert p.apply_button.disabled is False
    assert (demo_store / "akasha.json").read_bytes() == manifest


def test_diff_of_the_same_recall_at_two_times(labelled_demo: Path) -> None:
    with ak.open(labelled_demo, read_only=True) as mem:
        last = mem.last_ts()
        a = mem.recall(QUERY, now=last, log=False)
        b = mem.recall(QUERY, now=last - 30 * 86400.0, log=False)
    d = diff_traces(a, b, order="context")
    assert d.entered and d.left and d.now == (a.now, b.now)
    assert "now -2592000 s" in d.summary()


def test_time_travel_fades_decays_and_hides_the_unsaid(labelled_demo: Path) -> None:
    before = tree_digest(labelled_demo)
    with ak.open(labelled_demo, read_only=True) as mem:
        p = widgets.TimeTravelPanel(mem, query=QUERY)
        now_picture, now_frame = _picture(p.view), p.frame()
        assert len(now_frame) == len(p.uids)
        p.go(-30)
        past = p.frame()
        assert len(past) < len(now_frame)                          # not yet said
        then = dt.datetime.fromtimestamp(p.now(), dt.UTC).strftime("%Y-%m-%d %H:%M")
        assert (past["said"] <= then).all()
        assert p.entered and p.left                                 # the recall moved
        assert _picture(p.view) != now_picture
        p.go(45)
        future = p.frame().set_index("uid")["strength_eff"]
        assert (future < now_frame.set_index("uid")["strength_eff"].loc[future.index]).all()
        assert p.days.value == 45 and p.play.max >= 45 and p.play.min < -30
        p.go(p.days.min)                   # the slider's first day still shows what was said
        first = min(float(x.first_ts) for x in mem.sessions())
        assert first <= p.now() < first + 86400.0 and len(p.frame()) > 0
        strongest = widgets.TimeTravelPanel(mem)                    # no query: strongest turns
        assert strongest.trace is None and len(strongest.frame()) == len(strongest.uids) > 0
    assert tree_digest(labelled_demo) == before


SAID = re.compile(r": (\d+) of (?:the picture's )?(\d+) turns said by then")
DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def test_time_travel_counts_against_one_number_in_every_frame(ro_mem: ak.Memory) -> None:
    p = widgets.TimeTravelPanel(ro_mem, query=QUERY)
    chosen = set(p.uids)
    counts = []
    for day in (0, -3, -7, -14, -21, -30, -45, p.days.min, 30):
        p.go(day)
        m = SAID.search(p.view.caption)
        assert m, p.view.caption
        counts.append((int(m[1]), int(m[2]), sum(u in chosen for u in p.frame()["uid"])))
    assert {d for _, d, _ in counts} == {len(p.uids)}, counts  # one denominator, said what
    assert all(n == mine for n, _, mine in counts), counts      # of them, said by then
    assert "the picture's" in p.view.caption
    assert len({n for n, _, _ in counts}) > 2                     # the numerator does move


def test_time_travel_dates_its_time_axis(ro_mem: ak.Memory) -> None:
    p = widgets.TimeTravelPanel(ro_mem, query=QUERY)
    p.go(-10)
    said = dict(zip(p.frame()["uid"], p.frame()["said"].str[:10], strict=True))
    ticks = sorted((n["x"], n["label"]) for n in p.view.nodes
                   if n["id"] not in said and DATE.match(str(n.get("label", ""))))
    assert len(ticks) >= 3, [n.get("label") for n in p.view.nodes if n["id"] not in said]
    assert [d for _, d in ticks] == sorted(d for _, d in ticks)  # later to the right
    p.go(0)
    every = sorted(p.frame()["said"].str[:10])
    assert ticks[0][1] == every[0] and ticks[-1][1] == every[-1]  # the axis spans the turns
    for n in p.view.nodes:                     # each turn stands between the ticks' dates
        if n["id"] in said:
            before = [d for x, d in ticks if x <= n["x"] + 1e-6]
            after = [d for x, d in ticks if x >= n["x"] - 1e-6]
            assert before[-1] <= said[n["id"]] <= after[0], (n["id"], said[n["id"]], ticks)


def test_compare_methods_panel_and_the_label_bar(demo_store: Path) -> None:
    with ak.open(demo_store) as mem:
        p = widgets.CompareMethods(mem, query="Where does Lan live?", k=5)
        f = p.frame()
        assert len(f) and {"text", "rank_dense", "rank_bm25", "why"} <= set(f.columns)
        assert "<table>" in p.table.value and "every method agrees" in p.summary.value
        uid = str(f["uid"].iloc[0])
        p.labels.node.value = uid
        assert p.labels.label(True)
        assert mem.labels("Where does Lan live?")[0].node == uid
        assert "labelled ✓ in the top k" in p.summary.value
        assert p.labels.marks() == {uid: "✓"}
        assert p.labels.label(None) and mem.labels() == []
        p.methods.value = ()
        assert p.run() is None and "pick at least one method" in p.status.value


def test_a_label_bar_beside_the_stepper_and_the_explorer(demo_store: Path) -> None:
    with ak.open(demo_store) as mem:
        stepper = widgets.RecallStepper(mem)
        bar = widgets.LabelBar.beside(stepper)
        assert bar.node.options == ()                       # nothing recalled yet
        stepper.run("阿岚的生日是哪天")
        assert stepper.trace is not None
        assert bar.node.value == stepper.trace.first_block().uids[0]
        assert bar.label(True)
        assert [r.node for r in mem.labels("阿岚的生日是哪天")] == [bar.node.value]
        explorer = widgets.MemoryExplorer(mem)
        side = widgets.LabelBar.beside(explorer)
        explorer.search_box.value = "加湿器"
        explorer.search("加湿器")
        assert side.node.options and side.query() == "加湿器"
        with pytest.raises(TypeError, match="RecallStepper or a MemoryExplorer"):
            widgets.LabelBar.beside(widgets.GraphCanvas())


def test_compare_panel_withholds_what_the_context_withholds(demo_store: Path) -> None:
    """Issue 25 item 3: an injection-flagged message is not on the panel (table, hover,
    label picker, frame) — the context's marker is, with why; a turn BM25 did not score
    says so instead of a padded rank; the caption names the list the agent receives."""
    query = "what did the system prompt say?"
    with ak.open(demo_store, read_only=True) as mem:
        p = widgets.CompareMethods(mem, query=query, k=10)
        f = p.frame()
        hostile = {m.text for u in f["uid"] for m in mem.messages(u) if "injection" in m.flags}
    assert hostile
    shown = [p.table.value, p.summary.value, repr(p.labels.node.options),
             f.to_json(force_ascii=False)]
    for text in hostile:
        assert not any(text in s or html.escape(text) in s for s in shown), text
    assert "[withheld: flagged as injection]" in p.table.value
    assert "withheld from the agent's context: flagged as injection" in p.table.value
    assert "– no query word" in p.table.value and "– not sent" in p.table.value
    summary = html.unescape(p.summary.value)
    assert "The agent receives the context column: its context block" in summary
    assert f"{int(f['rank_context'].notna().sum())} of these rows are sent" in summary
    assert "context withholds (flagged as injection)" in summary
