"""Multi-head attention, positional encoding, layers and stacks, against PyTorch's own modules
(their weights copied in by helpers.interop, as the tests of the exercises do)."""

import subprocess
import sys
from pathlib import Path

import pytest
import torch
from torch import nn

from autograder import pieces
from checks.fixtures import copy_from_torch, copy_mha_weights, randomize_
from helpers import (
    Decoder,
    DecoderLayer,
    Encoder,
    EncoderLayer,
    MultiHeadAttention,
    PositionalEncoding,
    causal_mask,
    merge_heads,
    padding_mask,
    sinusoidal_positional_encoding,
    split_heads,
)
from helpers.interop import from_torch

REPO = Path(__file__).resolve().parents[2]

TOL = 1e-5


def key_padding(tokens: torch.Tensor) -> torch.Tensor:
    """torch's convention is the opposite of ours: True = ignore this key."""
    return tokens == 0


@pytest.fixture
def tokens():
    return torch.tensor([[4, 5, 6, 7, 8, 0, 0], [4, 5, 6, 7, 8, 9, 3]])


def test_split_and_merge_heads_are_inverse():
    x = torch.randn(2, 7, 512)
    heads = split_heads(x, 8)
    assert heads.shape == (2, 8, 7, 64)
    assert torch.equal(heads[:, 3], x[..., 3 * 64 : 4 * 64])
    assert torch.equal(merge_heads(heads), x)


def test_mha_equals_torch_multihead_attention(tokens):
    torch.manual_seed(0)
    ref = nn.MultiheadAttention(32, 4, batch_first=True).eval()
    randomize_(ref, 1)  # PyTorch's zero biases would hide a q/k/v mix-up
    ours = from_torch(ref).eval()
    assert isinstance(ours, MultiHeadAttention)
    q, kv = torch.randn(2, 5, 32), torch.randn(2, 7, 32)
    expected, _ = ref(q, kv, kv, key_padding_mask=key_padding(tokens))
    assert (ours(q, kv, kv, padding_mask(tokens, 0)) - expected).abs().max() <= TOL
    x = torch.randn(2, 7, 32)
    expected, _ = ref(x, x, x, attn_mask=~causal_mask(7))
    assert (ours(x, x, x, causal_mask(7)) - expected).abs().max() <= TOL


def test_explicit_and_fused_paths_agree_and_weights_are_kept():
    torch.manual_seed(0)
    mha = MultiHeadAttention(32, 4).eval()
    x = torch.randn(2, 6, 32)
    fused = mha(x, x, x, causal_mask(6))
    assert mha.last_weights is None
    mha.record_weights = True
    explicit = mha(x, x, x, causal_mask(6))
    assert (fused - explicit).abs().max() <= TOL
    assert mha.last_weights.shape == (2, 4, 6, 6)
    assert torch.allclose(mha.last_weights.sum(-1), torch.ones(2, 4, 6))


def test_mha_bad_sizes():
    with pytest.raises(ValueError, match="divisible"):
        MultiHeadAttention(30, 4)
    mha = MultiHeadAttention(32, 4)
    with pytest.raises(ValueError, match="d_model=32"):
        mha(torch.randn(1, 3, 16), torch.randn(1, 3, 16), torch.randn(1, 3, 16))
    x = torch.randn(2, 3, 32)
    with pytest.raises(ValueError, match="cannot broadcast"):
        mha(x, x, x, torch.ones(2, 4, dtype=torch.bool))


def test_sinusoidal_table_values():
    pe = sinusoidal_positional_encoding(50, 16)
    assert pe.shape == (50, 16)
    assert torch.allclose(pe[0, 0::2], torch.zeros(8)) and torch.allclose(
        pe[0, 1::2], torch.ones(8)
    )
    pos, i = 7, 3
    angle = torch.tensor(pos / 10000 ** (2 * i / 16))
    assert torch.isclose(pe[pos, 2 * i], angle.sin()) and torch.isclose(
        pe[pos, 2 * i + 1], angle.cos()
    )


