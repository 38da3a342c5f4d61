"""Frozen value types shared by every layer.

``RawMessage`` is what importers produce (validated, not yet stored); ``Message`` is a
stored message as read back (with uid, sha256, node and flags, and whether its bytes still
match the recorded hash); ``NodeState`` is the dynamic state of a node (SPEC §3).

The rows ``Memory`` lists are values too, one class each: :class:`SessionInfo`
(``sessions``), :class:`Anchor` (``anchors``), :class:`AnchorDetail` with its
:class:`Alias`, :class:`Mention` and :class:`Fact` rows (``anchor``),
:class:`MentionedAnchor` (``anchors_of``), :class:`Triple` (``triples``),
:class:`Episode` (``episodes``), :class:`AuditEntry` (``audit``) and :class:`Label`
(``labels``). Read them by attribute; ``to_dict()`` gives the plain dict (the CLI's
``--json``), and ``pandas.DataFrame(rows)`` has one column per field.

>>> m = RawMessage(session="s1", seq=0, ts=1.0, role="user", text="hi")
>>> m.sha256[:12]
'8f434346648f'
>>> Label("l-1", "阿岚的生日", "s:0", True, 5.0, "user").to_dict()["query"]
'阿岚的生日'
"""

from __future__ import annotations

import dataclasses
import hashlib
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "ANCHOR_KINDS",
    "ANCHOR_STATUSES",
    "REVIEW_KINDS",
    "REVIEW_STATUSES",
    "ROLES",
    "TRIPLE_STATUSES",
    "Alias",
    "Anchor",
    "AnchorDetail",
    "AuditEntry",
    "Episode",
    "Fact",
    "IngestReport",
    "Label",
    "Mention",
    "MentionedAnchor",
    "Message",
    "NodeState",
    "RawMessage",
    "SessionInfo",
    "Skipped",
    "Triple",
    "check_choice",
    "sha256_text",
]

ROLES = ("user", "assistant")

ANCHOR_KINDS = ("person", "account", "place", "org", "project", "game", "device", "thing")
"""What an anchor can be, strongest first: extraction gives a cluster of surfaces the first
kind any of them has."""

ANCHOR_STATUSES = ("active", "candidate", "merged", "rejected")
"""What an anchor can be: in use, waiting for more mentions or a review, merged into
another, or rejected by a person."""

TRIPLE_STATUSES = ("approved", "pending", "rejected", "superseded", "active")
"""What a triple can be (``active``: edited by a person)."""

REVIEW_STATUSES = ("pending", "approved", "rejected", "edited")
"""What a review item can be."""

REVIEW_KINDS = ("alias_merge", "anchor", "triple", "injection", "suggested_link")
"""What a review item can be about."""


def check_choice(value: str | None, choices: tuple[str, ...], what: str) -> str | None:
    """``value`` when it is one of ``choices`` (or None: no filter); otherwise
    :class:`~akasha_explorer.errors.InvalidInput` naming them.

    >>> check_choice("pending", REVIEW_STATUSES, "review status")
    'pending'
    >>> check_choice("bogus", REVIEW_STATUSES, "review status")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    akasha_explorer.errors.InvalidInput: unknown review status 'bogus'; use one of pending, ...
    """
    if value is not None and value not in choices:
        from .errors import InvalidInput
        raise InvalidInput(f"unknown {what} {value!r}; use one of {', '.join(choices)}")
    return value


def sha256_text(text: str) -> str:
    """Hex sha256 of the UTF-8 bytes of ``text`` (the integrity check of every message)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class RawMessage:
    """One validated input message. ``text`` is kept byte-for-byte.

    ``ext_id`` is the source's own id (LoCoMo ``dia_id``, ChatGPT message id);
    ``meta`` holds source extras (e.g. an image caption) as JSON-ready values.
    """

    session: str
    seq: int
    ts: float
    role: str
    text: str
    speaker: str | None = None
    ext_id: str | None = None
    source: str = ""
    meta: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    @property
    def sha256(self) -> str:
        """Hex sha256 of the text's UTF-8 bytes."""
        return sha256_text(self.text)

    @property
    def uid(self) -> str:
        """Stable id: ``session:seq``."""
        return f"{self.session}:{self.seq}"


@dataclass(frozen=True)
class Message:
    """A stored message as read back from LanceDB."""

    uid: str
    node: str
    session: str
    seq: int
    ts: float
    role: str
    speaker: str | None
    text: str
    sha256: str
    flags: tuple[str, ...]
    source: str
    ext_id: str | None
    meta: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    @property
    def verified(self) -> bool:
        """True when the text's bytes still hash to the recorded sha256."""
        return sha256_text(self.text) == self.sha256


@dataclass(frozen=True)
class NodeState:
    """Dynamic state of a node (SPEC §3), plus its salience and role."""

    uid: str
    session: str
    ts: float
    sigma: float
    strength: float
    strength_ts: float
    resource: float
    resource_ts: float
    recall_count: int
    assistant_only: bool


