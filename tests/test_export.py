"""Export (SPEC §9): every format read back by the tool it is meant for (networkx for
GraphML / GEXF / node-link JSON, pandas for Parquet / CSV), attribute sanitising, and the
whole-store export → import round trip (same stats, same recall traces, same bytes)."""

from __future__ import annotations

import hashlib
import json
import math
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import networkx as nx
import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import akasha_explorer as ak
from akasha_explorer.analysis.views import GraphView
from akasha_explorer.cli import cli
from akasha_explorer.export.formats import (
    with_viz,
    write_csv,
    write_json,
    write_parquet,
)
from akasha_explorer.export.gexf import GEXF_NS, NS_VIZ, write_gexf
from akasha_explorer.export.graphml import write_graphml
from akasha_explorer.export.sanitize import clean_column, records
from akasha_explorer.export.store import import_store
from akasha_explorer.export.viz import colour, rgb

QUERIES = ["手指换药疼不疼", "阿岚 A10 时间吞噬者", "Home Assistant humidity automation",
           "星图 v0.3 release", "早安"]


def _expected(frame: pd.DataFrame, key: str | tuple[str, ...]) -> dict[Any, dict[str, Any]]:
    return dict(records(frame, key=key, xml=True))


@pytest.fixture
def views(demo_store: Path) -> dict[str, GraphView]:
    with ak.open(demo_store, read_only=True) as mem:
        return {name: mem.graph_view(name) for name in ("nodes", "anchors", "bipartite")}


# -- GraphML / GEXF / JSON / tables ------------------------------------------------------------
@pytest.mark.parametrize("name", ["nodes", "anchors", "bipartite"])
def test_graphml_reads_back_with_equal_nodes_edges_and_attributes(
        views: dict[str, GraphView], tmp_path: Path, name: str) -> None:
    v = views[name]
    g = nx.read_graphml(write_graphml(v, tmp_path / "g.graphml"))
    assert g.is_directed() == v.directed
    want_nodes = _expected(with_viz(v).nodes, "id")
    assert dict(g.nodes(data=True)) == want_nodes
    want_edges = _expected(v.edges, ("source", "target"))
    got_edges = {(a, b): d for a, b, d in g.edges(data=True)}
    if not v.directed:   # an undirected reader may store a pair either way round
        got_edges = {(a, b) if (a, b) in want_edges else (b, a): d
                     for (a, b), d in got_edges.items()}
    assert got_edges == want_edges


@pytest.mark.parametrize("fmt", ["graphml", "gexf"])
def test_ids_xml_cannot_hold_stay_unique(tmp_path: Path, fmt: str, embedder: Any) -> None:
    """Session ids differing only in U+FFFE / U+FFFF / U+FFFD used to export as one id
    (every character XML cannot hold became U+FFFD): networkx read back 2 of 3 nodes."""
    sessions = ["s\ufffe", "s\uffff", "s\ufffd"]
    with ak.open(tmp_path / "store") as mem:
        for k, sid in enumerate(sessions):
            mem.ingest([{"role": "user", "content": f"we talked about the garden, part {k}"}],
                       session=sid, progress=False)
        for k in range(3):
            tr = mem.recall("the garden", now=mem.last_ts() + 60 * (k + 1))
            mem.commit(tr, f"{sessions[k]}:0")
        out = mem.export(tmp_path / f"g.{fmt}", format=fmt)
        n_edges = mem.stats()["edges"]
    g = nx.read_graphml(out) if fmt == "graphml" else nx.read_gexf(out, version="1.3")
    assert g.number_of_nodes() == 3
    assert sorted(g.nodes) == ["s\\u{FFFE}:0", "s\\u{FFFF}:0", "s\ufffd:0"]
    assert g.number_of_edges() == n_edges > 0


@pytest.mark.parametrize("name", ["nodes", "anchors"])
def test_gexf_1_3_reads_back_with_viz_and_time(views: dict[str, GraphView], tmp_path: Path,
                                               name: str) -> None:
    v = views[name]
    path = write_gexf(v, tmp_path / "g.gexf")
    root = ET.parse(path).getroot()
    assert root.tag == f"{{{GEXF_NS}}}gexf"
    assert root.get("version") == "1.3"
    graph = root.find(f"{{{GEXF_NS}}}graph")
    assert graph.get("mode") == "dynamic"
    assert graph.get("timeformat") == "double"
    g = nx.read_gexf(path, version="1.3")
    assert set(g.nodes) == set(v.nodes["id"])
    want = _expected(v.nodes, "id")
    comm = dict(zip(v.nodes["id"], v.nodes["community"], strict=True))
    for nid, d in g.nodes(data=True):
        viz = d.pop("viz")
        assert (viz["color"]["r"], viz["color"]["g"], viz["color"]["b"]) == rgb(
            colour(int(comm[nid])))
        assert viz["size"] > 0
        assert set(viz["position"]) == {"x", "y", "z"}
        assert d.pop("label") == (want[nid].get("label") or nid)
        if "ts" in want[nid]:
            assert d.pop("start") == want[nid]["ts"]
        assert d == {k: x for k, x in want[nid].items() if k != "label"}
    pairs = _expected(v.edges, ("source", "target"))
    got = {}
    for a, b, d in g.edges(data=True):
        key = (a, b) if (a, b) in pairs else (b, a)
        d.pop("id")
        got[key] = d
    assert set(got) == set(pairs)
    for key, d in got.items():
        assert d == pairs[key]


