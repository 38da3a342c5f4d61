"""``akasha`` commands over one memory: ``ingest``, ``stats``, ``show``, ``recall``,
``explain``, and the demo's ``demo`` and ``lab``."""

from __future__ import annotations

import datetime as dt
import os
import shutil
import signal
import subprocess
import sys
import time
from importlib import resources
from pathlib import Path
from typing import Any

import click

from .. import open as open_store
from ..config import DEFAULT_PROFILE, Settings
from ..curate.labels import demo_labels_path
from ..errors import AkashaError
from ..ingest.importers import FORMATS, load
from .kit import echo, echo_doc, echo_json, parse_now

__all__ = ["COMMANDS", "DEMO_TOUR"]

DEFAULT_DEMO_STORE = "demo_store"


@click.command()
@click.argument("store", type=click.Path(file_okay=False))
@click.argument("file", type=click.Path(exists=True, dir_okay=False))
@click.option("--format", "fmt", default="auto", show_default=True,
              type=click.Choice(["auto", *FORMATS]),
              help="Input format; auto sniffs it from the file.")
@click.option("--replay", is_flag=True, help="Grow co-activation edges as a live agent would.")
@click.option("--session", default=None, help="Session id for a plain message list.")
@click.option("--allow-forgotten", is_flag=True,
              help="Store messages that `akasha forget` removed earlier (skipped otherwise).")
def ingest(store: str, file: str, fmt: str, replay: bool, session: str | None,
           allow_forgotten: bool) -> None:
    """Ingest FILE into STORE (created on first use). Re-ingesting is a no-op; messages
    forgotten earlier are skipped and reported."""
    imported = load(file, format=fmt, session=session)  # refuse bad input before touching STORE
    with open_store(store) as mem:
        report = mem.ingest(imported, replay=replay, allow_forgotten=allow_forgotten)
        echo(report.summary())
        for s in report.skipped[:20]:
            echo(f"  skipped {s.where}: {s.reason}")
        if len(report.skipped) > 20:
            echo(f"  ... and {len(report.skipped) - 20} more skipped")


@click.command()
@click.argument("store", type=click.Path(exists=True, file_okay=False))
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def stats(store: str, as_json: bool) -> None:
    """Counts and facts about STORE."""
    with open_store(store, read_only=True) as mem:
        s = mem.stats()
    if as_json:
        echo_json(s)
        return
    width = max(len(k) for k in s)
    for k, v in s.items():
        if isinstance(v, dict):
            v = ", ".join(f"{a}={b}" for a, b in v.items()) or "-"
        echo(f"{k:<{width}}  {v}")


@click.command()
@click.argument("store", type=click.Path(exists=True, file_okay=False))
@click.argument("node_id")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def show(store: str, node_id: str, as_json: bool) -> None:
    """Print the verbatim messages of NODE_ID."""
    with open_store(store, read_only=True) as mem:
        msgs = mem.messages(node_id)
        state = mem.node(node_id)
    if as_json:
        echo_json({"node": state.__dict__, "messages": [
            {**m.__dict__, "verified": m.verified} for m in msgs]})
        return
    echo(f"node {node_id}  session {state.session}  sigma {state.sigma:.3f}  "
               f"strength {state.strength:.3f}  resource {state.resource:.3f}  "
               f"recalled {state.recall_count}x")
    for m in msgs:
        when = dt.datetime.fromtimestamp(m.ts, dt.UTC).isoformat(timespec="seconds")
        who = m.speaker or m.role
        flags = f"  [{', '.join(m.flags)}]" if m.flags else ""
        echo(f"\n{when}  {who} ({m.role}){flags}  sha256 ok={m.verified}")
        echo(m.text)


def _preview(mem: Any, uid: str, width: int = 60) -> str:
    texts = [m.text for m in mem.messages(uid, verify=False)]
    text = " / ".join(" ".join(t.split()) for t in texts)
    return text if len(text) <= width else text[: width - 1] + "…"


def _print_group(mem: Any, title: str, items: Any) -> None:
    echo(f"\n{title} ({len(items)})")
    if not len(items):
        echo("  (nothing)")
    for k, u in enumerate(items.uids):
        echo(f"  {k + 1:>2}. {items.scores[k]:7.3f}  {items.sources[k]:<10} {u:<28} "
                   f"{_preview(mem, u)}")


