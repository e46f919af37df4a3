"""Save the weights of a chapter's training run, so the book can study the run it prints.

    .venv/bin/python tools/book_runs.py chapters/07_training_vs_inference.ipynb

Training amplifies the last-bit differences between CPUs (AVX-512 and AVX2 kernels sum in
another order, and MKL picks its kernels by CPU model): the same seeded run of chapter 7 reverses
0.988 of the held-out sequences on one machine and 0.982 on another, and the exact match of its
100-step snapshot was 0.046, 0.112 and 0.476 on three. A chapter that analyses such a run
trains it in front of the reader, then loads the book's own run from ``helpers/weights/``
(``helpers.checkpoints.load_book_run``), so that the numbers the text discusses are the ones
every reader's machine prints.

This script makes that file. It runs, in a fresh kernel, the chapter's code cells tagged
``book-run`` (the set-up, the data and the training, in the chapter's order) and then the
chapter's ``SAVE`` code below, which names the variables those cells leave. The kernel computes
with PyTorch, oneDNN and MKL limited to AVX2 (``other_kernels.AVX2``), the instruction set every
x86-64 machine of the last decade has, so that a maintainer can make the same weights again on
an AVX2 or an AVX-512 machine. Then re-execute the chapter (``tools/execute_chapters.py``).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from other_kernels import AVX2  # tools/, beside this script

ROOT = Path(__file__).resolve().parent.parent
TAG = "book-run"
# chapter file stem -> (weights file, code run after the tagged cells that saves them to PATH)
SAVE = {
    "07_training_vs_inference": (
        "chapter07_reverse.pt",
        """
runs = {
    "500 steps": model.state_dict(),
    "100 steps": snapshots[100],
    "150 steps": snapshots[150],
    "no target positions": train_like_7_1(NoTargetPositions).state_dict(),
    "no source positions": train_like_7_1(NoSourcePositions).state_dict(),
}
torch.save({name: {k: v.clone() for k, v in sd.items()} for name, sd in runs.items()}, PATH)
""",
    ),
    "09_putting_it_together": (
        "chapter09_short.pt",
        """
torch.save({"short model": {k: v.clone() for k, v in short_model.state_dict().items()}}, PATH)
""",
    ),
    "10_from_2017_to_today": (
        "chapter10_copy.pt",
        """
runs = {scheme: models[scheme].state_dict() for scheme in SCHEMES}
runs["encoder-decoder"] = seq2seq.state_dict()
torch.save({name: {k: v.clone() for k, v in sd.items()} for name, sd in runs.items()}, PATH)
""",
    ),
}


def save_run(chapter: Path, out: Path) -> None:
    name, code = SAVE[chapter.stem]
    nb = nbformat.read(chapter, as_version=4)
    cells = [c for c in nb.cells if c.cell_type == "code" and TAG in c.metadata.get("tags", [])]
    if not cells:
        raise SystemExit(f"{chapter}: no code cell is tagged {TAG!r}")
    run = nbformat.v4.new_notebook(metadata=nb.metadata)
    run.cells = [nbformat.v4.new_code_cell(c.source) for c in cells]
    run.cells.append(nbformat.v4.new_code_cell(f"PATH = {str(out)!r}\n{code}"))
    client = NotebookClient(
        run, kernel_name="python3", resources={"metadata": {"path": str(chapter.parent)}}
    )
    client.execute()
    print(f"wrote {out} ({out.stat().st_size / 1e6:.1f} MB) from {len(cells)} cells of {chapter}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("chapter", type=Path, help="a chapter notebook with a saved run")
    args = parser.parse_args(argv)
    if args.chapter.stem not in SAVE:
        parser.error(f"no saved run for {args.chapter.name}; chapters with one: {sorted(SAVE)}")
    os.environ.update(AVX2)  # the kernel inherits this environment
    save_run(args.chapter, ROOT / "helpers" / "weights" / SAVE[args.chapter.stem][0])
    return 0


if __name__ == "__main__":
    sys.exit(main())
