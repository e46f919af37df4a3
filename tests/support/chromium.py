"""The one Chromium the browser tests drive (Debian's, never a downloaded one).

Playwright's sync API runs one event loop per thread: a second ``sync_playwright()`` while
another is open on the same pytest-xdist worker is refused ("Sync API inside the asyncio
loop"). So every test that opens a page in this process takes the session's ``browser``
fixture (tests/conftest.py); a tool that starts its own Playwright runs in a process of its own.
"""

from __future__ import annotations

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
