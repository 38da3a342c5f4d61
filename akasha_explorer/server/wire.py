"""Every argument a client sends, checked before a method runs.

A call over ``/api/call`` names a ``Memory`` method and sends plain JSON; :func:`bind`
checks it against the method's own signature and annotations, so the rules cover every
served method, and a method added later, without a list kept by hand:

- **names** — an argument the method does not take is refused by name, as is a missing one;
  ``by`` (the audit log's actor) is never the caller's: the server sets it to the caller's
  principal (:mod:`.guard`);
- **types** — exactly the annotated ones: a JSON ``true`` is a ``bool`` and nothing else
  is, a number is never a boolean, a text is a string, a list holds what it says; objects
  (a recall trace, a context block, settings) only where the method takes them;
- **domains** — what each parameter *name* means across the API (:data:`DOMAINS`: ``limit``
  is a count from 1, ``now`` a time between 1970 and 2200, ``damping`` a fraction …), so
  ``query_log(limit=-5)`` is refused whichever method has a ``limit``; every number finite,
  every text valid Unicode and of a bounded length, every list of a bounded length.

Each refusal is an :class:`~akasha_explorer.errors.InvalidInput` of one line naming the
method and the argument.

>>> from akasha_explorer.memory import Memory
>>> bind("query_log", Memory.query_log, [], {"limit": -5}, principal="local")
Traceback (most recent call last):
...
akasha_explorer.errors.InvalidInput: query_log: limit=-5 is outside its range [1, 100_000]
>>> from akasha_explorer.curate.desks import LabelDesk
>>> bind("labels.add", LabelDesk.add, ["q", "s:0"], {"by": "admin"},  # doctest: +ELLIPSIS
...      principal="local")
Traceback (most recent call last):
...
akasha_explorer.errors.InvalidInput: labels.add: by is set by the server (the caller's principal)...
"""

from __future__ import annotations

import collections.abc as cabc
import datetime as dt
import inspect
import math
import types
import typing
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ..errors import InvalidInput
from ..ingest.validate import TS_MAX, TS_MIN
from ..ranges import Range

__all__ = [
    "DOMAINS",
    "MAX_ITEMS",
    "MAX_TEXT",
    "MAX_TURN_CHARS",
    "TEXT_LIMITS",
    "bind",
    "check_domain",
    "check_text",
    "hints",
]

MAX_TEXT = 20_000
"""Longest text argument (a query, a name, an id) in characters; ``add_turn``'s message
texts have their own limit (:data:`~.service.MAX_TURN_CHARS`)."""

MAX_ITEMS = 10_000
"""Longest list argument."""

MAX_TURN_CHARS = 100_000
"""Longest message text ``add_turn`` takes over the server (characters): the answer of an
``expand`` of such a turn still fits in what every MCP client receives (1 MiB)."""

TEXT_LIMITS = {"user": MAX_TURN_CHARS, "assistant": MAX_TURN_CHARS}
"""Text parameters with a limit other than :data:`MAX_TEXT` (by name)."""

TIME = "a time between 1970 and 2200 (epoch seconds)"

DOMAINS: dict[str, Range] = {
    # counts
    "limit": Range(1, 100_000, whole=True),
    "k": Range(1, 1000, whole=True),
    "top": Range(1, 10_000, whole=True),
    "top_hubs": Range(1, 1000, whole=True),
    "windows": Range(1, 1000, whole=True),
    "per_node": Range(1, 10_000, whole=True),
    "budget_tokens": Range(20, 100_000, whole=True),
    "around": Range(0, 10, whole=True),
    "start": Range(0, 10_000_000, whole=True),
    "end": Range(0, 10_000_000, whole=True),
    "seed": Range(0, 2**31 - 1, whole=True),
    # times (epoch seconds)
    "now": Range(TS_MIN, TS_MAX, hi_open=True),
    "ts": Range(TS_MIN, TS_MAX, hi_open=True),
    "before": Range(TS_MIN, TS_MAX, hi_open=True),
    "window": Range(1.0, 100 * 365 * 86400.0),
    # the rest
    "resolution": Range(0.0, 1000.0, lo_open=True),
    "damping": Range(0.01, 0.99),
    "min_w": Range(0.0, 1e6),
    "min_weight": Range(0.0, 1e6),
}
"""What a numeric parameter name stands for, in every method that has it."""

LABELS = {"now": TIME, "ts": TIME, "before": TIME}
"""How a domain is said when a value falls outside it, where its range is not enough."""


def check_domain(name: str, value: Any, where: str) -> None:
    """Raise unless ``value`` is inside the domain of parameter ``name`` (if it has one).

    >>> check_domain("limit", 0, "query_log")
    Traceback (most recent call last):
    ...
    akasha_explorer.errors.InvalidInput: query_log: limit=0 is outside its range [1, 100_000]
    """
    dom = DOMAINS.get(name)
    problem = dom.problem(name, value) if dom is not None else None
    if problem is None:
        return
    if name in LABELS and "whole number" not in problem:
        problem = f"{name}={_show(value)} is not {LABELS[name]}"
    raise InvalidInput(f"{where}: {problem}")


