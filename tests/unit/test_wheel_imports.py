"""The learners' wheel ships only modules whose imports it can satisfy: the standard library,
its own packages and the runtime dependencies it declares (``course.wheel.RUNTIME``). A module
of the chapters' that imports more (matplotlib, sacrebleu) is left out of it."""

from __future__ import annotations

import ast
import subprocess
import sys

from support import REPO

from course import wheel


def third_party_imports(source: bytes) -> set[str]:
    """The top-level names of every module ``source`` imports, relative imports left out."""
    names = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names - set(sys.stdlib_module_names) - {"__future__"}


def test_every_module_of_the_wheel_imports_only_what_the_wheel_declares():
    # IPython: checks talks to the notebook's kernel, which every Jupyter has.
    allowed = set(wheel.PACKAGES) | set(wheel.RUNTIME) | {"IPython"}
    shipped = [(rel, data) for rel, data in wheel._sources(REPO) if rel.endswith(".py")]
    assert any(rel == "helpers/model.py" for rel, _ in shipped)
    wrong = {
        rel: sorted(extra)
        for rel, data in shipped
        if (extra := third_party_imports(data) - allowed)
    }
    assert wrong == {}, (
        f"{wrong}: the learners' wheel would ship these without their dependencies; add the "
        "dependency to course.wheel.RUNTIME, or leave the module out (course.wheel.LEFT_OUT)"
    )


def test_helpers_from_the_wheel_imports_and_exports_every_name_it_ships(tmp_path):
    """``import helpers`` reads each listed module's ``__all__`` from its file: a module the
    wheel leaves out (the chapters' pictures) must not stop the import, and every name of a
    module the wheel ships must be exported."""
    for rel, data in wheel._sources(REPO):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_bytes(data)
    code = "import helpers; print(' '.join(helpers.__all__))"
    done = subprocess.run(
        [sys.executable, "-I", "-c", f"import sys; sys.path.insert(0, {str(tmp_path)!r}); {code}"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    exported = set(done.stdout.split())
    assert {"Transformer", "MultiHeadAttention", "train_bpe", "PAD_ID"} <= exported
    assert not exported & {"format_vector", "best_time", "print_shape_table"}  # not shipped
