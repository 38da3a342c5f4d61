"""The one process that owns a store while it is served (``akasha serve``).

Kuzu lets many processes read a database or one write it, never both; so a live agent and
the notebooks that look inside its memory cannot each open the store. :class:`MemoryService`
holds the one writable :class:`~akasha_explorer.memory.Memory` and serves two kinds of
callers through it, one store operation at a time (a lock; the store is not thread-safe):

- agents, through the MCP tools of :mod:`.mcp_tools` (:meth:`MemoryService.tool_*`: plain
  JSON in and out, every argument checked, every refusal an
  :class:`~akasha_explorer.errors.AkashaError` with a message that says what to do);
- notebooks, through :meth:`MemoryService.call` — the read and curation API of ``Memory``
  itself, method by method (:data:`SERVED`: the methods marked ``@reads`` /
  ``@writes``), arguments checked against each
  method's signature (:mod:`.wire`), values carried by :mod:`.codec` — which
  :func:`akasha_explorer.connect` turns back into the same API.

**Each caller is a** :class:`Caller`: its *principal* (the token it showed, or ``"local"``)
is the audit log's actor for whatever it writes; its *client* (an MCP session, a
``RemoteMemory``) owns its recalls, context blocks and retried turns (:class:`ClientState`):
``expand("[3]")`` resolves against the caller's own latest context, and a commit writes back
only a recall this server made for this caller — never another agent's.

**No file paths over the wire**: ``export`` returns the files it made (the client writes
them where it was asked to), ``labels.load`` takes the labels themselves.

**add_turn** is checked whole before anything is written (texts, session, time, the recall
it names, still valid after a forget), is safe to retry (``turn_id``: a retry returns the
first result instead of storing the turn twice), never echoes its input back, and embeds its
texts before taking the store (:meth:`Store.prepare_turn
<akasha_explorer.store.Store.prepare_turn>`): a long text does not hold up other callers.
Turns that wait for the store together are written together (:mod:`.turns`: one ingest,
one journal fsync, answered once durable).

Every write bumps :attr:`MemoryService.version`, so a panel can wait for a change
(:meth:`wait`). The journal is checkpointed into Kuzu on the service's own schedule (every
``checkpoint_seconds`` when commits are pending) and at :meth:`close`.
"""

from __future__ import annotations

import datetime as dt
import logging
import os
import sys
import tempfile
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._locks import ordered_lock
from .._timing import phase
from ..brief.context import ContextBlock
from ..config import Settings
from ..engine.trace import RecallTrace
from ..errors import AkashaError, InvalidInput
from ..memory import Memory
from ..protocol import NeighbourhoodAPI
from ..served import served
from . import wire
from .codec import TraceRef
from .turns import PendingTurn, TurnWriter
from .wire import MAX_TURN_CHARS

__all__ = ["FOLD_IDLE", "MAX_TURN_CHARS", "NEIGHBOURHOOD", "SERVED", "Caller",
           "ClientState", "MemoryService"]

log = logging.getLogger(__name__)

SERVED = served(Memory)
"""What a client may call through :meth:`MemoryService.call`, by dotted name: the
``Memory`` methods (and those of its desks ``review``, ``anchors``, ``labels``) marked
``@reads`` / ``@writes`` where they are defined (:mod:`akasha_explorer.served`). A read
changes nothing in the store (recall and context log the query, as on a local store)."""

NEIGHBOURHOOD = frozenset(n for n in vars(NeighbourhoodAPI)
                          if not n.startswith("_") and callable(getattr(NeighbourhoodAPI, n)))
"""Methods of ``mem.neighbourhood()`` a client may call (``neighbourhood.<name>``): those
of :class:`~akasha_explorer.protocol.NeighbourhoodAPI`."""

FOLD_IDLE = 0.5
"""Seconds without an ``add_turn`` after which the server writes the turns waiting for the
graph (:meth:`Store.fold_graph <akasha_explorer.store.Store.fold_graph>`)."""
MAX_ANSWER_BYTES = 512 * 1024
"""Largest text an MCP tool answers with (UTF-8 bytes): half of the 1 MiB an MCP client
reads in one message, so the JSON around it always fits. ``expand`` shows fewer
neighbouring turns, then cuts, to stay under it (and says so)."""

MAX_EXPORT_BYTES = 256 * 1024 * 1024
"""Largest export sent back over the server; a larger one is made on the server's machine
with ``akasha export``."""

