"""``akasha communities`` / ``surprises`` / ``ppr`` on the demo store (click's runner, the
real store and model)."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

import akasha_explorer as ak
from akasha_explorer.cli import cli


def _run(*args: str) -> str:
    r = CliRunner().invoke(cli, list(args))
    assert r.exit_code == 0, r.output
    return r.output


def test_cli_communities_text_json_and_episodes(demo_store: Path) -> None:
    out = _run("communities", str(demo_store), "--resolution", "2", "--seed", "1")
    assert "communities (nodes view)" in out
    assert "label:" in out
    rows = json.loads(_run("communities", str(demo_store), "--resolution", "2", "--seed", "1",
                           "--json"))
    assert out.count("\n#") == len(rows)
    assert sum(r["size"] for r in rows) > 300
    anchors = json.loads(_run("communities", str(demo_store), "--view", "anchors", "--json"))
    assert anchors
    assert all(r["size"] >= 1 for r in anchors)
    _run("communities", str(demo_store), "--store-episodes")
    with ak.open(demo_store, read_only=True) as mem:
        assert len(mem.episodes(kind="community")) == len(
            json.loads(_run("communities", str(demo_store), "--json")))


def test_cli_surprises_lists_every_kind_with_numbers(demo_store: Path) -> None:
    with ak.open(demo_store) as mem:
        for _ in range(2):
            mem.recall("What's the capital of Peru?", now=mem.last_ts())
    out = _run("surprises", str(demo_store), "--top", "3")
    for kind in ("bridge", "suggested_link", "knowledge_gap", "semantic_mismatch"):
        assert f"== {kind} (" in out
        assert f"== {kind} (0)" not in out
    assert "participation=" in out
    assert "adamic_adar=" in out
    assert "misses=2" in out
    assert "review item: rv-suggested_link-" in out
    rows = json.loads(_run("surprises", str(demo_store), "--no-queue", "--json"))
    assert {r["kind"] for r in rows} == {"bridge", "suggested_link", "knowledge_gap",
                                        "semantic_mismatch"}


def test_cli_ppr_from_an_anchor(demo_store: Path) -> None:
    out = _run("ppr", str(demo_store), "阿岚", "--top", "5")
    lines = out.strip().splitlines()
    assert len(lines) == 5
    assert lines[0].lstrip().startswith("1*")
    rows = json.loads(_run("ppr", str(demo_store), "阿岚", "--json", "--damping", "0.85"))
    assert [r["rank"] for r in rows] == list(range(1, len(rows) + 1))
    r = CliRunner().invoke(cli, ["ppr", str(demo_store), "nobody-at-all"])
    assert r.exit_code == 1
    assert "neither a node" in r.output
