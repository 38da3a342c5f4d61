"""``akasha bench …`` — benchmarks that print numbers (never timed unit tests)."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import click

__all__ = ["COMMANDS"]


@click.group()
def bench() -> None:
    """Benchmarks: recall quality on LoCoMo, engine speed, scale."""


@bench.command()
@click.option("--data", default="../shared/data/locomo-dev.json", show_default=True,
              type=click.Path(exists=True, dir_okay=False), help="A LoCoMo-format JSON file.")
@click.option("--conversations", type=int, default=None, help="Only the first N conversations.")
@click.option("--methods", default=",".join(("akasha", "akasha-activation", "dense", "bm25",
                                             "rrf", "ppr")), show_default=True,
              help="Comma-separated methods.")
@click.option("--no-ablations", is_flag=True, help="Skip the ablation stores and runs.")
@click.option("--out", default="benchmarks/results/locomo-dev.json", show_default=True,
              type=click.Path(dir_okay=False), help="JSON output; .md and .png beside it.")
def locomo(data: str, conversations: int | None, methods: str, no_ablations: bool,
           out: str) -> None:
    """Evidence recall on LoCoMo: Akasha beside dense, BM25, RRF and PPR."""
    from .locomo import run_locomo, write_reports

    result = run_locomo(data, conversations=conversations,
                        methods=[m.strip() for m in methods.split(",") if m.strip()],
                        ablations=not no_ablations)
    command = "akasha " + " ".join(shlex.quote(a) for a in sys.argv[1:])
    for path in write_reports(result, out, command=command):
        click.echo(f"wrote {path}")
    click.echo(Path(out).with_suffix(".md").read_text("utf-8"))


COMMANDS: list[click.Command] = [bench]
