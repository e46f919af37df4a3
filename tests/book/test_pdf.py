"""The book's PDFs (`make pdf`, tools/build_pdf.py), read back with Debian's poppler tools.

`make pdf-deps` installs poppler-utils (pdftotext, pdffonts, pdfinfo, pdftohtml) with apt-get.
The PDFs are printed here, once per test run, by tools/build_pdf.py from the built site in
_build/html (what `make pdf` writes into _build/pdf/); with BOOK_PDF_DIR set, the PDFs in that
folder are read instead. For each edition's PDF:

- every page of _toc.yml is in it, with its title (as the built site shows it, English or
  Chinese) in the text and as a top-level bookmark of the PDF outline, in reading order;
- every font is embedded, and the Chinese edition's text is Chinese (the CJK glyphs are drawn
  with an embedded font: a missing glyph would not extract as the character);
- no raw TeX is left (MathJax typeset every formula), no solution line shows (the secret
  lines of solutions/, judged by course.leaks as for the site) and no test marker of nbval;
- no word lies past the right edge of its page (code is wrapped, not cut): shown to fail on a
  page printed by the same Chromium with code that is not wrapped;
- the page count is plausible for the book (not a few pages, not thousands).

Environment: BOOK_PDF_DIR (default: print them here), BOOK_SITE_DIR (default _build/html).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support.book import EXERCISES, SOLUTIONS, released_source
from support.chromium import CHROMIUM

from course.leaks import find_leaks, notebook_text, secret_lines

ROOT = Path(__file__).resolve().parents[2]
GIVEN_PDFS = os.environ.get("BOOK_PDF_DIR")
SITE = Path(os.environ.get("BOOK_SITE_DIR", ROOT / "_build" / "html")).resolve()

EDITIONS = {"en": ("", "attention-from-zero-en.pdf"), "zh": ("zh/", "attention-from-zero-zh.pdf")}
PAGE_RANGE = (150, 800)  # the book printed on A4 has about 300 pages in each language
RAW_TEX = re.compile(r"\\(frac|sqrt|begin\{|mathrm|operatorname|text\{)|\$\$")
TOOLS = ("pdftotext", "pdffonts", "pdfinfo", "pdftohtml")


def _poppler(*args: str) -> str:
    missing = [tool for tool in TOOLS if shutil.which(tool) is None]
    if missing:
        pytest.fail(f"{', '.join(missing)} not found: run `make pdf-deps` (poppler-utils)")
    result = subprocess.run(args, capture_output=True, text=True, check=False)
    assert result.returncode == 0, f"{' '.join(args)}: {result.stderr}"
    return result.stdout


def _squash(text: str) -> str:
    """Text without whitespace: a PDF breaks lines where the page did."""
    return re.sub(r"\s+", "", text)


def _toc_titles(edition: str) -> list[str]:
    """The title (h1) of every page of the edition's site, in reading order."""
    import sys

    sys.path.insert(0, str(ROOT / "tools"))
    from term_report import toc_order

    titles = []
    for name in toc_order():
        html = (SITE / edition / f"{name}.html").read_text(encoding="utf-8")
        h1 = re.search(r"<h1>(.*?)<", html, flags=re.S)
        assert h1, f"{edition}{name}.html has no <h1>"
        titles.append(re.sub(r"&#8212;", "—", h1.group(1)).strip())
    return titles


