"""The form of a test cell that the learner's kernel runs: inputs and calls, no answers.

A test cell of the source notebook says what the learner's code is run on and what its
results should be (``expected``, ``like=`` values of known mistakes, agreement targets), and
often computes those values itself (a plain softmax, a known-good attention). The grader's
replay (``autograder/replay.py``) runs that full form with the solution, in the grader's own
process. The kernel, where the learner's code runs, gets the *kernel form*:

* every check call keeps only what it records, the check's name and the learner's value:
  ``t.close(name, actual)``, ``t.equal(...)``, ``t.shape(...)``, ``t.agree(...)``,
  ``t.true(...)``; ``t.raises(name, None, fn, *args)`` keeps the call it watches;
* then every assignment, ``def`` or ``class`` whose names nothing left in the notebook reads
  is removed (again, until none is), so code that only built expected values is gone.

So nothing in the kernel computes or holds a value a verdict compares with; a learner's code
that looks for one (in the cell's globals, its frames, its source in ``In[]``) finds inputs.
The course's tests grade every solution through this form and check that no ``def``, ``class``
or ``lambda`` that is not a call of the learner's code is left in a kernel form
(``tests/test_kernel_form.py``).
"""

from __future__ import annotations

import ast
import json
from collections import Counter
from collections.abc import Iterable
from functools import lru_cache
from typing import Any

from autograder import regions

# check -> how many leading positional arguments the kernel keeps (name and value)
RECORDED = {"close": 2, "equal": 2, "shape": 2, "agree": 2, "true": 2}


_source = regions.source_of
_is_test = regions.is_test_cell


def kernel_forms(source_nb: dict[str, Any]) -> dict[str, str]:
    """``{grade_id: kernel form}`` of every test cell of the source notebook ``source_nb``."""
    return dict(_kernel_forms(json.dumps(source_nb.get("cells", []), sort_keys=True)))


@lru_cache(maxsize=16)
def _kernel_forms(cells_json: str) -> tuple[tuple[str, str], ...]:
    return tuple(_forms({"cells": json.loads(cells_json)}).items())


def _forms(source_nb: dict[str, Any]) -> dict[str, str]:
    """``{grade_id: kernel form}`` of every test cell of the source notebook ``source_nb``.

    A name that another cell of the source reads keeps the statement that binds it; the
    other names the cell binds are deleted at its end, so no later cell finds them.
    """
    cells = [c for c in source_nb.get("cells", []) if c.get("cell_type") == "code"]
    tests = {c["metadata"]["nbgrader"]["grade_id"]: _source(c) for c in cells if _is_test(c)}
    reads_by_cell = []
    for cell in cells:
        text = _source(cell)
        if _is_test(cell):
            text = "\n".join(s for s in _kept_text(text))
        reads_by_cell.append((regions.nbgrader_meta(cell).get("grade_id"), _reads(text)))
    forms = {}
    for grade_id, text in tests.items():
        elsewhere = set().union(*(r for g, r in reads_by_cell if g != grade_id))
        forms[grade_id] = kernel_form(text, elsewhere)
    return forms


def kernel_form(source: str, read_elsewhere: Iterable[str] = ()) -> str:
    """The kernel form of one test cell's ``source`` (see the module's docstring)."""
    tree = ast.parse(source)
    testers = _testers(tree)
    edits: list[tuple[int, int, str]] = []  # (start offset, end offset, new text)
    lines = source.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))

    def offset(lineno: int, col: int) -> int:
        return starts[lineno - 1] + len(lines[lineno - 1].encode()[:col].decode())

    dropped: set[int] = set()  # ids of argument nodes the kernel does not get
    for node in ast.walk(tree):
        new = _check_call(node, testers, source, dropped)
        if new is not None:
            start = offset(node.lineno, node.col_offset)  # type: ignore[attr-defined]
            edits.append((start, _end(node, offset), new))
    removed = _dead_statements(tree, dropped, set(read_elsewhere))
    for stmt in removed:
        first = min([stmt.lineno] + [d.lineno for d in getattr(stmt, "decorator_list", [])])
        start = offset(first, 0)
        end = _end(stmt, offset)
        if end < len(source) and source[end] == "\n":
            end += 1
        indent = lines[first - 1][: len(lines[first - 1]) - len(lines[first - 1].lstrip())]
        edits.append((start, end, f"{indent}pass\n"))
    text = source
    for start, end, new in sorted(_outermost(edits), reverse=True):
        text = text[:start] + new + text[end:]
    gone = sorted(_top_level_names(ast.parse(text)) - set(read_elsewhere))
    if gone:
        names = ", ".join(repr(n) for n in gone)
        text = text.rstrip("\n") + f"\nfor _name in ({names},):\n    globals().pop(_name, None)\n"
    return text


def _top_level_names(tree: ast.Module) -> set[str]:
    """Names the cell binds outside any def or class (``t``, inputs, results)."""
    names: set[str] = set()
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                names.add(child.name)
            elif isinstance(child, ast.Lambda | ast.ListComp | ast.SetComp | ast.DictComp):
                continue
            elif isinstance(child, ast.GeneratorExp):
                continue
            elif isinstance(child, ast.Name) and isinstance(child.ctx, ast.Store):
                names.add(child.id)
            elif isinstance(child, ast.alias):
                names.add((child.asname or child.name).split(".")[0])
            else:
                stack.append(child)
    return names


