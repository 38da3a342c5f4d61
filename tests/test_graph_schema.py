"""The graph schema's version and migrations (``graphdb/migrations.py``)."""

from __future__ import annotations

from pathlib import Path

import kuzu

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

    g = GraphDB(tmp_path / "g.kuzu")
    for k in range(REOPEN_AFTER + 1):   # each its own transaction, checkpointed
        g.meta_set("k", str(k))
    assert g.reopened == 1
    assert g.meta_get("k") == str(REOPEN_AFTER)
    with g.transaction():
        g.meta_set("k", "in a transaction")
    g.close()
    again = GraphDB(tmp_path / "g.kuzu", read_only=True)
    assert again.meta_get("k") == "in a transaction"
    again.close()
