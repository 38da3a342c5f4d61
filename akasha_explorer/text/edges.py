"""Where a latin word ends inside mixed Chinese–English text.

Python's ``\\w`` matches Chinese characters too, so ``(?<!\\w)Grace(?!\\w)`` finds nothing in
跟Grace说 or Grace住在哪, and ``v0.3`` in 发布v0.3了 is no version — yet a bilingual user writes
latin names, versions and handles right against Chinese as often as with a space. The
patterns that look for a latin word's edges use :data:`LATIN` instead: only a latin letter,
a digit or ``_`` continues a latin word; a CJK character ends it.

>>> import re
>>> [re.findall(rf"(?<![{LATIN}])grace(?![{LATIN}])", t) for t in ("跟grace说", "graceful")]
[['grace'], []]
"""

from __future__ import annotations

__all__ = ["LATIN", "latin_word"]

LATIN = "0-9A-Za-z_"
"""The characters that continue a latin word, as the inside of a regex character class."""


def latin_word(body: str) -> str:
    """Regex ``body`` (a name, an alternation of names) as a whole latin word: no latin
    character nor ``@`` (a handle) before it, no latin character after — a CJK character
    or a space ends it.

    >>> import re
    >>> [bool(re.search(latin_word("lan"), t)) for t in ("和lan打", "@lan", "plan", "lan ")]
    [True, False, False, True]
    """
    return rf"(?<![{LATIN}@])(?:{body})(?![{LATIN}])"
