"""``akasha`` subcommands of this area, registered by :mod:`akasha_explorer.cli`:
``doctor``."""

from __future__ import annotations

import click

from .. import open as open_store
from ..clikit import echo_json

__all__ = ["COMMANDS"]


@click.command("doctor")
@click.argument("store", type=click.Path(exists=True, file_okay=False))
@click.option("--repair", is_flag=True,
              help="Fix what a crash can leave (opens the store for writing) and say what "
                   "was done.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def doctor_cmd(store: str, repair: bool, as_json: bool) -> None:
    """Check that STORE's LanceDB, Kuzu, journal and mirror agree.

    Without --repair the store is opened read-only and nothing is changed. Exit status 1
    when an error (not a mere leftover of a crash) remains.
    """
    with open_store(store, read_only=not repair) as mem:
        report = mem.doctor(repair=repair)
    if as_json:
        echo_json(report.to_dict())
    else:
        click.echo(report.summary())
    if not report.ok:
        raise SystemExit(1)


COMMANDS: list[click.Command] = [doctor_cmd]
