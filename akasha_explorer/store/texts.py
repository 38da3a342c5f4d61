"""What the store keeps of its stored text between calls (``store.stored``): every message's
verbatim text and sha256 (read once, for a re-import's duplicate check, a redaction and
the explorer), and per session the seq its next message gets and its nodes by the caller's
``turn_id`` (``add_turn``'s retry key) — read from LanceDB once and extended by each ingest,
so an ``add_turn`` reads no table.

Thread-safety: the request path's (the caller holds the store: a server's request lock).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from typing import Any, Protocol

import numpy as np
import pyarrow as pa

from .._timing import phase
from ..graphdb import chains
from ..text.tokenize import normalize
from ..vectors import VectorDB
from ..vectors import queries as vq
from .mirror import Mirror

__all__ = ["StoredText"]


class _TextStore(Protocol):
    """What :class:`StoredText` reads of its store."""

    mirror: Mirror
    vectors: VectorDB

    def has_node(self, uid: str) -> bool: ...


class StoredText:
    """The caches of one store's text (see the module docstring)."""

    def __init__(self, store: _TextStore) -> None:
        self._store = store
        self._hashes: dict[str, str] | None = None
        self._texts: dict[str, str] | None = None
        self._tails: dict[str, tuple[int, dict[str, str]]] = {}
        """Per session read so far: the next seq and the nodes by turn id, ever stored
        (:meth:`tails` hands out a view of the live ones)."""

    # -- texts and hashes --------------------------------------------------------------------
    def hashes(self) -> dict[str, str]:
        """Message uid -> sha256 of every stored message (cached; a torn ingest's rows, to be
        replaced, left out)."""
        if self._hashes is None:
            s = self._store
            t = vq.messages(s.vectors, ["uid", "sha256"]).to_pydict()
            self._hashes = dict(zip(t["uid"], t["sha256"], strict=True))
            for u in s.mirror.orphan_messages:  # a torn ingest: rows to be replaced
                self._hashes.pop(u, None)
        return self._hashes

    def texts(self) -> dict[str, str]:
        """Message uid -> verbatim text of every stored message (cached; a torn ingest's
        rows left out)."""
        if self._texts is None:
            s = self._store
            t = vq.messages(s.vectors, ["uid", "text"]).to_pydict()
            orphans = set(s.mirror.orphan_messages)
            self._texts = {u: x for u, x in zip(t["uid"], t["text"], strict=True)
                           if u not in orphans}
        return self._texts

    def text_hashes(self) -> dict[str, str]:
        """Normalised text -> first message uid (near-duplicate links)."""
        out: dict[str, str] = {}
        for uid, text in self.texts().items():
            out.setdefault(normalize(" ".join(text.split())), uid)
        return out

    def forget(self, msg_uids: Collection[str] | None = None) -> None:
        """Drop ``msg_uids`` from the text and hash caches (None: drop both caches whole, to
        be read again on first use); the sessions' tails are read again either way."""
        self._tails.clear()
        if msg_uids is None:
            self._hashes = None
            self._texts = None
            return
        for u in msg_uids:
            for cache in (self._texts, self._hashes):
                if cache is not None:
                    cache.pop(u, None)

    def added(self, messages: pa.Table) -> None:
        """Stored messages (an ingest batch) join the caches already read."""
        cols = messages.select(["uid", "session", "seq", "node", "ext_id", "sha256", "text"]
                               ).to_pydict()
        self._extend_tails(cols)
        if self._hashes is not None:
            self._hashes.update(zip(cols["uid"], cols["sha256"], strict=True))
        if self._texts is not None:
            self._texts.update(zip(cols["uid"], cols["text"], strict=True))

    # -- session tails -----------------------------------------------------------------------
    def tails(self, sessions: Sequence[str]) -> dict[str, tuple[int, Mapping[str, str]]]:
        """For each of ``sessions``: the seq its next message gets (:meth:`next_seq`) and
        its live nodes by the ``turn_id`` their first message carries
        (:meth:`turn_with_id`). Read from LanceDB once per session (many sessions in one
        read), then kept and extended by each ingest. The live nodes are a view checked on
        lookup (:class:`_LiveIds`), not a filtered copy: filtering a session of 5,000 turns
        took 2 ms, on every ``add_turn``."""
        todo = sorted(set(sessions) - set(self._tails))
        if todo:
            with phase("lookup"):
                rows = vq.messages_of_sessions(self._store.vectors, todo,
                                               ["session", "seq", "node", "ext_id"]).to_pydict()
            for sid in todo:
                self._tails[sid] = (self._forgotten_tail(sid), {})
            self._extend_tails(rows)
        out: dict[str, tuple[int, Mapping[str, str]]] = {}
        for sid in sessions:
            seq, ids = self._tails[sid]
            out[sid] = (seq, _LiveIds(ids, self._store.has_node))
        return out

    def next_seq(self, session: str) -> int:
        """The seq a new message of ``session`` gets (one past the highest stored)."""
        return self.tails([session])[session][0]

    def turn_with_id(self, session: str, turn_id: str) -> str | None:
        """The live node of ``session`` whose first message carries the caller's id
        ``turn_id`` (``add_turn``'s retry key), or None."""
        return self.tails([session])[session][1].get(turn_id)

    def _forgotten_tail(self, session: str) -> int:
        """One past the highest seq of ``session``'s messages the mirror still names though
        they were forgotten in this process: their ids are not given out again while it
        runs (the mirror keeps a forgotten node's row; a new node of the same id would
        collide with it). After a reopen a forgotten id may be stored again (its tombstone
        is lifted with it)."""
        n = self._store.mirror.nodes
        code = n.session_code.get(session)
        if code is None:
            return 0
        rows = np.flatnonzero((n.session[: n.n] == code) & ~n.alive[: n.n])
        seqs = [chains.first_seq(n.msg_uid[j]) for i in rows.tolist()
                for j in range(int(n.first_msg[i]), int(n.first_msg[i]) + int(n.n_msg[i]))]
        return max(seqs) + 1 if seqs else 0

    def _extend_tails(self, rows: dict[str, list[Any]]) -> None:
        """Add stored messages (``session``, ``seq``, ``node``, ``ext_id`` columns) to the
        kept tails of the sessions :meth:`tails` has read."""
        for s, q, node, ext in zip(rows["session"], rows["seq"], rows["node"], rows["ext_id"],
                                   strict=True):
            got = self._tails.get(s)
            if got is None:
                continue
            seq, ids = got
            if ext is not None and ext not in ids:
                ids[ext] = str(node)
            self._tails[s] = (max(seq, int(q) + 1), ids)

    def drop_tails(self) -> None:
        """The sessions' tails are read again on next use (a torn ingest's rows deleted)."""
        self._tails.clear()


class _LiveIds(Mapping[str, str]):
    """A session's nodes by turn id (:meth:`StoredText.tails`), the live ones only: a
    lookup checks its node, iterating checks them all."""

    def __init__(self, ids: dict[str, str], live: Callable[[str], bool]) -> None:
        self._ids = ids
        self._live = live

    def __getitem__(self, turn_id: str) -> str:
        node = self._ids[turn_id]
        if not self._live(node):
            raise KeyError(turn_id)
        return node

    def __iter__(self) -> Iterator[str]:
        return (k for k, node in list(self._ids.items()) if self._live(node))

    def __len__(self) -> int:
        return sum(1 for _ in self)
