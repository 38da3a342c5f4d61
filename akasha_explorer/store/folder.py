"""The store folder itself: checking a path, and creating a store so that a kill at any
moment leaves nothing a person has to ``rm -rf``.

**Paths.** :func:`store_path` turns what a user typed into an absolute folder path, or a
:class:`~akasha_explorer.errors.StoreError` that says what is wrong (a NUL, a symbolic link
loop, a file or device where the folder should be, a file among its parents).

**Creation** (``open`` of a new store, ``akasha ingest NEW``, ``akasha import``) is
*claimed* first — :func:`claim`: the folder is made, its writer lock taken, and a marker
file ``akasha.creating`` written before anything else; the manifest ``akasha.json`` comes
last and the marker is removed after it (:func:`finish`). So a folder without a manifest
whose entries are only files that creation writes, and that has the marker (or holds
nothing but ``writer.lock``, a kill before the marker), is a **half-made store**: nothing
was ever stored in it (no ingest runs before the manifest exists). The next creation at
that path — an ingest, an import, or ``akasha doctor --repair`` — discards it under the
lock and says so (:func:`discard`); a folder holding anything else is never touched.
Two processes creating one store: the second finds the lock taken and is told who holds it.

>>> import tempfile, pathlib
>>> root = pathlib.Path(tempfile.mkdtemp())
>>> (root / "half").mkdir(); _ = (root / "half" / "writer.lock").write_text("")
>>> _ = (root / "half" / "graph.kuzu").write_bytes(b"x")
>>> kind(root / "half"), kind(root / "nothing"), kind(root)
('foreign', 'missing', 'foreign')
>>> _ = (root / "half" / CREATING).write_text("{}")
>>> kind(root / "half")
'half-made'
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import logging
import os
import shutil
from pathlib import Path

from .._fs import fsync_dir, os_error
from ..errors import StoreError
from .lock import WriterLock

__all__ = ["CREATING", "CREATION_FILES", "abandon", "claim", "describe", "discard", "finish",
           "kind", "remove_half_made", "store_path"]

log = logging.getLogger(__name__)

CREATING = "akasha.creating"
"""Marker file: this folder is a store being created (removed once the manifest exists)."""
CREATION_FILES = frozenset({
    "writer.lock", CREATING, "akasha.json.tmp", "graph.kuzu", "graph.kuzu.wal",
    "graph.kuzu.shadow", "graph.kuzu.lock", "graph.kuzu.redo", "graph.kuzu.redo.tmp",
    "vectors", "journal.jsonl", "journal.tmp"})
"""Every entry creating a store (or importing one) may leave before its manifest exists."""


def store_path(path: str | Path) -> Path:
    """``path`` made absolute (``~`` and symbolic links resolved), or a clear
    :class:`StoreError` when it can never be a store folder.

    >>> store_path("/dev/null")
    Traceback (most recent call last):
    ...
    akasha_explorer.errors.StoreError: /dev/null is not a folder (it is a device); ...
    """
    text = str(path)
    if "\x00" in text:
        raise StoreError(f"the store path {text!r} contains a NUL character")
    if not text.strip():
        raise StoreError("the store path is empty")
    try:
        p = Path(text).expanduser().resolve()
    except RuntimeError as e:  # Python 3.11: "Symlink loop from ..."
        raise StoreError(f"cannot use {text} as a store: {e}; a symbolic link in the path "
                         "points back at itself — give the real path") from None
    except OSError as e:
        raise os_error(e, text, "use the path") from None
    try:
        st = p.stat()
    except (FileNotFoundError, NotADirectoryError):
        st = None
    except OSError as e:
        raise os_error(e, p, "use the path") from None
    if st is not None and not os.path.isdir(p):
        what = "a file" if os.path.isfile(p) else "a device" if text.startswith("/dev/") \
            or p.is_char_device() or p.is_block_device() else "not a folder"
        raise StoreError(f"{p} is not a folder (it is {what}); a memory store is a folder — "
                         "pick another path")
    if st is None:
        for parent in p.parents:
            if parent.exists():
                if not parent.is_dir():
                    raise StoreError(f"{parent} is a file, so no store can be made at {p}; "
                                     "pick another path")
                break
    return p


def kind(path: Path) -> str:
    """What the folder at ``path`` is: ``store`` (has a manifest), ``missing``, ``empty``,
    ``half-made`` (see the module docstring) or ``foreign`` (anything else: not ours)."""
    if (path / "akasha.json").is_file():
        return "store"
    if not path.exists():
        return "missing"
    if not path.is_dir():
        return "foreign"
    names = {p.name for p in path.iterdir()}
    if not names:
        return "empty"
    if names <= CREATION_FILES and (CREATING in names or names == {"writer.lock"}):
        return "half-made"
    return "foreign"


def describe(path: Path) -> str:
    """Why ``path`` is not a store that can be opened read-only (for error messages)."""
    k = kind(path)
    if k == "half-made":
        return (f"{path} is a half-made memory store: its creation (an ingest into a new store "
                "or an import) was interrupted before it finished, so nothing was stored in it; "
                f"`akasha doctor {path} --repair` removes it, and an ingest or import into it "
                "makes a new store there")
    if k in ("missing", "empty"):
        return f"no memory store at {path}"
    return (f"{path} is not a memory store (no akasha.json); it holds "
            f"{_listing(path)} — pick the store's own folder")


def _listing(path: Path, n: int = 4) -> str:
    names = sorted(p.name for p in path.iterdir())
    return ", ".join(names[:n]) + (f" and {len(names) - n} more" if len(names) > n else "")


def claim(path: Path) -> tuple[WriterLock, bool]:
    """Take ``path`` for writing: returns its writer lock (held) and whether a finished
    store is already there. Otherwise the folder is made, a half-made store in it is
    discarded (logged), and the :data:`CREATING` marker is written: the caller creates the
    store, writes its manifest last, then calls :func:`finish`.

    A folder holding anything but a store or a half-made one is refused untouched."""
    if kind(path) == "foreign":
        raise StoreError(f"{path} exists and is not an empty folder or a memory store (it holds "
                         f"{_listing(path)}); pick another path")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise os_error(e, path, "create the store folder") from None
    lock = WriterLock(path)
    lock.acquire()
    try:
        found = kind(path)  # again, under the lock: another process may have finished
        if found == "store":
            return lock, True
        if found == "foreign":  # files appeared between the first look and the lock
            raise StoreError(f"{path} is not an empty folder or a memory store (it holds "
                             f"{_listing(path)}); pick another path")
        if found == "half-made":
            gone = discard(path)
            if gone:
                log.warning("%s was a half-made store (an interrupted creation or import; "
                            "nothing had been stored in it): discarded %s and started again",
                            path, ", ".join(gone))
        marker = path / CREATING
        with open(marker, "w", encoding="utf-8") as fh:
            json.dump({"pid": os.getpid(),
                       "since": dt.datetime.now(dt.UTC).isoformat(timespec="seconds")}, fh)
            fh.flush()
            os.fsync(fh.fileno())
        fsync_dir(path)
    except OSError as e:
        lock.release()
        raise os_error(e, path, "create the store") from None
    except BaseException:
        lock.release()
        raise
    return lock, False


def discard(path: Path) -> list[str]:
    """Remove what a creation wrote in ``path`` (never ``writer.lock``, which the caller
    holds, nor anything creation does not write); returns the names removed."""
    gone = []
    for name in sorted(CREATION_FILES - {"writer.lock"}):
        p = path / name
        if p.is_dir() and not p.is_symlink():
            shutil.rmtree(p)
        elif p.exists() or p.is_symlink():
            p.unlink()
        else:
            continue
        gone.append(name)
    if gone:
        with contextlib.suppress(OSError):
            fsync_dir(path)
    return gone


def finish(path: Path) -> None:
    """The manifest is written: the store exists; drop the :data:`CREATING` marker."""
    with contextlib.suppress(FileNotFoundError):
        (path / CREATING).unlink()
        fsync_dir(path)


def abandon(path: Path, lock: WriterLock, *, made: bool) -> None:
    """A creation failed with an error (not a kill): remove what it wrote, release the
    lock, and remove the folder too when the creation ``made`` it and it is empty now."""
    with contextlib.suppress(OSError):
        discard(path)
    lock.release()
    with contextlib.suppress(OSError):
        (path / "writer.lock").unlink()
    if made:
        with contextlib.suppress(OSError):
            path.rmdir()  # only when empty: another process may have started in it


def remove_half_made(path: Path) -> list[str]:
    """``akasha doctor --repair`` on a half-made store: remove everything its interrupted
    creation wrote (under the writer lock; refused while another process holds it) and
    return the names removed. The folder itself stays, empty."""
    lock = WriterLock(path)
    lock.acquire()
    try:
        if kind(path) != "half-made":
            return []
        gone = discard(path)
    finally:
        lock.release()
    with contextlib.suppress(FileNotFoundError):
        (path / "writer.lock").unlink()
        gone.append("writer.lock")
    return gone
