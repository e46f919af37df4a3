"""Tests for helpers.pictures.diagrams: the drawings show the shapes of the live model they are
given."""

import matplotlib.pyplot as plt
import pytest
import torch

import helpers
from helpers.pictures.diagrams import (
    BOX_GID,
    SHAPE_GID,
    draw_head_split,
    draw_masks,
    draw_token_flow,
    mask_matrices,
    plot_transformer,
    trace_decoder_position,
    trace_head_split,
    transformer_shapes,
)

plt.switch_backend("Agg")


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def small_model(d_model=16, num_heads=2, d_ff=24, tie=False):
    config = helpers.TransformerConfig(
        src_vocab_size=11,
        tgt_vocab_size=11 if tie else 13,
        d_model=d_model,
        num_heads=num_heads,
        d_ff=d_ff,
        num_encoder_layers=2,
        num_decoder_layers=3,
        dropout=0.0,
        max_len=32,
        tie_embeddings=tie,
    )
    torch.manual_seed(0)
    return helpers.Transformer(config).eval()


def padded_batch():
    # example 0: source 4 tokens, target 3; example 1: source 2 tokens, target 2 (padded)
    return helpers.make_batch([[5, 6, 7, 2], [8, 2]], [[4, 5, 2], [6, 2]])


def texts(fig, gid):
    return [
        t.get_text()
        for t in fig.findobj(lambda a: getattr(a, "get_gid", None) is not None)
        if hasattr(t, "get_text") and t.get_gid() == gid
    ]


def boxes(fig):
    return [a for a in fig.findobj() if a.get_gid() == BOX_GID and not hasattr(a, "get_text")]


def test_transformer_shapes_follow_the_config():
    model = small_model(d_model=16, d_ff=24)
    batch = padded_batch()
    src_mask, tgt_mask = model.make_masks(batch.src, batch.tgt_in)
    shapes = transformer_shapes(model, batch.src, batch.tgt_in, src_mask, tgt_mask)
    assert shapes["src_ids"] == (2, 4) and shapes["tgt_ids"] == (2, 3)
    assert shapes["memory"] == (2, 4, 16)
    assert shapes["enc_ff_hidden"] == (2, 4, 24) and shapes["dec_ff_hidden"] == (2, 3, 24)
    assert shapes["dec_cross_q"] == (2, 3, 16) and shapes["dec_cross_kv"] == (2, 4, 16)
    assert shapes["enc_mask"] == (2, 1, 1, 4) and shapes["dec_self_mask"] == (2, 1, 3, 3)
    assert shapes["logits"] == (2, 3, 13)
    no_masks = transformer_shapes(model, batch.src, batch.tgt_in)
    assert no_masks["enc_mask"] is None and no_masks["dec_cross_mask"] is None


def test_tied_embeddings_are_found_by_call_order():
    model = small_model(tie=True)
    batch = padded_batch()
    shapes = transformer_shapes(model, batch.src, batch.tgt_in)
    assert shapes["src_embed"] == (2, 4, 16) and shapes["tgt_embed"] == (2, 3, 16)


@pytest.mark.parametrize("d_model", [16, 24])
def test_figure_1_labels_change_with_d_model(d_model):
    model = small_model(d_model=d_model, d_ff=40)
    batch = padded_batch()
    src_mask, tgt_mask = model.make_masks(batch.src, batch.tgt_in)
    fig = plot_transformer(model, batch.src, batch.tgt_in, src_mask, tgt_mask)
    labels = texts(fig, SHAPE_GID)
    assert f"memory (2, 4, {d_model})" in labels
    assert "logits (2, 3, 13)" in labels
    assert labels.count(f"(2, 3, {d_model})") >= 5  # decoder arrows
    other = 24 if d_model == 16 else 16
    assert not any(f", {other})" in label for label in labels)
    all_text = " ".join(t.get_text() for t in fig.findobj(lambda a: hasattr(a, "get_text")))
    assert "hidden (2, 4, 40)" in all_text and "mask (2, 1, 3, 3)" in all_text
    assert "N = 2 ×" in all_text and "× N = 3" in all_text
    assert len(boxes(fig)) == 16  # 6 encoder side, 8 decoder side, linear, softmax


