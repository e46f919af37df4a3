"""The book's sources, without a build: the leak scanner finds what it must (so the check of
the built site, tests/book/test_book_build.py, is not vacuous), and the chapter notebooks are
listed in _toc.yml and stored executed, top to bottom, without errors or warnings.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest
import yaml

from autograder.regions import LEAK_LENGTH
from course.leaks import find_leaks, leaked_lines, notebook_text, secret_lines

ROOT = Path(__file__).resolve().parents[2]
CHAPTERS = ROOT / "chapters"


# ----------------------------------------------------------------------------------------------
# the scanner itself finds what it must (so the real check of the site is not vacuous)

SECRET = "weights = scores.masked_fill(~mask, -1e9).softmax(dim=-1)"
SOLUTION_CELL = f"""def attend(q, k, v, mask):
    ### BEGIN SOLUTION
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    {SECRET}
    return weights @ v
    ### END SOLUTION
"""
HIDDEN_CELL = """### BEGIN HIDDEN TESTS
assert torch.allclose(attend(q, k, v, None), expected_hidden_output)
### END HIDDEN TESTS
"""
STUDENT_CELL = """def attend(q, k, v, mask):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    # YOUR CODE HERE
    raise NotImplementedError()
"""


def _write_notebook(path: Path, sources: list[str]) -> Path:
    cells = [
        {"cell_type": "code", "metadata": {}, "source": s, "outputs": [], "execution_count": None}
        for s in sources
    ]
    notebook = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    path.write_text(json.dumps(notebook), encoding="utf-8")
    return path


def test_secret_lines_keep_long_solution_and_hidden_test_lines(tmp_path):
    solution = _write_notebook(tmp_path / "sol.ipynb", [SOLUTION_CELL, HIDDEN_CELL])
    student = _write_notebook(tmp_path / "student.ipynb", [STUDENT_CELL])
    lines = secret_lines(solution, notebook_text(student))
    assert SECRET in lines
    assert "assert torch.allclose(attend(q, k, v, None), expected_hidden_output)" in lines
    # in the student version too, so not secret; and too short to search for
    assert "scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))" not in lines
    assert len("return weights @ v") < LEAK_LENGTH
    assert "return weights @ v" not in lines
    assert secret_lines(solution) >= lines  # without a student version nothing is removed
    # quoted inside a sentence of the public text: not secret either
    hint = f"Hint: use `{SECRET}`."
    assert SECRET not in secret_lines(solution, notebook_text(student) + "\n" + hint)


def test_verify_release_uses_the_same_scanner(tmp_path):
    """`verify-release` flags a student version that has a secret line, and only then."""
    solution = _write_notebook(tmp_path / "sol.ipynb", [SOLUTION_CELL, HIDDEN_CELL])
    generated = "def attend(q, k, v, mask):\n    # YOUR CODE HERE\n    raise NotImplementedError()"
    student = _write_notebook(tmp_path / "student.ipynb", [generated])
    assert leaked_lines(solution, student) == []
    leaky = _write_notebook(tmp_path / "leaky.ipynb", [generated + "\n    " + SECRET])
    assert leaked_lines(solution, leaky) == [SECRET]
    assert set(leaked_lines(solution, solution)) == secret_lines(solution)


def test_find_leaks_sees_a_line_through_syntax_highlighting(tmp_path):
    site = tmp_path / "html"
    (site / "_sources").mkdir(parents=True)
    highlighted = "".join(
        f'<span class="n">{html.escape(token)}</span>' if token.strip() else token
        for token in re.split(r"(\s+)", SECRET)
    )
    (site / "page.html").write_text(f"<pre>{highlighted}</pre>", encoding="utf-8")
    (site / "clean.html").write_text("<p>weights = softmax(scores)</p>", encoding="utf-8")
    _write_notebook(site / "_sources" / "page.ipynb", ["x = 1\n" + SECRET])
    (site / "figure.png").write_bytes(b"\x89PNG" + SECRET.encode())  # binary: not scanned

    assert find_leaks({SECRET}, site) == {SECRET: ["_sources/page.ipynb", "page.html"]}
    assert find_leaks({"never = written.anywhere(in_this_site)"}, site) == {}


# ----------------------------------------------------------------------------------------------
# the chapter notebooks


def _toc_files() -> set[str]:
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    files: set[str] = set()

    def walk(node):
        if isinstance(node, dict):
            if "file" in node:
                files.add(str(Path(node["file"]).with_suffix("")))
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(toc)
    files.add(str(Path(toc["root"]).with_suffix("")))
    return files


CHAPTER_NOTEBOOKS = sorted(p for p in CHAPTERS.glob("*.ipynb"))


def test_there_are_eleven_chapters():
    assert [p.stem[:2] for p in CHAPTER_NOTEBOOKS] == [f"{i:02d}" for i in range(1, 12)]


@pytest.mark.parametrize("notebook", CHAPTER_NOTEBOOKS, ids=lambda p: p.stem)
def test_chapter_is_listed_in_toc(notebook):
    entry = str(notebook.relative_to(ROOT).with_suffix(""))
    assert entry in _toc_files(), f"{entry} is not in _toc.yml: add `- file: {entry}`"


@pytest.mark.parametrize("notebook", CHAPTER_NOTEBOOKS, ids=lambda p: p.stem)
def test_chapter_is_stored_executed_top_to_bottom(notebook):
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    code = [c for c in cells if c["cell_type"] == "code" and "".join(c["source"]).strip()]
    counts = [c["execution_count"] for c in code]
    fix = f"run: .venv/bin/python tools/execute_chapters.py {notebook.relative_to(ROOT)}"
    assert None not in counts, f"{notebook.name}: code cells without output; {fix}"
    assert counts == sorted(set(counts)), f"{notebook.name}: not run top to bottom; {fix}"


@pytest.mark.parametrize("notebook", CHAPTER_NOTEBOOKS, ids=lambda p: p.stem)
def test_chapter_outputs_have_no_errors_or_warnings(notebook):
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    for index, cell in enumerate(cells):
        for output in cell.get("outputs", []):
            where = f"{notebook.name}, cell {index}"
            assert output["output_type"] != "error", f"{where}: stored error {output['ename']}"
            if output["output_type"] == "stream":
                text = "".join(output["text"])
                assert output["name"] != "stderr", f"{where}: output on stderr: {text[:300]!r}"
            else:
                text = json.dumps(output.get("data", {}))
            assert "Traceback" not in text, f"{where}: a traceback in the output"


@pytest.mark.parametrize("notebook", CHAPTER_NOTEBOOKS, ids=lambda p: p.stem)
def test_chapter_code_shows_no_test_marker(notebook):
    """Test markers go in a cell's metadata or tags: its code is what the book shows."""
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    marker = re.compile(r"^\s*#\s*(NBVAL_|PYTEST_VALIDATE_)", re.MULTILINE)
    shown = [i for i, c in enumerate(cells) if marker.search("".join(c["source"]))]
    assert not shown, (
        f"{notebook.name}: cells {shown} carry an nbval marker in their code; put it in the cell's "
        "metadata ('nbval-tolerance') or tags ('nbval-ignore-output')"
    )
