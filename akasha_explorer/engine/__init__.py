"""The pure Akasha engine (SPEC §3–5): numpy arrays in, numbers and traces out.

Imports nothing of ours but :mod:`akasha_explorer.config`, :mod:`akasha_explorer.model`
and its own modules — no store, model, widget or torch (``tests/test_imports.py`` checks).
"""
