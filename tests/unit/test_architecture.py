"""The house as docs/architecture.md draws it: four rooms, each importing only what it may, and
every module of them in that page's module table (so the drawing cannot silently drift).

Every import counts, also one inside a function (it only hides an arrow until that function
runs) and a relative one (``from .multi_head import ...``)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PAGE = REPO / "docs" / "architecture.md"
PACKAGES = ("helpers", "checks", "autograder", "course")
# room -> the rooms it may import (a room is a package, or helpers.pictures inside helpers)
MAY_IMPORT = {
    "helpers": set(),
    "helpers.pictures": {"helpers"},
    "checks": set(),
    "autograder": {"checks"},
    "course": {"checks", "autograder"},
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
    return found


MODULES = _modules()


def room(module: str) -> str:
    return "helpers.pictures" if module.startswith("helpers.pictures") else module.split(".")[0]


def _package_of(module: str) -> str:
    path = MODULES[module]
    return module if path.name == "__init__.py" else module.rpartition(".")[0]


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


def test_each_room_imports_only_what_it_may():
    wrong = [
        f"{module} imports {target}"
        for module, targets in sorted(GRAPH.items())
        for target in sorted(targets)
        if room(target) != room(module)
        and room(target) not in MAY_IMPORT[room(module)]
        and (module, target) not in ALSO
    ]
    assert wrong == [], "\n".join(wrong)


def test_the_grader_never_reaches_the_model():
    """Not even through the test cells' package: what autograder imports, and all that imports
    in turn, holds no module of helpers."""
    seen, todo = set(), [m for m in MODULES if room(m) == "autograder"]
    while todo:
        module = todo.pop()
        if module not in seen:
            seen.add(module)
            todo += GRAPH[module]
    assert sorted(m for m in seen if m.startswith("helpers")) == []


def test_the_rule_catches_an_arrow_against_it(monkeypatch):
    monkeypatch.setitem(GRAPH, "helpers.attention", GRAPH["helpers.attention"] | {"checks"})
    with pytest.raises(AssertionError, match="helpers.attention imports checks"):
        test_each_room_imports_only_what_it_may()


def page_table() -> dict[str, str]:
    """The page's module table: dotted name -> the room its row names."""
    rows = re.findall(r"^\| `([\w.]+)` \| (\S+) \|", PAGE.read_text(encoding="utf-8"), re.M)
    return dict(rows)


def test_the_page_has_a_row_for_every_module_and_no_other():
    table = page_table()
    assert sorted(set(MODULES) - set(table)) == [], "modules without a row on the page"
    assert sorted(set(table) - set(MODULES)) == [], "rows for modules that do not exist"
    wrong = {m: r for m, r in table.items() if r != room(m)}
    assert wrong == {}, "rows that name the wrong room"


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
