"""The grader's reading of a learner's code, outside the kernel: what it refuses, what it notes.

The kernel's own watch for forbidden built-ins (``checks.watch``) lives in the learner's
process, so a notebook can switch it off or go around it. This module reads the notebook's
source instead, in the grader's process, where nothing the notebook does can reach it. It
refuses only what it is certain of, and notes what it cannot be:

* **Refused** (a test scores 0; its verdict names the call, the cell and the line):

  - a **forbidden built-in** in the code a test calls: the learner's ``def``, ``class`` and
    assignments that the test cell names, followed name by name, under any import alias
    (``F.softmax``, ``from torch import softmax as s``, ``x.softmax()``, a star import),
    private spellings of the same kernel included (``torch._softmax``,
    ``torch.ops.aten._softmax``);
  - a **write into a module** the notebook imported, the course's, PyTorch's, NumPy's,
    IPython's or the interpreter's own (``torch.softmax = ...``, ``setattr(checks.Test, ...)``,
    ``sys.modules[...] = ...``), or into the **kernel's shell** (an input transformer, an
    exception handler, an event: ``get_ipython().events.register(...)``): it costs every test
    that runs after it, or, inside a function, the tests whose code calls it;
  - switching the **call monitor** off (``sys.setprofile``, ``sys.settrace``) in code a test
    calls.

* **Noted** (costs nothing; the instructor's summary lists it with the cell and the line):
  looking around the kernel (frames, ``gc``'s objects, ``inspect``, IPython's history,
  ``globals()``, dunder attributes, a test's own variables: the kernel holds no answer to
  find), and code the reading cannot see through (``exec`` or ``eval`` of a computed string,
  a computed import or attribute name, a module the notebook wrote, a magic it cannot read
  whole). A literal string given to ``exec`` is read as code.

Everything else costs nothing and is not noted: prints, ``%autoreload`` and the other common
magics, ``gc.collect()``, ``types.SimpleNamespace``, ``sys.path.insert``, a setting such as
``torch.backends.cudnn.deterministic = True``.

Cells are read in the order they run, as the kernel does: a name means what its last binding
before a test made it (a star import in a scratch cell after the tests changes nothing of
them), and a ``def``'s body is read with the names as they stand when the test calls it.
"""

from __future__ import annotations

import ast
import builtins
import functools
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from autograder import kernel_form, regions

Pos = tuple[int, int]  # (code cell number, statement number): the order the kernel runs them in
END: Pos = (1 << 30, 0)

# Modules a notebook may not write into: the course's, the libraries the tests and their records
# go through, and the interpreter's. (A write into another module, matplotlib's settings say,
# changes nothing of grading.)
PROTECTED = frozenset(
    {
        "checks",
        "helpers",
        "torch",
        "numpy",
        "math",
        "builtins",
        "IPython",
        "ipykernel",
        "jupyter_client",
        "comm",
        "zmq",
        "traitlets",
        "json",
        "base64",
        "<shell>",
    }
)
SETTINGS = ("torch.backends.",)  # switches of a protected module that a learner may set
SYS_HOOKS = frozenset(
    {
        "modules",
        "meta_path",
        "path_hooks",
        "path_importer_cache",
        "displayhook",
        "excepthook",
        "breakpointhook",
        "setprofile",
        "settrace",
        "stdin",
        "__stdout__",
        "__stderr__",
    }
)
MUTATING = frozenset(
    {"update", "pop", "popitem", "setdefault", "clear", "insert", "append", "extend", "remove"}
)
MONITORS = frozenset(
    {
        "_thread.start_new_thread",
        "_thread.start_joinable_thread",
        "_thread.start_new",
        "torch._C.DisableTorchFunction",
        "torch._C.DisableTorchFunctionSubclass",
        "torch._C._DisableTorchDispatch",
        "torch._C._disabled_torch_function_impl",
        "torch.autograd._disable_profiler",
        "torch.autograd.profiler._disable_profiler",
        "sys.setprofile",
        "sys.settrace",
        "threading.setprofile",
        "threading.settrace",
        "threading.setprofile_all_threads",
        "threading.settrace_all_threads",
    }
)
# The shell's methods that magics turn into, and those that run code given as a string.
SHELL_MAGICS = frozenset({"run_line_magic", "run_cell_magic", "system", "getoutput", "magic"})
SHELL_CODE = frozenset({"run_cell", "ex", "ev"})
# Magics whose argument is Python that runs (read like any code), and harmless ones.
CODE_MAGICS = frozenset({"time", "timeit", "prun", "capture"})
HARMLESS_MAGICS = frozenset(
    {
        "matplotlib",
        "autoreload",
        "aimport",
        "config",
        "pinfo",
        "pinfo2",
        "who",
        "whos",
        "who_ls",
        "pwd",
        "ls",
        "precision",
        "pprint",
        "xmode",
        "reset",
        "reset_selective",
        "env",
        "pdef",
        "pdoc",
        "psource",
        "pfile",
        "cd",
        "lsmagic",
        "magic",
        "quickref",
        "alias_magic",
        "page",
        "doctest_mode",
        "colors",
        "writefile",
        "html",
        "HTML",
        "markdown",
        "latex",
        "javascript",
        "js",
        "svg",
        "bash",
        "sh",
        "script",
        "system",
        "sx",
    }
)
# ``%load_ext`` of these only; another extension is code the reading cannot see.
KNOWN_EXTENSIONS = frozenset({"autoreload", "storemagic"})
# ``from M import *`` of these binds whatever M exports, forbidden built-ins among them: the
# reading imports M (in the grader's process) to learn which names those are.
STAR_FAMILIES = frozenset({"torch", "functorch", "helpers", "checks"})
# the modules of those families whose star import the reading follows (a star import of
# another is noted: importing an arbitrary module in the grader's process may run anything)
STAR_MODULES = frozenset(
    {
        "torch",
        "torch.nn",
        "torch.nn.functional",
        "torch.special",
        "torch.linalg",
        "torch.fft",
        "torch.nn.init",
        "torch.nn.modules",
        "torch.nn.modules.activation",
        "torch.distributions",
        "torch.distributions.utils",
        "functorch",
    }
)
# Looking around the kernel: noted, never refused (the kernel holds no answer).
LOOKING = (
    "gc.get_objects",
    "gc.get_referrers",
    "gc.get_referents",
    "inspect.",
    "sys._getframe",
    "sys._current_frames",
    "sys.modules",
    "traceback.walk_stack",
    "traceback.extract_stack",
    "ctypes",
    "pickle.load",
    "marshal.load",
    "importlib.util.find_spec",
    "sys.exc_info",
    "sys.last_traceback",
    "linecache",
    "<shell>.",
)
HISTORY_NAMES = frozenset({"In", "Out", "_ih", "_oh", "_dh", "_i", "_ii", "_iii", "_"})
HISTORY_NAME = re.compile(r"^_i?\d+$")  # _i3, _3: IPython's numbered inputs and outputs
DYNAMIC = frozenset({"exec", "eval", "compile"})
NAMESPACES = frozenset({"globals", "vars", "locals"})
ALLOWED_DUNDERS = frozenset(
    {"__init__", "__name__", "__class__", "__len__", "__call__", "__doc__", "__qualname__"}
)
FRAME_ATTRS = re.compile(r"^(f|tb|gi|cr|ag)_[a-z]+$")
BUILTIN_NAMES = frozenset(dir(builtins))


