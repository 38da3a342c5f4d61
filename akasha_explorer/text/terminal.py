"""The one sanitiser for text the command line prints: stored text is shown, never obeyed.

A stored message may hold terminal control sequences — ``ESC [2J`` clears the screen,
``ESC ]0;…BEL`` sets the window title, ``ESC ]52;c;…`` writes the clipboard, ``ESC [8m``
hides what follows, a C1 ``CSI`` (U+009B) does the same without an ESC, a right-to-left
override (U+202E) reorders what a person reads. The text stays verbatim in the store;
what *prints* it escapes every such character, so the terminal shows it instead of acting
on it: :func:`terminal_safe` for plain output (C0 controls except tab and newline, DEL, C1
controls and bidirectional controls become ``\\x1b``, ``\\x9b``, ``\\u202e``),
:func:`json_safe` for ``--json`` output (the same characters as JSON ``\\u`` escapes,
so the document still decodes to the exact stored text). Every ``akasha`` command prints
through :func:`akasha_explorer.cli.kit.echo`, which applies them, and log lines go through
:class:`SafeFormatter` — on a terminal or not (click strips colours off a terminal, not
OSC sequences).

Session ids are names a person types and reads, so :func:`session_id_problem` refuses the
same characters in them, and invisible ones (zero-width space, word joiner, BOM, an id
with no visible character at all).

>>> terminal_safe("hi \\x1b]52;c;cm0gLXJmIH4=\\x07 \\x9b2J \\u202eexe.txt\\tok\\n")
'hi \\\\x1b]52;c;cm0gLXJmIH4=\\\\x07 \\\\x9b2J \\\\u202eexe.txt\\tok\\n'
>>> json_safe('"a\\x7fb\\u202e"')
'"a\\\\u007fb\\\\u202e"'
"""

from __future__ import annotations

import logging
import re
import unicodedata

__all__ = ["UNSAFE", "SafeFormatter", "json_safe", "session_id_problem", "terminal_safe"]

UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
"""Characters a terminal may act on or that reorder text: C0 controls but tab and newline,
DEL, C1 controls (U+0080–U+009F: CSI, OSC, NEL …) and the bidirectional controls."""

_INVISIBLE = frozenset("\u200b\u2060\ufeff\u180e\u2028\u2029")
"""Zero-width and line-breaking characters a session id may not hold (two ids would look
alike, or one would look empty)."""


def _escape(m: re.Match[str]) -> str:
    c = ord(m.group())
    return f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}"


def terminal_safe(text: str) -> str:
    """``text`` with every :data:`UNSAFE` character written as a visible escape."""
    return UNSAFE.sub(_escape, text)


def json_safe(doc: str) -> str:
    """A JSON document with every :data:`UNSAFE` character ``json.dumps`` left raw (DEL,
    C1, bidirectional controls) written as a ``\\u`` escape — still valid JSON that
    decodes to the same values."""
    return UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", doc)


def session_id_problem(value: str) -> str | None:
    """Why ``value`` cannot be a session id (None when it can): a control or
    bidirectional character (anything :data:`UNSAFE`, tab and newline too), a zero-width
    or line-separator character, or no visible character at all.

    >>> [session_id_problem(s) for s in ["2026-09-03 evening", "a\\x7fb", "\\u200b"]]
    [None, 'a control character (U+007F)', 'an invisible character (U+200B)']
    """
    for c in value:
        if c in "\t\n" or UNSAFE.match(c):
            return f"a control character (U+{ord(c):04X})"
        if c in _INVISIBLE:
            return f"an invisible character (U+{ord(c):04X})"
    if all(c.isspace() or unicodedata.category(c) in ("Cf", "Mn", "Me") for c in value):
        return "no visible character"
    return None


class SafeFormatter(logging.Formatter):
    """A log formatter whose lines go through :func:`terminal_safe` (log messages quote
    paths, session ids and node ids)."""

    def format(self, record: logging.LogRecord) -> str:
        return terminal_safe(super().format(record))
