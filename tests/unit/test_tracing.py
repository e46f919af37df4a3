"""Tests for helpers.pictures.tracing, the shape tracer behind the course's dimension tables, and
for the other helpers that chapters print with: helpers.pictures.printing and .timing."""

import time

import pytest
import torch
from torch import nn

from helpers.model import Transformer, TransformerConfig
from helpers.pictures.printing import format_difference, format_vector
from helpers.pictures.timing import best_time
from helpers.pictures.tracing import (
    ShapeRecord,
    format_shape_table,
    print_shape_table,
    record_translation,
    trace_shapes,
)


def _mlp() -> nn.Sequential:
    return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))


def _no_hooks(model: nn.Module) -> bool:
    return all(
        not m._forward_hooks and not m._forward_pre_hooks and not m._forward_hooks_with_kwargs
        for m in model.modules()
    )


def test_records_names_types_and_shapes_in_call_order():
    records = trace_shapes(_mlp(), torch.randn(3, 4))
    assert [(r.name, r.type, r.depth) for r in records] == [
        ("(model)", "Sequential", 0),
        ("0", "Linear", 1),
        ("1", "ReLU", 1),
        ("2", "Linear", 1),
    ]
    assert [(r.input_shapes, r.output_shapes) for r in records] == [
        ([(3, 4)], [(3, 2)]),
        ([(3, 4)], [(3, 8)]),
        ([(3, 8)], [(3, 8)]),
        ([(3, 8)], [(3, 2)]),
    ]
    assert all(isinstance(r, ShapeRecord) for r in records)


