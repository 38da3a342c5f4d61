"""``akasha`` — the command line, a thin layer over :class:`~akasha_explorer.memory.Memory`.

Every error the package raises on purpose becomes one clear line on stderr and exit
status 1 (in one place: :class:`_Group`). ``python -m akasha_explorer`` runs the same.

The group is here; each family of commands is a module of this package (:mod:`.core`,
:mod:`.settings`, :mod:`.curate`, :mod:`.analysis`, :mod:`.brief`, :mod:`.doctor`,
:mod:`.bench`, :mod:`.serve`) with a ``COMMANDS`` list, and every command prints through
:mod:`.kit`. Nothing outside this package defines a command.
"""

from __future__ import annotations

import logging
from typing import Any

import click

from ..errors import AkashaError
from ..text.terminal import SafeFormatter, terminal_safe
from . import analysis, bench, brief, core, curate, doctor, serve, settings
from .core import DEMO_TOUR

__all__ = ["DEMO_TOUR", "cli", "main"]


class _Group(click.Group):
    """Turns every :class:`AkashaError` into ``click.ClickException`` (one line, exit 1)."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except AkashaError as e:  # messages may quote stored text: escaped like all output
            raise click.ClickException(terminal_safe(str(e))) from e


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("-v", "--verbose", count=True, help="More log output (-vv for debug).")
@click.version_option(package_name="akasha-explorer")
def cli(verbose: int) -> None:
    """akasha — see, debug and curate what a personal agent remembers."""
    level = logging.WARNING - 10 * min(verbose, 2)
    handler = logging.StreamHandler()  # log lines quote ids and paths: escaped like output
    handler.setFormatter(SafeFormatter("%(levelname)s %(name)s: %(message)s"))
    logging.basicConfig(level=level, handlers=[handler])


for _family in (core, settings, curate, analysis, brief, doctor, bench, serve):
    for _command in _family.COMMANDS:
        cli.add_command(_command)


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point."""
    cli.main(args=argv, prog_name="akasha")
