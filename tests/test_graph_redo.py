"""The graph layer's redo folder (see :mod:`akasha_explorer.graphdb.kuzu_db`).

kuzu 0.11.3's WAL replay after a SIGKILL lost the rows of a committed ``COPY`` while it
replayed the ``DELETE`` / ``MERGE … SET`` of the same transaction (the crash harness saw a
checkpoint's COACT rewrite come back with zero edges). The damage cannot be produced on
demand, so these tests build the state it leaves — a committed transaction's redo folder
and a graph that lacks that transaction's rows — with real Kuzu files, and check what the
next read-write open makes of it. ``test_a_transaction_killed_anywhere_is_all_or_nothing``
kills real transactions at random moments around their commit.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.ipc as ipc
import pytest

from akasha_explorer.graphdb.kuzu_db import TX_SEQ, GraphDB

N = 30


def _coact(k: int, w: float) -> pa.Table:
    return pa.table({"from": [f"t{i}" for i in range(k)], "to": [f"t{(i + 1) % N}" for i in range(k)],
                     "weight": [w] * k, "last_ts": [1.0] * k, "co_count": [1] * k})


def _graph(path: Path) -> GraphDB:
    g = GraphDB(path)
    g.execute("UNWIND $u AS x CREATE (:Turn {uid: x})", {"u": [f"t{i}" for i in range(N)]})
    return g


def _publish(path: Path, seq: int, ops: list[tuple[str, str, pa.Table]]) -> None:
    """Plant the redo folder of graph file ``path`` in the documented format (Arrow files +
    redo.json), as a crash after the commit of transaction ``seq`` leaves it."""
    d = Path(str(path) + ".redo")
    d.mkdir()
    spec = []
    for k, (kind, table, data) in enumerate(ops):
        with ipc.new_file(d / f"{k:03d}.arrow", data.schema) as w:
            w.write_table(data)
        spec.append([kind, table, f"{k:03d}.arrow"])
    (d / "redo.json").write_text(json.dumps({"seq": seq, "ops": spec}), "utf-8")


def test_a_committed_copy_that_kuzu_lost_is_restored_once(tmp_path: Path) -> None:
    path = tmp_path / "graph.kuzu"
    g = _graph(path)
    edges = _coact(20, 0.5)
    with g.transaction():  # committed normally: the folder is gone afterwards
        g.copy("COACT", edges)
        g.meta_set("journal_seq", "7")
    assert not g.redo_path.exists()
    seq = int(g.meta_get(TX_SEQ) or 0)
    assert seq == 1  # counts the transactions that had a COPY
    # what the crash left: Meta says committed, the COPY's rows are partly gone
    g.execute("MATCH (a:Turn)-[e:COACT]->(b:Turn) WHERE a.uid IN ['t3', 't4', 't5'] DELETE e")
    g.close()
    g = GraphDB(path)
    assert not g.redone
    g.close()
    _publish(path, seq, [("copy", "COACT", edges)])
    g = GraphDB(path)
    assert g.redone == {"COACT": 3}
    assert not g.redo_path.exists()
    got = g.rows("MATCH (a)-[e:COACT]->(b) RETURN a.uid AS s, b.uid AS d, e.weight AS w "
                 "ORDER BY s, d")
    assert len(got) == 20 and {r["w"] for r in got} == {0.5}
    g.close()
    g = GraphDB(path)  # nothing left to do: no duplicate on the next open
    assert not g.redone and g.count("COACT") == 20
    g.close()


def test_a_replace_is_restored_exactly_and_an_uncommitted_folder_is_dropped(
        tmp_path: Path) -> None:
    path = tmp_path / "graph.kuzu"
    g = _graph(path)
    with g.transaction():
        g.copy("COACT", _coact(10, 0.1))
    with g.transaction():
        g.replace("COACT", _coact(25, 0.9))
    assert g.count("COACT") == 25
    seq = int(g.meta_get(TX_SEQ) or 0)
    # the harness's case: the DELETE replayed, the COPY lost -> no edge at all
    g.execute("MATCH ()-[e:COACT]->() DELETE e")
    g.close()
    _publish(path, seq, [("replace", "COACT", _coact(25, 0.9))])
    g = GraphDB(path)
    assert g.redone == {"COACT": 25}
    assert g.count("COACT") == 25
    assert {r["w"] for r in g.rows("MATCH ()-[e:COACT]->() RETURN e.weight AS w")} == {0.9}
    # a folder of a transaction that never committed (Meta's seq is older): dropped
    g.close()
    _publish(path, seq + 1, [("copy", "COACT", _coact(3, 5.0))])
    g = GraphDB(path)
    assert not g.redone and not g.redo_path.exists()
    assert g.count("COACT") == 25
    g.close()
    # a folder whose redo.json never got written (killed while publishing): dropped too
    Path(str(path) + ".redo").mkdir()
    (tmp_path / "graph.kuzu.redo.tmp").mkdir()
    g = GraphDB(path)
    assert not g.redo_path.exists() and not (tmp_path / "graph.kuzu.redo.tmp").exists()
    assert g.count("COACT") == 25
    g.close()


def test_a_read_only_open_leaves_the_folder_and_doctor_names_it(tmp_path: Path) -> None:
    import akasha_explorer as ak
    store = tmp_path / "s"
    ak.open(store).close()
    path = store / "graph.kuzu"
    g = GraphDB(path)
    g.execute("CREATE (:Session {uid: 's1'})")
    cols = [r["name"] for r in g.rows("CALL table_info('Session') RETURN *")]
    row = g.arrow("MATCH (s:Session) RETURN " + ", ".join(f"s.{c} AS {c}" for c in cols))
    g.execute("MATCH (s:Session) DELETE s")
    with g.transaction():
        g.copy("Session", row)
    seq = int(g.meta_get(TX_SEQ) or 0)
    g.execute("MATCH (s:Session {uid: 's1'}) DELETE s")
    g.close()
    # COPY is positional: the redo copy need not carry the property names
    _publish(path, seq, [("copy", "Session", row.rename_columns(
        [f"c{i}" for i in range(row.num_columns)]))])
    with ak.open(store, read_only=True) as mem:
        assert mem.store.graph.redo_path.exists()
        assert "graph_redo" in mem.doctor().kinds()
    with ak.open(store) as mem:
        assert mem.store.graph.redone == {"Session": 1}
        assert mem.doctor().clean


CHILD = textwrap.dedent("""
    import sys, pyarrow as pa
    from akasha_explorer.graphdb.kuzu_db import GraphDB
    g = GraphDB(sys.argv[1])
    k = int(g.meta_get("round", "0") or 0)
    n = 400
    while True:
        k += 1
        with g.transaction():
            g.replace("COACT", pa.table({
                "from": [f"t{i % 30}" for i in range(n)], "to": [f"t{(i * 7 + k) % 30}" for i in range(n)],
                "weight": [float(k)] * n, "last_ts": [1.0] * n, "co_count": [k] * n}))
            g.meta_set("round", str(k))
        print(k, flush=True)
