"""The course's code as docs/architecture.md draws it: four packages, each importing only what
it may, and every module of them (and nbgrader's configuration of the course, and the grading
kernelspec) in that page's module table, so that the drawing cannot silently drift. Each
package's docstring names all its modules; the README's layout lists every top-level folder,
and docs/README.md every page of docs/.

Every import counts, also one inside a function (it only hides an arrow until that function
runs) and a relative one (``from .multi_head import ...``)."""

from __future__ import annotations

import ast
import importlib
import json
import re
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PAGE = REPO / "docs" / "architecture.md"
PACKAGES = ("helpers", "checks", "autograder", "course")
# part -> the parts it may import (a part is a package, helpers.pictures inside helpers, or the
# configuration that joins them to nbgrader)
MAY_IMPORT = {
    "helpers": set(),
    "helpers.pictures": {"helpers"},
    "checks": set(),
    "autograder": {"checks"},
    "course": {"checks", "autograder"},
    "configuration": {"autograder", "course"},
}
# Outside the packages, what decides how nbgrader runs the course: its configuration (a module,
# imports checked like the packages') and the grading kernelspec.
CONFIGURATION = {
    "nbgrader_config": REPO / "nbgrader_config.py",
    "tools/kernels/afz-grader": REPO / "tools" / "kernels" / "afz-grader" / "kernel.json",
}
# Single arrows the rule above does not give, each with its reason (the page says it too).
ALSO = {
    # the test cells' inputs put PyTorch's weights into the learner's modules with the model's
    # own mapping of names; nothing the grader imports reaches this module
    ("checks.fixtures", "helpers.interop"),
}


def _modules() -> dict[str, Path]:
    """Dotted name -> file, for every module of the four packages."""
    found = {}
    for package in PACKAGES:
        for path in sorted((REPO / package).rglob("*.py")):
            if "__pycache__" in path.parts:
                continue
            parts = list(path.relative_to(REPO).with_suffix("").parts)
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    found["nbgrader_config"] = CONFIGURATION["nbgrader_config"]
    return found


MODULES = _modules()


def part(module: str) -> str:
    if module in CONFIGURATION:
        return "configuration"
    return "helpers.pictures" if module.startswith("helpers.pictures") else module.split(".")[0]


def _package_of(module: str) -> str:
    path = MODULES[module]
    return module if path.name == "__init__.py" else module.rpartition(".")[0]


def _submodules(package: str) -> set[str]:
    """The modules and subpackages directly in ``package``, by their last name."""
    depth = package.count(".") + 1
    return {
        m.rsplit(".", 1)[1]
        for m in MODULES
        if m.startswith(package + ".") and m.count(".") == depth
    }


def _imports(module: str) -> set[str]:
    """The modules of the four packages that ``module`` imports, anywhere in it."""
    found = set()
    for node in ast.walk(ast.parse(MODULES[module].read_text(encoding="utf-8"))):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = _package_of(module).split(".")
                parent = parent[: len(parent) - (node.level - 1)]
                base = ".".join(parent + ([base] if base else []))
            # ``from X import a``: the module X.a if there is one, else X itself
            targets = [
                f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base for a in node.names
            ]
        for target in targets:
            # the deepest module of ours that the name is or lies in
            while target and target not in MODULES:
                target = target.rpartition(".")[0]
            if target and target != module:
                found.add(target)
    return found


GRAPH = {module: _imports(module) for module in MODULES}


def test_each_part_imports_only_what_it_may():
    wrong = [
        f"{module} imports {target}"
        for module, targets in sorted(GRAPH.items())
        for target in sorted(targets)
        if part(target) != part(module)
        and part(target) not in MAY_IMPORT[part(module)]
        and (module, target) not in ALSO
    ]
    assert wrong == [], "\n".join(wrong)


