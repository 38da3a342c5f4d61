"""The graph schema's version and migrations (``graphdb/migrations.py``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import kuzu
import pytest

from akasha_explorer.graphdb.kuzu_db import GraphDB, _schema_statements
from akasha_explorer.graphdb.migrations import MIGRATIONS, SCHEMA_VERSION


def test_a_version_1_graph_is_migrated_to_the_current_schema(tmp_path: Path) -> None:
    """Build the version-1 graph (today's schema minus what each migration added), open it
    read-write: every migration runs in order, data survives, and the result has exactly
    the tables and columns of a new store."""
    old = tmp_path / "old.kuzu"
    db = kuzu.Database(str(old))
    c = kuzu.Connection(db)
    for stmt in _schema_statements():
        if stmt.startswith(("CREATE NODE TABLE Forgotten", "CREATE NODE TABLE Label",
                            "CREATE NODE TABLE CoactPruned")):
            continue  # added by migrations 2 -> 3, 3 -> 4 and 4 -> 5
        c.execute(stmt.replace(", slot STRING)", ")"))  # Triple.slot: migration 1 -> 2
    c.execute("CREATE (:Meta {key: 'schema_version', value: '1'})")
    c.execute("CREATE (:Triple {uid: 't1', predicate: 'likes', status: 'approved'})")
    c.close()
    db.close()
    assert sorted(MIGRATIONS) == list(range(1, SCHEMA_VERSION))
    g = GraphDB(old)
    assert g.schema_version == SCHEMA_VERSION
    assert g.rows("MATCH (t:Triple) RETURN t.uid AS u, t.slot AS s") == [{"u": "t1", "s": ""}]
    new = GraphDB(tmp_path / "new.kuzu")

    def shape(x: GraphDB) -> dict[str, list[str]]:
        return {t: [r["name"] for r in x.rows(f"CALL table_info('{t}') RETURN name")]
                for t in sorted(r["name"] for r in x.rows("CALL show_tables() RETURN name"))}

    assert shape(g) == shape(new)
    g.close()
    new.close()


def test_the_database_is_opened_again_after_many_checkpoints(tmp_path: Path) -> None:
    """Kuzu keeps memory per checkpoint until its database closes, so a writer reopens it
    every REOPEN_AFTER checkpoints, before a write: nothing is lost, writes go on."""
    from akasha_explorer.graphdb.kuzu_db import REOPEN_AFTER

    g = GraphDB(tmp_path / "g.kuzu", reopen_growth=1 << 40)   # the count alone
    for k in range(REOPEN_AFTER + 1):   # each its own transaction, checkpointed
        g.meta_set("k", str(k))
    assert g.reopened == 1
    assert g.meta_get("k") == str(REOPEN_AFTER)
    with g.transaction():
        g.meta_set("k", "in a transaction")
    assert _read_again(g, "k") == "in a transaction"


def _read_again(g: GraphDB, key: str) -> str | None:
    """Close ``g``, then read Meta ``key`` from a fresh read-only open (what reached the
    file, not what ``g`` kept)."""
    g.close()
    again = GraphDB(g.path, read_only=True)
    try:
        return again.meta_get(key)
    finally:
        again.close()


def test_the_database_is_opened_again_once_the_process_grew(tmp_path: Path) -> None:
    """Kuzu's buffer pool keeps every page a checkpoint touched, so a writer also reopens
    once the process grew REOPEN_GROWTH since its first checkpoint, however few checkpoints
    ran — counted from that checkpoint, and from the next one after a reopen."""
    from akasha_explorer._proc import resident_bytes
    if resident_bytes() is None:
        pytest.skip("no /proc: the resident size is not known here")
    # a threshold below any change (the resident size may also shrink): every checkpoint
    # after the first counts as grown
    g = GraphDB(tmp_path / "g.kuzu", reopen_growth=-(1 << 40))
    for _ in range(3):      # the open's own checkpoints (schema) count too
        if g.reopened:
            break
        g.meta_set("k", "settle")
    assert g.reopened == 1  # long before REOPEN_AFTER checkpoints
    for k in range(6):      # a write checkpoints: the first after a reopen is the base,
        g.meta_set("k", str(k))  # the next has grown, the one after reopens first
    assert g.reopened == 1 + 3
    assert g.meta_get("k") == "5"
    g.close()
    big = GraphDB(tmp_path / "h.kuzu", reopen_growth=1 << 40)   # out of reach
    for k in range(6):
        big.meta_set("k", str(k))
    assert big.reopened == 0
    big.close()


def test_a_store_checkpoint_gives_kuzus_memory_back_at_once(mem: Any) -> None:
    """The pages an ingest's replay touched are given back when the store's checkpoint is
    done (the ingest's last step), not kept until the next write: with any growth due, the
    graph is reopened by the checkpoint itself and the memory reads the same afterwards."""
    g = mem.store.graph
    g.reopen_after, g.reopen_growth = 1, 1 << 40   # every checkpoint makes a reopen due
    rows = [{"role": r, "content": f"{r} says hello about the garden {k}"}
            for k in range(3) for r in ("user", "assistant")]
    mem.ingest(rows, session="s1", replay=True, progress=False)
    before = g.reopened
    mem.add_turn("and the roses?", "they bloom in June", session="s1")
    mem.store.checkpoint()          # folds the turn into Kuzu: two checkpoints at least
    assert g.reopened > before and not g.reopen_due
    assert mem.store.graph.count("Turn") == 4
    hits = mem.recall("roses bloom").activation.uids
    assert hits, "the reopened graph still answers"


def test_a_transactions_meta_values_reach_other_threads_at_its_commit(tmp_path: Path) -> None:
    """Meta values are kept (the request path reads them without a statement): another
    thread reads the committed value while a transaction is open — without waiting for
    it — and the new one once it committed; a rolled-back value is nowhere; a fresh open
    reads what was committed."""
    import threading

    g = GraphDB(tmp_path / "g.kuzu")
    g.meta_set("k", "1")
    inside, go = threading.Event(), threading.Event()
    errors: list[BaseException] = []

    def writer() -> None:
        try:
            with g.transaction():
                g.meta_set("k", "2")
                assert g.meta_get("k") == "2"   # its own write, inside
                inside.set()
                assert go.wait(60)
        except BaseException as e:
            errors.append(e)
            inside.set()

    t = threading.Thread(target=writer)
    t.start()
    assert inside.wait(60)
    during = g.meta_get("k")
    go.set()
    t.join(timeout=60)
    assert not errors and during == "1" and g.meta_get("k") == "2"

    def undone() -> None:
        with g.transaction():
            g.meta_set("k", "3")
            g.meta_delete("other")
            raise RuntimeError("undo")

    with pytest.raises(RuntimeError, match="undo"):
        undone()
    assert g.meta_get("k") == "2"
    g.meta_delete("k")
    assert g.meta_get("k", "none") == "none"
    g.meta_set("k", "4")
    assert _read_again(g, "k") == "4"


def test_a_statement_of_another_thread_waits_for_an_exclusive_block(tmp_path: Path) -> None:
    """One thread at a time uses the connection: a fold's ``exclusive`` block keeps another
    thread's statement out until it ends (the waiting turns it writes are never seen both
    in the graph and still waiting)."""
    import threading

    g = GraphDB(tmp_path / "g.kuzu")
    order: list[str] = []

    def other() -> None:
        g.rows("RETURN 1 AS x")
        order.append("other")

    t = threading.Thread(target=other)
    with g.exclusive():
        t.start()
        t.join(timeout=0.5)     # a statement takes a millisecond: it is waiting
        order.append("exclusive ends")
    t.join(timeout=60)
    assert order == ["exclusive ends", "other"]
    g.close()
