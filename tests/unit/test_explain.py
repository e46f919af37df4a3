"""Messages that teach: crashes explained (checks/explain.py), known mistakes named
(``like=``), inputs changed in place (``Test.unchanged``) and tuples returned (``returns=``). The
kernel-less grader that the mistake table runs on (autograder/dry.py) starts kernels: its test
is in the slow tier, tests/grading/test_dry_grader.py.

The errors below are raised by the real PyTorch and NumPy, so a change in their wording
breaks these tests rather than the learners' messages."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch import nn

import checks
from autograder import verdicts
from checks import Test, compare, encode, explain


def error_of(fn) -> BaseException:
    try:
        fn()
    except Exception as err:  # noqa: BLE001
        return err
    raise AssertionError("no error")


def text(err: BaseException) -> str:
    return f"{type(err).__name__}: {err}"


# Real errors of typical learner code -> words the explanation must contain.
CRASHES = {
    "float64 table added to float32": (
        lambda: torch.randn(2, 3) @ torch.randn(3, 2, dtype=torch.float64),
        "float64",
    ),
    "float64 into a linear layer": (
        lambda: nn.Linear(3, 2)(torch.randn(2, 3, dtype=torch.float64)),
        "float64",
    ),
    "view to a wrong shape": (lambda: torch.randn(20).view(1, 2, 3, 3), "x.shape"),
    "view after transpose": (
        lambda: torch.randn(2, 3, 4).transpose(1, 2).view(2, 12),
        "reshape",
    ),
    "linear layer of the wrong size": (
        lambda: nn.Linear(8, 4)(torch.randn(2, 5, 6)),
        "nn.Linear(in, out)",
    ),
    "mask that does not broadcast": (
        lambda: torch.randn(2, 4, 5).masked_fill(torch.ones(2, 4, dtype=torch.bool), 0.0),
        "(batch, 1, 1, k_len)",
    ),
    "boolean index with a broadcast mask": (
        lambda: torch.randn(2, 5, 5).__setitem__(~torch.ones(5, 5, dtype=torch.bool).tril(), 0.0),
        "masked_fill",
    ),
    "k.T on a 4-D tensor": (lambda: torch.randn(2, 3, 4, 5) @ torch.randn(2, 3, 4, 5).T, "k.T"),
    "float masks combined with &": (
        lambda: torch.ones(3, 3).tril() & torch.ones(3, 3, dtype=torch.bool),
        "torch.bool",
    ),
    "in-place & that broadcasts": (lambda: _inplace_and(), "mask = padding & causal"),
    "axis that does not exist": (lambda: torch.randn(3, 4).transpose(2, 3), "dim=-1"),
    "integer mask": (
        lambda: torch.randn(2, 2).masked_fill(torch.ones(2, 2, dtype=torch.long), 0.0),
        "torch.bool",
    ),
    "python and on tensors": (
        lambda: bool(torch.tensor([True, False]) and torch.tensor([True, True])),
        "&, |",
    ),
    "forgot return": (lambda: (lambda out: out[0])(None), "return"),
    "id past the vocabulary": (lambda: nn.Embedding(5, 2)(torch.tensor([7])), "nn.Embedding"),
    "cross_entropy not flattened": (
        lambda: F.cross_entropy(torch.randn(6, 10), torch.zeros(3, dtype=torch.long)),
        "reshape(-1, vocab)",
    ),
    "cross_entropy on 3-D logits": (
        lambda: F.cross_entropy(torch.randn(2, 4, 7), torch.zeros(2, 4, dtype=torch.long)),
        "axis 1 as the classes",
    ),
    "softmax of integers": (lambda: torch.arange(4).softmax(-1), "float dtype"),
    "wrong signature": (lambda: (lambda x, mask: x)(1), "signature"),
    "numpy broadcasting": (lambda: np.ones((2, 3)) - np.ones(2), "keepdims=True"),
    "numpy matmul of untransposed keys": (lambda: np.ones((4, 3)) @ np.ones((5, 3)), "K.T"),
    "layer norm on the wrong axis": (lambda: nn.LayerNorm(8)(torch.randn(2, 8, 5)), "last axis"),
    "cat of mismatched pieces": (
        lambda: torch.cat([torch.ones(2, 1), torch.ones(3, 4)], dim=1),
        "torch.cat",
    ),
    "in place on what backward needs": (lambda: _inplace_backward(), "in place"),
}


def _inplace_and():
    mask = torch.ones(2, 1, 1, 4, dtype=torch.bool)
    mask &= torch.ones(4, 4, dtype=torch.bool).tril()


def _inplace_backward():
    x = torch.randn(3, requires_grad=True)
    y = x.sigmoid()
    y.mul_(2)
    y.sum().backward()


@pytest.mark.filterwarnings("ignore:The use of `x.T`")  # the learner's mistake, on purpose
@pytest.mark.parametrize("case", sorted(CRASHES))
def test_real_errors_are_explained(case):
    fn, words = CRASHES[case]
    meaning = explain.meaning(text(error_of(fn)))
    assert words in meaning, f"{case}: {text(error_of(fn))!r} -> {meaning!r}"


def test_an_unknown_error_gets_no_guess():
    assert explain.meaning("ValueError: something nobody has seen") == ""


def attention(q, k, v, mask=None):
    """q: (..., q_len, d_k), k: (..., k_len, d_k), v: (..., k_len, d_v) -> (output, weights).

    More details that are not shown."""
    table = torch.tensor(np.arange(q.shape[-1]), dtype=torch.float64)
    return (q + table) @ k.transpose(-2, -1), None


def test_a_crash_in_a_call_says_inputs_contract_and_meaning(monkeypatch):
    monkeypatch.delenv("CHECKS_MODE", raising=False)
    q = torch.randn(2, 4, 8)
    with pytest.raises(RuntimeError) as info:
        Test("t").call(attention, q, q, q, torch.ones(4, 4, dtype=torch.bool))
    message = str(info.value)
    assert "expected scalar type Double but found Float" in message  # the original error
    assert "q=float32 tensor (2, 4, 8)" in message and "mask=bool tensor (4, 4)" in message
    assert "The exercise expects: q: (..., q_len, d_k)" in message
    assert "More details" not in message  # the first paragraph only
    assert "float64" in message and explain.MARK in message
    assert isinstance(info.value.__cause__, RuntimeError)  # the learner's traceback stays


class Layer(nn.Module):
    def forward(self, x):
        """x (batch, seq, d_model) -> same shape."""
        return x.view(3, -1, 7)


def test_a_module_crash_uses_its_forward_contract():
    with pytest.raises(RuntimeError, match=r"(?s)x=float32 tensor \(2, 5\).*batch, seq, d_model"):
        Test("t").call(Layer(), torch.randn(2, 5), what="Layer")


class OddError(Exception):
    def __init__(self, code, detail):
        super().__init__(f"{code}: {detail}")


def test_an_exception_with_its_own_constructor_still_explains():
    def f(x):
        raise OddError(3, "odd")

    with pytest.raises(RuntimeError, match="f raised OddError: 3: odd"):
        Test("t").call(f, 1)


def test_returns_checks_the_tuple(monkeypatch):
    monkeypatch.delenv("CHECKS_MODE", raising=False)
    with pytest.raises(TypeError, match=r"should return 2 values.*float32 tensor \(2, 3\)"):
        Test("t").call(lambda x: x, torch.zeros(2, 3), returns=2, what="attention")
    out = Test("t").call(lambda x: (x, x), torch.zeros(1), returns=2)
    assert len(out) == 2


def test_an_error_outside_a_call_is_explained_by_the_grader():
    refs = [{"test": "t", "key": "a", "name": "a", "kind": "close", "expected": encode([1.0])}]
    error = {
        "output_type": "error",
        "ename": "TypeError",
        "evalue": "'NoneType' object is not subscriptable",
    }
    verdict = verdicts.judge_test("t", refs, [error])
    assert not verdict.passed and "return" in verdict.message
    assert verdict.message.count(explain.MARK) == 1


# ---------------------------------------------------------------------------------------
# like= and unchanged
# ---------------------------------------------------------------------------------------
def replayed(cell) -> list[dict]:
    sink: list[dict] = []
    checks.replay_into(sink)
    try:
        cell()
    finally:
        checks.replay_into(None)
    return sink


def test_a_value_that_matches_a_known_mistake_is_named():
    scores = np.array([1.29, 1.06, 1.31])

    def cell(value):
        Test("t").close(
            "weights",
            value,
            hint="divide by sqrt(d_k).",
            like={"the scores are divided by d_k instead of sqrt(d_k)": _soft(scores / 3)},
        )

    (ref,) = replayed(lambda: cell(_soft(scores / np.sqrt(3))))
    wrong = json.loads(json.dumps(encode(_soft(scores / 3))))
    message = compare.judge(ref, wrong)
    assert "exactly what you get when the scores are divided by d_k" in message
    assert message.endswith("divide by sqrt(d_k).")
    other = compare.judge(ref, json.loads(json.dumps(encode(_soft(scores)))))
    assert other and "exactly what you get" not in other and other.endswith("sqrt(d_k).")
    assert compare.judge(ref, json.loads(json.dumps(encode(_soft(scores / np.sqrt(3)))))) is None


def _soft(x):
    e = np.exp(x - x.max())
    return e / e.sum()


def test_an_input_changed_in_place_fails_with_a_hint():
    def honest(x):
        return x * 2

    def in_place(x):
        return x.mul_(2)

    def cell(fn):
        t = Test("t")
        x = torch.arange(3.0)
        t.call(fn, x)
        t.unchanged("double", x=x)

    (ref,) = [c for c in replayed(lambda: cell(honest)) if c["kind"] == "close"]
    collected: list[dict] = []
    checks.collect_into(collected)
    try:
        cell(in_place)
    finally:
        checks.collect_into(None)
    (record,) = [r for r in collected if r["key"] == ref["key"]]
    message = compare.judge(ref, json.loads(json.dumps(record["value"])))
    assert "changed its input `x` in place" in message
