"""The redo folder of a Kuzu transaction (``graph.kuzu.redo``; why: :mod:`.kuzu_db`).

kuzu 0.11.3's WAL replay after a SIGKILL loses parts of *committed* transactions (the rows
of a ``COPY`` vanished while the transaction's other writes were replayed). So every
``COPY`` of a transaction is written here — Arrow IPC, fsync'ed, published by a rename —
before ``COMMIT`` with the transaction's sequence number, and removed after the checkpoint.
The next read-write open reads a leftover folder (:meth:`RedoFolder.read`) and
:class:`~.kuzu_db.GraphDB` puts back the rows a committed transaction lost.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Sequence
from pathlib import Path

import pyarrow as pa
import pyarrow.ipc as ipc

from .._fs import fsync_dir

__all__ = ["RedoFolder", "RedoOp"]

RedoOp = tuple[str, str, pa.Table]
"""One bulk write of a transaction: ``("copy" | "replace", table, rows)``."""


class RedoFolder:
    """The redo folder beside the database file ``graph_path``."""

    def __init__(self, graph_path: Path) -> None:
        self.path = Path(str(graph_path) + ".redo")
        """The folder of the transaction in flight (absent between transactions)."""
        self._tmp = Path(str(graph_path) + ".redo.tmp")

    def exists(self) -> bool:
        return self.path.exists()

    def write(self, seq: int, ops: Sequence[RedoOp]) -> None:
        """Write ``ops``' tables, fsync'ed, then publish the folder by rename."""
        tmp = self._tmp
        shutil.rmtree(tmp, ignore_errors=True)
        shutil.rmtree(self.path, ignore_errors=True)
        tmp.mkdir()
        names = []
        for k, (kind, table, data) in enumerate(ops):
            name = f"{k:03d}.arrow"
            with open(tmp / name, "wb") as fh:
                with ipc.new_file(fh, data.schema) as w:
                    w.write_table(data)
                fh.flush()
                os.fsync(fh.fileno())
            names.append([kind, table, name])
        with open(tmp / "redo.json", "w", encoding="utf-8") as fh:
            json.dump({"seq": seq, "ops": names}, fh)
            fh.flush()
            os.fsync(fh.fileno())
        fsync_dir(tmp)
        os.replace(tmp, self.path)
        fsync_dir(self.path.parent)

    def read(self) -> tuple[int, list[RedoOp]] | None:
        """The sequence number and ops of a leftover folder, or None: none, or one never
        published whole (its transaction never committed). A half-written temporary
        folder is removed."""
        shutil.rmtree(self._tmp, ignore_errors=True)
        if not self.path.exists():
            return None
        try:
            spec = json.loads((self.path / "redo.json").read_text("utf-8"))
        except (OSError, ValueError):
            return None
        ops: list[RedoOp] = []
        for kind, table, name in spec["ops"]:
            with ipc.open_file(self.path / name) as r:
                ops.append((kind, table, r.read_all()))
        return int(spec["seq"]), ops

    def drop(self) -> None:
        """Remove the folder (its transaction checkpointed, or never committed)."""
        shutil.rmtree(self.path, ignore_errors=True)
