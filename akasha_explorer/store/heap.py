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

__all__ = ["heap_in_use", "release_freed_memory"]


@functools.lru_cache(maxsize=1)
def _libc() -> ctypes.CDLL | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
    except OSError:
        return None


def _malloc_trim() -> object | None:
    return getattr(_libc(), "malloc_trim", None)  # not glibc (musl has no malloc_trim)


def release_freed_memory() -> None:
    """Return the memory Arrow's pool and the C heap hold free to the OS."""
    pa.default_memory_pool().release_unused()
    trim = _malloc_trim()
    if trim is not None:
        trim(0)  # type: ignore[operator]


class _Mallinfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in (
        "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks",
        "fordblks", "keepcost")]


def heap_in_use() -> int | None:
    """Bytes the C heap has handed out and not had back (glibc ``mallinfo2``: small
    blocks in use plus ``mmap``-ed ones), or None where there is no glibc. Beside the
    resident size it tells a leak (this grows) from memory the allocator keeps (it does
    not); Kuzu's buffer pool and numpy's large arrays are ``mmap``-ed outside it or
    counted in ``hblkhd``.

    >>> n = heap_in_use(); n is None or n > 0
    True
    """
    fn = getattr(_libc(), "mallinfo2", None)  # glibc 2.33 and later
    if fn is None:
        return None
    fn.restype = _Mallinfo2
    info = fn()
    return int(info.uordblks + info.hblkhd)
