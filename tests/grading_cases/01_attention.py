"""Exercise 01_attention: typical mistakes (they must lose points) and correct alternatives
(they must keep full marks). The format is in ``tests/grading_cases/__init__.py``."""

MISTAKES = [
    (
        "softmax over the wrong axis",
        "return e / e.sum(axis=axis, keepdims=True)",
        "return e / e.sum(axis=0, keepdims=True)",
    ),
    (
        "softmax without subtracting the maximum (overflows)",
        "shifted = x - x.max(axis=axis, keepdims=True)",
        "shifted = x",
    ),
    (
        "no 1/sqrt(d_k) in the NumPy attention",
        "scores = Q @ K.T / math.sqrt(d_k)",
        "scores = Q @ K.T",
    ),
    (
        "no 1/sqrt(d_k) in the PyTorch attention",
        "scores = q @ k.transpose(-2, -1) / math.sqrt(d_k)",
        "scores = q @ k.transpose(-2, -1)",
    ),
    (
        "mask filled with 0 instead of -inf",
        'scores = scores.masked_fill(~mask, float("-inf"))',
        "scores = scores.masked_fill(~mask, 0.0)",
    ),
    (
        "causal mask off by one (no diagonal)",
        "return torch.ones(size, size, dtype=torch.bool).tril()",
        "return torch.ones(size, size, dtype=torch.bool).tril(diagonal=-1)",
    ),
    # softmax
    (
        "softmax subtracts the maximum from the caller's array in place (x -= ...)",
        "shifted = x - x.max(axis=axis, keepdims=True)\n    e = np.exp(shifted)",
        "x -= x.max(axis=axis, keepdims=True)\n    e = np.exp(x)",
    ),
    (
        "softmax shifted by one maximum of the whole array (rows far below it underflow)",
        "shifted = x - x.max(axis=axis, keepdims=True)",
        "shifted = x - x.max()",
    ),
    (
        "softmax ignores `axis` (always the last axis)",
        "shifted = x - x.max(axis=axis, keepdims=True)\n    e = np.exp(shifted)\n"
        "    return e / e.sum(axis=axis, keepdims=True)",
        "shifted = x - x.max(axis=-1, keepdims=True)\n    e = np.exp(shifted)\n"
        "    return e / e.sum(axis=-1, keepdims=True)",
    ),
    (
        "softmax converts its input to float64",
        "    x = np.asarray(x)\n",
        "    x = np.asarray(x, dtype=float)\n",
    ),
    # attention in NumPy
    (
        "NumPy attention divides by d_k instead of sqrt(d_k)",
        "scores = Q @ K.T / math.sqrt(d_k)",
        "scores = Q @ K.T / d_k",
    ),
    (
        "NumPy attention takes d_k from the number of keys (K.shape[0])",
        "d_k = Q.shape[-1]\n    scores",
        "d_k = K.shape[0]\n    scores",
    ),
    (
        "NumPy attention takes the softmax over the queries (axis 0)",
        "weights = softmax(scores, axis=-1)",
        "weights = softmax(scores, axis=0)",
    ),
    (
        "NumPy attention scales Q in place (Q /= sqrt(d_k))",
        "scores = Q @ K.T / math.sqrt(d_k)",
        "Q /= math.sqrt(d_k)\n    scores = Q @ K.T",
    ),
    (
        "NumPy attention divides by np.sqrt(d_k), a float64 number (float32 becomes float64)",
        "scores = Q @ K.T / math.sqrt(d_k)",
        "scores = Q @ K.T / np.sqrt(d_k)",
    ),
    # masks
    (
        "causal mask is the upper triangle (triu: queries see the future)",
        "return torch.ones(size, size, dtype=torch.bool).tril()",
        "return torch.ones(size, size, dtype=torch.bool).triu()",
    ),
    (
        "causal mask of floats instead of booleans",
        "return torch.ones(size, size, dtype=torch.bool).tril()",
        "return torch.ones(size, size).tril()",
    ),
    (
        "padding mask built from the row lengths (assumes padding only at the end)",
        "return (tokens != pad_id)[:, None, None, :]",
        "lengths = (tokens != pad_id).sum(dim=-1, keepdim=True)\n"
        "    return (torch.arange(tokens.size(-1)) < lengths)[:, None, None, :]",
    ),
    (
        "padding mask inverted (True at the padding)",
        "return (tokens != pad_id)[:, None, None, :]",
        "return (tokens == pad_id)[:, None, None, :]",
    ),
    # attention in PyTorch
    (
        "PyTorch attention divides by d_k instead of sqrt(d_k)",
        "scores = q @ k.transpose(-2, -1) / math.sqrt(d_k)",
        "scores = q @ k.transpose(-2, -1) / d_k",
    ),
    (
        "PyTorch attention takes the softmax over the queries (dim=-2)",
        "weights = torch.softmax(scores, dim=-1)",
        "weights = torch.softmax(scores, dim=-2)",
    ),
    (
        "keys transposed with k.T (reverses every axis of a 4-D tensor)",
        "scores = q @ k.transpose(-2, -1) / math.sqrt(d_k)",
        "scores = q @ k.T / math.sqrt(d_k)",
    ),
    (
        "PyTorch attention scales q in place (q /= sqrt(d_k))",
        "scores = q @ k.transpose(-2, -1) / math.sqrt(d_k)",
        "q /= math.sqrt(d_k)\n    scores = q @ k.transpose(-2, -1)",
    ),
    (
        "mask inverted (the -inf goes where the mask is True)",
        'scores = scores.masked_fill(~mask, float("-inf"))',
        'scores = scores.masked_fill(mask, float("-inf"))',
    ),
    (
        "mask applied to the weights after the softmax",
        '    if mask is not None:\n        scores = scores.masked_fill(~mask, float("-inf"))\n'
        "    weights = torch.softmax(scores, dim=-1)\n",
        "    weights = torch.softmax(scores, dim=-1)\n    if mask is not None:\n"
        "        weights = weights.masked_fill(~mask, 0.0)\n",
    ),
    (
        "masked scores set by boolean indexing (needs a mask of the scores' full shape)",
        'scores = scores.masked_fill(~mask, float("-inf"))',
        'scores[~mask] = float("-inf")',
    ),
    (
        "softmax of the PyTorch attention computed in float32 for every input",
        "weights = torch.softmax(scores, dim=-1)",
        "weights = torch.softmax(scores, dim=-1, dtype=torch.float32)",
    ),
]

