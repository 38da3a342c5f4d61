"""The one request guard of ``akasha serve``: every HTTP request passes it before any route
(``/api/call``, ``/api/events``, ``/api/info``, ``/mcp``, and anything added later).

A server on loopback is reachable from every web page the user opens: a page may send a
"simple" cross-site request (``fetch(url, {mode: "no-cors"})``, ``<form>``) without asking,
and a DNS-rebinding page (``evil.example`` answering ``127.0.0.1``) becomes same-origin with
the server and can read its answers. The guard refuses, in this order:

===============  ======  ==================================================================
check            status  what passes
===============  ======  ==================================================================
Host             421     a loopback name (``localhost``, ``127.x.x.x``, ``[::1]``), the
                         address bound, or a name given with ``--allow-host``
Origin           403     none (not a browser: the notebook client, an agent, curl), this
                         server's own origin, or one given with ``--allow-origin``;
                         ``Origin: null`` never
Sec-Fetch-Site   403     absent, ``same-origin`` or ``none`` (a browser's cross-site
                         ``<img>`` / ``<script>`` GET carries no Origin, but says this)
token            401     when the server has tokens: ``Authorization: Bearer <token>``
                         (the scheme in any case), compared in constant time
Content-Type     415     POST bodies as ``application/json`` only — what no page can send
                         cross-origin without a CORS preflight, which is never answered
body size        413     at most ``max_body`` bytes (announced or streamed)
JSON depth       400     POST bodies nested at most ``max_depth`` deep
===============  ======  ==================================================================

Every refusal is JSON ``{"ok": false, "error": {"type", "message"}}`` with one line that
says what to do. What passes carries its *principal* — the name of the token it showed, or
``"local"`` on a server without tokens — in ``scope["state"]["principal"]``: the audit log's
actor for every write it makes (never a name the caller chose).
"""

from __future__ import annotations

import hmac
import ipaddress
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["MAX_BODY", "MAX_DEPTH", "GuardPolicy", "RequestGuard", "host_name",
           "is_loopback", "json_depth"]

MAX_BODY = 4 * 1024 * 1024
"""Largest POST body (bytes): two messages of :data:`~.service.MAX_TURN_CHARS` characters,
JSON-escaped, fit with room to spare."""

MAX_DEPTH = 64
"""Deepest nesting of arrays and objects a POST body may have (a recall trace sent back
for a commit is about 6 deep)."""

LOOPBACK_NAMES = frozenset({"localhost", "localhost.", "ip6-localhost"})


def is_loopback(host: str) -> bool:
    """True for addresses only this machine reaches (127.0.0.0/8, ::1, localhost).

    >>> is_loopback("127.0.0.1"), is_loopback("localhost"), is_loopback("0.0.0.0")
    (True, True, False)
    >>> is_loopback("[::1]"), is_loopback("127.0.0.1.evil.example")
    (True, False)
    """
    h = host.strip().lower()
    if h in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(h.strip("[]")).is_loopback
    except ValueError:
        return False


def host_name(header: str) -> str:
    """The name part of a ``Host`` header (port and IPv6 brackets removed, lower case).

    >>> host_name("LocalHost:8765"), host_name("[::1]:80"), host_name("127.0.0.1")
    ('localhost', '::1', '127.0.0.1')
    """
    h = header.strip().lower()
    if h.startswith("["):
        return h[1:h.find("]")] if "]" in h else h
    return h.rsplit(":", 1)[0] if h.count(":") == 1 else h


def json_depth(body: bytes) -> int:
    """How deep arrays and objects nest in the JSON text ``body`` (brackets inside strings
    do not count). Linear, and safe on any input: it runs before the parser, whose recursion
    a deep body would exhaust.

    >>> json_depth(b'{"a": [1, {"b": "[[["}]}'), json_depth(b'"x"'), json_depth(b"[" * 5)
    (3, 0, 5)
    """
    depth = best = 0
    in_str = escaped = False
    for ch in body:
        if in_str:
            if escaped:
                escaped = False
            elif ch == 0x5C:     # backslash
                escaped = True
            elif ch == 0x22:     # quote
                in_str = False
        elif ch == 0x22:
            in_str = True
        elif ch in (0x5B, 0x7B):
            depth += 1
            best = max(best, depth)
        elif ch in (0x5D, 0x7D):
            depth -= 1
    return best