_KEEP = 64
"""Recent recalls and context blocks kept per client so a later call can name them."""

_CLIENTS = 256
"""Clients whose state is kept (the least recently seen is dropped first)."""


@dataclass(frozen=True)
class Caller:
    """Who makes a call: ``principal`` (token name, or ``"local"``: the audit actor),
    ``client`` (an MCP session id or a ``RemoteMemory``'s id: whose state it is) and
    ``channel`` (``"mcp"`` or ``"api"``)."""

    principal: str = "local"
    client: str = "default"
    channel: str = "api"
    stateless: bool = False
    """An MCP request of a protocol without sessions: it has no "latest" context of its
    own, only the ids it was given."""


@dataclass
class ClientState:
    """What one client made on this server: its recalls (by ``recall_id`` / reference),
    context blocks, the latest of each, and the results of turns it stored with a
    ``turn_id`` (so a retry returns the first result)."""

    traces: OrderedDict[str, RecallTrace] = field(default_factory=OrderedDict)
    blocks: OrderedDict[str, ContextBlock] = field(default_factory=OrderedDict)
    latest_block: ContextBlock | None = None
    latest_trace: RecallTrace | None = None
    turns: OrderedDict[tuple[str, str], dict[str, Any]] = field(default_factory=OrderedDict)

    def keep(self, where: OrderedDict[Any, Any], value: Any, key: Any = None) -> Any:
        key = key or f"r-{uuid.uuid4().hex}"
        where[key] = value
        where.move_to_end(key)
        while len(where) > _KEEP:
            where.popitem(last=False)
        return key


def _text(value: Any, name: str, *, limit: int = wire.MAX_TEXT, empty: bool = False) -> str:
    if not isinstance(value, str):
        raise InvalidInput(f"{name} must be text, got {type(value).__name__}")
    if not empty and not value.strip():
        raise InvalidInput(f"{name} is empty")
    return wire.check_text(value, "argument", name, limit)


def _kept(where: OrderedDict[str, Any], key: str | None, what: str, again: str) -> Any:
    """The recall or context block a client names by its id (None when it names none)."""
    if key is None:
        return None
    _text(key, f"{what}_id", limit=64)
    value = where.get(key)
    if value is None:
        raise InvalidInput(f"no {what} {key!r} of yours here (the server keeps your last "
                           f"{_KEEP}); {again}")
    return value