def _end(node: ast.AST, offset: Any) -> int:
    return offset(node.end_lineno, node.end_col_offset)  # type: ignore[attr-defined]


def _outermost(edits: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """Edits not inside another one (a removed statement holds the check calls it held)."""
    edits = sorted(edits, key=lambda e: (e[0], -e[1]))
    kept: list[tuple[int, int, str]] = []
    for edit in edits:
        if kept and edit[0] < kept[-1][1]:
            continue
        kept.append(edit)
    return kept


def _testers(tree: ast.AST) -> set[str]:
    """Names bound to ``Test(...)`` in the cell."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            func = node.value.func
            called = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
            if called == "Test":
                names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    return names


def _check_call(node: ast.AST, testers: set[str], source: str, dropped: set[int]) -> str | None:
    """The kernel text of a check call (``None``: not one, or kept as it is)."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
        return None
    owner, kind = node.func.value, node.func.attr
    if not (isinstance(owner, ast.Name) and owner.id in testers):
        return None
    func = ast.get_source_segment(source, node.func)
    if kind in RECORDED:
        keep, drop = node.args[: RECORDED[kind]], node.args[RECORDED[kind] :]
        dropped.update(id(a) for a in drop)
        dropped.update(id(k.value) for k in node.keywords)
        if any(isinstance(a, ast.Starred) for a in keep):
            raise ValueError(f"line {node.lineno}: a check's name and value cannot be *args")
        return f"{func}({', '.join(ast.get_source_segment(source, a) or '' for a in keep)})"
    if kind == "raises" and len(node.args) >= 3:
        dropped.add(id(node.args[1]))
        dropped.update(id(k.value) for k in node.keywords)
        rest = [node.args[0], *node.args[2:]]
        parts = [ast.get_source_segment(source, a) or "" for a in rest]
        return f"{func}({parts[0]}, None, {', '.join(parts[1:])})"
    return None


def _reads(source: str, skip: set[int] | None = None) -> set[str]:
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set()
    return _loads(tree, skip or set())


def _loads(node: ast.AST, skip: set[int]) -> set[str]:
    """Names read anywhere under ``node``, leaving out the subtrees whose ids are in ``skip``."""
    return set(_load_counts(node, skip))


def _load_counts(node: ast.AST, skip: set[int]) -> Counter[str]:
    found: Counter[str] = Counter()
    stack = [node]
    while stack:
        n = stack.pop()
        if id(n) in skip:
            continue
        if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Store):
            found[n.id] += 1
        stack.extend(ast.iter_child_nodes(n))
    return found


def _bound(stmt: ast.stmt) -> set[str] | None:
    """The names a removable statement binds (``None``: not removable)."""
    if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return {stmt.name}
    targets: list[ast.expr] = []
    if isinstance(stmt, ast.Assign):
        targets = list(stmt.targets)
    elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
        targets = [stmt.target]
    else:
        return None
    names: set[str] = set()
    for target in targets:
        for n in ast.walk(target):
            if isinstance(n, ast.Name):
                names.add(n.id)
            elif not isinstance(n, ast.Tuple | ast.List | ast.Starred | ast.expr_context):
                return None  # x[i] = ..., obj.attr = ...: changes something that stays
    return names


def _bodies(node: ast.AST) -> Iterable[list[ast.stmt]]:
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda):
        return  # a def or class stays whole, or goes whole
    for field in ("body", "orelse", "finalbody"):
        body = getattr(node, field, None)
        if isinstance(body, list) and body and isinstance(body[0], ast.stmt):
            yield body
    for handler in getattr(node, "handlers", []):
        yield handler.body


def _dead_statements(tree: ast.Module, dropped: set[int], read_elsewhere: set[str]) -> list:
    """Statements whose names nothing else reads (``with`` blocks left empty go too)."""
    removed: set[int] = set()
    found: list[ast.stmt] = []
    changed = True
    while changed:
        changed = False
        total = _load_counts(tree, dropped | removed)
        candidates: list[ast.stmt] = []
        stack: list[ast.AST] = [tree]
        while stack:
            node = stack.pop()
            for body in _bodies(node):
                for stmt in body:
                    if id(stmt) not in removed:
                        candidates.append(stmt)
                        stack.append(stmt)
        for stmt in candidates:
            if id(stmt) in removed:
                continue
            names = _bound(stmt)
            if names is None and _is_print(stmt):
                names = set()  # the grader replaces a test cell's outputs: a print shows nothing
            if names is None and isinstance(stmt, ast.With | ast.AsyncWith):
                if all(id(s) in removed for s in stmt.body):
                    names = set()
            if names is None:
                continue
            own = _load_counts(stmt, dropped | removed)
            if any(total[n] - own[n] > 0 or n in read_elsewhere for n in names):
                continue
            total -= own
            removed.add(id(stmt))
            found.append(stmt)
            changed = True
    return found


def _is_print(stmt: ast.stmt) -> bool:
    call = stmt.value if isinstance(stmt, ast.Expr) else None
    return (
        isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == "print"
    )


def _kept_text(source: str) -> list[str]:
    """A test cell's source as other cells see it: its kernel form's lines."""
    try:
        return kernel_form(source).splitlines()
    except (SyntaxError, ValueError):
        return source.splitlines()
