"""The published book, opened in a real browser with no network beyond the book itself.

Playwright for Python drives Debian's Chromium (/usr/bin/chromium, installed by
`make browser-deps`; `playwright install` is never used) against the built site
(_build/html, written by `make book`) served by `python -m http.server` on 127.0.0.1. Every
request that would leave 127.0.0.1 is blocked and makes the page fail. For each page:

- it loads without console errors, JavaScript errors, failed requests or broken images;
- math is typeset by the MathJax served from the site (no raw TeX such as \\frac visible);
- Chinese text renders with a real glyph, not an empty box (tofu), drawn on a canvas with the
  font the page uses for that text, and compared with a code point no font has;
- no solution text is visible and every file offered by the download button is free of it;
  there is no launch button and no placeholder link;
- on a narrow (mobile) viewport the page does not scroll horizontally.

Both editions are tested: the English one at the site's root and the Chinese one under zh/
(`make book` builds both). Every page has a visible language switch that leads to the same page
of the other edition, and every page with Chinese text loads the font that draws it before its
body. Chromium's own report of the fonts it drew the site title, the sidebar and the headings
with (DevTools' CSS.getPlatformFontsForNode) shows no Chinese text drawn without a CJK font, over
HTTP and read from the disk (file://, a few pages of each edition); a copy of a page without its
font shows that this check fails when the font is missing. The site's own words (print button,
search box, footer, permalink tooltips) are in the edition's language, and the Chinese edition
has one title (landing page, sidebar, browser tab).

For the whole book: search finds the positional-encoding chapter for "positional" (and, in the
Chinese edition, the right chapters for Chinese words typed without spaces), the next/previous
links walk through every page of _toc.yml in order in each edition, the exercise pages offer
the student notebook for download, the figure font covers every Chinese character of the book,
and screenshots of the intro, the hand-calculation chapter and one exercise page (and of the
Chinese intro and hand-calculation chapter) are written to _build/screenshots/ for a person to
look at.

Environment variables: BOOK_SITE_DIR (default _build/html) points the tests at another built
site, e.g. a deliberately broken copy; BOOK_SCREENSHOT_DIR (default _build/screenshots).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import yaml
from playwright.sync_api import Browser, Page
from support.book import SOLUTIONS, released_source

from course.leaks import notebook_text, secret_lines
from helpers.pictures.plotting import missing_glyphs

ROOT = Path(__file__).resolve().parents[2]
SITE = Path(os.environ.get("BOOK_SITE_DIR", ROOT / "_build" / "html")).resolve()
SCREENSHOTS = Path(os.environ.get("BOOK_SCREENSHOT_DIR", ROOT / "_build" / "screenshots"))
EXERCISES = ROOT / "exercises"

DESKTOP = {"width": 1280, "height": 900}
MOBILE = {"width": 375, "height": 740}  # a small phone
TIMEOUT_MS = 60_000  # per step; make test runs Chromium beside the notebooks on 2 cores
QUIET_S = 0.5  # the network is quiet after this long without an open request (Playwright's)
QUIET_TIMEOUT_S = 90

INTRO = "intro.html"
HAND_CALCULATION = "chapters/02_attention_by_hand.html"
SEARCH_TERM = "positional"
SOLUTION_MARKERS = re.compile(r"(BEGIN|END) (SOLUTION|HIDDEN TESTS)")
RAW_TEX = re.compile(r"\\(frac|sqrt|begin\{|mathrm|operatorname|text\{)|\$\$")
LAUNCH_SELECTOR = (
    ".dropdown-launch-buttons, .launch-buttons, .btn-launch-thebe, .thebe-launch-button, "
    ".btn-repository-button, .btn-edit-button, .btn-source-repository-button"
)
PLACEHOLDER_HREF = re.compile(
    r"mybinder\.org|binderhub|colab\.research\.google\.com|deepnote|jupyterhub|"
    r"example\.(com|org)|executablebooks/jupyter-book|your[-_]?(user|org|repo|name)|placeholder",
    re.IGNORECASE,
)


# ----------------------------------------------------------------------------------------------
# the site and its pages


def _site_pages() -> list[str]:
    """Every HTML page of the built site, as a path relative to its root (index.html aside)."""
    if not SITE.is_dir():
        return []
    skip = {"_static", "_sources", "_images", "_downloads"}
    return sorted(
        p.relative_to(SITE).as_posix()
        for p in SITE.rglob("*.html")
        if not skip.intersection(p.relative_to(SITE).parts) and p.name != "index.html"
    )


def _toc_order() -> list[str]:
    """The pages of _toc.yml in reading order, as .html paths."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    order = [toc["root"]]

    def walk(entries):
        for entry in entries or []:
            if "file" in entry:
                order.append(entry["file"])
            elif "glob" in entry:
                raise AssertionError("_toc.yml uses `glob`: list the files so the order is fixed")
            walk(entry.get("sections"))
            walk(entry.get("chapters"))

    for part in toc.get("parts", []):
        walk(part.get("chapters"))
    walk(toc.get("chapters"))
    walk(toc.get("sections"))
    return [str(Path(name).with_suffix("")) + ".html" for name in order]


EDITIONS = ("", "zh/")  # the English edition at the root, the Chinese one in zh/


def _edition(path: str) -> str:
    """The edition folder of a page path: "" (English) or "zh/"."""
    return "zh/" if path.startswith("zh/") else ""


def _bare(path: str) -> str:
    """A page's path inside its edition: zh/chapters/x.html -> chapters/x.html."""
    return path.removeprefix(_edition(path))


def _twin(path: str) -> str:
    """The same page in the other edition."""
    return _bare(path) if _edition(path) else "zh/" + path


PAGES = _site_pages() or ["(no built site)"]
EXERCISE_PAGES = [p for p in PAGES if _bare(p).startswith("exercises/")]


def _check_site() -> None:
    if not (SITE / "index.html").is_file():
        pytest.fail(f"no built book in {SITE}: run `make book` first (or set BOOK_SITE_DIR)")


# ----------------------------------------------------------------------------------------------
# fixtures: a local web server and a browser that may only talk to it


