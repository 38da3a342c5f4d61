"""``akasha`` commands of the brief area, registered by :mod:`akasha_explorer.cli`:
``context``, ``expand`` and ``health``."""

from __future__ import annotations

import click

from .. import open as open_store
from ..brief.context import STYLES
from ..brief.health import format_health
from .kit import echo, echo_json, parse_now

__all__ = ["COMMANDS"]

_TZ_HELP = "Time zone of shown dates: UTC (default) or an offset like +08:00."


@click.command("context")
@click.argument("store", type=click.Path(exists=True, file_okay=False))
@click.argument("query")
@click.option("--budget", type=click.IntRange(min=1), default=None,
              help="Token budget (default: the store's CONTEXT_BUDGET).")
@click.option("--style", type=click.Choice(STYLES), default="brief", show_default=True,
              help="brief: one line per item; json: machine-readable; cards: one block each.")
@click.option("--now", default=None, help="Recall time: ISO 8601, epoch seconds, 'now' or "
              "'last' (the newest message). Default: the wall clock.")
@click.option("--session", default=None, help="Current session id (recorded in the trace).")
@click.option("--tz", default=None, help=_TZ_HELP)
def context_cmd(store: str, query: str, budget: int | None, style: str, now: str | None,
                session: str | None, tz: str | None) -> None:
    """Recall QUERY in STORE and print the context block an agent's prompt receives.

    Items start with a handle [n]; `akasha expand STORE [n]` prints that turn verbatim.
    The recall is a dry run (no write-back); it is logged for `akasha health`.
    """
    with open_store(store) as mem:
        block = mem.context(query, budget_tokens=budget, style=style, now=parse_now(now, mem),
                            session=session, tz=tz)
    echo(block.text)
    if block.over_budget:
        echo(f"(over budget: {block.tokens} tokens for a budget of {block.budget}; the "
                   "top items keep their pointers and atoms)", err=True)


@click.command("expand")
@click.argument("store", type=click.Path(exists=True, file_okay=False))
@click.argument("handle")
@click.option("--around", type=click.IntRange(min=0), default=None,
              help="Neighbouring turns each side (default: the store's EXPAND_AROUND).")
@click.option("--tz", default=None, help=_TZ_HELP)
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def expand_cmd(store: str, handle: str, around: int | None, tz: str | None,
               as_json: bool) -> None:
    """Print the verbatim turn behind HANDLE ([n] from the last `akasha context` on STORE,
    or a node uid) with its neighbouring turns, sha256-checked. Exit status 2 when a
    message fails its check."""
    with open_store(store, read_only=True) as mem:
        exp = mem.expand(handle, around)
    if as_json:
        echo_json(exp.to_dict())
    else:
        echo(exp.text(tz))
    if not exp.verified:
        raise SystemExit(2)


@click.command("health")
@click.argument("store", type=click.Path(exists=True, file_okay=False))
@click.option("--window", type=float, default=None,
              help="Window width in hours (default: the store's HEALTH_WINDOW).")
@click.option("--windows", type=click.IntRange(min=1), default=14, show_default=True,
              help="How many of the latest windows to show.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def health_cmd(store: str, window: float | None, windows: int, as_json: bool) -> None:
    """Recall health of STORE from its query log: empty-activation rate, score trends,
    source mix, latency percentiles, edge growth, top hubs by fan."""
    with open_store(store, read_only=True) as mem:
        h = mem.health(window=window * 3600.0 if window else None, windows=windows)
    if as_json:
        echo_json(h)
    else:
        echo(format_health(h))


COMMANDS: list[click.Command] = [context_cmd, expand_cmd, health_cmd]
