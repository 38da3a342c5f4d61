"""``akasha serve``: one process owns a store and serves it — MCP over streamable HTTP at
``/mcp`` (and/or stdio) for agents, a JSON API at ``/api`` for notebooks
(:func:`akasha_explorer.connect`) — on one port.

- ``GET /api/info`` — the store, its settings and the change version;
- ``POST /api/call`` — ``{"method": "recall", "args": [...], "kwargs": {...}}`` runs one
  ``Memory`` method of :data:`~.service.SERVED` (marked ``@reads`` / ``@writes``), its arguments
  checked (:mod:`.wire`); the answer is ``{"ok": true, "result": ...}`` or
  ``{"ok": false, "error": {"type", "message"}}`` with a 4xx status;
- ``GET /api/events?since=N&timeout=S`` — waits until the store changed after version
  ``N`` (a write through the server) and returns the new version: a panel's push.

Every request passes one guard first (:mod:`.guard`: Host, Origin, token, content type,
body size, JSON depth), so no web page the user opens can read or change the memory.
Loopback only by default; binding another address needs a token (``--token`` or
``AKASHA_TOKEN``), which every request then carries as ``Authorization: Bearer <token>``.
SECURITY.md has the threat model.
"""

from __future__ import annotations

import json
import logging
import os
import re
import threading
import uuid
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import anyio
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse

from ..errors import AkashaError, InvalidInput, NotFound
from . import codec
from .guard import GuardPolicy, RequestGuard, is_loopback
from .mcp_tools import build_mcp
from .service import Caller, MemoryService
from .timings import TimingMiddleware, middleware_path

__all__ = ["DEFAULT_PORT", "build_app", "is_loopback", "parse_tokens", "serve"]

log = logging.getLogger(__name__)

DEFAULT_PORT = 8765

_CLIENT_ID = re.compile(r"[A-Za-z0-9_.-]{1,64}")


def parse_tokens(values: Iterable[str] | str | None) -> dict[str, str]:
    """Tokens as ``{name: secret}``: each value is ``NAME=SECRET`` or a bare secret (named
    ``owner``). The name is the audit log's actor for what its holder writes.

    >>> parse_tokens(["s3cret", "agent=abc123"])
    {'owner': 's3cret', 'agent': 'abc123'}
    """
    if values is None:
        return {}
    out: dict[str, str] = {}
    for v in [values] if isinstance(values, str) else values:
        name, sep, secret = v.partition("=")
        if not sep:
            name, secret = "owner", v
        name, secret = name.strip(), secret.strip()
        if not secret or not re.fullmatch(r"[A-Za-z0-9_.@-]{1,64}", name):
            raise InvalidInput(f"token {name!r}: give NAME=SECRET (a name of letters, digits, "
                               "_ . @ -) or a bare secret")
        if name in out:
            raise InvalidInput(f"two tokens named {name!r}")
        out[name] = secret
    return out


def _error(kind: str, message: str, status: int) -> JSONResponse:
    return JSONResponse({"ok": False, "error": {"type": kind, "message": message}},
                        status_code=status)


def _refuse_constant(name: str) -> Any:
    raise InvalidInput(f"{name} is not a JSON number; send finite numbers only")


def _caller(request: Request, channel: str = "api") -> Caller:
    principal = getattr(request.state, "principal", None) or "local"
    client = request.headers.get("x-akasha-client") or "default"
    if not _CLIENT_ID.fullmatch(client):
        raise InvalidInput("X-Akasha-Client must be 1 to 64 letters, digits, _ . -")
    return Caller(principal=principal, client=client, channel=channel)


