"""Benchmark of ``akasha serve`` with many MCP clients: ``akasha bench serve`` (see
:mod:`akasha_explorer.bench.serve`).

Run: ``python benchmarks/bench_server.py [--store demo_store] [--clients 1,4,8] [--busy 1]``.
"""

from __future__ import annotations

import sys

from akasha_explorer.cli import main

if __name__ == "__main__":
    main(["bench", "serve", *sys.argv[1:]])