@dataclass(frozen=True)
class Finding:
    what: str  # how the learner's code says it: "`torch.softmax`"
    cell: int  # 1-based position among the notebook's code cells
    line: int

    def where(self) -> str:
        return f"code cell {self.cell}, line {self.line}"


Chain = tuple[str, ...]  # a dotted name as written: ("F", "softmax"); "<call>" for f(...)


@dataclass
class Binding:
    """A top-level binding of a name, in the order the cells run."""

    pos: Pos
    conditional: bool = False  # under an if, for, while, with or try
    alias: str | None = None  # a module or an imported object: its dotted name
    deferred: bool = False  # a def or class: its names are looked up when it is called
    uses: list[tuple[Chain, Finding]] = field(default_factory=list)
    reads: set[str] = field(default_factory=set)  # the global names it reads
    writes: list[tuple[Chain, Finding]] = field(default_factory=list)  # in its functions
    setattrs: list[tuple[Chain, Finding]] = field(default_factory=list)  # setattr(X, ...)
    mutations: list[tuple[Chain, Finding]] = field(default_factory=list)  # X.update(...)
    calls: list[tuple[Chain, Finding]] = field(default_factory=list)  # what it calls
    strings: list[tuple[str, Finding]] = field(default_factory=list)  # its string constants
    locals: frozenset[str] = frozenset()  # names its functions bind for themselves
    local_aliases: dict[str, str] = field(default_factory=dict)  # imports inside a function
    test_reads: list[tuple[str, Finding]] = field(default_factory=list)


@dataclass
class Refusal:
    """A certain reason for a test to score 0."""

    kind: str  # "forbidden", "writes", "shell" or "monitor"
    finding: Finding
    message: str


