"""``akasha bench …`` — benchmarks that print numbers (never timed unit tests)."""

from __future__ import annotations

import shlex
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from ..bench.madial import MADIAL_METHODS
from ..bench.recall import RANK_METHODS
from .kit import echo

__all__ = ["COMMANDS"]


@click.group()
def bench() -> None:
    """Benchmarks: recall quality on LoCoMo and MADial, engine speed, scale, serving."""


def _methods(value: str, known: tuple[str, ...]) -> list[str]:
    methods = [m.strip() for m in value.split(",") if m.strip()]
    unknown = sorted(set(methods) - set(known))
    if unknown:
        raise click.BadParameter(f"unknown method(s) {', '.join(unknown)}; known: "
                                 f"{', '.join(known)}", param_hint="--methods")
    return methods


def _report(result: dict[str, object], out: str) -> None:
    from ..bench.report import write_reports

    command = "akasha " + " ".join(shlex.quote(a) for a in sys.argv[1:])
    for path in write_reports(result, out, command=command):
        echo(f"wrote {path}")
    echo(Path(out).with_suffix(".md").read_text("utf-8"))


_PROFILE = click.option("--profile", type=click.Choice(["v2", "v1"]), default="v2",
                        show_default=True, help="Settings profile of the stores (v1: the "
                        "V1-faithful engine).")
_NO_ABLATIONS = click.option("--no-ablations", is_flag=True,
                             help="Skip the ablation stores and runs.")


def _report_to(default: str) -> Callable[..., Any]:
    """``--out``: where a quality benchmark writes its JSON (``default``)."""
    return click.option("--out", default=default, show_default=True,
                        type=click.Path(dir_okay=False),
                        help="JSON output; .md and .png beside it.")


@bench.command()
@click.option("--data", default="../shared/data/locomo-dev.json", show_default=True,
              type=click.Path(exists=True, dir_okay=False), help="A LoCoMo-format JSON file.")
@click.option("--conversations", type=int, default=None, help="Only the first N conversations.")
@click.option("--methods", default=",".join(RANK_METHODS), show_default=True,
              help="Comma-separated methods.")
@_PROFILE
@_NO_ABLATIONS
@_report_to("benchmarks/results/locomo-dev.json")
def locomo(data: str, conversations: int | None, methods: str, profile: str,
           no_ablations: bool, out: str) -> None:
    """Evidence recall on LoCoMo: the context an agent receives, Akasha's ranking, dense,
    BM25, RRF and PPR."""
    from ..bench.locomo import run_locomo

    _report(run_locomo(data, conversations=conversations, methods=_methods(methods, RANK_METHODS),
                       ablations=not no_ablations, profile=profile), out)


@bench.command()
@click.option("--data", default="../shared/data/madial-zh-dev", show_default=True,
              type=click.Path(exists=True, file_okay=False),
              help="A MADial-Bench-zh folder (memory and dialogue JSON-lines files).")
@click.option("--methods", default=",".join(MADIAL_METHODS), show_default=True,
              help="Comma-separated methods.")
@_PROFILE
@_NO_ABLATIONS
@_report_to("benchmarks/results/madial-zh-dev.json")
def madial(data: str, methods: str, profile: str, no_ablations: bool, out: str) -> None:
    """Memory recall on MADial-Bench-zh (Chinese): one store per user, query = the
    dialogue before the test turn."""
    from ..bench.madial import run_madial

    _report(run_madial(data, methods=_methods(methods, RANK_METHODS), ablations=not no_ablations,
                       profile=profile), out)


@bench.command()
@click.option("--quick", is_flag=True, help="Fewer queries (a smoke run).")
def engine(quick: bool) -> None:
    """Engine speed on synthetic mirrors: recall and write-back of both settings profiles
    (v1, v2) side by side, beside a numpy brute-force top-10."""
    from ..bench.engine import main

    main(["--quick"] if quick else [])


