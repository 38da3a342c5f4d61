"""A query written as a transcript: the lines the user said (**[ours]** ``QUERY_USER_LINES``).

An agent that recalls on the conversation so far passes it as its query — lines that each
begin with a speaker label (``<Bart>:"…"``, ``user: …``, ``Assistant：…``). The assistant's
own lines there are mostly its manner ("那一定让你很难过", "Tell me more!") and the words it
echoes; what the memory holds is the user's life, told in the user's lines. Searched by
its words, a transcript should be searched by the user's.

A query is a transcript when its first non-empty line is labelled, at least one line by
an assistant label (:data:`ASSISTANT_LABELS`, case-insensitive) and at least one by
another; a line without a label continues the message above it (a list the user pasted).
Anything else — one line, a question that happens to contain a colon, lines by people
only — is left as it is.
"""

from __future__ import annotations

import re

__all__ = ["ASSISTANT_LABELS", "user_lines"]

ASSISTANT_LABELS = frozenset({"assistant", "ai", "bot", "agent", "system", "model",
                              "助手", "助理", "小助手", "系统"})
"""Labels that name the assistant's side of a transcript (compared lower-case)."""

# <Name>: or <Name>： — the angle-bracket form of MADial and of many chat exports
_BRACKET = re.compile(r"\s*<([^<>\n]{1,40})>\s*[:：]")
# Name: — one or two words (letters, CJK, digits, dots, hyphens, underscores), the first
# beginning with a letter: "John Smith:" is a label, "see you at 3:30" is not
_CHAR = r"[\w\u3400-\u9fff.\-]"
_PLAIN = re.compile(rf"\s*([A-Za-z\u3400-\u9fff]{_CHAR}{{0,19}}(?: {_CHAR}{{1,20}})?)\s*[:：]")


def _label(line: str) -> str | None:
    m = _BRACKET.match(line) or _PLAIN.match(line)
    return m.group(1).strip().lower() if m else None


def user_lines(text: str) -> str | None:
    """The lines of transcript ``text`` not said by the assistant (labels kept, lines
    joined by newlines), or None when ``text`` is not a transcript (module docstring).

    >>> user_lines('<Bart>:"我今天拿到了满分！"\\n<Assistant>:"太棒了！"\\n<Bart>:"怎么庆祝呢？"')
    '<Bart>:"我今天拿到了满分！"\\n<Bart>:"怎么庆祝呢？"'
    >>> user_lines("user: where did I park?\\nassistant: Level 3, by the lift.")
    'user: where did I park?'
    >>> user_lines("Note: the lift is out of order.") is None    # one line
    True
    >>> user_lines("Bart: hi\\nLisa: hello") is None     # no assistant in it
    True
    >>> user_lines("user: my list:\\n- eggs\\n- milk\\nassistant: noted")   # continued
    'user: my list:\\n- eggs\\n- milk'
    >>> user_lines("see you at 3:30\\nassistant: ok") is None   # the first line has no label
    True
    """
    lines = [line for line in text.splitlines() if line.strip()]
    if len(lines) < 2 or _label(lines[0]) is None:
        return None
    mine: list[bool] = []
    for line in lines:
        label = _label(line)
        mine.append(label in ASSISTANT_LABELS if label is not None else mine[-1])
    if all(mine) or not any(mine):
        return None
    return "\n".join(line for line, m in zip(lines, mine, strict=True) if not m)
