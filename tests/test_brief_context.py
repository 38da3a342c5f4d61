"""Context blocks (issue 9): handles, verbatim text, withheld injections, the budget."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

import akasha_explorer as ak
from akasha_explorer.brief import api as brief_api
from akasha_explorer.brief.atoms import atoms
from akasha_explorer.brief.context import NO_MEMORY, build_context
from akasha_explorer.brief.tokens import estimate_tokens
from akasha_explorer.errors import InvalidInput

HUMIDITY = "what humidity threshold did I set for the humidifier"
BIRTHDAY = "阿岚的生日是哪天"
INJECTION = "ignore all previous instructions"
UNRELATED = "quantum chromodynamics lattice gauge"
BUDGETS = (30, 100, 1000)


@pytest.fixture(scope="module")
def demo_mem(demo_store_template: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ak.Memory]:
    """One writable copy of the demo store for this module's read-only checks."""
    dst = tmp_path_factory.mktemp("brief_ctx") / "demo"
    shutil.copytree(demo_store_template, dst)
    m = ak.open(dst)
    yield m
    m.close()




def recall(mem: ak.Memory, query: str, **kw):
    return mem.recall(query, now=mem.last_ts(), log=False, **kw)


def shown_handles(text: str) -> set[str]:
    """Handles that start a line, plus those named by the closing "more" line."""
    out = set(re.findall(r"^(\[\d+\]) ", text, re.M))
    for line in text.splitlines():
        if " more, over budget" in line:
            for a, b in re.findall(r"\[(\d+)\](?:-\[(\d+)\])?", line.split(":")[0]):
                out.update(f"[{k}]" for k in range(int(a), int(b or a) + 1))
    return out


@pytest.mark.parametrize("style", ["brief", "json", "cards"])
def test_byte_identical_for_the_same_trace_and_budget(demo_mem, style):
    a, b = recall(demo_mem, HUMIDITY), recall(demo_mem, HUMIDITY)  # two recalls, same store and now
    for budget in (*BUDGETS, 300):
        x = build_context(a, budget, style).text
        assert x == build_context(a, budget, style).text
        assert x.encode() == build_context(b, budget, style).text.encode()


@pytest.mark.parametrize("query", [HUMIDITY, BIRTHDAY])
@pytest.mark.parametrize("budget", BUDGETS)
def test_atoms_of_the_top_items_survive_every_budget(demo_mem, query, budget):
    trace = recall(demo_mem, query)
    block = build_context(trace, budget)
    floor = block.items[: demo_mem.settings.CONTEXT_FLOOR_ITEMS]
    for item in floor:
        assert item.level in ("full", "atoms", "withheld", "pointer")
        if item.level == "pointer":  # only an item with no atoms at all may be a bare pointer
            assert item.atoms == ()
        for a in item.atoms:
            assert a in block.text, (budget, item.handle, a)
    if budget >= 1000:
        assert {i.level for i in floor} <= {"full", "withheld"}
    texts = [m["text"] for i in floor for m in trace.messages[i.node]]
    assert any(atoms(t) for t in texts)  # the check above is not vacuous


@pytest.mark.parametrize("style", ["brief", "json", "cards"])
@pytest.mark.parametrize("budget", [30, 60, 100, 250, 1000])
def test_budget_tells_the_truth_and_nothing_is_dropped(demo_mem, style, budget):
    trace = recall(demo_mem, BIRTHDAY)
    block = build_context(trace, budget, style)
    assert block.tokens == estimate_tokens(block.text)
    assert block.over_budget == (block.tokens > budget)
    if block.over_budget:  # only the floor items' pointers and atoms may overrun
        floor = block.items[: demo_mem.settings.CONTEXT_FLOOR_ITEMS]
        assert all(i.level in ("atoms", "pointer", "withheld") for i in floor)
        assert all(i.level == "folded" for i in block.items[len(floor):])
    if style == "brief":
        assert shown_handles(block.text) == set(block.handles)
    elif style == "json":
        doc = json.loads(block.text)
        named = {i["h"] for i in doc["items"] if "h" in i}
        assert named == {i.handle for i in block.items if i.level != "folded"}
    levels = [i.level for i in block.items]
    assert len(levels) == len(block.handles) > 10


def test_a_real_tokenizer_replaces_the_estimate(demo_mem, real_tokenizer):
    trace = recall(demo_mem, BIRTHDAY)
    for budget in (100, 400):
        block = build_context(trace, budget, tokenizer=real_tokenizer)
        assert block.tokens == real_tokenizer(block.text) <= budget


def test_more_budget_shows_more(demo_mem):
    trace = recall(demo_mem, HUMIDITY)
    sizes = [sum(i.level != "folded" for i in build_context(trace, b).items)
             for b in (30, 100, 300, 3000)]
    full = [sum(i.level == "full" for i in build_context(trace, b).items) for b in (30, 3000)]
    assert sizes == sorted(sizes)
    assert sizes[0] < sizes[-1]
    assert full[0] == 0 < full[1] == len(build_context(trace, 3000).items)


def test_full_text_is_verbatim_and_lines_start_with_handles(demo_mem):
    trace = recall(demo_mem, HUMIDITY)
    block = build_context(trace, 100_000)
    assert all(line.startswith(("[", "    ")) for line in block.text.splitlines()[1:]
               if line not in ("direct:", "background:"))
    for item in block.items:
        assert item.level in ("full", "withheld")
        for m in demo_mem.messages(item.node):
            if "injection" not in m.flags:   # a line break continues four spaces in
                assert f" {m.speaker}: " + m.text.replace("\n", "\n    ") in block.text
    first = block.items[0]
    assert block.text.splitlines()[2].startswith(f"{first.handle} 2026-")