class Scan:
    """What the code cells of the notebook ``nb`` do (``source_nb``: the instructor's, which
    says which cells are the course's)."""

    def __init__(self, nb: dict[str, Any], source_nb: dict[str, Any]) -> None:
        self.forms = kernel_form.kernel_forms(source_nb)
        course_ids = {
            regions.nbgrader_meta(c).get("grade_id")
            for c in source_nb.get("cells", [])
            if regions.nbgrader_meta(c).get("grade_id")
        }
        test_bound: set[str] = set()
        course_bound: set[str] = set()
        for cell in source_nb.get("cells", []):
            kind = regions.cell_kind(cell)
            if cell.get("cell_type") != "code" or kind == "solution":
                continue
            names = _bound_names(_text(cell), imports=kind != "test")
            (test_bound if kind == "test" else course_bound).update(names)
        self.test_only = test_bound - course_bound
        self.bindings: dict[str, list[Binding]] = {}
        self.tests: dict[str, int] = {}  # grade_id -> the code cell it runs in
        self.now: list[Binding] = []  # what each top-level statement does when it runs
        self._changes_seen: dict[tuple, Refusal | None] = {}
        self._reached_seen: dict[tuple, list[tuple[Binding, Pos]]] = {}
        self.notes: list[tuple[str, Finding]] = []  # (why it is noted, where)
        self.learner_cells: set[int] = set()
        number = 0
        for cell in nb.get("cells", []):
            if cell.get("cell_type") != "code":
                continue
            number += 1
            meta = regions.nbgrader_meta(cell)
            grade_id = meta.get("grade_id")
            course = grade_id in course_ids and regions.cell_kind(cell) != "solution"
            if course and regions.cell_kind(cell) == "test":
                self.tests.setdefault(str(grade_id), number)
                continue  # restored from the source: its kernel form runs
            if not course:
                self.learner_cells.add(number)
            for statement, (tree, literal) in enumerate(self._parse(number, _text(cell))):
                self._read(number, statement, tree, literal)
        self._note_looking_around()

    # -- reading ---------------------------------------------------------------------------
    def _parse(self, number: int, text: str, depth: int = 0) -> list[tuple[ast.Module, bool]]:
        """The cell's code, then the code its magics run (``%time``, ``%%capture``) and the
        literal strings it executes; each with whether it came from a string."""
        try:
            tree = ast.parse(text)
        except SyntaxError:
            return []  # it raises when run; nothing of it reaches a test
        except (RecursionError, MemoryError, ValueError):  # Python cannot compile it either
            self._note("code the reading cannot see", "code nested too deeply to read", number, 1)
            return []
        trees = [(tree, depth > 0)]
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            magic, code = _magic_code(node)
            line = getattr(node, "lineno", 1)
            if magic is not None:
                if magic in CODE_MAGICS and code is not None and depth < 3:
                    code = "\n".join(w for w in code.split("\n") if not w.startswith("-"))
                    trees += self._parse(number, code, depth + 1)
                elif magic == "load_ext" and (code or "").strip() in KNOWN_EXTENSIONS:
                    pass
                elif magic not in HARMLESS_MAGICS:
                    what = f"the magic `%{magic}`"
                    self._note("code the reading cannot see", what, number, line)
            text_arg = _literal_code(node)  # exec("def f(): ..."): what it binds
            if text_arg is not None and depth < 3:
                trees += self._parse(number, text_arg, depth + 1)
        return trees

    def _note_looking_around(self) -> None:
        """Note the uses of what looks around the kernel (``gc.get_objects``, ``inspect``,
        ``sys._getframe``), under whatever name the notebook imported them."""
        everything = [*self.now, *(b for bs in self.bindings.values() for b in bs)]
        for binding in everything:
            for chain, finding in binding.uses:
                for dotted in self.dotted(chain, END, binding):
                    if any(dotted == m.rstrip(".") or dotted.startswith(m) for m in LOOKING):
                        self._note("looks around the kernel", finding.what, *finding_at(finding))
                        break

    def _note(self, why: str, what: str, cell: int, line: int) -> None:
        if cell in self.learner_cells:
            self.notes.append((why, Finding(what, cell, line)))

    def _read(self, number: int, statement: int, tree: ast.Module, literal: bool) -> None:
        for index, stmt in enumerate(tree.body):
            pos = (number, statement * 10_000 + index)
            conditional = not isinstance(
                stmt,
                ast.FunctionDef
                | ast.AsyncFunctionDef
                | ast.ClassDef
                | ast.Assign
                | ast.AnnAssign
                | ast.Import
                | ast.ImportFrom
                | ast.Expr,
            )
            try:
                self._bind(number, pos, stmt, conditional)
            except RecursionError:
                line = getattr(stmt, "lineno", 1)
                self._note("code the reading cannot see", "code nested too deeply", number, line)

    def _bind(self, number: int, pos: Pos, stmt: ast.stmt, conditional: bool) -> None:
        if isinstance(stmt, ast.Import | ast.ImportFrom):
            self._bind_imports(number, pos, stmt, conditional)
            return
        later = _run_later(stmt)
        binding = Binding(pos, conditional, deferred=_is_def(stmt), alias=self._alias_of(stmt))
        binding.locals = frozenset(_locals(stmt))
        now = Binding(pos)  # what runs at once, at the cell's top level
        for node, parent in _walk_with_parents(stmt):
            self._look(number, node, parent, binding if id(node) in later else now)
        self.now.append(now)
        binding.uses += now.uses
        binding.reads |= now.reads
        binding.test_reads += now.test_reads
        binding.strings += now.strings
        for name in _stmt_bound(stmt):
            self.bindings.setdefault(name, []).append(binding)
        # what changes a global's value without binding it anew: tools.update(sm=...),
        # tools["sm"] = ..., and an assignment inside a function that declares it global
        for name in _mutated(stmt) | _declared_global(stmt):
            extra = Binding(pos, conditional=True, deferred=binding.deferred)
            extra.uses, extra.reads, extra.locals = binding.uses, binding.reads, binding.locals
            extra.strings = binding.strings
            extra.local_aliases = binding.local_aliases
            self.bindings.setdefault(name, []).append(extra)

    def _bind_imports(
        self, number: int, pos: Pos, stmt: ast.Import | ast.ImportFrom, conditional: bool
    ) -> None:
        line = stmt.lineno
        for module in _imported_modules(stmt):
            top = module.split(".")[0]
            if not _installed(top):
                self._note("code the reading cannot see", f"`import {module}`", number, line)
            elif any(module == m.rstrip(".") or module.startswith(m) for m in LOOKING):
                self._note("looks around the kernel", f"`import {module}`", number, line)
        if isinstance(stmt, ast.Import):
            for a in stmt.names:
                name = a.asname or a.name.split(".")[0]
                dotted = a.name if a.asname else name
                self._add(name, Binding(pos, conditional, alias=dotted))
            return
        if not stmt.module or stmt.level:
            return
        for a in stmt.names:
            if a.name == "*":
                where = Finding(f"from {stmt.module} import *", number, line)
                if stmt.module.split(".")[0] in STAR_FAMILIES and not _exported(stmt.module):
                    self._note("code the reading cannot see", f"`{where.what}`", number, line)
                for name, dotted in _exported(stmt.module):
                    b = Binding(pos, conditional, alias=dotted)
                    b.uses.append((("<dotted>", dotted), where))
                    self._add(name, b)
            else:
                dotted = f"{stmt.module}.{a.name}"
                self._add(a.asname or a.name, Binding(pos, conditional, alias=dotted))

    def _add(self, name: str, binding: Binding) -> None:
        self.bindings.setdefault(name, []).append(binding)

    def _alias_of(self, stmt: ast.stmt) -> str | None:
        """``F2 = torch.nn.functional`` or ``ip = get_ipython()``: a name for an import."""
        if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1):
            return None
        if not isinstance(stmt.targets[0], ast.Name):
            return None
        value = stmt.value
        if isinstance(value, ast.Call) and _is_shell_call(value):
            return "<shell>"
        chain = _chain(value)
        return "\0" + ".".join(chain) if chain and "<call>" not in chain else None

    def _look(self, number: int, node: ast.AST, parent: ast.AST | None, binding: Binding) -> None:
        line = int(getattr(node, "lineno", None) or getattr(parent, "lineno", 1) or 1)

        def found(what: str) -> Finding:
            return Finding(what, number, line)

        if isinstance(node, ast.Attribute) and not _chain(node):  # f(x).softmax(): a method
            binding.uses.append((("<attr>", node.attr), found(f"`.{node.attr}`")))
        if isinstance(node, ast.Attribute | ast.Name) and not isinstance(parent, ast.Attribute):
            chain = _chain(node)
            if chain and isinstance(getattr(node, "ctx", None), ast.Load):
                binding.uses.append((chain, found(f"`{ast.unparse(node)}`")))
                if isinstance(parent, ast.Call) and parent.func is node and chain[-1] in MUTATING:
                    binding.mutations.append((chain[:-1], found(f"`{ast.unparse(parent)}`")))
            self._look_at_names(number, node, chain, line)
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            if node.id not in binding.locals:
                binding.reads.add(node.id)
                if node.id in self.test_only:
                    binding.test_reads.append((node.id, found(f"`{node.id}`")))
        if isinstance(node, ast.Import | ast.ImportFrom):  # inside a function: its own names
            for a in node.names:
                if isinstance(node, ast.Import):
                    name = a.asname or a.name.split(".")[0]
                    binding.local_aliases[name] = a.name if a.asname else name
                elif node.module and not node.level and a.name != "*":
                    binding.local_aliases[a.asname or a.name] = f"{node.module}.{a.name}"
        if isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign | ast.Delete):
            targets: list[ast.expr] = (
                list(node.targets) if isinstance(node, ast.Assign | ast.Delete) else [node.target]
            )
            verb = "deleting" if isinstance(node, ast.Delete) else "assigning to"
            for t in _written(targets):
                chain = _chain(_innermost(t))
                if chain:
                    binding.writes.append((chain, found(f"{verb} `{ast.unparse(t)}`")))
        if isinstance(node, ast.Call):
            self._look_at_call(number, node, binding, found)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and len(node.value) < 200:
            binding.strings.append((node.value, found(repr(node.value))))

    def _look_at_names(self, number: int, node: ast.AST, chain: Chain, line: int) -> None:
        if isinstance(node, ast.Name):
            if isinstance(node.ctx, ast.Load) and (
                node.id in HISTORY_NAMES or HISTORY_NAME.match(node.id) or node.id == "__builtins__"
            ):
                if not self._bound_by_learner(node.id):
                    self._note("looks around the kernel", f"`{node.id}`", number, line)
            return
        assert isinstance(node, ast.Attribute)
        for attr in chain[1:]:
            if attr.startswith("__") and attr.endswith("__") and attr not in ALLOWED_DUNDERS:
                self._note("looks around the kernel", f"`{ast.unparse(node)}`", number, line)
                return
            if FRAME_ATTRS.match(attr):
                self._note("looks around the kernel", f"`{ast.unparse(node)}`", number, line)
                return

    def _look_at_call(self, number: int, node: ast.Call, binding: Binding, found: Any) -> None:
        func = node.func
        name = func.id if isinstance(func, ast.Name) else None
        line = node.lineno
        if name in DYNAMIC and not self._bound_by_learner(name):
            if _literal_code(node) is None:
                self._note("code the reading cannot see", f"`{name}(...)`", number, line)
        elif name in NAMESPACES and not self._bound_by_learner(name):
            self._note("looks around the kernel", f"`{name}()`", number, line)
        elif name == "__import__":
            self._note("code the reading cannot see", "`__import__(...)`", number, line)
        elif name in ("setattr", "delattr") and node.args:
            chain = _chain(_innermost(node.args[0]))
            if chain:
                what = f"`{name}({ast.unparse(node.args[0])}, ...)`"
                binding.setattrs.append((chain, found(what)))
        elif name == "getattr" and len(node.args) >= 2:
            base = _chain(node.args[0])
            attr = node.args[1]
            if isinstance(attr, ast.Constant) and isinstance(attr.value, str):
                if base:
                    binding.uses.append(((*base, attr.value), found(f"`{ast.unparse(node)}`")))
                binding.uses.append((("<attr>", attr.value), found(f"`{ast.unparse(node)}`")))
            else:
                self._note(
                    "code the reading cannot see", "`getattr` with a computed name", number, line
                )
        for k in node.keywords:
            unsafe = (k.arg == "weights_only" and _is_constant(k.value, False)) or (
                k.arg == "allow_pickle" and _is_constant(k.value, True)
            )
            if unsafe:  # loading a pickle runs whatever code it names
                what = f"`{k.arg}={k.value.value}`"  # type: ignore[attr-defined]
                self._note("code the reading cannot see", what, number, line)
        code = _literal_code(node)
        if code is not None:  # exec("..."): read as code where it stands
            try:
                for inner, parent in _walk_with_parents(ast.parse(code)):
                    self._look(number, inner, parent, binding)
            except SyntaxError:
                pass
        elif (_shell_chain(func) or ())[:1] in (("run_cell",), ("ex",), ("ev",)):
            self._note("code the reading cannot see", f"`{ast.unparse(func)}(...)`", number, line)
        chain = _chain(func)
        if chain:
            binding.calls.append((chain, found(f"`{ast.unparse(func)}(...)`")))

    def _bound_by_learner(self, name: str) -> bool:
        return bool(self.bindings.get(name))

    # -- resolving names -------------------------------------------------------------------
    def resolve(self, name: str, at: Pos) -> list[Binding]:
        """The bindings of ``name`` that may be in force at ``at``: the last unconditional
        one before it, and the conditional ones after that."""
        before = [b for b in self.bindings.get(name, []) if b.pos < at]
        for i in range(len(before) - 1, -1, -1):
            if not before[i].conditional:
                return before[i:]
        return before

    def dotted(self, chain: Chain, at: Pos, binding: Binding | None = None) -> list[str]:
        """What the written name ``chain`` means at ``at``: dotted names of imports
        (``torch.nn.functional.softmax`` for ``F.softmax``), or ``<attr>.x`` for the
        attributes of something the reading cannot name. In the code of ``binding``, its
        functions' own imports and local names come first."""
        if not chain:
            return []
        if binding is not None and chain[0] in binding.local_aliases:
            return [".".join((binding.local_aliases[chain[0]], *chain[1:]))]
        if binding is not None and chain[0] in binding.locals:
            return [f"<attr>.{a}" for a in chain[1:] if a != "<call>"]
        if chain[0] == "<shell>":
            return [".".join(chain)]
        if chain[0] == "<attr>":
            return [f"<attr>.{chain[-1]}"]
        if chain[0] == "<dotted>":
            return [chain[1]]
        if chain[0] in ("self", "cls") and not self.bindings.get(chain[0]):
            return []  # the learner's own object
        meanings: list[str] = []
        for b in self.resolve(chain[0], at):
            if b.alias is None:
                continue
            if b.alias.startswith("\0"):  # an assignment of another name: resolve it there
                inner = tuple(b.alias[1:].split("."))
                meanings += self.dotted(inner + chain[1:], b.pos)
            else:
                meanings.append(".".join((b.alias, *chain[1:])))
        if not meanings:
            if chain[0] == "get_ipython" and len(chain) == 1:
                return ["IPython.get_ipython"]
            if chain[0] == "__builtins__":
                return [".".join(("builtins", *chain[1:]))]
            meanings = [f"<attr>.{a}" for a in chain[1:] if a != "<call>"]
        return meanings

    def reached(self, grade_id: str, start: set[str] | None = None) -> list[tuple[Binding, Pos]]:
        """The bindings that test cell ``grade_id`` reaches, name by name, each with the time
        its names are looked up (the test's, for a function; its own, for an assignment)."""
        if start is None:
            start = _free_names(self.forms.get(grade_id, ""))
        return self._reached_from(start, self._test_pos(grade_id))

    def _reached_from(self, start: set[str], at: Pos) -> list[tuple[Binding, Pos]]:
        key = (frozenset(start), at)
        if key not in self._reached_seen:
            self._reached_seen[key] = self._walk_names(start, at)
        return self._reached_seen[key]

    def _walk_names(self, start: set[str], at: Pos) -> list[tuple[Binding, Pos]]:
        todo = [(name, at) for name in start]
        seen: set[tuple[str, Pos]] = set()
        found: list[tuple[Binding, Pos]] = []
        while todo and len(seen) < 50_000:
            name, when = todo.pop()
            if (name, when) in seen:
                continue
            seen.add((name, when))
            for b in self.resolve(name, when):
                look_up = when if b.deferred else b.pos
                found.append((b, look_up))
                todo.extend((n, look_up) for n in b.reads)
        return found

    def _test_pos(self, grade_id: str) -> Pos:
        return (self.tests[grade_id], 0) if grade_id in self.tests else END

    # -- judging ---------------------------------------------------------------------------
    def interference(self, grade_id: str) -> str | None:
        """Why test ``grade_id`` cannot be trusted (a write into a module or the shell before
        it, or in the code it calls; the call monitor switched off there), or ``None``."""
        refusal = self._interference(grade_id)
        return refusal.message if refusal else None

    def _interference(self, grade_id: str) -> Refusal | None:
        at = self._test_pos(grade_id)
        for now in self.now:  # what ran at the top level of the cells before the test
            if now.pos < at:
                refusal = self._changes(now, now.pos, top=True)
                if refusal:
                    return refusal
        for binding, when in self.reached(grade_id):
            refusal = self._changes(binding, when, top=False)
            if refusal:
                return refusal
        return None

    def _changes(
        self, binding: Binding, when: Pos, *, top: bool, expand: bool = True
    ) -> Refusal | None:
        """The first write into a module or the shell that ``binding`` makes when its names
        mean what they mean at ``when`` (and, in code a test calls, the monitor switched
        off); a top-level call of the learner's function makes the writes of all the code
        that call reaches (``expand``). Each answer is kept: a notebook of functions calling
        one another many ways is read once."""
        key = (id(binding), when, top, expand)
        if key not in self._changes_seen:
            self._changes_seen[key] = self._first_change(binding, when, top=top, expand=expand)
        return self._changes_seen[key]

    def _first_change(
        self, binding: Binding, when: Pos, *, top: bool, expand: bool
    ) -> Refusal | None:
        for chain, finding in binding.writes:
            refusal = _write_refusal(chain, finding, self, when, binding)
            if refusal:
                return refusal
        for chain, finding in binding.setattrs:
            refusal = _write_refusal((*chain, "<any>"), finding, self, when, binding)
            if refusal:
                return refusal
        for chain, finding in binding.mutations:
            refusal = _mutation_refusal(chain, finding, self, when, binding)
            if refusal:
                return refusal
        for chain, finding in binding.calls:
            for dotted in self.dotted(chain, when, binding):
                if dotted.startswith("<shell>."):
                    path = dotted.split(".")[1:]
                    if len(path) == 1 and path[0] in SHELL_MAGICS | SHELL_CODE:
                        continue
                    return _shell_refusal(finding)
                if dotted in MONITORS and not top:
                    return Refusal(
                        "monitor",
                        finding,
                        f"Your code switches the tests' call monitor off: {finding.what} "
                        f"({finding.where()}), in code this test calls. The test cannot see "
                        "what your function called, so it scores 0. Remove it.",
                    )
            if top and expand and len(chain) == 1:  # setup() at the top level: its body
                for b, look_up in self._reached_from({chain[0]}, when):
                    if b.deferred:
                        refusal = self._changes(b, look_up, top=True, expand=False)
                        if refusal:
                            return refusal
        return None

    def problem(self, grade_id: str, refs: list[dict[str, Any]]) -> str | None:
        """Why test ``grade_id`` fails on this reading (``None``: nothing found)."""
        return self.interference(grade_id) or self.forbidden(grade_id, refs)

    def forbidden(self, grade_id: str, refs: list[dict[str, Any]]) -> str | None:
        """The forbidden built-in that the code test ``grade_id`` calls reaches (its
        ``calls`` checks, ``refs``, say which), as the test's message; or ``None``."""
        refusal = self._forbidden_refusal(grade_id, refs)
        return refusal.message if refusal else None

    def _forbidden_refusal(self, grade_id: str, refs: list[dict[str, Any]]) -> Refusal | None:
        for ref in refs:
            forbidden = set(ref.get("forbidden", [])) if ref.get("kind") == "calls" else set()
            if not forbidden:
                continue
            called = str(ref.get("called", ""))
            start = {called} if called in self.bindings else None
            refusal = self._forbidden_use(grade_id, start, forbidden)
            if refusal:
                return refusal
        return None

    def _forbidden_use(
        self, grade_id: str, start: set[str] | None, forbidden: set[str]
    ) -> Refusal | None:
        for binding, when in self.reached(grade_id, start):
            for text, where in binding.strings:
                hit = _named_kernel(text, forbidden)
                if hit:
                    return Refusal(
                        "forbidden",
                        where,
                        f"The string {where.what} ({where.where()}) names {hit}, the PyTorch "
                        "kernel that does the job this exercise asks you to write yourself "
                        "(reached through getattr, operator, torch.ops or the JIT). Rewrite it "
                        "with basic tensor operations. The test scores 0.",
                    )
            for chain, where in binding.uses:
                for used in self.dotted(chain, when, binding):
                    hit = _forbidden(used, forbidden)
                    if hit and where.what.startswith("from ") and where.what.endswith("*"):
                        return Refusal(
                            "forbidden",
                            where,
                            f"`{where.what}` ({where.where()}) brings in {hit}, which does the "
                            "job this exercise asks you to write yourself, under a name your "
                            "code uses. Import only the names you need (import torch, then "
                            "torch.exp, ...). The test scores 0.",
                        )
                    if hit:
                        return Refusal(
                            "forbidden",
                            Finding(f"`{hit}`", where.cell, where.line),
                            f"{hit} ({where.where()}) does the job this exercise asks you to "
                            "write yourself. Rewrite it with basic tensor operations (matmul, "
                            "masked_fill, view/transpose, exp and sum, ...). The test scores 0.",
                        )
        return None

    def refused(self, refs: dict[str, list[dict[str, Any]]]) -> dict[str, Refusal]:
        """``{grade_id: its refusal}`` of every test this reading refuses."""
        out = {}
        for grade_id in sorted(set(self.tests) | set(refs)):
            refusal = self._interference(grade_id) or self._forbidden_refusal(
                grade_id, refs.get(grade_id, [])
            )
            if refusal:
                out[grade_id] = refusal
        return out

    def looks_around(self) -> str | None:
        """Where the notebook first reads the kernel's internals or runs code the reading
        cannot see (``code cell 3, line 2: `sys._getframe```), or ``None``."""
        for why, f in self.notes:
            if why in ("looks around the kernel", "code the reading cannot see"):
                return f"{f.where()} ({f.what})"
        return None

    def noted(self, grade_ids: Iterator[str] | None = None) -> list[str]:
        """The notes for the instructor: what looks around or cannot be read, with where;
        and the test variables that code a test calls reads."""
        notes = [(why, f) for why, f in self.notes]
        for grade_id in grade_ids if grade_ids is not None else list(self.tests):
            for binding, _ in self.reached(grade_id):
                for _name, finding in binding.test_reads:
                    if finding.cell in self.learner_cells:
                        notes.append(("reads a test's variable", finding))
        lines = [f"{f.where()}: {f.what} ({why}; it costs nothing)" for why, f in notes]
        return list(dict.fromkeys(lines))


