"""One writer per store, across processes (SPEC §1): a second writer is refused at once
with :class:`StoreLocked` naming the holder (pid, host, since); a writer killed with
SIGKILL leaves no stale lock. Read-only opens while a writer holds the store — measured
with kuzu 0.11.3: Kuzu lets any number of processes read a database, or one process write
it, never both (LanceDB alone would allow it) — are refused with a message that names the
writer and says why; they work again as soon as the writer closes, and readers coexist."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

import akasha_explorer as ak
from akasha_explorer.cli import cli
from akasha_explorer.errors import StoreLocked

HOLD = """
import sys, akasha_explorer as ak
mem = ak.open(sys.argv[1], read_only=sys.argv[2] == "ro")
print("ready", flush=True)
sys.stdin.readline()
mem.close()
print("closed", flush=True)
"""


class Holder:
    """Another process holding the store open (``ro``: read-only) until :meth:`close`."""

    def __init__(self, store: Path, mode: str) -> None:
        self.proc = subprocess.Popen([sys.executable, "-c", HOLD, str(store), mode],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True,
                                     env={**os.environ, "HF_HUB_OFFLINE": "1"})
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline().strip()
        assert line == "ready", (line, self.proc.stderr.read() if self.proc.stderr else "")
        self.pid = self.proc.pid

    def close(self) -> None:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write("\n")
        self.proc.stdin.flush()
        assert self.proc.stdout.readline().strip() == "closed"
        assert self.proc.wait(30) == 0

    def kill(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(30)


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory, embedder: object) -> Path:
    path = tmp_path_factory.mktemp("lock") / "store"
    with ak.open(path) as mem:
        mem.ingest([{"role": "user", "content": "我的手指今天换药了"},
                    {"role": "assistant", "content": "恢复得怎么样？"}], session="s",
                   progress=False)
    return path


def _refused(fn: object) -> tuple[str, float]:
    t0 = time.monotonic()
    with pytest.raises(StoreLocked) as e:
        fn()  # type: ignore[operator]
    return str(e.value), time.monotonic() - t0


def test_second_writer_is_refused_at_once_naming_the_holder(store: Path) -> None:
    h = Holder(store, "rw")
    try:
        msg, took = _refused(lambda: ak.open(store))
        assert took < 1.0
        assert f"pid {h.pid}" in msg
        assert "since 20" in msg  # an ISO time
        assert "open for writing in another process" in msg
        # the CLI says the same in one line, exit status 1
        r = CliRunner().invoke(cli, ["ingest", str(store), str(_jsonl(store.parent))])
        assert r.exit_code == 1
        assert f"pid {h.pid}" in r.output
        assert "Traceback" not in r.output
    finally:
        h.close()
    ak.open(store).close()  # free again


def test_read_only_while_a_writer_holds_is_refused_clearly(store: Path) -> None:
    h = Holder(store, "rw")
    try:
        msg, took = _refused(lambda: ak.open(store, read_only=True))
        assert took < 1.0
        assert f"pid {h.pid}" in msg
        assert "Kuzu cannot read a database while another process writes it" in msg
        r = CliRunner().invoke(cli, ["stats", str(store)])
        assert r.exit_code == 1
        assert f"pid {h.pid}" in r.output
    finally:
        h.close()
    with ak.open(store, read_only=True) as mem:  # works once the writer closed
        assert mem.stats()["messages"] == 2


def test_readers_coexist_and_keep_writers_out(store: Path) -> None:
    h = Holder(store, "ro")
    try:
        with ak.open(store, read_only=True) as mem:  # a second reader is fine
            assert mem.stats()["nodes"] == 1
        msg, took = _refused(lambda: ak.open(store))
        assert took < 1.0
        assert "open read-only in another process" in msg
    finally:
        h.close()
    # the refused writer released its own lock: a writer opens now
    ak.open(store).close()


def test_a_killed_writer_leaves_no_stale_lock(store: Path) -> None:
    h = Holder(store, "rw")
    dead = h.pid
    h.kill()
    t0 = time.monotonic()
    with ak.open(store) as mem:  # the OS dropped the flock with the process
        assert time.monotonic() - t0 < 5.0
        assert mem.stats()["messages"] == 2
        assert mem.store.lock is not None
        assert mem.store.lock.holder()["pid"] == os.getpid() != dead
        assert mem.doctor().ok


def test_same_process_second_writer_is_refused(store: Path) -> None:
    with ak.open(store):
        msg, _ = _refused(lambda: ak.open(store))
        assert f"pid {os.getpid()}" in msg


def _jsonl(folder: Path) -> Path:
    p = folder / "one.jsonl"
    p.write_text('{"session_id": "t", "ts": "2026-09-01T10:00:00Z", "role": "user", '
                 '"text": "hello there"}\n', "utf-8")
    return p

