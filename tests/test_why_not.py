""""Why not this turn?" (issue 25 item 3): ``mem.why_not(trace, node)`` names the last stage
a turn reached in one recall, why it went no further, and the numbers behind it — checked
against the trace's own lists on the demo store, one turn of every kind."""

from __future__ import annotations

import pytest

import akasha_explorer as ak

QUERY = "阿岚的生日是哪天"


def test_every_turn_gets_the_stage_the_trace_shows(ro_mem: ak.Memory) -> None:
    mem = ro_mem
    t = mem.recall(QUERY, now=mem.last_ts(), log=False)
    first = t.first_block()
    for k, u in enumerate(first.uids):
        got = mem.why_not(t, u)
        assert got["stage"] == "delivered" and got["numbers"]["rank"] == k + 1
    for u in t.activation.uids:
        if u not in first.uids:
            assert mem.why_not(t, u)["stage"] == "activated"
    for u, score, why in zip(t.suppressed.uids, t.suppressed.scores, t.suppressed.reasons,
                             strict=True):
        if u in first.uids or u in t.ripple.uids or u in t.dense.uids:
            continue
        got = mem.why_not(t, u)
        assert got["stage"] == "settlement" and got["numbers"]["why"] == why
        assert got["numbers"]["score"] == score and f"{score:.3f}" in got["reason"]
    reached = {*t.micro.uids, *t.graph.uids, *t.relevance.uids, *t.dense.uids,
               *t.ripple.uids, *t.suppressed.uids, *first.uids, *t.activation.uids}
    far = [u for u in mem.store.mirror.nodes.uid if u not in reached]
    assert far, "the demo has turns no stage of this recall touched"
    got = mem.why_not(t, far[0])
    assert got["stage"] == "not_reached"
    n = got["numbers"]
    assert n["cos_msg"] < n["dense_pool_lowest"] or "cosine is" in got["reason"]
    assert set(n["missing_terms"]) <= set(n["query_terms"])


def test_a_graph_neighbour_left_out_says_by_how_much(ro_mem: ak.Memory) -> None:
    mem = ro_mem
    for q in (QUERY, "手指换药疼不疼", "Slay the Spire A10 with Lan", "湿度计换成 SONOFF 了吗"):
        t = mem.recall(q, now=mem.last_ts(), log=False)
        g = t.graph
        out = [u for u, sel in zip(g.uids, g.selected, strict=True) if not sel
               and u not in t.micro.uids and u not in t.suppressed.uids
               and u not in t.relevance.uids]
        if out:
            got = mem.why_not(t, out[0])
            assert got["stage"] == "graph_expand"
            assert got["numbers"]["score_graph"] <= got["numbers"]["last_kept"]
            return
    raise AssertionError("no recall of the demo left a graph neighbour out")


def test_a_later_turn_is_invisible_and_an_unknown_one_refused(ro_mem: ak.Memory) -> None:
    mem = ro_mem
    nodes = mem.store.mirror.nodes
    early = float(sorted(nodes.ts)[5])
    t = mem.recall(QUERY, now=early, log=False)
    late = next(u for u, ts in zip(nodes.uid, nodes.ts, strict=True) if ts > early)
    assert mem.why_not(t, late)["stage"] == "invisible"
    with pytest.raises(ak.NotFound, match="no node"):
        mem.why_not(t, "nobody:0")


def test_a_labelled_turn_that_missed_is_explained(labelled_demo) -> None:  # type: ignore[no-untyped-def]
    with ak.open(labelled_demo, read_only=True) as mem:
        missed = []
        for lab in mem.labels():
            if not lab.relevant:
                continue
            t = mem.recall(lab.query, now=mem.last_ts(), log=False)
            if lab.node not in t.first_block().uids:
                missed.append(mem.why_not(t, lab.node))
            if len(missed) >= 5:
                break
        assert missed, "every labelled turn was delivered: nothing to explain"
        for got in missed:
            assert got["stage"] != "delivered" and got["reason"]


def test_the_stepper_says_why_and_names_labelled_turns_that_missed(labelled_demo) -> None:  # type: ignore[no-untyped-def]
    from akasha_explorer.widgets import RecallStepper

    with ak.open(labelled_demo, read_only=True) as mem:
        for lab in mem.labels():
            if not lab.relevant:
                continue
            t = mem.recall(lab.query, now=mem.last_ts(), log=False)
            if lab.node not in t.first_block().uids:
                break
        else:
            raise AssertionError("every labelled turn was delivered")
        s = RecallStepper(mem, query=lab.query)
        assert f"labelled turn {lab.node} missed: lost at" in s.status.value
        s.why_box.value = lab.node
        s.why_button.click()
        assert "ak-why" in s.detail.value and lab.node in s.detail.value
        s.why_box.value = "nobody:0"
        s.why_button.click()
        assert "no node" in s.detail.value
        delivered = s.trace.first_block().uids[0]
        s._on_select([delivered])                        # a click on the canvas
        assert "delivered" in s.detail.value
