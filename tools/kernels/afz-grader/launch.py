"""Start an IPython kernel whose address space is capped (AFZ_KERNEL_MEMORY_MB, default 4096).

Used by nbgrader autograde (Execute.kernel_name = "afz-grader" in nbgrader_config.py): a
learner's memory bomb gets a MemoryError inside the kernel instead of taking the machine down.
"""

import os
import resource
import sys

limit_mb = int(os.environ.get("AFZ_KERNEL_MEMORY_MB", "4096"))
if limit_mb > 0:
    limit = limit_mb * 1024 * 1024
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    # Soft and hard: an unprivileged kernel cannot raise the limit again.
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
# Few threads per kernel: classes are graded by several kernels side by side.
os.environ.setdefault("OMP_NUM_THREADS", "1")

from ipykernel import kernelapp  # noqa: E402

sys.exit(kernelapp.launch_new_instance())