SCALE_COLUMNS = ("nodes", "edges", "open_first_s", "open_s", "rss_open_mb", "recall_p50_ms",
                 "recall_p95_ms",
                 "floor_ms", "bytes_per_recall_mb", "numpy_top10_p50_ms",
                 "lancedb_top10_p50_ms", "live_loop_p50_ms", "live_loop_p99_ms",
                 "commit_p50_ms", "checkpoint_s", "rss_end_mb", "replay_nodes_per_s",
                 "load_avg_start", "load_avg_end")
"""The columns of ``akasha bench scale``'s table (every number is in the JSON)."""


@bench.command()
@click.option("--sizes", default="1000,10000,100000", show_default=True,
              help="Comma-separated node counts (each in its own process).")
@click.option("--commits", default=10_000, show_default=True,
              help="Journaled commits before the timed checkpoint (at most the node count).")
@click.option("--out", default=None, type=click.Path(dir_okay=False),
              help="Also write the numbers as JSON here.")
def scale(sizes: str, commits: int, out: str | None) -> None:
    """Open time, RSS, recall p50/p95 beside its physical floor and numpy / LanceDB top-10,
    the live loop (recall + commit), commit and checkpoint of real stores at several sizes."""
    import json

    from ..bench.scale import run_scale

    result = run_scale([int(x) for x in sizes.split(",") if x.strip()], commits=commits)
    text = json.dumps(result, indent=2)
    if out:
        Path(out).parent.mkdir(parents=True, exist_ok=True)
        Path(out).write_text(text + "\n", "utf-8")
    echo(text)
    echo("\n| " + " | ".join(SCALE_COLUMNS) + " |\n|" + "---|" * len(SCALE_COLUMNS))
    for r in result.values():
        echo("| " + " | ".join(
            f"{r[c]:.3g}" if isinstance(r.get(c), float) else str(r.get(c, "–"))
            for c in SCALE_COLUMNS) + " |")


@bench.command("serve")
@click.option("--store", "stores", multiple=True, default=("demo_store", "synthetic:10000"),
              show_default=True, help="A store to serve a copy of (built with `akasha demo` "
              "if missing), or synthetic:N (a synthetic store of N turns). Repeatable.")
@click.option("--clients", default="1,4,8", show_default=True,
              help="Comma-separated counts of MCP clients at once.")
@click.option("--loops", default=40, show_default=True,
              help="context → add_turn loops per client.")
@click.option("--busy", default=0, show_default=True,
              help="Processes kept busy on a core each beside the run (a competing load).")
@click.option("--env", "envs", multiple=True, metavar="NAME=VALUE",
              help="Extra environment of the server (e.g. AKASHA_TORCH_THREADS=1).")
@click.option("--think", default=0.0, show_default=True, type=click.FloatRange(min=0),
              help="Seconds each client pauses after each answer (its model writing a "
              "reply, its user typing); 0: no pause, the worst case for add_turn's tail.")
@click.option("--out", default=None, type=click.Path(dir_okay=False),
              help="Write the numbers as JSON here (and the tables as .md beside it).")
def serve_bench(stores: tuple[str, ...], clients: str, loops: int, busy: int,
                envs: tuple[str, ...], think: float, out: str | None) -> None:
    """Many agents on one served memory: 1, 4, 8 MCP clients following conversations
    (context → add_turn) at once; loops/s, p50/p99 per tool, the first call of a session,
    the time split of each call, server RSS."""
    import json

    from ..bench.serve import markdown, run_serve

    env = dict(e.split("=", 1) for e in envs)
    counts = [int(x) for x in clients.split(",") if x.strip()]
    command = "akasha " + " ".join(shlex.quote(a) for a in sys.argv[1:])
    results, md = [], []
    for store in stores:
        r = run_serve(store, clients=counts, loops=loops, busy=busy, env=env, think=think)
        results.append(r)
        md.append(markdown(r, command))
        echo(md[-1])
    if out:
        Path(out).parent.mkdir(parents=True, exist_ok=True)
        Path(out).write_text(json.dumps({"command": command, "runs": results}, indent=2,
                                        ensure_ascii=False) + "\n", "utf-8")
        Path(out).with_suffix(".md").write_text("\n".join(md), "utf-8")
        echo(f"wrote {out}")


COMMANDS: list[click.Command] = [bench]