@dataclass(frozen=True)
class Skipped:
    """A record an importer or the pipeline did not ingest, and why."""

    where: str
    reason: str


@dataclass
class IngestReport:
    """What one ingest did: counts, skipped records, flags raised, timings (seconds)."""

    source: str
    messages_in: int = 0
    messages_added: int = 0
    duplicates: int = 0
    nodes_added: int = 0
    sessions_added: int = 0
    replayed: int = 0
    flags: dict[str, int] = field(default_factory=dict)
    skipped: list[Skipped] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)

    def summary(self) -> str:
        """One human line."""
        flags = ", ".join(f"{k}={v}" for k, v in sorted(self.flags.items())) or "none"
        return (f"{self.source}: {self.messages_added} messages added "
                f"({self.duplicates} already stored), {self.nodes_added} nodes, "
                f"{self.sessions_added} new sessions, {self.replayed} replayed; "
                f"flags: {flags}; skipped: {len(self.skipped)}")


# -- rows Memory lists ---------------------------------------------------------------------------
class _Row:
    """What every listed row can do besides its fields."""

    def to_dict(self) -> dict[str, Any]:
        """The row as a plain dict, fields in order (nested rows as dicts, tuples kept)."""
        return dataclasses.asdict(self)  # type: ignore[call-overload]  # each subclass is a dataclass


@dataclass(frozen=True)
class SessionInfo(_Row):
    """One session (a conversation): its id, where it came from, the time of its first and
    last message and how many nodes it has."""

    session: str
    source: str
    first_ts: float
    last_ts: float
    nodes: int


@dataclass(frozen=True)
class Anchor(_Row):
    """An anchor as listed: what it is, how often it is mentioned (``mentions``) in how
    many nodes (``nodes``), and its alias surfaces (oldest first)."""

    uid: str
    name: str
    kind: str
    status: str
    mentions: int
    nodes: int
    aliases: tuple[str, ...] = ()


@dataclass(frozen=True)
class Alias(_Row):
    """One alias of an anchor: the surface as written and its normalised form."""

    uid: str
    surface: str
    norm: str


@dataclass(frozen=True)
class Mention(_Row):
    """Where an anchor is named: ``text[span_start:span_end]`` of message ``msg`` of node
    ``node`` is ``surface``."""

    node: str
    msg: str
    span_start: int
    span_end: int
    surface: str


@dataclass(frozen=True)
class Fact(_Row):
    """A triple as one anchor takes part in it: its ``role`` (subject or object), the
    names of both ends, and its provenance."""

    uid: str
    role: str
    subject: str | None
    predicate: str
    object: str | None
    literal: str | None
    status: str
    slot: str | None
    confidence: float
    valid_from: float
    superseded_by: str | None
    node: str
    quote: str


@dataclass(frozen=True)
class AnchorDetail(_Row):
    """One anchor with everything about it: aliases, mentions (in node order) and the
    triples it is subject or object of (oldest first)."""

    uid: str
    name: str
    kind: str
    status: str
    created_ts: float
    note: str | None
    aliases: tuple[Alias, ...] = ()
    mentions: tuple[Mention, ...] = ()
    triples: tuple[Fact, ...] = ()


@dataclass(frozen=True)
class MentionedAnchor(_Row):
    """An anchor a node mentions, at one mention: the anchor's uid, name and kind, the
    surface and where it starts."""

    uid: str
    name: str
    kind: str
    surface: str
    span_start: int


@dataclass(frozen=True)
class Triple(_Row):
    """A fact: subject, predicate and object (an anchor, or a ``literal``), its status and
    confidence, when it holds from, what superseded it, and the quote it was read from
    (``node``, ``span_start``:``span_end``)."""

    uid: str
    subject_uid: str
    subject: str
    predicate: str
    object_uid: str | None
    object: str | None
    literal: str | None
    slot: str | None
    status: str
    confidence: float
    valid_from: float
    superseded_by: str | None
    node: str
    span_start: int
    span_end: int
    quote: str


@dataclass(frozen=True)
class Episode(_Row):
    """A group of nodes with a kind and a label (a session gap, a community…), its time
    range and its nodes."""

    uid: str
    kind: str
    label: str
    session: str
    start_ts: float
    end_ts: float
    nodes: tuple[str, ...] = ()


@dataclass(frozen=True)
class AuditEntry(_Row):
    """One entry of the audit log: who (``actor``) did what (``action``) to what
    (``target``), when and why, whether it was undone, and the ``ops`` that did it (the
    inverse of which an undo applies)."""

    uid: str
    ts: float
    actor: str
    action: str
    target: str
    why: str | None
    undone: bool
    ops: tuple[dict[str, Any], ...] = field(default=(), hash=False)


@dataclass(frozen=True)
class Label(_Row):
    """A labelled query: whether node ``node`` should come up for ``query``
    (``relevant``), when and by whom it was said."""

    uid: str
    query: str
    node: str
    relevant: bool
    ts: float
    by: str
