"""Whole-store export and import (SPEC §9): raw messages + graph state, without loss.

An export is a folder::

    export.json            format, version, the store manifest (settings, model,
                           tokenizer), graph schema version, row counts, sha256 per file
    messages.jsonl         every raw message verbatim, one JSON object per line (all
                           columns of the LanceDB ``messages`` table except the vector)
    vectors/messages.parquet   uid + vector of every message
    vectors/turns.parquet      the LanceDB ``turns`` table (node vectors)
    graph/<Table>.parquet  every Kuzu node table (all properties, in Kuzu's scan order) and
                           rel table (``_from``, ``_to`` primary keys, then its properties,
                           sorted: Kuzu's own order of rels is an artefact of how they were
                           written, and the mirror reads adjacency in a canonical order)
    journal.jsonl          only when a read-only store had an un-checkpointed journal

A writable store is checkpointed first, so the graph holds every committed change. Import
builds a fresh store folder from an export: same manifest, the rows copied back in the
same order (COPY from Arrow), the vectors bit for bit — so the imported store has the
same stats and replays the same recall traces. Files are checked against their sha256
before anything is written; an export from a newer graph schema is refused, an older one
is imported with the columns later schemas added left empty.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import logging
import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.parquet as pq

from .._fs import os_error
from ..errors import IntegrityError, InvalidInput, SchemaMismatch
from ..graphdb import SCHEMA_VERSION, GraphDB, dump
from ..graphdb.kuzu_db import TX_SEQ
from ..store.manifest import Manifest
from ..vectors import VectorDB, messages_schema, turns_schema
from ..vectors import queries as vq

if TYPE_CHECKING:
    from ..store.store import Store

__all__ = ["EXPORT_FORMAT", "EXPORT_VERSION", "export_store", "import_store"]

log = logging.getLogger(__name__)

EXPORT_FORMAT = "akasha-export"
EXPORT_VERSION = 1


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _empty_target(path: Path, what: str) -> None:
    if path.exists() and (not path.is_dir() or any(path.iterdir())):
        raise InvalidInput(f"{what} {path} exists and is not an empty folder; pick a new path")


def export_store(store: Store, out: str | Path) -> Path:
    """Write the whole ``store`` to the folder ``out`` (see the module docstring)."""
    target = Path(out).expanduser().resolve()
    _empty_target(target, "export folder")
    if not store.read_only:
        store.checkpoint()
    (target / "vectors").mkdir(parents=True, exist_ok=True)
    (target / "graph").mkdir(exist_ok=True)
    msgs = vq.messages(store.vectors)
    with open(target / "messages.jsonl", "w", encoding="utf-8", newline="\n") as fh:
        for row in msgs.drop_columns(["vector"]).to_pylist():
            fh.write(json.dumps(row, ensure_ascii=False, allow_nan=False) + "\n")
    pq.write_table(msgs.select(["uid", "vector"]), target / "vectors" / "messages.parquet")
    turns = vq.turns(store.vectors)
    pq.write_table(turns, target / "vectors" / "turns.parquet")
    counts = {"messages": msgs.num_rows, "turns": turns.num_rows}
    tables = dump.tables(store.graph)
    for t in tables:
        data = dump.read_table(store.graph, t)
        pq.write_table(data, target / "graph" / f"{t['name']}.parquet")
        counts[f"graph/{t['name']}"] = data.num_rows
    journal = Path(store.journal.path)
    if journal.exists() and journal.stat().st_size:
        shutil.copyfile(journal, target / "journal.jsonl")
    manifest = store.manifest.to_json()
    files = {str(p.relative_to(target)): _sha256(p)
             for p in sorted(target.rglob("*")) if p.is_file()}
    head = {"format": EXPORT_FORMAT, "version": EXPORT_VERSION,
            "created": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
            "source": str(store.path), "schema_version": SCHEMA_VERSION,
            "tables": [dict(t) for t in tables],
            "manifest": manifest, "counts": counts, "files": files}
    (target / "export.json").write_text(json.dumps(head, ensure_ascii=False, indent=1) + "\n",
                                        encoding="utf-8")
    log.info("exported %s to %s: %s", store.path, target, counts)
    return target


def _read_head(src: Path) -> dict[str, Any]:
    try:
        head = json.loads((src / "export.json").read_text("utf-8"))
    except (OSError, ValueError) as e:
        raise InvalidInput(f"{src} is not an akasha export (export.json: {e}); make one with "
                           "`akasha export STORE --format store --out PATH`") from e
    if head.get("format") != EXPORT_FORMAT:
        raise InvalidInput(f"{src}/export.json is not an {EXPORT_FORMAT} file")
    if int(head.get("version", 0)) > EXPORT_VERSION:
        raise SchemaMismatch(f"export {src} has format version {head['version']}; this code "
                             f"reads up to {EXPORT_VERSION}: upgrade akasha-explorer")
    if int(head.get("schema_version", 0)) > SCHEMA_VERSION:
        raise SchemaMismatch(f"export {src} comes from graph schema {head['schema_version']}, "
                             f"newer than this code ({SCHEMA_VERSION}): upgrade akasha-explorer")
    for rel, digest in head.get("files", {}).items():
        p = src / rel
        if Path(rel).is_absolute() or ".." in Path(rel).parts:
            raise IntegrityError(f"export {src} names a file outside itself ({rel!r}); it was "
                                 "not written by akasha — refusing to import it")
        if not p.is_file() or _sha256(p) != digest:
            raise IntegrityError(f"export file {p} is missing or does not match its sha256; "
                                 "the export is damaged — export the store again")
    return head


def _align(data: pa.Table, names: list[str]) -> pa.Table:
    """``data`` with exactly the columns ``names`` (in order); columns a newer schema added
    are null. A column the target does not know is an error."""
    extra = sorted(set(data.column_names) - set(names))
    if extra:
        raise SchemaMismatch(f"export has column(s) {', '.join(extra)} this graph schema lacks")
    cols = [data.column(n) if n in data.column_names else pa.nulls(data.num_rows)
            for n in names]
    return pa.table(dict(zip(names, cols, strict=True)))


def _import_graph(graph: GraphDB, src: Path, head: dict[str, Any]) -> None:
    here = {t["name"]: t for t in dump.tables(graph)}
    with graph.transaction():
        for t in head["tables"]:
            if not str(t.get("name", "")).isidentifier():
                raise IntegrityError(f"export table name {t.get('name')!r} is not a name")
            data = pq.read_table(src / "graph" / f"{t['name']}.parquet")
            mine = here.get(t["name"])
            if mine is None:
                raise SchemaMismatch(f"export table {t['name']} does not exist in this schema")
            if t["name"] == "Meta":
                for k, v in zip(data.column("key").to_pylist(), data.column("value").to_pylist(),
                                strict=True):
                    if k not in ("schema_version", TX_SEQ):
                        graph.meta_set(k, v)
                continue
            names = mine["props"] if t["type"] == "NODE" else ["_from", "_to", *mine["props"]]
            graph.copy(t["name"], _align(data, names))


def _messages(src: Path, dim: int) -> pa.Table:
    with open(src / "messages.jsonl", encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh if line.strip()]
    vec = pq.read_table(src / "vectors" / "messages.parquet")
    by_uid = dict(zip(vec.column("uid").to_pylist(), range(vec.num_rows), strict=True))
    missing = [r["uid"] for r in rows if r["uid"] not in by_uid]
    if missing:
        raise IntegrityError(f"messages without a vector in the export: {missing[:3]}")
    take = pa.array([by_uid[r["uid"]] for r in rows], pa.int64())
    schema = messages_schema(dim)
    cols = {f.name: pa.array([r.get(f.name) for r in rows], f.type)
            for f in schema if f.name != "vector"}
    cols["vector"] = vec.column("vector").take(take).cast(schema.field("vector").type)
    return pa.table(cols, schema=schema)


def import_store(src: str | Path, dst: str | Path) -> Path:
    """Build a new store at ``dst`` (a new or empty folder) from the export at ``src``.

    The export is read and checked before ``dst`` is touched. The folder is then claimed
    like any new store (:func:`akasha_explorer.store.folder.claim`: writer lock, creation
    marker, manifest last), so a second import racing into the same folder is refused
    with the holder named, and an import killed half-way leaves a *half-made* store that
    the next import (or ``akasha doctor --repair``) discards and says so."""
    from ..store import folder

    source = Path(src).expanduser().resolve()
    head = _read_head(source)
    target = folder.store_path(dst)
    if folder.kind(target) in ("store", "foreign"):
        raise InvalidInput(f"store folder {target} exists and is not an empty folder; pick a "
                           "new path")
    from ..store.paths import enclosing_store
    if enclosing_store(target.parent) is not None:
        raise InvalidInput(f"{target} is inside the memory store {enclosing_store(target.parent)}; "
                           "put the new store elsewhere")
    manifest = Manifest.from_json(head["manifest"], source)
    dim = manifest.dim
    messages = _messages(source, dim)
    turns = pq.read_table(source / "vectors" / "turns.parquet")
    turns = turns.select([f.name for f in turns_schema(dim)]).cast(turns_schema(dim))
    made = not target.exists()
    lock, exists = folder.claim(target)
    if exists:
        lock.release()
        raise InvalidInput(f"store folder {target} exists and is not an empty folder (another "
                           "process made a store there meanwhile); pick a new path")
    try:
        graph = GraphDB(target / "graph.kuzu")
        try:
            _import_graph(graph, source, head)
        finally:
            graph.close()
        vectors = VectorDB(target / "vectors", dim)
        try:
            vq.add_messages(vectors, messages)
            vq.add_turns(vectors, turns)
        finally:
            vectors.close()
        if (source / "journal.jsonl").exists():
            shutil.copyfile(source / "journal.jsonl", target / "journal.jsonl")
        manifest.write(target)  # last: no manifest means no store
        folder.finish(target)
    except BaseException as e:
        if not (target / "akasha.json").is_file():
            folder.abandon(target, lock, made=made)
        if isinstance(e, OSError):
            raise os_error(e, target, "import the store") from e
        raise
    finally:
        lock.release()
    log.info("imported %s into %s", source, target)
    return target
