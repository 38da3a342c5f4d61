"""``akasha serve`` (registered by :mod:`akasha_explorer.cli`)."""

from __future__ import annotations

import contextlib

import click

from ..clikit import echo
from .http import DEFAULT_PORT, is_loopback

__all__ = ["COMMANDS"]


@click.command("serve")
@click.argument("store", type=click.Path(file_okay=False))
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to bind. Anything but loopback needs --token.")
@click.option("--port", default=DEFAULT_PORT, show_default=True, type=int, help="HTTP port.")
@click.option("--stdio", is_flag=True,
              help="Also answer MCP on stdin/stdout (an agent launches the server).")
@click.option("--no-http", is_flag=True, help="With --stdio: no HTTP port at all.")
@click.option("--token", envvar="AKASHA_TOKEN", default=None,
              help="Bearer token every HTTP request must carry (env AKASHA_TOKEN).")
@click.option("--checkpoint-seconds", default=60.0, show_default=True, type=float,
              help="Fold the journal into Kuzu this often when commits are pending.")
def serve_cmd(store: str, host: str, port: int, stdio: bool, no_http: bool, token: str | None,
              checkpoint_seconds: float) -> None:
    """Own STORE (creating it on first use) and serve it: MCP tools for agents over
    streamable HTTP at /mcp (and stdio with --stdio), and the Memory API for notebooks at
    /api (`ak.connect("http://127.0.0.1:8765")`), until interrupted. Notebooks never lock
    each other out of a served store."""
    from .http import serve

    if no_http and not stdio:
        raise click.UsageError("--no-http leaves nothing to serve without --stdio")
    if not stdio:
        where = f"http://{host}:{port}"
        echo(f"serving {store} at {where} (MCP at {where}/mcp, notebooks: "
             f"ak.connect({where!r})){'' if is_loopback(host) else ' — token required'}; "
             "Ctrl-C stops", err=True)
    with contextlib.suppress(KeyboardInterrupt):  # Ctrl-C: the store is closed on the way out
        serve(store, host=host, port=port, stdio=stdio, http=not no_http, token=token,
              checkpoint_seconds=checkpoint_seconds)
    if not stdio:
        echo(f"stopped serving {store} (checkpointed and closed)", err=True)


COMMANDS: list[click.Command] = [serve_cmd]