_SOFTMAX_EINSUM = """def softmax(x, axis=-1):
    x = np.asarray(x)
    z = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return z / np.sum(z, axis=axis, keepdims=True)
"""

_SOFTMAX_COPY = """def softmax(x, axis=-1):
    y = np.array(x, copy=True)  # a copy: the in-place steps below leave x alone
    y -= np.amax(y, axis=axis, keepdims=True)
    np.exp(y, out=y)
    y /= y.sum(axis=axis, keepdims=True)
    return y
"""

# Mistakes that only the contract sweep catches (autograder/contracts.py): one per clause.
SWEPT = [
    (
        "backward: the masked weights zeroed again in place after the softmax (backward fails)",
        "    weights = torch.softmax(scores, dim=-1)\n",
        "    weights = torch.softmax(scores, dim=-1)\n"
        "    if mask is not None:\n"
        "        weights.masked_fill_(~mask, 0.0)\n",
    ),
    (
        "dtypes: softmax computes in float32 whatever the input (float64 comes back float32)",
        "    x = np.asarray(x)\n",
        "    x = np.asarray(x, dtype=np.float32)\n",
    ),
    (
        "sizes: the causal mask cut from one built once for 512 positions",
        "    return torch.ones(size, size, dtype=torch.bool).tril()",
        "    return _TABLE[:size, :size]\n\n\n"
        "_TABLE = torch.ones(512, 512, dtype=torch.bool).tril()",
    ),
    (
        "call order: one cached causal mask per size, returned again (and changed by its caller)",
        "    return torch.ones(size, size, dtype=torch.bool).tril()",
        "    if size not in _CACHE:\n"
        "        _CACHE[size] = torch.ones(size, size, dtype=torch.bool).tril()\n"
        "    return _CACHE[size]\n\n\n_CACHE = {}",
    ),
]

ALTERNATIVES = [
    (
        "einsum, np.max/np.sum, torch.where with finfo.min and a hand-written softmax",
        {
            "softmax": _SOFTMAX_EINSUM,
            "attention_numpy": """def attention_numpy(Q, K, V):
    weights = softmax(np.einsum("id,jd->ij", Q, K) / Q.shape[-1] ** 0.5)
    return np.einsum("ij,jd->id", weights, V), weights
""",
            "causal_mask": """def causal_mask(size):
    if size <= 0:
        raise ValueError("size must be at least 1")
    return torch.tril(torch.ones(size, size)).bool()
""",
            "padding_mask": """def padding_mask(tokens, pad_id):
    return (tokens != pad_id).unsqueeze(1).unsqueeze(2)
""",
            "sdpa": """def scaled_dot_product_attention(q, k, v, mask=None):
    scores = torch.einsum("...qd,...kd->...qk", q, k) / q.shape[-1] ** 0.5
    if mask is not None:
        scores = torch.where(mask, scores, torch.finfo(scores.dtype).min)
    e = torch.exp(scores - scores.amax(dim=-1, keepdim=True))
    weights = e / e.sum(dim=-1, keepdim=True)
    return torch.matmul(weights, v), weights
""",
        },
    ),
    (
        "in-place steps on a copy, arange comparison, view, masked_fill(mask == 0, -1e9)",
        {
            "softmax": _SOFTMAX_COPY,
            "attention_numpy": """def attention_numpy(Q, K, V):
    scores = np.matmul(Q, np.transpose(K)) * (1.0 / math.sqrt(K.shape[1]))
    weights = softmax(scores)
    return np.matmul(weights, V), weights
""",
            "causal_mask": """def causal_mask(size):
    if not size >= 1:
        raise ValueError(f"bad size {size}")
    idx = torch.arange(size)
    return idx[:, None] >= idx[None, :]
""",
            "padding_mask": """def padding_mask(tokens, pad_id):
    batch, seq = tokens.shape
    return tokens.ne(pad_id).view(batch, 1, 1, seq)
""",
            "sdpa": """def scaled_dot_product_attention(q, k, v, mask=None):
    scale = 1.0 / math.sqrt(k.size(-1))
    scores = torch.matmul(q, k.transpose(-1, -2)) * scale
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
    weights = scores.softmax(dim=-1)
    out = torch.matmul(weights, v)
    return out, weights
""",
        },
    ),
]
