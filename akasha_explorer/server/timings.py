"""Timed calls of ``akasha serve`` (issue 28; what ``akasha bench serve`` reads).

When ``$AKASHA_TIMINGS`` names a file, the server writes one JSON line there per MCP tool
call: ``tool``, ``server`` (seconds from the request's arrival to the end of its answer)
and the call's phases (:mod:`akasha_explorer._timing`, exclusive, in seconds):

- ``sdk_http``: the MCP SDK around the call — JSON-RPC parse, session dispatch, the
  answer's serialisation and write (``server`` less the call);
- ``sdk_call``: the SDK's own argument validation, the hop to a worker thread, the
  result's conversion to JSON;
- ``validate``: our argument checks (:func:`~.wire.bind`, the tool's own checks);
- ``embed``: the model (query vectors, a turn's message vectors);
- ``lock_wait``: waiting for the store (another caller holds it);
- ``batch_wait``: an ``add_turn`` waiting while another caller writes its turn in a batch
  (:mod:`.turns`);
- ``recall`` / ``brief``: the engine's recall; the context block;
- ``lookup``: the session's next seq and a ``turn_id`` retry check (LanceDB reads);
- ``ingest``: the rest of the ingest (its checks and reads, the mirror's new rows);
- ``lance`` / ``kuzu``: the turn's rows into LanceDB / Kuzu;
- ``kuzu_commit``: Kuzu ``COMMIT`` + ``CHECKPOINT`` (+ the redo folder) of a transaction;
- ``extract``: anchors, mentions, triples of the new turn;
- ``commit`` / ``journal_fsync``: the write-back plan applied and journaled; its fsync;
- ``rest``: whatever else the tool did.

Without the variable nothing is measured or written.
"""

from __future__ import annotations

import json
import os
import threading
import time
from typing import Any

__all__ = ["TIMINGS_ENV", "TimingMiddleware", "middleware_path", "timed_request"]

TIMINGS_ENV = "AKASHA_TIMINGS"
"""Environment variable: the file the timed calls go to (one JSON line each)."""

_KEY = "akasha_timing"


def timed_request(request: Any) -> dict[str, Any] | None:
    """The timing record the middleware opened for ``request`` (None: not timing)."""
    state = getattr(request, "scope", {}).get("state") if request is not None else None
    return state.get(_KEY) if isinstance(state, dict) else None


class TimingMiddleware:
    """ASGI middleware: a record per HTTP request, written to ``path`` as one line when
    the request made a tool call (``rec["tool"]``)."""

    def __init__(self, app: Any, path: str) -> None:
        self.app = app
        self.path = path
        self._lock = threading.Lock()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope.get("type") != "http":
            await self.app(scope, receive, send)
            return
        rec: dict[str, Any] = {}
        scope.setdefault("state", {})[_KEY] = rec
        t0 = time.perf_counter()
        try:
            await self.app(scope, receive, send)
        finally:
            if "tool" in rec:
                rec["server"] = time.perf_counter() - t0
                rec["sdk_http"] = rec["server"] - rec.pop("call", 0.0)
                line = json.dumps(rec, separators=(",", ":")) + "\n"
                with self._lock, open(self.path, "a", encoding="utf-8") as fh:
                    fh.write(line)


def middleware_path() -> str | None:
    """The file of ``$AKASHA_TIMINGS`` (None: calls are not timed)."""
    return os.environ.get(TIMINGS_ENV) or None