@pytest.fixture(scope="session")
def base_url():
    _check_site()
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    command = [sys.executable, "-m", "http.server", "--bind", "127.0.0.1", str(port)]
    server = subprocess.Popen(
        [*command, "--directory", str(SITE)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}/"
    deadline = time.monotonic() + 20
    while True:
        try:
            with urllib.request.urlopen(url + "index.html", timeout=2):
                break
        except OSError:
            if server.poll() is not None or time.monotonic() > deadline:
                server.kill()
                pytest.fail(f"could not start `{' '.join(command)}` serving {SITE}")
            time.sleep(0.1)
    yield url
    server.terminate()
    server.wait(timeout=10)


@dataclass
class Visit:
    """What happened while one page loaded, and what the page showed."""

    url: str
    console_errors: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)
    failed_requests: list[str] = field(default_factory=list)
    external_requests: list[str] = field(default_factory=list)
    facts: dict = field(default_factory=dict)

    def problems(self) -> list[str]:
        found = [f"console error: {m}" for m in self.console_errors]
        found += [f"JavaScript error: {m}" for m in self.page_errors]
        found += [f"failed request: {m}" for m in self.failed_requests]
        found += [f"request leaving the site (blocked): {m}" for m in self.external_requests]
        found += [f"broken image: {m}" for m in self.facts.get("broken_images", [])]
        return found


def _open(browser: Browser, base_url: str, viewport: dict) -> tuple[Page, Visit]:
    """A fresh page whose every request outside `base_url` is blocked and recorded."""
    context = browser.new_context(viewport=viewport)
    context.set_default_timeout(TIMEOUT_MS)
    visit = Visit(url="")
    own = urlsplit(base_url)

    def guard(route):
        url = urlsplit(route.request.url)
        if (url.scheme, url.hostname, url.port) == (own.scheme, own.hostname, own.port):
            route.continue_()
        else:
            visit.external_requests.append(route.request.url)
            route.abort("blockedbyclient")

    context.route("**/*", guard)
    page = context.new_page()
    _OPEN_REQUESTS[page] = open_requests = set()
    page.on("request", lambda r: open_requests.add(r))
    page.on("requestfinished", lambda r: open_requests.discard(r))
    page.on("requestfailed", lambda r: open_requests.discard(r))
    page.on("console", lambda m: visit.console_errors.append(m.text) if m.type == "error" else 0)
    page.on("pageerror", lambda e: visit.page_errors.append(str(e)))
    page.on(
        "requestfailed",
        lambda r: visit.failed_requests.append(f"{r.url} ({r.failure})"),
    )
    page.on(
        "response",
        lambda r: (
            visit.failed_requests.append(f"{r.url} (HTTP {r.status})") if r.status >= 400 else 0
        ),
    )
    return page, visit


_OPEN_REQUESTS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _wait_until_quiet(page: Page) -> None:
    """Playwright's "networkidle", with the requests still open named when it never comes."""
    open_requests = _OPEN_REQUESTS[page]
    deadline = time.monotonic() + QUIET_TIMEOUT_S
    quiet_since = None
    while True:
        now = time.monotonic()
        if open_requests:
            quiet_since = None
        elif quiet_since is None:
            quiet_since = now
        elif now - quiet_since >= QUIET_S:
            return
        if now > deadline:
            still = sorted(r.url for r in open_requests)
            pytest.fail(
                f"{page.url}: {len(still)} request(s) still open after {QUIET_TIMEOUT_S} s: "
                + ", ".join(still[:5])
            )
        page.wait_for_timeout(100)


def _settle(page: Page) -> None:
    """Wait until MathJax has typeset, images have loaded and the network is quiet."""
    page.wait_for_load_state("load")
    page.evaluate(
        """async () => {
            if (window.MathJax && MathJax.startup && MathJax.startup.promise) {
                await MathJax.startup.promise;
            }
            const images = Array.from(document.images);
            images.forEach(img => { img.loading = "eager"; });
            await Promise.all(images.map(img => img.complete ? null :
                new Promise(done => { img.onload = img.onerror = done; })));
            await document.fonts.ready;
        }"""
    )
    _wait_until_quiet(page)


FACTS_JS = r"""async () => {
    const facts = {};
    facts.broken_images = Array.from(document.images)
        .filter(img => !img.complete || img.naturalWidth === 0)
        .map(img => img.getAttribute("src"));
    facts.images = document.images.length;
    // math: Sphinx marks every formula with class "math"; MathJax puts mjx-container inside
    const formulas = Array.from(document.querySelectorAll("article .math"));
    facts.formulas = formulas.length;
    facts.untypeset = formulas.filter(f => !f.querySelector("mjx-container"))
        .map(f => f.textContent.trim().slice(0, 80));
    facts.math_errors = Array.from(document.querySelectorAll("mjx-merror"))
        .map(e => e.textContent.slice(0, 80));
    facts.mathjax_version = window.MathJax && MathJax.version ? MathJax.version : null;
    // the text a reader sees outside code, and the whole visible text
    const prose = document.body.cloneNode(true);
    prose.querySelectorAll("pre, code, script, style, mjx-container, .highlight")
        .forEach(e => e.remove());
    facts.prose = prose.textContent;
    facts.text = document.body.innerText;
    facts.code = Array.from(document.querySelectorAll("pre")).map(p => p.innerText).join("\n");
    facts.download_links = Array.from(
        document.querySelectorAll(".dropdown-download-buttons a[href]")).map(a => a.href);
    facts.launch_buttons = Array.from(document.querySelectorAll(LAUNCH_SELECTOR))
        .map(e => e.outerHTML.slice(0, 120));
    facts.hrefs = Array.from(document.querySelectorAll("a[href], link[href]"))
        .map(a => a.getAttribute("href"));
    facts.switches = Array.from(document.querySelectorAll("a.afz-language-switch")).map(a => {
        const box = a.getBoundingClientRect();
        const visible = box.width > 0 && box.height > 0 && box.right <= window.innerWidth &&
            getComputedStyle(a).visibility !== "hidden";
        return {href: a.href, text: a.textContent.trim(), visible: visible};
    });
    facts.font_faces = Array.from(document.fonts).filter(f => /AFZ/.test(f.family))
        .map(f => f.status);
    const firstScript = document.head.querySelector("script[src]");
    facts.first_script = firstScript ? firstScript.src : null;
    facts.lang = document.documentElement.lang;
    facts.scroll_width = document.documentElement.scrollWidth;
    facts.inner_width = window.innerWidth;
    // Chinese text: draw each character with the font the page uses for it, and compare it
    // with a code point that no font has (the missing-glyph box, "tofu")
    const cjk = /[\u3001-\u303f\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff01-\uffef]/g;
    const byFont = new Map();
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        const el = node.parentElement;
        const chars = node.textContent.match(cjk);
        // mjx-assistive-mml: MathML copy of each formula for screen readers, never drawn
        const unseen = "script, style, noscript, template, mjx-assistive-mml";
        if (!el || !chars || el.closest(unseen)) continue;
        const style = getComputedStyle(el);
        const font = `${style.fontStyle} ${style.fontWeight} 40px ${style.fontFamily}`;
        if (!byFont.has(font)) byFont.set(font, new Set());
        chars.forEach(c => byFont.get(font).add(c));
    }
    const canvas = document.createElement("canvas");
    canvas.width = canvas.height = 64;
    const ctx = canvas.getContext("2d", {willReadFrequently: true});
    const draw = (font, text) => {
        ctx.clearRect(0, 0, 64, 64);
        ctx.font = font;
        ctx.textBaseline = "top";
        ctx.fillText(text, 4, 4);
        return ctx.getImageData(0, 0, 64, 64).data.join(",");
    };
    facts.cjk_chars = "";
    facts.tofu = [];
    for (const [font, chars] of byFont) {
        const text = Array.from(chars).join("");
        facts.cjk_chars += text;
        await document.fonts.load(font, text);
        const boxes = new Set([draw(font, "\u0378"), draw(font, "\u{10FFFD}")]);
        const blank = draw(font, " ");
        for (const c of chars) {
            const pixels = draw(font, c);
            if (boxes.has(pixels) || pixels === blank) facts.tofu.push(`${c} (font: ${font})`);
        }
    }
    return facts;
}""".replace("LAUNCH_SELECTOR", json.dumps(LAUNCH_SELECTOR))


