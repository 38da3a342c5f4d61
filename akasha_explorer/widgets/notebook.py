"""What every notebook starts with: the store to work on.

:func:`notebook_store` opens the store named by ``$AKASHA_STORE`` (``make lab`` and
``akasha lab`` set it), or — when that is unset — the bundled demo conversations, built once
(with replay, about a minute) into the temp folder and reused by every notebook after.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import StoreLocked

if TYPE_CHECKING:
    from ..memory import Memory

__all__ = ["ENV", "demo_store_path", "notebook_store"]

ENV = "AKASHA_STORE"
"""Environment variable naming the store the notebooks open."""


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
    with contextlib.suppress(OSError):  # OSError: another kernel finished first
        os.rename(tmp, dst)
    shutil.rmtree(tmp.parent, ignore_errors=True)


def notebook_store(*, write: bool = False) -> Memory:
    """Open the notebooks' store: ``$AKASHA_STORE``, else the demo store (built on first use).

    ``write=False`` opens it read-only (explore, export); ``write=True`` lets the buttons
    that write (commit a recall, curate) work. Kuzu lets several processes read a store, or
    one write it — not both: when another notebook already has the store open, a
    ``write=True`` open falls back to read-only (and says so; the writing buttons are then
    disabled), and when another notebook writes it, this raises :class:`StoreLocked` with
    what to do.
    """
    import akasha_explorer as ak

    name = os.environ.get(ENV, "").strip()
    path = Path(name).expanduser() if name else demo_store_path()
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
                  "there (or shut that kernel down) and run this cell again.")
            return mem
    raise StoreLocked(
        f"{first}. Another notebook or process has this store open for writing: run "
        "`mem.close()` there (or shut its kernel down), then run this cell again") from None
