"""Field checks shared by every importer. Bad input is refused, never "fixed".

Each check raises :class:`~akasha_explorer.errors.InvalidInput` naming where the record is
(``file:line`` or ``file: record N``) and what is wrong.

>>> parse_ts("2026-09-03T21:14:05+08:00", "x")
1788441245.0
>>> parse_ts(1788441245, "x")
1788441245.0
>>> check_text("ok\\x00", "f:1")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
akasha_explorer.errors.InvalidInput: f:1: text contains a NUL character at offset 2; ...
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Iterator
from typing import Any

from ..errors import InvalidInput
from ..model import ROLES
from ..text.terminal import session_id_problem

__all__ = [
    "MAX_TEXT_CHARS",
    "TS_MAX",
    "TS_MIN",
    "check_conversations",
    "check_meta",
    "check_role",
    "check_seq",
    "check_session",
    "check_text",
    "check_ts",
    "parse_ts",
]

MAX_TEXT_CHARS = 2_000_000
"""Longest message accepted (characters). Longer ones are refused: split them at the source."""
TS_MIN = 1.0  # 1970-01-01T00:00:01Z; 0 is nearly always a missing value
TS_MAX = dt.datetime(2200, 1, 1, tzinfo=dt.UTC).timestamp()
SEQ_MAX = 2**63 - 1
META_MAX_DEPTH = 32
"""Deepest nesting accepted in a message's ``meta`` object."""


def check_text(value: Any, where: str, *, field: str = "text") -> str:
    """A message text: a non-empty str without NUL or lone surrogates, not absurdly long."""
    if not isinstance(value, str):
        raise InvalidInput(f"{field} must be a string, got {type(value).__name__}", where=where)
    if not value.strip():
        raise InvalidInput(f"{field} is empty", where=where)
    if len(value) > MAX_TEXT_CHARS:
        raise InvalidInput(f"{field} has {len(value):,} characters, more than the "
                           f"{MAX_TEXT_CHARS:,} accepted; split it at the source", where=where)
    nul = value.find("\x00")
    if nul >= 0:
        raise InvalidInput(f"{field} contains a NUL character at offset {nul}; raw text is "
                           "stored byte-for-byte, so fix the source", where=where)
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as e:
        raise InvalidInput(f"{field} contains a lone surrogate (\\u{ord(value[e.start]):04x}) "
                           f"at offset {e.start}; it is not valid Unicode text",
                           where=where) from None
    return value


def check_role(value: Any, where: str) -> str:
    """A role: ``user`` or ``assistant``."""
    if value not in ROLES:
        raise InvalidInput(f"unknown role {value!r}; expected one of {', '.join(ROLES)}",
                           where=where)
    return str(value)


def check_session(value: Any, where: str) -> str:
    """A session id: non-empty, at most 256 characters, no control, bidirectional or
    invisible characters (the ones printing escapes, see
    :func:`~akasha_explorer.text.terminal.session_id_problem`)."""
    if not isinstance(value, str) or not value.strip():
        raise InvalidInput(f"session_id must be a non-empty string, got {value!r}", where=where)
    if len(value) > 256:
        raise InvalidInput("session_id must be at most 256 characters without control "
                           "characters", where=where)
    problem = session_id_problem(value)
    if problem:
        raise InvalidInput(f"session_id {value[:60]!r} has {problem}; session ids are at most "
                           "256 characters without control characters or invisible ones",
                           where=where)
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidInput("session_id contains a lone surrogate", where=where) from None
    return value


