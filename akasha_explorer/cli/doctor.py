"""``akasha doctor`` (registered by :mod:`akasha_explorer.cli`): the checks and repairs of
:mod:`akasha_explorer.doctor`, and half-made store folders (:mod:`akasha_explorer.store.folder`)."""

from __future__ import annotations

from pathlib import Path

import click

from .. import open as open_store
from ..errors import StoreError
from ..store import folder
from .kit import echo, echo_json

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
    when an error (not a mere leftover of a crash) remains. A half-made store — a creation
    or import that was killed before it finished — is reported; --repair removes it.
    """
    path = folder.store_path(store)
    found = folder.kind(path)
    if found == "half-made":
        _half_made(path, repair, as_json)
        return
    if found != "store":  # doctor never makes a store
        raise StoreError(folder.describe(path))
    with open_store(path, read_only=not repair) as mem:
        report = mem.doctor(repair=repair)
    if as_json:
        echo_json(report.to_dict())
    else:
        echo(report.summary())
    if not report.ok:
        raise SystemExit(1)


def _half_made(path: Path, repair: bool, as_json: bool) -> None:
    """doctor on a folder an interrupted creation or import left (see store.folder)."""
    if not repair:
        raise StoreError(folder.describe(path))
    gone = folder.remove_half_made(path)
    if as_json:
        echo_json({"path": str(path), "ok": True, "clean": True, "half_made": True,
                   "repairs": [f"removed {name}" for name in gone]})
        return
    echo(f"{path}: a half-made store — its creation (an ingest into a new store or an "
               "import) was interrupted, so nothing was stored in it\nrepaired:\n  - removed "
               f"{', '.join(gone) or 'nothing'}\nthe folder is empty now: ingest or import "
               "into it to make a store there")


COMMANDS: list[click.Command] = [doctor_cmd]
