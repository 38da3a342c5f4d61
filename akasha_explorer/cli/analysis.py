"""``akasha`` commands of the analysis area, registered by :mod:`akasha_explorer.cli`:
``communities``, ``surprises``, ``ppr``, ``export``, ``import`` and ``eval``."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

import click

from .. import open as open_store
from ..analysis.methods import EVAL_METHODS, RANK_METHODS
from ..analysis.surprises import SURPRISE_KINDS
from ..analysis.views import VIEWS
from ..config import PROFILES, Settings
from ..export.api import EXPORT_FORMATS
from .kit import echo, echo_json, parse_now

__all__ = ["COMMANDS"]

_STORE = click.argument("store", type=click.Path(exists=True, file_okay=False))
_NOW = click.option("--now", default="last", show_default=True,
                    help="Read weights at this time: ISO 8601, epoch seconds, 'now' or 'last' "
                         "(the newest message).")
_RES = click.option("--resolution", type=float, default=None,
                    help="Leiden resolution (default: the store's LEIDEN_RESOLUTION, 1.0; "
                         "larger gives more, smaller communities).")
_SEED = click.option("--seed", type=int, default=None, help="Leiden / layout random seed.")
_JSON = click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")


def _when(value: str, mem: Any) -> float:
    """``--now`` as epoch seconds (``now`` is the wall clock)."""
    t = parse_now(value, mem)
    return dt.datetime.now(dt.UTC).timestamp() if t is None else t


@click.command("communities")
@_STORE
@click.option("--view", type=click.Choice(VIEWS), default="nodes", show_default=True,
              help="Which graph: co-activation of turns, anchors, or turn-anchor bipartite.")
@_RES
@_SEED
@_NOW
@click.option("--store-episodes", is_flag=True,
              help="Keep the communities as episodes (kind 'community'), replacing earlier ones.")
@_JSON
def communities_cmd(store: str, view: str, resolution: float | None, seed: int | None, now: str,
                    store_episodes: bool, as_json: bool) -> None:
    """Leiden communities of STORE's co-activation graph (or anchor graphs)."""
    with open_store(store, read_only=not store_episodes) as mem:
        table = mem.communities(view, now=_when(now, mem), resolution=resolution, seed=seed,
                                save=store_episodes)
    if as_json:
        echo_json(table.to_dict(orient="records"))
        return
    if table.empty:
        echo(f"no communities: the {view} view has no edges yet")
        return
    echo(f"{len(table)} communities ({view} view)")
    for r in table.itertuples(index=False):
        span = f"{r.first_time[:10]} … {r.last_time[:10]}" if r.first_time else ""
        sessions = f"{r.sessions} sessions  " if r.sessions else ""
        echo(f"\n#{r.community}  {r.size} nodes  {span}  {sessions}"
                   f"inside {r.w_internal:.3f} / cut {r.w_cut:.3f}")
        echo(f"   label: {r.label}")
        echo(f"   e.g.:  {r.examples}")
    if store_episodes:
        echo(f"\nstored {len(table)} community episodes")


def _fmt(v: Any) -> str:
    return f"{v:.4g}" if isinstance(v, float) else str(v)


@click.command("surprises")
@_STORE
@click.option("--top", type=int, default=10, show_default=True, help="Surprises per kind.")
@click.option("--no-queue", is_flag=True,
              help="Do not put suggested links on the review queue (opens read-only).")
@_RES
@_SEED
@_NOW
@_JSON
def surprises_cmd(store: str, top: int, no_queue: bool, resolution: float | None,
                  seed: int | None, now: str, as_json: bool) -> None:
    """Surprise discovery: bridges, suggested links, knowledge gaps, semantic mismatches."""
    with open_store(store, read_only=no_queue) as mem:
        frame = mem.surprises(now=_when(now, mem), resolution=resolution, seed=seed, top=top,
                              queue=not no_queue)
    if as_json:
        echo_json(json.loads(frame.to_json(orient="records", force_ascii=False)))
        return
    for kind in SURPRISE_KINDS:
        part = frame[frame["kind"] == kind]
        echo(f"\n== {kind} ({len(part)})")
        if part.empty:
            echo("   no query in the log missed twice" if kind == "knowledge_gap"
                       else "   none found")
        for r in part.itertuples(index=False):
            who = r.subject + (f"  <->  {r.other}" if r.other else "")
            echo(f"- {who}   score {r.score:.4g}")
            if r.subject_text:
                echo(f"    {r.subject_text[:70]}")
            if r.other_text:
                echo(f"    {r.other_text[:70]}")
            echo(f"    {r.why}")
            echo("    " + ", ".join(f"{k}={_fmt(v)}" for k, v in r.numbers.items()))
            if r.review_uid:
                echo(f"    review item: {r.review_uid}")


@click.command("ppr")
@_STORE
@click.argument("seeds", nargs=-1, required=True)
@click.option("--view", type=click.Choice(VIEWS), default="nodes", show_default=True,
              help="Which graph: co-activation of turns, anchors, or turn-anchor bipartite.")