class Book:
    """One edition's PDF and what poppler reads from it (each tool run once)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.text = _poppler("pdftotext", "-enc", "UTF-8", str(path), "-")
        self.fonts = _poppler("pdffonts", str(path))
        self.info = _poppler("pdfinfo", str(path))
        self.bbox = _poppler("pdftotext", "-bbox", str(path), "-")
        xml = _poppler("pdftohtml", "-xml", "-i", "-q", "-stdout", str(path))
        outline = xml[xml.find("<outline>") :]
        # top-level bookmarks: <item>s of the first <outline>, not of nested ones
        depth, self.bookmarks = 0, []
        for tag in re.finditer(r"<outline>|</outline>|<item page=\"\d+\">(.*?)</item>", outline):
            if tag.group(0) == "<outline>":
                depth += 1
            elif tag.group(0) == "</outline>":
                depth -= 1
            elif depth == 1:
                self.bookmarks.append(tag.group(1))

    @property
    def pages(self) -> int:
        return int(re.search(r"^Pages:\s+(\d+)", self.info, flags=re.M).group(1))


_BOOKS: dict[str, Book] = {}


@pytest.fixture(scope="module")
def pdfs(tmp_path_factory) -> Path:
    """The folder of both PDFs: BOOK_PDF_DIR, or both editions printed now from the site."""
    if GIVEN_PDFS:
        return Path(GIVEN_PDFS).resolve()
    out = tmp_path_factory.mktemp("pdf")
    _playwright_apart(
        [str(ROOT / "tools" / "build_pdf.py"), "--site", str(SITE), "--out", str(out)]
    )
    return out


def _playwright_apart(args: list[str]) -> None:
    """Run a Python script that drives Chromium in a process of its own: Playwright's sync API
    refuses to start where another sync session is open, as test_browser.py's is for the whole
    session when pytest-xdist gives both files to one worker."""
    result = subprocess.run([sys.executable, *args], capture_output=True, text=True, check=False)
    assert result.returncode == 0, (
        f"{' '.join(args)}:\n{result.stdout[-2000:]}{result.stderr[-3000:]}"
    )


@pytest.fixture(params=list(EDITIONS), ids=list(EDITIONS))
def book(request, pdfs) -> tuple[str, Book]:
    """(edition folder, its PDF read back), checked to be newer than the built site."""
    edition, name = EDITIONS[request.param]
    path = pdfs / name
    if not path.is_file():
        pytest.fail(f"no {path}: run `make pdf` (after `make book`)")
    site_page = SITE / edition / "intro.html"
    if site_page.is_file() and site_page.stat().st_mtime > path.stat().st_mtime:
        pytest.fail(f"{path} is older than the built site {site_page}: run `make pdf` again")
    if request.param not in _BOOKS:
        _BOOKS[request.param] = Book(path)
    return edition, _BOOKS[request.param]


def test_every_page_of_the_book_is_in_the_pdf_with_a_bookmark(book):
    edition, pdf = book
    titles = _toc_titles(edition)
    assert len(titles) == 22, titles
    text = _squash(pdf.text)
    missing = [t for t in titles if _squash(t) not in text]
    assert not missing, f"{pdf.path.name}: titles not in the text: {missing}"
    # pdftohtml joins a bookmark's lines without spaces, sometimes twice over
    marks = [_squash(b) for b in pdf.bookmarks]
    assert len(marks) == len(titles), f"{pdf.path.name}: top-level bookmarks {pdf.bookmarks}"
    for title, mark in zip(titles, marks, strict=True):
        assert _squash(title) in mark, f"bookmark {mark!r} for the page {title!r}"


def test_fonts_are_embedded_and_chinese_text_is_chinese(book):
    edition, pdf = book
    rows = [line.split() for line in pdf.fonts.splitlines()[2:] if line.strip()]
    assert rows, f"{pdf.path.name}: pdffonts lists no font"
    # columns from the right: emb sub uni object-number generation
    not_embedded = [" ".join(row) for row in rows if row[-5] != "yes"]
    assert not not_embedded, f"{pdf.path.name}: fonts not embedded: {not_embedded}"
    chinese = len(re.findall(r"[\u4e00-\u9fff]", pdf.text))
    if edition:
        assert chinese > 50_000, f"{pdf.path.name}: only {chinese} Chinese characters"
        for word in ("注意力", "位置编码", "多头注意力", "等人"):
            assert word in pdf.text, f"{pdf.path.name}: no {word}"
        assert "et al." not in pdf.text, f"{pdf.path.name}: 'et al.' in the Chinese edition"
    else:
        assert 0 < chinese < 2_000, f"{pdf.path.name}: {chinese} Chinese characters"


def test_no_raw_tex_and_no_solution_line(book, tmp_path):
    _edition, pdf = book
    raw = sorted({m.group(0) for m in RAW_TEX.finditer(pdf.text)})
    assert not raw, f"{pdf.path.name}: raw TeX in the text: {raw} (math not typeset?)"
    markers = sorted(set(re.findall(r"NBVAL_[A-Z_]+|nbval-tolerance", pdf.text, flags=re.I)))
    assert not markers, f"{pdf.path.name}: test markers printed for readers: {markers}"
    # public as in test_book_build: the student version, every released exercise and helpers
    public = (
        released_source()
        + "\n"
        + "\n".join(p.read_text(encoding="utf-8") for p in sorted((ROOT / "helpers").rglob("*.py")))
    )
    secrets: set[str] = set()
    for notebook in sorted(SOLUTIONS.rglob("*.ipynb")):
        if ".ipynb_checkpoints" not in notebook.parts:
            student = EXERCISES / notebook.relative_to(SOLUTIONS)
            secrets |= secret_lines(notebook, notebook_text(student) + "\n" + public)
    assert secrets, f"no secret lines found in {SOLUTIONS}: is the leak scanner looking there?"
    (tmp_path / "book.txt").write_text(pdf.text, encoding="utf-8")
    leaks = find_leaks(secrets, tmp_path)
    text = _squash(pdf.text)  # and across the PDF's own line breaks
    leaks.update({s: ["book.txt (over a line break)"] for s in secrets if _squash(s) in text})
    assert not leaks, f"{pdf.path.name}: solution lines: {sorted(leaks)[:3]}"
    planted = tmp_path / "planted"  # and the scanner does see a solution line in such a text
    planted.mkdir()
    (planted / "book.txt").write_text(pdf.text + "\n" + min(secrets), encoding="utf-8")
    assert find_leaks(secrets, planted), "a solution line planted in the text was not found"


def _words_past_the_edge(bbox: str) -> list[str]:
    """Words of `pdftotext -bbox` output whose right edge lies past their page's width."""
    found = []
    for page in re.finditer(r'<page width="([\d.]+)"[^>]*>(.*?)</page>', bbox, flags=re.S):
        width = float(page.group(1))
        for word in re.finditer(r'xMax="([\d.-]+)"[^>]*>([^<]*)</word>', page.group(2)):
            if float(word.group(1)) > width + 0.5:
                found.append(word.group(2))
    return found