def test_relative_position_is_a_linear_map():
    """PE(pos + k) = M_k PE(pos) with M_k made of 2×2 rotations, the same for every pos."""
    d, k = 16, 5
    pe = sinusoidal_positional_encoding(100, d).double()
    inv_freq = 1 / 10000 ** (torch.arange(0, d, 2, dtype=torch.float64) / d)
    for pos in (0, 17, 60):
        sin, cos = pe[pos, 0::2], pe[pos, 1::2]
        c, s = torch.cos(k * inv_freq), torch.sin(k * inv_freq)
        assert torch.allclose(pe[pos + k, 0::2], sin * c + cos * s)
        assert torch.allclose(pe[pos + k, 1::2], cos * c - sin * s)


def test_positional_encoding_rejects_too_long_input():
    pe = PositionalEncoding(8, max_len=10)
    with pytest.raises(ValueError, match="max_len=10"):
        pe(torch.zeros(1, 11, 8))


@pytest.mark.parametrize("norm_first", [False, True])
def test_encoder_equals_torch(norm_first, tokens):
    torch.manual_seed(0)
    layer = nn.TransformerEncoderLayer(
        32, 4, 64, dropout=0.1, batch_first=True, norm_first=norm_first
    )
    ref = nn.TransformerEncoder(layer, 2, norm=nn.LayerNorm(32), enable_nested_tensor=False).eval()
    randomize_(ref, 1)  # PyTorch's unit LayerNorms would hide a norm1/norm2 mix-up
    ours = from_torch(ref).eval()
    assert isinstance(ours, Encoder) and not ours.training
    x = torch.randn(2, 7, 32)
    expected = ref(x, src_key_padding_mask=key_padding(tokens))
    assert (ours(x, padding_mask(tokens, 0)) - expected).abs().max() <= TOL


def test_encoder_without_final_norm_equals_torch():
    torch.manual_seed(0)
    layer = nn.TransformerEncoderLayer(32, 4, 64, batch_first=True)
    ref = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False).eval()
    ours = from_torch(ref).eval()
    assert isinstance(ours.norm, nn.Identity)
    x = torch.randn(2, 7, 32)
    assert (ours(x) - ref(x)).abs().max() <= TOL


@pytest.mark.parametrize("norm_first", [False, True])
def test_decoder_equals_torch(norm_first, tokens):
    torch.manual_seed(0)
    layer = nn.TransformerDecoderLayer(32, 4, 64, batch_first=True, norm_first=norm_first)
    ref = nn.TransformerDecoder(layer, 2, norm=nn.LayerNorm(32)).eval()
    randomize_(ref, 1)
    ours = from_torch(ref).eval()
    assert isinstance(ours, Decoder)
    tgt, memory = torch.randn(2, 5, 32), torch.randn(2, 7, 32)
    tgt_tokens = torch.tensor([[4, 5, 6, 0, 0], [4, 5, 6, 7, 8]])
    expected = ref(
        tgt,
        memory,
        tgt_mask=~causal_mask(5),
        tgt_key_padding_mask=key_padding(tgt_tokens),
        memory_key_padding_mask=key_padding(tokens),
    )
    tgt_mask = causal_mask(5) & padding_mask(tgt_tokens, 0)
    got = ours(tgt, memory, padding_mask(tokens, 0), tgt_mask)
    # Rows of padded target positions are garbage in both; compare the real ones.
    real = tgt_tokens != 0
    assert (got[real] - expected[real]).abs().max() <= TOL


def test_from_torch_rejects_gelu_and_seq_first():
    gelu = nn.TransformerEncoder(
        nn.TransformerEncoderLayer(16, 2, 32, activation="gelu", batch_first=True), 1
    )
    with pytest.raises(ValueError, match="relu"):
        from_torch(gelu)
    seq_first = nn.TransformerEncoder(
        nn.TransformerEncoderLayer(16, 2, 32), 1, enable_nested_tensor=False
    )
    with pytest.raises(ValueError, match="batch_first"):
        from_torch(seq_first)