# ---------------------------------------------------------------------------------------
# Refusals
# ---------------------------------------------------------------------------------------
def finding_at(finding: Finding) -> tuple[int, int]:
    return finding.cell, finding.line


def _protected(dotted: str) -> bool:
    root, _, rest = dotted.partition(".")
    if root == "sys":
        return rest.split(".")[0] in SYS_HOOKS
    return root in PROTECTED and not dotted.startswith(SETTINGS)


def _write_refusal(
    chain: Chain, finding: Finding, scan: Scan, at: Pos, binding: Binding
) -> Refusal | None:
    for dotted in scan.dotted(chain, at, binding):
        if dotted.startswith("<shell>"):
            return _shell_refusal(finding)
        if not dotted.startswith("<attr>") and _protected(dotted):
            return Refusal(
                "writes",
                finding,
                f"Your code writes into a module it imported: {finding.what} "
                f"({finding.where()}), which changes what the tests run. The grader cannot "
                "know what such a change does to them, so this test scores 0. Remove it; the "
                "exercises need none of it.",
            )
    return None


def _mutation_refusal(
    chain: Chain, finding: Finding, scan: Scan, at: Pos, binding: Binding
) -> Refusal | None:
    """``sys.modules.update(...)``, ``torch.__dict__.pop(...)``: a module's own tables."""
    for dotted in scan.dotted(chain, at, binding):
        parts = dotted.split(".")
        tables = parts[-1] in ("__dict__", "modules", "meta_path", "path_hooks")
        if tables and _protected(dotted):
            return _write_refusal(chain, finding, scan, at, binding)
    return None