def test_the_grader_never_reaches_the_model():
    """Not even through the test cells' package: what autograder imports, and all that imports
    in turn, holds no module of helpers."""
    seen, todo = set(), [m for m in MODULES if part(m) == "autograder"]
    while todo:
        module = todo.pop()
        if module not in seen:
            seen.add(module)
            todo += GRAPH[module]
    assert sorted(m for m in seen if m.startswith("helpers")) == []


def test_the_rule_catches_an_arrow_against_it(monkeypatch):
    monkeypatch.setitem(GRAPH, "helpers.attention", GRAPH["helpers.attention"] | {"checks"})
    with pytest.raises(AssertionError, match="helpers.attention imports checks"):
        test_each_part_imports_only_what_it_may()


def page_table() -> dict[str, str]:
    """The page's module table: dotted name (or path) -> the part its row names."""
    rows = re.findall(r"^\| `([\w./-]+)` \| (\S+) \|", PAGE.read_text(encoding="utf-8"), re.M)
    return dict(rows)


def test_the_page_has_a_row_for_every_module_and_no_other():
    table = page_table()
    known = set(MODULES) | set(CONFIGURATION)
    assert sorted(known - set(table)) == [], "modules without a row on the page"
    assert sorted(set(table) - known) == [], "rows for modules that do not exist"
    wrong = {m: r for m, r in table.items() if r != part(m)}
    assert wrong == {}, "rows that name the wrong package"


def test_the_grading_kernelspec_runs_the_launcher_the_configuration_names():
    spec = json.loads(CONFIGURATION["tools/kernels/afz-grader"].read_text(encoding="utf-8"))
    assert spec["argv"][1:3] == ["-m", "autograder.kernel"] and "autograder.kernel" in MODULES
    config = CONFIGURATION["nbgrader_config"].read_text(encoding="utf-8")
    assert 'c.Execute.kernel_name = "afz-grader"' in config
    assert '"tools" / "kernels"' in config


def test_deleting_a_row_fails(monkeypatch):
    table = page_table()
    table.pop("checks.record")
    monkeypatch.setitem(globals(), "page_table", lambda: table)
    with pytest.raises(AssertionError, match="without a row"):
        globals()["test_the_page_has_a_row_for_every_module_and_no_other"]()


def test_no_import_cycles():
    cycles, state = [], {}

    def visit(node: str, path: list[str]) -> None:
        state[node] = "open"
        for nxt in sorted(GRAPH[node]):
            if state.get(nxt) == "open":
                cycles.append(" -> ".join(path[path.index(nxt) :] + [node, nxt]))
            elif nxt not in state:
                visit(nxt, path + [node])
        state[node] = "done"

    for node in sorted(GRAPH):
        if node not in state:
            visit(node, [])
    assert cycles == [], "\n".join(cycles)


# ---------------------------------------------------------------------------------------
# each package's docstring, the README's layout, the index of docs/
# ---------------------------------------------------------------------------------------
def docstring_modules(package: str) -> list[str]:
    """The modules a package's docstring names, one list item each (``- ``name``: ...`` or
    ``- :mod:`~package.name`: ...``)."""
    doc = importlib.import_module(package).__doc__ or ""
    return re.findall(r"^- (?:``(\w+)``|:mod:`~[\w.]+\.(\w+)`):", doc, re.M)


@pytest.mark.parametrize(
    "package", sorted(m for m, p in MODULES.items() if p.name == "__init__.py")
)
def test_each_package_names_all_its_modules(package):
    named = ["".join(pair) for pair in docstring_modules(package)]
    assert len(named) == len(set(named)), "a module named twice"
    assert sorted(_submodules(package) - set(named)) == [], "modules its docstring leaves out"
    assert sorted(set(named) - _submodules(package)) == [], "names of modules that do not exist"
    lines = (importlib.import_module(package).__doc__ or "").splitlines()
    for line, after in zip(lines, lines[1:] + [""], strict=True):
        if line.startswith("- ") and after.strip() and not after.startswith("- "):
            raise AssertionError(f"a module's line runs on: {line!r}")


