"""``akasha serve``: one process owns a store and serves it — MCP over streamable HTTP at
``/mcp`` (and/or stdio) for agents, a JSON API at ``/api`` for notebooks
(:func:`akasha_explorer.connect`) — on one port.

- ``GET /api/info`` — the store, its settings and the change version;
- ``POST /api/call`` — ``{"method": "recall", "args": [...], "kwargs": {...}}`` runs one
  ``Memory`` method of :data:`~.service.READS` / :data:`~.service.WRITES`; the answer is
  ``{"ok": true, "result": ...}`` or ``{"ok": false, "error": {"type", "message"}}``;
- ``GET /api/events?since=N&timeout=S`` — waits until the store changed after version
  ``N`` (a write through the server) and returns the new version: a panel's push.

Loopback only by default; binding another address needs a token (``--token`` or
``AKASHA_TOKEN``), which every request then carries as ``Authorization: Bearer <token>``.
"""

from __future__ import annotations

import hmac
import ipaddress
import logging
import os
import threading
from pathlib import Path
from typing import Any

import anyio
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from ..errors import AkashaError, InvalidInput
from . import codec
from .mcp_tools import build_mcp
from .service import MemoryService

__all__ = ["DEFAULT_PORT", "build_app", "is_loopback", "serve"]

log = logging.getLogger(__name__)

DEFAULT_PORT = 8765


def is_loopback(host: str) -> bool:
    """True for addresses only this machine reaches (127.0.0.0/8, ::1, localhost).

    >>> is_loopback("127.0.0.1"), is_loopback("localhost"), is_loopback("0.0.0.0")
    (True, True, False)
    """
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class _TokenGate:
    """ASGI middleware: every HTTP request needs ``Authorization: Bearer <token>``."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app, self.token = app, token.encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            got = dict(scope.get("headers") or []).get(b"authorization", b"")
            ok = got.startswith(b"Bearer ") and hmac.compare_digest(got[7:].strip(),
                                                                    self.token)
            if not ok:
                resp = JSONResponse({"ok": False, "error": {
                    "type": "Unauthorized", "message": "this server needs a token: send "
                    "Authorization: Bearer <token> (ak.connect(url, token=...))"}},
                    status_code=401)
                await resp(scope, receive, send)
                return
        await self.app(scope, receive, send)


def _error(e: Exception, status: int) -> JSONResponse:
    return JSONResponse({"ok": False, "error": {"type": type(e).__name__, "message": str(e)}},
                        status_code=status)


def build_app(service: MemoryService, *, token: str | None = None,
              host: str = "127.0.0.1") -> Starlette:
    """The ASGI app of ``akasha serve`` (see the module docstring)."""
    mcp = build_mcp(service)
    app = mcp.streamable_http_app(streamable_http_path="/mcp", host=host)

    async def info(_request: Request) -> JSONResponse:
        return JSONResponse({"ok": True, "result": service.info()})

    async def call(request: Request) -> JSONResponse:
        try:
            body = await request.json()
            if not isinstance(body, dict) or not isinstance(body.get("method"), str):
                raise InvalidInput('send {"method": "...", "args": [...], "kwargs": {...}}')
            args = codec.decode(body.get("args") or [])
            kwargs = codec.decode(body.get("kwargs") or {})
            if not isinstance(args, list) or not isinstance(kwargs, dict):
                raise InvalidInput("args must be a list and kwargs an object")
            result = await anyio.to_thread.run_sync(service.call, body["method"], args,
                                                    kwargs)
            return JSONResponse({"ok": True, "result": codec.encode(result),
                                 "version": service.version})
        except (AkashaError, ValueError, TypeError) as e:
            return _error(e, 400)
        except Exception as e:
            log.exception("call %s failed", getattr(request, "url", "?"))
            return _error(e, 500)

    async def events(request: Request) -> JSONResponse:
        try:
            since = int(request.query_params.get("since", "-1"))
            timeout = float(request.query_params.get("timeout", "25"))
        except ValueError as e:
            return _error(InvalidInput(f"since and timeout must be numbers ({e})"), 400)
        version = await anyio.to_thread.run_sync(service.wait, since, timeout)
        return JSONResponse({"ok": True, "result": {"version": version}})

    async def index(_request: Request) -> JSONResponse:
        return JSONResponse({"ok": True, "result": {
            "store": str(service.path), "mcp": "/mcp", "api": ["/api/info", "/api/call",
                                                              "/api/events"]}})

    app.add_route("/api/info", info, methods=["GET"])
    app.add_route("/api/call", call, methods=["POST"])
    app.add_route("/api/events", events, methods=["GET"])
    app.add_route("/", index, methods=["GET"])
    if token:
        app.add_middleware(_TokenGate, token=token)
    return app


def serve(store: str | Path, *, host: str = "127.0.0.1", port: int = DEFAULT_PORT,
          stdio: bool = False, http: bool = True, token: str | None = None,
          checkpoint_seconds: float = 60.0, ready: threading.Event | None = None) -> None:
    """Serve ``store`` until interrupted (see the module docstring). With ``stdio`` the MCP
    tools also answer on stdin/stdout (an agent launches the server), and the HTTP API runs
    beside them unless ``http=False``. A non-loopback ``host`` without a token is refused."""
    token = token or os.environ.get("AKASHA_TOKEN") or None
    if http and not is_loopback(host) and not token:
        raise InvalidInput(f"refusing to serve {store} on {host}: anyone who reaches it could "
                           "read and change this memory. Give a token (--token or "
                           "AKASHA_TOKEN), or bind 127.0.0.1")
    service = MemoryService(store, checkpoint_seconds=checkpoint_seconds)
    try:
        if http:
            import uvicorn

            app = build_app(service, token=token, host=host)
            config = uvicorn.Config(app, host=host, port=port, log_level="warning",
                                    lifespan="on")
            server = uvicorn.Server(config)
            url = f"http://{host if ':' not in host else f'[{host}]'}:{port}"
            service.url = url
            service.mem.announce(url=url)
            if stdio:
                t = threading.Thread(target=server.run, name="akasha-http", daemon=True)
                t.start()
                _run_stdio(service, ready)
                server.should_exit = True
                t.join(timeout=10)
            else:
                if ready is not None:
                    threading.Thread(target=_signal_when_started, args=(server, ready),
                                     daemon=True).start()
                server.run()
        else:
            _run_stdio(service, ready)
    finally:
        service.close()


def _signal_when_started(server: Any, ready: threading.Event) -> None:
    while not server.started and not server.should_exit:
        threading.Event().wait(0.05)
    ready.set()


def _run_stdio(service: MemoryService, ready: threading.Event | None) -> None:
    mcp = build_mcp(service)
    if ready is not None:
        ready.set()
    anyio.run(mcp.run_stdio_async)