_VISITS: dict[tuple[str, str], Visit] = {}


def visit(browser: Browser, base_url: str, path: str, mobile: bool = False) -> Visit:
    """Load `path` once per viewport (cached for the session) and record what happened."""
    key = (path, "mobile" if mobile else "desktop")
    if key not in _VISITS:
        page, record = _open(browser, base_url, MOBILE if mobile else DESKTOP)
        try:
            record.url = base_url + path
            page.goto(record.url, wait_until="load")
            _settle(page)
            record.facts = page.evaluate(FACTS_JS)
            if not mobile:
                record.facts["unrendered"] = unrendered_chinese(page)
        finally:
            page.context.close()
        _VISITS[key] = record
    return _VISITS[key]


# The places a reader sees first: the site title and the entries of the sidebar, the headings.
GLYPH_SELECTORS = ".navbar-brand, .navbar-brand *, .bd-sidenav a, h1, h2, h3, .toctree-l1 a"
MARK_GLYPH_TARGETS_JS = r"""selector => {
    const cjk = /[\u3001-\u303f\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff01-\uffef]/g;
    let n = 0;
    for (const el of document.querySelectorAll(selector)) {
        // the Chinese characters of the element's own text (its child text nodes)
        const own = Array.from(el.childNodes).filter(c => c.nodeType === Node.TEXT_NODE)
            .map(c => c.textContent).join("");
        const chars = own.match(cjk);
        const box = el.getBoundingClientRect();
        if (!chars || box.width === 0 || box.height === 0 || !el.checkVisibility()) continue;
        el.setAttribute("data-afz-cjk", String(chars.length));
        el.setAttribute("data-afz-text", own.trim().slice(0, 40));
        n += 1;
    }
    return n;
}"""


def unrendered_chinese(page: Page) -> list[str]:
    """Title, sidebar and heading text whose Chinese characters the browser did not draw with a
    real CJK font: what Chromium itself reports it used to draw each element's text (DevTools'
    CSS.getPlatformFontsForNode, the fonts of the actual layout, not a fresh drawing).

    Without a system CJK font (as on the test machine), only the book's own font has these
    glyphs; text laid out while that font was missing is drawn with a font that lacks them
    (DejaVu Sans's empty box) and is reported here, even if the font arrived later.
    """
    if not page.evaluate(MARK_GLYPH_TARGETS_JS, GLYPH_SELECTORS):
        return []
    cdp = page.context.new_cdp_session(page)
    try:
        cdp.send("DOM.enable")
        cdp.send("CSS.enable")
        root = cdp.send("DOM.getDocument", {"depth": 0})["root"]["nodeId"]
        nodes = cdp.send("DOM.querySelectorAll", {"nodeId": root, "selector": "[data-afz-cjk]"})
        problems = []
        for node in nodes["nodeIds"]:
            flat = cdp.send("DOM.getAttributes", {"nodeId": node})["attributes"]
            attributes = dict(zip(flat[::2], flat[1::2], strict=True))
            fonts = cdp.send("CSS.getPlatformFontsForNode", {"nodeId": node})["fonts"]
            if not fonts:  # not drawn at all (inside a closed <details>, say)
                continue
            cjk_glyphs = sum(f["glyphCount"] for f in fonts if _is_cjk_font(f["familyName"]))
            if cjk_glyphs < int(attributes["data-afz-cjk"]):
                used = ", ".join(f"{f['familyName']} ({f['glyphCount']})" for f in fonts)
                problems.append(f"{attributes['data-afz-text']!r} drawn with {used}")
        return problems
    finally:
        cdp.detach()


def _is_cjk_font(family: str) -> bool:
    """A font that has the book's Chinese characters (the book's own subset is Noto Sans CJK)."""
    return bool(re.search(r"CJK|Han Sans|WenQuanYi|Droid Sans Fallback", family, re.IGNORECASE))


def _problems_message(path: str, problems: list[str]) -> str:
    return f"{path}:\n  " + "\n  ".join(problems[:20])


# ----------------------------------------------------------------------------------------------
# every page


