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
  is removed (again, until none is), so code that only built expected values is gone;
* what is left runs inside a function of its own (``_afz_test_cell``), which binds the
  built-ins and the course's imports it uses as its own local names (``from builtins import
  str, getattr``; ``import numpy as np``), so that a learner's global ``str`` or ``np`` is never
  what a test cell calls; the names it binds stay its locals (gone when the cell ends), but
  for those another cell reads;
* before it calls the learner's code, the form clears itself from the kernel's history
  (``checks.forget``): the code it calls, and the learner's later cells, do not find a hidden
  test's code in ``In``, the ``_i`` names or ``linecache``.

So nothing in the kernel computes or holds a value a verdict compares with; a learner's code
that looks for one (in the cell's globals, its frames, its source in ``In[]``) finds inputs.
The course's tests grade every solution through this form and check that no ``def``, ``class``
or ``lambda`` that is not a call of the learner's code is left in a kernel form
(``tests/test_kernel_form.py``).
"""

from __future__ import annotations

import ast
import builtins
import json
import symtable
from collections import Counter
from collections.abc import Iterable
from functools import lru_cache
from typing import Any

from autograder import contracts, regions

# check -> how many leading positional arguments the kernel keeps (name and value)
RECORDED = {"close": 2, "equal": 2, "shape": 2, "agree": 2, "true": 2}
WRAPPER = "_afz_test_cell"  # the function a kernel form runs in
# Before the test calls the learner's code, the form clears itself from the kernel's history
# (checks.forget): neither the code it calls nor a later cell finds a hidden test's code there.
RUN_AND_FORGET = """
from checks.forget import forget_this_cell as _afz_forget
_afz_forget()
del _afz_forget
try:
    {wrapper}()
finally:
    del {wrapper}
"""
BUILTINS = frozenset(dir(builtins))


_source = regions.source_of
_is_test = regions.is_test_cell


def kernel_forms(source_nb: dict[str, Any], *, sweep: bool = True) -> dict[str, str]:
    """``{grade_id: kernel form}`` of every test cell of the source notebook ``source_nb``,
    its contract sweep included (``autograder/contracts.py``) unless ``sweep=False``."""
    cells = (contracts.with_sweep(source_nb) if sweep else source_nb).get("cells", [])
    return dict(_kernel_forms(json.dumps(cells, sort_keys=True)))


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
    imports = [_source(c) for c in cells if not _is_test(c) and regions.cell_kind(c) != "solution"]
    reads_by_cell = []
    for cell in cells:
        text = _source(cell)
        if _is_test(cell):
            text = "\n".join(s for s in _kept_text(text))
        reads_by_cell.append((regions.nbgrader_meta(cell).get("grade_id"), _free_reads(text)))
    forms = {}
    for grade_id, text in tests.items():
        elsewhere = set().union(*(r for g, r in reads_by_cell if g != grade_id))
        forms[grade_id] = kernel_form(text, elsewhere, imports)
    return forms


def kernel_form(
    source: str, read_elsewhere: Iterable[str] = (), course_cells: Iterable[str] = ()
) -> str:
    """The kernel form of one test cell's ``source`` (see the module's docstring);
    ``course_cells``: the sources of the notebook's own code cells, whose imports the form
    repeats for the names it uses."""
    read_elsewhere = set(read_elsewhere)
    return _sealed(_answer_free(source, read_elsewhere), read_elsewhere, course_cells)


def _sealed(text: str, read_elsewhere: set[str], course_cells: Iterable[str]) -> str:
    """``text`` as the body of a function that binds its own built-ins and imports."""
    tree = ast.parse(text)
    bound = _top_level_names(tree) | _imported(tree.body)
    free = {
        n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
    } - bound
    prologue: list[ast.stmt] = []
    trusted = sorted(free & BUILTINS)
    if trusted:
        names = [ast.alias(name) for name in trusted]
        prologue.append(ast.ImportFrom(module="builtins", names=names, level=0))
    prologue += _imports_of(course_cells, free - BUILTINS)
    shared = sorted(bound & read_elsewhere)
    if shared:
        prologue.append(ast.Global(names=shared))
    body = prologue + tree.body or [ast.Pass()]
    func = ast.FunctionDef(
        name=WRAPPER,
        args=ast.arguments(posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[], defaults=[]),
        body=body,
        decorator_list=[],
        returns=None,
    )
    run = ast.parse(RUN_AND_FORGET.format(wrapper=WRAPPER)).body
    module = ast.Module(body=[func, *run], type_ignores=[])
    return ast.unparse(ast.fix_missing_locations(module)) + "\n"


def _imported(body: list[ast.stmt]) -> set[str]:
    return {
        (a.asname or a.name).split(".")[0]
        for stmt in body
        if isinstance(stmt, ast.Import | ast.ImportFrom)
        for a in stmt.names
    }


def _imports_of(course_cells: Iterable[str], names: set[str]) -> list[ast.stmt]:
    """The course cells' top-level imports of ``names`` (the last binding of each wins)."""
    found: dict[str, ast.stmt] = {}
    for text in course_cells:
        try:
            tree = ast.parse(text)
        except SyntaxError:
            continue
        for stmt in tree.body:
            if isinstance(stmt, ast.ImportFrom) and stmt.module and not stmt.level:
                for a in stmt.names:
                    if (a.asname or a.name) in names and a.name != "*":
                        found[a.asname or a.name] = ast.ImportFrom(stmt.module, [a], 0)
            elif isinstance(stmt, ast.Import):
                for a in stmt.names:
                    name = a.asname or a.name.split(".")[0]
                    if name in names:
                        found[name] = ast.Import([a])
    return [found[n] for n in sorted(found)]


