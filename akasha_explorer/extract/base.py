"""Value types of extraction (SPEC §6) and the :class:`Extractor` protocol.

An extractor reads verbatim messages and proposes *candidates*: mentions (a surface form at
a character span, with a kind guess and a confidence) and triples (subject, predicate from
:data:`PREDICATES`, object, with the verbatim quote and its span). It never writes anything
and never sees the store: resolving surfaces to anchors, deciding what waits for review and
writing to Kuzu is :mod:`akasha_explorer.extract.pipeline`'s job. The default is the
offline, rule-based :class:`~akasha_explorer.extract.rules.RuleExtractor`; an LLM extractor
only has to return the same candidates.

>>> m = MessageIn(uid="s:0", node="s:0", session="s", ts=1.0, role="user", speaker="Ann",
...               text="I'm the Defect")
>>> SELF in Ref(self_=True).key()
True
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

__all__ = ["PREDICATES", "SELF", "Extraction", "Extractor", "MentionCandidate",
           "MessageIn", "Ref", "TripleCandidate"]

PREDICATES = ("is_a", "has_attribute", "likes", "dislikes", "plays", "uses", "owns",
              "works_on", "works_with", "friend_of", "family_of", "lives_in", "visited",
              "decided", "prefers", "has_state", "part_of", "related_to", "has_goal",
              "located_in")
"""The closed predicate vocabulary (SPEC §6 plus ``has_goal`` and ``located_in``)."""

FUNCTIONAL = frozenset({"lives_in", "has_goal", "has_state", "located_in"})
"""Predicates with one current value per (subject, slot): a new value supersedes the old."""

SELF = "@self"
"""Key of a reference to the message's own speaker ("I", "我")."""


@dataclass(frozen=True)
class MessageIn:
    """One stored message handed to an extractor (text verbatim)."""

    uid: str
    node: str
    session: str
    ts: float
    role: str
    speaker: str | None
    text: str
    flags: tuple[str, ...] = ()


@dataclass(frozen=True)
class MentionCandidate:
    """A surface form at ``text[start:end]`` that may name an anchor."""

    start: int
    end: int
    surface: str
    kind: str
    confidence: float
    source: str
    """Which rule found it: ``handle``, ``quoted``, ``pos``, ``honorific``, ``latin``,
    ``object`` (a triple's object phrase), ``alias`` (a known alias)."""


@dataclass(frozen=True)
class Ref:
    """A triple argument: the speaker, a surface in the message, or a literal."""

    self_: bool = False
    surface: str | None = None
    start: int = -1
    end: int = -1
    literal: str | None = None
    kind: str = "thing"

    def key(self) -> str:
        return SELF if self.self_ else (self.surface or self.literal or "")


@dataclass(frozen=True)
class TripleCandidate:
    """(subject, predicate, object) read from ``text[start:end]`` (the verbatim quote)."""

    subject: Ref
    predicate: str
    object: Ref
    start: int
    end: int
    confidence: float
    slot: str = ""
    """What the value is *of* ("湿度计" for "I use the Aqara 湿度计"): a new value for the
    same subject, predicate and slot supersedes the old one when ``change`` is set or the
    predicate is functional."""
    change: bool = False
    """The text says the fact changed ("换成了", "switched to")."""


@dataclass
class Extraction:
    """What an extractor proposes for one message."""

    message: MessageIn
    mentions: list[MentionCandidate] = field(default_factory=list)
    triples: list[TripleCandidate] = field(default_factory=list)


@runtime_checkable
class Extractor(Protocol):
    """Anything that turns messages into candidates (rule-based, an LLM, ...)."""

    name: str

    def extract(self, messages: Sequence[MessageIn]) -> list[Extraction]:
        """One :class:`Extraction` per message, in order."""
        ...
