"""Exercise 05_decoder: typical mistakes (they must lose points) and correct alternatives
(they must keep full marks). The format is in ``tests/grading_cases/__init__.py``."""

MISTAKES = [
    (
        "cross-attention over a detached memory (forward values unchanged)",
        "x = self.cross_attn_block(x, lambda y: self.cross_attn(y, memory, memory, src_mask))",
        "x = self.cross_attn_block(\n"
        "            x, lambda y: self.cross_attn(y, memory.detach(), memory.detach(), src_mask)\n"
        "        )",
    ),
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
    # make_decoder_masks
    (
        "source mask with a fixed pad id 0 instead of pad_id",
        "src_mask = (src != pad_id)[:, None, None, :]",
        "src_mask = (src != 0)[:, None, None, :]",
    ),
    (
        "padding and causality combined with | instead of &",
        "tgt_mask = (tgt != pad_id)[:, None, None, :] & causal",
        "tgt_mask = (tgt != pad_id)[:, None, None, :] | causal",
    ),
    (
        "causal mask sized by the source length",
        "t_len = tgt.size(1)",
        "t_len = src.size(1)",
    ),
    (
        "masks built as float 0/1 matrices and multiplied",
        [
            (
                "causal = torch.ones(t_len, t_len, dtype=torch.bool).tril()",
                "causal = torch.tril(torch.ones(t_len, t_len))",
            ),
            (
                "tgt_mask = (tgt != pad_id)[:, None, None, :] & causal",
                "tgt_mask = (tgt != pad_id)[:, None, None, :] * causal",
            ),
        ],
    ),
    (
        "src_mask without its query axis (batch, 1, src_len)",
        "src_mask = (src != pad_id)[:, None, None, :]",
        "src_mask = (src != pad_id)[:, None, :]",
    ),
    # DecoderLayer
    (
        "cross-attention queries from the memory, keys and values from the decoder",
        "self.cross_attn(y, memory, memory, src_mask)",
        "self.cross_attn(memory, y, y, src_mask)",
    ),
    (
        "feed-forward block before the cross-attention",
        "        x = self.cross_attn_block(x, lambda y: self.cross_attn(y, memory, memory, "
        "src_mask))\n        return self.ff_block(x, self.feed_forward)",
        "        x = self.ff_block(x, self.feed_forward)\n        return self.cross_attn_block("
        "x, lambda y: self.cross_attn(y, memory, memory, src_mask))",
    ),
    (
        "the layer builds its own causal mask and drops tgt_mask (target padding lost)",
        "self.self_attn(y, y, y, tgt_mask)",
        "self.self_attn(y, y, y, torch.ones(y.size(1), y.size(1), dtype=torch.bool).tril())",
    ),
    (
        "pre-norm cross-attention takes its queries from the un-normalised x",
        "lambda y: self.cross_attn(y, memory, memory, src_mask)",
        "lambda y: self.cross_attn(x, memory, memory, src_mask)",
    ),
    (
        "padded memory rows zeroed in place (the caller's memory changes)",
        "x = self.self_attn_block(",
        "if src_mask is not None:\n"
        "            memory.masked_fill_(~src_mask[:, 0, 0, :, None], 0.0)\n"
        "        x = self.self_attn_block(",
    ),
    (
        "no dropout in the cross-attention",
        "self.cross_attn = MultiHeadAttention(d_model, num_heads, dropout)",
        "self.cross_attn = MultiHeadAttention(d_model, num_heads)",
    ),
    (
        "no dropout in the feed-forward network",
        "self.feed_forward = FeedForward(d_model, d_ff, dropout)",
        "self.feed_forward = FeedForward(d_model, d_ff)",
    ),
    (
        "no residual dropout in the feed-forward block's AddNorm",
        "self.ff_block = AddNorm(d_model, dropout, norm_first)",
        "self.ff_block = AddNorm(d_model, norm_first=norm_first)",
    ),
    (
        "AddNorm arguments swapped in the self-attention block",
        "self.self_attn_block = AddNorm(d_model, dropout, norm_first)",
        "self.self_attn_block = AddNorm(d_model, norm_first, dropout)",
    ),
    # Decoder
    (
        "dropout not passed on to the decoder layers",
        "DecoderLayer(d_model, num_heads, d_ff, dropout, norm_first) for _ in range(num_layers)",
        "DecoderLayer(d_model, num_heads, d_ff, norm_first=norm_first) for _ in range(num_layers)",
    ),
    (
        "norm_first not passed on to the decoder layers",
        "DecoderLayer(d_model, num_heads, d_ff, dropout, norm_first) for _ in range(num_layers)",
        "DecoderLayer(d_model, num_heads, d_ff, dropout) for _ in range(num_layers)",
    ),
    (
        "one decoder layer repeated instead of separate layers",
        "DecoderLayer(d_model, num_heads, d_ff, dropout, norm_first) for _ in range(num_layers)",
        "[DecoderLayer(d_model, num_heads, d_ff, dropout, norm_first)] * num_layers",
    ),
    (
        "final LayerNorm also in the post-norm stack",
        "self.norm = nn.LayerNorm(d_model) if norm_first else nn.Identity()",
        "self.norm = nn.LayerNorm(d_model)",
    ),
    (
        "final LayerNorm applied after every layer",
        [
            (
                "x = layer(x, memory, src_mask, tgt_mask)",
                "x = self.norm(layer(x, memory, src_mask, tgt_mask))",
            ),
            ("return self.norm(x)", "return x"),
        ],
    ),
    (
        "layers not chained (only the last layer's output is returned)",
        [
            (
                "x = layer(x, memory, src_mask, tgt_mask)",
                "out = layer(x, memory, src_mask, tgt_mask)",
            ),
            ("return self.norm(x)", "return self.norm(out)"),
        ],
    ),
]

