"""Interop with ``torch.nn``: PyTorch's attention and Transformer weights under the course's names.

The tests use it to show that the course's modules compute what PyTorch's do, chapter 3 to
check ``MultiHeadAttention`` against ``nn.MultiheadAttention``, and the exercises' test cells
(:mod:`helpers.fixtures`) to put PyTorch's weights into the learner's modules, which use the
same attribute names as the course's by contract. One name mapping serves all three:

====================================================  ==========================================
PyTorch                                               course
====================================================  ==========================================
``MultiheadAttention.in_proj_weight`` (3·d, d)        ``q_proj``/``k_proj``/``v_proj`` ``.weight``
``MultiheadAttention.out_proj``                       ``out_proj``
``TransformerEncoderLayer.self_attn``                 ``self_attn``
``…Layer.linear1``, ``.linear2``                      ``feed_forward.linear1``, ``.linear2``
``TransformerEncoderLayer.norm1``, ``.norm2``         ``attn_block.norm``, ``ff_block.norm``
``TransformerDecoderLayer.multihead_attn``            ``cross_attn``
``TransformerDecoderLayer.norm1``, ``.norm2``,        ``self_attn_block.norm``,
``.norm3``                                            ``cross_attn_block.norm``, ``ff_block.norm``
``Transformer{Encoder,Decoder}.layers.i``, ``.norm``  ``layers.i``, ``norm``
====================================================  ==========================================

The course's classes are imported inside the functions that build them: while an exercise
is graded some of them are absent (``autograder/pieces.py``), and the mapping must keep
working for the learner's modules without them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, overload

import torch.nn.functional as F
from torch import Tensor, nn

if TYPE_CHECKING:
    from .decoder import Decoder
    from .layers import Encoder
    from .model import Transformer
    from .multi_head import MultiHeadAttention

_ENCODER_LAYER = {
    "self_attn": "self_attn",
    "linear1": "feed_forward.linear1",
    "linear2": "feed_forward.linear2",
    "norm1": "attn_block.norm",
    "norm2": "ff_block.norm",
}
_DECODER_LAYER = {
    "self_attn": "self_attn",
    "multihead_attn": "cross_attn",
    "linear1": "feed_forward.linear1",
    "linear2": "feed_forward.linear2",
    "norm1": "self_attn_block.norm",
    "norm2": "cross_attn_block.norm",
    "norm3": "ff_block.norm",
}
_STACKS = (nn.TransformerEncoder, nn.TransformerDecoder)
_LAYERS = (nn.TransformerEncoderLayer, nn.TransformerDecoderLayer)


def course_submodules(theirs: nn.Module) -> dict[str, nn.Module]:
    """``{course name: the torch submodule that holds its weights}`` for an
    ``nn.TransformerEncoderLayer``/``DecoderLayer`` or a stack of them.

    Attention modules map whole (:func:`torch_state_dict` splits their packed weights); the
    others are ``nn.Linear`` and ``nn.LayerNorm``, whose weights keep their names.
    """
    if isinstance(theirs, _STACKS):
        names = {
            f"layers.{i}.{ours}": module
            for i, layer in enumerate(theirs.layers)
            for ours, module in course_submodules(layer).items()
        }
        if theirs.norm is not None:
            names["norm"] = theirs.norm
        return names
    if isinstance(theirs, _LAYERS):
        table = _DECODER_LAYER if isinstance(theirs, nn.TransformerDecoderLayer) else _ENCODER_LAYER
        return {ours: theirs.get_submodule(name) for name, ours in table.items()}
    raise TypeError(
        "expected nn.MultiheadAttention, nn.TransformerEncoder(Layer) or "
        f"nn.TransformerDecoder(Layer); got {type(theirs).__name__}"
    )


def _attention_state(mha: nn.MultiheadAttention, prefix: str) -> dict[str, Tensor]:
    """The packed ``in_proj`` ``(3·d_model, d_model)`` split into W_Q, W_K, W_V, and W_O."""
    if mha.in_proj_weight is None or mha.in_proj_bias is None:
        raise ValueError(
            "the course's attention needs nn.MultiheadAttention with kdim = vdim = embed_dim "
            "and bias=True (one packed in_proj_weight and in_proj_bias)"
        )
    state: dict[str, Tensor] = {}
    for kind in ("weight", "bias"):
        q, k, v = getattr(mha, f"in_proj_{kind}").detach().chunk(3)
        for role, tensor in (("q", q), ("k", k), ("v", v)):
            state[f"{prefix}{role}_proj.{kind}"] = tensor
        state[f"{prefix}out_proj.{kind}"] = getattr(mha.out_proj, kind).detach()
    return state


def torch_state_dict(theirs: nn.Module) -> dict[str, Tensor]:
    """The weights of a PyTorch module under the course's parameter names (detached views).

    ``theirs``: ``nn.MultiheadAttention`` (keys ``q_proj.weight`` … ``out_proj.bias``), an
    ``nn.TransformerEncoderLayer``/``DecoderLayer`` or a stack of them; see the module's table.
    """
    if isinstance(theirs, nn.MultiheadAttention):
        return _attention_state(theirs, "")
    state: dict[str, Tensor] = {}
    for name, module in course_submodules(theirs).items():
        if isinstance(module, nn.MultiheadAttention):
            state.update(_attention_state(module, f"{name}."))
            continue
        for kind in ("weight", "bias"):
            param = getattr(module, kind)
            if param is not None:
                state[f"{name}.{kind}"] = param.detach()
    return state


def load_torch_weights(ours: nn.Module, theirs: nn.Module) -> None:
    """Copy the weights of ``theirs`` into ``ours``, a same-sized module with the course's names.

    Names and shapes must match exactly (``load_state_dict``'s error says what differs).
    LayerNorm ``eps`` is copied too, so that both compute the same thing.
    """
    ours.load_state_dict(torch_state_dict(theirs))
    if not isinstance(theirs, nn.MultiheadAttention):
        for name, module in course_submodules(theirs).items():
            norm = ours.get_submodule(name)
            if isinstance(module, nn.LayerNorm) and isinstance(norm, nn.LayerNorm):
                norm.eps = module.eps


def _check_attention(mha: nn.MultiheadAttention) -> None:
    if mha.bias_k is not None:
        raise ValueError("from_torch does not support add_bias_kv=True")
    if not mha.batch_first:
        raise ValueError("from_torch needs batch_first=True (this course is batch-first)")


def _stack_config(stack: nn.TransformerEncoder | nn.TransformerDecoder) -> dict[str, Any]:
    """The ``Encoder``/``Decoder`` arguments that rebuild a PyTorch stack, checked."""
    layer = stack.layers[0]
    _check_attention(layer.self_attn)
    if not (layer.activation is F.relu or isinstance(layer.activation, nn.ReLU)):
        raise ValueError(
            f"from_torch needs activation='relu' (the paper's); got {layer.activation}"
        )
    return {
        "d_model": layer.self_attn.embed_dim,
        "num_heads": layer.self_attn.num_heads,
        "d_ff": layer.linear1.out_features,
        "num_layers": len(stack.layers),
        "dropout": layer.dropout.p,
        "norm_first": layer.norm_first,
        "final_norm": stack.norm is not None,
    }


@overload
def from_torch(theirs: nn.MultiheadAttention) -> MultiHeadAttention: ...
@overload
def from_torch(theirs: nn.TransformerEncoder) -> Encoder: ...
@overload
def from_torch(theirs: nn.TransformerDecoder) -> Decoder: ...
def from_torch(theirs: nn.Module) -> nn.Module:
    """A course module with the sizes, weights and train/eval mode of a PyTorch one.

    ``nn.MultiheadAttention`` → ``MultiHeadAttention``; ``nn.TransformerEncoder`` →
    ``Encoder``; ``nn.TransformerDecoder`` → ``Decoder``. PyTorch's modules must be
    batch-first, with ReLU, biases and equal query/key/value sizes; post- or pre-norm, with
    or without a final LayerNorm.
    """
    ours: nn.Module
    if isinstance(theirs, nn.MultiheadAttention):
        from .multi_head import MultiHeadAttention

        _check_attention(theirs)
        ours = MultiHeadAttention(theirs.embed_dim, theirs.num_heads, theirs.dropout)
    elif isinstance(theirs, nn.TransformerEncoder):
        from .layers import Encoder

        ours = Encoder(**_stack_config(theirs))
    elif isinstance(theirs, nn.TransformerDecoder):
        from .decoder import Decoder

        ours = Decoder(**_stack_config(theirs))
    else:
        raise TypeError(
            "from_torch takes nn.MultiheadAttention, nn.TransformerEncoder or "
            f"nn.TransformerDecoder; got {type(theirs).__name__}"
        )
    load_torch_weights(ours, theirs)
    return ours.train(theirs.training)


def load_torch_transformer(
    model: Transformer,
    torch_transformer: nn.Transformer,
    src_embedding: nn.Embedding | None = None,
    tgt_embedding: nn.Embedding | None = None,
    generator: nn.Linear | None = None,
) -> None:
    """Give ``model`` the encoder and decoder of a same-sized ``torch.nn.Transformer`` (and, when
    given, its embeddings and output layer)."""
    # nn.Transformer ends both stacks with a LayerNorm even when post-norm, so take its
    # stacks whole rather than loading into ours.
    model.encoder = from_torch(torch_transformer.encoder).train(model.training)
    model.decoder = from_torch(torch_transformer.decoder).train(model.training)
    for ours, theirs in [
        (model.src_embed.embedding, src_embedding),
        (model.tgt_embed.embedding, tgt_embedding),
        (model.generator, generator),
    ]:
        if theirs is not None:
            ours.load_state_dict(theirs.state_dict())
