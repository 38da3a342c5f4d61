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

import builtins
import datetime as dt
import json
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from .. import errors
from ..analysis.atlas import ATLAS_MIN_WEIGHT, ATLAS_PER_NODE
from ..config import Settings
from ..errors import AkashaError, StoreError
from ..protocol import MemoryAPI
from . import codec
from .service import SERVED

if TYPE_CHECKING:
    import pandas as pd

    from ..analysis.atlas import Atlas
    from ..analysis.search import SearchHits
    from ..analysis.views import GraphView
    from ..brief.context import ContextBlock
    from ..brief.expand import Expansion
    from ..curate.review import ReviewItem
    from ..engine.trace import RecallTrace
    from ..engine.writeback import WritebackPlan
    from ..model import (
        Anchor,
        AnchorDetail,
        AuditEntry,
        Episode,
        Label,
        MentionedAnchor,
        Message,
        NodeState,
        SessionInfo,
        Triple,
    )

__all__ = ["RemoteAnchors", "RemoteLabels", "RemoteMemory", "RemoteNeighbourhood",
           "RemoteReview", "connect", "served_at"]


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


class _Desk:
    """A desk of a served store (``mem.review``, ``mem.anchors``, ``mem.labels``):
    ``desk(...)`` lists, each method asks the server."""

    _name = ""

    def __init__(self, remote: RemoteMemory) -> None:
        self._remote = remote

    def _call(self, method: str, *args: Any, **kwargs: Any) -> Any:
        return self._remote.call(f"{self._name}.{method}", *args, **kwargs)


class RemoteReview(_Desk):
    """``mem.review`` of a served store (see :class:`~akasha_explorer.protocol.ReviewAPI`);
    a decision is recorded under this client's principal."""

    _name = "review"

    def __call__(self, status: str | None = "pending", kind: str | None = None,
                 limit: int | None = None) -> builtins.list[ReviewItem]:
        """The same as :meth:`list`."""
        return self.list(status=status, kind=kind, limit=limit)

    def list(self, *, status: str | None = "pending", kind: str | None = None,
             limit: int | None = None) -> builtins.list[ReviewItem]:
        """Items by status (None: all) and kind, oldest first."""
        return list(self._call("list", status=status, kind=kind, limit=limit))

    def get(self, uid: str) -> ReviewItem:
        """One item by uid."""
        return cast("ReviewItem", self._call("get", uid))

    def approve(self, uid: str, *, why: str | None = None) -> str:
        """Approve an item; returns the audit uid."""
        return str(self._call("approve", uid, why=why))

    def reject(self, uid: str, *, why: str | None = None) -> str:
        """Reject an item; returns the audit uid."""
        return str(self._call("reject", uid, why=why))

    def edit(self, uid: str, *, why: str | None = None, **changes: Any) -> str:
        """Approve an item with changes; returns the audit uid."""
        return str(self._call("edit", uid, why=why, **changes))


