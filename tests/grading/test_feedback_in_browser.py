"""Feedback is a verdict, not a window, in a real browser: the content security policy that
``course.reports.seal`` puts first in a feedback page stops every script that an unsealed page
would run (Debian's Chromium through Playwright). The layers themselves, without a browser:
tests/unit/test_feedback_safety.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from support.chromium import CHROMIUM
from support.feedback import ATTACK_HTML

from course.reports import seal

# Run in a process of its own: the browser tests of tests/book/test_browser.py keep Playwright's
# sync API open for the whole session, and it cannot be opened twice in one process.
PROBE = """
import json, sys
from playwright.sync_api import sync_playwright

seen = {}
with sync_playwright() as p:
    browser = p.chromium.launch(
        executable_path=sys.argv[1], headless=True,
        args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
    )
    for path in sys.argv[2:]:
        page = browser.new_page()
        page.goto(path)
        page.wait_for_timeout(300)
        seen[path] = page.evaluate("typeof window.pwned === 'undefined' ? null : pwned")
        page.close()
    browser.close()
print(json.dumps(seen))
"""


# slow: a real browser
def test_a_sealed_page_runs_none_of_the_scripts_an_unsealed_one_would(tmp_path):
    if not os.access(CHROMIUM, os.X_OK):
        pytest.fail(f"{CHROMIUM} not found: run `make browser-deps` (apt-get install chromium)")
    body = ATTACK_HTML + "<iframe srcdoc=\"<script>parent.pwned = 'frame'</script>\"></iframe>"
    pages = {}
    for name in ("open", "sealed"):
        pages[name] = tmp_path / f"{name}.html"
        pages[name].write_text(f"<!DOCTYPE html><html><head></head><body>{body}</body></html>")
    seal(pages["sealed"])
    uris = {name: path.as_uri() for name, path in pages.items()}
    done = subprocess.run(
        [sys.executable, "-c", PROBE, CHROMIUM, *uris.values()],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    seen = json.loads(done.stdout)
    assert seen[uris["open"]] is not None  # the attack works on a page without the policy
    assert seen[uris["sealed"]] is None, seen
