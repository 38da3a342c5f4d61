"""Process helpers at the bottom of the package (they import nothing of ours): glibc
(:func:`libc`), handing the C heap's free pages back to the system (:func:`trim_heap`) and
the resident size (:func:`resident_bytes`). The query layer reopens Kuzu by them and the
store hands back a bulk load's memory (:mod:`akasha_explorer.store.heap`), so they live
under both."""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import os
import sys

__all__ = ["libc", "resident_bytes", "trim_heap"]


@functools.lru_cache(maxsize=1)
def libc() -> ctypes.CDLL | None:
    """The C library (Linux only; None elsewhere or when it cannot be loaded)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
    except OSError:
        return None


def trim_heap() -> None:
    """Give the C heap's free pages back to the system (glibc's ``malloc_trim``; a no-op
    elsewhere: musl has none)."""
    trim = getattr(libc(), "malloc_trim", None)
    if trim is not None:
        trim(0)


def resident_bytes() -> int | None:
    """The process's resident set in bytes (``/proc``; None where there is none).

    >>> n = resident_bytes(); n is None or n > 0
    True
    """
    try:
        with open("/proc/self/statm", "rb") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None
