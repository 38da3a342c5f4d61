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
import uuid
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .. import errors
from ..config import Settings
from ..errors import AkashaError, StoreError
from . import codec
from .service import READS, WRITES

__all__ = ["RemoteMemory", "RemoteNeighbourhood", "connect", "served_at"]


def served_at(store: str | Path) -> str | None:
    """The URL ``store`` is served at by a running ``akasha serve`` (what its writer lock
    says, while the lock is held), else None.

    >>> served_at("/nonexistent/store") is None
    True
    """
    from ..store.lock import WriterLock

    lock = WriterLock(Path(store).expanduser())
    if not lock.path.exists() or not lock.held():
        return None
    url = lock.holder().get("url")
    return str(url) if url else None


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


class RemoteNeighbourhood:
    """``mem.neighbourhood()`` of a served store: the same methods as
    :class:`~akasha_explorer.analysis.neighbourhood.Neighbourhood`; what every node says
    (texts, times, communities, strength) is fetched once, edges and neighbours per call."""

    def __init__(self, remote: RemoteMemory, *, now: float | None = None,
                 communities: dict[str, int] | None = None) -> None:
        self._r = remote
        self._kw = {"now": now, "communities": communities}
        got = remote.call("neighbourhood.infos", **self._kw)
        self.now = float(got["now"])
        self._kw["now"] = self.now
        self._info: dict[str, dict[str, Any]] = got["infos"]

    def _call(self, name: str, *args: Any, **kwargs: Any) -> Any:
        return self._r.call(f"neighbourhood.{name}", *args, **kwargs, **self._kw)

    def texts(self) -> dict[str, str]:
        """Node uid → the text that names it."""
        return {u: i["text"] for u, i in self._info.items()}

    def text(self, uid: str) -> str:
        """The text that names node ``uid`` ('' for an unknown node)."""
        return self.info(uid)["text"] if self.has(uid) else ""

    def communities(self) -> dict[str, int]:
        """Node uid → community (nodes in none left out)."""
        return {u: int(i["community"]) for u, i in self._info.items()
                if i["community"] is not None}

    def has(self, uid: str) -> bool:
        """Whether ``uid`` is a live node."""
        return uid in self._info or bool(self._r.call("has_node", uid))

    def info(self, uid: str) -> dict[str, Any]:
        """One node as plain values (see ``Neighbourhood.info``); a node written after this
        projection was made is asked for (as a local ``Neighbourhood`` reads it live)."""
        if uid not in self._info:
            self._info[uid] = self._call("info", uid)
        return dict(self._info[uid])

    def strength(self, uids: Sequence[str]) -> np.ndarray:
        """Decayed strength at ``now`` of each node."""
        return np.array([self.info(u)["strength_eff"] for u in uids], np.float64)

    def time_of(self, uid: str) -> float:
        """The time of node ``uid``."""
        return float(self.info(uid)["ts"])

    def times(self) -> np.ndarray:
        """The times of every live node."""
        return np.asarray(self._call("times"), np.float64)

    def session_nodes(self, session: str) -> list[str] | None:
        """The live nodes of ``session`` in time order (None: no such session)."""
        return self._call("session_nodes", session)

    def newest(self, before: float, k: int) -> list[str]:
        """The ``k`` newest live nodes at or before ``before``."""
        return self._call("newest", before, k)

    def incident(self, uids: Sequence[str]) -> list[tuple[str, str, float]]:
        """Every alive COACT edge touching ``uids``, strongest first."""
        return [tuple(e) for e in self._call("incident", list(uids))]

    def edges_among(self, uids: Sequence[str], *, min_w: float = 0.0,
                    per_node: int | None = None) -> list[tuple[str, str, float]]:
        """The COACT edges between ``uids`` (see ``Neighbourhood.edges_among``)."""
        return [tuple(e) for e in self._call(
            "edges_among", list(uids), min_w=min_w, per_node=per_node)]

    def neighbours(self, uids: Sequence[str], *, exclude: Iterable[str] = (),
                   limit: int | None = None) -> list[str]:
        """COACT neighbours of ``uids``, strongest edge first (see
        ``Neighbourhood.neighbours``)."""
        return list(self._call("neighbours", list(uids), exclude=sorted(exclude), limit=limit))