@click.option("--top", type=int, default=15, show_default=True,
              help="How many reached nodes to print.")
@click.option("--damping", type=float, default=None, help="Default: the store's PPR_DAMPING.")
@_NOW
@_JSON
def ppr_cmd(store: str, seeds: tuple[str, ...], view: str, top: int, damping: float | None,
            now: str, as_json: bool) -> None:
    """What do SEEDS (node uids, anchor uids, names or aliases) reach? Personalized
    PageRank over STORE's graph."""
    with open_store(store, read_only=True) as mem:
        frame = mem.ppr(list(seeds), view=view, now=_when(now, mem), damping=damping, top=top)
    if as_json:
        echo_json(json.loads(frame.to_json(orient="records", force_ascii=False)))
        return
    for r in frame.to_dict(orient="records"):
        mark = "*" if r["seed"] else " "
        text = r.get("text") or r.get("label") or ""
        echo(f"{r['rank']:3d}{mark} {r['ppr']:.4f}  {r['id']}  {str(text)[:60]}")


@click.command("export")
@_STORE
@click.option("--format", "fmt", type=click.Choice(EXPORT_FORMATS), required=True,
              help="Output format.")
@click.option("--out", "out", required=True, type=str,  # checked by store.paths.output_path
              help="File (graphml, gexf, json, html) or folder (parquet, csv, store).")
@click.option("--view", type=click.Choice(VIEWS), default="nodes", show_default=True,
              help="Which graph: co-activation of turns, anchors, or turn-anchor bipartite.")
@_RES
@_SEED
@_NOW
def export_cmd(store: str, fmt: str, out: str, view: str, resolution: float | None,
               seed: int | None, now: str) -> None:
    """Export a view of STORE (or the whole store with --format store)."""
    with open_store(store, read_only=fmt != "store") as mem:
        path = mem.export(out, format=fmt, view=view, now=_when(now, mem),
                          resolution=resolution, seed=seed)
    echo(f"wrote {path}")


@click.command("import")
@click.argument("store", type=click.Path(file_okay=False))
@click.argument("path", type=click.Path(exists=True, file_okay=False))
def import_cmd(store: str, path: str) -> None:
    """Build a new STORE from the whole-store export at PATH."""
    from ..export.store import import_store

    import_store(path, store)
    with open_store(store, read_only=True) as mem:
        s = mem.stats()
    echo(f"imported {path} into {store}: {s['sessions']} sessions, {s['messages']} "
               f"messages, {s['nodes']} nodes, {s['edges']} edges")


@click.command("eval")
@_STORE
@click.option("--k", "k", type=int, default=10, show_default=True,
              help="Cut-off of recall@k, hit@k and false@k.")
@click.option("--method", "methods", multiple=True, type=click.Choice(RANK_METHODS),
              help="A method to score (repeat for several; default: "
                   f"{', '.join(EVAL_METHODS)}).")
@click.option("--profile", type=click.Choice(list(PROFILES)), default=None,
              help="Score another settings profile (a what-if: the store keeps its own).")
@_NOW
@_JSON
def eval_cmd(store: str, k: int, methods: tuple[str, ...], profile: str | None, now: str,
             as_json: bool) -> None:
    """Score the recall methods on STORE's labelled queries (mem.labels.add, the demo store's
    set): recall@k, hit@k, MRR, and false@k (queries with a node labelled not relevant in
    the top k), per method. A dry run: nothing is written."""
    with open_store(store, read_only=True) as mem:
        settings = (None if profile is None else
                    Settings.profile(profile, **mem.settings.profile_name()[1]))
        out = mem.evaluate(methods=methods or None, k=k, now=_when(now, mem), settings=settings)
    if as_json:
        echo_json(_finite(out))
        return
    echo(f"{out['queries']} labelled queries ({out['scored']} with a relevant node), profile "
         f"{out['profile']}, at {dt.datetime.fromtimestamp(out['now'], dt.UTC):%Y-%m-%d %H:%M} UTC")
    _eval_table(out["methods"], k)
    for lang, part in out.get("by_language", {}).items():
        name = {"zh": "Chinese", "en": "English and others"}.get(lang, lang)
        echo(f"-- {part['queries']} queries in {name} ({lang})")
        _eval_table(part["methods"], k)


def _eval_table(methods: dict[str, dict[str, float]], k: int) -> None:
    head = ["method", f"recall@{k}", f"hit@{k}", "MRR", f"false@{k}"]
    echo("  ".join(f"{h:>10}" for h in head))
    for m, r in methods.items():
        cells = [r[f"recall@{k}"], r[f"hit@{k}"], r["mrr"], r[f"false@{k}"]]
        echo(f"{m:>10}  " + "  ".join(f"{v:>10.3f}" if v == v else f"{'–':>10}" for v in cells))


def _finite(value: Any) -> Any:
    """``value`` with NaN as None (JSON has no NaN)."""
    if isinstance(value, float) and value != value:
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite(v) for v in value]
    return value


COMMANDS: list[click.Command] = [communities_cmd, surprises_cmd, ppr_cmd, export_cmd, import_cmd,
                                 eval_cmd]