def _answer_free(source: str, read_elsewhere: set[str]) -> str:
    """``source`` with its check calls cut to what they record and dead statements gone."""
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
    removed = _dead_statements(tree, dropped, read_elsewhere)
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


def _free_reads(source: str) -> set[str]:
    """The global names a cell reads that it has not bound itself by then: the ones another
    cell must provide (a function's own arguments and locals are not among them)."""
    try:
        tree = ast.parse(source)
        table = symtable.symtable(source, "<cell>", "exec")
    except SyntaxError:
        return set()
    bound_anywhere = _top_level_names(tree) | _imported(tree.body)
    free = {n for n in _nested_globals(table) if n not in bound_anywhere}
    _walk_in_order(tree.body, set(), free)
    return free


def _walk_in_order(body: list[ast.stmt], bound: set[str], free: set[str]) -> None:
    """Add to ``free`` the names ``body`` reads, statement by statement, before it binds them
    (a loop's or a ``with``'s target is bound before its body runs)."""

    def read(*nodes: ast.AST | None) -> None:
        for node in nodes:
            if node is not None:
                free.update(_module_level_loads(node) - bound)

    def bind(node: ast.AST | None) -> None:
        if node is not None:
            bound.update(n.id for n in ast.walk(node) if isinstance(n, ast.Name))

    for stmt in body:
        if isinstance(stmt, ast.For | ast.AsyncFor):
            read(stmt.iter)
            bind(stmt.target)
            _walk_in_order(stmt.body + stmt.orelse, bound, free)
        elif isinstance(stmt, ast.While | ast.If):
            read(stmt.test)
            _walk_in_order(stmt.body + stmt.orelse, bound, free)
        elif isinstance(stmt, ast.With | ast.AsyncWith):
            for item in stmt.items:
                read(item.context_expr)
                bind(item.optional_vars)
            _walk_in_order(stmt.body, bound, free)
        elif isinstance(stmt, ast.Try | ast.TryStar):
            _walk_in_order(stmt.body, bound, free)
            for handler in stmt.handlers:
                read(handler.type)
                if handler.name:
                    bound.add(handler.name)
                _walk_in_order(handler.body, bound, free)
            _walk_in_order(stmt.orelse + stmt.finalbody, bound, free)
        else:
            read(stmt)
            bound.update(_top_level_names(ast.Module(body=[stmt], type_ignores=[])))
            bound.update(_imported([stmt]))


def _nested_globals(table: symtable.SymbolTable) -> set[str]:
    """Global names read inside the functions, classes and comprehensions of a cell."""
    found: set[str] = set()
    for child in table.get_children():
        found |= {s.get_name() for s in child.get_symbols() if s.is_referenced() and s.is_global()}
        found |= _nested_globals(child)
    return found


def _module_level_loads(node: ast.AST) -> set[str]:
    """Names read by ``node`` outside any function, lambda, class body or comprehension."""
    found: set[str] = set()
    stack: list[ast.AST] = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, _SCOPES):
            # decorators, defaults and a class's bases are read where the def stands
            stack.extend(getattr(n, "decorator_list", []))
            stack.extend(getattr(n, "bases", []))
            stack.extend(getattr(getattr(n, "args", None), "defaults", []))
            if isinstance(n, ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp):
                stack.append(n.generators[0].iter)  # the first iterable is read here
            continue
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load):
            found.add(n.id)
        stack.extend(ast.iter_child_nodes(n))
    return found


_SCOPES = (
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.Lambda,
    ast.ClassDef,
    ast.ListComp,
    ast.SetComp,
    ast.GeneratorExp,
    ast.DictComp,
)


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
    """A test cell's source as other cells see it: its answer-free lines."""
    try:
        return _answer_free(source, set()).splitlines()
    except (SyntaxError, ValueError):
        return source.splitlines()
