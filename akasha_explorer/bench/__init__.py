"""Benchmarks importable as functions (``akasha bench …``: :mod:`akasha_explorer.cli.bench`)."""
