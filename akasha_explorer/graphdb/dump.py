"""Whole-database reads and the file rebuild: every table of a Kuzu database with its
properties (what a whole-store export writes), each table's rows, and :func:`rebuild`,
which copies every live row into a fresh file and swaps it in (a forget's purge: Kuzu
0.11 keeps deleted strings in its free pages)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from .._fs import GRAPH_RESERVE, ensure_free, size_of
from ..errors import StoreError
from .kuzu_db import TX_SEQ, GraphDB

__all__ = ["drop_scratch", "read_table", "rebuild", "scratch_copy", "tables"]


def tables(graph: GraphDB) -> list[dict[str, Any]]:
    """Kuzu tables with their properties (node tables first, in creation order); a rel
    table also names its ``src`` / ``dst`` tables and their primary keys."""
    out = []
    for t in graph.rows("CALL show_tables() RETURN id, name, type ORDER BY id"):
        props = [r["name"] for r in graph.rows(f"CALL table_info('{t['name']}') RETURN name "
                                               "ORDER BY `property id`")]
        item = {"name": t["name"], "type": t["type"], "props": props}
        if t["type"] == "REL":
            c = graph.rows(f"CALL show_connection('{t['name']}') RETURN *")
            if len(c) != 1:
                raise StoreError(f"rel table {t['name']} joins {len(c)} table pairs; "
                                 "export supports one")
            vals = list(c[0].values())
            item.update(src=vals[0], dst=vals[1], src_pk=vals[2], dst_pk=vals[3])
        out.append(item)
    return sorted(out, key=lambda t: t["type"] != "NODE")


def read_table(graph: GraphDB, t: dict[str, Any]) -> pa.Table:
    """Every row of table ``t`` (an item of :func:`tables`): a node table's properties in
    Kuzu's scan order (Meta without the file's own transaction counter); a rel table's
    ``_from``, ``_to`` primary keys then its properties, sorted (Kuzu's own order of rels
    is an artefact of how they were written)."""
    if t["type"] == "NODE":
        cols = ", ".join(f"n.`{p}` AS `{p}`" for p in t["props"])
        where = f" WHERE n.key <> '{TX_SEQ}'" if t["name"] == "Meta" else ""  # the file's own
        return graph.arrow(f"MATCH (n:`{t['name']}`){where} RETURN {cols}")
    rel_cols = [f"a.`{t['src_pk']}` AS _from", f"b.`{t['dst_pk']}` AS _to"]
    rel_cols += [f"e.`{p}` AS `{p}`" for p in t["props"]]
    data = graph.arrow(f"MATCH (a:`{t['src']}`)-[e:`{t['name']}`]->(b:`{t['dst']}`) "
                       f"RETURN {', '.join(rel_cols)}")
    keys = [c for c in data.column_names
            if not pa.types.is_nested(data.schema.field(c).type)]
    return data.sort_by([(c, "ascending") for c in keys]) if data.num_rows else data


def scratch_copy(g: GraphDB) -> GraphDB:
    """A checkpointed byte copy of ``g`` (``graph.kuzu.work``) opened read-write, for a
    change that must never reach ``g`` through Kuzu's WAL: a forget's deletes run on the
    copy, which :func:`rebuild` then swaps in. kuzu 0.11.3's WAL replay after a SIGKILL
    is not trustworthy for a ``DETACH DELETE`` (:meth:`GraphDB.transaction`); killed
    anywhere before the swap, ``g`` is as it was and the copy is a stale file (doctor's
    ``stale_files``)."""
    path = Path(g.path)
    work = path.with_name(path.name + ".work")
    _remove(work)
    ensure_free(path.parent, GRAPH_RESERVE + size_of(path), "copying the graph file")
    # every write of GraphDB is checkpointed (its WAL is empty between writes): the file
    # alone is the database
    shutil.copyfile(path, work)
    return GraphDB(work)


def drop_scratch(g: GraphDB) -> None:
    """Close a :func:`scratch_copy` and delete its files."""
    g.close()
    _remove(Path(g.path))


def rebuild(old: GraphDB, replacing: GraphDB | None = None) -> GraphDB:
    """Copy every live row of ``old`` into a fresh file, swap it in atomically (a crash
    leaves the old graph or the new one, never none) and return it opened read-write;
    ``old`` is closed. With ``replacing`` (``old`` is its :func:`scratch_copy`), the fresh
    file replaces ``replacing``'s, which is closed, and ``old``'s files are deleted."""
    path = Path((replacing or old).path)
    tmp = path.with_name(path.name + ".rebuild")
    _remove(tmp)
    ensure_free(path.parent, GRAPH_RESERVE + 2 * size_of(Path(old.path)),
                "rebuilding the graph file")
    new = GraphDB(tmp)
    try:
        names = old.rows("CALL show_tables() RETURN name, type")
        for t in (r["name"] for r in names if r["type"] == "NODE"):
            cols = [r["name"] for r in old.rows(f"CALL table_info('{t}') RETURN *")]
            data = old.arrow(f"MATCH (x:{t}) RETURN " + ", ".join(f"x.{c} AS {c}" for c in cols))
            if t == "Meta":
                data = data.filter(pc.not_equal(data.column("key"), "schema_version"))
            new.copy(t, data)
        for t in (r["name"] for r in names if r["type"] == "REL"):
            conn = old.rows(f"CALL show_connection('{t}') RETURN *")[0]
            src, dst = conn["source table primary key"], conn["destination table primary key"]
            cols = [r["name"] for r in old.rows(f"CALL table_info('{t}') RETURN *")]
            data = old.arrow(f"MATCH (a)-[e:{t}]->(b) RETURN a.{src} AS _from, b.{dst} AS _to"
                             + "".join(f", e.{c} AS {c}" for c in cols))
            new.copy(t, data)
    except BaseException:
        new.close()
        _remove(tmp)
        raise
    new.close()
    old.close()  # a clean close folds and removes its WAL: the old file stands alone
    if replacing is not None:
        replacing.close()
    for suffix in (".wal", ".shadow"):
        _remove_file(Path(str(path) + suffix))
    os.replace(tmp, path)  # atomic: a crash leaves the old graph or the new one, never none
    for suffix in (".wal", ".shadow"):
        _remove(Path(str(tmp) + suffix))
    if replacing is not None:
        _remove(Path(old.path))
    return GraphDB(path)


def _remove_file(p: Path) -> None:
    if p.is_file():
        p.unlink()


def _remove(p: Path) -> None:
    for q in (p, *(Path(str(p) + s) for s in (".wal", ".shadow", ".lock", ".redo"))):
        if q.is_dir():
            shutil.rmtree(q)
        elif q.exists():
            q.unlink()
