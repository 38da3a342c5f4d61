"""The store folder (issue 18, items 1 and 9): a creation or import that did not finish
never bricks its path, two processes creating one store are told who holds it, and a bad
place for a store — under a file, a symbolic link loop, ``/dev/null``, a read-only file
system — is a one-line error from every command, never a traceback. The kill -9 side is
in ``test_crash.py`` (``test_kill9_store_creation`` / ``test_kill9_store_import``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

import akasha_explorer as ak
from akasha_explorer.cli import cli
from akasha_explorer.errors import StoreError, StoreLocked
from akasha_explorer.store import folder

from .disks import remount, tmpfs
from .test_lock import Holder

LINE = ('{"session_id": "t", "ts": "2026-09-01T10:00:00Z", "role": "user", '
        '"text": "hello there, my finger is healing"}\n')


@pytest.fixture
def jsonl(tmp_path: Path) -> Path:
    p = tmp_path / "one.jsonl"
    p.write_text(LINE, "utf-8")
    return p


def _half_made(path: Path, *, marker: bool = True) -> None:
    """What a creation killed early leaves: the lock file, the marker, a graph file."""
    path.mkdir(parents=True)
    (path / "writer.lock").write_text("")
    if marker:
        (path / folder.CREATING).write_text("{}")
        (path / "graph.kuzu").write_bytes(b"half a graph")
        (path / "vectors").mkdir()


@pytest.mark.parametrize("marker", [True, False], ids=["marker+graph", "lock-only"])
def test_a_half_made_store_is_discarded_by_the_next_ingest(tmp_path: Path, jsonl: Path,
                                                           marker: bool,
                                                           caplog: pytest.LogCaptureFixture
                                                           ) -> None:
    store = tmp_path / "s"
    _half_made(store, marker=marker)
    r = CliRunner().invoke(cli, ["stats", str(store)])
    assert r.exit_code == 1
    assert "half-made memory store" in r.output and "doctor" in r.output, r.output
    with caplog.at_level("WARNING"):
        r = CliRunner().invoke(cli, ["ingest", str(store), str(jsonl)])
    assert r.exit_code == 0, r.output
    assert "1 messages added" in r.output
    if marker:
        assert "was a half-made store" in caplog.text and "graph.kuzu" in caplog.text
    assert not (store / folder.CREATING).exists()
    with ak.open(store) as mem:
        assert mem.doctor().clean
        assert mem.stats()["messages"] == 1


def test_doctor_repair_discards_a_half_made_store_and_says_so(tmp_path: Path) -> None:
    store = tmp_path / "s"
    _half_made(store)
    r = CliRunner().invoke(cli, ["doctor", str(store)])
    assert r.exit_code == 1 and "half-made memory store" in r.output, r.output
    assert "Traceback" not in r.output
    r = CliRunner().invoke(cli, ["doctor", str(store), "--repair", "--json"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    assert out["half_made"] and out["clean"]
    assert "removed graph.kuzu" in out["repairs"]
    assert list(store.iterdir()) == []  # the folder stays, empty: ready for a store


def test_a_folder_of_other_files_is_never_touched(tmp_path: Path, jsonl: Path) -> None:
    store = tmp_path / "mine"
    store.mkdir()
    (store / "graph.kuzu").write_text("a file of the user's that happens to be named so")
    (store / "notes.txt").write_text("keep me")
    before = sorted(p.name for p in store.iterdir())
    r = CliRunner().invoke(cli, ["ingest", str(store), str(jsonl)])
    assert r.exit_code == 1
    assert "not an empty folder or a memory store" in r.output and "notes.txt" in r.output
    r = CliRunner().invoke(cli, ["doctor", str(store), "--repair"])
    assert r.exit_code == 1 and "not a memory store" in r.output, r.output
    assert sorted(p.name for p in store.iterdir()) == before
    assert (store / "notes.txt").read_text() == "keep me"


def test_two_creators_of_one_store_the_second_is_told_who_holds_it(tmp_path: Path,
                                                                   jsonl: Path) -> None:
    """The first creator holds the folder (lock + marker) while it loads the model and
    builds the files; the second gets StoreLocked naming it, not 'not a memory store'."""
    store = tmp_path / "s"
    lock, exists = folder.claim(store)  # a creation in progress (same process is enough:
    try:                                # flock locks belong to the open file, not the pid)
        assert not exists
        with pytest.raises(StoreLocked, match="being created by another process") as e:
            ak.open(store)
        assert f"pid {os.getpid()}" in str(e.value)
        r = CliRunner().invoke(cli, ["ingest", str(store), str(jsonl)])
        assert r.exit_code == 1 and "being created by another process" in r.output, r.output
    finally:
        lock.release()
    r = CliRunner().invoke(cli, ["ingest", str(store), str(jsonl)])  # the first one died
    assert r.exit_code == 0, r.output


IMPORT = """
import sys
from akasha_explorer.errors import AkashaError
from akasha_explorer.export.store import import_store
try:
    import_store(sys.argv[1], sys.argv[2])
    print("ok")
