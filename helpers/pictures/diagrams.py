"""Diagrams drawn from a live model (chapters 3 and 6), so they cannot drift from the code.

Each picture comes in two steps: a ``trace_*`` / ``*_shapes`` function runs the model once
(under ``torch.no_grad()``) and records what it saw, and a ``draw_*`` function turns that record
into a matplotlib Figure. Nothing in a drawing is typed in by hand: every shape written on it is
read from the recorded forward pass.

- ``transformer_shapes`` + ``draw_transformer``: the paper's Figure 1 (embeddings and positions,
  the encoder and decoder layers with their sublayers, linear, softmax) with every tensor's
  shape, from a ``helpers.Transformer``.
- ``trace_head_split`` + ``draw_head_split``: a multi-head attention call, from
  ``(batch, seq, d_model)`` through ``(batch, h, seq, d_k)`` and back.
- ``draw_masks``: the encoder, decoder and cross-attention masks of one padded example.
- ``trace_decoder_position`` + ``draw_token_flow``: one target position through a decoder layer.

Drawn boxes carry the matplotlib ``gid`` "box", shape labels the gid "shape", so tests can find
them. The module never selects a backend, and it imports the model's modules (which are
exercises) only inside the functions that use them, so it loads while an exercise is graded.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import matplotlib.pyplot as plt
import numpy as np
import torch
from matplotlib.axes import Axes
from matplotlib.colors import ListedColormap
from matplotlib.figure import Figure
from matplotlib.patches import FancyBboxPatch, Rectangle
from torch import Tensor, nn

from .plotting import plot_attention, use_cjk_font
from .tracing import Shape, trace_shapes

if TYPE_CHECKING:  # the model's modules are exercises: import them only where they are used
    from ..decoder import DecoderLayer
    from ..model import Transformer
    from ..multi_head import MultiHeadAttention

BOX_GID = "box"
SHAPE_GID = "shape"

# Fill colours of the boxes, close to the paper's Figure 1.
ATTENTION_COLOR = "#fbd9a6"
NORM_COLOR = "#f4f1b5"
FFN_COLOR = "#c9e7f7"
EMBED_COLOR = "#f7c6c7"
LINEAR_COLOR = "#d9d2f0"
FRAME_COLOR = "#eeeeee"


def fmt_shape(shape: Shape | None) -> str:
    """``(1, 5, 32)`` as the string "(1, 5, 32)"; "-" for None."""
    return "-" if shape is None else str(tuple(shape))


# ----------------------------------------------------------------------------------------------
# drawing primitives


def _box(
    ax: Axes,
    center: tuple[float, float],
    size: tuple[float, float],
    text: str,
    color: str,
    fontsize: float = 10,
    dashed: bool = False,
) -> FancyBboxPatch:
    """A rounded box centred at ``center`` (data units) with ``text`` inside; gid "box"."""
    (x, y), (w, h) = center, size
    patch = FancyBboxPatch(
        (x - w / 2, y - h / 2),
        w,
        h,
        boxstyle="round,pad=0.02,rounding_size=0.12",
        facecolor=color,
        edgecolor="black",
        linewidth=1.0,
        linestyle="--" if dashed else "-",
        zorder=2,
    )
    patch.set_gid(BOX_GID)
    ax.add_patch(patch)
    ax.text(x, y, text, ha="center", va="center", fontsize=fontsize, zorder=3)
    return patch


def _arrow(ax: Axes, start: tuple[float, float], end: tuple[float, float]) -> None:
    """A straight arrow from ``start`` to ``end`` (data units)."""
    ax.annotate(
        "",
        xy=end,
        xytext=start,
        arrowprops={"arrowstyle": "-|>", "color": "black", "lw": 1.1, "shrinkA": 0, "shrinkB": 0},
        zorder=1,
    )


def _line(ax: Axes, xs: Sequence[float], ys: Sequence[float]) -> None:
    """A polyline without an arrow head (the first legs of a bent arrow)."""
    ax.plot(xs, ys, color="black", lw=1.1, zorder=1, solid_capstyle="butt")


def _shape_text(
    ax: Axes, x: float, y: float, text: str, ha: str = "left", fontsize: float = 9.5
) -> None:
    """A shape label (gid "shape"), in blue so it stands out from the box names."""
    label = ax.text(x, y, text, ha=ha, va="center", fontsize=fontsize, color="#1f4e99", zorder=3)
    label.set_gid(SHAPE_GID)


def _blank_axes(fig: Figure, xlim: tuple[float, float], ylim: tuple[float, float]) -> Axes:
    ax = fig.add_axes((0.0, 0.0, 1.0, 0.95))
    ax.set_xlim(*xlim)
    ax.set_ylim(*ylim)
    ax.set_axis_off()
    return ax


# ----------------------------------------------------------------------------------------------
# 1. the paper's Figure 1, with shapes


@contextmanager
def _watching(
    hooks: Sequence[tuple[nn.Module, Callable[..., None]]],
    attention: Sequence[MultiHeadAttention],
) -> Iterator[None]:
    """Run the block without gradients, with the forward ``hooks`` installed and the
    ``attention`` modules recording their weights; afterwards both are as they were."""
    handles = [module.register_forward_hook(hook) for module, hook in hooks]
    recording = [mha.record_weights for mha in attention]
    for mha in attention:
        mha.record_weights = True
    try:
        with torch.no_grad():
            yield
    finally:
        for mha, was in zip(attention, recording, strict=True):
            mha.record_weights = was
        for handle in handles:
            handle.remove()


def _first(records: dict[str, list[Any]], name: str) -> Any:
    if name not in records:
        raise ValueError(f"no call of {name!r} was recorded; is this a helpers.Transformer?")
    return records[name][0]


def transformer_shapes(
    model: Transformer,
    src: Tensor,
    tgt: Tensor,
    src_mask: Tensor | None = None,
    tgt_mask: Tensor | None = None,
) -> dict[str, Shape | None]:
    """Shapes of every tensor of the paper's Figure 1, read from one traced forward pass.

    src: ids ``(batch, src_len)``; tgt: decoder input ids ``(batch, tgt_len)``; masks as made by
    ``model.make_masks``. Returns a dict with the keys
    ``src_ids, src_embed, src_pos, enc_mask, enc_attn, enc_norm1, enc_ff_hidden, enc_ff,
    enc_norm2, memory, tgt_ids, tgt_embed, tgt_pos, dec_self_mask, dec_self_attn, dec_norm1,
    dec_cross_q, dec_cross_kv, dec_cross_mask, dec_cross, dec_norm2, dec_ff_hidden, dec_ff,
    dec_norm3, dec_out, logits`` (the layers' entries are those of layer 0; a mask is None when
    none was passed). The softmax is not part of the module: its output has the logits' shape.
    """
    records: dict[str, list[Any]] = {}
    by_type: dict[str, list[Any]] = {}
    for record in trace_shapes(model, src, tgt, src_mask, tgt_mask):
        records.setdefault(record.name, []).append(record)
        by_type.setdefault(record.type, []).append(record)
    embeds = by_type.get("TokenEmbedding", [])
    positions = by_type.get("PositionalEncoding", []) + by_type.get("LearnedPositionalEncoding", [])
    if len(embeds) != 2 or len(positions) != 2:
        raise ValueError("expected one source and one target embedding and positional call")

    def out(name: str) -> Shape:
        shape: Shape = _first(records, name).output_shapes[0]
        return shape

    def inp(name: str, i: int) -> Shape | None:
        shapes: list[Shape] = _first(records, name).input_shapes
        return shapes[i] if i < len(shapes) else None

    enc, dec = "encoder.layers.0.", "decoder.layers.0."
    return {
        "src_ids": embeds[0].input_shapes[0],
        "src_embed": embeds[0].output_shapes[0],
        "src_pos": positions[0].output_shapes[0],
        "enc_mask": inp(enc + "self_attn", 3),
        "enc_attn": out(enc + "self_attn"),
        "enc_norm1": out(enc + "attn_block"),
        "enc_ff_hidden": out(enc + "feed_forward.linear1"),
        "enc_ff": out(enc + "feed_forward"),
        "enc_norm2": out(enc + "ff_block"),
        "memory": out("encoder"),
        "tgt_ids": embeds[1].input_shapes[0],
        "tgt_embed": embeds[1].output_shapes[0],
        "tgt_pos": positions[1].output_shapes[0],
        "dec_self_mask": inp(dec + "self_attn", 3),
        "dec_self_attn": out(dec + "self_attn"),
        "dec_norm1": out(dec + "self_attn_block"),
        "dec_cross_q": inp(dec + "cross_attn", 0),
        "dec_cross_kv": inp(dec + "cross_attn", 1),
        "dec_cross_mask": inp(dec + "cross_attn", 3),
        "dec_cross": out(dec + "cross_attn"),
        "dec_norm2": out(dec + "cross_attn_block"),
        "dec_ff_hidden": out(dec + "feed_forward.linear1"),
        "dec_ff": out(dec + "feed_forward"),
        "dec_norm3": out(dec + "ff_block"),
        "dec_out": out("decoder"),
        "logits": out("generator"),
    }


BOX_W, BOX_H, STEP = 4.6, 0.95, 1.55  # box size and vertical distance between box centres


def _stack(
    ax: Axes,
    cx: float,
    y0: float,
    boxes: Sequence[tuple[str, str]],
    arrows: Sequence[str],
    residual_side: float,
) -> list[float]:
    """Boxes (text, colour) stacked upwards from ``y0`` at ``cx``, arrows between them labelled
    with ``arrows`` (one fewer than boxes), and the residual connections: the input of every
    sublayer (even index) bypasses it into the Add & Norm above (odd index). Returns the box
    centres' y."""
    ys = [y0 + i * STEP for i in range(len(boxes))]
    label_ha = "left" if residual_side < 0 else "right"
    for (text, color), y in zip(boxes, ys, strict=True):
        _box(ax, (cx, y), (BOX_W, BOX_H), text, color, fontsize=9.5)
    for label, y in zip(arrows, ys, strict=False):
        _arrow(ax, (cx, y + BOX_H / 2), (cx, y + STEP - BOX_H / 2))
        # shape labels on the side away from the residual lines
        _shape_text(ax, cx - residual_side * 0.12, y + STEP / 2, label, ha=label_ha)
    side = cx + residual_side * (BOX_W / 2 + 0.3)
    for i in range(0, len(boxes) - 1, 2):
        below = ys[i] - BOX_H / 2 - 0.3
        _line(ax, [cx, side, side], [below, below, ys[i + 1]])
        _arrow(ax, (side, ys[i + 1]), (cx + residual_side * BOX_W / 2, ys[i + 1]))
    return ys


