"""The house as docs/architecture.md draws it: three packages, each importing only what it may,
and every module of them named on that page (so the drawing cannot silently drift)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PAGE = REPO / "docs" / "architecture.md"
# package -> the other packages of this repository it may import
MAY_IMPORT = {"helpers": set(), "autograder": {"helpers"}, "course": {"helpers", "autograder"}}
# The one import against the arrows, each with its reason (docs/architecture.md says it too).
EXCEPTIONS = {
    # A learner's visible checks are judged in the notebook by the grader's own comparison,
    # so that what the learner sees while working is what the grader will say.
    ("helpers/checks.py", "autograder"),
}


def _modules(package: str) -> list[Path]:
    return sorted(p for p in (REPO / package).rglob("*.py") if "__pycache__" not in p.parts)


def _imported_packages(path: Path) -> set[str]:
    """Top-level names of the absolute imports in a module (relative ones stay inside)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.split(".")[0])
    return found


@pytest.mark.parametrize("package", sorted(MAY_IMPORT))
def test_each_package_imports_only_what_it_may(package):
    assert _modules(package), f"{package}/ has no modules"
    forbidden = set(MAY_IMPORT) - MAY_IMPORT[package] - {package}
    wrong = [
        f"{path.relative_to(REPO)} imports {name}"
        for path in _modules(package)
        for name in sorted(_imported_packages(path) & forbidden)
        if (str(path.relative_to(REPO)), name) not in EXCEPTIONS
    ]
    assert wrong == [], "\n".join(wrong)


@pytest.mark.parametrize("package", sorted(MAY_IMPORT))
def test_the_page_names_every_module(package):
    page = PAGE.read_text(encoding="utf-8")
    missing = [
        str(path.relative_to(REPO))
        for path in _modules(package)
        if path.stem not in ("__init__", "__main__") and path.stem not in page
    ]
    assert missing == [], f"docs/architecture.md does not mention: {missing}"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _import_graph() -> dict[str, set[str]]:
    """module -> the modules of the three packages it imports, anywhere in it (an import
    inside a function is an arrow too: it only hides a cycle until that function runs)."""
    modules = {_module_name(p): p for package in MAY_IMPORT for p in _modules(package)}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        found = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                targets = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            found |= {t for t in targets if t in modules and t != name}
        graph[name] = found
    return graph


def test_no_import_cycles():
    graph = _import_graph()
    cycles, state = [], {}

    def visit(node: str, path: list[str]) -> None:
        state[node] = "open"
        for nxt in sorted(graph[node]):
            if state.get(nxt) == "open":
                cycles.append(" -> ".join(path[path.index(nxt) :] + [node, nxt]))
            elif nxt not in state:
                visit(nxt, path + [node])
        state[node] = "done"

    for node in sorted(graph):
        if node not in state:
            visit(node, [])
    assert cycles == [], "\n".join(cycles)