def test_no_word_is_cut_at_the_page_edge(book):
    _edition, pdf = book
    assert "<word" in pdf.bbox
    cut = _words_past_the_edge(pdf.bbox)
    assert not cut, f"{pdf.path.name}: words past the right edge of the page: {cut[:10]}"


def test_the_edge_check_finds_code_that_is_not_wrapped(tmp_path):
    """The check above fails on a PDF whose code runs off the page (same Chromium, no wrap)."""
    if not os.access(CHROMIUM, os.X_OK):
        pytest.fail(f"{CHROMIUM} not found: run `make browser-deps`")
    line = " ".join(f"token_{i:03d}" for i in range(40))
    page_file = tmp_path / "wide.html"
    page_file.write_text(f"<pre style='white-space: pre'>{line}</pre>", encoding="utf-8")
    printer = tmp_path / "print_wide.py"
    printer.write_text(
        "from playwright.sync_api import sync_playwright\n"
        "with sync_playwright() as playwright:\n"
        "    browser = playwright.chromium.launch(\n"
        f"        executable_path={CHROMIUM!r}, args=['--no-sandbox'])\n"
        "    page = browser.new_page()\n"
        f"    page.goto({page_file.as_uri()!r})\n"
        f"    page.pdf(path={str(tmp_path / 'wide.pdf')!r}, format='A4')\n"
        "    browser.close()\n"
    )
    _playwright_apart([str(printer)])
    bbox = _poppler("pdftotext", "-bbox", str(tmp_path / "wide.pdf"), "-")
    assert "token_000" in bbox
    assert _words_past_the_edge(bbox), "a line wider than the page was not reported"


def test_page_count_is_plausible(book):
    _edition, pdf = book
    low, high = PAGE_RANGE
    assert low <= pdf.pages <= high, f"{pdf.path.name}: {pdf.pages} pages"
