"""Time ``Neighbourhood.atlas`` (issue 26) on synthetic stores: the first call (the layout
made) and the second (the layout read from the open store), turn level at 1k and 10k
turns, community level and a drill-down into the largest community at 100k.

    python benchmarks/bench_atlas.py [WORKDIR] [--big]

Stores are built in WORKDIR (a temporary folder by default) with
``bench.scale.build_synthetic_store``; ``--big`` adds the 100k store (about 40 s to
build, minutes to lay out). Prints timings; asserts nothing."""

from __future__ import annotations

import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import akasha_explorer as ak
from akasha_explorer.analysis.atlas import Atlas
from akasha_explorer.bench.scale import build_synthetic_store


def _timed(label: str, fn: Callable[[], Atlas]) -> Atlas:
    t0 = time.perf_counter()
    out = fn()
    print(f"  {label:<28} {time.perf_counter() - t0:8.2f} s   {out!r}", flush=True)
    return out


def _level(n: int) -> str:
    return "turns" if n <= 25_000 else "communities"


def _one(path: Path, n: int) -> None:
    level = _level(n)
    with ak.open(path) as mem:
        for f in mem.store.cache_dir.glob("atlas-*.npz"):
            f.unlink()
        hood = mem.neighbourhood()
        print(f"{n:,} turns, level {level}:")
        _timed("first (layout made)", lambda: hood.atlas(level=level))
        _timed("second (cached)", lambda: hood.atlas(level=level))
        if level == "communities":
            _timed("drill into community 0", lambda: hood.atlas(community=0))
            _timed("again (cached)", lambda: hood.atlas(community=0))
    with ak.open(path) as mem:
        again = mem.neighbourhood()
        _timed("reopened (cache file)", lambda: again.atlas(level=level))


def run(root: Path, sizes: list[int]) -> None:
    for n in sizes:
        path = root / f"synthetic-{n}"
        if not path.exists():
            t0 = time.perf_counter()
            build_synthetic_store(path, n)
            print(f"built {n:,} turns in {time.perf_counter() - t0:.1f} s", flush=True)
        _one(path, n)


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    big = "--big" in sys.argv
    work = Path(args[0]) if args else Path(tempfile.mkdtemp(prefix="bench-atlas-"))
    run(work, [1_000, 10_000, *([100_000] if big else [])])
