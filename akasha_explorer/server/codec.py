"""JSON for the values the Memory API returns, so a notebook talking to ``akasha serve``
gets the same types as one holding the store: traces, context blocks, frames, dataclasses.

Only types this module knows are rebuilt (:data:`TYPES`); anything else a method returns
must already be plain JSON (dicts, lists, strings, numbers, None).

>>> import json
>>> import pandas as pd
>>> from akasha_explorer.engine.trace import RecallTrace
>>> t = RecallTrace.empty(query="阿岚", q=[1.0, 0.0], now=5.0)
>>> back = decode(json.loads(json.dumps(encode({"trace": t, "frame": pd.DataFrame({"a": [1]})}))))
>>> back["trace"] == t, back["frame"]["a"].tolist()
(True, [1])
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import importlib
import io
import math
from pathlib import Path, PurePath
from typing import Any

import numpy as np
import pandas as pd

from ..errors import InvalidInput

__all__ = ["TYPES", "decode", "encode"]

TYPES = {
    "RecallTrace": "akasha_explorer.engine.trace",
    "ContextBlock": "akasha_explorer.brief.context",
    "ContextItem": "akasha_explorer.brief.context",
    "Expansion": "akasha_explorer.brief.expand",
    "Message": "akasha_explorer.model",
    "NodeState": "akasha_explorer.model",
    "IngestReport": "akasha_explorer.model",
    "Skipped": "akasha_explorer.model",
    "ReviewItem": "akasha_explorer.curate.review",
    "WritebackPlan": "akasha_explorer.engine.writeback",
    "NodeUpdates": "akasha_explorer.engine.writeback",
    "EdgeUpdates": "akasha_explorer.engine.writeback",
    "Depressions": "akasha_explorer.engine.writeback",
    "DoctorReport": "akasha_explorer.store.doctor",
    "SearchHits": "akasha_explorer.analysis.search",
    "GraphView": "akasha_explorer.analysis.views",
    "Finding": "akasha_explorer.store.doctor",
}
"""Dataclasses rebuilt on the client side: class name -> module."""


def _cls(name: str) -> Any:
    module = TYPES.get(name)
    if module is None:
        raise InvalidInput(f"the server sent a value of unknown type {name!r}")
    return getattr(importlib.import_module(module), name)


def encode(value: Any) -> Any:
    """A JSON-ready form of ``value`` (see the module docstring)."""
    name = type(value).__name__
    if name == "RecallTrace":  # log_uid is no part of the record, but names its log row
        return {"__type__": name, "json": value.to_json(),
                "log_uid": getattr(value, "log_uid", None)}
    if name == "Settings":
        return {"__settings__": value.to_dict()}
    if isinstance(value, pd.DataFrame):
        return {"__frame__": value.to_json(orient="table", date_format="iso",
                                           default_handler=str, index=False)}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        if name not in TYPES:
            raise InvalidInput(f"cannot send a {name} to a client")
        return {"__type__": name, "fields": {f.name: encode(getattr(value, f.name))
                                             for f in dataclasses.fields(value)}}
    if isinstance(value, dict):
        return {str(k): encode(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [encode(v) for v in value]
    if isinstance(value, set | frozenset):
        return [encode(v) for v in sorted(value, key=repr)]
    if isinstance(value, np.generic):
        return encode(value.item())
    if isinstance(value, np.ndarray):
        return encode(value.tolist())
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dt.datetime):
        return value.isoformat()
    if isinstance(value, PurePath):
        return {"__path__": str(value)}
    return value


def decode(value: Any) -> Any:
    """Inverse of :func:`encode`."""
    if isinstance(value, list):
        return [decode(v) for v in value]
    if not isinstance(value, dict):
        return value
    if "__settings__" in value:
        from ..config import Settings
        return Settings.from_dict(value["__settings__"])
    if "__path__" in value:
        return Path(value["__path__"])
    if "__frame__" in value:
        return pd.read_json(io.StringIO(value["__frame__"]), orient="table")
    kind = value.get("__type__")
    if kind == "RecallTrace":
        trace = _cls(kind).from_json(value["json"])
        trace.log_uid = value.get("log_uid")
        return trace
    if kind is not None:
        cls = _cls(kind)
        fields = {k: decode(v) for k, v in value["fields"].items()}
        for f in dataclasses.fields(cls):     # tuples travel as lists
            if f.name in fields and isinstance(fields[f.name], list) and "tuple" in str(f.type):
                fields[f.name] = tuple(fields[f.name])
        return cls(**fields)
    return {k: decode(v) for k, v in value.items()}
