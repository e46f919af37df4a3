"""scaled_dot_product_attention and masks: the article's hand calculation, masks, errors."""

import math

import pytest
import torch
import torch.nn.functional as F

from helpers import causal_mask, padding_mask, scaled_dot_product_attention, target_mask

# The article's three words, W_q = W_k = W_v = I, d_k = 3.
CAT_LIES_MAT = torch.tensor([[0.5, 1.0, 0.2], [1.0, 0.5, 0.3], [0.3, 1.0, 0.8]])


def test_hand_calculation_for_cat():
    x = CAT_LIES_MAT
    out, weights = scaled_dot_product_attention(x, x, x)
    assert torch.allclose(weights[0], torch.tensor([0.3463, 0.3033, 0.3504]), atol=5e-5)
    assert torch.allclose(out[0], torch.tensor([0.5816, 0.8484, 0.4406]), atol=5e-5)


def test_raw_scores_and_exponentials_of_the_article():
    x = CAT_LIES_MAT
    scores = x[0] @ x.T
    assert torch.allclose(scores, torch.tensor([1.29, 1.06, 1.31]), atol=1e-6)
    # The article rounds these to 2.101, 1.850, 2.128; the exact values are:
    assert torch.allclose(
        (scores / math.sqrt(3)).exp(), torch.tensor([2.106, 1.844, 2.130]), atol=5e-4
    )


def test_weights_sum_to_one_and_match_softmax():
    torch.manual_seed(0)
    q, k, v = torch.randn(2, 4, 5, 8), torch.randn(2, 4, 7, 8), torch.randn(2, 4, 7, 3)
    out, weights = scaled_dot_product_attention(q, k, v)
    assert out.shape == (2, 4, 5, 3) and weights.shape == (2, 4, 5, 7)
    assert torch.allclose(weights.sum(-1), torch.ones(2, 4, 5))
    expected = F.scaled_dot_product_attention(q, k, v)
    assert torch.allclose(out, expected, atol=1e-6)


def test_causal_mask_is_lower_triangular():
    m = causal_mask(4)
    assert m.dtype == torch.bool
    assert m.tolist() == [
        [True, False, False, False],
        [True, True, False, False],
        [True, True, True, False],
        [True, True, True, True],
    ]


def test_padding_mask_marks_real_tokens():
    tokens = torch.tensor([[5, 6, 0, 0], [7, 8, 9, 0]])
    m = padding_mask(tokens, pad_id=0)
    assert m.shape == (2, 1, 1, 4)
    assert m[:, 0, 0].tolist() == [[True, True, False, False], [True, True, True, False]]
    combined = target_mask(tokens, pad_id=0)
    assert combined.shape == (2, 1, 4, 4)
    assert combined[0, 0, 3].tolist() == [True, True, False, False]
    assert combined[1, 0, 1].tolist() == [True, True, False, False]


def test_masked_keys_get_zero_weight_and_match_torch():
    torch.manual_seed(1)
    q, k, v = torch.randn(2, 2, 4, 8), torch.randn(2, 2, 4, 8), torch.randn(2, 2, 4, 8)
    mask = causal_mask(4) & padding_mask(torch.tensor([[1, 1, 1, 0], [1, 1, 1, 1]]), 0)
    out, weights = scaled_dot_product_attention(q, k, v, mask)
    assert (weights.masked_select(~mask.expand_as(weights)) == 0).all()
    assert torch.allclose(out, F.scaled_dot_product_attention(q, k, v, attn_mask=mask), atol=1e-6)


def test_fully_masked_row_gives_zeros_not_nan():
    q = k = v = torch.randn(1, 3, 4)
    mask = torch.tensor([[True, True, True], [False, False, False], [True, False, True]])
    out, weights = scaled_dot_product_attention(q, k, v, mask)
    assert not torch.isnan(out).any()
    assert (weights[0, 1] == 0).all() and (out[0, 1] == 0).all()


def test_works_in_float16():
    q = k = v = torch.randn(1, 4, 8).half()
    out, weights = scaled_dot_product_attention(q, k, v, causal_mask(4))
    assert not torch.isnan(out).any()
    assert weights[0, 0, 1:].float().abs().max() == 0


def test_bad_masks_raise_clear_errors():
    q = torch.randn(2, 5, 8)
    with pytest.raises(TypeError, match="boolean"):
        scaled_dot_product_attention(q, q, q, torch.ones(5, 5))
    with pytest.raises(ValueError, match="cannot broadcast"):
        scaled_dot_product_attention(q, q, q, torch.ones(4, 4, dtype=torch.bool))
    with pytest.raises(ValueError, match="d_k"):
        scaled_dot_product_attention(q, torch.randn(2, 5, 7), q)


def test_check_mask_broadcasts_exactly_as_torch_does():
    """``check_mask`` tests broadcasting by hand (``torch.broadcast_shapes`` imports SymPy on
    its first call); it accepts exactly the masks that broadcast to the scores' shape."""
    from itertools import product

    from helpers.attention import check_mask

    scores = (2, 3, 4, 5)
    shapes = [s for n in range(5) for s in product([1, 2, 3, 4, 5], repeat=n)]
    shapes += [(1, 1, 1, 1, 1), (1, 2, 3, 4, 5), (3, 2, 3, 4, 5)]  # more axes than the scores
    for shape in shapes:
        try:
            fits = torch.broadcast_shapes(shape, scores) == torch.Size(scores)
        except RuntimeError:
            fits = False
        mask = torch.ones(shape, dtype=torch.bool)
        if fits:
            check_mask(mask, scores)
        else:
            with pytest.raises(ValueError, match="cannot broadcast"):
                check_mask(mask, scores)
    assert len(shapes) == 784