except AkashaError as e:
    print("refused", type(e).__name__, e)
"""


@pytest.mark.slow
def test_racing_imports_into_one_folder_one_wins_the_other_is_refused(
        demo_store: Path, tmp_path: Path) -> None:
    with ak.open(demo_store) as mem:
        src = mem.export(tmp_path / "exp", format="store")
    for k in range(3):
        dst = tmp_path / f"race{k}"
        procs = [subprocess.Popen([sys.executable, "-c", IMPORT, str(src), str(dst)],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                 for _ in range(2)]
        outs = [p.communicate(timeout=300) for p in procs]
        assert all(p.returncode == 0 for p in procs), outs
        said = sorted(o.strip().splitlines()[-1].split()[0] for o, _ in outs)
        assert said == ["ok", "refused"], outs
        with ak.open(dst) as mem:  # the winner's store is whole
            assert mem.doctor().clean
            assert mem.stats()["messages"] == 660


@pytest.mark.parametrize("where", ["under_a_file", "symlink_loop", "dev_null"])
@pytest.mark.parametrize("command", ["ingest", "forget", "context", "doctor", "doctor --repair",
                                     "stats", "import"])
def test_a_bad_place_for_a_store_is_a_one_line_error(tmp_path: Path, jsonl: Path, where: str,
                                                     command: str) -> None:
    f = tmp_path / "file"
    f.write_text("x")
    loop = tmp_path / "loop"
    os.symlink(loop, loop)
    store = {"under_a_file": f / "store", "symlink_loop": loop, "dev_null": Path("/dev/null")}
    args = {"ingest": ["ingest", str(store[where]), str(jsonl)],
            "forget": ["forget", str(store[where]), "--session", "t", "--yes"],
            "context": ["context", str(store[where]), "hello"],
            "doctor": ["doctor", str(store[where])],
            "doctor --repair": ["doctor", str(store[where]), "--repair"],
            "stats": ["stats", str(store[where])],
            "import": ["import", str(store[where]), str(tmp_path)]}[command]
    r = CliRunner().invoke(cli, args)
    assert r.exit_code in (1, 2), r.output  # 2: click's own check of the argument
    assert isinstance(r.exception, SystemExit), repr(r.exception)
    assert "Traceback" not in r.output
    assert r.output.startswith("Error: ") or "Invalid value for 'STORE'" in r.output, r.output
    with pytest.raises(StoreError):
        ak.open(store[where])


def test_a_read_only_file_system_is_a_clear_error(tmp_path: Path, jsonl: Path) -> None:
    with tmpfs(tmp_path / "disk", 64) as disk:
        store = disk / "store"
        with ak.open(store) as mem:
            mem.ingest(jsonl, progress=False)
        remount(disk, "ro")
        try:
            for args in (["ingest", str(store), str(jsonl)],
                         ["forget", str(store), "--session", "t", "--yes"],
                         ["context", str(store), "hello"],
                         ["doctor", str(store), "--repair"],
                         ["ingest", str(disk / "new"), str(jsonl)]):
                r = CliRunner().invoke(cli, args)
                assert r.exit_code == 1, (args, r.output)
                assert isinstance(r.exception, SystemExit), (args, repr(r.exception))
                assert "read-only file system" in r.output, (args, r.output)
                assert len(r.output.strip().splitlines()) == 1, r.output
            r = CliRunner().invoke(cli, ["stats", str(store)])  # reading still works
            assert r.exit_code == 0, r.output
            r = CliRunner().invoke(cli, ["doctor", str(store)])
            assert r.exit_code == 0, r.output
        finally:
            remount(disk, "rw")


@pytest.mark.slow
def test_a_deleted_writer_lock_still_names_the_writer(tmp_path: Path, jsonl: Path) -> None:
    """The holder's lock file is deleted while it holds the store: a second writer gets
    a lock file of its own, but Kuzu's lock on the graph still names the first writer."""
    store = tmp_path / "s"
    with ak.open(store) as mem:
        mem.ingest(jsonl, progress=False)
    h = Holder(store, "rw")
    try:
        (store / "writer.lock").unlink()
        with pytest.raises(StoreLocked) as e:
            ak.open(store)
        msg = str(e.value)
        assert f"pid {h.pid}" in msg and "writer.lock does not show it" in msg, msg
        assert "open read-only" not in msg
    finally:
        h.close()
    ak.open(store).close()
