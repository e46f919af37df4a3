"""The grader's reading of a learner's code, done outside the kernel: what it may not use.

The kernel's own watch for forbidden built-ins (``checks.watch``) lives in the learner's
process, so a notebook can switch it off or go around it (``torch.ops.aten``, a private
``torch._softmax``). This module reads the submitted notebook's source instead, in the
grader's process, where nothing the notebook does can reach it:

* **forbidden built-ins**: a test cell that calls the learner's functions with
  ``forbidden=...`` fails when the code those functions reach (the learner's top-level
  ``def``, ``class`` and assignments they name, followed name by name) uses one of them,
  under any import alias (``F.softmax``, ``from torch import softmax as s``, ``x.softmax()``);
* **reaching into the grader's test code**: in that same code, reading a name that only a
  test cell sets (an input's answer, a reference module), frames and their globals,
  private names of other objects (``torch._C``, ``torch._softmax``), ``torch.ops``;
* **tampering**, anywhere in the learner's cells: assigning into a module or a class that
  was imported (``torch.softmax = ...``, ``checks.Test = ...``; importing
  ``checks`` to run a test's code again is fine), ``setattr`` on one,
  ``exec``/``eval``/``compile``/``__import__``/``globals()``/``vars()``, a module the grader's
  Python does not have (one the notebook wrote), modules that reach into the running
  interpreter (``sys._getframe``, ``gc``, ``inspect``, ``ctypes``,
  ``importlib``, ``threading``, ``builtins``, ``__main__``...), IPython's history (``In``,
  ``Out``, ``get_ipython``) and dunder attributes other than ``__init__``/``__name__``: every
  test then fails, since the grader cannot know what such code changed.

It is a static reading: code the learner's functions do not name (a scratch cell comparing
with ``torch.softmax``) is not held against them, and a use it cannot see through is named
in the message so that the learner can remove it. The in-kernel watch still runs; a test
fails if either finds a forbidden call.
"""

from __future__ import annotations

import ast
import builtins
import functools
import re
from dataclasses import dataclass, field
from typing import Any

from autograder import kernel_form, regions

# Modules whose use reaches into the running interpreter or the checking code.
ESCAPE_MODULES = (
    "gc",
    "inspect",
    "ctypes",
    "importlib",
    "builtins",
    "__main__",
    "__builtin__",
    "types",
    "traceback",
    "marshal",
    "dis",
    "code",
    "codeop",
    "pickle",
    "IPython",
    "ipykernel",
    "threading",
    "_thread",
    "multiprocessing",
    "concurrent",
    "asyncio",
    "signal",
    "weakref",
    "operator",  # attrgetter("softmax")(torch): a name the reading cannot see
    "pkgutil",
    "runpy",
    "zipimport",
    "imp",
    "autograder",
    "torch.ops",
    "torch._C",
    "torch.library",
    "torch.overrides",
    "torch.utils.cpp_extension",
    "torch.utils._python_dispatch",
    "torch._dynamo",
    "torch.fx",
    "torch.jit",
)
SYS_ALLOWED = {"version", "version_info", "float_info", "maxsize", "platform", "stdout", "stderr"}
DYNAMIC_CALLS = {
    "eval",
    "exec",
    "compile",
    "__import__",
    "globals",
    "vars",
    "locals",
    "breakpoint",
    "delattr",
}
VALUE_ONLY = {"getattr", "setattr", "delattr", "hasattr"}  # fine called, not passed around
HISTORY_NAMES = {"In", "Out", "_ih", "_oh", "_dh", "_i", "_ii", "_iii", "get_ipython"}
HISTORY_NAME = re.compile(r"^_i?\d+$")  # _i3, _3: IPython's numbered inputs and outputs
ALLOWED_DUNDERS = {"__init__", "__name__", "__class__", "__len__", "__call__", "__doc__"}
FRAME_ATTRS = re.compile(r"^(f|tb|gi|cr|ag|co)_[a-z]+$")


@dataclass
class Finding:
    what: str
    cell: int  # 1-based position among the notebook's code cells
    line: int

    def where(self) -> str:
        return f"code cell {self.cell}, line {self.line}"


