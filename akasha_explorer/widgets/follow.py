"""Panels that follow a served store (``akasha serve``): a checkbox that, while ticked,
waits in a background thread for the next write through the server
(:meth:`RemoteMemory.wait <akasha_explorer.server.client.RemoteMemory.wait>`) and then calls
the panel's refresh — a live agent's new turns and recalls appear without a click.
A store opened in the notebook itself has nothing to wait on: the box is not shown.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

import ipywidgets as W

from ..errors import AkashaError

__all__ = ["Follow"]

log = logging.getLogger(__name__)


class Follow:
    """``Follow(mem, on_change)``: :attr:`box` (a Checkbox, or None when ``mem`` cannot be
    waited on) starts and stops a thread that calls ``on_change()`` after each write."""

    def __init__(self, mem: Any, on_change: Callable[[], object], *,
                 description: str = "follow the agent") -> None:
        self.mem, self.on_change = mem, on_change
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._busy = threading.Lock()
        """Held while ``on_change`` runs: :meth:`stop` waits for it, so no refresh lands
        after following stopped (it would overwrite what the person did since)."""
        self.box: W.Checkbox | None = None
        if callable(getattr(mem, "wait", None)):
            self.box = W.Checkbox(value=False, description=description, indent=False,
                                  tooltip="redraw when something writes to the served store")
            self.box.observe(self._toggle, names="value")

    def _toggle(self, change: dict[str, Any]) -> None:
        if change["new"]:
            self.start()
        else:
            self.stop()

    def start(self) -> None:
        """Start following (idempotent)."""
        if self._thread is not None and self._thread.is_alive():
            return
        self._stop.clear()
        self._thread = threading.Thread(target=self._loop, name="akasha-follow", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop following; returns once a refresh under way has finished (none starts
        after), without waiting for the server's next write."""
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            with self._busy:
                pass

    def _loop(self) -> None:
        seen = int(getattr(self.mem, "version", 0))
        while not self._stop.is_set():
            try:
                now = self.mem.wait(seen, timeout=10.0)
            except AkashaError as e:   # the server is gone: say so once, stop
                log.warning("stopped following: %s", e)
                if self.box is not None:
                    self.box.value = False
                return
            if now > seen and not self._stop.is_set():
                seen = now
                with self._busy:
                    if self._stop.is_set():
                        return
                    try:
                        self.on_change()
                    except AkashaError as e:
                        log.warning("refresh after a change failed: %s", e)