@click.command()
@click.argument("store", type=click.Path(exists=True, file_okay=False))
@click.argument("query")
@click.option("--now", default="now", show_default=True,
              help="ISO 8601, epoch seconds, 'now' or 'last' (the store's newest message).")
@click.option("--commit", "commit_to", default=None, metavar="NODE_ID",
              help="Write the recall back with NODE_ID as the current turn.")
@click.option("--json", "as_json", is_flag=True, help="The whole trace as JSON.")
def recall(store: str, query: str, now: str, commit_to: str | None, as_json: bool) -> None:
    """Recall QUERY: the floor (what an agent sees first), the activation set and the
    ripple items with scores/sources.

    A dry run unless --commit NODE_ID is given.
    """
    with open_store(store, read_only=commit_to is None) as mem:
        trace = mem.recall(query, now=parse_now(now, mem))
        if commit_to is not None:
            mem.commit(trace, commit_to)
        if as_json:
            echo_doc(trace.to_json())
            return
        when = dt.datetime.fromtimestamp(trace.now, dt.UTC).isoformat(timespec="seconds")
        c = trace.counts
        echo(f"recall {query!r} at {when}: {c['seeds']} seeds, micrograph {c['pool']}, "
                   f"{c['graph']} graph candidates"
                   + ("" if trace.relevant else "  [no relevant seed: fallback only]"))
        profile = mem.settings.profile_name()[0]
        floor = ("fused lexical + dense relevance" if mem.settings.HYBRID
                 else "dense_items, cos_msg")
        _print_group(mem, f"floor — what an agent sees first ({floor}; profile {profile})",
                     trace.first_block())
        _print_group(mem, "activation_items — written back on commit", trace.activation)
        _print_group(mem, "ripple_items — background", trace.ripple)
        if commit_to is not None:
            wb = trace.writeback
            echo(f"\ncommitted with current node {commit_to}: "
                       f"{len(wb.nodes.uids) if wb else 0} nodes, "
                       f"{len(wb.edges.kind) if wb else 0} edges strengthened, "
                       f"{len(wb.depressed.src) if wb else 0} depressed")


