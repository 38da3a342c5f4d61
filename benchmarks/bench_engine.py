"""Benchmark of the pure recall engine, both settings profiles side by side: see
:mod:`akasha_explorer.bench.engine` (``akasha bench engine``, ``make bench``).

Run: ``python benchmarks/bench_engine.py [--quick]``.
"""

from akasha_explorer.bench.engine import main

if __name__ == "__main__":
    raise SystemExit(main())
