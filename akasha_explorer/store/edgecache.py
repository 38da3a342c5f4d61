"""The COACT edges as the last writer left them, beside the stores (issue 14): what the
mirror's open reads instead of every edge from Kuzu, for stores of at least
``EDGE_CACHE_MIN_EDGES`` edges (measured at 3M edges: the Kuzu read and its mapping take
1.5–2.5 s of an open and leave ~200 MB in Kuzu's buffer pool; the file ~0.2 s).

The file ``edges.arrow`` (Arrow IPC, uncompressed, read memory-mapped) holds the alive
edges as :func:`~akasha_explorer.graphdb.turns.coact_edges` gives them by ``ord`` — columns
``s``, ``d``, ``w``, ``t``, ``c`` — sorted by ``(s, d)``, and in its schema metadata a
random ``token``, the ``journal_seq`` Kuzu had recorded, and the number of Turns.

It is trusted only while Kuzu agrees: a writer's close, after its checkpoint, writes the
file and then records its token in Kuzu's Meta table (:data:`TOKEN_KEY`); a writer's open
reads the token and *clears* it before anything else can change Kuzu. So an open store, a
process that died, or any other writer since (which cleared it in turn) leave no valid
token, and the next open reads Kuzu as before. A file whose token, ``journal_seq`` or Turn
count differs from Kuzu's is ignored.
"""

from __future__ import annotations

import logging
import os
import secrets
from pathlib import Path

import numpy as np
import pyarrow as pa
from pyarrow import ipc

from .._fs import fsync_dir

__all__ = ["FILE", "TOKEN_KEY", "read", "remove", "turns_of", "write"]

log = logging.getLogger(__name__)

FILE = "edges.arrow"
TOKEN_KEY = "edges_cache"
"""The Meta key holding the token of the file Kuzu agrees with ("" or absent: none)."""


def read(folder: Path, *, token: str | None, journal_seq: str | None) -> pa.Table | None:
    """The cached edges (columns as :func:`~akasha_explorer.graphdb.turns.coact_edges` by
    ord), or None when there is no file or it is not the one Kuzu names (the caller
    checks :func:`turns_of` against the Turns it reads)."""
    path = Path(folder) / FILE
    if not token or not path.is_file():
        return None
    try:
        with pa.memory_map(str(path)) as source:
            table = ipc.open_file(source).read_all()
    except (OSError, pa.ArrowInvalid) as e:
        log.warning("edge cache %s unreadable (%s); reading the edges from Kuzu", path, e)
        return None
    meta = {k.decode(): v.decode() for k, v in (table.schema.metadata or {}).items()}
    if (meta.get("token"), meta.get("journal_seq")) != (token, journal_seq or "0"):
        return None
    return table


def turns_of(table: pa.Table) -> int:
    """How many Turns Kuzu held when the file was written."""
    return int((table.schema.metadata or {}).get(b"turns", b"-1"))


def write(folder: Path, ords: np.ndarray, src: np.ndarray, dst: np.ndarray, w: np.ndarray,
          last_ts: np.ndarray, co_count: np.ndarray, *, journal_seq: str | None,
          turns: int) -> str:
    """Write the edges ``src -> dst`` (mirror rows; ``ords`` maps rows to Turn ords) and
    return the new token (to record in Kuzu once this returns: the file is durable)."""
    so, do = ords[src], ords[dst]
    order = np.lexsort((do, so))
    token = secrets.token_hex(8)
    table = pa.table({"s": so[order], "d": do[order], "w": w[order], "t": last_ts[order],
                      "c": co_count[order]}).replace_schema_metadata(
        {"token": token, "journal_seq": journal_seq or "0", "turns": str(turns)})
    path = Path(folder) / FILE
    tmp = path.with_suffix(".arrow.tmp")
    with pa.OSFile(str(tmp), "wb") as sink, ipc.new_file(sink, table.schema) as writer:
        writer.write_table(table)
    fd = os.open(tmp, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, path)
    fsync_dir(path.parent)
    return token


def remove(folder: Path) -> None:
    """Delete the file (a store below the size that keeps one)."""
    path = Path(folder) / FILE
    if path.exists():
        path.unlink()