def _shell_refusal(finding: Finding) -> Refusal:
    return Refusal(
        "shell",
        finding,
        f"Your code changes how the kernel runs cells: {finding.what} ({finding.where()}) "
        "(an input transformer, an exception handler, an event, the display machinery). The "
        "grader cannot know what that does to the test cells, so every test after it scores 0. "
        "Remove it; the exercises need none of it.",
    )


def _forbidden(used: str, forbidden: set[str]) -> str | None:
    """The forbidden built-in that ``used`` names (as it names it where it can), or None."""
    if used in forbidden:
        return used
    last = used.rsplit(".", 1)[-1]
    private = used.startswith(("torch.ops.", "torch._", "<attr>._"))
    for f in sorted(forbidden):
        owner, _, name = f.rpartition(".")
        if private and _same_kernel(used, name):
            return used
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
        # imports); not one of a module the notebook wrote itself (my_softmax.softmax), whose
        # code the reading cannot see: that import is a note, and the watch sees what it calls
        if not _installed(used.split(".", 1)[0]):
            continue
        return used
    return None


KERNEL_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _named_kernel(text: str, forbidden: set[str]) -> str | None:
    """The forbidden built-in whose kernel a string names by a private or operator spelling
    (``"_softmax"``, ``"aten::softmax"``, ``"torch.ops.aten._softmax"``); ``"softmax"`` alone,
    as a message or a docstring says it, is not one."""
    operator = "::" in text or text.startswith(("torch.ops", "ops.", "aten"))
    for token in KERNEL_NAME.findall(text):
        if not (token.startswith("_") or operator):
            continue
        for f in sorted(forbidden, key=lambda f: (len(f), f)):  # torch.softmax first
            name = f.rpartition(".")[2]
            if f.startswith("torch.") and name[:1].islower() and token.lstrip("_").startswith(name):
                return f
    return None


