"""``akasha bench serve`` against a real server process: its numbers, and ``think``."""

from __future__ import annotations

from pathlib import Path

import pytest

import akasha_explorer as ak
from akasha_explorer.bench.serve import markdown, run_serve

pytestmark = pytest.mark.slow


def test_a_thinking_client_pauses_after_each_answer_and_the_numbers_say_so(
        demo_store: Path) -> None:
    """Two loops of one client with 0.4 s pauses: four pauses, so the level takes at least
    1.6 s; every call answered, both turns stored, the pause recorded and shown."""
    with ak.open(demo_store, read_only=True) as mem:
        before = mem.stats()["nodes"]
    r = run_serve(str(demo_store), clients=[1], loops=2, think=0.4)
    (level,) = r["levels"]
    assert level["errors"] == 0, level["error_examples"]
    assert r["think_s"] == level["think_s"] == 0.4
    assert level["seconds"] >= 1.6
    assert level["client_ms"]["add_turn"]["n"] == 2
    assert {"first context", "context"} <= set(level["client_ms"])
    assert "think 0.4 s" in markdown(r)
    assert r["nodes_end"] == before + 2


def test_a_negative_think_is_refused_before_anything_starts(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="think"):
        run_serve(str(tmp_path / "nothing"), think=-1.0, keep=tmp_path / "work")
    assert not (tmp_path / "work").exists()
