"""Recall health from the query log (issue 9)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import numpy as np
from click.testing import CliRunner

import akasha_explorer as ak
from akasha_explorer.brief.health import SOURCES, format_health
from akasha_explorer.cli import cli
from akasha_explorer.config import DAY

RELATED = ["what humidity threshold did I set", "阿岚的生日是哪天", "Slay the Spire A10",
           "瑞金医院换药"]
UNRELATED = ["quantum chromodynamics lattice gauge", "how do I bake sourdough bread"]


def run_recalls(mem: ak.Memory) -> list:
    """Related recalls on the last day, unrelated ones (relevance floor on) a day later."""
    t0 = mem.last_ts()
    floor = mem.settings.replace(RELEVANCE_FLOOR=True)
    traces = [mem.recall(q, now=t0 + k) for k, q in enumerate(RELATED)]
    traces += [mem.recall(q, now=t0 + DAY + k, settings=floor) for k, q in enumerate(UNRELATED)]
    return traces


def parts(label: str) -> list[str]:
    return [p for p in label.split("+") if p]


def test_health_counts_what_the_recalls_did(demo_store: Path):
    with ak.open(demo_store) as mem:
        assert mem.health()["queries"] == 0
        traces = run_recalls(mem)
        h = mem.health()
        n = len(traces)
        assert h["queries"] == n
        empty = sum(not t.activation.uids for t in traces)
        assert empty == len(UNRELATED)
        assert h["empty"] == empty
        assert h["empty_rate"] == round(empty / n, 4)
        items = Counter(p for t in traces for s in t.activation.sources for p in parts(s))
        assert {k: v for k, v in h["item_sources"].items() if v} == dict(items)
        seeds = Counter(p for t in traces for s in t.seeds.source for p in parts(s))
        assert {k: v for k, v in h["seed_sources"].items() if v} == dict(seeds)
        assert list(h["item_sources"])[: len(SOURCES)] == list(SOURCES)
        top1 = [max(t.activation.scores) for t in traces if t.activation.uids]
        assert h["top1_score"]["p50"] == round(float(np.percentile(top1, 50)), 4)
        lat = h["latency_ms"]
        assert 0 < lat["p50"] <= lat["p90"] <= lat["p99"]
        assert [w["queries"] for w in h["windows"]] == [len(RELATED), len(UNRELATED)]
        assert [w["empty"] for w in h["windows"]] == [0, len(UNRELATED)]
        assert h["windows"][1]["top1_score"] is None
        assert h["edges"]["count"] == mem.store.mirror.edges.n_alive() > 0
        fans = [hub["fan"] for hub in h["top_hubs"]]
        assert fans == sorted(fans, reverse=True)
        assert len(fans) == 10
        nodes = mem.store.mirror.nodes
        rows = np.flatnonzero(nodes.alive)
        assert fans[0] == int(mem.store.mirror.edges.fan_of(rows).max())
        for hub in h["top_hubs"]:
            got = sum(hub["node"] in t.activation.uids for t in traces)
            assert hub["activated_in"] == got
        last = mem.store.mirror.edges.last_ts[mem.store.mirror.edges.alive]
        day = np.floor(mem.last_ts() / DAY) * DAY  # replay wrote edges on the last day
        assert h["windows"][0]["edges_touched"] == int(((last >= day) & (last < day + DAY)).sum())
        assert h["windows"][1]["edges_touched"] == 0  # dry-run recalls write no edge
        text = format_health(h)
        assert f"empty activation  {empty}/{n}" in text
        assert "top hubs by fan:" in text
    with ak.open(demo_store, read_only=True) as mem:  # rows now come from Kuzu's QueryLog
        again = mem.health()
        assert again["queries"] == h["queries"]
        assert again["item_sources"] == h["item_sources"]
        assert mem.store.graph.count("QueryLog") == n
        assert not mem.store.mirror.pending_queries


def test_commits_show_as_edge_growth(demo_store: Path):
    with ak.open(demo_store) as mem:
        before = mem.health()["edges"]["count"]
        t = mem.last_ts() + 3600
        trace = mem.recall("what humidity threshold did I set", now=t)
        mem.commit(trace, mem.store.mirror.nodes.uid[-1])
        h = mem.health(window=3600.0)
        assert h["edges"]["count"] >= before
        assert h["windows"][-1]["edges_touched"] > 0
        assert h["committed"] == 1


def test_cli_health(demo_store: Path):
    with ak.open(demo_store) as mem:
        run_recalls(mem)
    runner = CliRunner()
    res = runner.invoke(cli, ["health", str(demo_store), "--json"])
    assert res.exit_code == 0, res.output
    h = json.loads(res.output)
    assert h["queries"] == len(RELATED) + len(UNRELATED)
    res = runner.invoke(cli, ["health", str(demo_store), "--window", "48"])
    assert res.exit_code == 0
    assert "windows of 48 h" in res.output
    assert "top hubs by fan:" in res.output