def test_gexf_is_deterministic_and_time_intervals_follow_the_turns(views: dict[str, GraphView],
                                                                   tmp_path: Path) -> None:
    v = views["nodes"]
    a = write_gexf(v, tmp_path / "a.gexf").read_bytes()
    b = write_gexf(v, tmp_path / "b.gexf").read_bytes()
    assert hashlib.sha256(a).digest() == hashlib.sha256(b).digest()
    root = ET.fromstring(a)
    ts = dict(zip(v.nodes["id"], v.nodes["ts"], strict=True))
    for e in root.iter(f"{{{GEXF_NS}}}edge"):
        assert float(e.get("start")) == max(ts[e.get("source")], ts[e.get("target")])
    assert len(list(root.iter(f"{{{NS_VIZ}}}position"))) == len(v.nodes)


def test_node_link_json_and_tables(views: dict[str, GraphView], tmp_path: Path) -> None:
    v = views["nodes"]
    data = json.loads(write_json(v, tmp_path / "g.json").read_text("utf-8"))
    g = nx.node_link_graph(data, edges="edges")
    assert nx.utils.graphs_equal(g, v.to_networkx())
    folder = write_parquet(v, tmp_path / "pq")
    pd.testing.assert_frame_equal(pd.read_parquet(folder / "nodes.parquet"), v.nodes)
    pd.testing.assert_frame_equal(pd.read_parquet(folder / "edges.parquet"), v.edges)
    folder = write_csv(v, tmp_path / "csv")
    nodes = pd.read_csv(folder / "nodes.csv", keep_default_na=False)
    assert nodes["id"].tolist() == v.nodes["id"].tolist()
    assert nodes["text"].tolist() == v.nodes["text"].tolist()
    assert np.allclose(nodes["strength_eff"], v.nodes["strength_eff"], rtol=1e-15, atol=0)
    edges = pd.read_csv(folder / "edges.csv")
    assert np.array_equal(edges["weight"].to_numpy(), v.edges["weight"].to_numpy())


_values = st.one_of(
    st.none(), st.booleans(), st.integers(-2**40, 2**40),
    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=12),
    st.lists(st.text(max_size=4), max_size=3),
    st.dictionaries(st.text(max_size=3), st.integers(0, 9), max_size=2),
    st.integers(0, 100).map(np.int64), st.floats(-1e6, 1e6).map(np.float32),
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(st.lists(st.lists(_values, min_size=3, max_size=3), min_size=1, max_size=4))
def test_any_attribute_values_become_one_plain_type_per_column(tmp_path: Path,
                                                               columns: list[list[Any]]) -> None:
    frame = pd.DataFrame({"id": ["a", "b", "c"],
                          **{f"c{k}": pd.Series(col, dtype=object) for k, col in
                             enumerate(columns)}})
    for c in frame.columns[1:]:
        kinds = {type(x) for x in clean_column(frame[c].tolist()) if x is not None}
        assert len(kinds) <= 1
        assert kinds <= {bool, int, float, str}
    v = GraphView("h", frame, pd.DataFrame({"source": ["a"], "target": ["b"], "weight": [1.0]}),
                  directed=True)
    g = nx.read_graphml(write_graphml(v, tmp_path / "h.graphml"))
    x = nx.read_gexf(write_gexf(v, tmp_path / "h.gexf"), version="1.3")
    want = _expected(with_viz(v).nodes, "id")
    for nid in ("a", "b", "c"):
        for k, val in want[nid].items():
            if k.startswith("c"):
                got = g.nodes[nid][k]
                assert got == val or (isinstance(val, float) and math.isclose(got, val))
                assert x.nodes[nid][k] == g.nodes[nid][k]


# -- whole store -------------------------------------------------------------------------------
def _stats(mem: ak.Memory) -> dict[str, Any]:
    s = mem.stats()
    for k in ("path", "disk_bytes"):
        s.pop(k)
    return s


def _state(mem: ak.Memory) -> tuple[dict[str, float], dict[tuple[str, str], tuple]]:
    n, e = mem.store.mirror.nodes, mem.store.mirror.edges
    nodes = {u: (float(n.strength[i]), float(n.resource[i]), int(n.recall_count[i]))
             for i, u in enumerate(n.uid)}
    edges = {(n.uid[int(e.src[k])], n.uid[int(e.dst[k])]):
             (float(e.w[k]), float(e.last_ts[k]), int(e.co_count[k]))
             for k in np.flatnonzero(e.alive)}
    return nodes, edges


def _digests(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file() and p.name != "export.json"}


