"""Plain-data codec for the engine's record dataclasses (SPEC §5: traces are JSON).

Records hold only ``str``, ``int``, ``float``, ``bool``, ``None``, lists, ``dict[str, Any]``
of plain values and other record dataclasses (a field declared with
``metadata={"record": False}`` is not part of the record: never written). :func:`to_plain`
turns one into JSON-ready builtins (refusing NaN/inf: a trace never stores a non-finite
number, it stores ``None``); :func:`from_plain` rebuilds it from the field types, so a JSON
round trip is exact (``json`` writes floats with ``repr``, which round-trips every float64).

>>> from dataclasses import dataclass, field
>>> @dataclass
... class Row:
...     name: str
...     xs: list[float] = field(default_factory=list)
...     rank: int | None = None
>>> r = Row("a", [0.1, 1e-300, -0.0])
>>> from_plain(Row, json.loads(dumps(r))) == r
True
"""

from __future__ import annotations

import dataclasses
import json
import math
import types
import typing
from functools import cache
from typing import Any, TypeVar, Union

__all__ = ["dumps", "from_plain", "to_plain"]

T = TypeVar("T")


def to_plain(obj: Any) -> Any:
    """JSON-ready builtins for a record (dataclasses become dicts, tuples lists).

    Raises ``ValueError`` on a NaN or infinite float: records store ``None`` instead.

    >>> to_plain({"a": (1, 2.5, None)})
    {'a': [1, 2.5, None]}
    """
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: to_plain(getattr(obj, f.name)) for f in dataclasses.fields(obj)
                if f.metadata.get("record", True)}
    if isinstance(obj, bool) or obj is None or isinstance(obj, str | int):
        return obj
    if isinstance(obj, float):
        if not math.isfinite(obj):
            raise ValueError(f"non-finite number {obj!r} in a record; store None instead")
        return obj
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
    return json.dumps(to_plain(obj), ensure_ascii=False, separators=(",", ":"),
                      allow_nan=False)


@cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _decode(tp: Any, value: Any) -> Any:
    if value is None or tp is Any:
        return value
    origin = typing.get_origin(tp)
    if origin is Union or origin is types.UnionType:
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        return _decode(args[0], value) if len(args) == 1 else value
    if origin is list:
        (arg,) = typing.get_args(tp) or (Any,)
        return [_decode(arg, x) for x in value]
    if origin is dict:
        dargs = typing.get_args(tp)
        arg = dargs[1] if len(dargs) == 2 else Any
        return {k: _decode(arg, v) for k, v in value.items()}
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return from_plain(tp, value)
    if tp is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    return value


def from_plain(cls: type[T], data: dict[str, Any]) -> T:
    """Rebuild record ``cls`` from :func:`to_plain` output (unknown keys are an error).

    >>> @dataclasses.dataclass
    ... class P:
    ...     x: float
    >>> from_plain(P, {"x": 1})
    P(x=1.0)
    """
    hints = _hints(typing.cast(type, cls))
    names = {f.name for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    unknown = sorted(set(data) - names)
    if unknown:
        raise ValueError(f"{cls.__name__}: unknown field(s) {', '.join(unknown)}")
    kwargs = {k: _decode(hints[k], v) for k, v in data.items()}
    return cls(**kwargs)
