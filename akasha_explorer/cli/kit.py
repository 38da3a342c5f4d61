"""Helpers shared by every ``akasha`` command module (kept apart from the group in
:mod:`akasha_explorer.cli`, which imports the command modules)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import click

from ..text.terminal import json_safe, terminal_safe
from ..text.timewords import parse_time

if TYPE_CHECKING:
    from ..memory import Memory

__all__ = ["echo", "echo_doc", "echo_json", "parse_now"]


def parse_now(value: str | None, mem: Memory | None = None) -> float | None:
    """``--now``: ISO 8601, epoch seconds, ``now`` (wall clock) or ``last`` (the store's
    newest message time). ``None`` means the wall clock
    (:func:`~akasha_explorer.text.timewords.parse_time`).

    >>> parse_now("2026-09-03T21:14:05+08:00")
    1788441245.0
    >>> parse_now("1788441245")
    1788441245.0
    """
    return parse_time(value, None if mem is None else mem.last_ts)


def echo(text: Any = "", *, err: bool = False, nl: bool = True) -> None:
    """Print one line (or block) of command output — the only way ``akasha`` commands
    print: terminal control characters in it (stored text may hold them) are escaped,
    see :mod:`akasha_explorer.text.terminal`."""
    click.echo(terminal_safe(str(text)), err=err, nl=nl)


def echo_doc(doc: str) -> None:
    """Print a JSON document made elsewhere (e.g. ``trace.to_json()``), its control and
    bidirectional characters as JSON escapes: the output decodes to the same values."""
    click.echo(json_safe(doc))


def echo_json(obj: Any) -> None:
    """Print ``obj`` as indented JSON (non-ASCII kept, unknown types via str; control and
    bidirectional characters as ``\\u`` escapes)."""
    echo_doc(json.dumps(obj, ensure_ascii=False, indent=2, default=str))