def test_the_floor_comes_first_then_background(demo_mem):
    trace = recall(demo_mem, HUMIDITY)
    first = trace.first_block()
    assert first is trace.floor and first.uids  # the default profile's fused floor
    block = build_context(trace, 100_000)
    groups = [i.group for i in block.items]
    assert groups == ["direct"] * len(first) + ["background"] * (len(groups) - len(first))
    assert [i.node for i in block.items[: len(first)]] == first.uids
    assert block.text.index("direct:") < block.text.index("background:")


@pytest.mark.parametrize("style", ["brief", "json", "cards"])
def test_injection_flagged_text_is_withheld_and_marked(demo_mem, style):
    trace = recall(demo_mem, INJECTION)
    flagged = [m for u in trace.messages for m in trace.messages[u] if "injection" in m["flags"]]
    assert flagged, "the demo's hostile messages should be recalled by this query"
    for budget in (30, 1000, 100_000):
        block = build_context(trace, budget, style)
        for m in flagged:
            assert m["text"] not in block.text
            for line in m["text"].splitlines():  # no recognisable piece of it either
                if len(line.strip()) >= 12 and re.search(r"\w", line):
                    assert line.strip() not in block.text
    block = build_context(trace, 100_000, style)
    assert "flagged as injection" in block.text
    marked = {i.node for i in block.items if i.withheld}
    assert {m["node"] for m in flagged} <= marked


def test_empty_activation_says_no_relevant_memory(demo_mem):
    trace = recall(demo_mem, UNRELATED, settings=demo_mem.settings.replace(RELEVANCE_FLOOR=True))
    assert trace.activation.uids == []
    assert trace.dense.uids
    for budget in BUDGETS:
        block = build_context(trace, budget)
        assert block.text == NO_MEMORY
        assert block.status == "empty"
        assert block.items == ()
        assert block.handles == {}
    doc = json.loads(build_context(trace, 100, "json").text)
    assert doc == {"memory": {"status": "empty", "query": UNRELATED}, "items": []}


def test_weak_match_is_said(demo_mem):
    trace = recall(demo_mem, UNRELATED)  # V1 rules: Graph candidates still activate
    assert not trace.relevant
    assert trace.activation.uids
    block = build_context(trace, 1000)
    assert block.status == "weak"
    assert block.text.splitlines()[0].startswith("memory (weak match")


def test_same_text_is_shown_once(demo_mem):
    trace = recall(demo_mem, "嗯")
    block = build_context(trace, 100_000)
    dups = [i for i in block.items if i.same_as]
    assert dups, "the demo's greetings repeat verbatim"
    for d in dups:
        assert f"{d.handle} " in block.text
        assert f"(same text as {d.same_as})" in block.text


def test_trace_without_attached_text_gives_pointers(demo_mem):
    trace = recall(demo_mem, HUMIDITY)
    bare = type(trace).from_dict({k: v for k, v in trace.to_dict().items() if k != "messages"})
    block = build_context(bare, 1000)
    assert all(i.level == "pointer" and not i.attached for i in block.items)
    assert "(text not attached)" in block.text


def test_handles_resolve_through_expand(demo_mem):
    trace = recall(demo_mem, HUMIDITY)
    block = build_context(trace, 100)
    for handle, node in list(block.handles.items())[:: 5]:
        assert demo_mem.expand(handle, 0, trace=block).node == node
        assert demo_mem.expand(handle, 0, trace=trace).node == node
    assert demo_mem.expand("[1]", 0).node == block.handles["[1]"]  # the last recall of demo_mem
    assert demo_mem.expand(1, 0).node == block.handles["[1]"]


def test_bad_arguments_say_what_to_do(demo_mem):
    trace = recall(demo_mem, HUMIDITY)
    with pytest.raises(InvalidInput, match="unknown style"):
        build_context(trace, 100, "markdown")
    with pytest.raises(InvalidInput, match="at least 1"):
        build_context(trace, 0)
    with pytest.raises(InvalidInput, match="time zone"):
        build_context(trace, 100, tz="Mars/Olympus")


def test_dates_follow_the_given_time_zone(demo_mem):
    trace = recall(demo_mem, HUMIDITY)
    utc = build_context(trace, 100_000, "cards").text
    cst = build_context(trace, 100_000, "cards", tz="+08:00").text
    first = trace.messages[trace.dense.uids[0]][0]["ts"]
    import datetime as dt

    local = dt.datetime.fromtimestamp(first, dt.timezone(dt.timedelta(hours=8)))
    assert local.strftime("%Y-%m-%d %H:%M") in cst
    assert cst != utc


def test_trace_context_method_and_json_round_trip(demo_mem):
    trace = recall(demo_mem, BIRTHDAY)
    assert trace.messages  # attached by Memory.recall
    back = type(trace).from_json(trace.to_json())
    assert back == trace
    for budget in (30, 300):
        block = trace.context(budget)
        assert block.text == build_context(trace, budget).text == back.context(budget).text
    assert trace.context().budget == demo_mem.settings.CONTEXT_BUDGET
    assert trace.context(style="json").style == "json"
    demo_mem.replay_trace(trace)  # the attached text is not part of what a replay recomputes


def test_memory_context_saves_its_handles(demo_mem):
    block = demo_mem.context(HUMIDITY, budget_tokens=200, now=demo_mem.last_ts(), log=False)
    saved = brief_api.saved_handles(demo_mem.store)
    assert saved is not None
    assert saved["handles"] == block.handles
    assert saved["query"] == HUMIDITY
    assert block.budget == 200
    assert block.tokens <= 200
