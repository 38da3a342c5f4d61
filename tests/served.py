"""Serving a store in tests: a real ``akasha serve`` process on a free loopback port, up
(answering ``ak.connect``) before the test goes on, stopped with Ctrl-C after it."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import akasha_explorer as ak

AKASHA = str(Path(sys.executable).parent / "akasha")


SMALL = [
    {"role": "user", "content": "和阿岚打杀戮尖塔，死在第二层"},
    {"role": "assistant", "content": "可惜！第二层是哪个 boss？"},
    {"role": "user", "content": "my finger is healing, the doctor changed the dressing"},
    {"role": "assistant", "content": "Good news. Keep it dry."},
]
"""Two turns of session ``s0`` (``s0:0`` about 阿岚's game, ``s0:2`` about a finger)."""


def small_store(path: Path) -> Path:
    """A new store at ``path`` holding :data:`SMALL`, ingested with replay."""
    with ak.open(path) as mem:
        mem.ingest(SMALL, session="s0", replay=True, progress=False)
    return path


def free_port() -> int:
    """A loopback port nothing listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def serve_env() -> dict[str, str]:
    """The environment a served store runs in here: no model download."""
    return {**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}


def wait_up(url: str, proc: subprocess.Popen[bytes], timeout: float = 90.0,
            token: str | None = None) -> None:
    """Wait until the server at ``url`` answers; fail with its stderr if it exits first."""
    end = time.time() + timeout
    while time.time() < end:
        if proc.poll() is not None:
            raise AssertionError(f"server exited: {proc.stderr.read().decode()[-2000:]}"
                                 if proc.stderr else "server exited")
        try:
            ak.connect(url, token=token, timeout=2)
            return
        except ak.StoreError:
            time.sleep(0.3)
    raise AssertionError("server did not come up")


@contextlib.contextmanager
def serving(store: Path, *args: str, token: str | None = None,
            stdout: Any = subprocess.DEVNULL) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """``akasha serve STORE --port <free> *args`` until the block ends: yields its URL and
    process (a test may kill it; a live one gets Ctrl-C, then kill after 60 s)."""
    port = free_port()
    proc = subprocess.Popen([AKASHA, "serve", str(store), "--port", str(port), *args],
                            env=serve_env(), stdout=stdout, stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_up(url, proc, token=token)
        yield url, proc
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()


@contextlib.contextmanager
def graph_held(graph: Any) -> Iterator[None]:
    """Another thread holds ``graph``'s connection (``GraphDB.exclusive``, as a long fold
    of a server's own thread does) for the block."""
    import threading

    held, release = threading.Event(), threading.Event()

    def hold() -> None:
        with graph.exclusive():
            held.set()
            release.wait(120)

    holder = threading.Thread(target=hold)
    holder.start()
    try:
        assert held.wait(60)
        yield
    finally:
        release.set()
        holder.join(timeout=60)
