"""Print the environment settings that make PyTorch compute as another kind of x86-64 CPU.

    env $(.venv/bin/python tools/other_kernels.py) .venv/bin/python -m pytest -m cpu_kernels ...

`make test` runs the tests marked `cpu_kernels` a second time under these settings. On a CPU
with AVX-512 they limit PyTorch, oneDNN and MKL to AVX2 (what a laptop or an AMD server without
AVX-512 runs); on a CPU with AVX2 only, PyTorch's own kernels fall back to its plain `default`
ones (MKL and oneDNN keep AVX2: they have no plainer code path worth testing). Settings already
in the environment are kept, so `ATEN_CPU_CAPABILITY=default make test` chooses by hand.
"""

from __future__ import annotations

import os
import sys

AVX2 = {
    "ATEN_CPU_CAPABILITY": "avx2",
    "ONEDNN_MAX_CPU_ISA": "AVX2",
    "MKL_ENABLE_INSTRUCTIONS": "AVX2",
}
DEFAULT = {"ATEN_CPU_CAPABILITY": "default"}


def cpu_flags() -> set[str]:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            return set(next((line for line in f if line.startswith("flags")), "").split())
    except OSError:
        return set()


def other_kernels(flags: set[str]) -> dict[str, str]:
    chosen = AVX2 if "avx512f" in flags else DEFAULT
    return {name: os.environ.get(name, value) for name, value in chosen.items()}


if __name__ == "__main__":
    print(" ".join(f"{k}={v}" for k, v in other_kernels(cpu_flags()).items()))
    sys.exit(0)