@dataclass
class Binding:
    """A top-level ``def``, ``class`` or assignment of the learner's."""

    uses: list[tuple[str, Finding]] = field(default_factory=list)  # (dotted name, where)
    escapes: list[Finding] = field(default_factory=list)
    reads: set[str] = field(default_factory=set)  # global names it reads
    test_reads: list[tuple[str, Finding]] = field(default_factory=list)


# IPython magics whose argument is Python that runs (read like any code), and harmless ones
CODE_MAGICS = {"time", "timeit", "prun"}
HARMLESS_MAGICS = {"matplotlib", "pinfo", "pinfo2", "who", "whos", "pwd", "ls"}
# ``from M import *`` of these binds whatever M exports, forbidden built-ins among them: the
# reading imports M (in the grader's process) to learn which names those are
STAR_FAMILIES = {"torch", "functorch", "helpers", "checks"}
SHELL = {"system", "getoutput"}  # another process: it cannot change the kernel's objects


def _raw(cell: dict[str, Any]) -> str:
    text = cell.get("source", "")
    return "".join(text) if isinstance(text, list) else text


def _text(cell: dict[str, Any]) -> str:
    """A cell as the Python that IPython runs (magics become ``get_ipython()`` calls)."""
    from IPython.core.inputtransformer2 import TransformerManager

    try:
        return str(TransformerManager().transform_cell(_raw(cell)))
    except Exception:  # noqa: BLE001 - IPython cannot read it either: the cell raises
        return _raw(cell)


def _magic_code(call: ast.Call) -> tuple[str | None, str | None]:
    """``(magic, its code)`` of ``get_ipython().run_line_magic/run_cell_magic/system(...)``
    (``(None, None)``: not such a call)."""
    func = call.func
    if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Call)):
        return None, None
    if not _is_name(func.value.func, "get_ipython"):
        return None, None
    args = [a.value if isinstance(a, ast.Constant) else None for a in call.args]
    if func.attr in SHELL:
        return func.attr, None
    if func.attr == "run_line_magic" and len(args) == 2:
        return str(args[0]), args[1] if isinstance(args[1], str) else None
    if func.attr == "run_cell_magic" and len(args) == 3:
        return str(args[0]), args[2] if isinstance(args[2], str) else None
    return f"get_ipython().{func.attr}", None


