"""What a served memory answers, declared where the methods are.

``@reads`` / ``@writes`` mark a method of :class:`~akasha_explorer.memory.Memory` (or of a
desk it hands out: ``mem.review``, ``mem.anchors``, ``mem.labels``) as callable through
``akasha serve``; ``@namespace(Desk)`` under ``@property`` says that a property hands out
a desk whose marked methods are served under ``"<property>.<method>"``. :func:`served`
reads the marks back into the table the server dispatches on — there is no second list
to keep in step with the methods.

>>> class Desk:
...     @reads
...     def list(self) -> list[str]: return []
>>> class Thing:
...     @reads
...     def stats(self) -> dict[str, int]: return {}
...     @writes
...     def forget(self) -> None: ...
...     @property
...     @namespace(Desk)
...     def things(self) -> Desk: return Desk()
>>> {name: s.kind for name, s in served(Thing).items()}
{'forget': 'write', 'stats': 'read', 'things.list': 'read'}
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

__all__ = ["Served", "namespace", "reads", "served", "writes"]

F = TypeVar("F", bound=Callable[..., Any])

_MARK = "__akasha_served__"
_DESK = "__akasha_desk__"


@dataclass(frozen=True)
class Served:
    """One served method: its dotted name, whether it writes, the class that defines it
    and the function itself (what the server checks arguments against)."""

    name: str
    kind: Literal["read", "write"]
    owner: type
    fn: Callable[..., Any]

    @property
    def writes(self) -> bool:
        """Whether the call changes the store (the server runs it as the writer)."""
        return self.kind == "write"


def reads(fn: F) -> F:
    """Serve ``fn``; it changes nothing in the store (a recall's query-log row aside)."""
    setattr(fn, _MARK, "read")
    return fn


def writes(fn: F) -> F:
    """Serve ``fn``; it writes to the store."""
    setattr(fn, _MARK, "write")
    return fn


def namespace(desk: type) -> Callable[[F], F]:
    """Under ``@property``: the property hands out a ``desk``, whose served methods are
    served as ``"<property>.<method>"``."""
    def mark(fn: F) -> F:
        setattr(fn, _DESK, desk)
        return fn
    return mark


def served(cls: type, prefix: str = "") -> dict[str, Served]:
    """Every served method of ``cls`` and of the desks its namespaces hand out, by dotted
    name, sorted."""
    out: dict[str, Served] = {}
    for klass in reversed(cls.__mro__):
        for name, attr in vars(klass).items():
            if isinstance(attr, staticmethod | classmethod):
                attr = attr.__func__
            if isinstance(attr, property) and attr.fget is not None:
                desk = getattr(attr.fget, _DESK, None)
                if desk is not None:
                    out.update(served(desk, f"{prefix}{name}."))
                continue
            kind = getattr(attr, _MARK, None)
            if kind is not None:
                out[prefix + name] = Served(prefix + name, kind, klass, attr)
    return dict(sorted(out.items()))