def _show(value: Any) -> str:
    r = repr(value)
    return r if len(r) <= 40 else r[:39] + "…"


def check_text(value: str, where: str, name: str, limit: int = MAX_TEXT) -> str:
    """A text argument: valid Unicode (no lone surrogate) of at most ``limit`` characters."""
    if len(value) > limit:
        raise InvalidInput(f"{where}: {name} has {len(value):,} characters; the most is "
                           f"{limit:,}")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as e:
        raise InvalidInput(f"{where}: {name} contains a lone surrogate "
                           f"(\\u{ord(value[e.start]):04x}) at offset {e.start}; send valid "
                           "Unicode text") from None
    return value


_NAMESPACE: dict[str, Any] | None = None


def _namespace() -> dict[str, Any]:
    """The names the served classes' annotations use (some imported only for type
    checking where they are declared)."""
    global _NAMESPACE
    if _NAMESPACE is None:
        import numpy as np
        import pandas as pd

        from .. import memory
        from ..analysis.search import SearchHits
        from ..analysis.views import GraphView
        from ..brief.context import ContextBlock
        from ..brief.expand import Expansion
        from ..brief.tokens import Tokenizer
        from ..config import Settings
        from ..curate.review import ReviewItem
        from ..engine.trace import RecallTrace
        from ..engine.writeback import WritebackPlan
        from ..model import Message, NodeState
        _NAMESPACE = {**vars(memory), **vars(typing), **vars(cabc), "np": np, "pd": pd,
                      "dt": dt, "Path": Path, "SearchHits": SearchHits, "GraphView": GraphView,
                      "ContextBlock": ContextBlock, "Expansion": Expansion,
                      "Tokenizer": Tokenizer, "Settings": Settings, "ReviewItem": ReviewItem,
                      "RecallTrace": RecallTrace, "WritebackPlan": WritebackPlan,
                      "Message": Message, "NodeState": NodeState, "builtins": __builtins__}
    return _NAMESPACE


def hints(fn: Callable[..., Any]) -> dict[str, Any]:
    """The resolved annotations of ``fn`` (a served method); raises when one cannot be
    resolved (a test calls this for every served method)."""
    return typing.get_type_hints(fn, globalns={**_namespace(),
                                               **getattr(fn, "__globals__", {})})


def bind(method: str, fn: Callable[..., Any], args: Sequence[Any], kwargs: dict[str, Any], *,
         principal: str, skip: tuple[str, ...] = ()) -> tuple[list[Any], dict[str, Any]]:
    """Check ``args`` / ``kwargs`` of a call of ``fn`` (served as ``method``) as the module
    docstring says; returns them bound by name, with ``by`` set to ``principal``.
    ``skip``: parameters the caller never gives (an MCP tool's injected context)."""
    full = inspect.signature(fn)
    sig = full.replace(parameters=[p for p in full.parameters.values()
                                   if p.name not in skip])
    if "self" not in sig.parameters:
        sig = sig.replace(parameters=[inspect.Parameter("self", inspect.Parameter
                                                        .POSITIONAL_ONLY),
                                      *sig.parameters.values()])
    params = [p for p in sig.parameters.values() if p.name != "self"]
    if "by" in kwargs:
        raise InvalidInput(f"{method}: by is set by the server (the caller's principal), "
                           "not by the caller")
    named = {p.name for p in params if p.kind is not p.VAR_KEYWORD}
    takes_more = any(p.kind is p.VAR_KEYWORD for p in params)
    unknown = sorted(set(kwargs) - named) if not takes_more else []
    if unknown:
        takes = ", ".join(p.name for p in params if p.name != "by") or "nothing"
        raise InvalidInput(f"{method}: unknown argument(s) {', '.join(unknown)}; it takes "
                           f"{takes}")
    try:
        bound = sig.bind(None, *args, **kwargs)
    except TypeError as e:
        raise InvalidInput(f"{method}: {e}") from None
    resolved = hints(fn)
    for p in params:
        if p.name not in bound.arguments or p.name == "by":
            continue
        value = bound.arguments[p.name]
        if p.kind is p.VAR_KEYWORD:
            for k, v in value.items():
                _check(v, Any, method, k)
            continue
        _check(value, resolved.get(p.name, Any), method, p.name)
    if "by" in sig.parameters:
        bound.arguments["by"] = principal
    out_args = list(bound.args[1:])
    return out_args, dict(bound.kwargs)


