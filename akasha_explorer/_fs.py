"""File-system helpers at the bottom of the package (they import nothing of ours but
:mod:`.errors`): a folder's entries made durable (:func:`fsync_dir`), an ``OSError`` turned
into a :class:`~akasha_explorer.errors.StoreError` that says what to do (:func:`os_error`),
and the free-space reserves and checks below. The query layer (``graphdb/``, ``vectors/``)
and the store both use them, so they live under both.

**Free space before writing** (issue 18, item 4): a write the disk cannot hold is refused
whole with :class:`~akasha_explorer.errors.DiskFull` *before* it starts.

Why before: kuzu 0.11.3 cannot survive ``ENOSPC`` — measured on a small tmpfs, a ``COPY``,
``COMMIT`` or ``CHECKPOINT`` that runs out of space throws, its rollback then fails with
"Invalid transaction type to rollback" and the process aborts (status 134) or segfaults
(139), sometimes with the failed ``COPY``'s rows visible; read-only opens then fail
("Couldn't replay shadow pages") until a writer opens the file. So every graph write
(:class:`~akasha_explorer.graphdb.GraphDB`) first checks that :data:`GRAPH_RESERVE` plus
:data:`WRITE_FACTOR` times its data is free, and the store-level operations check what
they will need as a whole (an ingest batch, a forget's rebuild of the graph file) before
touching anything. LanceDB reports ``ENOSPC`` as an error (no crash), which becomes
:class:`DiskFull` too; the journal truncates a half-written record and raises it.

What cannot be guarded: another process filling the disk between the check and Kuzu's
write. Then Kuzu may still abort the process; the next read-write open (e.g. ``akasha
doctor STORE --repair``) finishes Kuzu's recovery and the store is whole (every
acknowledged commit is in the journal).

>>> import tempfile
>>> ensure_free(tempfile.gettempdir(), 1, "a test write")
>>> ensure_free(tempfile.gettempdir(), 1 << 62, "a huge write")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
akasha_explorer.errors.DiskFull: a huge write needs about 4611686018427.4 MB free ...
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

from .errors import DiskFull, StoreError

__all__ = ["GRAPH_RESERVE", "WRITE_FACTOR", "disk_full", "ensure_free", "free_bytes",
           "fsync_dir", "os_error", "size_of"]

GRAPH_RESERVE = 32 << 20
"""Bytes kept free for any Kuzu write beyond its data (measured on a tmpfs: a first
ingest peaked at 18 MB of new files, a commit checkpoint at 6 MB; Kuzu grows its file
in steps of several MB)."""
WRITE_FACTOR = 4
"""Free space asked for per byte of data written (WAL, shadow pages, the file itself)."""


def free_bytes(path: str | Path) -> int:
    """Bytes an unprivileged process may still write on the file system of ``path`` (its
    nearest existing folder)."""
    p = Path(path)
    while not p.exists() and p != p.parent:
        p = p.parent
    st = os.statvfs(p)
    return st.f_bavail * st.f_frsize


def size_of(path: str | Path) -> int:
    """Bytes of a file, or of every file under a folder (0 when absent)."""
    p = Path(path)
    if p.is_file():
        return p.stat().st_size
    if not p.is_dir():
        return 0
    return sum(q.stat().st_size for q in p.rglob("*") if q.is_file())


def ensure_free(path: str | Path, need: int, doing: str) -> None:
    """Raise :class:`DiskFull` unless ``need`` bytes are free where ``path`` lives."""
    have = free_bytes(path)
    if have < need:
        raise DiskFull(f"{doing} needs about {need / 1e6:.1f} MB free on the disk of {path}, "
                       f"which has {have / 1e6:.1f} MB; free some space and retry — nothing "
                       "was changed")


def disk_full(e: BaseException) -> bool:
    """True when ``e`` says the disk (or a quota) is full — an ``OSError`` or LanceDB's
    and Kuzu's own errors, which carry it in their message."""
    if isinstance(e, OSError) and e.errno in (errno.ENOSPC, errno.EDQUOT):
        return True
    text = str(e)
    return "No space left on device" in text or "os error 28" in text \
        or "Disk quota exceeded" in text


def fsync_dir(folder: Path) -> None:
    """Make a created/renamed directory entry durable."""
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def os_error(e: OSError, path: Path | str, doing: str) -> StoreError:
    """A :class:`StoreError` for an ``OSError`` met while ``doing`` something at ``path``,
    saying what to do next (a full disk, a read-only file system, no permission …).

    >>> print(os_error(OSError(errno.EROFS, "Read-only file system"), "/s", "make a store"))
    cannot make a store at /s: read-only file system; open the store read-only, or copy it ...
    """
    advice = {
        errno.ENOSPC: "the disk is full; free some space and retry",
        errno.EDQUOT: "the disk quota is used up; free some space and retry",
        errno.EROFS: "open the store read-only, or copy it to a writable place",
        errno.EACCES: "check the folder's permissions",
        errno.EPERM: "check the folder's permissions",
        errno.ELOOP: "a symbolic link in the path points back at itself; give the real path",
        errno.ENOTDIR: "a part of the path is a file, not a folder; pick another path",
        errno.ENAMETOOLONG: "pick a shorter path",
    }.get(e.errno or 0, "check the path and retry")
    reason = (e.strerror or str(e)).lower()
    return StoreError(f"cannot {doing} at {path}: {reason}; {advice}")
