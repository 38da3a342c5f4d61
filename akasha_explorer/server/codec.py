"""JSON for the values the Memory API returns, so a notebook talking to ``akasha serve``
gets the same types as one holding the store: traces, context blocks, frames, dataclasses.

Only types this module knows are rebuilt (:data:`TYPES`); anything else a method returns
must already be plain JSON (dicts, lists, strings, numbers, None). What a *client* sends is
decoded with ``inbound=True``: only the values a served method takes from a caller
(:data:`INBOUND`: a recall trace, a context block, settings) are rebuilt, and anything else
that is not plain JSON — a path, a frame, bytes, another class — is refused.

A recall trace the server kept for its client carries ``server_ref`` (not part of the
record) both ways. A server never rebuilds a trace a client sends: it decodes to a
:class:`TraceRef`, which the server swaps for its own copy (or refuses), so a commit, a
replay or an expand always uses the trace exactly as this server made it.

>>> import json
>>> import pandas as pd
>>> from akasha_explorer.engine.trace import RecallTrace
>>> t = RecallTrace.empty(query="阿岚", q=[1.0, 0.0], now=5.0)
>>> back = decode(json.loads(json.dumps(encode({"trace": t, "frame": pd.DataFrame({"a": [1]})}))))
>>> back["trace"] == t, back["frame"]["a"].tolist()
(True, [1])
"""

from __future__ import annotations

import base64
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

__all__ = ["INBOUND", "TYPES", "TraceRef", "decode", "encode"]

TYPES = {
    "RecallTrace": "akasha_explorer.engine.trace",
    "ContextBlock": "akasha_explorer.brief.context",
    "ContextItem": "akasha_explorer.brief.context",
    "Expansion": "akasha_explorer.brief.expand",
    "Message": "akasha_explorer.model",
    "NodeState": "akasha_explorer.model",
    "IngestReport": "akasha_explorer.model",
    "Skipped": "akasha_explorer.model",
    "SessionInfo": "akasha_explorer.model",
    "Anchor": "akasha_explorer.model",
    "AnchorDetail": "akasha_explorer.model",
    "Alias": "akasha_explorer.model",
    "Mention": "akasha_explorer.model",
    "Fact": "akasha_explorer.model",
    "MentionedAnchor": "akasha_explorer.model",
    "Triple": "akasha_explorer.model",
    "Episode": "akasha_explorer.model",
    "AuditEntry": "akasha_explorer.model",
    "Label": "akasha_explorer.model",
    "ReviewItem": "akasha_explorer.curate.review",
    "WritebackPlan": "akasha_explorer.engine.writeback",
    "NodeUpdates": "akasha_explorer.engine.writeback",
    "EdgeUpdates": "akasha_explorer.engine.writeback",
    "Depressions": "akasha_explorer.engine.writeback",
    "DoctorReport": "akasha_explorer.doctor",
    "SearchHits": "akasha_explorer.analysis.search",
    "GraphView": "akasha_explorer.analysis.views",
    "Atlas": "akasha_explorer.analysis.atlas",
    "Finding": "akasha_explorer.doctor",
}
"""Dataclasses rebuilt on the client side: class name -> module."""

INBOUND = frozenset({"RecallTrace", "ContextBlock", "ContextItem"})
"""The classes a server rebuilds from what a client sends (with settings)."""



@dataclasses.dataclass(frozen=True)
class TraceRef:
    """What a recall trace sent by a client decodes to on the server: the reference of the
    server's own copy (None: a trace the server never gave out)."""

    ref: str | None


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
                "log_uid": getattr(value, "log_uid", None),
                "written_back": getattr(value, "written_back", None),
                "server_ref": getattr(value, "server_ref", None)}
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
    if isinstance(value, bytes):
        return {"__bytes__": base64.b64encode(value).decode("ascii")}
    return value


def decode(value: Any, *, inbound: bool = False) -> Any:
    """Inverse of :func:`encode`; ``inbound``: a client's value (see the module docstring)."""
    if isinstance(value, list):
        return [decode(v, inbound=inbound) for v in value]
    if not isinstance(value, dict):
        return value
    if "__settings__" in value:
        from ..config import Settings
        if not isinstance(value["__settings__"], dict):
            raise InvalidInput("settings must be an object of setting names and values")
        return Settings.from_dict(value["__settings__"])
    special = next((k for k in ("__path__", "__frame__", "__bytes__") if k in value), None)
    if special is not None and inbound:
        raise InvalidInput(f"a {special.strip('_')} cannot be sent to the server")
    if "__path__" in value:
        return Path(value["__path__"])
    if "__frame__" in value:
        return pd.read_json(io.StringIO(value["__frame__"]), orient="table")
    if "__bytes__" in value:
        return base64.b64decode(value["__bytes__"])
    kind = value.get("__type__")
    if kind is not None and inbound and kind not in INBOUND:
        raise InvalidInput(f"a {kind} cannot be sent to the server")
    try:
        return _rebuild(kind, value, inbound) if kind is not None else \
            {k: decode(v, inbound=inbound) for k, v in value.items()}
    except (TypeError, ValueError, KeyError, AttributeError, RecursionError) as e:
        if not inbound:
            raise
        raise InvalidInput(f"not a {kind} this server can read "
                           f"({type(e).__name__}: {str(e)[:120]})") from None


def _rebuild(kind: str, value: dict[str, Any], inbound: bool) -> Any:
    if kind == "RecallTrace":
        ref = value.get("server_ref")
        if inbound:
            return TraceRef(ref if isinstance(ref, str) else None)
        trace = _cls(kind).from_json(value["json"])
        trace.log_uid = value.get("log_uid")
        done = value.get("written_back")
        trace.written_back = done if isinstance(done, dict) else None
        if isinstance(ref, str):
            trace.server_ref = ref
        return trace
    cls = _cls(kind)
    fields = {k: decode(v, inbound=inbound) for k, v in value["fields"].items()}
    for f in dataclasses.fields(cls):     # tuples travel as lists
        if f.name in fields and isinstance(fields[f.name], list) and "tuple" in str(f.type):
            fields[f.name] = tuple(fields[f.name])
    out = cls(**fields)
    if inbound and kind == "ContextBlock":   # what expand reads of a client's block
        h = out.handles
        if not (isinstance(h, dict) and isinstance(out.query, str) and all(
                isinstance(k, str) and isinstance(v, str) for k, v in h.items())):
            raise ValueError("handles must map handles to node ids")
    return out
