"""Handing freed memory back to the operating system after a bulk load (issue 14).

Loading the mirror reads a few hundred MB of Arrow data from LanceDB and Kuzu and frees it
again; both allocators keep what was freed: Arrow's memory pool (mimalloc) until asked,
and glibc's heap — LanceDB's buffers come from the system allocator — below its trim
threshold. Measured at 100k nodes: 1.8 GB resident after the load, 0.87 GB after these two
calls (~20 ms).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import sys

import pyarrow as pa

__all__ = ["release_freed_memory"]


@functools.lru_cache(maxsize=1)
def _malloc_trim() -> object | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").malloc_trim
    except (OSError, AttributeError):  # not glibc (musl has no malloc_trim)
        return None


def release_freed_memory() -> None:
    """Return the memory Arrow's pool and the C heap hold free to the OS."""
    pa.default_memory_pool().release_unused()
    trim = _malloc_trim()
    if trim is not None:
        trim(0)  # type: ignore[operator]