class RemoteAnchors(_Desk):
    """``mem.anchors`` of a served store (see
    :class:`~akasha_explorer.protocol.AnchorsAPI`); edits are recorded under this client's
    principal."""

    _name = "anchors"

    def __call__(self, search: str | None = None, *, kind: str | None = None,
                 status: str | None = "active") -> builtins.list[Anchor]:
        """The same as :meth:`list`."""
        return self.list(search, kind=kind, status=status)

    def list(self, search: str | None = None, *, kind: str | None = None,
             status: str | None = "active") -> builtins.list[Anchor]:
        """Anchors with aliases and mention counts, most mentioned first."""
        return list(self._call("list", search, kind=kind, status=status))

    def get(self, uid: str) -> AnchorDetail:
        """One anchor with its aliases, mentions and triples."""
        return cast("AnchorDetail", self._call("get", uid))

    def of(self, node: str) -> builtins.list[MentionedAnchor]:
        """The anchors a node mentions, in text order."""
        return list(self._call("of", node))

    def rename(self, uid: str, name: str, *, why: str | None = None) -> str:
        """Rename an anchor; returns the audit uid."""
        return str(self._call("rename", uid, name, why=why))

    def merge(self, keep: str, absorb: str, *, why: str | None = None) -> str:
        """Merge ``absorb`` into ``keep``; returns the audit uid."""
        return str(self._call("merge", keep, absorb, why=why))

    def split(self, uid: str, aliases: Sequence[str], *, name: str | None = None,
              why: str | None = None) -> tuple[str, str]:
        """Move ``aliases`` to a new anchor; returns (new anchor uid, audit uid)."""
        new, audit = self._call("split", uid, list(aliases), name=name, why=why)
        return str(new), str(audit)

    def add_alias(self, uid: str, surface: str, *, why: str | None = None) -> str:
        """Add an alias; returns the audit uid."""
        return str(self._call("add_alias", uid, surface, why=why))

    def remove_alias(self, uid: str, surface: str, *, why: str | None = None) -> str:
        """Remove an alias; returns the audit uid."""
        return str(self._call("remove_alias", uid, surface, why=why))

    def attach(self, uid: str, msg: str, start: int, end: int, *,
               why: str | None = None) -> str:
        """Say that ``text[start:end]`` of message ``msg`` names the anchor."""
        return str(self._call("attach", uid, msg, start, end, why=why))

    def detach(self, uid: str, msg: str, start: int, *, why: str | None = None) -> str:
        """Remove the anchor's mention at ``start`` in message ``msg``."""
        return str(self._call("detach", uid, msg, start, why=why))


class RemoteLabels(_Desk):
    """``mem.labels`` of a served store (see :class:`~akasha_explorer.protocol.LabelsAPI`);
    labels are recorded under this client's principal."""

    _name = "labels"

    def __call__(self, query: str | None = None) -> builtins.list[Label]:
        """The same as :meth:`list`."""
        return self.list(query)

    def list(self, query: str | None = None) -> builtins.list[Label]:
        """Every label, oldest first; ``query``: only that query's."""
        return list(self._call("list", query))

    def add(self, query: str, node_id: str, relevant: bool = True) -> str:
        """Label ``node_id`` for ``query``; returns the label's uid."""
        return str(self._call("add", query, node_id, relevant))

    def remove(self, query: str, node_id: str) -> bool:
        """Remove a label; False when there was none."""
        return bool(self._call("remove", query, node_id))

    def load(self, source: str | Path | Iterable[dict[str, Any]]) -> int:
        """Add labels: a JSON Lines file is read here and its labels sent (the server
        records them under this client's principal: a label's own ``by`` is dropped)."""
        if isinstance(source, str | Path):
            from ..curate.labels import read_labels
            source = read_labels(Path(source).expanduser())
        items = [{k: v for k, v in item.items() if k != "by"} if isinstance(item, dict)
                 else item for item in source]
        return int(self._call("load", items))


