"""The C heap of a long-running process (``store/heap.py``): ``akasha serve`` limits
glibc's arenas (:data:`~akasha_explorer.store.heap.MALLOC_ARENAS`) so the freed memory
each busy thread keeps is not multiplied by up to eight arenas per core."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from akasha_explorer.store.heap import MALLOC_ARENAS, heap_in_use

pytestmark = pytest.mark.skipif(heap_in_use() is None, reason="needs glibc")

_THREADS = textwrap.dedent("""
    import ctypes, sys, threading
    from akasha_explorer.store.heap import limit_arenas
    libc = ctypes.CDLL("libc.so.6")
    libc.malloc.restype = ctypes.c_void_p
    libc.free.argtypes = [ctypes.c_void_p]
    libc.malloc_stats()                       # the arenas so far, on stderr
    sys.stderr.flush()
    print("limited" if limit_arenas() else "not limited", file=sys.stderr, flush=True)
    start = threading.Barrier(8)
    def work():
        start.wait()
        blocks = [libc.malloc(1000) for _ in range(20000)]
        for b in blocks:
            libc.free(b)
    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads: t.start()
    for t in threads: t.join()
    libc.malloc_stats()
""")


def _arenas(env: dict[str, str]) -> tuple[str, int, int]:
    err = subprocess.run([sys.executable, "-c", _THREADS], env=env, capture_output=True,
                         text=True, timeout=120, check=True).stderr
    before, _, after = err.partition("limited\n")
    verdict = "not limited" if "not limited" in err else "limited"
    return verdict, before.count("Arena "), after.count("Arena ")


def test_limited_arenas_stay_few_while_eight_threads_allocate() -> None:
    env = {k: v for k, v in os.environ.items() if k != "MALLOC_ARENA_MAX"}
    verdict, before, after = _arenas(env)
    assert verdict == "limited"
    assert after <= max(before, MALLOC_ARENAS)


def test_glibc_alone_gives_busy_threads_arenas_of_their_own() -> None:
    """What the limit is for — and the user's $MALLOC_ARENA_MAX wins over it."""
    env = {**os.environ, "MALLOC_ARENA_MAX": "64"}
    verdict, before, after = _arenas(env)
    assert verdict == "not limited"
    assert after > max(before, MALLOC_ARENAS)
