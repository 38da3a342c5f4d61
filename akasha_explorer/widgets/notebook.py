"""What every notebook starts with: the store to work on.

:func:`notebook_store` connects to the memory server ``make lab`` / ``akasha lab`` start
(``$AKASHA_URL``), so every notebook — and a live agent — share one store and never lock
each other out; else it connects to whatever ``akasha serve`` serves the store named by
``$AKASHA_STORE``; else it opens that store itself, or — when ``$AKASHA_STORE`` is unset —
the bundled demo conversations, built once (with replay, about a minute) into the temp
folder and reused by every notebook after.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

from ..curate.labels import demo_labels_path
from ..errors import StoreError, StoreLocked
from ..server.client import served_at

if TYPE_CHECKING:
    from ..memory import Memory
    from ..server.client import RemoteMemory

__all__ = ["ENV", "URL_ENV", "NotebookBlocked", "demo_store_path", "notebook_store"]

ENV = "AKASHA_STORE"
"""Environment variable naming the store the notebooks open."""

URL_ENV = "AKASHA_URL"
"""Environment variable naming the memory server the notebooks connect to."""


class NotebookBlocked(StoreLocked):
    """The notebook cannot reach its store; shown in a notebook as the one line that says
    what to do (no traceback)."""

    def _render_traceback_(self) -> list[str]:  # IPython's hook for custom exceptions
        return [f"⚠ {self}"]


def demo_store_path() -> Path:
    """Where the fallback demo store lives: ``<tempdir>/akasha-demo-store``.

    >>> demo_store_path().name
    'akasha-demo-store'
    """
    return Path(tempfile.gettempdir()) / "akasha-demo-store"


def _build_demo(dst: Path) -> None:
    """Build the demo store next to ``dst`` and move it into place (a half-built store is
    never visible under ``dst``; two kernels racing both build, the first to finish wins)."""
    import akasha_explorer as ak

    tmp = Path(tempfile.mkdtemp(prefix="akasha-demo-build-", dir=dst.parent)) / "store"
    data = resources.files("akasha_explorer").joinpath("data/demo_conversations.jsonl")
    print(f"AKASHA_STORE is not set: building the demo memory in {dst} (once, about a minute)")
    with resources.as_file(data) as path, ak.open(tmp) as mem:
        mem.ingest(path, replay=True)
        mem.labels.load(demo_labels_path(), by="demo")
    with contextlib.suppress(OSError):  # OSError: another kernel finished first
        os.rename(tmp, dst)
    shutil.rmtree(tmp.parent, ignore_errors=True)


def notebook_store(*, write: bool = False) -> Memory | RemoteMemory:
    """The notebooks' store: the server at ``$AKASHA_URL``, else the server of
    ``$AKASHA_STORE`` (or of the demo store), else that store opened here (the demo built
    on first use).

    Through a server every notebook reads and writes the one store (``write`` does not
    matter). Opened here, ``write=False`` opens it read-only (explore, export) and
    ``write=True`` lets the buttons that write (commit a recall, curate) work; Kuzu lets
    several processes read a store or one write it, so when another notebook has it open a
    ``write=True`` open falls back to read-only (and says so), and when another process
    writes it this raises :class:`NotebookBlocked`, shown as one line saying what to do.
    """
    import akasha_explorer as ak

    url = os.environ.get(URL_ENV, "").strip()
    if url:
        try:
            return ak.connect(url)
        except StoreError as e:
            raise NotebookBlocked(f"{e} — start it (`make lab` does, or `akasha serve STORE`), "
                                  f"or unset {URL_ENV} to open the store here") from None
    name = os.environ.get(ENV, "").strip()
    path = Path(name).expanduser() if name else demo_store_path()
    served = served_at(path)
    if served:
        return ak.connect(served)
    if not name and not (path / "akasha.json").exists():
        _build_demo(path)
    try:
        return ak.open(path, read_only=not write)
    except StoreLocked as err:
        first = err
    if write:
        try:
            mem = ak.open(path, read_only=True)
        except StoreLocked:
            pass
        else:
            print(f"{path} is open in another notebook or process, so it was opened read-only "
                  "here: the buttons that write are disabled. To write, run `mem.close()` "
                  "there (or shut that kernel down) and run this cell again — or start "
                  "JupyterLab with `make lab`, which serves the store to every notebook.")
            return mem
    raise NotebookBlocked(
        f"{path} is open for writing in another process: run `mem.close()` there (or shut "
        "its kernel down) and run this cell again — or serve it (`akasha serve STORE`, or "
        f"start JupyterLab with `make lab`) so every notebook shares it ({first})") from None
