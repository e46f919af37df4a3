"""The checking module of the exercises (helpers/grading.py), without nbgrader."""

from __future__ import annotations

import importlib.util
import pathlib
import sys
import uuid

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import helpers
import helpers.grading
from helpers import scaled_dot_product_attention as aliased_reference


def fresh_grading():
    """The loader that every test cell uses."""
    path = pathlib.Path(importlib.util.find_spec("helpers").origin).with_name("grading.py")
    spec = importlib.util.spec_from_file_location(f"afz_grading_{uuid.uuid4().hex}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def own_attention(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / q.size(-1) ** 0.5
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = scores.softmax(-1)
    return weights @ v, weights


def test_fresh_load_ignores_monkeypatching(monkeypatch):
    monkeypatch.setattr(helpers.grading, "assert_close", lambda *a, **k: None)
    monkeypatch.setitem(sys.modules, "helpers.grading", helpers.grading)
    grading = fresh_grading()
    with pytest.raises(AssertionError, match="wrong at index"):
        grading.assert_close(np.zeros(3), np.ones(3), "x")


def test_assert_close_messages_teach():
    g = fresh_grading()
    with pytest.raises(AssertionError, match=r"should have shape \(2, 3\); got \(3, 2\)"):
        g.assert_close(np.zeros((3, 2)), np.zeros((2, 3)), "weights")
    with pytest.raises(AssertionError, match="NaN or inf"):
        g.assert_close(np.array([np.nan]), np.array([1.0]), "w")
    with pytest.raises(AssertionError, match="forget a `return`"):
        g.assert_close(None, np.array([1.0]), "w")
    with pytest.raises(AssertionError, match="expected 1.0000, got 3.0000.*over dim 0"):
        g.assert_close([3.0], [1.0], "row sum", hint="did you take softmax over dim 0?")
    g.assert_close(torch.tensor([1.0, 2.0]), np.array([1.0, 2.0 + 1e-7]), "ok")


def test_call_without_accepts_own_code():
    g = fresh_grading()
    q = g.randn(0, 2, 3, 4)
    out, w = g.call_without(own_attention, q, q, q, forbidden=g.ATTENTION_BUILTINS)
    g.assert_close(w, g.ref_attention(q, q, q)[1], "weights")
    g.assert_close(out, helpers.scaled_dot_product_attention(q, q, q)[0], "output")


@pytest.mark.parametrize(
    "cheat",
    [
        lambda q: helpers.scaled_dot_product_attention(q, q, q),
        lambda q: aliased_reference(q, q, q),  # imported under another name
        lambda q: F.scaled_dot_product_attention(q, q, q),
        lambda q: torch.ops.aten.scaled_dot_product_attention(q, q, q),
        lambda q: torch.nn.MultiheadAttention(4, 2, batch_first=True)(q, q, q),
        lambda q: type("Sub", (helpers.MultiHeadAttention,), {})(4, 2)(q, q, q),
    ],
    ids=["reference", "alias", "functional", "aten", "torch-module", "subclass"],
)
def test_call_without_catches_references_and_builtins(cheat):
    g = fresh_grading()
    q = g.randn(1, 2, 3, 4)
    with pytest.raises(g.ForbiddenCallError, match="does the job"):
        g.call_without(cheat, q, forbidden=g.ATTENTION_BUILTINS, what="attention")


def test_call_without_catches_a_removed_monitor():
    g = fresh_grading()

    def sneaky(x):
        sys.setprofile(None)
        return F.scaled_dot_product_attention(x, x, x)

    with pytest.raises(g.ForbiddenCallError, match="removed the grader's call monitor"):
        g.call_without(sneaky, g.randn(2, 1, 2, 4), forbidden=g.ATTENTION_BUILTINS)
    assert sys.getprofile() is None


def test_softmax_builtins_are_caught_in_numpy_code():
    g = fresh_grading()

    def torch_softmax(x, axis=-1):
        return torch.as_tensor(x).softmax(axis).numpy()

    with pytest.raises(g.ForbiddenCallError, match="softmax"):
        g.call_without(torch_softmax, np.ones(3), forbidden=g.SOFTMAX_BUILTINS)


def test_reference_multi_head_matches_torch():
    g = fresh_grading()
    torch.manual_seed(0)
    torch_mha = torch.nn.MultiheadAttention(8, 2, batch_first=True)
    mine = helpers.MultiHeadAttention(8, 2)
    weights = g.copy_mha_weights(mine, torch_mha)
    x = g.randn(3, 2, 5, 8)
    mask = torch.ones(5, 5, dtype=torch.bool).tril()
    with torch.no_grad():
        expected, _ = torch_mha(x, x, x, attn_mask=~mask, need_weights=False)
    g.assert_close(g.ref_multi_head_attention(x, x, x, 2, weights, mask), expected, "ref")
    with pytest.raises(AssertionError, match="attribute `q_proj`"):
        g.copy_mha_weights(torch.nn.Module(), torch_mha)


def test_patched_library_functions_are_detected(monkeypatch):
    monkeypatch.setattr(np, "allclose", lambda *a, **k: True)
    with pytest.raises(AssertionError, match="numpy.allclose was replaced"):
        fresh_grading()


def test_patched_tensor_method_is_detected(monkeypatch):
    g = fresh_grading()
    monkeypatch.setattr(torch.Tensor, "detach", lambda self: self)
    with pytest.raises(AssertionError, match="torch.Tensor.detach was replaced"):
        g.assert_close(torch.zeros(2), np.zeros(2), "x")
