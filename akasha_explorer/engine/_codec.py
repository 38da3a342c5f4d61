"""Plain-data codec for the engine's record dataclasses (SPEC §5: traces are JSON).

Records hold only ``str``, ``int``, ``float``, ``bool``, ``None``, lists, ``dict[str, Any]``
of plain values and other record dataclasses (a field declared with
``metadata={"record": False}`` is not part of the record: never written). :func:`to_plain`
turns one into JSON-ready builtins (refusing NaN/inf: a trace never stores a non-finite
number, it stores ``None``); :func:`from_plain` rebuilds it from the field types, so a JSON
round trip is exact (floats are written as the shortest text that reads back as the same
float64).

:func:`dumps` encodes with ``orjson``: a recall's trace is thousands of floats, and the
standard library's encoder took 2.3 ms of a 10k-turn store's trace against orjson's 0.1 ms
(the record of every logged recall, :mod:`akasha_explorer.store.recalled`, and every
journaled write-back plan pay it). The text differs from ``json.dumps`` only in how some
floats are spelled (``0.00001`` for ``1e-05``); ``json.loads`` reads both as the same number.

>>> from dataclasses import dataclass, field
>>> @dataclass
... class Row:
...     name: str
...     xs: list[float] = field(default_factory=list)
...     rank: int | None = None
>>> r = Row("a", [0.1, 1e-300, -0.0])
>>> import json
>>> from_plain(Row, json.loads(dumps(r))) == r
True
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Callable
from functools import cache
from typing import Any, TypeVar, Union

import orjson

__all__ = ["dumps", "dumps_view", "from_plain", "to_plain"]

T = TypeVar("T")


def to_plain(obj: Any) -> Any:
    """JSON-ready builtins for a record (dataclasses become dicts, tuples lists).

    Raises ``ValueError`` on a NaN or infinite float: records store ``None`` instead.

    >>> to_plain({"a": (1, 2.5, None)})
    {'a': [1, 2.5, None]}
    >>> to_plain([1.0, float("inf")])
    Traceback (most recent call last):
    ...
    ValueError: non-finite number inf in a record; store None instead
    """
    t: Any = type(obj)
    if t is float:
        return _finite(obj)
    if t is str or t is int or t is bool or obj is None:
        return obj
    if t is list or t is tuple:  # a recall's trace: thousands of floats in lists
        return [_finite(x) if type(x) is float
                else x if type(x) in _EXACT or x is None else to_plain(x) for x in obj]
    names = _record_fields(t)
    if names is not None:
        return {name: to_plain(getattr(obj, name)) for name in names}
    return _general(obj)


_EXACT = frozenset({str, int, bool})
"""Types returned as they are (exactly these; subclasses take the general path)."""


def _finite(x: float) -> float:
    if x - x != 0.0:  # NaN or infinite: ``x - x`` is NaN
        raise ValueError(f"non-finite number {x!r} in a record; store None instead")
    return x


@cache
def _record_fields(cls: type) -> tuple[str, ...] | None:
    """The names of a record class's written fields, in order (None: not a dataclass)."""
    if not dataclasses.is_dataclass(cls):
        return None
    return tuple(f.name for f in dataclasses.fields(cls) if f.metadata.get("record", True))


def _general(obj: Any) -> Any:
    """:func:`to_plain` for what its fast paths do not take (subclasses, dicts, numpy)."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: to_plain(getattr(obj, f.name)) for f in dataclasses.fields(obj)
                if f.metadata.get("record", True)}
    if isinstance(obj, bool) or obj is None or isinstance(obj, str | int):
        return obj
    if isinstance(obj, float):
        return _finite(float(obj))
    if isinstance(obj, list | tuple):
        return [to_plain(x) for x in obj]
    if isinstance(obj, dict):
        return {str(k): to_plain(v) for k, v in obj.items()}
    if hasattr(obj, "item"):  # numpy scalar
        return to_plain(obj.item())
    raise TypeError(f"cannot store {type(obj).__name__} in a record")


def dumps(obj: Any) -> str:
    """Compact JSON of a record (UTF-8 text kept as is, NaN refused).

    >>> dumps({"x": [1.0, "阿岚"]})
    '{"x":[1.0,"阿岚"]}'
    """
    return orjson.dumps(to_plain(obj)).decode("utf-8")


def dumps_view(obj: Any) -> bytes:
    """:func:`dumps` as UTF-8 bytes, encoded by orjson straight from the record (no
    :func:`to_plain` copy: 0.2 ms against 1.0 ms for a 10k-turn store's trace) — but a
    non-finite float is written as ``null`` instead of refused. For copies that are a
    view of a record already checked elsewhere (the recall records of
    :mod:`akasha_explorer.store.recalled`), never for what a store replays.

    >>> dumps_view({"x": (1.0, "阿岚"), 2: None}) == dumps({"x": (1.0, "阿岚"), 2: None}).encode()
    True
    """
    return orjson.dumps(obj, default=_view_default,
                        option=orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_NON_STR_KEYS)


def _view_default(obj: Any) -> Any:
    names = _record_fields(typing.cast(type, type(obj)))
    if names is not None:
        return {name: getattr(obj, name) for name in names}
    if hasattr(obj, "item"):  # numpy scalar
        return obj.item()
    raise TypeError(f"cannot store {type(obj).__name__} in a record")


@cache
def _hints(cls: type) -> tuple[dict[str, Any], frozenset[str]]:
    """A record class's field types and field names."""
    return typing.get_type_hints(cls), frozenset(f.name for f in dataclasses.fields(cls))


def _same(value: Any) -> Any:
    return value


def _to_float(value: Any) -> Any:
    return float(value) if type(value) is int else value  # JSON wrote 1.0 as 1


@cache
def _decoder(tp: Any) -> Callable[[Any], Any]:
    """The function that rebuilds a value of type ``tp`` from plain data (None stays None),
    made once per type: a recall's trace is thousands of values of a few types."""
    if tp is Any:
        return _same
    origin = typing.get_origin(tp)
    if origin is Union or origin is types.UnionType:
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        return _decoder(args[0]) if len(args) == 1 else _same
    if origin is list:
        (arg,) = typing.get_args(tp) or (Any,)
        item = _decoder(arg)
        return lambda v: None if v is None else [item(x) for x in v]
    if origin is dict:
        dargs = typing.get_args(tp)
        val = _decoder(dargs[1] if len(dargs) == 2 else Any)
        return lambda v: None if v is None else {k: val(x) for k, x in v.items()}
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return lambda v: None if v is None else from_plain(tp, v)
    if tp is float:
        return _to_float
    return _same


def from_plain(cls: type[T], data: dict[str, Any]) -> T:
    """Rebuild record ``cls`` from :func:`to_plain` output (unknown keys are an error).

    >>> @dataclasses.dataclass
    ... class P:
    ...     x: float
    >>> from_plain(P, {"x": 1})
    P(x=1.0)
    """
    hints, names = _hints(typing.cast(type, cls))
    if not names.issuperset(data):
        unknown = sorted(set(data) - names)
        raise ValueError(f"{cls.__name__}: unknown field(s) {', '.join(unknown)}")
    return cls(**{k: _decoder(hints[k])(v) for k, v in data.items()})