class Scan:
    """What the learner's cells of the notebook ``nb`` use (``source_nb``: the instructor's)."""

    def __init__(self, nb: dict[str, Any], source_nb: dict[str, Any]) -> None:
        course_ids = set()
        course_bound: set[str] = set()
        test_bound: set[str] = set()
        self.forms = kernel_form.kernel_forms(source_nb)
        for cell in source_nb.get("cells", []):
            meta, kind = regions.nbgrader_meta(cell), regions.cell_kind(cell)
            if cell.get("cell_type") != "code" or kind == "solution":
                continue
            if meta.get("grade_id"):
                course_ids.add(meta["grade_id"])
            names = _bound_names(_text(cell), imports=kind != "test")
            if kind == "test":
                test_bound |= names
            else:
                course_bound |= names
        self.test_only = test_bound - course_bound
        self.aliases: dict[str, str] = {}
        self.bindings: dict[str, list[Binding]] = {}
        self.tampering: list[Finding] = []
        number = 0
        learner_trees = []
        for cell in nb.get("cells", []):
            if cell.get("cell_type") != "code":
                continue
            number += 1
            meta = regions.nbgrader_meta(cell)
            if meta.get("grade_id") in course_ids and regions.cell_kind(cell) != "solution":
                continue  # restored from the source by nbgrader: the course's code
            for tree in self._parse(number, _text(cell)):
                learner_trees.append((number, tree))
                self._imports(tree)
                self._star_imports(number, tree)
        self.learner_bound: set[str] = set()
        self.learner_defs: set[str] = set()  # functions, classes and modules of the learner's
        for _, tree in learner_trees:
            self.learner_bound |= _top_level_bound(tree)
            for stmt in tree.body:
                if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                    self.learner_defs.add(stmt.name)
                elif isinstance(stmt, ast.Import | ast.ImportFrom):
                    self.learner_defs |= {(a.asname or a.name).split(".")[0] for a in stmt.names}
        for number, tree in learner_trees:
            self._read(number, tree)

    # -- reading ---------------------------------------------------------------------------
    def _parse(self, number: int, text: str, depth: int = 0) -> list[ast.Module]:
        """The cell's code, and the code its %time/%timeit magics run."""
        try:
            tree = ast.parse(text)
        except SyntaxError:
            return []  # it raises when run; nothing of it reaches a test
        trees = [tree]
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            magic, code = _magic_code(node)
            if magic is None or magic in SHELL or magic in HARMLESS_MAGICS:
                continue
            line = getattr(node, "lineno", 1)
            if magic in CODE_MAGICS and code is not None and depth < 3:
                code = "\n".join(w for w in code.split("\n") if not w.startswith("-"))
                trees += self._parse(number, code, depth + 1)
            else:
                self.tampering.append(Finding(f"the magic `%{magic}`", number, line))
        return trees

    def _imports(self, tree: ast.Module) -> None:
        for stmt in tree.body:  # F2 = torch.nn.functional: a module under another name
            if (
                isinstance(stmt, ast.Assign)
                and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], ast.Name)
                and isinstance(stmt.value, ast.Attribute | ast.Name)
            ):
                full = self.dotted(stmt.value)
                if full:
                    self.aliases[stmt.targets[0].id] = full
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for a in node.names:
                    if a.asname:
                        self.aliases[a.asname] = a.name
                    else:
                        top = a.name.split(".")[0]
                        self.aliases[top] = top
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                for a in node.names:
                    if a.name != "*":  # see _star_imports
                        self.aliases[a.asname or a.name] = f"{node.module}.{a.name}"

    def _star_imports(self, number: int, tree: ast.Module) -> None:
        """``from M import *`` binds every name M exports, as an import of each would (the
        reading does not follow the order cells run in: a ``def`` of the same name elsewhere
        does not undo it)."""
        for node in ast.walk(tree):
            if not (isinstance(node, ast.ImportFrom) and node.module and not node.level):
                continue
            if not any(a.name == "*" for a in node.names):
                continue
            where = Finding(f"from {node.module} import *", number, node.lineno)
            for name, dotted in _exported(node.module):
                self.aliases[name] = dotted
                self.bindings.setdefault(name, []).append(Binding(uses=[(dotted, where)]))

    def dotted(self, node: ast.AST) -> str | None:
        """``torch.nn.functional.softmax`` for ``F.softmax`` (``None``: not from an import)."""
        parts = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name) or node.id not in self.aliases:
            return None
        return ".".join([self.aliases[node.id], *reversed(parts)])

    def _read(self, number: int, tree: ast.Module) -> None:
        for stmt in tree.body:
            self._tamper(number, stmt)
            names = _stmt_bound(stmt)
            if not names:
                continue
            binding = Binding()
            local = _locals(stmt)
            called = {id(n.func) for n in ast.walk(stmt) if isinstance(n, ast.Call)}
            later = _run_later(stmt)  # names read when a function runs: during the tests
            for node in ast.walk(stmt):
                where = Finding("", number, getattr(node, "lineno", stmt.lineno))
                if isinstance(node, ast.Attribute):
                    full = self.dotted(node)
                    if full:
                        binding.uses.append((full, where))
                    if self._escaping_attribute(node, full):
                        binding.escapes.append(
                            Finding(f"`{ast.unparse(node)}`", number, where.line)
                        )
                    elif not (
                        isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")
                    ):
                        binding.uses.append((f"<attr>.{node.attr}", where))
                elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                    if node.id in self.aliases:
                        binding.uses.append((self.aliases[node.id], where))
                    if node.id not in local:
                        binding.reads.add(node.id)
                        # a test's variable: even one the learner also sets at top level,
                        # when a function reads it while a test runs (the test set it last)
                        learner_value = node.id in self.learner_bound and (
                            id(node) not in later or node.id in self.learner_defs
                        )
                        if node.id in self.test_only and not learner_value:
                            binding.test_reads.append((node.id, where))
                    if node.id in VALUE_ONLY and id(node) not in called:
                        binding.escapes.append(
                            Finding(f"`{node.id}` passed as a value", number, where.line)
                        )
                if isinstance(node, ast.Call) and _is_name(node.func, "getattr"):
                    if len(node.args) < 2 or not isinstance(node.args[1], ast.Constant):
                        binding.escapes.append(
                            Finding("`getattr` with a computed name", number, where.line)
                        )
                    elif isinstance(node.args[1].value, str):
                        name = node.args[1].value
                        binding.uses.append((f"<attr>.{name}", where))
                        base = self.dotted(node.args[0]) if node.args else None
                        if base:
                            binding.uses.append((f"{base}.{name}", where))
                        if name.startswith("_") and name not in ALLOWED_DUNDERS:
                            binding.escapes.append(
                                Finding(f"`getattr(..., {name!r})`", number, where.line)
                            )
            for name in names:
                self.bindings.setdefault(name, []).append(binding)

    def _escaping_attribute(self, node: ast.Attribute, full: str | None) -> bool:
        attr = node.attr
        if isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"):
            return attr.startswith("__") and attr not in ALLOWED_DUNDERS
        if attr.startswith("__") and attr.endswith("__"):
            return attr not in ALLOWED_DUNDERS
        if attr.startswith("_") or FRAME_ATTRS.match(attr):
            return True
        return full is not None and full.startswith(("torch.ops", "torch._"))

    def _tamper(self, number: int, stmt: ast.stmt) -> None:
        magic_names = {  # get_ipython() of a magic or shell call: _parse judges those
            id(n.func.value.func)  # type: ignore[attr-defined]
            for n in ast.walk(stmt)
            if isinstance(n, ast.Call) and _magic_code(n)[0] is not None
        }
        for node in ast.walk(stmt):
            line = getattr(node, "lineno", stmt.lineno)
            targets: list[ast.expr] = []
            if isinstance(node, ast.Assign):
                targets = list(node.targets)
            elif isinstance(node, ast.AugAssign | ast.AnnAssign):
                targets = [node.target]
            elif isinstance(node, ast.Delete):
                targets = list(node.targets)
            for target in targets:
                for t in ast.walk(target):
                    if isinstance(t, ast.Attribute | ast.Subscript):
                        base = t.value
                        while isinstance(base, ast.Attribute | ast.Subscript):
                            base = base.value
                        if isinstance(base, ast.Name) and base.id in self.aliases:
                            self.tampering.append(
                                Finding(f"assigning to `{ast.unparse(t)}`", number, line)
                            )
            if isinstance(node, ast.Call):
                func = node.func
                if isinstance(func, ast.Name) and func.id in DYNAMIC_CALLS:
                    self.tampering.append(Finding(f"`{func.id}(...)`", number, line))
                if _is_name(func, "setattr") and node.args:
                    first = node.args[0]
                    if not (isinstance(first, ast.Name) and first.id == "self"):
                        self.tampering.append(
                            Finding("`setattr` on something not yours", number, line)
                        )
            if (
                isinstance(node, ast.Name)
                and id(node) not in magic_names
                and (
                    node.id in HISTORY_NAMES
                    or HISTORY_NAME.match(node.id)
                    or node.id == "__builtins__"
                )
            ):
                self.tampering.append(Finding(f"`{node.id}`", number, line))
            if (
                isinstance(node, ast.Attribute)
                and node.attr.startswith("__")
                and node.attr.endswith("__")
            ):
                if node.attr not in ALLOWED_DUNDERS:
                    self.tampering.append(Finding(f"`{ast.unparse(node)}`", number, line))
            if isinstance(node, ast.Import | ast.ImportFrom):
                for module in _imported_modules(node):
                    if _escape_module(module) or not _installed(module.split(".")[0]):
                        self.tampering.append(Finding(f"`import {module}`", number, line))
            if isinstance(node, ast.Call):
                for k in node.keywords:
                    unsafe = (k.arg == "weights_only" and _is_constant(k.value, False)) or (
                        k.arg == "allow_pickle" and _is_constant(k.value, True)
                    )
                    if unsafe:  # loading a pickle runs whatever code it names
                        self.tampering.append(Finding(f"`{k.arg}={k.value.value}`", number, line))  # type: ignore[attr-defined]
            if isinstance(node, ast.Attribute):
                full = self.dotted(node)
                if full and _escape_module(full):
                    self.tampering.append(Finding(f"`{ast.unparse(node)}`", number, line))

    # -- judging ---------------------------------------------------------------------------
    def reachable(self, grade_id: str, start: set[str] | None = None) -> list[Binding]:
        """The learner's bindings that test cell ``grade_id`` reaches, name by name (from
        ``start``, or from every name the cell names)."""
        if start is None:
            try:
                tree = ast.parse(self.forms.get(grade_id, ""))
                names = [n for n in ast.walk(tree) if isinstance(n, ast.Name)]
                own = {n.id for n in names if isinstance(n.ctx, ast.Store)}  # the test's own
                start = {n.id for n in names if n.id not in own}
            except SyntaxError:
                start = set()
        todo = [n for n in start if n in self.bindings]
        seen: set[str] = set()
        found: list[Binding] = []
        while todo:
            name = todo.pop()
            if name in seen:
                continue
            seen.add(name)
            for binding in self.bindings.get(name, []):
                found.append(binding)
                todo.extend(n for n in binding.reads if n in self.bindings and n not in seen)
        return found

    def refusal(self) -> str | None:
        """Why every test fails (tampering anywhere), or ``None``."""
        if self.tampering:
            f = self.tampering[0]
            return (
                f"Your code uses {f.what} ({f.where()}), which reaches into the running kernel "
                "or the course's checking code (frames, IPython's history, the modules that run "
                "the tests). The grader cannot tell what such code changed, so every test "
                "scores 0. Remove it; the exercises need none of it."
            )
        return None

    def problem(self, grade_id: str, refs: list[dict[str, Any]]) -> str | None:
        """Why test ``grade_id`` fails on this reading (``None``: nothing found)."""
        refused = self.refusal()
        if refused:
            return refused
        reached = self.reachable(grade_id)
        for binding in reached:
            for name, where in binding.test_reads:
                return (
                    f"Your code reads `{name}` ({where.where()}), a name that only a test cell "
                    "sets: a function must work from its arguments, not from the test's "
                    "variables. The test scores 0."
                )
            for f in binding.escapes:
                return (
                    f"Your code uses {f.what} ({f.where()}): a private name, a frame or "
                    "torch.ops, which the grader cannot check. Use PyTorch's public functions "
                    "(matmul, masked_fill, exp, sum, ...). The test scores 0."
                )
        for ref in refs:
            forbidden = set(ref.get("forbidden", [])) if ref.get("kind") == "calls" else set()
            if not forbidden:
                continue
            called = str(ref.get("called", ""))
            start = {called} if called in self.bindings else None
            message = self._forbidden_use(grade_id, start, forbidden)
            if message:
                return message
        return None

    def _forbidden_use(
        self, grade_id: str, start: set[str] | None, forbidden: set[str]
    ) -> str | None:
        for binding in self.reachable(grade_id, start):
            for used, where in binding.uses:
                hit = _forbidden(used, forbidden)
                if hit and where.what.endswith("import *"):
                    return (
                        f"`{where.what}` ({where.where()}) brings in {hit}, which does the job "
                        "this exercise asks you to write yourself, under a name your code uses. "
                        "Import only the names you need (import torch, then torch.exp, ...). "
                        "The test scores 0."
                    )
                if hit:
                    return (
                        f"{hit} ({where.where()}) does the job this exercise asks you to write "
                        "yourself. Rewrite it with basic tensor operations (matmul, masked_fill, "
                        "view/transpose, exp and sum, ...). The test scores 0."
                    )
        return None


