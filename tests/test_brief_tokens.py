"""Token estimate and content atoms (issue 9): honest CJK counting, verbatim atoms."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from akasha_explorer.brief.atoms import atom_spans, atoms
from akasha_explorer.brief.tokens import count_tokens, estimate_tokens

from .conftest import DEMO

CJK_TEXT = st.text(
    alphabet=st.one_of(
        st.characters(min_codepoint=0x4E00, max_codepoint=0x9FFF),  # ideographs
        st.sampled_from(list("，。！？；：「」『』（）《》、…—·　 0123456789%")),
        st.characters(min_codepoint=0x3040, max_codepoint=0x30FF),  # kana
        st.characters(min_codepoint=0xAC00, max_codepoint=0xD7A3),  # hangul
    ),
    min_size=1, max_size=60)




def demo_texts() -> list[str]:
    return [json.loads(line)["text"] for line in DEMO.read_text("utf-8").splitlines()]


def test_estimate_never_undercounts_chinese_demo_sentences(real_tokenizer):
    chinese = [t for t in demo_texts()
               if re.search("[\u4e00-\u9fff]", t) and not re.search("[A-Za-z]", t)]
    assert len(chinese) > 300
    under = [(t, estimate_tokens(t), real_tokenizer(t)) for t in chinese
             if estimate_tokens(t) < real_tokenizer(t)]
    assert under == []


@settings(max_examples=300, deadline=None)
@given(text=CJK_TEXT)
def test_estimate_never_undercounts_generated_cjk(real_tokenizer, text):
    assert estimate_tokens(text) >= real_tokenizer(text)


def test_four_chars_per_token_would_undercount_chinese(real_tokenizer):
    """The reason the estimate exists: len/4 undercounts Chinese three- to four-fold."""
    s = "卧室湿度一到半夜就掉到百分之三十八，加湿器的自动化阈值要不要改成四十五"
    assert len(s) / 4 < real_tokenizer(s) / 3
    assert estimate_tokens(s) == real_tokenizer(s) == len(s)


def test_estimate_counts_latin_words_and_symbols():
    assert estimate_tokens("the old Pi 4 stays on Pi-hole") == 9
    assert estimate_tokens("") == 0
    assert estimate_tokens("早安 Akashic!") == 5  # a 7-letter word counts 2


def _by_pieces(text: str) -> int:
    """The rules of the module docstring read literally, one piece at a time: the
    reference the class-by-class count must equal."""
    from akasha_explorer.brief.tokens import CJK_RANGES
    camel = re.compile(r"[A-Z\u00c0-\u00de]+(?![a-z\u00df-\u024f])|[A-Z\u00c0-\u00de]?"
                       r"[a-z\u00df-\u024f]+|[A-Za-z\u00c0-\u024f]")
    n = 0
    for m in re.finditer(rf"\s+|[{CJK_RANGES}]|[A-Za-z\u00c0-\u024f]+|[0-9]+|.", text, re.S):
        s, c = m.group(), m.group()[0]
        if c.isspace():
            continue
        if "\uac00" <= c <= "\ud7a3":
            n += 3 if (ord(c) - 0xAC00) % 28 else 2
        elif c.isdigit() and c.isascii():
            n += len(s)
        elif c.isalpha() and ord(c) < 0x250:
            n += sum(-(-len(p) // 6) for p in camel.findall(s))
        else:
            n += 1
    return n


MIXED_TEXT = st.text(alphabet=st.one_of(
    st.characters(max_codepoint=0x2FF), st.characters(min_codepoint=0x2000,
                                                      max_codepoint=0x33FF),
    st.characters(min_codepoint=0x4E00, max_codepoint=0x4F00),
    st.characters(min_codepoint=0xA960, max_codepoint=0xAD00),
    st.characters(min_codepoint=0xD780, max_codepoint=0xFFFF),
    st.characters(min_codepoint=0x1F300, max_codepoint=0x2013F)), max_size=40)


@settings(max_examples=2000, deadline=None)
@given(text=MIXED_TEXT)
def test_estimate_equals_its_rules_read_piece_by_piece(text):
    assert estimate_tokens(text) == _by_pieces(text)


def test_estimate_equals_its_rules_on_the_demo_and_the_edges():
    for t in [*demo_texts(), "\u3000", "a\u3000b", "×Æ", "S×", "ªµº", "한국어 테스트",
              "٣ ⁹ ½", "ZBDongle-E v0.3.1 🏹"]:
        assert estimate_tokens(t) == _by_pieces(t), t


def test_count_tokens_uses_a_given_tokenizer(real_tokenizer):
    s = "Aqara 的配上了，卧室湿度 43%，客厅 47%"
    assert count_tokens(s, real_tokenizer) == real_tokenizer(s)
    assert count_tokens(s) == estimate_tokens(s)


@pytest.mark.parametrize(("text", "expected"), [
    ("可以试试：低于 45% 开，高于 55% 关，中间留 10% 的区间", ["45%", "55%", "10%"]),
    ("记下了：阿岚的生日是 10 月 2 日。", ["10 月 2 日"]),
    ("星图 v0.3 在 9 月 28 日发布，v0.3.1 昨天刚修好 UNC 路径", ["v0.3", "9 月 28 日", "v0.3.1",
                                                       "UNC"]),
    ("SONOFF 的 SNZB-02 系列跟 ZBDongle-E 兼容性不错", ["SONOFF", "SNZB-02", "ZBDongle-E"]),
    ("下一个目标是 A11！@lan_the_warrior 已经在群里喊了", ["A11", "@lan_the_warrior"]),
    ("见 https://github.com/x/y/pull/12，价格 ¥199", ["https://github.com/x/y/pull/12", "¥199"]),
    ('以后你说"老样子"我就知道了', ['"老样子"']),
    ("串口一般在 /dev/serial/by-id/ 下面", ["/dev/serial/by-id/"]),
    ("meeting on 2026-09-19 at 14:30, mail lin@example.org", ["2026-09-19", "14:30",
                                                              "lin@example.org"]),
    ("晚安", []),
])
def test_atoms_examples(text, expected):
    assert atoms(text) == expected


@settings(max_examples=300, deadline=None)
@given(text=st.text(max_size=200))
def test_atoms_are_verbatim_non_overlapping_substrings(text):
    spans = atom_spans(text)
    ends = [0]
    for a, b, _kind in spans:
        assert a >= ends[-1]
        assert b > a
        ends.append(b)
    for a in atoms(text):
        assert a in text


def test_every_demo_number_survives_as_part_of_an_atom():
    """Atoms conserve facts: every digit run of a message lies inside one of its atoms."""
    for text in demo_texts():
        spans = atom_spans(text)
        for m in re.finditer(r"\d+", text):
            assert any(a <= m.start() and m.end() <= b for a, b, _ in spans), (text, m.group())
