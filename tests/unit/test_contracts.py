"""One contract per name: what an exercise asks the learner to write and what ``helpers`` offers
under the same name take the same arguments in the same order (the reference may add optional
ones after them) and return the same thing, so a learner who moves from an exercise to the
reference model is not surprised."""

from __future__ import annotations

import ast
import inspect
import json
from pathlib import Path

import pytest
import torch

import helpers

SOLUTIONS = Path(__file__).resolve().parents[2] / "solutions"

# Exercise classes whose reference has another name (a config object instead of sizes), with the
# methods that must still agree.
RENAMED = {"Seq2SeqTransformer": ("Transformer", ("encode", "decode", "forward"))}


def _solution_definitions() -> list[tuple[str, str, str | None, list[str]]]:
    """(assignment, name, method or None, positional parameters) of every function and method
    that the solution cells of the exercises define."""
    found = []
    for path in sorted(SOLUTIONS.glob("*/*.ipynb")):
        for cell in json.loads(path.read_text())["cells"]:
            if cell["cell_type"] != "code" or not cell["metadata"].get("nbgrader", {}).get(
                "solution"
            ):
                continue
            for node in ast.parse("".join(cell["source"])).body:
                if isinstance(node, ast.FunctionDef):
                    found.append((path.parent.name, node.name, None, _params(node)))
                elif isinstance(node, ast.ClassDef):
                    for item in node.body:
                        if isinstance(item, ast.FunctionDef):
                            found.append((path.parent.name, node.name, item.name, _params(item)))
    return found


def _params(fn: ast.FunctionDef) -> list[str]:
    return [a.arg for a in fn.args.posonlyargs + fn.args.args if a.arg != "self"]


def _reference(name: str, method: str | None) -> object | None:
    """The object helpers has for an exercise's name (None: helpers has no such name)."""
    if name in RENAMED:
        ref_name, methods = RENAMED[name]
        if method not in methods:
            return None
        name = ref_name
    if name not in helpers.__all__:
        return None
    obj = getattr(helpers, name)
    if method is None:
        return obj
    if method == "__init__":
        return None  # constructors may differ in optional sizes; checked by the module tests
    return getattr(obj, method, None)


DEFINITIONS = _solution_definitions()
SHARED = [d for d in DEFINITIONS if _reference(d[1], d[2]) is not None]


def test_the_exercises_share_names_with_helpers():
    names = {f"{n}.{m}" if m else n for _, n, m, _ in SHARED}
    # These names must be among them (a rename would silence this test).
    assert {"train_step", "greedy_decode", "Seq2SeqTransformer.decode"} <= names, names
    assert len(SHARED) >= 15, f"only {len(SHARED)} shared names: {sorted(names)}"


@pytest.mark.parametrize(
    "assignment, name, method, params",
    SHARED,
    ids=[f"{a}:{n}{'.' + m if m else ''}" for a, n, m, _ in SHARED],
)
def test_same_arguments_in_the_same_order(assignment, name, method, params):
    reference = _reference(name, method)
    positional = [
        p.name
        for p in inspect.signature(reference).parameters.values()
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.name != "self"
    ]
    what = f"{name}.{method}" if method else name
    assert positional[: len(params)] == params, (
        f"exercise {assignment} defines {what}({', '.join(params)}) but helpers has "
        f"{what}({', '.join(positional)}): the exercise's arguments must come first, in its order"
    )


def tiny_model(src_vocab: int, tgt_vocab: int) -> helpers.Transformer:
    torch.manual_seed(0)
    config = helpers.TransformerConfig(
        src_vocab_size=src_vocab, tgt_vocab_size=tgt_vocab, d_model=16, num_heads=2, d_ff=32,
        num_encoder_layers=1, num_decoder_layers=1, dropout=0.0, tie_embeddings=False,
    )  # fmt: skip
    return helpers.Transformer(config)


def test_decode_returns_logits_as_in_exercise_06():
    model = tiny_model(11, 13).eval()
    src, tgt = torch.randint(3, 11, (2, 5)), torch.randint(3, 13, (2, 4))
    with torch.no_grad():
        logits = model.decode(tgt, model.encode(src))
        assert logits.shape == (2, 4, 13)  # vocabulary scores, not d_model states
        torch.testing.assert_close(logits, model(src, tgt))
        ones = torch.ones(2, 4)
        # Raw scores: neither probabilities nor log-probabilities.
        assert not torch.allclose(logits.sum(-1), ones)
        assert not torch.allclose(logits.exp().sum(-1), ones)


def test_train_step_takes_the_labels_and_shifts_them_itself():
    model = tiny_model(9, 9)
    pairs = [([4, 5, 6, 2], [6, 5, 4, 2]), ([7, 2], [7, 2])]
    batch = helpers.pairs_to_batch(pairs)
    src, tgt = batch.src.clone(), batch.tgt_out.clone()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.0)  # lr 0: the model stays the same
    loss = helpers.train_step(model, optimizer, src, tgt, label_smoothing=0.0)
    assert isinstance(loss, float)
    assert torch.equal(src, batch.src) and torch.equal(tgt, batch.tgt_out)  # inputs untouched
    with torch.no_grad():
        src_mask, tgt_mask = model.make_masks(batch.src, batch.tgt_in)
        logits = model(batch.src, batch.tgt_in, src_mask, tgt_mask)
        want = helpers.sequence_loss(logits, batch.tgt_out, 0, label_smoothing=0.0)
    assert loss == pytest.approx(want.item(), rel=1e-6)