@pytest.mark.slow
def test_store_export_import_round_trip_without_loss(demo_store: Path, tmp_path: Path) -> None:
    with ak.open(demo_store) as mem:
        now = mem.last_ts() + 3600.0
        # dynamic state that lives only in the journal until the export checkpoints it
        t = mem.recall("鱼石脂 引流条 换药", now=now, log=True)
        mem.commit(t, mem.store.mirror.nodes.uid[-1])
        mem.communities(save=True)
        mem.surprises()
        out = mem.export(tmp_path / "exp", format="store")
        before = _stats(mem)
        traces = {(q, m): mem.recall(q, now=now, method=m, log=False).to_json()
                  for q in QUERIES for m in ("akasha", "ppr")}
        state = _state(mem)
    import_store(out, tmp_path / "copy")
    with ak.open(tmp_path / "copy", read_only=True) as again:
        assert _stats(again) == before
        for (q, m), js in traces.items():
            assert again.recall(q, now=now, method=m, log=False).to_json() == js, (q, m)
        assert _state(again) == state
        assert len(again.episodes(kind="community")) > 0
        assert len(again.review(kind="suggested_link")) > 0
        texts = {m.uid: m.text for u in again.store.mirror.nodes.uid[:40] for m in again.messages(u)}
        assert all(m.verified for u in again.store.mirror.nodes.uid[:40] for m in again.messages(u))
        again.export(tmp_path / "exp2", format="store")
    assert _digests(tmp_path / "exp2") == _digests(out)
    with ak.open(demo_store, read_only=True) as mem:
        assert texts == {m.uid: m.text for u in mem.store.mirror.nodes.uid[:40]
                         for m in mem.messages(u)}


def test_read_only_export_carries_an_unfolded_journal(demo_store: Path, tmp_path: Path) -> None:
    crash = tmp_path / "crash"
    with ak.open(demo_store) as mem:
        now = mem.last_ts() + 60.0
        t = mem.recall("老周 杀戮尖塔", now=now)
        mem.commit(t, mem.store.mirror.nodes.uid[-2])
        assert mem.store.journal.pending > 0
        shutil.copytree(demo_store, crash, ignore=shutil.ignore_patterns("writer.lock"))
        want = (_state(mem), mem.recall("老周", now=now, log=False).to_json())
    with ak.open(crash, read_only=True) as ro:
        out = ro.export(tmp_path / "exp", format="store")
    assert (out / "journal.jsonl").exists()
    import_store(out, tmp_path / "copy")
    with ak.open(tmp_path / "copy", read_only=True) as again:
        assert _state(again) == want[0]
        assert again.recall("老周", now=now, log=False).to_json() == want[1]


def test_import_refuses_damaged_exports_and_busy_folders(demo_store: Path,
                                                         tmp_path: Path) -> None:
    with ak.open(demo_store, read_only=True) as mem:
        out = mem.export(tmp_path / "exp", format="store")
        with pytest.raises(ak.InvalidInput, match="not an empty folder"):
            mem.export(out, format="store")
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "x").write_text("keep me")
    with pytest.raises(ak.InvalidInput, match="not an empty folder"):
        import_store(out, busy)
    assert (busy / "x").read_text() == "keep me"
    head = json.loads((out / "export.json").read_text("utf-8"))
    head["schema_version"] = 99
    (out / "export.json").write_text(json.dumps(head), "utf-8")
    with pytest.raises(ak.SchemaMismatch):
        import_store(out, tmp_path / "new1")
    head["schema_version"] = 1
    (out / "export.json").write_text(json.dumps(head), "utf-8")
    data = (out / "messages.jsonl").read_text("utf-8")
    (out / "messages.jsonl").write_text(data.replace("瑞金医院", "别的医院", 1), "utf-8")
    with pytest.raises(ak.IntegrityError, match="sha256"):
        import_store(out, tmp_path / "new2")
    assert not (tmp_path / "new2").exists()


# -- CLI -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("fmt", ["graphml", "gexf", "json", "parquet", "csv", "html", "store"])
def test_cli_export_every_format(demo_store: Path, tmp_path: Path, fmt: str) -> None:
    out = tmp_path / f"out.{fmt}"
    r = CliRunner().invoke(cli, ["export", str(demo_store), "--format", fmt, "--out", str(out),
                                 "--now", "last"])
    assert r.exit_code == 0, r.output
    assert out.exists()
    if fmt == "graphml":
        assert nx.read_graphml(out).number_of_nodes() > 300
    elif fmt == "gexf":
        assert nx.read_gexf(out, version="1.3").number_of_nodes() > 300
    elif fmt == "json":
        assert len(json.loads(out.read_text("utf-8"))["nodes"]) > 300
    elif fmt in ("parquet", "csv"):
        assert {p.name for p in out.iterdir()} == {f"nodes.{fmt}", f"edges.{fmt}"}
    elif fmt == "html":
        assert out.read_text("utf-8").startswith("<!DOCTYPE html>")
    else:
        r = CliRunner().invoke(cli, ["import", str(tmp_path / "imported"), str(out)])
        assert r.exit_code == 0, r.output
        assert "342 nodes" in r.output


def test_cli_errors_are_one_line(demo_store: Path, tmp_path: Path) -> None:
    r = CliRunner().invoke(cli, ["import", str(tmp_path / "x"), str(tmp_path)])
    assert r.exit_code == 1
    assert "not an akasha export" in r.output
