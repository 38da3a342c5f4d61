"""One Memory API, local and served: ``Memory`` and ``RemoteMemory`` both satisfy
:class:`~akasha_explorer.protocol.MemoryAPI` (mypy checks the types in each module; these
tests check what mypy does not — the served table is exactly the protocol, and the
parameter names and defaults agree, so a keyword call means the same on either side)."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import pytest

from akasha_explorer.memory import Memory
from akasha_explorer.protocol import AnchorsAPI, LabelsAPI, MemoryAPI, ReviewAPI
from akasha_explorer.served import served
from akasha_explorer.server.client import RemoteAnchors, RemoteLabels, RemoteMemory, RemoteReview
from akasha_explorer.server.service import SERVED

DESKS = {"anchors": (AnchorsAPI, RemoteAnchors), "labels": (LabelsAPI, RemoteLabels),
         "review": (ReviewAPI, RemoteReview)}
"""Each namespace of the protocol: its protocol and the served store's desk."""

NOT_SERVED = {"path", "read_only", "settings", "close", "neighbourhood", *DESKS}
"""Members of the protocol that are not one call to the server (attributes, the desks
themselves, the neighbourhood's own calls)."""

LOCAL_ONLY = {"by", "tokenizer"}
"""Parameters only a local memory takes: the audit actor (the server sets it from the
caller's token) and a tokenizer object (the server counts with its own)."""

MAX_PUBLIC = 45


def _members(proto: type) -> list[str]:
    return [n for n in vars(proto) if not n.startswith("_") or n == "__call__"]


def _protocol_calls() -> dict[str, Callable[..., Any]]:
    """Every call of the protocol by its served name (``stats``, ``anchors.rename``…)."""
    out: dict[str, Callable[..., Any]] = {}
    for name in _members(MemoryAPI):
        if name not in NOT_SERVED:
            out[name] = getattr(MemoryAPI, name)
    for ns, (proto, _) in DESKS.items():
        for name in _members(proto):
            if name != "__call__":
                out[f"{ns}.{name}"] = getattr(proto, name)
    return dict(sorted(out.items()))


def _shape(fn: Callable[..., Any], drop: set[str] = frozenset()) -> list[tuple[str, Any, Any]]:
    """Parameter names, kinds and defaults (``self`` and ``drop`` left out)."""
    return [(p.name, p.kind, p.default) for p in inspect.signature(fn).parameters.values()
            if p.name != "self" and p.name not in drop]


def _remote(name: str) -> Callable[..., Any]:
    ns, _, attr = name.rpartition(".")
    owner = DESKS[ns][1] if ns else RemoteMemory
    return getattr(owner, attr)  # type: ignore[no-any-return]


def test_the_served_table_is_the_protocol() -> None:
    """What the server answers (the methods marked ``@reads`` / ``@writes``) is exactly
    what :class:`MemoryAPI` promises — a method cannot be served and missing from the
    protocol, or promised and not served."""
    assert list(SERVED) == list(_protocol_calls())
    assert served(Memory) == SERVED


@pytest.mark.parametrize("name", list(_protocol_calls()))
def test_local_served_and_protocol_signatures_agree(name: str) -> None:
    want = _shape(_protocol_calls()[name])
    assert _shape(SERVED[name].fn, LOCAL_ONLY) == want, f"Memory's {name} differs"
    assert _shape(_remote(name)) == want, f"RemoteMemory's {name} differs"


@pytest.mark.parametrize("ns", list(DESKS))
def test_a_desk_lists_when_called(ns: str) -> None:
    """``mem.anchors(...)`` takes what ``mem.anchors.list(...)`` takes, on either side."""
    proto, remote = DESKS[ns]
    for cls in (proto, remote, SERVED[f"{ns}.list"].owner):
        names = [(n, d) for n, _k, d in _shape(cls.__call__)]
        assert names == [(n, d) for n, _k, d in _shape(cls.list, LOCAL_ONLY)], cls


def test_the_facade_is_small() -> None:
    public = sorted(n for n in dir(Memory) if not n.startswith("_"))
    assert len(public) <= MAX_PUBLIC, public


def test_store_parts_are_reached_through_the_store() -> None:
    """The store's parts hang off ``mem.store``, not off the facade."""
    public = set(dir(Memory))
    for part in ("graph", "vectors", "journal", "mirror", "manifest", "embedder", "lexical",
                 "postings", "embed_query", "announce"):
        assert part not in public, part
