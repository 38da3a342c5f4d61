"""One writer per store: an exclusive ``flock`` on ``<store>/writer.lock``.

The lock file holds the holder's pid, host and start time, so a second writer is refused
at once with a message naming the holder. The OS drops the lock when the process dies
(even by SIGKILL), so a crash never leaves a stale lock behind.

Readers take no lock of ours; Kuzu's own file lock decides (measured with kuzu 0.11.3:
any number of read-only processes together, or one read-write process, never both), so a
read-only open while a writer holds the store is refused by :meth:`WriterLock.graph_busy`
with the writer named. LanceDB would allow it (readers see the last committed version).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import fcntl
import json
import os
import socket
from pathlib import Path
from typing import IO

from .._fs import os_error
from ..errors import StoreLocked

__all__ = ["WriterLock"]


class WriterLock:
    """Exclusive, non-blocking writer lock of a store folder."""

    def __init__(self, folder: Path) -> None:
        self.path = Path(folder) / "writer.lock"
        self._fh: IO[str] | None = None
        self._info: dict[str, object] = {}

    def holder(self) -> dict[str, object]:
        """What the lock file says about its holder (may be stale if nobody holds it)."""
        try:
            return dict(json.loads(self.path.read_text("utf-8") or "{}"))
        except (OSError, ValueError):
            return {}

    def acquire(self) -> None:
        """Take the lock or raise :class:`StoreLocked` naming the holder (a
        :class:`StoreError` when the folder cannot hold a lock file: read-only, no access)."""
        for _ in range(10):
            try:
                fh = open(self.path, "a+", encoding="utf-8")  # noqa: SIM115 - until release()
            except OSError as e:
                raise os_error(e, self.path.parent, "take the writer lock of the store") from None
            try:
                fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                fh.close()
                h = self.holder()
                doing = ("being created by" if (self.path.parent / "akasha.creating").exists()
                         else "open for writing in")
                served = (f"; it is served at {h['url']}: ak.connect({h['url']!r})"
                          if h.get("url") else "")
                raise StoreLocked(
                    f"store {self.path.parent} is {doing} another process "
                    f"(pid {h.get('pid', '?')} on {h.get('host', '?')}, since "
                    f"{h.get('since', '?')}){served}; close it there (or wait for it to "
                    "finish), or open this store read-only") from None
            if self._same_file(fh):
                break
            fh.close()  # the file was removed or replaced between open and flock: again
        else:
            raise StoreLocked(f"the writer lock {self.path} keeps being replaced by another "
                              "process; retry")
        self._fh = fh
        self._info = {"pid": os.getpid(), "host": socket.gethostname(),
                      "since": dt.datetime.now(dt.UTC).isoformat(timespec="seconds")}
        self._write()

    def _write(self) -> None:
        assert self._fh is not None
        self._fh.seek(0)
        self._fh.truncate()
        self._fh.write(json.dumps(self._info))
        self._fh.flush()

    def annotate(self, **info: object) -> None:
        """Add to what the lock file says about its holder (``url``: where the store is
        served, so a refused opener can connect there instead)."""
        if self._fh is None:
            raise StoreLocked(f"{self.path} is not held by this process")
        self._info.update(info)
        self._write()

    def _same_file(self, fh: IO[str]) -> bool:
        """True when ``self.path`` still names the file ``fh`` has open."""
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            return False
        mine = os.fstat(fh.fileno())
        return (st.st_ino, st.st_dev) == (mine.st_ino, mine.st_dev)

    def held(self) -> bool:
        """True when some process holds the writer lock now (probed without taking it)."""
        if self._fh is not None:
            return True
        try:
            fh = open(self.path, encoding="utf-8")  # noqa: SIM115
        except OSError:
            return False
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        finally:
            fh.close()  # closing drops a lock taken by the probe
        return False

    def graph_busy(self, *, read_only: bool, detail: str,
                   holder: tuple[str, int] | None = None) -> StoreLocked:
        """The error for a graph file Kuzu would not open: Kuzu 0.11 lets many processes
        read a database, or one write it, never both at once (measured across processes).
        ``holder`` is what Kuzu's own lock on the graph file says (``("write" | "read",
        pid)``, see :func:`akasha_explorer.graphdb.kuzu_db.graph_lock`): it names a writer
        even when that writer's ``writer.lock`` was deleted."""
        folder = self.path.parent
        kind, pid = holder or ("", 0)
        if read_only and self.held():
            h = self.holder()
            if h.get("url"):
                return StoreLocked(
                    f"store {folder} is served by another process (pid {h.get('pid', '?')}) "
                    f"at {h['url']}; connect to it: ak.connect({h['url']!r})")
            return StoreLocked(
                f"store {folder} is open for writing in another process (pid {h.get('pid', '?')}"
                f" on {h.get('host', '?')}, since {h.get('since', '?')}); Kuzu cannot read a "
                "database while another process writes it — close the writer, serve it "
                "(`akasha serve STORE`) and connect, or read through the writer's own Memory "
                "object")
        if kind == "write":
            return StoreLocked(
                f"store {folder} is open for writing in another process (pid {pid}), although "
                "its writer.lock does not show it: the lock file was deleted or replaced while "
                "that process held the store. Close that process and retry (never delete "
                "writer.lock of an open store)")
        if read_only:
            return StoreLocked(f"the graph of store {folder} is locked by another process "
                               f"({detail}); wait for it to finish")
        who = f" (pid {pid})" if kind == "read" else ""
        return StoreLocked(
            f"store {folder} is open read-only in another process{who} (a notebook, a viewer, "
            "`akasha stats` …); Kuzu lets a database be read by many processes or written by "
            f"one, not both — close the readers and retry ({detail})")

    def release(self) -> None:
        """Release the lock (idempotent)."""
        if self._fh is not None:
            with contextlib.suppress(OSError):
                self._fh.seek(0)
                self._fh.truncate()
                fcntl.flock(self._fh.fileno(), fcntl.LOCK_UN)
            self._fh.close()
            self._fh = None