def _same_kernel(used: str, name: str) -> bool:
    """``torch._softmax``, ``torch.ops.aten._softmax.default``, ``torch._C._nn.softmax``: a
    private spelling of the forbidden ``name`` (a function, not a class)."""
    if not name[:1].islower():
        return False
    return any(part.lstrip("_").startswith(name) for part in used.split(".")[1:])


# ---------------------------------------------------------------------------------------
# Syntax
# ---------------------------------------------------------------------------------------
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


def _is_shell_call(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Call)
        and (_is_name(node.func, "get_ipython") or _chain(node.func)[-1:] == ("get_ipython",))
        and not node.args
    )


def _shell_chain(node: ast.AST) -> Chain | None:
    """``("events", "register")`` for ``get_ipython().events.register``; None otherwise."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if _is_shell_call(node):
        return tuple(reversed(parts))
    return None


def _magic_code(call: ast.Call) -> tuple[str | None, str | None]:
    """``(magic, its code)`` of ``get_ipython().run_line_magic/run_cell_magic/system(...)``
    (``(None, None)``: not such a call)."""
    func = call.func
    if not (isinstance(func, ast.Attribute) and _is_shell_call(func.value)):
        return None, None
    args = [a.value if isinstance(a, ast.Constant) else None for a in call.args]
    if func.attr in ("system", "getoutput"):
        return "system", None
    if func.attr == "run_line_magic" and len(args) == 2:
        return str(args[0]), args[1] if isinstance(args[1], str) else None
    if func.attr == "run_cell_magic" and len(args) == 3:
        return str(args[0]), args[2] if isinstance(args[2], str) else None
    return None, None


def _literal_code(call: ast.Call) -> str | None:
    """The code of ``exec("...")``, ``eval("...")``, ``compile("...", ...)`` or
    ``get_ipython().run_cell("...")`` when it is a literal string."""
    func = call.func
    named = isinstance(func, ast.Name) and func.id in DYNAMIC
    shell = isinstance(func, ast.Attribute) and (_shell_chain(func) or ())[:1] in (
        ("run_cell",),
        ("ex",),
        ("ev",),
    )
    if not (named or shell) or not call.args:
        return None
    first = call.args[0]
    if isinstance(first, ast.Constant) and isinstance(first.value, str):
        return first.value
    return None


def _chain(node: ast.AST) -> Chain:
    """``("torch", "nn", "functional", "softmax")`` for ``torch.nn.functional.softmax``;
    ``("<shell>", ...)`` from ``get_ipython()``; ``()`` for anything else."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
    elif _is_shell_call(node):
        parts.append("<shell>")
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.args:
        if node.func.id in ("vars", "type") and len(node.args) == 1:  # vars(torch)[...]
            inner = _chain(node.args[0])
            if not inner:
                return ()
            parts.append("__dict__" if node.func.id == "vars" else "<type>")
            parts.extend(reversed(inner))
        else:
            return ()
    else:
        return ()
    return tuple(reversed(parts))


