"""One recall, composed: what ``Memory.recall`` and ``Memory.replay_trace`` do, in one place
below the facade, so a recall's path only goes down (store → methods → engine).

:func:`recall` checks the time and the method, embeds the query (``Store.embed_query``),
makes the lexical pass (``Store.lexical``: query terms under the store's rules, BM25 over
the mirror, IDF as of ``now``) and the time windows the query names, runs the recall method
on the mirror's arrays (:data:`RECALL_METHODS`), attaches the verbatim messages a context
block shows (:func:`~akasha_explorer.brief.api.attach_messages`), and appends one query-log
row (unless ``log=False`` or the store is read-only). :func:`replay` recomputes a recorded
trace the same way, with the settings and the method it recorded, and names the first
difference.

Recall methods are a registry, not an ``if`` chain: :func:`register` adds one (a function
of the mirror's nodes and edges, the query vector, the lexical hits and a
:class:`MethodInput`). ``"akasha"`` is the engine of SPEC §4
(:func:`akasha_explorer.engine.recall.recall`); ``"ppr"`` personalized PageRank from the
same seeds (:func:`akasha_explorer.analysis.ppr.ppr_recall`).

>>> sorted(RECALL_METHODS)
['akasha', 'ppr']
"""

from __future__ import annotations

import datetime as dt
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from .analysis.ppr import ppr_recall
from .brief.api import attach_messages
from .config import PROFILES, Settings
from .engine.recall import recall as engine_recall
from .engine.trace import RecallTrace
from .errors import InvalidInput, TraceMismatch

if TYPE_CHECKING:
    from .engine.bm25 import LexicalHits
    from .engine.state import EdgeStore, NodeTable
    from .store.store import Store

__all__ = ["RECALL_METHODS", "MethodInput", "RecallMethod", "method_input", "recall",
           "recorded_settings", "register", "replay", "run_method"]

TIME_MAX = 253_402_300_800.0
"""The first second of year 10000: ``datetime`` shows no later time."""


@dataclass(frozen=True)
class MethodInput:
    """What a recall method gets besides the arrays: the time, the settings, the query
    text, its session, the time windows the query names (``(start, end, phrase)``), and the
    nodes it demotes as filler (``FILLER_FACTOR``: :meth:`Store.filler_mask
    <akasha_explorer.store.store.Store.filler_mask>`; None when none are)."""

    now: float
    settings: Settings
    query: str = ""
    session: str | None = None
    windows: tuple[tuple[float, float, str], ...] = ()
    filler: np.ndarray | None = field(default=None, compare=False)
    asks: np.ndarray | None = field(default=None, compare=False)
    """The messages that ask something (``ANSWER_HANDOFF``:
    :meth:`Store.asking_mask <akasha_explorer.store.store.Store.asking_mask>`)."""


RecallMethod = Callable[["NodeTable", "EdgeStore", np.ndarray, "LexicalHits", MethodInput],
                        RecallTrace]
"""A recall method: the mirror's nodes and edges, the query vector, its lexical hits and a
:class:`MethodInput` in; a :class:`RecallTrace` out, nothing written."""

RECALL_METHODS: dict[str, RecallMethod] = {}
"""Recall methods by name (``Memory.recall(method=...)``)."""

WINDOWED: set[str] = set()
"""Methods that use the time windows a query names (the others get none)."""


def register(name: str, *, windows: bool = False) -> Callable[[RecallMethod], RecallMethod]:
    """Add a recall method under ``name`` (``windows``: it reads the query's time
    windows)."""
    def add(fn: RecallMethod) -> RecallMethod:
        RECALL_METHODS[name] = fn
        if windows:
            WINDOWED.add(name)
        return fn
    return add


@register("akasha", windows=True)
def _akasha(nodes: NodeTable, edges: EdgeStore, q: np.ndarray, lexical: LexicalHits,
            x: MethodInput) -> RecallTrace:
    return engine_recall(nodes, edges, q, lexical, now=x.now, settings=x.settings,
                         query=x.query, session=x.session, windows=list(x.windows),
                         filler=x.filler, asks=x.asks)


@register("ppr")
def _ppr(nodes: NodeTable, edges: EdgeStore, q: np.ndarray, lexical: LexicalHits,
         x: MethodInput) -> RecallTrace:
    return ppr_recall(nodes, edges, q, lexical, now=x.now, settings=x.settings,
                      query=x.query, session=x.session, filler=x.filler, asks=x.asks)


def method_input(store: Store, method: str, query: str, *, now: float, settings: Settings,
                 session: str | None = None) -> MethodInput:
    """The :class:`MethodInput` of ``query`` for ``method`` (with the time windows the query
    names, for a method that reads them, and the filler it demotes)."""
    windows = store.index.time_windows(query, now=now, settings=settings) \
        if method in WINDOWED else []
    return MethodInput(now=now, settings=settings, query=query, session=session,
                       windows=tuple(windows), filler=store.index.filler_mask(query, settings),
                       asks=store.index.asking_mask(settings))


