"""Execute chapter notebooks in place, storing a Chinese-labelled copy of every figure.

    .venv/bin/python tools/execute_chapters.py chapters/04_positional_encoding.ipynb [...]

This replaces `jupyter nbconvert --to notebook --execute --inplace`: the same client (nbclient),
the notebook's kernel (`python3`, the Python that runs this script), the notebook's folder as
the working directory, no time limit per cell unless --timeout, cells run top to bottom and the
run stops at the first error without writing the notebook. The outputs are the same, plus one
thing: the kernel loads the IPython extension tools/bilingual_figures.py, so every figure's
output also carries, in its metadata, the figure rendered with the Chinese labels of
locale/zh_CN/figure_labels.po (used by the Chinese edition; nbval ignores output metadata).

After writing a notebook it lists the figure labels that have no Chinese translation (they stay
English in the Chinese figure) and exits with status 1 if there are any: add them to
locale/zh_CN/figure_labels.po and execute the chapter again. `--output-dir DIR` writes the
executed notebooks to DIR instead of in place.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

TOOLS = Path(__file__).resolve().parent
sys.path.insert(0, str(TOOLS))

from bilingual_figures import CATALOG, figure_problems, image_outputs, read_catalog  # noqa: E402

EXTENSION = "bilingual_figures"


def execute(path: Path, timeout: int | None, output: Path) -> None:
    """Run every cell of the notebook at `path` and write it to `output`."""
    nb = nbformat.read(path, as_version=4)
    kernel = nb.metadata.get("kernelspec", {}).get("name", "python3")
    client = NotebookClient(
        nb,
        timeout=timeout,
        kernel_name=kernel,
        resources={"metadata": {"path": str(path.parent.resolve())}},
        extra_arguments=[f"--ext={EXTENSION}"],  # InteractiveShellApp.extra_extensions
    )
    client.execute()
    nbformat.write(nb, output)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("notebooks", nargs="+", type=Path, help="chapter notebooks to execute")
    parser.add_argument(
        "--timeout", type=int, default=None, help="seconds per cell (default: no limit)"
    )
    parser.add_argument("--output-dir", type=Path, help="write here instead of in place")
    args = parser.parse_args(argv)

    # The kernel inherits this environment: it finds the extension in tools/.
    paths = [str(TOOLS), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
    os.environ["PYTHONPATH"] = os.pathsep.join(paths)
    os.environ.setdefault("JUPYTER_PLATFORM_DIRS", "1")

    status = 0
    for path in args.notebooks:
        output = path if args.output_dir is None else args.output_dir / path.name
        print(f"executing {path} ...", flush=True)
        try:
            execute(path, args.timeout, output)
        except CellExecutionError as error:
            print(f"{path}: a cell failed, the notebook was not written\n{error}", file=sys.stderr)
            return 1
        nb = nbformat.read(output, as_version=4)
        problems = figure_problems(nb, read_catalog(CATALOG))
        figures = len(image_outputs(nb))
        print(f"  wrote {output}: {figures} figures, {len(problems)} problems")
        for problem in problems:
            print(f"  {path.name}, {problem}", file=sys.stderr)
        if problems:
            status = 1
    if status:
        print(
            f"Translate the labels above in {CATALOG.relative_to(TOOLS.parent)} "
            "and execute those chapters again.",
            file=sys.stderr,
        )
    return status


if __name__ == "__main__":
    sys.exit(main())
