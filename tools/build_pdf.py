"""Print the built book, English and Chinese, to PDF with Chromium (`make pdf`).

    python tools/build_pdf.py [--site _build/html] [--out _build/pdf]

For each edition this opens the edition's landing page of the built site (`make book`) in
Debian's Chromium (Playwright, /usr/bin/chromium; no LaTeX), served on 127.0.0.1 with every
other request refused, and turns it into one page holding the whole book: the title and a table
of contents (links to the parts), then the article of every page of _toc.yml in reading order,
each from a new sheet, with its ids and links rewritten to point inside the one page. The page
keeps the site's own styles and scripts, so the math is typeset by the site's MathJax
(sphinx-mathjax-offline, no download), the figures are the edition's (the Chinese one's carry
Chinese labels) and the Chinese text is drawn with the site's CJK font, which Chromium embeds
in the PDF. A print style wraps code and outputs at the page edge instead of cutting them.
Chromium prints it with a PDF outline (one bookmark per page of the book, its sections below)
and page numbers.

The exercise pages are the student notebooks the site shows (never solutions/). The build
fails if a formula is left untypeset or a code block is still wider than the page.

Writes _build/pdf/attention-from-zero-en.pdf and attention-from-zero-zh.pdf.
"""

from __future__ import annotations

import argparse
import functools
import http.server
import sys
import threading
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
from term_report import toc_order  # noqa: E402  (tools/ is not a package)

SITE = ROOT / "_build" / "html"
OUT = ROOT / "_build" / "pdf"
CHROMIUM = "/usr/bin/chromium"
# edition folder in the site -> (file name, "Contents" in that language)
EDITIONS = {
    "": ("attention-from-zero-en.pdf", "Contents"),
    "zh/": ("attention-from-zero-zh.pdf", "目录"),
}
TIMEOUT_MS = 120_000

PRINT_CSS = """
@page { size: A4; margin: 16mm 14mm 18mm 14mm; }
html, body { background: white !important; }
body { font-size: 10.5pt; }
.afz-book { max-width: none; margin: 0; padding: 0; }
.afz-book-part { break-before: page; }
.afz-book-title { font-size: 2.2em; font-weight: bold; margin: 2em 0 1.5em 0; }
.afz-book-toc ul { list-style: none; padding-left: 0; }
.afz-book-toc li { margin: 0.35em 0; }
/* code and outputs: wrap at the page edge, never cut or scrolled */
pre, pre *, .highlight pre, .output pre, .cell_output pre {
  white-space: pre-wrap !important; overflow-wrap: anywhere !important;
  word-break: normal !important;
}
pre, div.highlight, .cell_output, .output, .cell_input, div.cell {
  overflow: visible !important; max-height: none !important;
}
table { font-size: 0.85em; max-width: 100%; }
img { max-width: 100% !important; height: auto !important; break-inside: avoid; }
figure, .cell_output img { break-inside: avoid; }
mjx-container[display="true"] { overflow: visible !important; max-width: 100%; }
h1, h2, h3, h4 { break-after: avoid; }
.headerlink, .afz-language-switch, .toggle-button, .copybtn { display: none !important; }
"""

# Runs in the landing page: replaces its body with the whole book (the articles of `pages`).
ASSEMBLE_JS = r"""async ({pages, title, contents, css}) => {
    const style = document.createElement("style");
    style.textContent = css;
    document.head.append(style);
    document.documentElement.dataset.theme = "light";
    document.documentElement.dataset.mode = "light";
    const index = new Map(pages.map((p, i) => [new URL(p, location.href).pathname, i]));
    const book = document.createElement("div");
    book.className = "afz-book bd-article";
    const cover = document.createElement("p");
    cover.className = "afz-book-title";
    cover.textContent = title;
    book.append(cover);
    const toc = document.createElement("div");
    toc.className = "afz-book-toc";
    const tocTitle = document.createElement("p");
    tocTitle.innerHTML = `<strong>${contents}</strong>`;
    const list = document.createElement("ul");
    toc.append(tocTitle, list);
    book.append(toc);
    for (const [i, path] of pages.entries()) {
        const url = new URL(path, location.href);
        const response = await fetch(url);
        if (!response.ok) throw new Error(`${url}: HTTP ${response.status}`);
        const doc = new DOMParser().parseFromString(await response.text(), "text/html");
        const article = doc.querySelector("article.bd-article");
        if (!article) throw new Error(`${url}: no article`);
        article.querySelectorAll(".headerlink, .toctree-wrapper, script").forEach(e => e.remove());
        for (const el of article.querySelectorAll("[id]")) el.id = `p${i}-${el.id}`;
        for (const img of article.querySelectorAll("img[src]")) {
            img.src = new URL(img.getAttribute("src"), url).href;
            img.loading = "eager";
        }
        for (const a of article.querySelectorAll("a[href]")) {
            const target = new URL(a.getAttribute("href"), url);
            const own = target.origin === location.origin;
            const page = own ? index.get(target.pathname) : undefined;
            if (page !== undefined) {
                const id = target.hash ? `p${page}-${target.hash.slice(1)}` : `p${page}`;
                a.setAttribute("href", `#${id}`);
            } else {
                a.setAttribute("href", target.href);
            }
        }
        const part = document.createElement("section");
        part.className = "afz-book-part";
        part.id = `p${i}`;
        part.append(...article.childNodes);
        book.append(part);
        const heading = part.querySelector("h1");
        const item = document.createElement("li");
        const link = document.createElement("a");
        link.href = `#p${i}`;
        link.textContent = heading ? heading.firstChild.textContent.trim() : path;
        item.append(link);
        list.append(item);
    }
    document.body.replaceChildren(book);
    if (window.MathJax && MathJax.typesetPromise) {
        await MathJax.startup.promise;
        MathJax.typesetClear && MathJax.typesetClear();
        await MathJax.typesetPromise([book]);
    }
    await Promise.all(Array.from(document.images).map(img => img.complete ? null :
        new Promise(done => { img.onload = img.onerror = done; })));
    await document.fonts.ready;
    const math = Array.from(book.querySelectorAll(".math"));
    return {
        parts: pages.length,
        untypeset: math.filter(m => !m.querySelector("mjx-container"))
            .map(m => m.textContent.slice(0, 60)),
        math_errors: Array.from(book.querySelectorAll("mjx-merror"))
            .map(e => e.textContent.slice(0, 60)),
        broken_images: Array.from(document.images).filter(i => !i.naturalWidth).map(i => i.src),
    };
}"""

