"""Frozen value types shared by every layer.

``RawMessage`` is what importers produce (validated, not yet stored); ``Message`` is a
stored message as read back (with uid, sha256, node and flags, and whether its bytes still
match the recorded hash); ``NodeState`` is the dynamic state of a node (SPEC §3).

>>> m = RawMessage(session="s1", seq=0, ts=1.0, role="user", text="hi")
>>> m.sha256[:12]
'8f434346648f'
"""

from __future__ import annotations

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
    "IngestReport",
    "Message",
    "NodeState",
    "RawMessage",
    "Skipped",
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