def _time(value: Any, name: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InvalidInput(f"{name} must be epoch seconds (a number), got {value!r}")
    if not wire.TS_MIN <= float(value) < wire.TS_MAX:   # 1970 .. 2200
        raise InvalidInput(f"{name}={value!r} is not a time between 1970 and 2200")
    return float(value)


def _export_signature(*, format: str, view: str = "nodes", now: float | None = None,
                      resolution: float | None = None, seed: int | None = None) -> Any:
    """``export`` over the wire: ``Memory.export`` without a path (the files come back)."""


def _load_labels_signature(source: Sequence[dict[str, Any]]) -> Any:
    """``labels.load`` over the wire: the labels themselves, never a path."""


class MemoryService:
    """One writable store, shared by every caller of the server (see the module docstring).

    >>> MemoryService.__name__
    'MemoryService'
    """

    def __init__(self, path: str | Path, *, checkpoint_seconds: float = 60.0,
                 settings: Settings | None = None) -> None:
        self.path = Path(path).expanduser().resolve()
        self.mem = Memory(self.path, settings)
        self.lock = ordered_lock("server.request", reentrant=True)
        self.version = 0
        self.started = time.time()
        self.url: str | None = None
        self._changed = threading.Condition(self.lock)
        self._clients: OrderedDict[tuple[str, str], ClientState] = OrderedDict()
        self._clients_lock = ordered_lock("server.clients")
        self._hoods: dict[Any, Any] = {}
        self._closed = False
        self._stop = threading.Event()
        self._checkpoints = 0
        self._turns = TurnWriter(self.mem, lambda fn: self._run(fn, writes=True))
        self._timer = threading.Thread(target=self._checkpoint_loop, args=(checkpoint_seconds,),
                                       name="akasha-checkpoint", daemon=True)
        self._timer.start()
        self._fold_wake = threading.Event()
        self.mem.store.behind.fold_soon = self._fold_wake.set
        self._folder = threading.Thread(target=self._fold_loop, name="akasha-fold",
                                        daemon=True)
        self._folder.start()

    # -- lifecycle --------------------------------------------------------------------------
    def close(self) -> None:
        """Checkpoint and close the store (idempotent)."""
        self._stop.set()
        self._fold_wake.set()
        with self.lock:
            if self._closed:
                return
            self._closed = True
            self.mem.close()
            self._changed.notify_all()

    def warm(self) -> None:
        """Load what the first call would otherwise wait for — the model, the tokenizers,
        the engine's code paths — with a recall that logs nothing. A server runs it in a
        thread as it starts: it answers at once, and a call that comes before the warm-up
        is done waits for the model (not for each session: this happens once)."""
        try:
            with self.lock:
                if self._closed:
                    return
                if self.mem.store.mirror.nodes.alive.any():
                    self.mem.recall("warm up 预热", log=False).context(None)
                # and the extraction's part-of-speech tagger (jieba.posseg, ~250 ms to
                # load), under the lock: a first call waits for it, as for the model,
                # instead of sharing the GIL with it (outside, it made the first context
                # of a served session ~300 ms)
                self._prepare("warm up: 今天我们去公园散步了", None, time.time())
                if self.mem.settings.EXTRACT and self.mem.store.extractor is None:
                    # and the name resolution's pinyin tables: loaded by the first fold,
                    # in the fold's thread, they stalled every request meanwhile
                    from ..extract.normalize import load_pinyin
                    load_pinyin()
                if self.mem.settings.XLING_KINDS > 0:
                    # and WordNet's map of data.noun (~0.1 s), which the first English
                    # query with a noun (XLING_KINDS) would otherwise wait for
                    from ..text.wordnet import kinds
                    kinds("memory")
        except Exception:   # a warm-up is never worth a failed start
            log.exception("warming up %s failed (the first call will be slower)", self.path)

    def _checkpoint_loop(self, every: float) -> None:
        """Checkpoint every ``every`` seconds when the journal holds anything; in between,
        have the turns waiting for the graph written (:meth:`_fold_loop`) once no
        ``add_turn`` came for :data:`FOLD_IDLE` seconds."""
        due = time.monotonic() + every
        while not self._stop.wait(min(FOLD_IDLE, every)):
            now = time.monotonic()
            store = self.mem.store
            checkpoint = now >= due
            fold = bool(store.graph_behind) and now - self._turns.last_write >= FOLD_IDLE
            if not checkpoint:
                if fold:
                    self._fold_wake.set()
                continue
            due = now + every
            with self.lock:
                if self._closed:
                    return
                try:
                    if store.journal.pending:
                        self.mem.checkpoint()
                        self._checkpoints += 1
                except AkashaError as e:   # a full disk: the journal keeps every commit
                    log.warning("scheduled checkpoint of %s failed: %s", self.path, e)
                except Exception:   # anything else: said, and the loop goes on (a dead
                    # loop would leave the journal growing until close); the journal
                    # keeps what was not written, the next fold or checkpoint tries again
                    log.exception("scheduled checkpoint of %s failed", self.path)

    def _fold_loop(self) -> None:
        """Write the turns waiting for the graph (:meth:`Store.fold_graph
        <akasha_explorer.store.Store.fold_graph>`) when woken — by an ``add_turn`` that
        finds :data:`~akasha_explorer.store.store.FOLD_AFTER` of them waiting
        (:attr:`Store.fold_soon <akasha_explorer.store.Store.fold_soon>`), or by the idle
        timer — **without the request lock**: the fold holds only the graph's connection,
        and the requests meanwhile read the mirror and the journal, not Kuzu (issue 28: a
        32-turn fold on an ``add_turn`` was that call's 400–600 ms). LanceDB's compaction,
        when due, follows: its fragments merged here too, the old versions' files deleted
        under the lock (a request may be reading them)."""
        while True:
            self._fold_wake.wait()
            if self._stop.is_set():
                return
            self._fold_wake.clear()
            store = self.mem.store
            try:
                store.fold_graph(tidy=False)
                if store.tidy_due:
                    store.merge_fragments()
                    with self.lock:
                        if self._closed:
                            return
                        store.tidy()
            except AkashaError as e:   # a full disk: the journal keeps the turns
                log.warning("writing the waiting turns of %s failed: %s", self.path, e)
            except Exception:   # said; the next add_turn, fold or checkpoint tries again
                log.exception("writing the waiting turns of %s failed", self.path)

    def _run(self, fn: Callable[[], Any], *, writes: bool) -> Any:
        with phase("lock_wait"):
            self.lock.acquire()
        try:
            if self._closed:
                raise AkashaError(f"the server of {self.path} is shutting down; reconnect later")
            result = fn()
            if writes:
                self.version += 1
                self._changed.notify_all()
            return result
        finally:
            self.lock.release()

    def wait(self, since: int, timeout: float = 25.0) -> int:
        """Block until :attr:`version` is past ``since`` (or ``timeout`` seconds pass);
        returns the version."""
        with self.lock:
            self._changed.wait_for(lambda: self.version > since or self._closed,
                                   timeout=max(0.0, min(timeout, 120.0)))
            return self.version

    def info(self) -> dict[str, Any]:
        """What a client learns on connecting: the store, its settings, the version."""
        with self.lock:
            m = self.mem
            return {"path": str(self.path), "read_only": False, "version": self.version,
                    "settings": m.settings.to_dict(), "profile": m.settings.profile_name()[0],
                    "model": m.store.manifest.model, "dim": m.store.dim, "started": self.started,
                    "pid": os.getpid(), "url": self.url,
                    "journal_pending": m.store.journal.pending,
                    "checkpoints": self._checkpoints,
                    "torch_threads": _torch_threads(),
                    "embed_dtype": getattr(m.store.embedder, "dtype", None)}

    def state(self, caller: Caller) -> ClientState:
        """The state of ``caller``'s client (made on first use; the least recently seen of
        more than :data:`_CLIENTS` clients is dropped)."""
        key = (caller.principal, caller.client)
        with self._clients_lock:
            st = self._clients.get(key)
            if st is None:
                st = self._clients[key] = ClientState()
                while len(self._clients) > _CLIENTS:
                    self._clients.popitem(last=False)
            self._clients.move_to_end(key)
            return st

    # -- the notebook API ------------------------------------------------------------------
    def call(self, method: str, args: Sequence[Any] = (), kwargs: dict[str, Any] | None = None,
             caller: Caller | None = None) -> Any:
        """Call ``Memory.<method>`` (a dotted name for a namespace, e.g. ``review.approve``)
        if it is in :data:`SERVED`, its arguments checked (:mod:`.wire`);
        arguments and result are plain values (:mod:`.codec` decodes and encodes them
        around this call)."""
        caller = caller or Caller()
        st = self.state(caller)
        args = [self._swap(v, st, method) for v in args]
        kw = {k: self._swap(v, st, method) for k, v in (kwargs or {}).items()}
        if method.startswith("neighbourhood."):
            return self._hood_call(method.split(".", 1)[1], list(args), kw)
        entry = SERVED.get(method)
        if entry is None:
            raise InvalidInput(f"{method!r} cannot be called through the server; known: "
                               f"{', '.join(SERVED)}")
        special = {"export": self._export, "labels.load": self._load_labels,
                   "add_turn": self._api_add_turn}.get(method)
        if special is not None:
            return special(list(args), kw, caller)
        a, k = wire.bind(method, entry.fn, args, kw, principal=caller.principal)
        if method == "expand":
            k = self._expand_context(a, k, st)
        if method == "context" and k.get("tokenizer") is not None:
            raise InvalidInput("context: tokenizer cannot be sent over the server")

        def run() -> Any:
            target: Any = self.mem
            for part in method.split("."):
                target = getattr(target, part)
            return target(*a, **k)

        result = self._run(run, writes=entry.writes)
        if isinstance(result, RecallTrace):
            self._keep_trace(st, result)
        elif isinstance(result, ContextBlock):
            st.latest_block = result
        return result

    def _keep_trace(self, st: ClientState, trace: RecallTrace) -> str:
        ref = st.keep(st.traces, trace)
        trace.server_ref = ref     # travels with it (codec)
        st.latest_trace = trace
        return ref

    @staticmethod
    def _swap(value: Any, st: ClientState, method: str) -> Any:
        """A trace a client sent (a :class:`~.codec.TraceRef`) as the server's own copy;
        refused when this server did not make it for this client."""
        if not isinstance(value, TraceRef):
            return value
        own = st.traces.get(value.ref) if value.ref else None
        if own is None:
            raise InvalidInput(f"{method}: this recall was not made by this server for you "
                               f"(or is older than your last {_KEEP}); recall again and use "
                               "that trace")
        return own

    def _expand_context(self, a: list[Any], k: dict[str, Any], st: ClientState
                        ) -> dict[str, Any]:
        handle = a[0] if a else k.get("handle_or_node_id")
        if k.get("trace") is not None or (isinstance(handle, str) and
                                          self.mem.has_node(handle.strip())):
            return k
        latest = st.latest_block or st.latest_trace
        if latest is None:
            raise InvalidInput(f"expand {handle!r}: a handle names an item of your latest "
                               "context, and you have none on this server: call context "
                               "first, pass trace=, or give a node uid")
        return {**k, "trace": latest}

    def _export(self, args: list[Any], kw: dict[str, Any], caller: Caller) -> dict[str, Any]:
        """``export`` over the wire: made in a temporary folder on this machine, sent back
        as ``{"name", "folder", "files": {relative path: bytes}}``; nothing is left here."""
        if args or "path" in kw:
            raise InvalidInput("export: the server takes no path (files never go where a "
                               "caller names on the server's disk); RemoteMemory.export(path, "
                               "...) writes what comes back")
        _, k = wire.bind("export", _export_signature, [], kw, principal=caller.principal)
        fmt = k["format"]

        def run() -> dict[str, Any]:
            with tempfile.TemporaryDirectory(prefix="akasha-export-") as tmp:
                folder = fmt in ("parquet", "csv", "store")
                out = self.mem.export(Path(tmp) / ("export" if folder else f"export.{fmt}"),
                                      **k)
                paths = sorted(p for p in out.rglob("*") if p.is_file()) if out.is_dir() \
                    else [out]
                size = sum(p.stat().st_size for p in paths)
                if size > MAX_EXPORT_BYTES:
                    raise InvalidInput(f"export: {size:,} bytes is more than the server sends "
                                       f"({MAX_EXPORT_BYTES:,}); run `akasha export` on the "
                                       "server's machine")
                files = {str(p.relative_to(out)) if out.is_dir() else out.name: p.read_bytes()
                         for p in paths}
                return {"folder": out.is_dir(), "files": files}

        return self._run(run, writes=False)

    def _load_labels(self, args: list[Any], kw: dict[str, Any], caller: Caller) -> int:
        if (args and not isinstance(args[0], list)) or \
                not isinstance(kw.get("source", []), list):
            raise InvalidInput("labels.load: the server takes the labels themselves (a list "
                               "of {query, node, relevant}), never a path; "
                               "RemoteMemory.labels.load(path) reads a file here and sends them")
        a, _ = wire.bind("labels.load", _load_labels_signature, args, kw,
                         principal=caller.principal)
        labels = a[0] if a else kw["source"]
        if any("by" in item for item in labels):
            raise InvalidInput("labels.load: a label sent to the server carries no by (the "
                               "server records your principal)")
        return self._run(lambda: self.mem.labels.load(labels, by=caller.principal),
                         writes=True)

    def _api_add_turn(self, args: list[Any], kw: dict[str, Any], caller: Caller
                      ) -> tuple[str, RecallTrace | None]:
        a, k = wire.bind("add_turn", Memory.add_turn, args, kw, principal=caller.principal)
        node, used, _ = self.add_turn(caller, a[0], a[1], session=k["session"],
                                      ts=k.get("ts"), recall=k.get("recall"),
                                      reinforce=bool(k.get("reinforce", False)),
                                      turn_id=k.get("turn_id"),
                                      speakers=(k.get("user_speaker"),
                                                k.get("assistant_speaker")))
        return node, used

    def _hood_call(self, name: str, args: list[Any], kw: dict[str, Any]) -> Any:
        """One method of a :class:`~akasha_explorer.analysis.neighbourhood.Neighbourhood`
        (``now`` and ``communities`` in ``kw``), kept while nothing writes; ``infos`` is
        :meth:`Neighbourhood.info` of every live node at once (what a picture needs)."""
        from ..analysis.neighbourhood import Neighbourhood

        now, comm = kw.pop("now", None), kw.pop("communities", None)
        wire.bind("neighbourhood", _hood_signature, [], {"now": now, "communities": comm},
                  principal="local")
        if name != "infos":
            if name not in NEIGHBOURHOOD:
                raise InvalidInput(f"neighbourhood.{name} cannot be called through the server")
            args, kw = wire.bind(f"neighbourhood.{name}", getattr(Neighbourhood, name), args,
                                 kw, principal="local")

        def run() -> Any:
            key = (now, None if comm is None else tuple(sorted(comm.items())), self.version)
            hood = self._hoods.get(key)
            if hood is None:
                hood = self.mem.neighbourhood(now=now, communities=comm)
                self._hoods = {key: hood}          # one: a write makes every other stale
            if name == "infos":
                return {"now": hood.now, "infos": {u: hood.info(u) for u in hood.texts()}}
            return getattr(hood, name)(*args, **kw)

        return self._run(run, writes=False)

    # -- storing a turn (both channels) ----------------------------------------------------
    def add_turn(self, caller: Caller, user: str | None, assistant: str | None, *,
                 session: str, ts: float | None = None, recall: RecallTrace | None = None,
                 reinforce: bool = False, turn_id: str | None = None,
                 speakers: tuple[str | None, str | None] = (None, None)
                 ) -> tuple[str, RecallTrace | None, bool]:
        """Store one turn for ``caller`` (see the module docstring): checked whole first,
        embedded before the store is taken, written back with ``recall`` (the server's own
        trace) or a recall of ``user`` made now. Returns the node, the trace written back
        and whether this was a retry: a ``turn_id`` the session already holds (stored by
        this server or, before a restart, another) returns that node, no trace, True."""
        with phase("validate"):
            when = _check_turn(user, assistant, session, ts, turn_id, speakers)
        st = self.state(caller)
        if turn_id is not None and (session, turn_id) in st.turns:
            return st.turns[(session, turn_id)]["node"], None, True
        stamp = when if when is not None else time.time()
        self._prepare(user, assistant, stamp)
        node, used, retried = self._turns.write(PendingTurn(
            user, assistant, session, stamp, recall=recall, reinforce=reinforce,
            turn_id=turn_id, by=caller.principal, speakers=speakers))
        if turn_id is not None:
            st.keep(st.turns, {"node": node}, key=(session, turn_id))
        return node, used, retried

    def _prepare(self, user: str | None, assistant: str | None, when: float) -> None:
        """The slow, pure part of storing a turn, done before taking the store: its vectors
        and, with the default extractor, the part-of-speech tags of long texts."""
        self.mem.store.embeddings.prepare_turn(user, assistant, when=when)
        if self.mem.settings.EXTRACT and self.mem.store.extractor is None:
            from ..extract.rules import prepare
            with phase("extract"):
                prepare([t for t in (user, assistant) if t is not None])

    # -- the agent tools (MCP) --------------------------------------------------------------
    def _excerpt(self, uid: str, trace: Any, limit: int = 240) -> str:
        msgs = trace.messages.get(uid) or []
        text = " / ".join(f"{m.get('speaker') or m.get('role')}: {m.get('text') or ''}"
                          for m in msgs)
        return text if len(text) <= limit else text[: limit - 1] + "…"

    def tool_recall(self, caller: Caller, query: str, now: float | None = None,
                    session: str | None = None, limit: int = 10) -> dict[str, Any]:
        """Recall ``query``: the floor (what an agent sees first) and the activated items,
        each with node id, score, source and an excerpt; a dry run (logged). The returned
        ``recall_id`` can be passed to ``add_turn`` to write this recall back."""
        query = _text(query, "query")
        when = _time(now, "now")
        if session is not None:
            _text(session, "session", limit=256)
        wire.check_domain("limit", limit, "recall")
        st = self.state(caller)

        def run() -> dict[str, Any]:
            t = self.mem.recall(query, now=when, session=session)
            rid = self._keep_trace(st, t)
            floor = t.first_block()
            return {
                "recall_id": rid, "query": query, "now": t.now, "relevant": t.relevant,
                "floor": [{"node": u, "score": s, "source": src, "text": self._excerpt(u, t)}
                          for u, s, src in list(zip(floor.uids, floor.scores, floor.sources,
                                                    strict=True))[:limit]],
                "activated": [{"node": u, "score": s, "source": src}
                              for u, s, src in zip(t.activation.uids, t.activation.scores,
                                                   t.activation.sources, strict=True)]}

        return self._run(run, writes=True)

    def tool_context(self, caller: Caller, query: str, budget_tokens: int | None = None,
                     now: float | None = None, session: str | None = None,
                     tz: str | None = None) -> dict[str, Any]:
        """The context block for ``query`` (handles ``[n]``, verbatim text within the
        budget). ``context_id`` names it for ``expand``; ``recall_id`` for ``add_turn``."""
        query = _text(query, "query")
        when = _time(now, "now")
        if session is not None:
            _text(session, "session", limit=256)
        if tz is not None:
            _text(tz, "tz", limit=64)
        if budget_tokens is not None:
            wire.check_domain("budget_tokens", budget_tokens, "context")
        st = self.state(caller)

        def run() -> dict[str, Any]:
            with phase("recall"):
                trace = self.mem.recall(query, now=when, session=session)
            with phase("brief"):
                block = trace.context(budget_tokens, tz=tz)
            cid = st.keep(st.blocks, block)
            rid = self._keep_trace(st, trace)
            st.latest_block = block
            return {"context_id": cid, "recall_id": rid, "text": block.text,
                    "status": block.status, "tokens": block.tokens,
                    "handles": dict(block.handles)}

        return self._run(run, writes=True)

    def tool_add_turn(self, caller: Caller, user: str | None, assistant: str | None,
                      session: str, ts: float | None = None, recall_id: str | None = None,
                      reinforce: bool = False, turn_id: str | None = None,
                      user_speaker: str | None = None, assistant_speaker: str | None = None
                      ) -> dict[str, Any]:
        """Store one turn verbatim (``user`` and/or ``assistant``, under the speakers'
        names when given), then write back the recall it was answered with: ``recall_id``
        from ``recall``/``context``, or a recall of ``user`` made now (the live agent loop).
        ``turn_id`` makes a retry safe."""
        st = self.state(caller)
        trace = _kept(st.traces, recall_id, "recall", "recall again or leave recall_id out")
        node, used, retried = self.add_turn(caller, user, assistant, session=session, ts=ts,
                                            recall=trace, reinforce=reinforce,
                                            turn_id=turn_id,
                                            speakers=(user_speaker, assistant_speaker))
        if trace is not None and not retried:
            st.traces.pop(recall_id or "", None)
        return {"node": node, "session": session, "retried": retried,
                "written_back": list(used.activation.uids) if used is not None else []}

    def tool_expand(self, caller: Caller, handle: str, context_id: str | None = None,
                    around: int | None = None, tz: str | None = None) -> dict[str, Any]:
        """The verbatim turn behind ``handle`` (``[3]`` of a context block, or a node id)
        and its neighbours, sha256-checked. Without ``context_id`` a handle resolves
        against the caller's own latest context."""
        _text(handle, "handle", limit=512)
        if around is not None:
            wire.check_domain("around", around, "expand")
        if tz is not None:
            _text(tz, "tz", limit=64)
        st = self.state(caller)
        block: ContextBlock | RecallTrace | None = _kept(st.blocks, context_id, "context",
                                                         "build the context again")

        def run() -> dict[str, Any]:
            ctx = block
            if ctx is None and not self.mem.has_node(handle.strip()):
                if caller.stateless:
                    raise InvalidInput(f"expand {handle}: give the context_id of the context "
                                       "it came from (each request of this MCP protocol "
                                       "stands alone: there is no latest context of yours)")
                ctx = st.latest_block or st.latest_trace
                if ctx is None:
                    raise InvalidInput(f"expand {handle}: a handle names an item of a context "
                                       "block, and you have built none on this server: call "
                                       "context first (and pass its context_id), or give a "
                                       "node id")
            n = self.mem.settings.EXPAND_AROUND if around is None else around
            while True:   # fewer neighbours until the answer fits what a client reads
                x = self.mem.expand(handle, n, trace=ctx)
                text = x.text(tz)
                if len(text.encode()) <= MAX_ANSWER_BYTES or n == 0:
                    break
                n -= 1
            note = "" if n == (self.mem.settings.EXPAND_AROUND if around is None else around) \
                else f"[{n} neighbouring turn(s) each side: more would not fit one answer]"
            size = len(text.encode())
            if size > MAX_ANSWER_BYTES:
                keep = text.encode()[:MAX_ANSWER_BYTES].decode("utf-8", "ignore")
                note = (f"[cut after {len(keep):,} of {len(text):,} characters to fit one "
                        "answer; the stored text is whole: `akasha show` prints it]")
                text = keep
            return {"node": x.node, "session": x.session, "verified": x.verified,
                    "tampered": list(x.tampered), "missing": list(x.missing),
                    "around": n, "text": text + ("\n" + note if note else "")}

        return self._run(run, writes=False)

    def tool_forget(self, caller: Caller, confirm: bool, session: str | None = None,
                    node: str | None = None, anchor: str | None = None,
                    why: str | None = None) -> dict[str, Any]:
        """Forget a session, a node or an anchor from every file of the store (raw text,
        vectors, edges, mentions, logs naming it). Needs ``confirm=true``."""
        if confirm is not True:
            raise InvalidInput("forget removes the text for good: call it again with "
                               "confirm=true to do it")
        if sum(x is not None for x in (session, node, anchor)) != 1:
            raise InvalidInput("forget one thing: give exactly one of session, node, anchor")
        for name, v in (("session", session), ("node", node), ("anchor", anchor),
                        ("why", why)):
            if v is not None:
                _text(v, name, limit=2000)
        return self._run(lambda: self.mem.forget(session=session, node=node, anchor=anchor,
                                                 why=why, by=caller.principal), writes=True)

    def tool_review_list(self, caller: Caller, status: str | None = "pending",
                         kind: str | None = None, limit: int = 20) -> list[dict[str, Any]]:
        """Items waiting on the review queue (or of another status), oldest first."""
        wire.check_domain("limit", limit, "review_list")

        def run() -> list[dict[str, Any]]:
            items = self.mem.review.list(status=status, kind=kind, limit=int(limit))
            return [{"uid": i.uid, "kind": i.kind, "status": i.status, "detail": i.detail,
                     "confidence": i.confidence, "created_ts": i.created_ts} for i in items]

        return self._run(run, writes=False)

    def tool_review_decide(self, caller: Caller, item: str, approve: bool,
                           why: str | None = None) -> dict[str, Any]:
        """Approve or reject one review item; the decision is audited."""
        _text(item, "item", limit=256)
        if why is not None:
            _text(why, "why", limit=2000)
        fn = self.mem.review.approve if approve else self.mem.review.reject
        audit = self._run(lambda: fn(item, why=why, by=caller.principal), writes=True)
        return {"item": item, "decision": "approved" if approve else "rejected",
                "audit": audit}

    def tool_anchors(self, caller: Caller, search: str | None = None, kind: str | None = None,
                     limit: int = 50) -> list[dict[str, Any]]:
        """Anchors (people, places, things memories hang on) with aliases and mentions."""
        wire.check_domain("limit", limit, "anchors")
        if search is not None:
            _text(search, "search", limit=512, empty=True)
        return self._run(lambda: [a.to_dict() for a in self.mem.anchors(search, kind=kind)
                                  [: int(limit)]], writes=False)

    def tool_health(self, caller: Caller) -> dict[str, Any]:
        """Recall health from the query log: empty rate, scores, sources, latency, hubs."""
        return self._run(self.mem.health, writes=False)

    def tool_stats(self, caller: Caller) -> dict[str, Any]:
        """Counts and facts about the store; ``served_since`` and ``version`` of the
        server."""
        def run() -> dict[str, Any]:
            s = self.mem.stats()
            s["served_since"] = dt.datetime.fromtimestamp(self.started, dt.UTC).isoformat(
                timespec="seconds")
            s["version"] = self.version
            return s

        return self._run(run, writes=False)


def _torch_threads() -> int | None:
    """Torch's intra-op threads in this process (None before the model is loaded)."""
    torch = sys.modules.get("torch")
    return int(torch.get_num_threads()) if torch is not None else None


def _check_turn(user: str | None, assistant: str | None, session: str, ts: float | None,
                turn_id: str | None, speakers: tuple[str | None, str | None] = (None, None)
                ) -> float | None:
    """:meth:`MemoryService.add_turn`'s checks of its arguments; returns ``ts`` checked."""
    if user is None and assistant is None:
        raise InvalidInput("add_turn needs user or assistant text")
    if user is not None:
        _text(user, "user", limit=MAX_TURN_CHARS, empty=True)
    if assistant is not None:
        _text(assistant, "assistant", limit=MAX_TURN_CHARS, empty=True)
    _text(session, "session", limit=256)
    if turn_id is not None:
        _text(turn_id, "turn_id", limit=256)
    for name, who in zip(("user_speaker", "assistant_speaker"), speakers, strict=True):
        if who is not None:
            _text(who, name, limit=256)
    return _time(ts, "ts")


def _hood_signature(*, now: float | None = None,
                    communities: dict[str, int] | None = None) -> Any:
    """The projection a ``neighbourhood.<name>`` call is made on."""

