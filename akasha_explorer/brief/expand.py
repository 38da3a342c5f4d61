"""Verbatim expand: a node's messages and its neighbouring turns, hash-checked (issue 9).

A context block hands the agent pointers; :func:`expand` turns one back into the stored
text — the node's own messages plus up to ``around`` turns before and after it in its
session (session order: time, then ingest order — the order of the NEXT chain) — and
checks every message's sha256. ``Expansion.verified`` is True only when every returned
message still hashes to its recorded sha256 and none is missing; a message that fails is
listed in ``tampered`` and its text is never put into :meth:`Expansion.text` or
:meth:`Expansion.to_dict` (nor is an injection-flagged message's: what an agent reads
must not carry it). The raw :class:`~akasha_explorer.model.Message` objects stay on
``Expansion.messages`` for a program or a person to inspect.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import InvalidInput
from ..model import Message
from ..store.store import message_of
from ..vectors import queries as vq
from .context import parse_tz

if TYPE_CHECKING:
    from ..store.store import Store

__all__ = ["Expansion", "expand_node", "withheld_reason"]

_COLUMNS = ["uid", "node", "session", "seq", "ts", "role", "speaker", "text", "sha256", "flags",
            "source", "ext_id", "meta"]


def withheld_reason(m: Message) -> str:
    """Why ``m``'s text must not reach an agent ('' when it may).

    >>> m = Message("s:0", "s:0", "s", 0, 1.0, "user", None, "hi", "bad", (), "", None)
    >>> withheld_reason(m)
    'fails its sha256 check'
    """
    if not m.verified:
        return "fails its sha256 check"
    if "injection" in m.flags:
        return "flagged as injection"
    return ""


@dataclass(frozen=True)
class Expansion:
    """What :meth:`Memory.expand <akasha_explorer.memory.Memory.expand>` returns."""

    node: str
    session: str
    turns: tuple[str, ...]
    """Node uids of the window, in session order (the target among them)."""
    messages: tuple[Message, ...]
    """Every message of the window, in session order, as stored."""
    verified: bool
    """True only if every message matches its sha256 and none is missing."""
    tampered: tuple[str, ...] = ()
    """Uids of messages whose text no longer matches its sha256."""
    missing: tuple[str, ...] = ()
    """Uids of messages the node lists but LanceDB no longer holds."""
    handle: str | None = None
    source: str | None = None
    """Where the handle came from (e.g. the query of the context block), if one was used."""

    def text(self, tz: str | dt.tzinfo | None = None) -> str:
        """The window as lines for an agent: ``>`` marks the node's own messages; withheld
        texts (tampered, injection-flagged) are replaced by a marker.

        ``tz`` sets how times are shown (default UTC).
        """
        zone = parse_tz(tz)
        name = f"{self.handle} = node {self.node}" if self.handle else f"node {self.node}"
        via = f" (from {self.source})" if self.source else ""
        check = ("sha256 verified" if self.verified else
                 "NOT VERIFIED: " + "; ".join(
                     [f"{u} fails its sha256 check" for u in self.tampered]
                     + [f"{u} is missing" for u in self.missing]))
        lines = [f"expand {name}{via} · session {self.session} · {len(self.turns)} turns · "
                 f"{check}"]
        for m in self.messages:
            mark = ">" if m.node == self.node else " "
            when = dt.datetime.fromtimestamp(m.ts, zone).strftime("%Y-%m-%d %H:%M")
            why = withheld_reason(m)
            body = f"[withheld: {why}]" if why else m.text.replace("\n", "\n    ")
            lines.append(f"{mark} {when} {m.speaker or m.role}: {body}")
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict; withheld messages carry ``withheld`` instead of ``text``."""
        msgs = []
        for m in self.messages:
            why = withheld_reason(m)
            d: dict[str, Any] = {"uid": m.uid, "node": m.node, "seq": m.seq, "ts": m.ts,
                                 "role": m.role, "speaker": m.speaker,
                                 "target": m.node == self.node, "verified": m.verified,
                                 "flags": list(m.flags)}
            d.update({"withheld": why} if why else {"text": m.text})
            msgs.append(d)
        return {"node": self.node, "handle": self.handle, "source": self.source,
                "session": self.session, "turns": list(self.turns), "verified": self.verified,
                "tampered": list(self.tampered), "missing": list(self.missing),
                "messages": msgs}


def session_window(store: Store, row: int, around: int) -> list[int]:
    """Rows of up to ``around`` alive turns before and after ``row`` in its session."""
    n = store.mirror.nodes
    same = np.flatnonzero((n.session == n.session[row]) & n.alive)
    order = same[np.lexsort((same, n.ts[same]))]
    pos = int(np.flatnonzero(order == row)[0])
    return [int(r) for r in order[max(0, pos - around): pos + around + 1]]


def expand_node(store: Store, node: str, around: int, *, handle: str | None = None,
                source: str | None = None) -> Expansion:
    """Expand ``node`` with ``around`` turns each side (see the module docstring)."""
    if not isinstance(around, int | np.integer) or isinstance(around, bool) or around < 0:
        raise InvalidInput(f"around must be a whole number >= 0, got {around!r}")
    cap = store.settings.EXPAND_MAX_AROUND
    if around > cap:
        raise InvalidInput(f"around={around} is more than EXPAND_MAX_AROUND={cap}; ask for "
                           "fewer turns, or expand a neighbouring turn next")
    row = store.row(node)
    n = store.mirror.nodes
    rows = session_window(store, row, int(around))
    session = n.sessions[int(n.session[row])]
    wanted: list[str] = []
    for r in rows:
        a, k = int(n.first_msg[r]), int(n.n_msg[r])
        wanted += [u for j, u in enumerate(n.msg_uid[a:a + k]) if n.msg_alive[a + j]]
    table = vq.messages_of_session(store.vectors, session, _COLUMNS).to_pylist()
    by_uid = {r["uid"]: r for r in table}
    messages = tuple(message_of(by_uid[u]) for u in wanted if u in by_uid)
    missing = tuple(u for u in wanted if u not in by_uid)
    tampered = tuple(m.uid for m in messages if not m.verified)
    return Expansion(node=node, session=session, turns=tuple(n.uid[r] for r in rows),
                     messages=messages, verified=not tampered and not missing,
                     tampered=tampered, missing=missing, handle=handle, source=source)