def _forbidden(used: str, forbidden: set[str]) -> str | None:
    """The forbidden built-in that ``used`` names (as it names it where it can), or None."""
    last = used.rsplit(".", 1)[-1]
    if used in forbidden:
        return used
    for f in sorted(forbidden):
        owner, _, name = f.rpartition(".")
        if last != name:
            continue
        if used.startswith("<attr>."):
            # an attribute of an object the reading cannot name: a method (x.softmax() for
            # torch.Tensor.softmax), or a name no other function has (scaled_dot_product_...)
            if owner.rsplit(".", 1)[-1][:1].isupper() or "_" in name or name[:1].isupper():
                return f
            continue
        # a name reached from an import: torch.special.softmax for torch.softmax, and
        # helpers.model.F.softmax or helpers.interop.nn.functional.softmax (a module's own
        # imports)
        return used
    return None


@functools.cache
def _exported(module: str) -> tuple[tuple[str, str], ...]:
    """(name, dotted name) of what ``from module import *`` binds (a module by its own name),
    for the modules of ``STAR_FAMILIES`` (the grader's Python has the kernel's packages); none
    for others, which hold no built-in a test forbids, and whose import the reading does not
    run."""
    import importlib
    import types

    if module.split(".")[0] not in STAR_FAMILIES:
        return ()
    try:
        mod = importlib.import_module(module)
    except Exception:  # noqa: BLE001 - not importable here: it fails in the kernel too
        return ()
    names = getattr(mod, "__all__", None)
    if names is None:
        names = [n for n in dir(mod) if not n.startswith("_")]
    exported = []
    for name in names:
        if isinstance(name, str):
            value = getattr(mod, name, None)
            if isinstance(value, types.ModuleType):
                exported.append((name, value.__name__))
            else:
                exported.append((name, f"{module}.{name}"))
    return tuple(exported)


