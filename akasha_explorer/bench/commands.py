"""``akasha`` subcommands of this area, registered by :mod:`akasha_explorer.cli`."""

from __future__ import annotations

import click

__all__ = ["COMMANDS"]

COMMANDS: list[click.Command] = []
