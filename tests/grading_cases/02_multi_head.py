"""Exercise 02_multi_head: typical mistakes (they must lose points) and correct alternatives
(they must keep full marks). The format is in ``tests/grading_cases/__init__.py``."""

MISTAKES = [
    (
        "the output projection used through .data: it never learns (forward values unchanged)",
        "return self.out_proj(merge_heads(out))",
        "return torch.nn.functional.linear(\n"
        "            merge_heads(out), self.out_proj.weight.data, self.out_proj.bias.data\n"
        "        )",
    ),
    (
        "heads split along the wrong axis",
        "return x.reshape(batch, seq, num_heads, d_model // num_heads).transpose(1, 2)",
        "return x.reshape(batch, num_heads, seq, d_model // num_heads)",
    ),
    (
        "heads merged without transposing back",
        "return x.transpose(1, 2).reshape(batch, seq, heads * d_head)",
        "return x.reshape(batch, seq, heads * d_head)",
    ),
    (
        "no output projection",
        "return self.out_proj(merge_heads(out))",
        "return merge_heads(out)",
    ),
    (
        "mask not passed on",
        "out, _ = scaled_dot_product_attention(q, k, v, mask)",
        "out, _ = scaled_dot_product_attention(q, k, v)",
    ),
    # split and merge
    (
        "heads take interleaved columns (reshape to (batch, seq, d_head, heads))",
        "return x.reshape(batch, seq, num_heads, d_model // num_heads).transpose(1, 2)",
        "return x.reshape(batch, seq, d_model // num_heads, num_heads).permute(0, 3, 1, 2)",
    ),
    (
        "split_heads checks divisibility with assert instead of raising ValueError",
        "    if d_model % num_heads != 0:\n"
        '        raise ValueError(f"d_model ({d_model}) must be divisible by num_heads '
        '({num_heads})")\n    return x.reshape',
        '    assert d_model % num_heads == 0, "d_model must be divisible by num_heads"\n'
        "    return x.reshape",
    ),
    (
        "merge_heads uses view after transpose (not contiguous)",
        "return x.transpose(1, 2).reshape(batch, seq, heads * d_head)",
        "return x.transpose(1, 2).view(batch, seq, heads * d_head)",
    ),
    (
        "merge_heads puts d_head before the heads",
        "return x.transpose(1, 2).reshape(batch, seq, heads * d_head)",
        "return x.permute(0, 2, 3, 1).reshape(batch, seq, heads * d_head)",
    ),
    # the module's layers
    (
        "projections without bias",
        "self.q_proj = nn.Linear(d_model, d_model)\n"
        "        self.k_proj = nn.Linear(d_model, d_model)\n"
        "        self.v_proj = nn.Linear(d_model, d_model)\n",
        "self.q_proj = nn.Linear(d_model, d_model, bias=False)\n"
        "        self.k_proj = nn.Linear(d_model, d_model, bias=False)\n"
        "        self.v_proj = nn.Linear(d_model, d_model, bias=False)\n",
    ),
    (
        "MultiHeadAttention checks divisibility with assert instead of raising ValueError",
        "        if d_model % num_heads != 0:\n"
        '            raise ValueError(f"d_model ({d_model}) must be divisible by num_heads '
        '({num_heads})")\n        self.d_model',
        "        assert d_model % num_heads == 0\n        self.d_model",
    ),
    (
        "queries, keys and values share one projection",
        "self.k_proj = nn.Linear(d_model, d_model)\n"
        "        self.v_proj = nn.Linear(d_model, d_model)\n",
        "self.k_proj = self.q_proj\n        self.v_proj = self.q_proj\n",
    ),
    # forward
    (
        "values projected from key instead of value",
        "v = split_heads(self.v_proj(value), self.num_heads)",
        "v = split_heads(self.v_proj(key), self.num_heads)",
    ),
    (
        "keys reshaped with the query's length",
        "k = split_heads(self.k_proj(key), self.num_heads)",
        "k = self.k_proj(key).reshape(query.size(0), query.size(1), self.num_heads, -1)"
        ".transpose(1, 2)",
    ),
    (
        "attention not split into heads (one head of d_model)",
        "q = split_heads(self.q_proj(query), self.num_heads)\n"
        "        k = split_heads(self.k_proj(key), self.num_heads)\n"
        "        v = split_heads(self.v_proj(value), self.num_heads)\n"
        "        out, _ = scaled_dot_product_attention(q, k, v, mask)\n"
        "        return self.out_proj(merge_heads(out))",
        "q, k, v = self.q_proj(query), self.k_proj(key), self.v_proj(value)\n"
        "        out, _ = scaled_dot_product_attention(q, k, v, mask)\n"
        "        return self.out_proj(out)",
    ),
    (
        "queries divided by sqrt(d_head) before the attention, which divides again",
        "q = split_heads(self.q_proj(query), self.num_heads)",
        "q = split_heads(self.q_proj(query), self.num_heads) / (self.d_model // self.num_heads)"
        " ** 0.5",
    ),
    (
        "mask given an extra head axis (mask.unsqueeze(1))",
        "out, _ = scaled_dot_product_attention(q, k, v, mask)",
        "out, _ = scaled_dot_product_attention(\n"
        "            q, k, v, None if mask is None else mask.unsqueeze(1)\n        )",
    ),
    (
        "attention weights merged instead of the attention output",
        "out, _ = scaled_dot_product_attention(q, k, v, mask)",
        "_, out = scaled_dot_product_attention(q, k, v, mask)",
    ),
    (
        "dropout on the output (the module has none)",
        "return self.out_proj(merge_heads(out))",
        "return nn.functional.dropout(self.out_proj(merge_heads(out)), 0.1, self.training)",
    ),
]

