"""Labelled queries — the memory's own test set (issue 16): stored in the store, exported,
imported and forgotten with it; ``akasha eval`` scores the methods on them without writing;
the demo's labelled set is valid. Real Kuzu + LanceDB in tmp dirs, the real model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

import akasha_explorer as ak
from akasha_explorer.cli import cli
from akasha_explorer.curate.labels import demo_labels_path, labelled_set, read_labels
from akasha_explorer.export.store import import_store

from .conftest import tree_digest

BIRTHDAY = "阿岚的生日是哪天"
NODE = "2026-09-13-evening:0"
ZIGBEE = "2026-09-05-morning:2"


def test_the_labelled_demo_set_names_real_nodes(labelled_demo: Path) -> None:
    rows = read_labels(demo_labels_path())
    with ak.open(labelled_demo, read_only=True) as mem:
        assert all(mem.has_node(r["node"]) for r in rows)
        stored = mem.labels()
    queries = labelled_set(stored)
    assert len(queries) >= 20
    assert any(any("\u4e00" <= c <= "\u9fff" for c in q["query"]) for q in queries)
    assert any(q["query"].isascii() for q in queries)
    # every query says what should come up, or — a question the memory cannot answer
    # (老周的生日是哪天) — what should not
    assert all(q["relevant"] or q["not_relevant"] for q in queries)
    assert sum(1 for q in queries if q["relevant"]) >= len(queries) - 5
    assert [(r.query, r.node, r.relevant) for r in stored] == [
        (r["query"], r["node"], r.get("relevant", True)) for r in rows]  # file order kept
    assert {r.by for r in stored} == {"demo"}


def test_label_replace_remove_and_bad_input(demo_store: Path) -> None:
    with ak.open(demo_store) as mem:
        uid = mem.labels.add(BIRTHDAY, NODE)
        assert mem.labels.add(BIRTHDAY, NODE, relevant=False) == uid  # one label per pair
        got = mem.labels(BIRTHDAY)
        assert [(r.node, r.relevant, r.by) for r in got] == [(NODE, False, "user")]
        assert mem.labels.remove(BIRTHDAY, NODE) is True
        assert mem.labels.remove(BIRTHDAY, NODE) is False
        assert mem.labels() == []
        with pytest.raises(ak.NotFound, match="no node 'nobody'"):
            mem.labels.add(BIRTHDAY, "nobody")
        with pytest.raises(ak.InvalidInput, match="query must be non-empty"):
            mem.labels.add("  ", NODE)
        with pytest.raises(ak.InvalidInput, match="relevant must be True or False"):
            mem.labels.add(BIRTHDAY, NODE, relevant="yes")  # type: ignore[arg-type]
        with pytest.raises(ak.NotFound, match="label 2: no node 'x'"):
            mem.labels.load([{"query": "q", "node": NODE}, {"query": "q", "node": "x"}])
        with pytest.raises(ak.InvalidInput, match="unknown field"):
            mem.labels.load([{"query": "q", "node": NODE, "gold": True}])
        assert mem.labels() == []  # a bad item adds none
        with pytest.raises(ak.InvalidInput, match="no labelled queries"):
            mem.evaluate()
    with ak.open(demo_store, read_only=True) as ro, pytest.raises(ak.ReadOnlyStore):
        ro.labels.add(BIRTHDAY, NODE)


def test_labels_travel_with_an_export(demo_store: Path, tmp_path: Path) -> None:
    with ak.open(demo_store) as mem:
        mem.labels.add(BIRTHDAY, NODE)
        mem.labels.add("Where does Lan live?", "2026-09-01-evening:4", relevant=False)
        before = mem.labels()
        out = mem.export(tmp_path / "exp", format="store")
    import_store(out, tmp_path / "copy")
    with ak.open(tmp_path / "copy", read_only=True) as again:
        assert again.labels() == before


def test_forget_removes_the_labels_that_name_it(demo_store: Path) -> None:
    with ak.open(demo_store) as mem:
        keep = mem.labels.add("Which Zigbee dongle do I use?", ZIGBEE)
        mem.labels.add(BIRTHDAY, NODE)                                   # names the node
        mem.labels.add("阿岚的生日是哪天 · again", "2026-09-01-evening:4")  # other node, kept
        text = mem.messages(NODE)[0].text
        mem.labels.add(text[:12], "2026-09-01-evening:6")                # quotes its text
        counts = mem.forget(node=NODE)
        assert counts["labels"] == 2
        left = mem.labels()
    assert {r.uid for r in left} >= {keep}
    assert all(r.node != NODE and r.query != text[:12] for r in left)
    raw = b"".join(p.read_bytes() for p in demo_store.rglob("*") if p.is_file())
    assert text[:12].encode() not in raw


def test_akasha_eval_scores_every_method_and_writes_nothing(labelled_demo: Path) -> None:
    before = tree_digest(labelled_demo)
    r = CliRunner().invoke(cli, ["eval", str(labelled_demo), "--json", "--k", "5"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    answerable = sum(1 for q in out["per_query"] if q["relevant"])
    assert out["k"] == 5 and out["queries"] >= 20 and out["scored"] == answerable
    assert set(out["by_language"]) == {"en", "zh"}
    assert sum(p["queries"] for p in out["by_language"].values()) == out["queries"]
    for m in ("context", "akasha", "dense", "bm25"):
        s = out["methods"][m]
        assert 0.0 <= s["recall@5"] <= s["hit@5"] <= 1.0 and 0.0 <= s["mrr"] <= 1.0
    # the methods rank differently, and the engine beats dense alone on this set
    assert out["methods"]["context"]["mrr"] > out["methods"]["dense"]["mrr"]
    table = CliRunner().invoke(cli, ["eval", str(labelled_demo), "--method", "bm25",
                                     "--profile", "v1"])
    assert table.exit_code == 0, table.output
    assert "bm25" in table.output and "profile v1" in table.output
    assert tree_digest(labelled_demo) == before  # dry: no query log, no journal


def test_compare_methods_explains_disagreements(labelled_demo: Path) -> None:
    with ak.open(labelled_demo, read_only=True) as mem:
        f = mem.compare_methods("Where does Lan live?", k=5)
        with pytest.raises(ak.InvalidInput, match="unknown method"):
            mem.compare_methods("x", methods=["magic"])
    assert {"rank_context", "rank_akasha", "rank_dense", "rank_bm25", "rank_rrf", "rank_ppr",
            "source", "path", "words", "why"} <= set(f.columns)
    disagree = f[f["why"] != ""]
    assert len(disagree)
    assert disagree["why"].str.contains("top 5 in").all()
    assert (f["words"].str.contains("lan")).any()  # the matched query word is named