@dataclass(frozen=True)
class GuardPolicy:
    """What :class:`RequestGuard` lets through (see the module docstring).

    ``hosts``: extra names the ``Host`` header may carry (``--allow-host``); ``origins``:
    extra origins (``--allow-origin``, e.g. ``http://127.0.0.1:8888``); ``tokens``: token
    name -> secret (empty: no token needed; the principal is ``"local"``).
    """

    port: int
    bind: str = "127.0.0.1"
    hosts: frozenset[str] = frozenset()
    origins: frozenset[str] = frozenset()
    tokens: Mapping[str, str] = field(default_factory=dict)
    max_body: int = MAX_BODY
    max_depth: int = MAX_DEPTH

    @classmethod
    def make(cls, *, port: int, bind: str = "127.0.0.1", hosts: Iterable[str] = (),
             origins: Iterable[str] = (), tokens: Mapping[str, str] | None = None,
             max_body: int = MAX_BODY, max_depth: int = MAX_DEPTH) -> GuardPolicy:
        """A policy with names normalised (hosts lower case without port; origins without
        a trailing slash)."""
        return cls(port=port, bind=bind, hosts=frozenset(host_name(h) for h in hosts if h),
                   origins=frozenset(o.strip().rstrip("/").lower() for o in origins if o),
                   tokens=dict(tokens or {}), max_body=max_body, max_depth=max_depth)

    def host_ok(self, header: str | None) -> bool:
        """Whether a ``Host`` header names this server (see the module docstring)."""
        if not header:
            return False
        name = host_name(header)
        return is_loopback(name) or name in self.hosts or (
            name == host_name(self.bind) and name not in ("0.0.0.0", "::"))

    def own_origins(self) -> frozenset[str]:
        """The origins of this server itself, by every loopback name and the address bound."""
        names = ["127.0.0.1", "localhost", "[::1]", *sorted(self.hosts)]
        if self.bind not in ("0.0.0.0", "::"):
            names.append(f"[{self.bind}]" if ":" in self.bind else self.bind)
        return frozenset(f"{scheme}://{n}:{self.port}" for n in names
                         for scheme in ("http", "https"))

    def origin_ok(self, origin: str | None) -> bool:
        """Whether a request with this ``Origin`` header may pass (absent: not a browser)."""
        if origin is None:
            return True
        o = origin.strip().rstrip("/").lower()
        return o != "null" and (o in self.origins or o in self.own_origins())

    def principal(self, authorization: str | None) -> str | None:
        """The name of the token an ``Authorization`` header shows (``"local"`` when the
        server has none); None when it shows no valid token."""
        if not self.tokens:
            return "local"
        scheme, _, given = (authorization or "").strip().partition(" ")
        if scheme.lower() != "bearer" or not given.strip():
            return None
        got = given.strip().encode()
        found = None
        for name, secret in self.tokens.items():   # every token compared: constant time
            if hmac.compare_digest(got, secret.encode()):
                found = name
        return found

    def mcp_hosts(self) -> list[str]:
        """``Host`` patterns for the MCP SDK's own transport security (the same rule)."""
        names = {"127.0.0.1", "localhost", "[::1]", *self.hosts}
        if self.bind not in ("0.0.0.0", "::"):
            names.add(f"[{self.bind}]" if ":" in self.bind else self.bind)
        return sorted(x for n in names for x in (n, f"{n}:*"))

    def mcp_origins(self) -> list[str]:
        """Origins for the MCP SDK's own transport security (the same rule)."""
        return sorted(self.own_origins() | self.origins)


class _Refused(Exception):
    def __init__(self, status: int, kind: str, message: str) -> None:
        super().__init__(message)
        self.status, self.kind = status, kind


def _header(scope: Scope, name: bytes) -> str | None:
    for k, v in scope.get("headers") or []:
        if k.lower() == name:
            return v.decode("latin-1")
    return None