@functools.cache
def _installed(top: str) -> bool:
    """Whether the grader's Python has a top-level module ``top`` (the kernel's has the same
    ones, and no module of the notebook's folder: it runs with PYTHONSAFEPATH=1). A module a
    notebook writes itself, which the reading cannot see, is not among them."""
    import importlib.util

    if not top.isidentifier():
        return False
    try:
        return importlib.util.find_spec(top) is not None
    except (ImportError, ValueError):
        return False


def _is_constant(node: ast.AST, value: object) -> bool:
    return isinstance(node, ast.Constant) and node.value is value


def _is_name(node: ast.AST, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name


def _escape_module(module: str) -> bool:
    if module.startswith("sys."):
        return module.split(".")[1] not in SYS_ALLOWED
    return any(module == m or module.startswith(m + ".") for m in ESCAPE_MODULES)


def _imported_modules(node: ast.Import | ast.ImportFrom) -> list[str]:
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    if node.module is None:
        return []
    return [node.module] + [f"{node.module}.{a.name}" for a in node.names]


def _stmt_bound(stmt: ast.stmt) -> set[str]:
    if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return {stmt.name}
    if isinstance(stmt, ast.Assign | ast.AnnAssign | ast.AugAssign):
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        return {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    if isinstance(stmt, ast.For | ast.With | ast.If | ast.Try | ast.While):
        return {
            n.id for n in ast.walk(stmt) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
        } | {s.name for s in ast.walk(stmt) if isinstance(s, ast.FunctionDef | ast.ClassDef)}
    return set()


def _top_level_bound(tree: ast.Module, imports: bool = True) -> set[str]:
    names: set[str] = set()
    for stmt in tree.body:
        names |= _stmt_bound(stmt)
        if imports and isinstance(stmt, ast.Import | ast.ImportFrom):
            names |= {(a.asname or a.name).split(".")[0] for a in stmt.names}
    return names


def _run_later(stmt: ast.stmt) -> set[int]:
    """Ids of the Name nodes inside the functions (and lambdas) of ``stmt``."""
    inside: set[int] = set()
    for node in ast.walk(stmt):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            body = node.body if isinstance(node.body, list) else [node.body]
            for part in body:
                inside |= {id(n) for n in ast.walk(part) if isinstance(n, ast.Name)}
    return inside


def _locals(stmt: ast.stmt) -> set[str]:
    """Names bound inside ``stmt``'s functions and comprehensions (arguments, assignments)."""
    names: set[str] = set()
    for node in ast.walk(stmt):
        if isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            if node is not stmt:
                names.add(node.name)
        elif isinstance(node, ast.Import | ast.ImportFrom) and node is not stmt:
            names |= {(a.asname or a.name).split(".")[0] for a in node.names if a.name != "*"}
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names.add(node.name)
    return names | set(dir(builtins))


def _bound_names(source: str, imports: bool = True) -> set[str]:
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set()
    return _top_level_bound(tree, imports)
