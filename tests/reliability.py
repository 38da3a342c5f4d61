"""Helpers of the reliability tests (not a test module).

- :class:`Zygote` — a child Python process that imports the package and loads the embedding
  model once, then ``fork``\\ s one *worker* per job; the test kills workers with SIGKILL at
  chosen moments. Forking from a warm process makes a kill run cost milliseconds instead of
  the ten seconds of starting Python, torch and the model (the zygote never touches a store
  and runs torch with one thread, so the fork is safe).
- :func:`dump` — every row of a store, for "logically identical" comparisons: LanceDB rows
  (vectors as bytes) and every Kuzu table sorted, minus the wall-clock columns.
- :func:`files_digest` — sha256 of files (LanceDB folder, journal, manifest).

Run as a script it is the zygote: ``python tests/reliability.py`` reads one JSON job per
line on stdin and answers ``pid N`` when the worker starts and ``exit N STATUS`` when it
ends; the worker's own output goes to ``job["log"]``.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import select
import signal
import subprocess
import sys
import time
import warnings
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent

WALL_CLOCK_COLS = ("created_ts", "decided_ts")
"""Kuzu columns that hold the time a row was written (differ between two equal runs)."""


# -- comparisons -------------------------------------------------------------------------------
def files_digest(folder: Path, names: tuple[str, ...] = ("vectors", "journal.jsonl",
                                                          "akasha.json")) -> dict[str, str]:
    """sha256 of every file under the given entries of ``folder`` (missing ones skipped)."""
    out: dict[str, str] = {}
    for name in names:
        p = folder / name
        paths = sorted(q for q in p.rglob("*") if q.is_file()) if p.is_dir() else \
            ([p] if p.exists() else [])
        for q in paths:
            out[str(q.relative_to(folder))] = hashlib.sha256(q.read_bytes()).hexdigest()
    return out


DYNAMIC = {"Turn": ("strength", "strength_ts", "resource", "resource_ts", "recall_count")}
"""Columns replay and commits write (with the COACT table): the *dynamic* state."""


def kuzu_dump(graph: Any, *, skip_meta: tuple[str, ...] = ("journal_seq", "tx_seq"),
              skip_tables: tuple[str, ...] = (),
              skip_cols: dict[str, tuple[str, ...]] | None = None
              ) -> dict[str, list[tuple[Any, ...]]]:
    """Every Kuzu table as sorted row tuples (rels by their end points' primary keys),
    without :data:`WALL_CLOCK_COLS`, the given Meta keys, tables and columns."""
    skip_cols = skip_cols or {}
    out: dict[str, list[tuple[Any, ...]]] = {}
    tables = graph.rows("CALL show_tables() RETURN name, type")
    for t in sorted(tables, key=lambda r: r["name"]):
        name = t["name"]
        if name in skip_tables:
            continue
        cols = [r["name"] for r in graph.rows(f"CALL table_info('{name}') RETURN name")
                if r["name"] not in WALL_CLOCK_COLS and r["name"] not in skip_cols.get(name, ())]
        if t["type"] == "NODE":
            q = f"MATCH (x:{name}) RETURN " + ", ".join(f"x.{c} AS {c}" for c in cols)
        else:
            conn = graph.rows(f"CALL show_connection('{name}') RETURN *")[0]
            src, dst = conn["source table primary key"], conn["destination table primary key"]
            q = (f"MATCH (a)-[x:{name}]->(b) RETURN a.{src} AS _from, b.{dst} AS _to"
                 + "".join(f", x.{c} AS {c}" for c in cols))
        rows = [tuple(_hashable(v) for v in r.values()) for r in graph.rows(q)]
        if name == "Meta":
            rows = [r for r in rows if r[0] not in skip_meta]
        out[name] = sorted(rows, key=repr)
    return out


def lance_dump(vectors: Any) -> dict[str, list[tuple[Any, ...]]]:
    """Both LanceDB tables as sorted row tuples (vectors as raw float32 bytes)."""
    import numpy as np

    out = {}
    for name in ("messages", "turns"):
        rows = vectors.read(name).to_pylist()
        out[name] = sorted((tuple(_hashable(np.asarray(v, np.float32).tobytes()
                                            if k == "vector" else v) for k, v in r.items())
                            for r in rows), key=repr)
    return out


def dump(path: Path, **kwargs: Any) -> dict[str, Any]:
    """:func:`kuzu_dump` + :func:`lance_dump` of the store at ``path`` (opened read-only)."""
    import akasha_explorer as ak

    with ak.open(path, read_only=True) as mem:
        return {"kuzu": kuzu_dump(mem.store.graph, **kwargs), "lance": lance_dump(mem.store.vectors)}


def _hashable(v: Any) -> Any:
    if isinstance(v, list):
        return tuple(_hashable(x) for x in v)
    if isinstance(v, dict):
        return tuple(sorted((k, _hashable(x)) for k, x in v.items()))
    return v


def first_difference(a: dict[str, Any], b: dict[str, Any]) -> str | None:
    """Where two dumps differ first (None when equal)."""
    for part in sorted(set(a) | set(b)):
        x, y = a.get(part), b.get(part)
        if x == y:
            continue
        if isinstance(x, dict) and isinstance(y, dict):
            for t in sorted(set(x) | set(y)):
                if x.get(t) != y.get(t):
                    rx, ry = x.get(t) or [], y.get(t) or []
                    only_x = [r for r in rx if r not in set(ry)][:2]
                    only_y = [r for r in ry if r not in set(rx)][:2]
                    return (f"{part}/{t}: {len(rx)} vs {len(ry)} rows; only left "
                            f"{str(only_x)[:400]}; only right {str(only_y)[:400]}")
        return part
    return None


# -- zygote (parent side) ----------------------------------------------------------------------
class Zygote:
    """Drive ``python tests/reliability.py``: start workers, kill them, collect exits."""

    def __init__(self, env: dict[str, str] | None = None) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, __file__], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            env={**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false",
                 **(env or {})}, text=True, bufsize=1)
        line = self._line(timeout=180)
        if line != "ready":
            raise RuntimeError(f"zygote did not start: {line!r}")

    def _line(self, timeout: float) -> str:
        assert self.proc.stdout is not None
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        if not ready:
            raise TimeoutError(f"zygote silent for {timeout}s")
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"zygote ended (status {self.proc.poll()})")
        return line.strip()

    def start(self, job: dict[str, Any]) -> int:
        """Fork a worker for ``job``; returns its pid."""
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(job) + "\n")
        self.proc.stdin.flush()
        kind, pid = self._line(timeout=60).split()
        assert kind == "pid", kind
        return int(pid)

    def wait(self, pid: int, timeout: float = 600) -> int:
        """Exit status of worker ``pid`` (negative: killed by that signal)."""
        kind, got, status = self._line(timeout=timeout).split()
        assert kind == "exit", (kind, got, pid)
        assert int(got) == pid, (kind, got, pid)
        return int(status)

    def kill(self, pid: int) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)

    def close(self) -> None:
        if self.proc.poll() is None:
            assert self.proc.stdin is not None
            self.proc.stdin.close()
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)


def watch(paths: list[Path], timeout: float, poll: float = 0.0005) -> bool:
    """Wait until any of ``paths`` changes (appears, or its size / mtime / directory listing
    changes); True when it did within ``timeout`` seconds."""
    def sig(p: Path) -> Any:
        try:
            if p.is_dir():
                return tuple(sorted(os.listdir(p)))
            st = p.stat()
            return (st.st_size, st.st_mtime_ns)
        except OSError:
            return None

    before = [sig(p) for p in paths]
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if [sig(p) for p in paths] != before:
            return True
        time.sleep(poll)
    return False


# -- worker jobs -------------------------------------------------------------------------------
def run_job(job: dict[str, Any]) -> None:
    """One worker: open the store, do the job, close. Killed at any point by the test."""
    import akasha_explorer as ak

    if job["phase"] == "import":  # a whole-store export into a new store folder
        from akasha_explorer.export.store import import_store
        import_store(job["src"], job["store"])
        return
    mem = ak.open(job["store"])
    if job["phase"] == "ingest":
        for f in job["files"]:
            mem.ingest(f, replay=True, progress=False)
    elif job["phase"] == "commits":
        ack = Path(job["ack"])
        done = len(ack.read_text().splitlines()) if ack.exists() else 0
        uids = list(mem.store.mirror.nodes.uid)
        queries = job["queries"]
        with open(ack, "a", buffering=1) as fh:
            for k in range(done, job["n_commits"]):
                now = job["t0"] + 3600.0 * k
                trace = mem.recall(queries[k % len(queries)], now=now)
                mem.commit(trace, uids[(k * 7919) % len(uids)])
                fh.write(f"{k} {now}\n")  # acknowledged: the commit call returned
    elif job["phase"] == "forget":
        mem.forget(session=job["session"])
    mem.close()


def _zygote() -> None:
    import torch

    torch.set_num_threads(1)
    warnings.filterwarnings("ignore", message=".*fork.*")
    import akasha_explorer  # noqa: F401  (warm imports)
    from akasha_explorer.config import Settings
    from akasha_explorer.embed import make_embedder

    s = Settings()
    make_embedder(s.EMBED_MODEL, s.EMBED_CJK_DIMS)  # cached: workers inherit the loaded model
    print("ready", flush=True)
    for line in sys.stdin:
        if not line.strip():
            continue
        job = json.loads(line)
        pid = os.fork()
        if pid == 0:  # worker
            code = 0
            try:
                fd = os.open(job["log"], os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
                os.dup2(fd, 1)
                os.dup2(fd, 2)
                run_job(job)
            except BaseException:
                import traceback
                traceback.print_exc()
                code = 3
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(code)
        print(f"pid {pid}", flush=True)
        _, status = os.waitpid(pid, 0)
        code = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
        print(f"exit {pid} {code}", flush=True)


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    _zygote()