@pytest.mark.parametrize("path", PAGES)
def test_page_loads_without_errors_or_outside_requests(browser, base_url, path):
    record = visit(browser, base_url, path)
    assert not record.problems(), _problems_message(path, record.problems())


@pytest.mark.parametrize("path", PAGES)
def test_page_math_is_typeset_by_local_mathjax(browser, base_url, path):
    facts = visit(browser, base_url, path).facts
    raw = sorted(set(m.group(0) for m in RAW_TEX.finditer(facts["prose"])))
    assert not raw, f"{path}: raw TeX visible in the text: {raw} (math not typeset?)"
    if path == HAND_CALCULATION:
        assert facts["formulas"], f"{path}: no formulas found: is the math markup still there?"
    if facts["formulas"]:
        assert facts["mathjax_version"], f"{path}: has math but MathJax did not load"
        assert not facts["untypeset"], f"{path}: formulas not typeset: {facts['untypeset'][:5]}"
        assert not facts["math_errors"], f"{path}: MathJax errors: {facts['math_errors'][:5]}"


@pytest.mark.parametrize("path", PAGES)
def test_page_chinese_text_renders(browser, base_url, path):
    facts = visit(browser, base_url, path).facts
    assert not facts["tofu"], f"{path}: characters drawn as empty boxes: {facts['tofu'][:10]}"
    assert "missing from font" not in facts["text"], (
        f"{path}: a figure was drawn with a font lacking glyphs (matplotlib's 'Glyph ... missing "
        "from font' warning is on the page); call helpers.pictures.plotting.use_cjk_font() first"
    )


@pytest.mark.parametrize("path", PAGES)
def test_page_has_no_solution_text_launch_button_or_placeholder(browser, base_url, path):
    facts = visit(browser, base_url, path).facts
    if _bare(path).startswith(("chapters/", "exercises/")):  # the guide may name markers
        found = SOLUTION_MARKERS.findall(facts["text"])
        assert not found, f"{path}: nbgrader solution markers visible: {found[:3]}"
    # the code of the solution regions, in the code shown on the exercise pages and in the
    # code cells they offer for download (test_book_build.py scans all files of the site)
    exercise = _bare(path).startswith("exercises/")
    shown = {re.sub(r"\s+", " ", line).strip() for line in facts["code"].splitlines()}
    leaked = sorted(_secret_lines() & shown) if exercise else []
    assert not leaked, f"{path}: solution text visible: {leaked[:3]}"
    assert not facts["launch_buttons"], f"{path}: launch buttons: {facts['launch_buttons']}"
    # a link within the page (#on-a-jupyterhub, a section's anchor) launches nothing
    placeholders = [
        h for h in facts["hrefs"] if PLACEHOLDER_HREF.search(h or "") and not h.startswith("#")
    ]
    assert not placeholders, f"{path}: placeholder or launch links: {placeholders}"
    for link in facts["download_links"]:
        with urllib.request.urlopen(link, timeout=10) as response:
            body = response.read().decode("utf-8", errors="replace")
        if _bare(path).startswith(("chapters/", "exercises/")):
            marker = SOLUTION_MARKERS.search(body)
            assert not marker, f"{path}: download {link} has solution markers: {marker.group(0)!r}"
        code = _notebook_text(body, code_only=True) if link.endswith(".ipynb") else body
        offered = {re.sub(r"\s+", " ", line).strip() for line in code.splitlines()}
        leaked = sorted(_secret_lines() & offered) if exercise else []
        assert not leaked, f"{path}: download {link} contains solution text: {leaked[:3]}"


@pytest.mark.parametrize("path", PAGES)
def test_page_fits_a_phone_screen(browser, base_url, path):
    record = visit(browser, base_url, path, mobile=True)
    assert not record.problems(), _problems_message(path, record.problems())
    facts = record.facts
    assert facts["scroll_width"] <= facts["inner_width"], (
        f"{path}: scrolls sideways at {MOBILE['width']} px: the page is "
        f"{facts['scroll_width']} px wide; give wide content its own scroll box"
    )


@pytest.mark.parametrize("path", PAGES)
def test_page_links_to_itself_in_the_other_edition(browser, base_url, path):
    for mobile in (False, True):
        facts = visit(browser, base_url, path, mobile=mobile).facts
        switches = facts["switches"]
        where = f"{path} ({'mobile' if mobile else 'desktop'})"
        assert len(switches) == 1, f"{where}: {len(switches)} language switches: {switches}"
        assert switches[0]["visible"], f"{where}: the language switch is hidden or off screen"
        assert switches[0]["href"] == base_url + _twin(path), (
            f"{where}: the switch leads to {switches[0]['href']}, not to {base_url + _twin(path)}"
        )
        assert switches[0]["text"] == ("English" if _edition(path) else "中文"), switches[0]
    expected = "zh-CN" if _edition(path) else "en"
    assert facts["lang"] == expected, f"{path}: <html lang={facts['lang']!r}>, not {expected!r}"


@pytest.mark.parametrize("path", PAGES)
def test_page_with_chinese_text_loads_its_font_before_the_body(browser, base_url, path):
    """Chromium keeps drawing boxes for text laid out before a web font arrives: the font comes
    from a script at the very start of the head (_ext/cjk_webfont.py), loaded before any text."""
    facts = visit(browser, base_url, path).facts
    if not facts["cjk_chars"]:
        return
    assert (facts["first_script"] or "").endswith("_static/cjk-font.js"), (
        f"{path}: Chinese text, but the head's first script is {facts['first_script']!r}, not "
        "_static/cjk-font.js"
    )
    assert facts["font_faces"] == ["loaded", "loaded"], (
        f"{path}: the book's CJK font (regular and bold): {facts['font_faces']}"
    )


@pytest.mark.parametrize("path", PAGES)
def test_page_title_sidebar_and_headings_are_drawn_with_a_cjk_font(browser, base_url, path):
    unrendered = visit(browser, base_url, path).facts["unrendered"]
    assert not unrendered, f"{path}: Chinese text drawn as empty boxes: {unrendered[:5]}"


# Read from the disk, as docs/book.md says (file://): the same checks on a few pages per edition.
FROM_DISK = [INTRO, HAND_CALCULATION, "glossary.html", "exercises/01_attention/attention.html"]