MASKS_WRITTEN_DIFFERENTLY = '''def make_decoder_masks(src, tgt, pad_id=0):
    """Masks from position indices and logical_and."""
    src_mask = src.ne(pad_id).unsqueeze(1).unsqueeze(2)
    pos = torch.arange(tgt.size(1), device=tgt.device)
    causal = torch.where(pos[None, :] <= pos[:, None], True, False)
    keys = tgt.ne(pad_id).view(tgt.size(0), 1, 1, tgt.size(1))
    tgt_mask = torch.logical_and(keys, causal).expand(-1, 1, -1, -1)
    return src_mask, tgt_mask
'''

LAYER_WRITTEN_DIFFERENTLY = '''class DecoderLayer(nn.Module):
    """Parts made in loops; named sublayer functions; keyword arguments."""

    def __init__(self, d_model, num_heads, d_ff, dropout=0.0, norm_first=False):
        super().__init__()
        for name in ("self_attn", "cross_attn"):
            setattr(self, name, MultiHeadAttention(d_model, num_heads, dropout=dropout))
        self.feed_forward = FeedForward(d_model=d_model, d_ff=d_ff, dropout=dropout)
        for name in ("self_attn_block", "cross_attn_block", "ff_block"):
            setattr(self, name, AddNorm(d_model, dropout=dropout, norm_first=norm_first))

    def forward(self, x, memory, src_mask=None, tgt_mask=None):
        """x (batch, tgt_len, d_model), memory (batch, src_len, d_model) -> like x."""

        def masked_self_attention(h):
            return self.self_attn(query=h, key=h, value=h, mask=tgt_mask)

        def attention_over_memory(h):
            return self.cross_attn(query=h, key=memory, value=memory, mask=src_mask)

        h = self.self_attn_block(x, masked_self_attention)
        h = self.cross_attn_block(h, attention_over_memory)
        return self.ff_block(h, lambda h: self.feed_forward(h))
'''

DECODER_WRITTEN_DIFFERENTLY = '''import functools


class Decoder(nn.Module):
    """Layers appended in a loop; the stack folded with functools.reduce."""

    def __init__(self, d_model, num_heads, d_ff, num_layers, dropout=0.0, norm_first=False):
        super().__init__()
        self.layers = nn.ModuleList()
        for _ in range(num_layers):
            self.layers.append(
                DecoderLayer(d_model, num_heads, d_ff, dropout=dropout, norm_first=norm_first)
            )
        self.norm = nn.LayerNorm(d_model) if norm_first else nn.Identity()

    def forward(self, x, memory, src_mask=None, tgt_mask=None):
        """x (batch, tgt_len, d_model), memory (batch, src_len, d_model) -> like x."""
        out = functools.reduce(
            lambda h, layer: layer(h, memory, src_mask=src_mask, tgt_mask=tgt_mask),
            self.layers,
            x,
        )
        return self.norm(out)
'''

# Mistakes that only the contract sweep catches (autograder/contracts.py): one per clause.
SWEPT = [
    (
        "backward: the decoder stack detaches the memory (the encoder would never learn)",
        "        for layer in self.layers:\n            x = layer(x, memory, src_mask, tgt_mask)",
        "        memory = memory.detach()\n"
        "        for layer in self.layers:\n            x = layer(x, memory, src_mask, tgt_mask)",
    ),
    (
        "sizes: the causal part cut from a mask built once for 512 positions",
        [
            (
                "    causal = torch.ones(t_len, t_len, dtype=torch.bool).tril()",
                "    causal = _CAUSAL[:t_len, :t_len]",
            ),
            (
                "    return src_mask, tgt_mask",
                "    return src_mask, tgt_mask\n\n\n"
                "_CAUSAL = torch.ones(512, 512, dtype=torch.bool).tril()",
            ),
        ],
    ),
]

ALTERNATIVES = [
    (
        "masks from positions, torch.where and logical_and",
        {"make_decoder_masks": MASKS_WRITTEN_DIFFERENTLY},
    ),
    (
        "decoder layer with keyword arguments and named sublayers",
        {"decoder_layer": LAYER_WRITTEN_DIFFERENTLY},
    ),
    ("decoder stack folded with functools.reduce", {"decoder": DECODER_WRITTEN_DIFFERENTLY}),
    (
        "all three written differently together",
        {
            "make_decoder_masks": MASKS_WRITTEN_DIFFERENTLY,
            "decoder_layer": LAYER_WRITTEN_DIFFERENTLY,
            "decoder": DECODER_WRITTEN_DIFFERENTLY,
        },
    ),
]
