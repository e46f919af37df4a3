"""The whole Transformer: size, causality, equality with nn.Transformer, decoding (trained, and
training: tests/book/test_model_training.py)."""

import pytest
import torch
from support.models import tiny_config
from torch import nn

from helpers import (
    Transformer,
    TransformerConfig,
    causal_mask,
    greedy_decode,
)
from helpers.decoding import gnmt_length_penalty
from helpers.interop import load_torch_transformer

# Training runs and decoding: `make test` runs these again with AVX2-only kernels.
pytestmark = pytest.mark.cpu_kernels


def test_base_and_big_parameter_counts_match_paper_table_3():
    with torch.device("meta"):
        base = Transformer(TransformerConfig()).num_parameters()
        big = Transformer(TransformerConfig.big()).num_parameters()
    # Paper: 65M and 213M; the difference is mostly how the paper rounded and counted.
    assert 62e6 < base < 64e6, base
    assert 212e6 < big < 216e6, big


def test_defaults_are_the_base_model():
    c = TransformerConfig()
    assert (c.d_model, c.num_heads, c.d_ff, c.num_encoder_layers, c.dropout) == (
        512,
        8,
        2048,
        6,
        0.1,
    )
    assert c.d_model // c.num_heads == 64


def test_tied_embeddings_share_one_matrix():
    model = Transformer(tiny_config())
    assert model.generator.weight is model.src_embed.embedding.weight
    assert model.tgt_embed is model.src_embed
    untied = Transformer(tiny_config(tie_embeddings=False, tgt_vocab_size=17))
    assert untied.num_parameters() > model.num_parameters()


def test_teacher_forcing_is_causal():
    torch.manual_seed(0)
    model = Transformer(tiny_config()).eval()
    src = torch.randint(3, 13, (2, 6))
    tgt = torch.randint(3, 13, (2, 8))
    src_mask, tgt_mask = model.make_masks(src, tgt)
    logits = model(src, tgt, src_mask, tgt_mask)
    t = 4
    changed = tgt.clone()
    changed[:, t + 1 :] = torch.randint(3, 13, (2, 8 - t - 1))
    changed_logits = model(src, changed, src_mask, tgt_mask)
    assert torch.allclose(logits[:, : t + 1], changed_logits[:, : t + 1], atol=1e-6)
    assert not torch.allclose(logits[:, t + 1 :], changed_logits[:, t + 1 :])
    # Without the causal mask the earlier positions would see the change.
    leaky = model(src, changed, src_mask, None)
    assert not torch.allclose(logits[:, : t + 1], leaky[:, : t + 1], atol=1e-4)


@pytest.mark.filterwarnings("ignore:enable_nested_tensor is True:UserWarning")
@pytest.mark.parametrize("norm_first", [False, True])
def test_equal_weights_give_nn_transformer_outputs(norm_first):
    torch.manual_seed(0)
    c = tiny_config(norm_first=norm_first, tie_embeddings=False)
    ref = nn.Transformer(
        c.d_model,
        c.num_heads,
        c.num_encoder_layers,
        c.num_decoder_layers,
        c.d_ff,
        dropout=0.1,
        batch_first=True,
        norm_first=norm_first,
    ).eval()
    src_emb, tgt_emb = nn.Embedding(13, 32), nn.Embedding(13, 32)
    out = nn.Linear(32, 13)
    model = Transformer(c).eval()
    load_torch_transformer(model, ref, src_emb, tgt_emb, out)

    src = torch.tensor([[5, 6, 7, 8, 0, 0], [5, 6, 7, 8, 9, 10]])
    tgt = torch.tensor([[1, 4, 5, 6, 7], [1, 4, 5, 0, 0]])
    src_mask, tgt_mask = model.make_masks(src, tgt)
    ours = model(src, tgt, src_mask, tgt_mask)

    scale = c.d_model**0.5
    pe = model.positional.pe
    expected = out(
        ref(
            src_emb(src) * scale + pe[:6],
            tgt_emb(tgt) * scale + pe[:5],
            tgt_mask=~causal_mask(5),
            src_key_padding_mask=src == 0,
            tgt_key_padding_mask=tgt == 0,
            memory_key_padding_mask=src == 0,
        )
    )
    real = tgt != 0
    assert (ours[real] - expected[real]).abs().max() <= 1e-5


def test_bad_input_is_explained():
    with pytest.raises(ValueError, match="divisible"):
        TransformerConfig(d_model=100, num_heads=8)
    with pytest.raises(ValueError, match="tie_embeddings"):
        TransformerConfig(src_vocab_size=10, tgt_vocab_size=12)
    model = Transformer(tiny_config(max_len=10))
    ok = torch.randint(3, 13, (1, 5))
    with pytest.raises(ValueError, match=r"\[0, 13\)"):
        model(torch.tensor([[3, 13]]), ok)
    with pytest.raises(ValueError, match="max_len=10"):
        model(torch.randint(3, 13, (1, 11)), ok)


def test_untrained_decoding_agrees_with_and_without_cache():
    torch.manual_seed(3)
    model = Transformer(tiny_config())
    src = torch.randint(3, 13, (4, 7))
    src[0, 5:] = 0
    assert torch.equal(
        greedy_decode(model, src, 15, use_cache=True),
        greedy_decode(model, src, 15, use_cache=False),
    )
    assert model.training  # decoding gave the model back in training mode


def test_gnmt_length_penalty_values():
    lengths = torch.tensor([1.0, 8.0, 9.0])
    assert torch.allclose(gnmt_length_penalty(lengths, 0.0), torch.ones(3))
    expected = torch.tensor([1.0, (13 / 6) ** 0.6, (14 / 6) ** 0.6])
    assert torch.allclose(gnmt_length_penalty(lengths, 0.6), expected)