def test_nested_modules_max_depth_and_kwargs():
    class Block(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.attn = nn.MultiheadAttention(8, 2, batch_first=True)
            self.out = nn.Linear(8, 8)

        def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
            y, _ = self.attn(x, x, x, attn_mask=mask)
            return self.out(y)

    model = nn.Sequential()
    model.add_module("block", Block())
    x, mask = torch.randn(2, 5, 8), torch.zeros(5, 5, dtype=torch.bool)

    records = trace_shapes(model.block, x, mask=mask)
    assert records[0].input_shapes == [(2, 5, 8), (5, 5)]  # keyword tensors are included
    attn = next(r for r in records if r.name == "attn")
    assert attn.depth == 1
    assert attn.input_shapes == [(2, 5, 8)] * 3 + [(5, 5)]
    assert attn.output_shapes == [(2, 5, 8), (2, 5, 5)]  # tuple output: (output, weights)

    assert [r.name for r in trace_shapes(model, x, max_depth=1)] == ["(model)", "block"]
    names = [r.name for r in trace_shapes(model, x)]
    assert names == ["(model)", "block", "block.attn", "block.out"]
    # attn.out_proj (depth 3) is applied functionally inside MultiheadAttention, never called
    assert "block.attn.out_proj" not in names


def test_shared_module_shows_all_its_names_once_per_call():
    class Tied(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.src = nn.Linear(3, 3)
            self.tgt = self.src

        def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
            return self.src(x) + self.tgt(y)

    records = trace_shapes(Tied(), torch.randn(2, 3), torch.randn(1, 3))
    assert [(r.name, r.input_shapes) for r in records[1:]] == [
        ("src = tgt", [(2, 3)]),
        ("src = tgt", [(1, 3)]),
    ]


def test_runs_without_grad_and_keeps_mode():
    model = _mlp().train()
    calls = []
    model[0].register_forward_hook(lambda m, i, o: calls.append(torch.is_grad_enabled()))
    trace_shapes(model, torch.randn(1, 4))
    assert calls == [False]
    assert model.training


def test_hooks_removed_after_call():
    model = _mlp()
    trace_shapes(model, torch.randn(2, 4))
    assert _no_hooks(model)


def test_hooks_removed_when_forward_raises():
    model = _mlp()
    with pytest.raises(RuntimeError):
        trace_shapes(model, torch.randn(2, 5))  # wrong feature size for Linear(4, 8)
    assert _no_hooks(model)


def test_format_and_print_table(capsys):
    table = format_shape_table(trace_shapes(_mlp(), torch.randn(2, 4)))
    lines = table.splitlines()
    assert lines[0].split() == ["module", "type", "input", "shape(s)", "output", "shape(s)"]
    assert set(lines[1]) <= {"-", " "}
    assert len(lines) == 2 + 4
    assert "(2, 4)" in lines[2] and "(2, 2)" in lines[2]
    assert "(2, 8)" in lines[3]
    # columns are aligned: every row starts its "type" cell at the same offset
    column = lines[0].index("type")
    assert all(line[column - 2 : column] == "  " and line[column] != " " for line in lines[2:])

    print_shape_table(_mlp(), torch.randn(2, 4))
    assert capsys.readouterr().out.strip() == table


def _tiny_transformer() -> Transformer:
    torch.manual_seed(0)
    config = TransformerConfig(
        src_vocab_size=20,
        tgt_vocab_size=20,
        d_model=16,
        num_heads=2,
        d_ff=32,
        num_encoder_layers=1,
        num_decoder_layers=1,
        max_len=32,
    )
    return Transformer(config)


def test_tiny_transformer_dimension_table():
    model = _tiny_transformer()
    src, tgt = torch.randint(1, 20, (2, 7)), torch.randint(1, 20, (2, 5))

    records = trace_shapes(model, src, tgt)
    root = records[0]
    assert (root.name, root.type) == ("(model)", "Transformer")
    assert root.input_shapes == [(2, 7), (2, 5)]
    assert root.output_shapes == [(2, 5, 20)]

    by_type = {}
    for record in records:
        by_type.setdefault(record.type, []).append(record)
    assert [r.output_shapes for r in by_type["Encoder"]] == [[(2, 7, 16)]]
    assert [r.output_shapes for r in by_type["Decoder"]] == [[(2, 5, 16)]]
    # encoder self-attention, decoder self-attention, cross-attention (queries 5, keys 7)
    attention = by_type["MultiHeadAttention"]
    assert len(attention) == 3
    assert attention[2].input_shapes[:3] == [(2, 5, 16), (2, 7, 16), (2, 7, 16)]
    assert attention[2].output_shapes[0] == (2, 5, 16)
    assert _no_hooks(model)

    top = trace_shapes(model, src, tgt, max_depth=1)
    assert {r.depth for r in top} == {0, 1}
    assert "(2, 5, 20)" in format_shape_table(top)


def test_record_translation_reruns_the_greedy_translation_with_weights_kept(monkeypatch):
    import helpers.decoding

    model = _tiny_transformer().eval()
    src = torch.randint(3, 20, (1, 6))
    # a translation of distinct tokens (an untrained model writes BOS over and over), padded
    written = torch.tensor([[1, 7, 9, 4, 2, 0, 0]])
    monkeypatch.setattr(helpers.decoding, "greedy_decode", lambda *args, **kwargs: written)
    tgt_in, tgt_out = record_translation(model, src, max_len=9)
    assert tgt_out.tolist() == [[1, 7, 9, 4, 2]]  # up to and with EOS, no padding
    assert tgt_in.tolist() == [[1, 1, 7, 9, 4]]  # BOS, then the translation shifted right
    cross = model.decoder.layers[0].cross_attn.last_weights
    assert cross is not None and cross.shape == (1, 2, 5, 6)  # (1, heads, T, S)
    assert torch.allclose(cross.sum(-1), torch.ones(1, 2, 5))
    model.record_attention(False)
    assert model.decoder.layers[0].cross_attn.last_weights is None


def test_format_vector_rounds_every_value():
    assert format_vector(torch.tensor([0.58164, 0.84836, -0.4])) == "[0.5816, 0.8484, -0.4000]"
    assert format_vector(torch.tensor([0.5, 1.0]), 1) == "[0.5, 1.0]"


def test_best_time_is_the_fastest_call_after_the_warm_up():
    calls = []

    def slow_then_fast(tag):
        calls.append(tag)
        if len(calls) <= 2:  # the warm-up and the first timed call
            time.sleep(0.05)

    seconds = best_time(slow_then_fast, "x", repeats=3, warmup=1)
    assert calls == ["x"] * 4
    assert 0 <= seconds < 0.05
    with pytest.raises(ValueError, match="repeats"):
        best_time(slow_then_fast, repeats=0)


def test_format_difference_prints_noise_as_a_bound_and_a_real_difference_as_its_value():
    assert format_difference(1.8e-07) == format_difference(torch.tensor(2.1e-07)) == "< 1e-06"
    assert format_difference(0.0) == "< 1e-06"
    assert format_difference(3.2e-4) == "= 3.2e-04"
    assert format_difference(2e-6, bound=1e-5) == "< 1e-05"
    assert format_difference(float("nan")) == "= nan"