def draw_transformer(
    shapes: dict[str, Shape | None],
    num_encoder_layers: int,
    num_decoder_layers: int,
    num_heads: int,
    title: str | None = None,
) -> Figure:
    """The paper's Figure 1 with the shapes from ``transformer_shapes`` written on every arrow.

    Encoder on the left, decoder on the right, read from the bottom up; blue labels are
    tensor shapes, "N×" the number of stacked layers. Returns the Figure (16 boxes).
    """
    use_cjk_font()
    s = {key: fmt_shape(value) for key, value in shapes.items()}
    fig = plt.figure(figsize=(10, 10.6))
    ax = _blank_axes(fig, (-1.0, 17.5), (-0.8, 18.1))
    enc_x, dec_x = 4.0, 12.5

    # inputs, embeddings, positions
    for cx, side, ids, name, embed, pos, word in [
        (enc_x, 1, "src_ids", "Input Embedding", "src_embed", "src_pos", "source ids"),
        (dec_x, -1, "tgt_ids", "Output Embedding", "tgt_embed", "tgt_pos", "target (shifted)"),
    ]:
        ha = "left" if side > 0 else "right"
        ax.text(cx, 0.0, word, ha="center", va="center", fontsize=10)
        _shape_text(ax, cx, -0.45, s[ids], ha="center")
        _arrow(ax, (cx, 0.3), (cx, 1.6 - BOX_H / 2))
        _box(ax, (cx, 1.6), (BOX_W, BOX_H), f"{name}\n× √d_model", EMBED_COLOR, 9.5)
        _arrow(ax, (cx, 1.6 + BOX_H / 2), (cx, 3.15 - BOX_H / 2))
        _shape_text(ax, cx + side * 0.12, 2.375, s[embed], ha=ha)
        _box(ax, (cx, 3.15), (BOX_W, BOX_H), "+ Positional Encoding", EMBED_COLOR, 9.5)
        _arrow(ax, (cx, 3.15 + BOX_H / 2), (cx, 5.3 - BOX_H / 2))
        _shape_text(ax, cx + side * 0.12, 4.2, s[pos], ha=ha)

    # encoder layer
    frame_w = BOX_W + 1.3
    enc_boxes = [
        (
            f"Multi-Head Attention, h = {num_heads}\nQ = K = V; mask {s['enc_mask']}",
            ATTENTION_COLOR,
        ),
        ("Add & Norm", NORM_COLOR),
        (f"Feed Forward\nhidden {s['enc_ff_hidden']}", FFN_COLOR),
        ("Add & Norm", NORM_COLOR),
    ]
    enc_arrows = [s["enc_attn"], s["enc_norm1"], s["enc_ff"]]
    frame = Rectangle((enc_x - frame_w / 2, 4.3), frame_w, 3 * STEP + 1.7, fc=FRAME_COLOR)
    ax.add_patch(frame)
    ys = _stack(ax, enc_x, 5.3, enc_boxes, enc_arrows, residual_side=-1)
    ax.text(
        enc_x - frame_w / 2 - 0.15,
        ys[1] + STEP / 2,
        f"N = {num_encoder_layers} ×\nencoder\nlayers",
        ha="right",
        va="center",
        fontsize=11,
    )

    # memory: from the top of the encoder into the decoder's cross-attention
    top = ys[-1] + BOX_H / 2
    bend_y, bend_x = top + 1.0, dec_x - frame_w / 2 - 0.5
    cross_y = 5.3 + 2 * STEP
    _line(ax, [enc_x, enc_x, bend_x, bend_x], [top, bend_y, bend_y, cross_y])
    _arrow(ax, (bend_x, cross_y), (dec_x - BOX_W / 2, cross_y))
    _shape_text(ax, (enc_x + bend_x) / 2, bend_y + 0.3, f"memory {s['memory']}", ha="center")

    # decoder layer
    dec_boxes = [
        (f"Masked Multi-Head Attention\nQ = K = V; mask {s['dec_self_mask']}", ATTENTION_COLOR),
        ("Add & Norm", NORM_COLOR),
        (
            f"Multi-Head Attention (cross)\nQ {s['dec_cross_q']}, K = V {s['dec_cross_kv']}\n"
            f"mask {s['dec_cross_mask']}",
            ATTENTION_COLOR,
        ),
        ("Add & Norm", NORM_COLOR),
        (f"Feed Forward\nhidden {s['dec_ff_hidden']}", FFN_COLOR),
        ("Add & Norm", NORM_COLOR),
    ]
    dec_arrows = [s["dec_self_attn"], s["dec_norm1"], s["dec_cross"], s["dec_norm2"], s["dec_ff"]]
    ax.add_patch(Rectangle((dec_x - frame_w / 2, 4.3), frame_w, 5 * STEP + 1.7, fc=FRAME_COLOR))
    ys = _stack(ax, dec_x, 5.3, dec_boxes, dec_arrows, residual_side=+1)
    ax.text(
        dec_x + frame_w / 2 + 0.15,
        ys[2],
        f"× N = {num_decoder_layers}\ndecoder\nlayers",
        ha="left",
        va="center",
        fontsize=11,
    )

    # output: linear and softmax
    top = ys[-1] + BOX_H / 2
    linear_y, softmax_y = top + 1.25, top + 1.25 + STEP
    _arrow(ax, (dec_x, top), (dec_x, linear_y - BOX_H / 2))
    _shape_text(ax, dec_x + 0.12, (top + linear_y - BOX_H / 2) / 2, s["dec_out"])
    _box(ax, (dec_x, linear_y), (BOX_W, BOX_H), "Linear (generator)", LINEAR_COLOR, 9.5)
    _arrow(ax, (dec_x, linear_y + BOX_H / 2), (dec_x, softmax_y - BOX_H / 2))
    _shape_text(ax, dec_x + 0.12, (linear_y + softmax_y) / 2, f"logits {s['logits']}")
    _box(
        ax,
        (dec_x, softmax_y),
        (BOX_W, BOX_H),
        "Softmax\n(in the loss / decoding)",
        LINEAR_COLOR,
        9.5,
        dashed=True,
    )
    _arrow(ax, (dec_x, softmax_y + BOX_H / 2), (dec_x, softmax_y + BOX_H / 2 + 0.6))
    _shape_text(
        ax, dec_x, softmax_y + BOX_H / 2 + 0.85, f"probabilities {s['logits']}", ha="center"
    )
    if title is not None:
        fig.suptitle(title, fontsize=12)
    return fig