@pytest.mark.parametrize("edition", EDITIONS, ids=["en", "zh"])
@pytest.mark.parametrize("path", FROM_DISK)
def test_page_read_from_the_disk_renders_its_chinese_text_and_math(browser, edition, path):
    _check_site()
    target = SITE / edition / path
    assert target.is_file(), f"{target} is not in the built site"
    page, record = _open(browser, SITE.as_uri() + "/", DESKTOP)  # only file:// may load
    try:
        record.url = target.as_uri()
        page.goto(record.url, wait_until="load")
        _settle(page)
        facts = page.evaluate(FACTS_JS)
        unrendered = unrendered_chinese(page)
    finally:
        page.context.close()
    where = f"{edition}{path} (file://)"
    assert not record.problems(), _problems_message(where, record.problems())
    assert facts["cjk_chars"], f"{where}: no Chinese text at all (the language switch has some)"
    assert not unrendered, f"{where}: Chinese text drawn as empty boxes: {unrendered[:5]}"
    assert not facts["tofu"], f"{where}: characters drawn as empty boxes: {facts['tofu'][:10]}"
    assert not facts["untypeset"], f"{where}: formulas not typeset: {facts['untypeset'][:5]}"


def test_unrendered_chinese_finds_text_drawn_without_the_font(browser, base_url, tmp_path):
    """The glyph check fails when the font is missing: the Chinese intro with the script that
    adds the book's CJK font left out, read from the disk."""
    _check_site()
    broken = tmp_path / "zh"
    html = (SITE / "zh" / INTRO).read_text(encoding="utf-8")
    script = re.search(r'<script src="[^"]*cjk-font\.js"></script>', html)
    assert script, "the Chinese intro does not load _static/cjk-font.js"
    broken.mkdir()
    (broken / INTRO).write_text(html.replace(script.group(0), ""), encoding="utf-8")
    (broken / "_static").symlink_to(SITE / "zh" / "_static")
    page, record = _open(browser, tmp_path.as_uri() + "/", DESKTOP)
    try:
        page.goto((broken / INTRO).as_uri(), wait_until="load")
        _settle(page)
        unrendered = unrendered_chinese(page)
    finally:
        page.context.close()
    assert any("从零" in item for item in unrendered), (
        f"without its font, the sidebar title should be reported: {unrendered}"
    )


# The theme's, Sphinx's and Jupyter Book's own words on a page of each edition: what a reader
# sees or hovers (the print button, the search box, the footer, the permalink tooltips).
SITE_WORDS_JS = """() => {
    const words = [document.title, document.body.innerText];
    // Bootstrap moves a tooltip's title to data-bs-original-title once it is set up
    const names = ["title", "aria-label", "placeholder", "data-bs-original-title"];
    for (const el of document.querySelectorAll(names.map(n => `[${n}]`).join(", "))) {
        for (const name of names) {
            if (el.hasAttribute(name)) words.push(el.getAttribute(name));
        }
    }
    return words.join("\\n");
}"""
SITE_WORDS = {
    "": (
        ["Print to PDF", "Search this book...", "© Copyright 2026.", "Link to this heading"]
        + ["Color mode", "Toggle primary sidebar", "Toggle secondary sidebar"],
        [],
    ),
    "zh/": (
        ["打印为 PDF", "搜索本书……", "© 版权所有 2026。", "链接到本标题", "链接到本术语"]
        + ["颜色模式", "显示或隐藏左侧目录", "显示或隐藏本页目录"],
        ["列印", "Print to PDF", "Search this book", "Copyright", "Link to this", "et al."]
        + ["Color mode", "System Settings", "Toggle primary", "Toggle secondary"],
    ),
}
# Words that are whole attribute values (aria-label="Main"): looked up as such, not as text.
SITE_LABELS_JS = """() => Array.from(document.querySelectorAll("[aria-label], [title]"))
    .flatMap(el => [el.getAttribute("aria-label"), el.getAttribute("title")])
    .filter(v => v !== null)"""
ENGLISH_LABELS = {"Main", "Page"}


@pytest.mark.parametrize("edition", EDITIONS, ids=["en", "zh"])
def test_site_words_are_in_the_edition_language(browser, base_url, edition):
    words, labels = "", set()
    for path in (INTRO, "glossary.html"):  # the glossary has the term permalinks
        page, record = _open(browser, base_url, DESKTOP)
        try:
            page.goto(base_url + edition + path)
            _settle(page)
            words += page.evaluate(SITE_WORDS_JS)
            labels |= set(page.evaluate(SITE_LABELS_JS))
        finally:
            page.context.close()
        assert not record.problems(), _problems_message(edition + path, record.problems())
    english = ENGLISH_LABELS & labels  # the two landmarks, over both pages
    if edition:
        assert not english, f"{edition}: English labels for screen readers: {english}"
    else:
        assert english == ENGLISH_LABELS, f"labels {sorted(labels)[:30]}"
    wanted, unwanted = SITE_WORDS[edition]
    missing = [w for w in wanted if w not in words]
    assert not missing, f"{edition or 'en/'}: these site words are missing: {missing}"
    found = [w for w in unwanted if w in words]
    assert not found, f"{edition}: words of another language or region: {found}"


# Chinese bold text (the notes' 原文 / 订正 labels, the lead-ins of paragraphs, the glossary's
# headwords) is drawn with the bold face of the book's CJK font, not the regular one: Chromium
# reports which face drew each element (DevTools' CSS.getPlatformFontsForNode).
BOLD_PAGES = ["zh/notes_on_the_article.html", "zh/glossary.html", "zh/" + HAND_CALCULATION]
MARK_BOLD_JS = r"""() => {
    const cjk = /[㐀-䶿一-鿿]/g;
    let n = 0;
    for (const el of document.querySelectorAll("article strong, article b, dl.glossary > dt")) {
        const own = Array.from(el.childNodes).filter(c => c.nodeType === Node.TEXT_NODE)
            .map(c => c.textContent).join("");
        const chars = own.match(cjk);
        if (!chars || !el.checkVisibility()) continue;
        el.setAttribute("data-afz-bold", String(chars.length));
        el.setAttribute("data-afz-text", own.trim().slice(0, 30));
        n += 1;
    }
    return n;
}"""