# After the print style is applied: code blocks still wider than the page (would be cut).
OVERFLOW_JS = r"""() => Array.from(document.querySelectorAll("pre"))
    .filter(p => p.scrollWidth > p.clientWidth + 1)
    .map(p => p.innerText.split("\n").find(l => l.length > 60) || p.innerText.slice(0, 80))"""


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # noqa: A002 (the base class's name)
        pass


def serve(site: Path) -> tuple[http.server.ThreadingHTTPServer, str]:
    """Serve `site` on 127.0.0.1 (a free port) in a thread; the server and its base URL."""
    handler = functools.partial(_QuietHandler, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/"


def print_edition(browser, base_url: str, edition: str, out: Path) -> dict:
    """Assemble one edition in a page and print it to `out`; what the assembly found."""
    pages = [f"{name}.html" for name in toc_order()]
    context = browser.new_context(viewport={"width": 794, "height": 1123})  # A4 at 96 dpi
    context.set_default_timeout(TIMEOUT_MS)
    own = urlsplit(base_url)
    refused: list[str] = []

    def guard(route):
        url = urlsplit(route.request.url)
        if (url.hostname, url.port) == (own.hostname, own.port):
            route.continue_()
        else:
            refused.append(route.request.url)
            route.abort("blockedbyclient")

    context.route("**/*", guard)
    try:
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(base_url + edition + pages[0], wait_until="networkidle")
        title = page.evaluate("() => document.querySelector('.navbar-brand').textContent.trim()")
        report = page.evaluate(
            ASSEMBLE_JS,
            {"pages": pages, "title": title, "contents": EDITIONS[edition][1], "css": PRINT_CSS},
        )
        page.emulate_media(media="print")
        page.wait_for_load_state("networkidle")
        report["overflowing_code"] = page.evaluate(OVERFLOW_JS)
        report["refused_requests"] = refused
        report["errors"] = errors
        problems = {k: v for k, v in report.items() if k != "parts" and v}
        if problems:
            raise RuntimeError(
                f"{edition or 'en/'}: the book page is not ready to print: {problems}"
            )
        page.pdf(
            path=str(out),
            format="A4",
            print_background=True,
            outline=True,
            tagged=True,
            display_header_footer=True,
            header_template="<span></span>",
            footer_template=(
                '<div style="width:100%;font-size:8pt;text-align:center;color:#555">'
                '<span class="pageNumber"></span> / <span class="totalPages"></span></div>'
            ),
            margin={"top": "16mm", "bottom": "18mm", "left": "14mm", "right": "14mm"},
        )
    finally:
        context.close()
    return report


def build(site: Path = SITE, out: Path = OUT) -> list[Path]:
    """Print both editions of the built site into `out`; the PDFs written."""
    from playwright.sync_api import sync_playwright

    for edition in EDITIONS:
        if not (site / edition / "intro.html").is_file():
            raise SystemExit(f"no built book in {site / edition}: run `make book` first")
    if not Path(CHROMIUM).is_file():
        raise SystemExit(f"{CHROMIUM} not found: run `make browser-deps`")
    out.mkdir(parents=True, exist_ok=True)
    server, base_url = serve(site)
    written = []
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(
                executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"], headless=True
            )
            try:
                for edition, (name, _contents) in EDITIONS.items():
                    target = out / name
                    tmp = target.with_suffix(".tmp.pdf")
                    report = print_edition(browser, base_url, edition, tmp)
                    tmp.replace(target)
                    written.append(target)
                    print(
                        f"{target.relative_to(ROOT) if target.is_relative_to(ROOT) else target}: "
                        f"{report['parts']} pages of the book, {target.stat().st_size // 1024} KiB"
                    )
            finally:
                browser.close()
    finally:
        server.shutdown()
        server.server_close()
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--site", type=Path, default=SITE, help="the built site (make book)")
    parser.add_argument("--out", type=Path, default=OUT, help="where the PDFs go")
    args = parser.parse_args(argv)
    build(args.site.resolve(), args.out.resolve())
    return 0


if __name__ == "__main__":
    sys.exit(main())