def plot_transformer(
    model: Transformer,
    src: Tensor,
    tgt: Tensor,
    src_mask: Tensor | None = None,
    tgt_mask: Tensor | None = None,
) -> Figure:
    """``draw_transformer(transformer_shapes(...))`` for ``model``, titled with its sizes."""
    shapes = transformer_shapes(model, src, tgt, src_mask, tgt_mask)
    c = model.config
    title = (
        f"The Transformer (paper's Figure 1), shapes from a live forward pass: "
        f"d_model = {c.d_model}, h = {c.num_heads}, d_ff = {c.d_ff}"
    )
    return draw_transformer(
        shapes, len(model.encoder.layers), len(model.decoder.layers), c.num_heads, title
    )


# ----------------------------------------------------------------------------------------------
# 2. multi-head split and merge


@dataclass
class HeadStep:
    """One step of a multi-head attention call: what was done, the resulting shape, what its
    axes mean, and how to draw it: kind "dense" (batch, seq, d_model) in one colour, "banded"
    the same with columns coloured by head, "cut" (batch, seq, h, d_k), "heads"
    (batch, h, seq, d_k), "scores" (batch, h, seq_q, seq_k)."""

    label: str
    shape: Shape
    axes: str
    kind: str


@dataclass
class HeadSplitTrace:
    """The steps of one call, and the attention weights ``(h, q_len, k_len)`` of example 0."""

    steps: list[HeadStep]
    weights: Tensor


