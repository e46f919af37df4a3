"""Wall-clock timing for the chapters: the best of a few runs, which a busy machine slows least."""

from __future__ import annotations

import time
from collections.abc import Callable

__all__ = ["best_time"]


def best_time(fn: Callable[..., object], *args: object, repeats: int = 5, warmup: int = 0) -> float:
    """Seconds of the fastest of ``repeats`` calls of ``fn(*args)``, after ``warmup`` untimed ones.

    The minimum, not the mean: other work on the machine only ever adds time.
    """
    if repeats < 1:
        raise ValueError(f"repeats must be at least 1; got {repeats}")
    for _ in range(warmup):
        fn(*args)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn(*args)
        times.append(time.perf_counter() - start)
    return min(times)
