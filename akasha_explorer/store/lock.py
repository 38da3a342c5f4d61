"""One writer per store: an exclusive ``flock`` on ``<store>/writer.lock``.

The lock file holds the holder's pid, host and start time, so a second writer is refused
at once with a message naming the holder. The OS drops the lock when the process dies
(even by SIGKILL), so a crash never leaves a stale lock behind.
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

from ..errors import StoreLocked

__all__ = ["WriterLock"]


class WriterLock:
    """Exclusive, non-blocking writer lock of a store folder."""

    def __init__(self, folder: Path) -> None:
        self.path = Path(folder) / "writer.lock"
        self._fh: IO[str] | None = None

    def holder(self) -> dict[str, object]:
        """What the lock file says about its holder (may be stale if nobody holds it)."""
        try:
            return dict(json.loads(self.path.read_text("utf-8") or "{}"))
        except (OSError, ValueError):
            return {}

    def acquire(self) -> None:
        fh = open(self.path, "a+", encoding="utf-8")  # noqa: SIM115 - held until release()
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            fh.close()
            h = self.holder()
            raise StoreLocked(
                f"store {self.path.parent} is open for writing in another process "
                f"(pid {h.get('pid', '?')} on {h.get('host', '?')}, since {h.get('since', '?')}); "
                "close it there, or open this store read-only") from None
        fh.seek(0)
        fh.truncate()
        fh.write(json.dumps({"pid": os.getpid(), "host": socket.gethostname(),
                             "since": dt.datetime.now(dt.UTC).isoformat(timespec="seconds")}))
        fh.flush()
        self._fh = fh

    def release(self) -> None:
        if self._fh is not None:
            with contextlib.suppress(OSError):
                self._fh.seek(0)
                self._fh.truncate()
                fcntl.flock(self._fh.fileno(), fcntl.LOCK_UN)
            self._fh.close()
            self._fh = None