def faces_of_chinese_bold(page: Page) -> list[tuple[str, str, int]]:
    """(text, PostScript names of the fonts that drew it, Chinese characters) for every element
    of bold Chinese text on the page."""
    if not page.evaluate(MARK_BOLD_JS):
        return []
    cdp = page.context.new_cdp_session(page)
    try:
        cdp.send("DOM.enable")
        cdp.send("CSS.enable")
        root = cdp.send("DOM.getDocument", {"depth": 0})["root"]["nodeId"]
        nodes = cdp.send("DOM.querySelectorAll", {"nodeId": root, "selector": "[data-afz-bold]"})
        found = []
        for node in nodes["nodeIds"]:
            flat = cdp.send("DOM.getAttributes", {"nodeId": node})["attributes"]
            attributes = dict(zip(flat[::2], flat[1::2], strict=True))
            fonts = cdp.send("CSS.getPlatformFontsForNode", {"nodeId": node})["fonts"]
            names = ", ".join(
                f"{f.get('postScriptName') or f['familyName']} ({f['glyphCount']})" for f in fonts
            )
            found.append((attributes["data-afz-text"], names, int(attributes["data-afz-bold"])))
        return found
    finally:
        cdp.detach()


@pytest.mark.parametrize("path", BOLD_PAGES)
def test_chinese_bold_text_is_drawn_with_the_bold_face(browser, base_url, path):
    page, record = _open(browser, base_url, DESKTOP)
    try:
        page.goto(base_url + path, wait_until="load")
        _settle(page)
        found = faces_of_chinese_bold(page)
    finally:
        page.context.close()
    assert not record.problems(), _problems_message(path, record.problems())
    assert len(found) >= 3, f"{path}: only {len(found)} elements of bold Chinese text: {found}"
    regular = [(text, names) for text, names, _ in found if "Bold" not in names]
    assert not regular, f"{path}: bold Chinese text drawn without the bold face: {regular[:5]}"


def test_the_bold_check_sees_a_page_whose_font_has_no_bold_face(browser, base_url, tmp_path):
    """The check fails when the bold face is missing: the notes page with a copy of the font
    script that adds only the regular face (the single face that used to claim every weight)."""
    _check_site()
    site = tmp_path / "zh"
    shutil.copytree(SITE / "zh", site, ignore=shutil.ignore_patterns("_images", "*.ipynb"))
    script = site / "_static" / "cjk-font.js"
    faces = script.read_text(encoding="utf-8").splitlines()
    kept = [line for line in faces if not line.startswith('  face("') or "100 500" in line]
    kept = [line.replace('"100 500"', '"100 900"') for line in kept]
    assert len(kept) == len(faces) - 1, "expected one face(...) line per weight in cjk-font.js"
    script.write_text("\n".join(kept) + "\n", encoding="utf-8")
    page, record = _open(browser, tmp_path.as_uri() + "/", DESKTOP)
    try:
        page.goto((site / "notes_on_the_article.html").as_uri(), wait_until="load")
        _settle(page)
        found = faces_of_chinese_bold(page)
    finally:
        page.context.close()
    assert found, "no bold Chinese text found on the notes page"
    assert all("Bold" not in names for _, names, _ in found), found[:5]


def test_chinese_edition_has_one_title(browser, base_url):
    """The landing page's heading, the sidebar's site title and every tab title agree."""
    titles = {}
    for path in (INTRO, HAND_CALCULATION):
        page, record = _open(browser, base_url, DESKTOP)
        try:
            page.goto(base_url + "zh/" + path)
            titles[path] = page.evaluate(
                """() => ({tab: document.title,
                          site: document.querySelector(".navbar-brand").innerText.trim(),
                          h1: document.querySelector("h1").firstChild.textContent.trim()})"""
            )
        finally:
            page.context.close()
    title = titles[INTRO]["h1"]
    assert re.search(r"[\u4e00-\u9fff]", title), f"the landing page's heading {title!r}"
    for path, seen in titles.items():
        assert seen["site"] == title, f"zh/{path}: sidebar title {seen['site']!r} != {title!r}"
        assert seen["tab"].endswith(" — " + title), f"zh/{path}: tab {seen['tab']!r}"


GLOSSARY_JS = """() => Array.from(document.querySelectorAll("dl.glossary > dt")).map(dt => ({
    text: dt.firstChild.textContent.trim(),
    alias: dt.classList.contains("afz-alias"),
    // the headword this alias belongs to: the first <dt> of its entry
    entry: (() => { let e = dt; while (e.previousElementSibling &&
                                       e.previousElementSibling.tagName === "DT") {
                        e = e.previousElementSibling; }
                    return e.firstChild.textContent.trim(); })(),
}))"""
D2L_ALIASES = {
    "暂退法": "dropout",
    "强制教学": "teacher forcing",
    "层规范化": "layer normalization",
}


def test_chinese_glossary_is_bilingual_with_d2l_aliases_and_a_chinese_index(browser, base_url):
    page, record = _open(browser, base_url, DESKTOP)
    try:
        page.goto(base_url + "zh/glossary.html")
        terms = page.evaluate(GLOSSARY_JS)
        page.goto(base_url + "zh/genindex.html")
        groups = page.eval_on_selector_all(
            "h2[id]",
            """hs => Object.fromEntries(hs.map(h => [h.id, Array.from(
                h.nextElementSibling.querySelectorAll("a strong")).map(e => e.textContent.trim())
            ]))""",
        )
    finally:
        page.context.close()
    assert not record.problems(), _problems_message("zh glossary", record.problems())
    headwords = [t["text"] for t in terms if not t["alias"]]
    assert len(headwords) == 40, headwords
    plain = [h for h in headwords if not re.fullmatch(r"[^（]*[\u4e00-\u9fff][^（]*（[^）]+）", h)]
    assert sorted(plain) == ["BLEU", "softmax"], f"headwords without 中文（English）: {plain}"
    aliases = {t["text"]: t["entry"] for t in terms if t["alias"]}
    for alias, english in D2L_ALIASES.items():
        assert alias in aliases, f"the d2l-zh name {alias} is not in the Chinese glossary"
        assert aliases[alias].endswith(f"（{english}）"), (alias, aliases[alias])
    # the general index: Chinese keys (the bilingual headwords and the aliases) under the
    # pinyin initial of each
    keys = {key: letter for letter, group in groups.items() for key in group}
    assert set(headwords) <= set(keys), sorted(set(headwords) - set(keys))
    assert all(re.fullmatch(r"[A-Z]", letter) for letter in groups), sorted(groups)
    expected = {"暂退法": "Z", "强制教学": "Q", "层规范化": "C", "注意力（attention）": "Z"}
    assert {key: keys.get(key) for key in expected} == expected


