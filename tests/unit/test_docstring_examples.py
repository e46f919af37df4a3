"""The examples in ``helpers``' docstrings run as written.

A reference piece says in its docstring what it equals (a PyTorch built-in, a formula), with an
example that checks it; this test runs every such example, so that a new class's reference
check lives beside the class (``docs/recipe_graded_piece.md``).
"""

from __future__ import annotations

import doctest
import importlib
from pathlib import Path

import pytest

import helpers

ROOT = Path(helpers.__file__).parent
WITH_EXAMPLES = sorted(
    ".".join(("helpers", *path.relative_to(ROOT).with_suffix("").parts)).removesuffix(".__init__")
    for path in ROOT.rglob("*.py")
    if ">>> " in path.read_text(encoding="utf-8")
)


def test_some_docstrings_have_examples():
    assert "helpers.attention" in WITH_EXAMPLES


@pytest.mark.parametrize("name", WITH_EXAMPLES)
def test_the_examples_hold(name):
    module = importlib.import_module(name)
    finder = doctest.DocTestFinder()
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    for test in finder.find(module):
        runner.run(test)
    failed, tried = runner.summarize(verbose=False)
    assert tried > 0 and failed == 0, f"{failed} of {tried} examples of {name} fail (above)"
