"""Shared set-up for the real-browser tests: Debian's Chromium driven by Playwright.

Never ``playwright install``: the tests use ``/usr/bin/chromium`` (``apt-get install
chromium``; ``.ci/run`` does it). Without it the tests skip, unless
``AKASHA_REQUIRE_BROWSER=1`` (CI) turns that into a failure.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync"]
"""Flags that work on this kind of machine (closed network, no GPU, root)."""


def require_chromium() -> None:
    """Skip (or fail under AKASHA_REQUIRE_BROWSER=1) when Chromium is missing."""
    if CHROMIUM.exists():
        return
    if os.environ.get("AKASHA_REQUIRE_BROWSER") == "1":
        pytest.fail("AKASHA_REQUIRE_BROWSER=1 but /usr/bin/chromium is missing; "
                    "apt-get install -y chromium")
    pytest.skip("no /usr/bin/chromium (set AKASHA_REQUIRE_BROWSER=1 to make this fail)")


def launch(playwright: Any) -> Any:
    """A headless Chromium browser."""
    return playwright.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)


def browser_session() -> Iterator[Any]:
    """Body of a module-scoped ``browser`` fixture: one browser for the module."""
    require_chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = launch(p)
        yield b
        b.close()


class OfflinePage:
    """A page of its own browser context where every request not starting with one of
    ``LOCAL`` is aborted and recorded in ``blocked``; dialogs are recorded in ``dialogs``
    and dismissed, page errors kept in ``errors``."""

    LOCAL: tuple[str, ...] = ("file:",)
    HEIGHT = 900

    def __init__(self, browser: Any) -> None:
        self.ctx = browser.new_context(viewport={"width": 1280, "height": self.HEIGHT})
        self.blocked: list[str] = []
        self.dialogs: list[str] = []
        self.errors: list[str] = []
        self.ctx.route("**/*", self._route)
        self.page = self.ctx.new_page()
        self.page.on("dialog", self._dialog)
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))

    def _route(self, route: Any) -> None:
        if route.request.url.startswith(self.LOCAL):
            route.continue_()
        else:
            self.blocked.append(route.request.url)
            route.abort()

    def _dialog(self, d: Any) -> None:
        self.dialogs.append(d.message)
        d.dismiss()