_SECRETS: list[set[str]] = []


def _secret_lines() -> set[str]:
    """Code lines of the nbgrader solution and hidden-test regions (see test_book_build)."""
    if not _SECRETS:
        lines: set[str] = set()
        if SOLUTIONS.is_dir():
            for notebook in sorted(SOLUTIONS.rglob("*.ipynb")):
                if ".ipynb_checkpoints" not in notebook.parts:
                    student = EXERCISES / notebook.relative_to(SOLUTIONS)
                    public = notebook_text(student) + "\n" + released_source()
                    lines |= secret_lines(notebook, public)
        _SECRETS.append(lines)
    return _SECRETS[0]


def _notebook_text(raw: str, code_only: bool = False) -> str:
    notebook = json.loads(raw)
    parts = []
    for cell in notebook.get("cells", []):
        if code_only and cell.get("cell_type") != "code":
            continue
        parts.append("".join(cell.get("source", "")))
        for output in cell.get("outputs", []):
            parts.append("".join(output.get("text", "")))
    return "\n".join(parts)


# ----------------------------------------------------------------------------------------------
# the whole book


def test_index_redirects_to_the_intro(browser, base_url):
    page, record = _open(browser, base_url, DESKTOP)
    try:
        page.goto(base_url + "index.html")
        page.wait_for_url(f"**/{INTRO}")
    finally:
        page.context.close()
    assert not record.problems(), _problems_message("index.html", record.problems())


def test_search_finds_the_positional_encoding_chapter(browser, base_url):
    chapter = [p for p in _toc_order() if p.startswith("chapters/") and SEARCH_TERM in p]
    assert len(chapter) == 1, f"expected one chapter file named *{SEARCH_TERM}*: {chapter}"
    page, record = _open(browser, base_url, DESKTOP)
    try:
        page.goto(base_url + INTRO)
        page.locator("button.search-button-field:visible").first.click()
        box = page.locator("#pst-search-dialog input[name=q]")
        box.fill(SEARCH_TERM)
        box.press("Enter")
        page.wait_for_url(f"**/search.html?q={SEARCH_TERM}*")
        page.wait_for_function(
            "() => /Search finished|did not match/.test("
            "(document.querySelector('#search-results') || {}).innerText || '')"
        )
        results = page.eval_on_selector_all(
            "#search-results ul.search li a", "links => links.map(a => a.href)"
        )
    finally:
        page.context.close()
    assert not record.problems(), _problems_message("search", record.problems())
    hits = [urlsplit(r).path.lstrip("/") for r in results]
    assert chapter[0] in hits, f"search for {SEARCH_TERM!r} did not find {chapter[0]}: {hits}"


def _search(browser: Browser, base_url: str, start: str, query: str) -> list[str]:
    """Type `query` into the search box of page `start`; the pages of the results."""
    page, record = _open(browser, base_url, DESKTOP)
    try:
        page.goto(base_url + start)
        page.locator("button.search-button-field:visible").first.click()
        box = page.locator("#pst-search-dialog input[name=q]")
        box.fill(query)
        box.press("Enter")
        page.wait_for_url("**/search.html?q=*")
        page.wait_for_function(
            "() => document.querySelector('#search-results') && "
            "!document.querySelector('#search-progress')?.innerText && "
            "(document.querySelector('#search-results').querySelector('p.search-summary') || "
            " document.querySelector('#search-results > p'))"
        )
        results = page.eval_on_selector_all(
            "#search-results ul.search li a", "links => links.map(a => a.href)"
        )
    finally:
        page.context.close()
    assert not record.problems(), _problems_message(f"search {query!r}", record.problems())
    return [urlsplit(r).path.lstrip("/") for r in results]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("位置编码", "chapters/04_positional_encoding.html"),  # a term: one word of the index
        ("多头注意力", "chapters/03_multi_head_attention.html"),
        ("猫", "chapters/02_attention_by_hand.html"),  # a one-character word
        ("教师强制的暴露偏差", "chapters/07_training_vs_inference.html"),  # no spaces, 的 inside
        ("束搜索 长度惩罚", "chapters/07_training_vs_inference.html"),
        ("softmax 缩放", "chapters/02_attention_by_hand.html"),  # English and Chinese mixed
        ("暂退法", "glossary.html"),  # d2l-zh's names: aliases in the Chinese glossary
        ("强制教学", "glossary.html"),
        ("层规范化", "glossary.html"),
    ],
)
def test_chinese_search_finds_chinese_words(browser, base_url, query, expected):
    hits = _search(browser, base_url, "zh/intro.html", query)
    assert "zh/" + expected in hits, f"search for {query!r} did not find zh/{expected}: {hits}"
    assert all(h.startswith("zh/") for h in hits), f"{query!r} leads out of the edition: {hits}"


def test_language_switch_is_a_link_a_reader_can_click(browser, base_url):
    for start, viewport in (
        ("chapters/02_attention_by_hand.html", DESKTOP),
        ("intro.html", MOBILE),
    ):
        page, record = _open(browser, base_url, viewport)
        try:
            page.goto(base_url + start)
            _settle(page)  # a click while fonts load would abort those requests
            page.locator("a.afz-language-switch").click()
            page.wait_for_url(base_url + _twin(start))
            _settle(page)
            assert page.locator("html").get_attribute("lang") == "zh-CN"
            page.locator("a.afz-language-switch").click()
            page.wait_for_url(base_url + start)
            _settle(page)
        finally:
            page.context.close()
        assert not record.problems(), _problems_message(start, record.problems())


