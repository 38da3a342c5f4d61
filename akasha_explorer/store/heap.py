"""Handing freed memory back to the operating system after a bulk load (issue 14).

Loading the mirror reads a few hundred MB of Arrow data from LanceDB and Kuzu and frees it
again; both allocators keep what was freed: Arrow's memory pool (mimalloc) until asked,
and glibc's heap — LanceDB's buffers come from the system allocator — below its trim
threshold. Measured at 100k nodes: 1.8 GB resident after the load, 0.87 GB after these two
calls (~20 ms).
"""

from __future__ import annotations

import ctypes
import os

import pyarrow as pa

from .._proc import libc, trim_heap

__all__ = ["MALLOC_ARENAS", "heap_in_use", "limit_arenas", "release_freed_memory"]

MALLOC_ARENAS = 2
"""glibc heaps (arenas) a long-running process such as ``akasha serve`` allocates from.
glibc gives busy threads arenas of their own (up to eight per core), and LanceDB's, Kuzu's
and torch's threads each keep freed memory in theirs. Measured (two 2,000-round agent soaks
on a 10k-turn store, run side by side, ``benchmarks/results/soak-arenas.md``): resident
growth 559 → 351 MB, after the first 1,000 rounds 66.5 → 40.6 MB per 1,000 rounds; the
same C heap in use (530 MB) and the same commits per second."""

_M_ARENA_MAX = -8   # mallopt parameter (malloc.h)


def release_freed_memory() -> None:
    """Return the memory Arrow's pool and the C heap hold free to the OS."""
    pa.default_memory_pool().release_unused()
    trim_heap()


def limit_arenas(n: int = MALLOC_ARENAS) -> bool:
    """Let the C heap use at most ``n`` arenas from now on (:data:`MALLOC_ARENAS`); call it
    before the process starts threads. A no-op returning False without glibc or when
    ``$MALLOC_ARENA_MAX`` is set (the user's choice wins, glibc has read it already).
    ``tests/test_heap.py`` counts the arenas eight busy threads get with and without it."""
    fn = getattr(libc(), "mallopt", None)
    if fn is None or os.environ.get("MALLOC_ARENA_MAX"):
        return False
    return bool(fn(_M_ARENA_MAX, int(n)))


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
    fn = getattr(libc(), "mallinfo2", None)  # glibc 2.33 and later
    if fn is None:
        return None
    fn.restype = _Mallinfo2
    info = fn()
    return int(info.uordblks + info.hblkhd)
