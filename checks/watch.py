"""Watching a call for forbidden built-ins, in the learner's kernel (a best effort).

:func:`call_watched` runs the learner's function with a profiler hook (Python code of the
course's references, C built-ins called from Python, also in threads started meanwhile), a
torch function mode (torch functions, also when C code such as ``map`` calls them) and a torch
dispatch mode (the kernels a forbidden function runs, by whatever name they were reached). What it
sees is a record like any other; the grader also reads the source (``autograder/scan.py``).
"""

from __future__ import annotations

import importlib
import inspect
import os
import sys
from collections.abc import Callable, Iterable
from typing import Any


def _resolve(dotted: str) -> Any:
    parts = dotted.split(".")
    for i in range(len(parts) - 1, 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        try:
            for attr in parts[i:]:
                obj = getattr(obj, attr)
        except (AttributeError, ImportError):  # an absent piece (a stub) resolves to None
            return None
        return obj
    return None


def _real(path: str) -> str:
    return os.path.normcase(os.path.realpath(path))


class _Targets:
    """Code locations (file, qualname prefix) and built-in names to watch for."""

    def __init__(self, forbidden: Iterable[str]) -> None:
        self.code: dict[str, list[tuple[str, str]]] = {}  # file -> [(qualname, label)]
        self.builtin_names: dict[str, str] = {}
        self.builtin_ids: dict[int, str] = {}
        # forbidden PyTorch functions that are kernels of their own (torch.ops.aten.softmax),
        # by the kernel's name: the first dotted name of each is the one a message gives
        self.kernel_names: dict[str, str] = {}
        aten = getattr(sys.modules.get("torch"), "ops", None)
        for dotted in forbidden:
            last = dotted.rpartition(".")[2]
            if dotted.startswith("torch.") and aten is not None and hasattr(aten.aten, last):
                self.kernel_names.setdefault(last, dotted)
        for dotted in forbidden:
            obj = _resolve(dotted)
            if obj is None:
                continue
            obj = inspect.unwrap(obj) if callable(obj) else obj
            if inspect.isclass(obj):
                try:
                    file = inspect.getsourcefile(obj)
                except TypeError:
                    file = None
                if file:
                    self.code.setdefault(_real(file), []).append((obj.__qualname__ + ".", dotted))
            elif hasattr(obj, "__code__"):
                code = obj.__code__
                self.code.setdefault(_real(code.co_filename), []).append((code.co_qualname, dotted))
            else:  # a C built-in or method descriptor
                self.builtin_ids[id(obj)] = dotted
                name = getattr(obj, "__name__", None)
                if name:
                    self.builtin_names[name] = dotted
        self._file_cache: dict[str, str] = {}

    def match_code(self, code: Any) -> str | None:
        file = self._file_cache.get(code.co_filename)
        if file is None:
            file = self._file_cache[code.co_filename] = _real(code.co_filename)
        for qualname, label in self.code.get(file, ()):
            if code.co_qualname == qualname or (
                qualname.endswith(".") and code.co_qualname.startswith(qualname)
            ):
                return label
        return None

    def match_builtin(self, fn: Any) -> str | None:
        fn = getattr(fn, "func", fn) if type(fn).__name__ == "partial" else fn
        label = self.builtin_ids.get(id(fn))
        if label is None:
            label = self.builtin_names.get(getattr(fn, "__name__", None) or "")
        return label

    def match_kernel(self, op: str) -> str | None:
        """The forbidden built-in whose PyTorch kernel ``op`` is (``aten::_softmax`` for
        ``torch.softmax``), whatever Python name, partial, C call or JIT operator reached it;
        the longest name that the kernel's name holds (``log_softmax`` before ``softmax``)."""
        kernel = op.rpartition("::")[2]
        for name in sorted(self.kernel_names, key=len, reverse=True):
            if name in kernel or name in _KERNEL_FAMILIES and _KERNEL_FAMILIES[name] in kernel:
                return f"{self.kernel_names[name]} (its kernel {op} ran)"
        return None


# the private kernels a public one dispatches to, where their names do not hold its name
_KERNEL_FAMILIES = {"scaled_dot_product_attention": "scaled_dot_product"}

_MONITOR_SWITCHES = {"setprofile", "settrace"}  # sys.* and threading.* switches


def call_watched(
    fn: Callable[..., Any],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    forbidden: tuple[str, ...],
    hits: list[str],
) -> Any:
    """Run ``fn`` watched three ways: a profiler hook (Python code of the references, C
    built-ins called from Python, also in threads started meanwhile), a torch function mode
    (torch functions, also when C code such as ``map`` calls them) and a torch dispatch mode
    (the kernels of forbidden functions, forward and backward)."""
    import threading

    targets = _Targets(forbidden)

    def hit(label: str | None) -> None:
        if label is not None and label not in hits:
            hits.append(label)

    watching = [True]

    def hook(frame: Any, event: str, arg: Any) -> None:
        if not watching[0]:
            return
        if event == "call":
            hit(targets.match_code(frame.f_code))
        elif event == "c_call":
            hit(targets.match_builtin(arg))
            if getattr(arg, "__name__", "") in _MONITOR_SWITCHES:
                hit(f"{getattr(arg, '__module__', None) or 'sys'}.{arg.__name__} (it switches "
                    "the check's monitor off)")  # fmt: skip

    mode = _torch_watch(targets, hit)
    kernels = _KernelWatch(targets, hits, hit)
    previous, previous_threads = sys.getprofile(), threading.getprofile()
    threading.setprofile(hook)
    sys.setprofile(hook)
    try:
        with kernels:
            if mode is None:
                return fn(*args, **kwargs)
            with mode:
                return fn(*args, **kwargs)
    finally:
        watching[0] = False
        if sys.getprofile() is not hook:
            hit("sys.setprofile (it removed the check's monitor)")
        sys.setprofile(previous)
        threading.setprofile(previous_threads)


class _KernelWatch:
    """The kernels PyTorch dispatches while the call runs, seen by a torch dispatch mode
    (below autograd: the forward's and the backward's kernels): a forbidden function's kernel
    is seen however it was reached (a private name, ``functools.partial`` from C, ``torch._C``
    switches that silence the torch function mode, a JIT operator). Nothing is watched where
    no forbidden name is a kernel of its own. A kernel is named only when nothing else named
    the call (its Python name is the clearer message)."""

    def __init__(self, targets: _Targets, hits: list[str], hit: Callable[[str | None], None]):
        self.targets, self.hits, self.hit = targets, hits, hit
        self.mode: Any = None
        self.seen: dict[Any, str | None] = {}  # kernel -> its forbidden label, or None
        self.named = len(hits)

    def __enter__(self) -> _KernelWatch:
        if not self.targets.kernel_names or "torch" not in sys.modules:
            return self
        from torch.utils._python_dispatch import TorchDispatchMode

        seen, match = self.seen, self.targets.match_kernel

        class Kernels(TorchDispatchMode):
            @classmethod
            def _should_skip_dynamo(cls) -> bool:
                return False  # its wrapper imports torch._dynamo: 1.4 s and 74 MB at first use

            def __torch_dispatch__(
                self,
                func: Any,
                types: Any,
                args: tuple[Any, ...] = (),
                kwargs: dict[str, Any] | None = None,
            ) -> Any:
                if func not in seen:
                    seen[func] = match(func._schema.name)
                return func(*args, **(kwargs or {}))

        self.mode = Kernels()  # type: ignore[no-untyped-call]
        self.mode.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.mode is None:
            return
        self.mode.__exit__(None, None, None)
        if len(self.hits) > self.named:
            return
        for label in sorted({label for label in self.seen.values() if label}):
            self.hit(label)


def _torch_watch(targets: _Targets, hit: Callable[[str | None], None]) -> Any:
    if not targets.builtin_ids or "torch" not in sys.modules:
        return None
    from torch.overrides import TorchFunctionMode

    class Watch(TorchFunctionMode):
        def __torch_function__(
            self,
            func: Callable[..., Any],
            types: Any,
            args: tuple[Any, ...] = (),
            kwargs: dict[str, Any] | None = None,
        ) -> Any:
            hit(targets.match_builtin(func))
            return func(*args, **(kwargs or {}))

    return Watch()