def _walk(page: Page, base_url: str, start: str, selector: str, limit: int) -> list[str]:
    """Follow the `selector` link from page to page; return the pages visited."""
    page.goto(base_url + start, wait_until="domcontentloaded")
    seen = [start]
    while len(seen) <= limit:
        link = page.locator(selector)
        if link.count() == 0:
            return seen
        href = link.first.get_attribute("href")
        page.goto(link.first.evaluate("a => a.href"), wait_until="domcontentloaded")
        path = urlsplit(page.url).path.lstrip("/")
        assert path not in seen, f"{selector} from {seen[-1]} ({href}) leads back to {path}"
        seen.append(path)
    return seen


@pytest.mark.parametrize("path", PAGES[:1] + [p for p in PAGES if p.startswith("chapters/")][-1:])
def test_page_names_its_icon_and_the_site_serves_it(browser, base_url, path):
    """Without a <link rel="icon">, browsers ask for /favicon.ico and log a 404."""
    page, visit = _open(browser, base_url, DESKTOP)
    try:
        page.goto(base_url + path)
        hrefs = page.eval_on_selector_all('link[rel~="icon"]', "els => els.map(e => e.href)")
        assert hrefs, f"{path}: no <link rel=icon>: set html.favicon in _config.yml"
        for href in hrefs:
            response = page.request.get(href)
            assert response.status == 200, f"{path}: icon {href} answers HTTP {response.status}"
            assert response.headers.get("content-type", "").startswith("image/"), href
    finally:
        page.context.close()
    assert visit.problems() == [], _problems_message(path, visit.problems())


@pytest.mark.parametrize("edition", EDITIONS, ids=["en", "zh"])
def test_next_and_previous_links_walk_through_the_book_in_order(browser, base_url, edition):
    order = [edition + page for page in _toc_order()]
    chapters = [p for p in order if _bare(p).startswith("chapters/")]
    on_disk = sorted(
        f"{edition}chapters/{p.stem}.html" for p in (ROOT / "chapters").glob("*.ipynb")
    )
    assert chapters == on_disk, f"_toc.yml chapters {chapters} != chapters/*.ipynb {on_disk}"
    assert len(chapters) == 11, f"expected the eleven chapters, found {len(chapters)}"
    # Only the HTML is needed to follow links: no scripts, styles, fonts or images (each page
    # loads them in test_page_loads_without_errors_or_outside_requests), which keeps it quick.
    context = browser.new_context(viewport=DESKTOP, java_script_enabled=False)
    context.set_default_timeout(TIMEOUT_MS)
    context.route(
        "**/*",
        lambda route: (
            route.continue_()
            if route.request.resource_type == "document" and route.request.url.startswith(base_url)
            else route.abort()
        ),
    )
    try:
        page = context.new_page()
        forward = _walk(page, base_url, order[0], "a.right-next", len(order))
        backward = _walk(page, base_url, order[-1], "a.left-prev", len(order))
    finally:
        context.close()
    assert forward == order, f"'next' links visit {forward}, _toc.yml says {order}"
    assert backward == order[::-1], f"'previous' links visit {backward}"


@pytest.mark.parametrize("path", EXERCISE_PAGES or ["(no exercise pages)"])
def test_exercise_download_is_the_student_notebook(browser, base_url, path):
    if not EXERCISE_PAGES:
        pytest.skip("the book has no pages under exercises/ yet")
    links = visit(browser, base_url, path).facts["download_links"]
    notebooks = [link for link in links if link.endswith(".ipynb")]
    expected = _bare(path).removesuffix(".html") + ".ipynb"
    source = f"{_edition(path)}_sources/{expected}"
    assert [urlsplit(n).path.lstrip("/") for n in notebooks] == [source], (
        f"{path}: the download button offers {links}, expected {source}"
    )
    with urllib.request.urlopen(notebooks[0], timeout=10) as response:
        offered = json.loads(response.read())
    student = json.loads((ROOT / expected).read_text(encoding="utf-8"))
    sources = [["".join(c["source"]) for c in nb["cells"]] for nb in (offered, student)]
    assert sources[0] == sources[1], f"{path}: the download differs from {expected}"
    assert any("YOUR CODE HERE" in s for s in sources[0]), f"{expected} has no exercise cell"


def test_figure_font_has_every_chinese_character_of_the_book(browser, base_url):
    chars = "".join(visit(browser, base_url, p).facts["cjk_chars"] for p in PAGES)
    hand = visit(browser, base_url, HAND_CALCULATION).facts["cjk_chars"]
    assert {"猫", "趴"} <= set(hand), f"{HAND_CALCULATION} shows no 猫/趴: {hand!r}"
    for notebook in sorted((ROOT / "chapters").glob("*.ipynb")):
        chars += "".join(_notebook_text(notebook.read_text(encoding="utf-8")))
    chinese = "".join(sorted({c for c in chars if "\u3400" <= c <= "\u9fff"}))
    missing = missing_glyphs(chinese)
    assert not missing, f"the figure font lacks {missing}: these would be tofu in figures"


SCREENSHOT_PAGES = {
    "intro": INTRO,
    "hand_calculation": HAND_CALCULATION,
    "exercise": EXERCISE_PAGES[0] if EXERCISE_PAGES else None,
    "zh_intro": "zh/" + INTRO,
    "zh_hand_calculation": "zh/" + HAND_CALCULATION,
}


@pytest.mark.parametrize("name", list(SCREENSHOT_PAGES))
def test_screenshot_for_a_person_to_look_at(browser, base_url, name):
    path = SCREENSHOT_PAGES[name]
    if path is None:
        pytest.skip("the book has no exercise page yet")
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    views = (
        (("desktop", DESKTOP), ("mobile", MOBILE))
        if name.endswith("intro")
        else (("desktop", DESKTOP),)
    )
    for label, viewport in views:
        page, record = _open(browser, base_url, viewport)
        target = SCREENSHOTS / f"{name}-{label}.png"
        try:
            page.goto(base_url + path)
            _settle(page)
            page.screenshot(path=str(target), full_page=True)
        finally:
            page.context.close()
        assert not record.problems(), _problems_message(path, record.problems())
        assert target.stat().st_size > 10_000, f"{target} looks empty"
