"""Content atoms: the facts a compressed item must never lose (Mnemosyne 7.0.2 "AIC").

An atom is a verbatim substring of a message that answers "how much, when, which one,
where": URLs, e-mail addresses, @handles, quoted phrases, dates and times, amounts and
percentages, model ids and other identifiers (``EFR32``, ``v0.3.1``, ``ZBDongle-E``,
``SNZB-02``, ``A11``, ``gpt-4o``), file paths, and plain numbers. When a context block
has no room for an item's text it keeps the item's pointer plus its atoms, so the
answerable facts survive any budget; nothing here rewrites or generates text.

Overlapping matches keep the earliest, then the longest (a URL is one atom, not a URL and
the numbers inside it); repeated atoms are listed once, in order of first occurrence.

>>> atoms("写好了：when humidity < 40% turn on the humidifier, > 50% turn it off")
['40%', '50%']
>>> atoms("星图 v0.3 在 9 月 28 日发布，见 https://example.org/xingtu?v=0.3 。")
['v0.3', '9 月 28 日', 'https://example.org/xingtu?v=0.3']
>>> atoms("那就对上了，ZBDongle-E 是 EFR32 芯片，要选 EZSP。")
['ZBDongle-E', 'EFR32', 'EZSP']
>>> atoms("晚安")
[]
"""

from __future__ import annotations

import functools
import re

from ..text.edges import LATIN

__all__ = ["atom_spans", "atoms"]

_NB = rf"(?<![{LATIN}])"  # no latin word character before (CJK counts as a boundary)
_NA = rf"(?![{LATIN}])"
_NUM = r"\d+(?:[.,]\d+)*"
_MONTHS = (r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)[a-z]*\.?")

_RULES: tuple[tuple[str, str], ...] = (
    ("url", r"(?:https?://|www\.)[^\s<>\"'「」『』（）()\[\]{}，。、；！？]+"
            r"(?<![.,;:!?])"),
    ("email", _NB + r"[\w.+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+" + _NA),
    ("handle", rf"(?<![{LATIN}@])@[A-Za-z0-9_]{{2,}}" + _NA),
    ("quote", r"\"[^\"\n]{1,120}\"|“[^”\n]{1,120}”|「[^」\n]{1,120}」|『[^』\n]{1,120}』"
              r"|《[^》\n]{1,120}》|`[^`\n]{1,120}`"),
    ("datetime", _NB + r"\d{4}-\d{1,2}-\d{1,2}(?:[ T]\d{1,2}:\d{2}(?::\d{2})?)?"
                 r"(?:Z|[+-]\d{2}:?\d{2})?" + _NA),
    ("date", r"(?:\d{2,4}\s*年\s*)?\d{1,2}\s*月(?:\s*\d{1,2}\s*[日号])?(?:\s*\d{1,2}\s*点)?"
             r"|\d{1,2}\s*[日号](?:\s*\d{1,2}\s*点)?"
             r"|" + _NB + r"\d{1,2}/\d{1,2}(?:/\d{2,4})?" + _NA
             + r"|" + _NB + r"\d{1,2}-\d{1,2}" + _NA
             + r"|" + _NB + _MONTHS + r" \d{1,2}(?:st|nd|rd|th)?(?:,? \d{4})?" + _NA
             + r"|" + _NB + r"\d{1,2}(?:st|nd|rd|th)? " + _MONTHS + r"(?: \d{4})?" + _NA),
    ("time", _NB + r"\d{1,2}:\d{2}(?::\d{2})?(?:\s?[ap]\.?m\.?)?" + _NA
             + r"|" + _NB + r"\d{1,2}\s?[ap]\.?m\.?" + _NA
             + r"|(?:凌晨|早上|上午|中午|下午|晚上)?\s*\d{1,2}\s*点(?:\s*\d{1,2}\s*分|半)?"),
    ("amount", r"[¥￥$€£]\s?" + _NUM + r"(?:\s?[kKmMwW万千])?"
               r"|" + _NB + _NUM + r"\s*(?:%|％|‰|元|块钱|块|角|美元|欧元|刀|万|千|亿|个|次|天|周|"
               r"小时|分钟|秒|年|岁|度|℃|°C?|kg|KB|MB|GB|TB|ms|Hz|kHz|MHz|GHz|mAh|W|V|mm|cm|km|m|"
               r"g|s|h|min|x|k|K)(?![A-Za-z])"),
    ("ident", _NB + r"(?=[A-Za-z0-9._-]*[A-Za-z])(?=[A-Za-z0-9._-]*\d)"
              r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?" + _NA
              + r"|" + _NB + r"[A-Za-z]*[A-Z][A-Za-z]*(?:-[A-Za-z0-9]+)+" + _NA
              + r"|" + _NB + r"(?:[A-Z]{2,}[a-z]+[A-Za-z]*|[a-z]+[A-Z][A-Za-z]*|[A-Z]{2,})" + _NA),
    ("path", rf"(?<![{LATIN}/])(?:~|\.{{1,2}})?(?:/[\w.-]+){{2,}}/?|" + _NB
             + r"[\w.-]+(?:/[\w.-]+)+\.[A-Za-z0-9]{1,5}" + _NA
             + r"|\\\\[\w.$-]+(?:\\[\w.$-]+)+|" + _NB + r"[A-Za-z]:\\[\w.$-]+(?:\\[\w.$-]+)*"),
    ("number", _NB + r"[-+]?" + _NUM + _NA),
)


def atom_spans(text: str) -> list[tuple[int, int, str]]:
    """``(start, end, kind)`` of every atom of ``text``, non-overlapping, in text order.

    >>> atom_spans("见 2026-09-19 复诊")
    [(2, 12, 'datetime')]
    """
    found: list[tuple[int, int, str]] = []
    for name, rx in _RULES:
        for m in re.finditer(rx, text):
            a, b = m.span()
            while b > a and text[b - 1].isspace():
                b -= 1
            while a < b and text[a].isspace():
                a += 1
            if b > a:
                found.append((a, b, name))
    found.sort(key=lambda s: (s[0], -(s[1] - s[0])))
    out: list[tuple[int, int, str]] = []
    end = 0
    for a, b, name in found:
        if a >= end:
            out.append((a, b, name))
            end = b
    return out


def atoms(text: str) -> list[str]:
    """The atoms of ``text`` (verbatim substrings), each once, in order of first occurrence.

    >>> atoms('Lan said "never again" after A10 on 10/10, @lan_the_warrior')
    ['"never again"', 'A10', '10/10', '@lan_the_warrior']
    """
    return list(_atoms(text))


@functools.lru_cache(maxsize=4096)
def _atoms(text: str) -> tuple[str, ...]:
    """:func:`atoms`, kept for the texts seen last: a context block reads the atoms of
    every candidate message, mostly the same turns from one recall to the next."""
    seen: dict[str, None] = {}
    for a, b, _ in atom_spans(text):
        seen.setdefault(text[a:b], None)
    return tuple(seen)