def _written(targets: list[ast.expr]) -> Iterator[ast.expr]:
    """The attributes and items that assignment ``targets`` write (``a.b, c[0] = ...``)."""
    for target in targets:
        if isinstance(target, ast.Tuple | ast.List):
            yield from _written(list(target.elts))
        elif isinstance(target, ast.Starred):
            yield from _written([target.value])
        elif isinstance(target, ast.Attribute | ast.Subscript):
            yield target


def _innermost(node: ast.AST) -> ast.AST:
    """``sys.modules`` for ``sys.modules["torch"].softmax``: what a write lands in."""
    while isinstance(node, ast.Subscript) or (
        isinstance(node, ast.Attribute) and isinstance(node.value, ast.Subscript)
    ):
        node = node.value
    return node


def _walk_with_parents(node: ast.AST) -> Iterator[tuple[ast.AST, ast.AST | None]]:
    stack: list[tuple[ast.AST, ast.AST | None]] = [(node, None)]
    while stack:
        n, parent = stack.pop()
        yield n, parent
        stack.extend((child, n) for child in ast.iter_child_nodes(n))


def _is_def(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)


def _free_names(form: str) -> set[str]:
    """The names a kernel form takes from the notebook (the learner's functions, ...)."""
    try:
        tree = ast.parse(form)
    except SyntaxError:
        return set()
    names = [n for n in ast.walk(tree) if isinstance(n, ast.Name)]
    own = {n.id for n in names if not isinstance(n.ctx, ast.Load)}
    own |= {
        (a.asname or a.name).split(".")[0]
        for n in ast.walk(tree)
        if isinstance(n, ast.Import | ast.ImportFrom)
        for a in n.names
    }
    own |= {a.arg for n in ast.walk(tree) if isinstance(n, ast.arg) for a in [n]}
    own |= {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.ClassDef)}
    return {n.id for n in names if n.id not in own}


