"""Typical-mistake submissions, as text mutations of the solution notebooks.

``MISTAKES[assignment]`` lists ``(name, old, new)``: ``old`` must occur exactly once in
``solutions/<assignment>/<name>.ipynb`` (in the cell *sources*, as the notebook's JSON
decodes them, inside a ``### BEGIN SOLUTION`` region) and is replaced by ``new``.
``tests/test_nbgrader.py`` autogrades each mutated notebook with the real nbgrader and
asserts that it scores less than full marks (and that the mutation applied). Each
assignment needs at least three entries; add yours under its key.
"""

MISTAKES: dict[str, list[tuple[str, str, str]]] = {
    "01_attention": [
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
    ],
    "02_multi_head": [
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
    ],
    "03_positional_encoding": [
        (
            "sin and cos swapped",
            "pe[:, 0::2] = torch.sin(angles)\n    pe[:, 1::2] = torch.cos(angles)",
            "pe[:, 0::2] = torch.cos(angles)\n    pe[:, 1::2] = torch.sin(angles)",
        ),
        (
            "frequency exponent uses the pair number i instead of 2i",
            "column = torch.arange(0, d_model, 2, dtype=torch.float32)",
            "column = torch.arange(0, d_model // 2, dtype=torch.float32)",
        ),
        (
            "embedding not scaled by sqrt(d_model)",
            "return self.token(tokens) * math.sqrt(self.d_model) + self.pe[:seq_len]",
            "return self.token(tokens) + self.pe[:seq_len]",
        ),
        (
            "positional table trained as a parameter",
            'self.register_buffer("pe", positional_encoding(max_len, d_model))',
            "self.pe = nn.Parameter(positional_encoding(max_len, d_model))",
        ),
        (
            "rotation block with the sign on the wrong side",
            "torch.tensor([[c, -s], [s, c]])",
            "torch.tensor([[c, s], [-s, c]])",
        ),
    ],
    "04_encoder": [
        (
            "missing residual in post-norm",
            "return self.norm(x + self.dropout(sublayer(x)))",
            "return self.norm(self.dropout(sublayer(x)))",
        ),
        (
            "no ReLU in the feed-forward network",
            "return self.linear2(self.dropout(F.relu(self.linear1(x))))",
            "return self.linear2(self.dropout(self.linear1(x)))",
        ),
        (
            "pre-norm also normalises the residual path",
            "return x + self.dropout(sublayer(self.norm(x)))",
            "return self.norm(x) + self.dropout(sublayer(self.norm(x)))",
        ),
        (
            "one layer repeated instead of separate layers",
            "EncoderLayer(d_model, num_heads, d_ff, dropout, norm_first) "
            "for _ in range(num_layers)",
            "[EncoderLayer(d_model, num_heads, d_ff, dropout, norm_first)] * num_layers",
        ),
        (
            "padding mask not passed to self-attention",
            "x = self.attn_block(x, lambda y: self.self_attn(y, y, y, mask))",
            "x = self.attn_block(x, lambda y: self.self_attn(y, y, y))",
        ),
        (
            "pre-norm stack without its final LayerNorm",
            "self.norm = nn.LayerNorm(d_model) if norm_first else nn.Identity()",
            "self.norm = nn.Identity()",
        ),
    ],
    "05_decoder": [
        (
            "causal mask off by one (sees the next token)",
            "causal = torch.ones(t_len, t_len, dtype=torch.bool).tril()",
            "causal = torch.ones(t_len, t_len, dtype=torch.bool).tril(diagonal=1)",
        ),
        (
            "target padding masks queries instead of keys",
            "tgt_mask = (tgt != pad_id)[:, None, None, :] & causal",
            "tgt_mask = (tgt != pad_id)[:, None, :, None] & causal",
        ),
        (
            "cross-attention over the decoder instead of the memory",
            "self.cross_attn(y, memory, memory, src_mask)",
            "self.cross_attn(y, y, y, None)",
        ),
        (
            "no causal mask in the masked self-attention",
            "self.self_attn(y, y, y, tgt_mask)",
            "self.self_attn(y, y, y)",
        ),
        (
            "source padding mask not used in cross-attention",
            "self.cross_attn(y, memory, memory, src_mask)",
            "self.cross_attn(y, memory, memory)",
        ),
    ],
    "06_train_and_generate": [
        (
            "teacher forcing without shifting the target",
            "tgt_in = torch.cat([bos, tgt[:, :-1]], dim=1)",
            "tgt_in = tgt",
        ),
        (
            "no label smoothing",
            "label_smoothing=label_smoothing,",
            "label_smoothing=0.0,",
        ),
        (
            "padding counted in the loss",
            "ignore_index=pad_id,\n        label_smoothing",
            "label_smoothing",
        ),
        (
            "greedy decoding does not feed its tokens back",
            "logits = model.decode(ys, memory, src_mask, tgt_mask)",
            "logits = model.decode(ys[:, :1], memory, src_mask, tgt_mask[:1, :1])",
        ),
        (
            "no positional encoding on the source",
            "return self.encoder(self.positional(self.src_embed(src)), src_mask)",
            "return self.encoder(self.src_embed(src), src_mask)",
        ),
        (
            "finished rows not padded after EOS",
            "next_token = next_token.masked_fill(finished, pad_id)",
            "next_token = next_token  # finished rows keep generating",
        ),
    ],
}