async def refuse(send: Send, status: int, kind: str, message: str,
                 extra: list[tuple[bytes, bytes]] | None = None) -> None:
    """Send a JSON refusal (the one shape every error of the server has)."""
    body = json.dumps({"ok": False, "error": {"type": kind, "message": message}}).encode()
    await send({"type": "http.response.start", "status": status, "headers": [
        (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
        (b"cache-control", b"no-store"), *(extra or [])]})
    await send({"type": "http.response.body", "body": body})


class RequestGuard:
    """ASGI middleware: the checks of the module docstring, then the app."""

    def __init__(self, app: ASGIApp, policy: GuardPolicy) -> None:
        self.app, self.policy = app, policy

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        try:
            principal = self._check_headers(scope)
            if scope.get("method") == "POST":
                body = await self._read_body(scope, receive)
                receive = _replay(body, receive)
        except _Refused as r:
            extra = [(b"www-authenticate", b'Bearer realm="akasha"')] if r.status == 401 \
                else None
            await refuse(send, r.status, r.kind, str(r), extra)
            return
        scope.setdefault("state", {})["principal"] = principal
        await self.app(scope, receive, send)

    def _check_headers(self, scope: Scope) -> str:
        p = self.policy
        host = _header(scope, b"host")
        if not p.host_ok(host):
            raise _Refused(421, "MisdirectedRequest",
                           f"this server does not answer to Host {host!r}: use "
                           f"http://127.0.0.1:{p.port}, or start it with --allow-host NAME")
        origin = _header(scope, b"origin")
        if not p.origin_ok(origin):
            raise _Refused(403, "Forbidden",
                           f"requests from the web page at {origin!r} are refused (a page "
                           "may not use this memory); start the server with --allow-origin "
                           "ORIGIN to let one in")
        site = (_header(scope, b"sec-fetch-site") or "").lower()
        if origin is None and site not in ("", "same-origin", "none"):
            raise _Refused(403, "Forbidden",
                           f"a {site} browser request is refused (a page may not use this "
                           "memory)")
        principal = p.principal(_header(scope, b"authorization"))
        if principal is None:
            raise _Refused(401, "Unauthorized",
                           "this server needs a token: send Authorization: Bearer <token> "
                           "(ak.connect(url, token=...))")
        if scope.get("method") == "POST":
            ctype = (_header(scope, b"content-type") or "").split(";")[0].strip().lower()
            if ctype != "application/json":
                raise _Refused(415, "UnsupportedMediaType",
                               f"POST bodies must be Content-Type: application/json, not "
                               f"{ctype or 'none'!r}")
        return principal

    async def _read_body(self, scope: Scope, receive: Receive) -> bytes:
        p = self.policy
        announced = _header(scope, b"content-length")
        if announced is not None:
            try:
                size = int(announced)
            except ValueError:
                raise _Refused(400, "BadRequest", "Content-Length is not a number") from None
            if size > p.max_body:
                raise _Refused(413, "PayloadTooLarge",
                               f"the body has {size:,} bytes; the most is {p.max_body:,}")
        chunks: list[bytes] = []
        total = 0
        while True:
            msg = await receive()
            if msg["type"] == "http.disconnect":
                raise _Refused(400, "BadRequest", "the client went away mid-body")
            chunk = msg.get("body", b"")
            total += len(chunk)
            if total > p.max_body:
                raise _Refused(413, "PayloadTooLarge",
                               f"the body has more than {p.max_body:,} bytes, the most")
            chunks.append(chunk)
            if not msg.get("more_body", False):
                break
        body = b"".join(chunks)
        depth = json_depth(body)
        if depth > p.max_depth:
            raise _Refused(400, "InvalidInput",
                           f"the JSON body nests {depth} deep; the most is {p.max_depth}")
        return body


def _replay(body: bytes, receive: Receive) -> Receive:
    """A ``receive`` that hands the app the body the guard already read, then the client's
    own messages (its disconnect, which a streaming answer watches for)."""
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay
