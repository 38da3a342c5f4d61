"""``akasha settings`` and ``akasha migrate``: the settings, their ranges, and switching a
store's profile."""

from __future__ import annotations

from typing import Any

import click

from .. import open as open_store
from ..config import PROFILES, Settings, parse_setting, setting_docs, setting_problem
from ..errors import InvalidSettings
from .kit import echo, echo_json

__all__ = ["COMMANDS"]


@click.command("settings")
@click.argument("store", required=False, type=click.Path(exists=True, file_okay=False))
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def settings_cmd(store: str | None, as_json: bool) -> None:
    """Every setting with its default (profile v2), its v1 value where it differs, the
    values it admits (its range), SPEC section and help; with STORE, the store's profile and
    its own values too."""
    docs = setting_docs()
    own: Settings | None = None
    if store is not None:
        with open_store(store, read_only=True) as mem:
            own = mem.settings
        profile, diff = own.profile_name()
        for d in docs:
            d["store"] = getattr(own, d["name"])
    if as_json:
        echo_json({"profile": profile, "differs_from_profile": diff, "settings": docs}
                  if own is not None else docs)
        return
    if own is not None:
        extra = ", ".join(f"{k}={v!r}" for k, v in diff.items()) or "nothing"
        echo(f"store {store}: profile {profile} (set apart from it: {extra}); "
             f"`akasha migrate STORE --profile v1|v2 [NAME=VALUE]...` switches it\n")
    for d in docs:
        ours = " [ours]" if d["ours"] else ""
        v1 = f"   v1: {d['v1']!r}" if d["v1"] != d["default"] else ""
        here = f"   store: {d['store']!r}" if own is not None else ""
        echo(f"{d['name']} = {d['default']!r}{v1}{here}  ({d['section']}{ours})  "
             f"range {d['range']}\n    {d['help']}")


@click.command("migrate")
@click.argument("store", type=click.Path(exists=True, file_okay=False))
@click.argument("changes", nargs=-1, metavar="[NAME=VALUE]...")
@click.option("--profile", type=click.Choice(list(PROFILES)), default=None,
              help="The settings profile to switch the store to (default: the store's own).")
def migrate_cmd(store: str, changes: tuple[str, ...], profile: str | None) -> None:
    """Switch STORE to a settings profile (v2: the improved engine; v1: the V1-faithful
    one), with NAME=VALUE settings on top. What the store set apart from its profile (model,
    index options…) is kept; the lexical index is rebuilt when its term rules change; edges,
    node state and the raw messages stay as they are. A value outside its range (`akasha
    settings`) is refused before the store is opened; nothing is written."""
    values = _setting_args(changes)  # refuse bad values before touching STORE
    with open_store(store) as mem:
        before = mem.settings.profile_name()[0]
        profile = profile or before
        diff = mem.migrate(profile, **values)
    if not diff:
        echo(f"store {store} already uses profile {profile} with these settings; nothing "
             "changed")
        return
    echo(f"store {store}: profile {before} -> {profile}")
    for k, (a, b) in diff.items():
        echo(f"  {k}: {a!r} -> {b!r}")


def _setting_args(changes: tuple[str, ...]) -> dict[str, Any]:
    """``NAME=VALUE`` arguments as typed settings, each checked against its range."""
    values: dict[str, Any] = {}
    for arg in changes:
        name, eq, text = arg.partition("=")
        if not eq:
            raise click.UsageError(f"{arg!r} is not NAME=VALUE (e.g. EDGE_LR=0.12)")
        value = parse_setting(name.strip(), text)
        problem = setting_problem(name.strip(), value)
        if problem:
            raise InvalidSettings(problem)
        values[name.strip()] = value
    return values


COMMANDS: list[click.Command] = [settings_cmd, migrate_cmd]
