"""Where an export may write: anywhere the user asks except into a store.

``akasha export STORE --out PATH`` takes the user's path as given (relative paths, ``..``
included, resolve against the working directory, as for any command-line tool), but never a
path inside the store folder — an export named ``STORE/graph.kuzu`` or
``STORE/journal.jsonl`` would overwrite the memory itself — nor inside any other memory
store. A missing parent folder, a folder where a file is expected (or a file where a folder
is) and a NUL in the path are clear errors, not tracebacks.

>>> import tempfile, pathlib
>>> root = pathlib.Path(tempfile.mkdtemp())
>>> (root / "store").mkdir(); _ = (root / "store" / "akasha.json").write_text("{}")
>>> output_path(root / "store", root / "out.html", folder=False) == (root / "out.html").resolve()
True
>>> output_path(root / "store", root / "store" / ".." / "store" / "x.html", folder=False)
Traceback (most recent call last):
...
akasha_explorer.errors.InvalidInput: refusing to write an export inside the memory store ...
"""

from __future__ import annotations

from pathlib import Path

from ..errors import InvalidInput

__all__ = ["enclosing_store", "output_path"]


def enclosing_store(path: str | Path) -> Path | None:
    """The memory store folder ``path`` is in (or is), or None.

    >>> import tempfile, pathlib
    >>> root = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (root / "akasha.json").write_text("{}")
    >>> enclosing_store(root / "sub" / "x") == root.resolve(), enclosing_store("/")
    (True, None)
    """
    target = Path(path).expanduser().resolve()
    for p in (target, *target.parents):
        if (p / "akasha.json").is_file():
            return p
    return None


def output_path(store: str | Path, out: str | Path, *, folder: bool) -> Path:
    """``out`` resolved, after the checks of the module docstring (``folder``: the export
    writes a folder of files rather than one file)."""
    text = str(out)
    if "\x00" in text:
        raise InvalidInput(f"the output path {text!r} contains a NUL character")
    if not text.strip():
        raise InvalidInput("the output path is empty")
    target = Path(text).expanduser().resolve()
    home = Path(store).expanduser().resolve()
    inside = home if home in (target, *target.parents) else enclosing_store(target)
    if inside is not None:
        raise InvalidInput(
            f"refusing to write an export inside the memory store {inside} ({target}); it "
            "would mix files into the store or overwrite it — pick a path outside it")
    parent = target.parent
    if not parent.is_dir():
        raise InvalidInput(f"the folder {parent} does not exist; create it first")
    if folder and target.exists() and not target.is_dir():
        raise InvalidInput(f"{target} is a file; this format writes a folder")
    if not folder and target.is_dir():
        raise InvalidInput(f"{target} is a folder; give a file name (e.g. {target}/graph.html)")
    return target