@functools.cache
def _exported(module: str) -> tuple[tuple[str, str], ...]:
    """(name, dotted name) of what ``from module import *`` binds (a module by its own name),
    for the modules of ``STAR_FAMILIES`` (the grader's Python has the kernel's packages); none
    for others, which hold no built-in a test forbids, and whose import the reading does not
    run."""
    import importlib
    import types

    if module not in STAR_MODULES and module.split(".")[0] not in ("helpers", "checks"):
        return ()  # its import could run anything in the grader's process (sys.exit, say)
    try:
        mod = importlib.import_module(module)
    except BaseException:  # noqa: BLE001 - a module that exits on import stops nothing here
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
    ones, and the notebook's folder after them). A module a notebook writes itself, which the
    reading cannot see (it is noted; the watch still sees what it calls), is not among them."""
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
    if isinstance(stmt, ast.For | ast.With | ast.If | ast.Try | ast.While | ast.TryStar):
        return {
            n.id for n in ast.walk(stmt) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
        } | {s.name for s in ast.walk(stmt) if isinstance(s, ast.FunctionDef | ast.ClassDef)}
    if isinstance(stmt, ast.AsyncFor | ast.AsyncWith | ast.Match):
        return {
            n.id for n in ast.walk(stmt) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
        } | {s.name for s in ast.walk(stmt) if isinstance(s, ast.FunctionDef | ast.ClassDef)}
    if isinstance(stmt, ast.Expr):  # an assignment expression at the top level: (f := ...)
        return {n.target.id for n in ast.walk(stmt) if isinstance(n, ast.NamedExpr)}
    return set()


def _top_level_bound(tree: ast.Module, imports: bool = True) -> set[str]:
    names: set[str] = set()
    for stmt in tree.body:
        names |= _stmt_bound(stmt)
        if imports and isinstance(stmt, ast.Import | ast.ImportFrom):
            names |= {(a.asname or a.name).split(".")[0] for a in stmt.names}
    return names


def _run_later(stmt: ast.stmt) -> set[int]:
    """Ids of the nodes inside the functions (and lambdas) of ``stmt``: what runs when they
    are called, not when the cell runs."""
    inside: set[int] = set()
    for node in ast.walk(stmt):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            body = node.body if isinstance(node.body, list) else [node.body]
            for part in body:
                inside |= {id(n) for n in ast.walk(part)}
    return inside


def _mutated(stmt: ast.stmt) -> set[str]:
    """Global names whose value ``stmt`` changes in place at the top level: ``d[k] = v``,
    ``d.update(...)``, ``o.attr = v`` (the object is the learner's; a module's is a write)."""
    names: set[str] = set()
    later = _run_later(stmt)
    for node in ast.walk(stmt):
        if id(node) in later or _is_def(stmt):
            continue
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = list(node.targets)
        elif isinstance(node, ast.AugAssign | ast.AnnAssign):
            targets = [node.target]
        for t in _written(targets):
            base = _innermost(t)
            while isinstance(base, ast.Attribute | ast.Subscript):
                base = base.value
            if isinstance(base, ast.Name):
                names.add(base.id)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if node.func.attr in MUTATING and isinstance(node.func.value, ast.Name):
                names.add(node.func.value.id)
    return names


def _declared_global(stmt: ast.stmt) -> set[str]:
    """Names a function of ``stmt`` declares ``global`` and assigns."""
    names: set[str] = set()
    for node in ast.walk(stmt):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            declared = {n for g in ast.walk(node) if isinstance(g, ast.Global) for n in g.names}
            assigned = {
                n.id
                for n in ast.walk(node)
                if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
            }
            names |= declared & assigned
    return names


def _locals(stmt: ast.stmt) -> set[str]:
    """Names bound inside ``stmt``'s functions, lambdas and comprehensions (arguments,
    assignments, imports): in there they are the function's own, not the notebook's."""
    names: set[str] = set()
    for node in ast.walk(stmt):
        if node is stmt:
            continue
        if isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            names.add(node.id)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names if a.name != "*"}
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names.add(node.name)
    if not _is_def(stmt):  # a top-level assignment binds its own targets for the notebook
        names -= _stmt_bound(stmt)
    return names - {n for g in ast.walk(stmt) if isinstance(g, ast.Global) for n in g.names}


def _bound_names(source: str, imports: bool = True) -> set[str]:
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set()
    return _top_level_bound(tree, imports)