""")


@pytest.mark.slow
def test_a_transaction_killed_anywhere_is_all_or_nothing(tmp_path: Path) -> None:
    """Workers rewriting a rel table in a loop are killed at random moments; after each
    reopen the table holds exactly one round's rows (the acknowledged one or the one in
    flight), whatever kuzu's WAL replay did."""
    import random
    path = tmp_path / "graph.kuzu"
    _graph(path).close()
    rng = random.Random(5)
    root = Path(__file__).resolve().parent.parent
    for _ in range(8):
        p = subprocess.Popen([sys.executable, "-c", CHILD, str(path)], cwd=root,
                             stdout=subprocess.PIPE, text=True)
        assert p.stdout is not None
        first = p.stdout.readline()
        assert first.strip(), "worker died"
        time.sleep(rng.uniform(0.0, 0.4))
        os.kill(p.pid, signal.SIGKILL)
        p.wait()
        acked = int([first, *p.stdout.read().split()][-1])
        g = GraphDB(path)
        rounds = {r["w"] for r in g.rows("MATCH ()-[e:COACT]->() RETURN e.weight AS w")}
        meta = int(g.meta_get("round") or 0)
        assert g.count("COACT") == 400, (acked, meta, rounds)
        assert rounds == {float(meta)} and meta in (acked, acked + 1)
        assert not g.redo_path.exists()
        g.close()