def check_seq(value: Any, where: str) -> int:
    """A sequence number: a non-negative integer (not a bool)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise InvalidInput(f"seq must be a non-negative integer, got {value!r}", where=where)
    if value > SEQ_MAX:
        raise InvalidInput(f"seq {value} is larger than {SEQ_MAX} (it is stored as a 64-bit "
                           "integer)", where=where)
    return value


def check_meta(value: Any, where: str) -> dict[str, Any]:
    """``meta``: a JSON object of plain JSON values, at most :data:`META_MAX_DEPTH` deep,
    whose strings are valid Unicode (it is stored as JSON text beside the message).

    >>> check_meta({"a": [1, {"b": "x"}]}, "f:1")
    {'a': [1, {'b': 'x'}]}
    >>> check_meta({"a": chr(0xD800)}, "f:1")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    akasha_explorer.errors.InvalidInput: f:1: meta contains a lone surrogate (\ud800); ...
    """
    if not isinstance(value, dict):
        raise InvalidInput("meta must be a JSON object", where=where)
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        v, depth = stack.pop()
        if depth > META_MAX_DEPTH:
            raise InvalidInput(f"meta is nested more than {META_MAX_DEPTH} levels deep",
                               where=where)
        items: list[Any] = []
        if isinstance(v, dict):
            items = [*v.keys(), *v.values()]
        elif isinstance(v, list):
            items = v
        elif isinstance(v, str):
            try:
                v.encode("utf-8")
            except UnicodeEncodeError as e:
                raise InvalidInput(f"meta contains a lone surrogate (\\u{ord(v[e.start]):04x}); "
                                   "it is not valid Unicode text", where=where) from None
            continue
        elif isinstance(v, float) and not math.isfinite(v):
            raise InvalidInput(f"meta holds {v!r}, which JSON cannot represent", where=where)
        elif v is not None and not isinstance(v, bool | int | float):
            raise InvalidInput(f"meta holds a {type(v).__name__}; use JSON values", where=where)
        stack.extend((x, depth + 1) for x in items)
    return value


def parse_ts(value: Any, where: str) -> float:
    """Seconds since the epoch from an ISO 8601 string (naive = UTC) or a number."""
    if isinstance(value, bool):
        raise InvalidInput(f"ts must be an ISO 8601 string or epoch seconds, got {value!r}",
                           where=where)
    if isinstance(value, int | float):
        try:
            ts = float(value)
        except OverflowError:
            ts = math.inf  # an integer too large for a float: refused below
    elif isinstance(value, str):
        try:
            d = dt.datetime.fromisoformat(value.strip())
        except ValueError:
            raise InvalidInput(f"cannot parse timestamp {value!r}; use ISO 8601 such as "
                               "2026-09-03T21:14:05+08:00", where=where) from None
        if d.tzinfo is None:
            d = d.replace(tzinfo=dt.UTC)
        ts = d.timestamp()
    else:
        raise InvalidInput(f"ts must be an ISO 8601 string or epoch seconds, got "
                           f"{type(value).__name__}", where=where)
    return check_ts(ts, where, shown=value)


def check_ts(ts: float, where: str, *, shown: Any = None) -> float:
    """The one time-range check every message passes, whatever its importer: finite and
    within 1970-01-01 .. 2200-01-01 (:data:`TS_MIN` .. :data:`TS_MAX`) — ``datetime``
    cannot show a time past year 9999, and 0 or negative values are usually missing data.
    ``shown`` is what the input said (default: ``ts``), for the message.

    >>> check_ts(1788441245.0, "x")
    1788441245.0
    >>> check_ts(253402300800.0, "f:1", shown="31 December, 9999 + 30 s")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    akasha_explorer.errors.InvalidInput: f:1: timestamp '31 December, 9999 + 30 s' is outside ...
    """
    if not isinstance(ts, int | float) or isinstance(ts, bool) or not math.isfinite(ts) \
            or ts < TS_MIN or ts >= TS_MAX:
        raise InvalidInput(f"timestamp {_short(ts if shown is None else shown)} is outside "
                           "1970-01-01 .. 2200-01-01 (0 and negative values are usually "
                           "missing data)", where=where)
    return float(ts)


def _short(value: Any) -> str:
    """``repr`` of a value, cut to 40 characters."""
    r = repr(value)
    return r if len(r) <= 40 else r[:39] + "…"


def check_conversations(data: Any, source: str, key: str, kind: type, shape: str
                        ) -> Iterator[tuple[int, str, dict[str, Any]]]:
    """The conversations of a chat export (a JSON list, each an object whose ``key`` is a
    ``kind``, "a ``shape``" in the message): ``(index, where, conversation)`` each.

    >>> list(check_conversations([{"m": {}}], "f.json", "m", dict, "'m' object"))
    [(0, 'f.json: conversation 0', {'m': {}})]
    >>> next(check_conversations({}, "f.json", "m", dict, "'m' object"))
    Traceback (most recent call last):
    ...
    akasha_explorer.errors.InvalidInput: f.json: expected a list of conversations
    """
    if not isinstance(data, list):
        raise InvalidInput("expected a list of conversations", where=source)
    for i, conv in enumerate(data):
        where = f"{source}: conversation {i}"
        if not isinstance(conv, dict) or not isinstance(conv.get(key), kind):
            raise InvalidInput(f"expected a conversation with a {shape}", where=where)
        yield i, where, conv