def test_from_torch_keeps_the_mode_and_the_layer_norm_eps():
    torch.manual_seed(0)
    layer = nn.TransformerEncoderLayer(16, 2, 32, batch_first=True, layer_norm_eps=0.5)
    ref = nn.TransformerEncoder(layer, 1, enable_nested_tensor=False)  # training mode
    randomize_(ref, 4)
    ours = from_torch(ref)
    assert ours.training and ours.layers[0].attn_block.norm.eps == 0.5
    x = torch.randn(2, 5, 16)
    assert (ours.eval()(x) - ref.eval()(x)).abs().max() <= TOL


@pytest.mark.parametrize("kind", ["encoder", "decoder"])
def test_fixtures_copy_torch_layers_into_modules_with_the_course_names(kind):
    """What the exercises' tests do to the learner's layer, done to the course's own."""
    torch.manual_seed(0)
    x, memory, mask = torch.randn(2, 5, 32), torch.randn(2, 7, 32), causal_mask(5)
    if kind == "encoder":
        ref = nn.TransformerEncoderLayer(32, 4, 64, batch_first=True).eval()
        ours = EncoderLayer(32, 4, 64).eval()
    else:
        ref = nn.TransformerDecoderLayer(32, 4, 64, batch_first=True, norm_first=True).eval()
        ours = DecoderLayer(32, 4, 64, norm_first=True).eval()
    randomize_(ref, 2)
    copy_from_torch(ours, ref, type(ours).__name__)
    if kind == "encoder":
        expected, got = ref(x, src_mask=~mask), ours(x, mask)
    else:
        expected, got = ref(x, memory, tgt_mask=~mask), ours(x, memory, None, mask)
    assert (got - expected).abs().max() <= TOL


def test_fixtures_copy_torch_attention_and_name_what_is_wrong():
    torch.manual_seed(0)
    ref = nn.MultiheadAttention(32, 4, batch_first=True).eval()
    randomize_(ref, 3)
    ours = MultiHeadAttention(32, 4).eval()
    copy_mha_weights(ours, ref)
    x = torch.randn(2, 5, 32)
    assert (ours(x, x, x) - ref(x, x, x)[0]).abs().max() <= TOL
    del ours.k_proj
    with pytest.raises(AssertionError, match="attribute `k_proj` = nn.Linear"):
        copy_mha_weights(ours, ref)
    renamed = EncoderLayer(32, 4, 64)
    renamed.ffn = renamed.feed_forward
    del renamed.feed_forward
    layer = nn.TransformerEncoderLayer(32, 4, 64, batch_first=True)
    with pytest.raises(AssertionError, match=r"Missing: \['feed_forward.linear1.bias'"):
        copy_from_torch(renamed, layer, "EncoderLayer")


def test_interop_works_while_the_pieces_it_builds_are_absent(tmp_path):
    """While exercise 02 is graded, helpers.multi_head (and later modules) are absent: the
    test cells still copy weights into the learner's module, and from_torch says why not."""
    pieces.filtered_copy(REPO / "helpers", tmp_path / "helpers", "02_multi_head")
    code = """
import torch
from torch import nn
from checks.fixtures import copy_mha_weights
from helpers.interop import from_torch

class Learners(nn.Module):
    def __init__(self):
        super().__init__()
        for name in ("q_proj", "k_proj", "v_proj", "out_proj"):
            setattr(self, name, nn.Linear(8, 8))

ref = nn.MultiheadAttention(8, 2, batch_first=True)
mine = Learners()
copy_mha_weights(mine, ref)
assert torch.equal(mine.v_proj.weight, ref.in_proj_weight[16:])
try:
    from_torch(ref)
except ImportError as err:
    print("absent:", err)
"""
    done = subprocess.run(
        [sys.executable, "-I", "-c", f"import sys; sys.path.insert(0, {str(tmp_path)!r})\n{code}"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert "absent: helpers.multi_head cannot be imported here" in done.stdout, done.stdout