class RemoteNeighbourhood:
    """``mem.neighbourhood()`` of a served store: the same methods as
    :class:`~akasha_explorer.analysis.neighbourhood.Neighbourhood`. ``now`` is fixed when
    it is made; what every node says (texts, times, communities, strength) is fetched in
    one call the first time a method needs every node (:meth:`texts`,
    :meth:`communities`), a single node's when only it is asked for, edges and neighbours
    per call — so a panel that draws the map (:meth:`atlas`) and reads a clicked turn
    never asks for a 100k-turn store's every node (and its Leiden communities)."""

    def __init__(self, remote: RemoteMemory, *, now: float | None = None,
                 communities: dict[str, int] | None = None) -> None:
        self._r = remote
        self.now = float(remote.last_ts() if now is None else now)
        self._kw: dict[str, Any] = {"now": self.now, "communities": communities}
        self._all: dict[str, dict[str, Any]] | None = None
        """Every live node's info (one call, on first need)."""
        self._one: dict[str, dict[str, Any]] = {}
        """Nodes asked for one by one (a node written after ``_all`` was read, too)."""

    def _call(self, name: str, *args: Any, **kwargs: Any) -> Any:
        return self._r.call(f"neighbourhood.{name}", *args, **kwargs, **self._kw)

    def _every(self) -> dict[str, dict[str, Any]]:
        if self._all is None:
            self._all = self._call("infos")["infos"]
        return self._all

    def texts(self) -> dict[str, str]:
        """Node uid → the text that names it."""
        return {u: i["text"] for u, i in self._every().items()}

    def text(self, uid: str) -> str:
        """The text that names node ``uid`` ('' for an unknown node)."""
        if self._all is not None and uid in self._all:
            return str(self._all[uid]["text"])
        return str(self._call("text", uid))

    def lines(self, uids: Sequence[str]) -> dict[str, str]:
        """Node uid → its messages as the agent's context block shows them (see
        ``Neighbourhood.lines``)."""
        return dict(self._call("lines", list(uids)))

    def communities(self) -> dict[str, int]:
        """Node uid → community (nodes in none left out)."""
        return {u: int(i["community"]) for u, i in self._every().items()
                if i["community"] is not None}

    def has(self, uid: str) -> bool:
        """Whether ``uid`` is a live node."""
        known = self._all if self._all is not None else self._one
        return uid in known or bool(self._r.call("has_node", uid))

    def info(self, uid: str) -> dict[str, Any]:
        """One node as plain values (see ``Neighbourhood.info``); a node written after this
        projection was made is asked for (as a local ``Neighbourhood`` reads it live)."""
        if self._all is not None and uid in self._all:
            return dict(self._all[uid])
        if uid not in self._one:
            self._one[uid] = self._call("info", uid)
        return dict(self._one[uid])

    def strength(self, uids: Sequence[str]) -> np.ndarray:
        """Decayed strength at ``now`` of each node (asked for, unless every node's info
        was read: a node's info carries its community, which costs the server a Leiden
        run)."""
        if self._all is not None and all(u in self._all for u in uids):
            return np.array([self._all[u]["strength_eff"] for u in uids], np.float64)
        return np.asarray(self._call("strength", list(uids)), np.float64)

    def time_of(self, uid: str) -> float:
        """The time of node ``uid``."""
        return float(self.info(uid)["ts"])

    def times(self) -> np.ndarray:
        """The times of every live node."""
        return np.asarray(self._call("times"), np.float64)

    def session_nodes(self, session: str) -> builtins.list[str] | None:
        """The live nodes of ``session`` in time order (None: no such session)."""
        return self._call("session_nodes", session)

    def newest(self, before: float, k: int) -> builtins.list[str]:
        """The ``k`` newest live nodes at or before ``before``."""
        return self._call("newest", before, k)

    def incident(self, uids: Sequence[str]) -> builtins.list[tuple[str, str, float]]:
        """Every alive COACT edge touching ``uids``, strongest first."""
        return [tuple(e) for e in self._call("incident", list(uids))]

    def edges_among(self, uids: Sequence[str], *, min_w: float = 0.0,
                    per_node: int | None = None) -> builtins.list[tuple[str, str, float]]:
        """The COACT edges between ``uids`` (see ``Neighbourhood.edges_among``)."""
        return [tuple(e) for e in self._call(
            "edges_among", list(uids), min_w=min_w, per_node=per_node)]

    def neighbours(self, uids: Sequence[str], *, exclude: Iterable[str] = (),
                   limit: int | None = None) -> builtins.list[str]:
        """COACT neighbours of ``uids``, strongest edge first (see
        ``Neighbourhood.neighbours``)."""
        return list(self._call("neighbours", list(uids), exclude=sorted(exclude), limit=limit))

    def atlas(self, *, level: str = "auto", community: int | None = None,
              min_weight: float = ATLAS_MIN_WEIGHT, per_node: int = ATLAS_PER_NODE) -> Atlas:
        """The whole memory as a map at ``now`` (see ``Neighbourhood.atlas``)."""
        return cast("Atlas", self._call("atlas", level=level, community=community,
                                        min_weight=min_weight, per_node=per_node))


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
        self.review = RemoteReview(self)
        self.anchors = RemoteAnchors(self)
        self.labels = RemoteLabels(self)

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

    def call(self, method: str, /, *args: Any, **kwargs: Any) -> Any:
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

    # -- the Memory API (akasha_explorer.protocol.MemoryAPI), each method asked of the server
    def stats(self) -> dict[str, Any]:
        """Counts and facts about the store (``Memory.stats``)."""
        return dict(self.call("stats"))

    def sessions(self) -> builtins.list[SessionInfo]:
        """Sessions, oldest first (``Memory.sessions``)."""
        return list(self.call("sessions"))

    def node(self, uid: str) -> NodeState:
        """Dynamic state of one node (``Memory.node``)."""
        return cast("NodeState", self.call("node", uid))

    def has_node(self, uid: str) -> bool:
        """Whether ``uid`` is a live node."""
        return bool(self.call("has_node", uid))

    def node_of_message(self, msg_uid: str) -> str | None:
        """The node a message belongs to (None: no such message)."""
        return cast("str | None", self.call("node_of_message", msg_uid))

    def messages(self, node: str, *, verify: bool = True) -> builtins.list[Message]:
        """The verbatim messages of a node, in order (``Memory.messages``)."""
        return list(self.call("messages", node, verify=verify))

    def last_ts(self) -> float:
        """Time of the newest message."""
        return float(self.call("last_ts"))

    def query_log(self, *, limit: int | None = None) -> builtins.list[dict[str, Any]]:
        """The query log, oldest first (``Memory.query_log``)."""
        return list(self.call("query_log", limit=limit))

    def neighbourhood(self, *, now: float | None = None,
                      communities: dict[str, int] | None = None) -> RemoteNeighbourhood:
        """Node and edge projections at ``now`` (see ``Memory.neighbourhood``)."""
        return RemoteNeighbourhood(self, now=now, communities=communities)

    def search(self, text: str, *, now: float | None = None) -> SearchHits:
        """Search by meaning and by words (``Memory.search``)."""
        return cast("SearchHits", self.call("search", text, now=now))

    def recall(self, query: str, *, now: float | None = None, session: str | None = None,
               settings: Settings | None = None, method: str = "akasha",
               log: bool = True) -> RecallTrace:
        """Recall ``query``, a dry run (``Memory.recall``); the trace is this client's to
        commit."""
        return cast("RecallTrace", self.call("recall", query, now=now, session=session,
                                             settings=settings, method=method, log=log))

    def plan_writeback(self, trace: RecallTrace, current_node: str, *,
                       reinforce: bool = False) -> WritebackPlan:
        """The write-back a commit would apply, as a dry run (``Memory.plan_writeback``):
        set on ``trace.writeback`` and returned."""
        plan = cast("WritebackPlan", self.call("plan_writeback", trace, current_node,
                                               reinforce=reinforce))
        trace.writeback = plan
        return plan

    def commit(self, trace: RecallTrace, current_node: str, *,
               reinforce: bool = False) -> WritebackPlan:
        """Write a recall back through the server (``Memory.commit``); a trace commits
        once."""
        if trace.writeback is not None and trace.writeback.applied:
            raise errors.InvalidInput("this trace was already committed; recall again to "
                                      "write again")
        plan = cast("WritebackPlan", self.call("commit", trace, current_node,
                                               reinforce=reinforce))
        trace.writeback = plan
        return plan

    def add_turn(self, user: str | None, assistant: str | None, *, session: str,
                 ts: float | None = None, recall: RecallTrace | None = None,
                 reinforce: bool = False, turn_id: str | None = None,
                 user_speaker: str | None = None, assistant_speaker: str | None = None
                 ) -> tuple[str, RecallTrace | None]:
        """Store a turn and write its recall back (``Memory.add_turn``); safe to retry
        with the same ``turn_id``."""
        node, trace = self.call("add_turn", user, assistant, session=session, ts=ts,
                                recall=recall, reinforce=reinforce, turn_id=turn_id,
                                user_speaker=user_speaker,
                                assistant_speaker=assistant_speaker)
        return str(node), trace

    def logged_recall(self, log_uid: str) -> RecallTrace:
        """A logged recall as it was made and delivered (``Memory.logged_recall``): the
        server's record, marked written back or not."""
        return cast("RecallTrace", self.call("logged_recall", log_uid))

    def why_not(self, trace: RecallTrace, node: str) -> dict[str, Any]:
        """Where a turn fell out of a recall this client made (``Memory.why_not``)."""
        return dict(self.call("why_not", trace, node))

    def replay_trace(self, trace: RecallTrace) -> RecallTrace:
        """Recompute a trace from the stored state (``Memory.replay_trace``)."""
        return cast("RecallTrace", self.call("replay_trace", trace))

    def context(self, query: str, *, budget_tokens: int | None = None,
                style: str = "brief", now: float | None = None, session: str | None = None,
                tz: str | dt.tzinfo | None = None, log: bool = True) -> ContextBlock:
        """The context block for ``query`` (``Memory.context``); ``expand("[n]")`` resolves
        against it afterwards."""
        if tz is not None and not isinstance(tz, str):
            tz = str(tz)
        return cast("ContextBlock", self.call("context", query, budget_tokens=budget_tokens,
                                              style=style, now=now, session=session, tz=tz,
                                              log=log))

    def expand(self, handle_or_node_id: str | int, around: int | None = None, *,
               trace: RecallTrace | ContextBlock | None = None) -> Expansion:
        """The verbatim messages of a node and its neighbouring turns
        (``Memory.expand``)."""
        return cast("Expansion", self.call("expand", handle_or_node_id, around, trace=trace))

    def health(self, *, window: float | None = None, windows: int = 14,
               top_hubs: int = 10) -> dict[str, Any]:
        """Recall health from the query log (``Memory.health``)."""
        return dict(self.call("health", window=window, windows=windows, top_hubs=top_hubs))

    def triples(self, *, anchor: str | None = None, status: str | None = None
                ) -> builtins.list[Triple]:
        """Triples, oldest first (``Memory.triples``)."""
        return list(self.call("triples", anchor=anchor, status=status))

    def episodes(self, *, kind: str | None = None, session: str | None = None
                 ) -> builtins.list[Episode]:
        """Episodes in time order (``Memory.episodes``)."""
        return list(self.call("episodes", kind=kind, session=session))

    def set_episodes(self, kind: str, groups: Sequence[Sequence[str]],
                     labels: Sequence[str] | None = None) -> int:
        """Replace every episode of ``kind`` (``Memory.set_episodes``)."""
        return int(self.call("set_episodes", kind, [list(g) for g in groups],
                             None if labels is None else list(labels)))

    def audit(self, *, target: str | None = None, limit: int | None = None
              ) -> builtins.list[AuditEntry]:
        """The audit log, newest first (``Memory.audit``)."""
        return list(self.call("audit", target=target, limit=limit))

    def undo(self, audit_uid: str, *, why: str | None = None) -> str:
        """Reverse one audit entry (``Memory.undo``)."""
        return str(self.call("undo", audit_uid, why=why))

    def forget(self, *, node: str | None = None, session: str | None = None,
               anchor: str | None = None, why: str | None = None) -> dict[str, Any]:
        """Remove a node, a session or an anchor everywhere (``Memory.forget``)."""
        return dict(self.call("forget", node=node, session=session, anchor=anchor, why=why))

    def evaluate(self, *, methods: Sequence[str] | None = None, k: int = 10,
                 now: float | None = None, settings: Settings | None = None
                 ) -> dict[str, Any]:
        """Score the recall methods on the labelled queries (``Memory.evaluate``)."""
        return dict(self.call("evaluate", methods=None if methods is None else list(methods),
                              k=k, now=now, settings=settings))

    def compare_methods(self, query: str, *, now: float | None = None,
                        methods: Sequence[str] | None = None, k: int = 10,
                        settings: Settings | None = None,
                        include: Sequence[str] = ()) -> pd.DataFrame:
        """One query through every method side by side (``Memory.compare_methods``)."""
        return cast("pd.DataFrame", self.call(
            "compare_methods", query, now=now, methods=None if methods is None else
            list(methods), k=k, settings=settings, include=list(include)))

    def graph_view(self, view: str = "nodes", *, now: float | None = None,
                   resolution: float | None = None, seed: int | None = None) -> GraphView:
        """A projection of the store (``Memory.graph_view``)."""
        return cast("GraphView", self.call("graph_view", view, now=now,
                                           resolution=resolution, seed=seed))

    def ppr(self, seeds: str | list[str], *, view: str = "nodes", now: float | None = None,
            damping: float | None = None, top: int = 20) -> pd.DataFrame:
        """Personalized PageRank from seeds (``Memory.ppr``)."""
        return cast("pd.DataFrame", self.call("ppr", seeds, view=view, now=now,
                                              damping=damping, top=top))

    def communities(self, view: str = "nodes", *, now: float | None = None,
                    resolution: float | None = None, seed: int | None = None,
                    save: bool = False) -> pd.DataFrame:
        """Leiden communities of a view (``Memory.communities``)."""
        return cast("pd.DataFrame", self.call("communities", view, now=now,
                                              resolution=resolution, seed=seed, save=save))

    def surprises(self, *, now: float | None = None, resolution: float | None = None,
                  seed: int | None = None, top: int = 10, queue: bool = True
                  ) -> pd.DataFrame:
        """Surprise discovery (``Memory.surprises``)."""
        return cast("pd.DataFrame", self.call("surprises", now=now, resolution=resolution,
                                              seed=seed, top=top, queue=queue))

    def export(self, path: str | Path, *, format: str, view: str = "nodes",
               now: float | None = None, resolution: float | None = None,
               seed: int | None = None) -> Path:
        """Export through the server (``Memory.export``): the server makes the file(s) and
        sends them back, and they are written here at ``path`` (a file, or a folder for
        parquet, csv and store) — never on the server's disk."""
        from ..store.paths import output_path

        out = output_path(self.path, path, folder=format in ("parquet", "csv", "store"))
        got = self.call("export", format=format, view=view, now=now, resolution=resolution,
                        seed=seed)
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

    def checkpoint(self) -> dict[str, float]:
        """Fold the server's journal into Kuzu now (``Memory.checkpoint``)."""
        return dict(self.call("checkpoint"))

    def migrate(self, profile: str, **changes: Any) -> dict[str, tuple[Any, Any]]:
        """Switch the served store to settings ``profile`` (``Memory.migrate``); this
        client's :attr:`settings` follow."""
        out = self.call("migrate", profile, **changes)
        self.settings = Settings.from_dict(self._request("GET", "/api/info")["settings"])
        return {k: (a, b) for k, (a, b) in out.items()}  # JSON sent the pairs as lists

    def __getattr__(self, name: str) -> Any:
        if name in ("store", "mirror", "graph", "vectors", "journal"):
            raise AttributeError(f"a served store has no .{name} here: it lives in the server "
                                 "process; use the Memory API (stats(), recall(), …)")
        raise AttributeError(f"{type(self).__name__} has no {name!r}; served methods: "
                             f"{', '.join(SERVED)}")


def _conforms(remote: RemoteMemory) -> MemoryAPI:
    """mypy holds ``RemoteMemory`` to :class:`~akasha_explorer.protocol.MemoryAPI` here."""
    return remote
