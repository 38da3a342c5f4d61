"""``akasha serve`` (registered by :mod:`akasha_explorer.cli`)."""

from __future__ import annotations

import contextlib
import os

import click

from ..server.http import DEFAULT_PORT, is_loopback
from .kit import echo

__all__ = ["COMMANDS"]


@click.command("serve")
@click.argument("store", type=click.Path(file_okay=False))
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to bind. Anything but loopback needs --token.")
@click.option("--port", default=DEFAULT_PORT, show_default=True, type=int, help="HTTP port.")
@click.option("--stdio", is_flag=True,
              help="Also answer MCP on stdin/stdout (an agent launches the server).")
@click.option("--no-http", is_flag=True, help="With --stdio: no HTTP port at all.")
@click.option("--token", "tokens", multiple=True,
              help="Bearer token every HTTP request must carry: SECRET, or NAME=SECRET (the "
                   "name is the audit log's actor); repeat for several holders. Default: "
                   "env AKASHA_TOKEN.")
@click.option("--allow-host", "allow_hosts", multiple=True, metavar="NAME",
              help="Also answer requests whose Host is NAME (loopback names always pass; "
                   "e.g. the name a reverse proxy forwards). Repeatable.")
@click.option("--allow-origin", "allow_origins", multiple=True, metavar="ORIGIN",
              help="Let browser pages from ORIGIN (e.g. http://127.0.0.1:8888) call the "
                   "server; every other page is refused. Repeatable.")
@click.option("--checkpoint-seconds", default=60.0, show_default=True, type=float,
              help="Fold the journal into Kuzu this often when commits are pending.")
@click.option("--torch-threads", type=click.IntRange(min=1), default=None,
              help="Threads of the embedding model. Default: env AKASHA_TORCH_THREADS, else "
                   "1 (a server shares its cores; measured: about as fast on a quiet machine, "
                   "much faster beside a busy core).")
def serve_cmd(store: str, host: str, port: int, stdio: bool, no_http: bool,
              tokens: tuple[str, ...], allow_hosts: tuple[str, ...],
              allow_origins: tuple[str, ...], checkpoint_seconds: float,
              torch_threads: int | None) -> None:
    """Own STORE (creating it on first use) and serve it: MCP tools for agents over
    streamable HTTP at /mcp (and stdio with --stdio), and the Memory API for notebooks at
    /api (`ak.connect("http://127.0.0.1:8765")`), until interrupted. Notebooks never lock
    each other out of a served store. Web pages cannot reach it (SECURITY.md)."""
    from ..embed import SERVE_TORCH_THREADS, TORCH_THREADS_ENV
    from ..server.http import parse_tokens, serve
    from ..store.heap import limit_arenas

    if no_http and not stdio:
        raise click.UsageError("--no-http leaves nothing to serve without --stdio")
    limit_arenas()   # a long-running process: less memory kept free per thread
    if torch_threads is not None:   # read when the model loads, in this process
        os.environ[TORCH_THREADS_ENV] = str(torch_threads)
    else:
        os.environ.setdefault(TORCH_THREADS_ENV, str(SERVE_TORCH_THREADS))
    given = parse_tokens(list(tokens) or os.environ.get("AKASHA_TOKEN") or None)

    def announce(url: str) -> None:
        if not stdio:
            echo(f"serving {store} at {url} (MCP at {url}/mcp, notebooks: "
                 f"ak.connect({url!r})){'' if is_loopback(host) else ' — token required'}; "
                 "Ctrl-C stops", err=True)

    with contextlib.suppress(KeyboardInterrupt):  # Ctrl-C: the store is closed on the way out
        serve(store, host=host, port=port, stdio=stdio, http=not no_http, token=given,
              allow_hosts=allow_hosts, allow_origins=allow_origins,
              checkpoint_seconds=checkpoint_seconds, announce=announce)
    if not stdio:
        echo(f"stopped serving {store} (checkpointed and closed)", err=True)


COMMANDS: list[click.Command] = [serve_cmd]
