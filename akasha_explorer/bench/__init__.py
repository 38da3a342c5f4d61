"""Benchmarks importable as functions (``akasha bench …``)."""
