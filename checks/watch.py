"""Watching a call for forbidden built-ins, in the learner's kernel (a best effort).

:func:`call_watched` runs the learner's function with a profiler hook (Python code of the
course's references, C built-ins called from Python, also in threads started meanwhile) and a
torch function mode (torch functions, also when C code such as ``map`` calls them). What it
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
        label = self.builtin_ids.get(id(fn))
        if label is None:
            label = self.builtin_names.get(getattr(fn, "__name__", None) or "")
        return label


_MONITOR_SWITCHES = {"setprofile", "settrace"}  # sys.* and threading.* switches


def call_watched(
    fn: Callable[..., Any],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    forbidden: tuple[str, ...],
    hits: list[str],
) -> Any:
    """Run ``fn`` watched three ways: a profiler hook (Python code of the references, C
    built-ins called from Python, also in threads started meanwhile) and a torch function
    mode (torch functions, also when C code such as ``map`` calls them)."""
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
    previous, previous_threads = sys.getprofile(), threading.getprofile()
    threading.setprofile(hook)
    sys.setprofile(hook)
    try:
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
