"""What a message is indexed as (SPEC §2 step 5): the index text — the stored text with
the speaker, the session date or an image caption around it, as the settings ask — and
its lexical terms. The stored text itself is never changed; this is what gets embedded
and put in the lexical index."""

from __future__ import annotations

import json
from typing import Any

from ..config import Settings
from ..model import RawMessage
from .tokenize import TermRules, terms

__all__ = ["TERM_SOURCE_COLUMNS", "index_text", "stored_terms"]


def index_text(msg: RawMessage, settings: Settings) -> str:
    """The text that is embedded and indexed for ``msg`` (never stored in its place).

    >>> s = Settings(INDEX_SPEAKER=True)
    >>> index_text(RawMessage("s", 0, 1.0, "user", "hi there", speaker="Ann",
    ...                       meta={"blip_caption": "a dog"}), s)
    'Ann: hi there [shares a dog]'
    """
    text = msg.text
    if settings.INDEX_SPEAKER and msg.speaker:
        text = f"{msg.speaker}: {text}"
    if settings.INDEX_DATE and msg.meta.get("session_date"):
        text = f"({msg.meta['session_date']}) {text}"
    caption = msg.meta.get("blip_caption") or msg.meta.get("caption")
    if isinstance(caption, str) and caption.strip():
        text = f"{text} [shares {caption.strip()}]"
    return text


def stored_terms(rows: dict[str, list[Any]], settings: Settings) -> list[list[str]]:
    """Lexical terms of stored message rows (columns ``session``, ``seq``, ``ts``, ``role``,
    ``speaker``, ``text``, ``meta``) under ``settings``' rules — what ingest would index."""
    rules = TermRules.of(settings)
    out = []
    for k, text in enumerate(rows["text"]):
        meta = json.loads(rows["meta"][k]) if rows["meta"][k] else {}
        msg = RawMessage(rows["session"][k], int(rows["seq"][k]), float(rows["ts"][k]),
                         rows["role"][k], text, speaker=rows["speaker"][k], meta=meta)
        out.append(terms(index_text(msg, settings), rules=rules))
    return out


TERM_SOURCE_COLUMNS = ("uid", "session", "seq", "ts", "role", "speaker", "text", "meta")
"""The message columns :func:`stored_terms` reads."""