def test_head_split_trace_matches_the_module():
    torch.manual_seed(0)
    mha = helpers.MultiHeadAttention(24, 3).eval()
    x = torch.randn(2, 5, 24)
    trace = trace_head_split(mha, x)
    shapes = [step.shape for step in trace.steps]
    assert shapes == [
        (2, 5, 24),
        (2, 5, 24),
        (2, 5, 3, 8),
        (2, 3, 5, 8),
        (2, 3, 5, 5),
        (2, 3, 5, 8),
        (2, 5, 3, 8),
        (2, 5, 24),
        (2, 5, 24),
    ]
    assert trace.weights.shape == (3, 5, 5)
    assert torch.allclose(trace.weights.sum(-1), torch.ones(3, 5))
    assert mha.record_weights is False  # restored
    memory = torch.randn(2, 7, 24)
    cross = trace_head_split(mha, x, memory)
    assert cross.steps[4].shape == (2, 3, 5, 7)
    fig = draw_head_split(trace)
    assert "(2, 5, 3, 8)" in texts(fig, SHAPE_GID)
    # one block each for the 2 dense steps, 3 bands for the 4 banded/cut steps, 3 cards for
    # the 3 per-head steps
    assert len(boxes(fig)) == 2 * 1 + 4 * 3 + 3 * 3


def test_masks_are_the_models_masks_broadcast():
    model = small_model()
    batch = padded_batch()
    src_mask, tgt_mask = model.make_masks(batch.src, batch.tgt_in)
    (_, enc), (_, dec), (_, cross) = mask_matrices(src_mask, tgt_mask, index=1)
    assert enc.tolist() == [[True, True, False, False]] * 4
    assert dec.tolist() == [[True, False, False], [True, True, False], [True, True, False]]
    assert cross.tolist() == [[True, True, False, False]] * 3
    src_tokens, tgt_tokens = ["a", "<eos>", "<pad>", "<pad>"], ["<bos>", "b", "<pad>"]
    fig = draw_masks(src_mask, tgt_mask, src_tokens, tgt_tokens, index=1)
    images = [ax.images[0].get_array() for ax in fig.axes]
    assert [image.shape for image in images] == [(4, 4), (3, 3), (3, 4)]
    assert images[1].tolist() == dec.int().tolist()
    with pytest.raises(ValueError):
        draw_masks(src_mask, tgt_mask, src_tokens[:3], tgt_tokens, index=1)


def test_token_flow_follows_one_position():
    model = small_model(d_model=16, num_heads=2, d_ff=24)
    batch = padded_batch()
    src_mask, tgt_mask = model.make_masks(batch.src, batch.tgt_in)
    flow = trace_decoder_position(model, batch.src, batch.tgt_in, src_mask, tgt_mask, 1)
    assert [name for name, _, _ in flow.stages][0] == "input"
    assert all(shape == (16,) for _, shape, _ in flow.stages)
    # post-norm with untrained LayerNorm (gamma 1, beta 0): norm sqrt(d_model) after Add & Norm
    norms = {name: norm for name, _, norm in flow.stages}
    assert norms["Add & Norm 3"] == pytest.approx(16**0.5, rel=1e-3)
    assert flow.self_weights.shape == (2, 3) and flow.cross_weights.shape == (2, 4)
    assert torch.all(flow.self_weights[:, 2:] == 0)  # the future is masked
    assert torch.all(flow.cross_weights[:, 3] > 0)  # example 0 has no source padding
    assert flow.hidden.shape == (24,) and torch.all(flow.hidden >= 0)
    # the layer's output equals what the next layer receives
    seen = {}

    def remember(module, args):
        seen["x"] = args[0]

    hook = model.decoder.layers[1].register_forward_pre_hook(remember)
    with torch.no_grad():
        model(batch.src, batch.tgt_in, src_mask, tgt_mask)
    hook.remove()
    assert seen["x"][0, 1].norm().item() == pytest.approx(flow.stages[-1][2], rel=1e-5)
    fig = draw_token_flow(flow, ["<bos>", "x", "y"], ["a", "b", "c", "<eos>"])
    assert len(boxes(fig)) == 7
    assert "(16,)\n|v| = 4.00" in texts(fig, SHAPE_GID)
