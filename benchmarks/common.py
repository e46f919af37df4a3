"""Command-line pieces shared by the model benchmarks (imported as ``common``: scripts run from
``benchmarks/``, which Python puts first on ``sys.path``)."""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import torch


def positive_int(text: str) -> int:
    """argparse type: an integer of at least 1, with a clear error otherwise."""
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1; got {value}")
    return value


def benchmark_parser(description: str, quick_help: str) -> argparse.ArgumentParser:
    """A parser with the two options every model benchmark takes: ``--quick`` and ``--threads``."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--quick", action="store_true", help=quick_help)
    parser.add_argument(
        "--threads", type=positive_int, default=None, help="torch threads (default: torch's choice)"
    )
    return parser


def set_threads(threads: int | None) -> None:
    """Use ``threads`` intra-op threads in torch, or leave torch's choice when None."""
    if threads is not None:
        torch.set_num_threads(threads)


def interleaved_times(runs: dict[str, Callable[[], object]], rounds: int) -> dict[str, list[float]]:
    """Seconds of ``rounds`` calls of every run, interleaved A B, B A, A B, …: a noisy shared
    machine then slows every run alike."""
    names = list(runs)
    times: dict[str, list[float]] = {name: [] for name in names}
    for r in range(rounds):
        for name in names if r % 2 == 0 else names[::-1]:
            start = time.perf_counter()
            runs[name]()
            times[name].append(time.perf_counter() - start)
    return times
