"""``akasha_explorer.connect(url)``: the Memory API of a store served by ``akasha serve``.

A :class:`RemoteMemory` answers the read and curation calls the panels and notebooks make —
``stats()``, ``recall()``, ``sessions()``, ``query_log()``, ``context()``, ``expand()``,
``review.list()`` / ``.approve()``, ``anchors()``, ``commit()``… — by asking the server,
which holds the store's one writer; values come back as the same types (traces, frames,
context blocks). The store's refusals are raised as the same
:class:`~akasha_explorer.errors.AkashaError` subclasses; a server that is gone is a
:class:`~akasha_explorer.errors.StoreError` that says so. :meth:`RemoteMemory.wait`
returns when something wrote through the server (what a panel's refresh waits on).
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .. import errors
from ..config import Settings
from ..errors import AkashaError, StoreError
from . import codec
from .service import READS, WRITES

__all__ = ["RemoteMemory", "connect"]


def connect(url: str, *, token: str | None = None, timeout: float = 120.0) -> RemoteMemory:
    """The store served at ``url`` (``http://127.0.0.1:8765``) as a :class:`RemoteMemory`;
    ``token`` when the server was started with one."""
    return RemoteMemory(url, token=token, timeout=timeout)


class _Namespace:
    """``mem.review``: ``mem.review()`` lists, ``.approve`` / ``.reject`` / ``.edit``
    decide, ``.get`` one item."""

    def __init__(self, remote: RemoteMemory, name: str) -> None:
        self._remote, self._name = remote, name

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._remote.call(f"{self._name}.list", *args, **kwargs)

    def __getattr__(self, attr: str) -> Callable[..., Any]:
        method = f"{self._name}.{attr}"
        if method not in READS and method not in WRITES:
            raise AttributeError(f"{self._name}.{attr} is not served")
        return lambda *a, **k: self._remote.call(method, *a, **k)


class RemoteMemory:
    """A served store (see the module docstring). Built by :func:`connect`."""

    def __init__(self, url: str, *, token: str | None = None, timeout: float = 120.0) -> None:
        self.url = url.rstrip("/")
        self._token = token
        self.timeout = timeout
        info = self._request("GET", "/api/info")
        self.path = Path(info["path"])
        self.read_only = bool(info.get("read_only", False))
        self.settings = Settings.from_dict(info["settings"])
        self.version = int(info.get("version", 0))
        self.info = info
        self.review = _Namespace(self, "review")

    def __repr__(self) -> str:
        return f"<RemoteMemory {self.path} served at {self.url}>"

    def __enter__(self) -> RemoteMemory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Nothing to release: the server keeps the store."""

    # -- transport --------------------------------------------------------------------------------
    def _request(self, verb: str, path: str, body: Any = None,
                 timeout: float | None = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.url + path, data=data, method=verb)
        req.add_header("Content-Type", "application/json")
        if self._token:
            req.add_header("Authorization", f"Bearer {self._token}")
        try:
            with urllib.request.urlopen(req, timeout=timeout or self.timeout) as resp:
                payload = json.loads(resp.read())
        except urllib.error.HTTPError as e:
            try:
                payload = json.loads(e.read())
            except ValueError:
                raise StoreError(f"the server at {self.url} answered {e.code} {e.reason}"
                                 ) from None
        except (urllib.error.URLError, ConnectionError, TimeoutError) as e:
            raise StoreError(f"cannot reach the memory server at {self.url} ({e}); is "
                             "`akasha serve` still running?") from None
        if not payload.get("ok"):
            err = payload.get("error") or {}
            cls = getattr(errors, str(err.get("type")), None)
            if not (isinstance(cls, type) and issubclass(cls, AkashaError)):
                cls = AkashaError
            raise cls(err.get("message") or "the server refused the call")
        if "version" in payload:
            self.version = int(payload["version"])
        return payload["result"]

    def call(self, method: str, *args: Any, **kwargs: Any) -> Any:
        """Run ``Memory.<method>(*args, **kwargs)`` on the server; the result decoded."""
        out = self._request("POST", "/api/call", {"method": method,
                                                   "args": codec.encode(list(args)),
                                                   "kwargs": codec.encode(kwargs)})
        return codec.decode(out)

    def wait(self, since: int | None = None, timeout: float = 25.0) -> int:
        """Block until something wrote through the server after version ``since`` (default:
        the last version this client saw) or ``timeout`` seconds; returns the version."""
        since = self.version if since is None else since
        out = self._request("GET", f"/api/events?since={int(since)}&timeout={timeout}",
                            timeout=timeout + 30)
        self.version = int(out["version"])
        return self.version

    def __getattr__(self, name: str) -> Callable[..., Any]:
        if name in READS or name in WRITES:
            return lambda *a, **k: self.call(name, *a, **k)
        if name in ("mirror", "graph", "vectors", "journal"):
            raise AttributeError(f"a served store has no .{name} here: it lives in the server "
                                 "process; use the Memory API (stats(), recall(), …)")
        raise AttributeError(f"{type(self).__name__} has no {name!r}; served methods: "
                             f"{', '.join(sorted(READS | WRITES))}")
