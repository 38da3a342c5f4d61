"""Alias normalisation — tier 1 of alias resolution (SPEC §6).

:func:`norm` is the index form of a surface (NFKC, case folded, ``@`` and inner spaces
dropped); :func:`alias_keys` lists the keys under which two surfaces may name the same
anchor, each with the confidence that a match on it means "same anchor":

- the normalised surface itself (1.0);
- CJK names without honorifics: 阿岚 / 岚姐 / 老周 -> 岚 / 岚 / 周 (0.9);
- the given name of a CJK full name: 林岚 -> 岚 (0.85);
- the first word of a handle: @lan_the_warrior -> lan (0.8);
- pinyin, so a latin spelling meets its CJK name: Lan ~ 岚, Zhou ~ 老周
  (0.8 for people, 0.65 otherwise);
- initials, so an acronym meets its long form: HA ~ Home Assistant (0.7).

Links under the auto-merge bar may be lifted by tier 2 (context similarity) or wait for a
person on the review queue.

Traditional/simplified characters are not folded (jieba has no table for it); NFKC folds
full-width latin and compatibility forms.

>>> norm("＠Lan_The_Warrior")
'lan_the_warrior'
>>> [k for k, _ in alias_keys("阿岚", "person")]
['阿岚', '岚', 'py:lan']
>>> [k for k, _ in alias_keys("@lan_the_warrior", "account")]
['lan_the_warrior', 'lan', 'py:lan']
>>> dict(alias_keys("星图", "project"))["py:xingtu"]
0.65
>>> dict(alias_keys("Home Assistant", "thing"))["acr:ha"]
0.7
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

__all__ = ["HONORIFIC_PREFIXES", "HONORIFIC_SUFFIXES", "SURNAMES", "alias_keys", "core_name",
           "is_cjk_text", "load_pinyin", "norm"]

HONORIFIC_PREFIXES = ("阿", "老", "小")
HONORIFIC_SUFFIXES = ("姐姐", "哥哥", "老师", "先生", "女士", "同学", "さん", "ちゃん", "くん",
                      "さま", "様", "君", "姐", "哥", "总", "酱")
SURNAMES = frozenset(
    "王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘于蒋蔡余杜叶程"
    "苏魏吕丁任沈姚卢姜崔钟谭陆汪范金石廖贾夏韦付方白邹孟熊秦邱江尹薛闫段雷侯龙史陶黎贺顾毛"
    "郝龚邵万钱严覃武戴莫孔向汤")
"""The most common Chinese surnames (for full names and 老/小 + surname forms)."""

_CJK = re.compile("[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_HANDLE_SPLIT = re.compile(r"[_\-.\d]+")
_LATIN_WORD = re.compile(r"^[a-z]+$")


def norm(surface: str) -> str:
    """Index form of a surface: NFKC, case folded, leading ``@`` and whitespace removed."""
    s = unicodedata.normalize("NFKC", surface).casefold().strip()
    s = s.lstrip("@")
    return re.sub(r"\s+", " ", s) if not _CJK.search(s) else re.sub(r"\s+", "", s)


def is_cjk_text(s: str) -> bool:
    """True when every character of ``s`` is CJK (no latin, digits or spaces)."""
    return bool(s) and all(_CJK.match(c) for c in s)


def core_name(n: str) -> str | None:
    """A CJK name without one honorific prefix or suffix, or None.

    >>> core_name("岚姐"), core_name("老周"), core_name("阿姨x"), core_name("岚")
    ('岚', '周', None, None)
    """
    if not is_cjk_text(n):
        return None
    for suf in HONORIFIC_SUFFIXES:
        if n.endswith(suf) and 1 <= len(n) - len(suf) <= 3:
            return n[: -len(suf)]
    if len(n) == 2 and n[0] in HONORIFIC_PREFIXES:
        return n[1:]
    return None


def load_pinyin() -> None:
    """Load pypinyin's tables now (~0.6 s of JSON parsing that holds the GIL), so that the
    first name resolution — a server's first fold, in a thread of its own — does not stall
    every request meanwhile."""
    _pinyin("林岚")


@lru_cache(maxsize=8192)
def _pinyin(s: str) -> str:
    from pypinyin import lazy_pinyin
    return "".join(lazy_pinyin(s))


def alias_keys(surface: str, kind: str) -> list[tuple[str, float]]:
    """Resolution keys of ``surface`` with their confidence (see module docstring)."""
    n = norm(surface)
    if not n:
        return []
    out: dict[str, float] = {n: 1.0}
    person = kind in ("person", "account")
    py_conf = 0.8 if person else 0.65
    core = core_name(n)
    if core:
        out.setdefault(core, 0.9)
    elif kind == "person" and is_cjk_text(n) and len(n) in (2, 3) and n[0] in SURNAMES:
        out.setdefault(n[1:], 0.85)
    if surface.lstrip().startswith(("@", "＠")) or kind == "account":
        parts = [p for p in _HANDLE_SPLIT.split(n) if p]
        if parts and parts[0] != n and len(parts[0]) >= 2:
            out.setdefault(parts[0], 0.8)
    words = surface.split()
    if len(words) >= 2 and all(w[:1].isalpha() and w[:1].isupper() for w in words):
        out.setdefault("acr:" + "".join(w[0] for w in words).casefold(), 0.7)
    elif surface.isalpha() and surface.isupper() and 2 <= len(surface) <= 5:
        out.setdefault("acr:" + n, 0.7)
    for key in list(out):
        if key == n and core:
            continue  # 阿岚 -> "alan" says nothing; its core 岚 -> "lan" does
        if is_cjk_text(key) and len(key) <= 3:
            out.setdefault("py:" + _pinyin(key), py_conf)
        elif _LATIN_WORD.match(key) and 2 <= len(key) <= 12:
            out.setdefault("py:" + key, 0.8)  # the CJK side's kind sets the link's confidence
    return list(out.items())