def run_method(store: Store, method: str, q: Any, lexical: LexicalHits, x: MethodInput
               ) -> RecallTrace:
    """Run recall method ``method`` over the store's mirror (no messages, no log row)."""
    fn = RECALL_METHODS.get(method)
    if fn is None:
        raise InvalidInput(f"unknown recall method {method!r}; known: "
                           f"{', '.join(RECALL_METHODS)}")
    m = store.mirror
    return fn(m.nodes, m.edges, q, lexical, x)


def recall(store: Store, query: str, *, now: float | None = None, session: str | None = None,
           settings: Settings | None = None, method: str = "akasha",
           log: bool = True) -> RecallTrace:
    """A dry-run recall of ``query`` at ``now`` (default: the wall clock), as the module
    docstring says; the trace carries ``log_uid`` when a row was logged."""
    store.check_open()
    s = settings or store.settings
    when = dt.datetime.now(dt.UTC).timestamp() if now is None else float(now)
    if not 0.0 <= when < TIME_MAX:  # NaN, ±inf, negative, past year 9999
        raise InvalidInput(f"now={now!r} is not a time; give epoch seconds or use "
                           "mem.last_ts()")
    if method not in RECALL_METHODS:
        raise InvalidInput(f"unknown recall method {method!r}; known: "
                           f"{', '.join(RECALL_METHODS)}")
    q = store.embeddings.query(query)
    t0 = time.perf_counter()
    lex = store.index.lexical(query, now=when, settings=s)
    trace = run_method(store, method, q, lex,
                       method_input(store, method, query, now=when, settings=s,
                                    session=session))
    latency = (time.perf_counter() - t0) * 1000.0
    attach_messages(store, trace)
    store.last_trace = trace
    if log and not store.read_only:
        trace.log_uid = store.queries.log(_query_row(trace, latency, method), trace)
    return trace


def recorded_settings(data: dict[str, Any]) -> Settings:
    """The settings a trace was made with, from its record. A trace lacks the settings
    added after it was recorded, and each of those then had the value that reproduces the
    engine from before it — its v1 value where the v1 profile sets one (every [ours]
    departure is off there), else its default; a trace recorded before profiles existed
    (no ``HYBRID``) was a v1 recall."""
    if "HYBRID" not in data:
        return Settings.from_dict(data, profile="v1")
    before = {k: v for k, v in PROFILES["v1"].items() if k not in data}
    return Settings.from_dict({**before, **data})


def replay(store: Store, trace: RecallTrace) -> RecallTrace:
    """Recompute ``trace`` from the stored state at ``trace.now`` with the settings it
    recorded, by the method that made it; raises :class:`TraceMismatch` naming the first
    difference."""
    store.check_open()
    s = recorded_settings(trace.settings)
    method = getattr(trace, "method", "akasha")
    windows: tuple[tuple[float, float, str], ...] = ()
    if method in WINDOWED:
        r = trace.relevance
        windows = tuple((a, b, p) for (a, b), p in zip(r.windows, r.window_phrases,
                                                       strict=True))
    lex = store.index.lexical(trace.query, now=trace.now, settings=s)
    again = run_method(store, method, np.asarray(trace.q, np.float32), lex, MethodInput(
        now=trace.now, settings=s, query=trace.query, session=trace.session, windows=windows,
        filler=store.index.filler_mask(trace.query, s), asks=store.index.asking_mask(s)))
    a, b = trace.to_dict(), again.to_dict()
    for part in ("writeback", "messages"):  # messages: text attached by recall, not computed
        a.pop(part, None)
        b.pop(part, None)
    b["settings"] = {k: v for k, v in b["settings"].items() if k in a["settings"]}  # newer ones
    if a != b:
        where = _first_difference(a, b)
        raise TraceMismatch(f"replaying the trace of {trace.query!r} differs at {where}; the "
                            "store changed since it was recorded (commits, ingest, forget)")
    return again


def _query_row(trace: RecallTrace, latency_ms: float, method: str) -> dict[str, Any]:
    """A QueryLog row: V1 inspector counts plus the activated items."""
    from .store.mirror import dumps
    a = trace.activation
    c = trace.counts
    return {"uid": f"q-{uuid.uuid4().hex[:16]}", "ts": trace.now, "query": trace.query,
            "session": trace.session, "method": method, "n_seeds": c["seeds"],
            "n_pool": c["pool"], "n_activated": c["activated"], "n_dense": c["dense"],
            "n_ripple": c["ripple"], "empty": c["activated"] == 0, "committed": False,
            "latency_ms": latency_ms,
            "seeds": dumps([[u, s] for u, s in zip(trace.seeds.uids, trace.seeds.source,
                                                   strict=True)]),
            "items": dumps([[u, sc, so] for u, sc, so in zip(a.uids, a.scores, a.sources,
                                                             strict=True)])}


def _first_difference(a: Any, b: Any, path: str = "trace") -> str:
    if type(a) is not type(b):
        return path
    if isinstance(a, dict):
        for k in sorted(set(a) | set(b)):
            if a.get(k) != b.get(k):
                return _first_difference(a.get(k), b.get(k), f"{path}.{k}")
    elif isinstance(a, list):
        if len(a) != len(b):
            return f"{path} (length {len(a)} vs {len(b)})"
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            if x != y:
                return _first_difference(x, y, f"{path}[{i}]")
    return f"{path} ({a!r} vs {b!r})"