@click.command()
@click.argument("store", type=click.Path(exists=True, file_okay=False))
@click.argument("query")
@click.argument("node_id")
@click.option("--now", default="now", show_default=True,
              help="ISO 8601, epoch seconds, 'now' or 'last'.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def explain(store: str, query: str, node_id: str, now: str, as_json: bool) -> None:
    """Every term of NODE_ID's score for QUERY, or why it was not a candidate."""
    with open_store(store, read_only=True) as mem:
        mem.node(node_id)  # NotFound early, with a clear message
        trace = mem.recall(query, now=parse_now(now, mem), log=False)
        info = trace.explain(node_id)
        preview = _preview(mem, node_id, 100)
    if as_json:
        echo_json(info)
        return
    echo(f"{node_id}: {preview}")
    if not info.get("candidate"):
        echo(f"not a candidate: {info.get('reason')}")
    width = max(len(k) for k in info)
    for k, v in info.items():
        if v is None or (isinstance(v, float) and v != v):
            continue
        echo(f"  {k:<{width}}  {v:.6g}" if isinstance(v, float) else f"  {k:<{width}}  {v}")


DEMO_TOUR = ("和阿岚打杀戮尖塔，A10 过了吗", "手指换药疼不疼", "what did I say about the finger?",
             "湿度计换成 SONOFF 了吗", "老周周末有空吗", "Slay the Spire A10 with Lan")
"""Example queries ``akasha demo`` logs into a new demo store (its recurring threads)."""
DEMO_TIME_ZONE = "+08:00"
"""Where the demo's people live (every timestamp of the demo conversations is +08:00)."""


@click.command()
@click.argument("store", default=DEFAULT_DEMO_STORE, type=click.Path(file_okay=False))
@click.option("--no-replay", is_flag=True, help="Ingest without growing edges (faster).")
def demo(store: str, no_replay: bool) -> None:
    """Build STORE (default ./demo_store) from the bundled demo conversations.

    A new demo store also gets a few example recalls in its query log (dry runs, session
    ``demo-tour``), so health, the query picker and the logs have something to show."""
    data = resources.files("akasha_explorer").joinpath("data/demo_conversations.jsonl")
    new = not (Path(store) / "akasha.json").exists()
    settings = Settings(TIME_ZONE=DEMO_TIME_ZONE) if new else None
    with resources.as_file(data) as path, open_store(store, settings) as mem:
        profile = mem.settings.profile_name()[0]
        if profile != DEFAULT_PROFILE:  # a demo store an older version made: show today's engine
            mem.migrate(DEFAULT_PROFILE)
            echo(f"demo store migrated from profile {profile} to {DEFAULT_PROFILE}")
        report = mem.ingest(path, replay=not no_replay)
        echo(report.summary())
        if not mem.labels():
            n = mem.labels.load(demo_labels_path(), by="demo")
            echo(f"loaded {n} labels of the demo's labelled queries (`akasha eval` scores them)")
        if report.messages_added:
            now = mem.last_ts() + 3600.0
            for k, q in enumerate(DEMO_TOUR):
                mem.recall(q, now=now + 60.0 * k, session="demo-tour")
            echo(f"logged {len(DEMO_TOUR)} example recalls (dry runs, session demo-tour)")
        s = mem.stats()
    echo(f"demo memory at {Path(store).resolve()}: {s['sessions']} sessions, "
               f"{s['messages']} messages, {s['nodes']} nodes, {s['edges']} co-activation "
               f"edges, {s['review_pending']} review items pending")


@click.command()
@click.argument("store", default=DEFAULT_DEMO_STORE, type=click.Path(file_okay=False))
@click.option("--notebooks", default="notebooks", show_default=True,
              type=click.Path(file_okay=False), help="Folder JupyterLab opens.")
@click.option("--port", default=None, type=int, help="Port (default: JupyterLab picks).")
def lab(store: str, notebooks: str, port: int | None) -> None:
    """Open JupyterLab on the notebooks with STORE (built from the demo if missing), served
    by a memory server this command starts (`akasha serve`), so every notebook shares the
    one store and none locks another out; the server stops with JupyterLab."""
    from ..server.client import served_at

    if not (Path(store) / "akasha.json").exists():
        click.get_current_context().invoke(demo, store=store)
    url = served_at(store)
    server = None
    if url is None:
        url, server = _start_server(store)
    jupyter = shutil.which("jupyter", path=str(Path(sys.executable).parent)) or "jupyter"
    env = {**os.environ, "AKASHA_STORE": str(Path(store).resolve()), "AKASHA_URL": url}
    cmd = [jupyter, "lab", f"--notebook-dir={Path(notebooks).resolve()}"]
    if port:
        cmd.append(f"--port={port}")
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        cmd.append("--allow-root")  # containers and CI machines often run as root
    echo(f"AKASHA_STORE={env['AKASHA_STORE']} served at AKASHA_URL={url}; starting: "
         f"{' '.join(cmd)}")
    try:
        code = subprocess.call(cmd, env=env)
    finally:
        if server is not None:
            server.send_signal(signal.SIGINT)   # the server checkpoints and closes the store
            try:
                server.wait(timeout=60)
            except subprocess.TimeoutExpired:
                server.kill()
    raise SystemExit(code)


def _start_server(store: str) -> tuple[str, subprocess.Popen[bytes]]:
    """Start ``akasha serve STORE`` on 127.0.0.1 (port 8765, or a free one) and wait until it
    answers; returns its URL and process."""
    import socket

    from ..server.client import connect
    from ..server.http import DEFAULT_PORT

    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", DEFAULT_PORT))
        except OSError:
            sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    akasha = shutil.which("akasha", path=str(Path(sys.executable).parent)) or "akasha"
    proc = subprocess.Popen([akasha, "serve", store, "--port", str(port)])
    url = f"http://127.0.0.1:{port}"
    end = time.time() + 120
    while True:
        try:
            connect(url, timeout=2)
            return url, proc
        except AkashaError as e:
            if proc.poll() is not None or time.time() > end:
                proc.kill()
                raise click.ClickException(f"could not start the memory server for {store}: "
                                           f"{e}") from None
            time.sleep(0.3)


COMMANDS: list[click.Command] = [ingest, stats, show, recall, explain, demo, lab]