def build_app(service: MemoryService, policy: GuardPolicy) -> Any:
    """The ASGI app of ``akasha serve`` (see the module docstring): the routes behind
    one :class:`~.guard.RequestGuard`."""
    mcp = build_mcp(service)
    security = TransportSecuritySettings(enable_dns_rebinding_protection=True,
                                         allowed_hosts=policy.mcp_hosts(),
                                         allowed_origins=policy.mcp_origins())
    app: Starlette = mcp.streamable_http_app(streamable_http_path="/mcp", host=policy.bind,
                                             transport_security=security,
                                             max_request_body_size=policy.max_body)

    async def info(_request: Request) -> JSONResponse:
        return JSONResponse({"ok": True, "result": service.info()})

    async def call(request: Request) -> JSONResponse:
        try:
            caller = _caller(request)
            try:
                body = json.loads(await request.body(), parse_constant=_refuse_constant)
            except (ValueError, UnicodeDecodeError) as e:
                if isinstance(e, AkashaError):
                    raise
                raise InvalidInput(f"the body is not JSON ({str(e)[:80]})") from None
            if not isinstance(body, dict) or not isinstance(body.get("method"), str):
                raise InvalidInput('send {"method": "...", "args": [...], "kwargs": {...}}')
            extra = sorted(set(body) - {"method", "args", "kwargs"})
            if extra:
                raise InvalidInput(f"unknown field(s) {', '.join(extra)} in the call; send "
                                   "method, args and kwargs")
            args = codec.decode(body.get("args") or [], inbound=True)
            kwargs = codec.decode(body.get("kwargs") or {}, inbound=True)
            if not isinstance(args, list) or not isinstance(kwargs, dict):
                raise InvalidInput("args must be a list and kwargs an object")
            result = await anyio.to_thread.run_sync(service.call, body["method"], args,
                                                    kwargs, caller)
            return JSONResponse({"ok": True, "result": codec.encode(result),
                                 "version": service.version})
        except NotFound as e:
            return _error(type(e).__name__, str(e), 404)
        except AkashaError as e:
            return _error(type(e).__name__, str(e), 400)
        except Exception:
            ref = uuid.uuid4().hex[:8]
            log.exception("call failed (ref %s)", ref)
            return _error("InternalError", f"the server failed on this call (ref {ref}); its "
                          "log has the details", 500)

    async def events(request: Request) -> JSONResponse:
        try:
            since = int(request.query_params.get("since", "-1"))
            timeout = float(request.query_params.get("timeout", "25"))
            if not (abs(since) < 2**53 and 0.0 <= timeout <= 120.0):
                raise ValueError("out of range")
        except ValueError:
            return _error("InvalidInput", "since must be a whole number and timeout 0 to "
                          "120 seconds", 400)
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
    app.add_middleware(RequestGuard, policy=policy)
    timings = middleware_path()
    if timings:
        app.add_middleware(TimingMiddleware, path=timings)
    return app


def serve(store: str | Path, *, host: str = "127.0.0.1", port: int = DEFAULT_PORT,
          stdio: bool = False, http: bool = True,
          token: str | Iterable[str] | Mapping[str, str] | None = None,
          allow_hosts: Iterable[str] = (), allow_origins: Iterable[str] = (),
          checkpoint_seconds: float = 60.0, ready: threading.Event | None = None,
          announce: Any = None) -> None:
    """Serve ``store`` until interrupted (see the module docstring). With ``stdio`` the MCP
    tools also answer on stdin/stdout (an agent launches the server), and the HTTP API runs
    beside them unless ``http=False``. A non-loopback ``host`` without a token is refused.
    ``token``: a secret, ``NAME=SECRET`` values, or ``{name: secret}`` (default: the
    environment's ``AKASHA_TOKEN``). ``announce(url)`` is called once the server answers."""
    if isinstance(token, Mapping):
        tokens = dict(token)
    else:
        tokens = parse_tokens(token or os.environ.get("AKASHA_TOKEN") or None)
    if http and not is_loopback(host) and not tokens:
        raise InvalidInput(f"refusing to serve {store} on {host}: anyone who reaches it could "
                           "read and change this memory. Give a token (--token or "
                           "AKASHA_TOKEN), or bind 127.0.0.1")
    policy = GuardPolicy.make(port=port, bind=host, hosts=allow_hosts, origins=allow_origins,
                              tokens=tokens)
    service = MemoryService(store, checkpoint_seconds=checkpoint_seconds)
    try:
        threading.Thread(target=service.warm, name="akasha-warm", daemon=True).start()
        if http:
            import uvicorn

            app = build_app(service, policy)
            config = uvicorn.Config(app, host=host, port=port, log_level="warning",
                                    lifespan="on")
            server = uvicorn.Server(config)
            url = f"http://{host if ':' not in host else f'[{host}]'}:{port}"
            service.url = url
            service.mem.store.announce(url=url)
            started = threading.Event()
            threading.Thread(target=_signal_when_started, args=(server, started, ready,
                                                                 announce, url),
                             daemon=True).start()
            if stdio:
                t = threading.Thread(target=server.run, name="akasha-http", daemon=True)
                t.start()
                _run_stdio(service, ready)
                server.should_exit = True
                t.join(timeout=10)
            else:
                server.run()
                if not started.is_set():
                    raise InvalidInput(f"could not serve on {url}: the port is taken or the "
                                       "address cannot be bound (see above)")
        else:
            _run_stdio(service, ready)
    finally:
        service.close()


def _signal_when_started(server: Any, started: threading.Event,
                         ready: threading.Event | None, announce: Any, url: str) -> None:
    while not server.started and not server.should_exit:
        threading.Event().wait(0.05)
    if server.started:
        started.set()
        if announce is not None:
            announce(url)
        if ready is not None:
            ready.set()


def _run_stdio(service: MemoryService, ready: threading.Event | None) -> None:
    mcp = build_mcp(service)
    if ready is not None:
        ready.set()
    anyio.run(mcp.run_stdio_async)