class RemoteMemory:
    """A served store (see the module docstring). Built by :func:`connect`."""

    def __init__(self, url: str, *, token: str | None = None, timeout: float = 120.0) -> None:
        self.url = url.rstrip("/")
        self._token = token
        self.timeout = timeout
        self.client_id = f"nb-{uuid.uuid4().hex[:16]}"
        """Who this client is to the server: its recalls and context blocks are its own."""
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
        req.add_header("X-Akasha-Client", self.client_id)
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

    def plan_writeback(self, trace: Any, current_node: str, *,
                       reinforce: bool = False) -> Any:
        """The write-back a commit would apply, as a dry run (``Memory.plan_writeback``):
        set on ``trace.writeback`` and returned."""
        plan = self.call("plan_writeback", trace, current_node, reinforce=reinforce)
        trace.writeback = plan
        return plan

    def commit(self, trace: Any, current_node: str, *, reinforce: bool = False) -> Any:
        """Write a recall back through the server (``Memory.commit``); a trace commits
        once."""
        if trace.writeback is not None and trace.writeback.applied:
            raise errors.InvalidInput("this trace was already committed; recall again to "
                                      "write again")
        plan = self.call("commit", trace, current_node, reinforce=reinforce)
        trace.writeback = plan
        return plan

    def export(self, path: str | Path, **kwargs: Any) -> Path:
        """Export through the server (``Memory.export``): the server makes the file(s) and
        sends them back, and they are written here at ``path`` (a file, or a folder for
        parquet, csv and store) — never on the server's disk."""
        from ..store.paths import output_path

        fmt = kwargs.get("format")
        folder = fmt in ("parquet", "csv", "store")
        out = output_path(self.path, path, folder=folder)
        got = self.call("export", **kwargs)
        files: dict[str, bytes] = got["files"]
        if got["folder"]:
            out.mkdir(parents=True, exist_ok=True)
            for rel, data in files.items():
                target = (out / rel).resolve()
                if out.resolve() not in target.parents:
                    raise StoreError(f"the server sent a file outside the export ({rel!r})")
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(data)
        else:
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_bytes(next(iter(files.values())))
        return out

    def load_labels(self, source: str | Path | Sequence[dict[str, Any]], *,
                    by: str | None = None) -> int:
        """Add labels (``Memory.load_labels``): a JSON Lines file is read here and its
        labels sent; the server records them under this client's principal (``by`` and
        each label's own ``by`` are the server's to set)."""
        if isinstance(source, str | Path):
            from ..curate.labels import read_labels
            source = read_labels(Path(source).expanduser())
        items = [{k: v for k, v in item.items() if k != "by"} if isinstance(item, dict)
                 else item for item in source]
        return int(self.call("load_labels", items))

    def migrate(self, profile: str, **changes: Any) -> dict[str, tuple[Any, Any]]:
        """Switch the served store to settings ``profile`` (``Memory.migrate``); this
        client's :attr:`settings` follow."""
        out = self.call("migrate", profile, **changes)
        self.settings = Settings.from_dict(self._request("GET", "/api/info")["settings"])
        return {k: (a, b) for k, (a, b) in out.items()}  # JSON sent the pairs as lists

    def neighbourhood(self, *, now: float | None = None,
                      communities: dict[str, int] | None = None) -> RemoteNeighbourhood:
        """Node and edge projections at ``now`` (see ``Memory.neighbourhood``)."""
        return RemoteNeighbourhood(self, now=now, communities=communities)

    def __getattr__(self, name: str) -> Callable[..., Any]:
        if name in READS or name in WRITES:
            return lambda *a, **k: self.call(name, *a, **k)
        if name in ("mirror", "graph", "vectors", "journal"):
            raise AttributeError(f"a served store has no .{name} here: it lives in the server "
                                 "process; use the Memory API (stats(), recall(), …)")
        raise AttributeError(f"{type(self).__name__} has no {name!r}; served methods: "
                             f"{', '.join(sorted(READS | WRITES))}")