# Mistakes that only the contract sweep catches (autograder/contracts.py): one per clause.
SWEPT = [
    (
        "backward: split_heads transposes its reshaped view in place (transpose_)",
        "    return x.reshape(batch, seq, num_heads, d_model // num_heads).transpose(1, 2)",
        "    out = x.reshape(batch, seq, num_heads, d_model // num_heads)\n"
        "    out.transpose_(1, 2)\n"
        "    return out",
    ),
    (
        "dtypes: split_heads computes in float32 and converts back (float64 loses precision)",
        "    return x.reshape(batch, seq, num_heads, d_model // num_heads).transpose(1, 2)",
        "    heads = x.float().reshape(batch, seq, num_heads, d_model // num_heads)\n"
        "    return heads.transpose(1, 2).to(x.dtype)",
    ),
    (
        "call order: projected keys and values reused when the next key has the same shape",
        "        k = split_heads(self.k_proj(key), self.num_heads)\n"
        "        v = split_heads(self.v_proj(value), self.num_heads)",
        "        if getattr(self, '_kv_shape', None) != key.shape:\n"
        "            k = split_heads(self.k_proj(key), self.num_heads)\n"
        "            self._kv = (k, split_heads(self.v_proj(value), self.num_heads))\n"
        "            self._kv_shape = key.shape\n"
        "        k, v = self._kv",
    ),
]

ALTERNATIVES = [
    (
        "chunk/stack and unbind/cat, other attribute names, a loop over the projections",
        {
            "split_heads": """def split_heads(x, num_heads):
    if x.size(-1) % num_heads:
        raise ValueError("num_heads must divide d_model")
    return torch.stack(x.chunk(num_heads, dim=-1), dim=1)
""",
            "merge_heads": """def merge_heads(x):
    return torch.cat(x.unbind(dim=1), dim=-1)
""",
            "multi_head_attention": """class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        if d_model % num_heads:
            raise ValueError("num_heads must divide d_model")
        self.h = num_heads
        self.q_proj, self.k_proj, self.v_proj, self.out_proj = (
            nn.Linear(d_model, d_model) for _ in range(4)
        )

    def forward(self, query, key, value, mask=None):
        q, k, v = (
            split_heads(proj(inp), self.h)
            for proj, inp in ((self.q_proj, query), (self.k_proj, key), (self.v_proj, value))
        )
        heads, _ = scaled_dot_product_attention(q, k, v, mask=mask)
        return self.out_proj(merge_heads(heads))
""",
        },
    ),
    (
        "view/permute/flatten, heads inlined in forward with .contiguous().view",
        {
            "split_heads": """def split_heads(x, num_heads):
    b, s, d = x.shape
    if d % num_heads != 0:
        raise ValueError(f"{d} is not divisible by {num_heads}")
    return x.view(b, s, num_heads, -1).permute(0, 2, 1, 3)
""",
            "merge_heads": """def merge_heads(x):
    return x.permute(0, 2, 1, 3).flatten(start_dim=2)
""",
            "multi_head_attention": """class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        if d_model % num_heads != 0:
            raise ValueError("d_model % num_heads != 0")
        self.n_heads, self.d_head = num_heads, d_model // num_heads
        self.q_proj = nn.Linear(d_model, d_model)
        self.k_proj = nn.Linear(d_model, d_model)
        self.v_proj = nn.Linear(d_model, d_model)
        self.out_proj = nn.Linear(d_model, d_model)

    def forward(self, query, key, value, mask=None):
        b, q_len, d_model = query.shape
        k_len = key.size(1)
        q = self.q_proj(query).view(b, q_len, self.n_heads, self.d_head).transpose(1, 2)
        k = self.k_proj(key).view(b, k_len, self.n_heads, self.d_head).transpose(1, 2)
        v = self.v_proj(value).view(b, k_len, self.n_heads, self.d_head).transpose(1, 2)
        out = scaled_dot_product_attention(q, k, v, mask)[0]
        out = out.transpose(1, 2).contiguous().view(b, q_len, d_model)
        return self.out_proj(out)
""",
        },
    ),
]
