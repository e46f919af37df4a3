"""`python -m course similarity` on a class: every planted copy ranks above every honest
pair, and the report opens in Chromium without a console error.

The class (tests/support/similar_class.py): 49 honest learners of exercise 01, each with
their own correct way of writing each function (checked here against the reference
solution), and 4 planted copies: renamed variables, reordered helper functions, reworded
comments, and a copy of a copy.
"""

from __future__ import annotations

import csv
import math
import textwrap

import numpy as np
import pytest
import torch
from support import similar_class as S
from support.submissions import A1, make_root

from course.cli import main
from course.similarity import LISTED

SIGNATURES = [
    "def softmax(x, axis=-1):",
    "def attention_numpy(Q, K, V):",
    "def causal_mask(size):",
    "def padding_mask(tokens, pad_id):",
    "def scaled_dot_product_attention(q, k, v, mask=None):",
]


def function(j: int, way: int, namespace: dict):
    body = S.WAYS[j][way]
    helpers = S.HELPERS if j == 4 and way == 1 else ""
    exec(helpers + SIGNATURES[j] + "\n" + textwrap.indent(body, "    "), namespace)
    return namespace[SIGNATURES[j][4:].split("(")[0]]


@pytest.mark.parametrize("way", range(1, 7))
def test_every_honest_way_is_correct(way):
    """Each way of each function gives what the reference solution (way 0) gives."""
    rng = np.random.default_rng(way)
    ref: dict = {"np": np, "torch": torch, "math": math}
    new: dict = {"np": np, "torch": torch, "math": math}
    fns = [(function(j, 0, ref), function(j, way, new)) for j in range(5)]
    x = rng.normal(size=(3, 5)) * 30
    for axis in (-1, 0):
        np.testing.assert_allclose(fns[0][1](x, axis=axis), fns[0][0](x, axis=axis), atol=1e-12)
    Q, K, V = rng.normal(size=(4, 8)), rng.normal(size=(6, 8)), rng.normal(size=(6, 3))
    for got, want in zip(fns[1][1](Q, K, V), fns[1][0](Q, K, V), strict=True):
        np.testing.assert_allclose(got, want, atol=1e-12)
    for size in (1, 4):
        assert torch.equal(fns[2][1](size), fns[2][0](size))
    with pytest.raises(ValueError):
        fns[2][1](0)
    tokens = torch.tensor([[5, 3, 0, 0], [0, 2, 7, 1]])
    assert torch.equal(fns[3][1](tokens, 0), fns[3][0](tokens, 0))
    torch.manual_seed(way)
    q, k, v = torch.randn(2, 3, 4, 8), torch.randn(2, 3, 5, 8), torch.randn(2, 3, 5, 6)
    mask = torch.rand(2, 1, 4, 5) > 0.3
    mask[..., 0] = True  # no row fully masked
    for m in (None, mask):
        for got, want in zip(fns[4][1](q, k, v, m), fns[4][0](q, k, v, m), strict=True):
            torch.testing.assert_close(got, want, atol=1e-5, rtol=1e-5)


@pytest.fixture(scope="module")
def ranked(tmp_path_factory):
    root = make_root(tmp_path_factory.mktemp("similar") / "course")
    honest = S.honest()
    copies, planted = S.planted(honest)
    for name, nb in {**honest, **copies}.items():
        dest = root / "submitted" / name / A1 / "attention.ipynb"
        dest.parent.mkdir(parents=True)
        dest.write_text(S.dumps(nb))
    assert main(["--root", str(root), "similarity", A1]) == 0
    with (root / "similarity" / A1 / "pairs.csv").open(newline="") as f:
        rows = list(csv.DictReader(f))
    return root, rows, planted


def test_every_planted_pair_ranks_above_every_honest_pair(ranked):
    _, rows, planted = ranked
    assert len(rows) == 53 * 52 // 2
    rank = {frozenset({r["student_a"], r["student_b"]}): int(r["rank"]) for r in rows}
    worst_planted = max(rank[p] for p in planted)
    best_honest = min(v for k, v in rank.items() if k not in planted)
    assert worst_planted < best_honest, (worst_planted, best_honest)
    scores = {frozenset({r["student_a"], r["student_b"]}): float(r["similarity"]) for r in rows}
    print("planted:", sorted(scores[p] for p in planted))
    print("best honest:", max(v for k, v in scores.items() if k not in planted))


def test_the_report_opens_in_chromium_without_console_errors(ranked, browser):
    root, rows, _ = ranked
    page_file = root / "similarity" / A1 / "report.html"
    problems: list[str] = []
    page = browser.new_page()
    try:
        page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: problems.append(str(e)))
        page.on("requestfailed", lambda r: problems.append(f"failed: {r.url}"))
        page.goto(page_file.as_uri())
        assert page.locator("tbody tr").count() == min(len(rows), LISTED)
        first = page.locator("#pair-1 h3").inner_text()
        assert f"{rows[0]['student_a']} and {rows[0]['student_b']}" in first
        assert page.locator("#pair-1 mark").count() > 0  # the shared passages are marked
        assert "never a grade" in page.locator(".note").inner_text()
    finally:
        page.close()
    assert problems == []