def _check(value: Any, hint: Any, where: str, name: str) -> None:
    if not _fits(value, hint, where, name):
        raise InvalidInput(f"{where}: {name} must be {_describe(hint)}, got {_kind(value)}")
    if isinstance(value, int | float) and not isinstance(value, bool):
        if not math.isfinite(value) or abs(value) > 2**53:
            raise InvalidInput(f"{where}: {name}={_show(value)} is not a usable number")
        check_domain(name, value, where)
    if isinstance(value, str):
        check_text(value, where, name, TEXT_LIMITS.get(name, MAX_TEXT))


def _fits(value: Any, hint: Any, where: str, name: str) -> bool:
    """Whether ``value`` is of type ``hint`` (checking list items and dict values too)."""
    if hint is Any or hint is inspect.Parameter.empty:
        return _plain(value, where, name)
    if hint is None or hint is type(None):
        return value is None
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        return any(_fits(value, h, where, name) for h in typing.get_args(hint))
    if origin is typing.Literal:
        return value in typing.get_args(hint)
    if hint is bool:
        return value is True or value is False
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if hint is float:
        return isinstance(value, int | float) and not isinstance(value, bool)
    if hint is str:
        return isinstance(value, str)
    if hint is Path or (origin is None and isinstance(hint, type) and issubclass(hint, Path)):
        return False          # no file paths over the wire
    if origin in (list, tuple, cabc.Sequence, cabc.Iterable, cabc.Collection, set, frozenset):
        if not isinstance(value, list | tuple):
            return False
        if len(value) > MAX_ITEMS:
            raise InvalidInput(f"{where}: {name} has {len(value):,} items; the most is "
                               f"{MAX_ITEMS:,}")
        args = typing.get_args(hint)
        if origin is tuple and args and args[-1] is not Ellipsis:
            if len(value) != len(args):
                return False
            pairs = list(zip(value, args, strict=True))
        else:
            pairs = [(v, args[0] if args else Any) for v in value]
        for i, (v, h) in enumerate(pairs):
            _check(v, h, where, f"{name}[{i}]")
        return True
    if origin in (dict, cabc.Mapping):
        if not isinstance(value, dict):
            return False
        kt, vt = (typing.get_args(hint) or (Any, Any))
        if len(value) > MAX_ITEMS:
            raise InvalidInput(f"{where}: {name} has {len(value):,} entries; the most is "
                               f"{MAX_ITEMS:,}")
        for k, v in value.items():
            _check(k, kt, where, f"{name} key")
            _check(v, vt, where, f"{name}[{k!r}]")
        return True
    if isinstance(hint, type):
        try:
            return isinstance(value, hint)
        except TypeError:     # a Protocol without runtime checks: no JSON value is one
            return False
    return False


def _plain(value: Any, where: str, name: str) -> bool:
    """An ``Any`` argument: plain JSON (no object the codec rebuilt), bounded."""
    if value is None or isinstance(value, bool | int | float):
        if isinstance(value, float) and not math.isfinite(value):
            raise InvalidInput(f"{where}: {name}={_show(value)} is not a usable number")
        return True
    if isinstance(value, str):
        check_text(value, where, name)
        return True
    if isinstance(value, list):
        return len(value) <= MAX_ITEMS and all(_plain(v, where, name) for v in value)
    if isinstance(value, dict):
        return len(value) <= MAX_ITEMS and all(
            isinstance(k, str) and _plain(v, where, name) for k, v in value.items())
    return False


def _describe(hint: Any) -> str:
    if hint is Any:
        return "plain JSON"
    if hint is None or hint is type(None):
        return "null"
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        parts = [_describe(h) for h in typing.get_args(hint)
                 if not (isinstance(h, type) and issubclass(h, Path))]
        return " or ".join(dict.fromkeys(parts))
    if origin is typing.Literal:
        return "one of " + ", ".join(repr(a) for a in typing.get_args(hint))
    if origin in (list, tuple, cabc.Sequence, cabc.Iterable, cabc.Collection, set, frozenset):
        args = typing.get_args(hint)
        return f"a list of {_plural(args[0]) if args else 'values'}"
    if origin in (dict, cabc.Mapping):
        return "an object"
    names = {bool: "true or false", int: "a whole number", float: "a number", str: "a text"}
    if hint in names:
        return names[hint]
    return getattr(hint, "__name__", str(hint))


def _plural(hint: Any) -> str:
    names = {bool: "booleans", int: "whole numbers", float: "numbers", str: "texts"}
    if hint in names:
        return str(names[hint])
    d = _describe(hint)
    return d[2:] + "s" if d.startswith("a ") else d


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"{str(value).lower()} (a boolean)"
    if isinstance(value, int | float):
        return f"{_show(value)} (a number)"
    if isinstance(value, str):
        return f"{_show(value)} (a text)"
    if isinstance(value, list | tuple):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return f"a {type(value).__name__}"