def trace_head_split(
    mha: MultiHeadAttention,
    query: Tensor,
    key: Tensor | None = None,
    value: Tensor | None = None,
    mask: Tensor | None = None,
) -> HeadSplitTrace:
    """Call ``mha(query, key, value, mask)`` once (self-attention when key/value are None) and
    record its steps.

    query ``(batch, q_len, d_model)``. Forward hooks catch the projections' outputs and the
    input of ``out_proj``; the attention weights ``(batch, h, q_len, k_len)`` come from the
    module's ``record_weights``. The view/transpose shapes are those of ``split_heads`` applied
    to the caught projection; the recomputed merge must equal what ``out_proj`` received, or a
    RuntimeError is raised. Dropout should be off (``mha.eval()``).
    """
    from ..multi_head import merge_heads, split_heads

    key = query if key is None else key
    value = key if value is None else value
    caught: dict[str, Tensor] = {}

    def catch(name: str, use_input: bool = False) -> Callable[..., None]:
        def hook(module: nn.Module, args: tuple[Tensor, ...], output: Tensor) -> None:
            caught[name] = (args[0] if use_input else output).detach()

        return hook

    hooks = [
        (mha.q_proj, catch("q")),
        (mha.v_proj, catch("v")),
        (mha.out_proj, catch("merged", use_input=True)),
        (mha.out_proj, catch("output")),
    ]
    with _watching(hooks, [mha]):
        mha(query, key, value, mask)
    weights = mha.last_weights
    if weights is None:
        raise RuntimeError("the attention module did not record its weights")
    h = mha.num_heads
    q, v = caught["q"], caught["v"]
    batch, q_len, d_model = q.shape
    per_head = weights @ split_heads(v, h)  # (batch, h, q_len, d_k)
    merged = merge_heads(per_head)
    if not torch.allclose(merged, caught["merged"], atol=1e-5):
        raise RuntimeError("recomputed heads do not match the module's own merge")
    steps = [
        HeadStep("input x", tuple(query.shape), "batch, seq, d_model", "dense"),
        HeadStep("q = x W_Q (all heads)", tuple(q.shape), "batch, seq, d_model", "banded"),
        HeadStep(
            "view: cut into h × d_k", (batch, q_len, h, d_model // h), "batch, seq, h, d_k", "cut"
        ),
        HeadStep(
            "transpose(1, 2): split_heads",
            tuple(split_heads(q, h).shape),
            "batch, h, seq, d_k",
            "heads",
        ),
        HeadStep(
            "softmax(Q K^T / √d_k), per head", tuple(weights.shape), "batch, h, seq, seq", "scores"
        ),
        HeadStep("weights @ V, per head", tuple(per_head.shape), "batch, h, seq, d_k", "heads"),
        HeadStep(
            "transpose(1, 2)", tuple(per_head.transpose(1, 2).shape), "batch, seq, h, d_k", "cut"
        ),
        HeadStep(
            "reshape: merge_heads (concat)",
            tuple(caught["merged"].shape),
            "batch, seq, d_model",
            "banded",
        ),
        HeadStep(
            "output = concat W_O", tuple(caught["output"].shape), "batch, seq, d_model", "dense"
        ),
    ]
    return HeadSplitTrace(steps, weights[0].detach().cpu())


GLYPH_W, GLYPH_H = 2.4, 1.5  # size of a (seq, d_model) block in a head-split drawing


def _head_colors(h: int) -> list[Any]:
    cmap = plt.get_cmap("tab10" if h <= 10 else "tab20")
    return [cmap(i % cmap.N) for i in range(h)]


def _draw_glyph(ax: Axes, x: float, y: float, step: HeadStep, weights: Tensor, h: int) -> None:
    """Draw one step's tensor for one example, bottom-left corner at (x, y)."""
    colors = _head_colors(h)
    if step.kind == "dense":
        ax.add_patch(Rectangle((x, y), GLYPH_W, GLYPH_H, fc="#b8c4d6", ec="black", gid=BOX_GID))
    elif step.kind in ("banded", "cut"):
        gap = 0.06 if step.kind == "cut" else 0.0
        band = (GLYPH_W - gap * (h - 1)) / h
        for i in range(h):
            ax.add_patch(
                Rectangle(
                    (x + i * (band + gap), y),
                    band,
                    GLYPH_H,
                    fc=colors[i],
                    ec="black",
                    lw=0.6,
                    alpha=0.8,
                    gid=BOX_GID,
                )
            )
    else:  # one card per head, drawn back to front; the front card is head 0
        card_w = GLYPH_W / 3 if step.kind == "heads" else GLYPH_H * 0.8
        card_h = GLYPH_H * 0.8
        dx = (GLYPH_W - card_w) / max(h - 1, 1)
        dy = (GLYPH_H - card_h) / max(h - 1, 1)
        for i in reversed(range(h)):
            cx, cy = x + i * dx, y + GLYPH_H - card_h - i * dy
            ax.add_patch(
                Rectangle((cx, cy), card_w, card_h, fc=colors[i], ec="black", lw=0.6, gid=BOX_GID)
            )
        if step.kind == "scores":  # the live weights of head 0 on the front card
            ax.imshow(
                weights[0].numpy(),
                cmap="viridis",
                vmin=0.0,
                extent=(x, x + card_w, y + GLYPH_H - card_h, y + GLYPH_H),
                zorder=3,
            )


def draw_head_split(trace: HeadSplitTrace, title: str | None = None) -> Figure:
    """Draw the steps of ``trace_head_split`` in two rows: split on top, merge below.

    One example of the batch is drawn (the batch axis is only in the labels); colours are heads.
    Each step shows its operation, a schematic of the tensor and its shape with axis names;
    the front card of the attention step is head 0's live weights.
    """
    use_cjk_font()
    steps, h = trace.steps, trace.weights.shape[0]
    split_at = (len(steps) + 1) // 2
    rows = [steps[:split_at], steps[split_at:]]
    cell_w = GLYPH_W + 1.4
    fig = plt.figure(figsize=(11.5, 5.4))
    ax = _blank_axes(fig, (-0.3, split_at * cell_w), (-0.2, 7.25))
    for r, row in enumerate(rows):
        y = 5.0 if r == 0 else 0.8
        for c, step in enumerate(row):
            x = 0.2 + c * cell_w
            ax.text(x + GLYPH_W / 2, y + GLYPH_H + 0.35, step.label, ha="center", fontsize=10.5)
            _draw_glyph(ax, x, y, step, trace.weights, h)
            _shape_text(
                ax, x + GLYPH_W / 2, y - 0.3, fmt_shape(step.shape), ha="center", fontsize=10.5
            )
            ax.text(
                x + GLYPH_W / 2,
                y - 0.75,
                f"({step.axes})",
                ha="center",
                va="center",
                fontsize=9,
                color="#555555",
            )
            if c + 1 < len(row):
                _arrow(
                    ax, (x + GLYPH_W + 0.15, y + GLYPH_H / 2), (x + cell_w - 0.15, y + GLYPH_H / 2)
                )
    # from the end of the top row down to the start of the bottom row
    last_x = 0.2 + (len(rows[0]) - 1) * cell_w + GLYPH_W / 2
    _line(ax, [last_x, last_x, 0.2 + GLYPH_W / 2], [5.0 - 1.0, 3.5, 3.5])
    _arrow(ax, (0.2 + GLYPH_W / 2, 3.5), (0.2 + GLYPH_W / 2, 0.8 + GLYPH_H + 0.75))
    if title is not None:
        fig.suptitle(title, fontsize=12)
    return fig


# ----------------------------------------------------------------------------------------------
# 3. the three masks


MASK_CMAP = ListedColormap(["#3b3b3b", "#f6e8a6"])  # False = blocked (dark), True = may attend


def mask_matrices(src_mask: Tensor, tgt_mask: Tensor, index: int = 0) -> list[tuple[str, Tensor]]:
    """The three masks of example ``index`` as full boolean matrices, broadcast as attention
    broadcasts them.

    src_mask ``(batch, 1, 1, src_len)``, tgt_mask ``(batch, 1, tgt_len, tgt_len)`` (from
    ``Transformer.make_masks``). Returns (title, matrix): encoder self-attention
    ``(src_len, src_len)``, decoder masked self-attention ``(tgt_len, tgt_len)``,
    cross-attention ``(tgt_len, src_len)``.
    """
    src_len, tgt_len = src_mask.size(-1), tgt_mask.size(-1)
    src_row = src_mask[index].reshape(-1, src_len)  # (1, src_len)
    return [
        (
            f"encoder self-attention\npadding only: {fmt_shape(tuple(src_mask.shape))}"
            f" → ({src_len}, {src_len})",
            src_row.expand(src_len, src_len),
        ),
        (
            f"decoder masked self-attention\npadding & causal: {fmt_shape(tuple(tgt_mask.shape))}",
            tgt_mask[index].reshape(tgt_len, tgt_len),
        ),
        (
            f"cross-attention\nsource padding: {fmt_shape(tuple(src_mask.shape))}"
            f" → ({tgt_len}, {src_len})",
            src_row.expand(tgt_len, src_len),
        ),
    ]


def _token_axes(ax: Axes, rows: Sequence[str], cols: Sequence[str]) -> None:
    ax.set_xticks(range(len(cols)), list(cols), rotation=45, ha="right", rotation_mode="anchor")
    ax.set_yticks(range(len(rows)), list(rows))
    ax.set_xticks(np.arange(-0.5, len(cols)), minor=True)
    ax.set_yticks(np.arange(-0.5, len(rows)), minor=True)
    ax.grid(which="minor", color="white", linewidth=1.0)
    ax.tick_params(which="minor", length=0)


def draw_masks(
    src_mask: Tensor,
    tgt_mask: Tensor,
    src_tokens: Sequence[str],
    tgt_tokens: Sequence[str],
    index: int = 0,
) -> Figure:
    """The three masks of one example side by side, rows = queries, columns = keys, labelled
    with the tokens (light = may attend, dark = blocked). Shapes as in ``mask_matrices``;
    src_tokens / tgt_tokens: that example's tokens, padding included."""
    use_cjk_font()
    panels = mask_matrices(src_mask, tgt_mask, index)
    src, tgt = ("source", list(src_tokens)), ("target", list(tgt_tokens))
    labels = [(src, src), (tgt, tgt), (tgt, src)]  # (rows = queries, columns = keys)
    fig, axes = plt.subplots(
        1,
        3,
        figsize=(12.5, 5.0),
        layout="constrained",
        gridspec_kw={"width_ratios": [len(cols[1]) for _, cols in labels]},
    )
    for ax, (title, matrix), (rows, cols) in zip(axes, panels, labels, strict=True):
        if matrix.shape != (len(rows[1]), len(cols[1])):
            raise ValueError(
                f"{len(rows[1])} × {len(cols[1])} tokens for a mask {tuple(matrix.shape)}"
            )
        ax.imshow(matrix.int().numpy(), cmap=MASK_CMAP, vmin=0, vmax=1)
        _token_axes(ax, rows[1], cols[1])
        ax.set_title(title, fontsize=11)
        ax.set_xlabel(f"key ({cols[0]})")
        ax.set_ylabel(f"query ({rows[0]})")
    fig.suptitle("The three masks of one padded example: light = may attend, dark = blocked")
    return fig


# ----------------------------------------------------------------------------------------------
# 4. one target position through a decoder layer


@dataclass
class TokenFlow:
    """What one target position went through in one decoder layer.

    stages: (name, shape of the position's vector, its L2 norm) for the layer input, each
    sublayer's output and each Add & Norm; self_weights ``(h, tgt_len)`` and cross_weights
    ``(h, src_len)``: that position's attention rows; hidden ``(d_ff,)``: its feed-forward
    hidden activations after the ReLU.
    """

    position: int
    stages: list[tuple[str, Shape, float]]
    self_weights: Tensor
    cross_weights: Tensor
    hidden: Tensor


def trace_decoder_position(
    model: Transformer,
    src: Tensor,
    tgt: Tensor,
    src_mask: Tensor | None,
    tgt_mask: Tensor | None,
    position: int,
    layer: int = 0,
    index: int = 0,
) -> TokenFlow:
    """Run ``model(src, tgt, src_mask, tgt_mask)`` once and follow target ``position`` of
    example ``index`` through decoder layer ``layer``. Shapes and norms are those of the
    ``(d_model,)`` vector of that position; the model should be in eval mode."""
    block: DecoderLayer = model.decoder.layers[layer]  # type: ignore[assignment]
    caught: dict[str, Tensor] = {}

    def catch(name: str) -> Callable[..., None]:
        def hook(module: nn.Module, args: tuple[Tensor, ...], output: Tensor) -> None:
            caught[name] = output[index].detach()
            caught[name + " in"] = args[0][index].detach()

        return hook

    parts: list[tuple[str, nn.Module]] = [
        ("masked self-attention", block.self_attn),
        ("Add & Norm 1", block.self_attn_block),
        ("cross-attention", block.cross_attn),
        ("Add & Norm 2", block.cross_attn_block),
        ("feed-forward", block.feed_forward),
        ("Add & Norm 3", block.ff_block),
        ("hidden", block.feed_forward.linear1),
    ]
    hooks = [(module, catch(name)) for name, module in parts]
    with _watching(hooks, [block.self_attn, block.cross_attn]):
        model(src, tgt, src_mask, tgt_mask)
    self_w, cross_w = block.self_attn.last_weights, block.cross_attn.last_weights
    if self_w is None or cross_w is None:
        raise RuntimeError("the attention modules did not record their weights")
    named = [("input", caught["Add & Norm 1 in"])] + [
        (name, caught[name]) for name, _ in parts[:-1]
    ]
    stages = [
        (name, tuple(vec[position].shape), float(vec[position].norm())) for name, vec in named
    ]
    return TokenFlow(
        position,
        stages,
        self_w[index, :, position].cpu(),
        cross_w[index, :, position].cpu(),
        torch.relu(caught["hidden"][position]).cpu(),
    )


def draw_token_flow(
    flow: TokenFlow, tgt_tokens: Sequence[str], src_tokens: Sequence[str]
) -> Figure:
    """One position's way through a decoder layer: on top, a box per stage with the vector's
    shape and norm; below, the attention rows it used (heads × target tokens, heads × source
    tokens) and its feed-forward hidden activations."""
    use_cjk_font()
    fig = plt.figure(figsize=(13, 7.0), layout="constrained")
    grid = fig.add_gridspec(2, 1, height_ratios=[0.62, 1.45])
    top, bottom = fig.add_subfigure(grid[0]), fig.add_subfigure(grid[1])
    ax = top.add_subplot()
    n = len(flow.stages)
    ax.set_xlim(-0.1, 2.0 * n - 0.3)
    ax.set_ylim(-0.05, 1.65)
    ax.set_axis_off()
    colors = [
        EMBED_COLOR,
        ATTENTION_COLOR,
        NORM_COLOR,
        ATTENTION_COLOR,
        NORM_COLOR,
        FFN_COLOR,
        NORM_COLOR,
    ]
    for i, (name, shape, norm) in enumerate(flow.stages):
        x = 0.8 + 2.0 * i
        _box(
            ax,
            (x, 1.2),
            (1.6, 0.8),
            name.replace(" ", "\n", 1) if len(name) > 12 else name,
            colors[i % len(colors)],
            fontsize=10.5,
        )
        _shape_text(
            ax, x, 0.45, f"{fmt_shape(shape)}\n|v| = {norm:.2f}", ha="center", fontsize=10.5
        )
        if i + 1 < n:
            _arrow(ax, (x + 0.8, 1.2), (x + 1.2, 1.2))
    token = tgt_tokens[flow.position]
    top.suptitle(
        f"Target position {flow.position} ({token}) through one decoder layer", fontsize=12
    )

    ax_self, ax_cross, ax_ffn = bottom.subplots(
        1, 3, gridspec_kw={"width_ratios": [len(tgt_tokens) + 2, len(src_tokens) + 2, 8]}
    )
    heads = [f"head {i}" for i in range(flow.self_weights.shape[0])]
    for axis, weights, keys, name in [
        (ax_self, flow.self_weights, tgt_tokens, "masked self-attention: its row"),
        (ax_cross, flow.cross_weights, src_tokens, "cross-attention: its row"),
    ]:
        plot_attention(weights, heads, keys, ax=axis, title=name, colorbar=False)
        axis.set_ylabel("")
    ax_self.axvline(flow.position + 0.5, color="red", lw=2)  # keys right of it are the future
    ax_ffn.bar(range(flow.hidden.numel()), flow.hidden.numpy(), color="#4c8fc0")
    active = int((flow.hidden > 0).sum())
    ax_ffn.set_title(f"feed-forward hidden, after ReLU\n{active} of {flow.hidden.numel()} > 0")
    ax_ffn.set_xlabel("hidden unit")
    return fig
