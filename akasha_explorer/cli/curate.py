"""``akasha`` commands of the curate area, registered by :mod:`akasha_explorer.cli`:
``anchors``, ``review list|approve|reject``, ``forget``."""

from __future__ import annotations

import click

from .. import open as open_store
from ..errors import InvalidInput
from ..text.terminal import terminal_safe
from .kit import echo, echo_json

__all__ = ["COMMANDS"]

_STORE = click.argument("store", type=click.Path(exists=True, file_okay=False))


@click.command()
@_STORE
@click.option("--search", default=None, help="Only anchors whose name or an alias matches.")
@click.option("--kind", default=None, help="Only this kind (person, place, thing, ...).")
@click.option("--all", "show_all", is_flag=True, help="Also candidates, merged and rejected.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def anchors(store: str, search: str | None, kind: str | None, show_all: bool,
            as_json: bool) -> None:
    """List the anchors of STORE with their aliases and mention counts."""
    with open_store(store, read_only=True) as mem:
        rows = mem.anchors(search, kind=kind, status=None if show_all else "active")
    if as_json:
        echo_json([r.to_dict() for r in rows])
        return
    for r in rows:
        status = "" if r.status == "active" else f" [{r.status}]"
        echo(f"{r.uid}  {r.name}  ({r.kind}{status})  {r.mentions} mentions"
             f" in {r.nodes} nodes  aliases: {' / '.join(r.aliases) or '-'}")
    if not rows:
        echo("no anchors" + (f" matching {search!r}" if search else ""))


@click.group()
def review() -> None:
    """The review queue: list, approve, reject."""


@review.command("list")
@_STORE
@click.option("--kind", default=None,
              help="alias_merge, anchor, triple, injection (default: all kinds).")
@click.option("--status", default="pending", show_default=True,
              help="pending, approved, rejected, edited or 'all'.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def review_list(store: str, kind: str | None, status: str, as_json: bool) -> None:
    """List review items of STORE."""
    with open_store(store, read_only=True) as mem:
        items = mem.review.list(status=None if status == "all" else status, kind=kind)
    if as_json:
        echo_json([it.__dict__ for it in items])
        return
    for it in items:
        echo(f"{it.uid}  {it.kind}  {it.status}  conf {it.confidence:.2f}  {it.detail}")
    if not items:
        echo("the review queue is empty")


def _decide(verb: str):
    @review.command(verb, help=f"{verb.capitalize()} review item ITEM_ID of STORE.")
    @_STORE
    @click.argument("item_id")
    @click.option("--why", default=None, help="Reason, kept in the audit log.")
    @click.option("--by", default="user", show_default=True, help="Who decides.")
    def cmd(store: str, item_id: str, why: str | None, by: str) -> None:
        with open_store(store) as mem:
            audit = getattr(mem.review, verb)(item_id, why=why, by=by)
        echo(f"{verb}d {item_id} (audit {audit})")

    return cmd


_decide("approve")
_decide("reject")


@click.command()
@_STORE
@click.option("--node", default=None, help="Forget one node (turn).")
@click.option("--session", default=None, help="Forget a whole session.")
@click.option("--anchor", default=None, help="Forget an anchor with its aliases and facts.")
@click.option("--why", default=None, help="Reason, kept in the audit log.")
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
def forget(store: str, node: str | None, session: str | None, anchor: str | None,
           why: str | None, yes: bool) -> None:
    """Remove a node, session or anchor and everything it owns from STORE, for good."""
    given = [(k, v) for k, v in (("node", node), ("session", session), ("anchor", anchor)) if v]
    if len(given) != 1:
        raise InvalidInput("give exactly one of --node, --session, --anchor")
    if not yes:
        click.confirm(terminal_safe(f"forget {given[0][0]} {given[0][1]} for good?"), abort=True)
    with open_store(store) as mem:
        counts = mem.forget(**dict(given), why=why)
    echo("forgot " + ", ".join(f"{k}={v}" for k, v in counts.items()))


COMMANDS: list[click.Command] = [anchors, review, forget]
