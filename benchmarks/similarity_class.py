"""Time of ``python -m course similarity`` for a class of 200 submissions of exercise 01.

The class is tests/support/similar_class.py's: its 49 honest learners, each also three times
more under other names (renamed variables, a second renaming, reworded comments), and its 4
planted copies: 200 submissions, 19,900 pairs. Prints the wall time and the CPU time of the
command, run in a child process as an instructor runs it.

    .venv/bin/python benchmarks/similarity_class.py [--count 200]
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from support import similar_class as S  # noqa: E402


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--count", type=int, default=200)
    args = p.parse_args()
    honest = S.honest()
    copies, _ = S.planted(honest)
    names = sorted(honest)
    forms = [
        lambda nb: nb,
        lambda nb: S.rename(nb, S.RENAMES),
        lambda nb: S.rename(S.rename(nb, S.RENAMES), S.RENAMES_AGAIN),
        S.comment,
    ]
    learners = dict(copies)
    for form in range(len(forms)):
        for name in names:
            if len(learners) >= args.count:
                break
            learners[f"{name}_v{form}"] = forms[form](honest[name])
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for folder in ("solutions", "exercises"):
            (root / folder).symlink_to(REPO / folder)
        for name, nb in learners.items():
            dest = root / "submitted" / name / "01_attention" / "attention.ipynb"
            dest.parent.mkdir(parents=True)
            dest.write_text(S.dumps(nb))
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "course", "--root", str(root), "similarity", "01_attention"],
            check=True,
            cwd=REPO,
        )
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
        size = (root / "similarity" / "01_attention" / "report.html").stat().st_size
    pairs = len(learners) * (len(learners) - 1) // 2
    print(f"submissions                {len(learners)}")
    print(f"pairs                      {pairs}")
    print(f"wall time (s)              {wall:.1f}")
    print(f"CPU time (s)               {cpu:.1f}")
    print(f"report.html (KB)           {size / 1024:.0f}")


if __name__ == "__main__":
    main()