def test_a_module_left_out_of_a_docstring_fails(monkeypatch):
    import checks

    doc = checks.__doc__ or ""
    assert "- ``sweep``:" in doc
    monkeypatch.setattr(checks, "__doc__", doc.replace("- ``sweep``:", "- sweep:"))
    with pytest.raises(AssertionError, match="leaves out"):
        test_each_package_names_all_its_modules("checks")


README = REPO / "README.md"


def readme_layout() -> list[str]:
    """The README's layout list: the first path of each item (``- `tests/`: ...``), and the
    others it names before its colon (``- `_ext/`, `_static/`: ...``)."""
    text = README.read_text(encoding="utf-8").split("\n## Layout\n", 1)[1].split("\n## ")[0]
    return [
        p for head in re.findall(r"^- (.+?): ", text, re.M) for p in re.findall(r"`([^`]+)`", head)
    ]


def tracked_folders() -> set[str]:
    files = subprocess.run(
        ["git", "ls-files"], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout.splitlines()
    return {f.split("/", 1)[0] + "/" for f in files if "/" in f}


def test_the_readme_layout_lists_every_top_level_folder_and_package():
    listed = readme_layout()
    assert len(listed) == len(set(listed)), "a path listed twice"
    folders = {p for p in listed if p.endswith("/")}
    assert sorted(tracked_folders() - folders) == [], "top-level folders the README leaves out"
    assert sorted(folders - tracked_folders()) == [], "folders the README lists and git has not"
    packages = {f"{p}/" for p in PACKAGES}
    assert packages <= folders
    for path in listed:
        assert (REPO / path).exists(), path


def test_the_readme_routes_first():
    """The two commands come first (CI runs `make test`), and the README stays a page of
    routes: what it explains lives in the pages it links, each of which exists."""
    text = README.read_text(encoding="utf-8")
    block = text.split("```bash\n", 1)[1].split("```", 1)[0].splitlines()
    assert [line.split()[:2] for line in block if line.startswith("make")] == [
        ["make", "book"],
        ["make", "test"],
    ]
    assert text.index("```bash") < text.index("\n## ")
    for who in ("**Learners**", "**Instructors**", "**Maintainers**"):
        assert who in text
    for link in re.findall(r"\]\(([^)#]+)\)", text):
        assert (REPO / link).exists(), link
    assert len(text.splitlines()) <= 60, "the README routes; the pages explain"


def test_docs_index_lists_every_page():
    index = (REPO / "docs" / "README.md").read_text(encoding="utf-8")
    links = set(re.findall(r"\]\(([^)#]+)\)", index))
    pages = {p.name for p in (REPO / "docs").glob("*.md")} - {"README.md"}
    folders = {f"{p.name}/README.md" for p in (REPO / "docs").iterdir() if p.is_dir()}
    assert sorted((pages | folders) - links) == [], "pages of docs/ the index leaves out"
    for link in links:
        assert (REPO / "docs" / link).exists(), link


PRIVATE = re.compile(r"\b[Ii]ssues? #?\d+|\(stop \d+\)|\bthe house\b|\b(four|other|the) rooms\b")


def test_no_issue_numbers_or_private_words_in_the_docs_and_comments():
    """A reader has no key to "issue 23", "(stop 35)" or "the four rooms": the README, the
    docs, the guides and the code's comments say what they mean instead."""
    files = subprocess.run(
        ["git", "ls-files", "*.md", "*.py", "Makefile", "pyproject.toml"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    found = []
    for name in files:
        if name.startswith(("locale/", "seed/")) or not (REPO / name).is_file():
            continue
        for number, line in enumerate((REPO / name).read_text(encoding="utf-8").splitlines(), 1):
            code = line.split("#", 1)[0] if name.endswith(".py") else ""
            if PRIVATE.search(line) and not PRIVATE.search(code):
                found.append(f"{name}:{number}: {line.strip()}")
    assert found == [], "\n".join(found)
