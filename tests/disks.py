"""Helpers of the tests that need a file system of their own (not a test module): a small
``tmpfs`` mounted for one test — to fill it up (a full disk) or remount it read-only.

Mounting needs root (or CAP_SYS_ADMIN); where the machine does not allow it the test is
skipped with the reason ``mount`` gave.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

import pytest


def _mount(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["mount", *args], capture_output=True, text=True, check=False)


@contextmanager
def tmpfs(path: Path, size_mb: int) -> Iterator[Path]:
    """A fresh ``tmpfs`` of ``size_mb`` MiB mounted at ``path`` for the block (skips the
    test when it cannot be mounted); unmounted afterwards."""
    path.mkdir(parents=True, exist_ok=True)
    try:
        r = _mount("-t", "tmpfs", "-o", f"size={size_mb}m,mode=0755", "tmpfs", str(path))
    except FileNotFoundError:
        pytest.skip("no `mount` command on this machine: cannot make a small file system")
    if r.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here (needs root or CAP_SYS_ADMIN): "
                    f"{r.stderr.strip() or r.returncode}")
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], capture_output=True, check=False)


def remount(path: Path, mode: str) -> None:
    """Remount the tmpfs at ``path`` ``ro`` or ``rw``."""
    r = _mount("-o", f"remount,{mode}", str(path))
    assert r.returncode == 0, r.stderr


def free_bytes(path: Path) -> int:
    """Bytes an unprivileged write may still use on the file system of ``path``."""
    st = os.statvfs(path)
    return st.f_bavail * st.f_frsize


def fill(path: Path, leave: int = 0) -> Path:
    """Fill the file system of folder ``path`` until only about ``leave`` bytes are free
    (``leave=0``: until a write fails with ENOSPC); returns the filler file."""
    filler = path / "filler.bin"
    chunk = b"\0" * (1 << 20)
    with open(filler, "ab", buffering=0) as fh:
        while True:
            room = free_bytes(path) - leave
            if room <= 0:
                break
            try:
                fh.write(chunk[: min(len(chunk), room)])
            except OSError:
                break
    if leave == 0:  # the last pages: one byte at a time until the file system says no
        with open(filler, "ab", buffering=0) as fh, suppress(OSError):
            for _ in range(1 << 16):
                fh.write(b"\0" * 4096)
    return filler
