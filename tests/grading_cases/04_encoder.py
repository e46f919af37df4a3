"""Exercise 04_encoder: typical mistakes (they must lose points) and correct alternatives
(they must keep full marks). The format is in ``tests/grading_cases/__init__.py``."""

MISTAKES = [
    (
        "the feed-forward output detached from training (forward values unchanged)",
        "return self.linear2(self.dropout(F.relu(self.linear1(x))))",
        "return self.linear2(self.dropout(F.relu(self.linear1(x)))).detach()",
    ),
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
        "EncoderLayer(d_model, num_heads, d_ff, dropout, norm_first) for _ in range(num_layers)",
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
    (
        "feed-forward network without dropout",
        "return self.linear2(self.dropout(F.relu(self.linear1(x))))",
        "return self.linear2(F.relu(self.linear1(x)))",
    ),
    (
        "feed-forward dropout on the output of linear2",
        "return self.linear2(self.dropout(F.relu(self.linear1(x))))",
        "return self.dropout(self.linear2(F.relu(self.linear1(x))))",
    ),
    (
        "feed-forward dropout on the input x",
        "return self.linear2(self.dropout(F.relu(self.linear1(x))))",
        "return self.linear2(F.relu(self.linear1(self.dropout(x))))",
    ),
    (
        "feed-forward F.dropout without training flag (drops in eval mode too)",
        "return self.linear2(self.dropout(F.relu(self.linear1(x))))",
        "return self.linear2(F.dropout(F.relu(self.linear1(x)), self.dropout.p))",
    ),
    (
        "feed-forward hidden size hard-coded to 4 * d_model",
        "self.linear1 = nn.Linear(d_model, d_ff)\n        self.linear2 = nn.Linear(d_ff, d_model)",
        "self.linear1 = nn.Linear(d_model, 4 * d_model)\n"
        "        self.linear2 = nn.Linear(4 * d_model, d_model)",
    ),
    (
        "post-norm dropout on the sum x + sublayer(x)",
        "return self.norm(x + self.dropout(sublayer(x)))",
        "return self.norm(self.dropout(x + sublayer(x)))",
    ),
    (
        "post-norm dropout after the LayerNorm",
        "return self.norm(x + self.dropout(sublayer(x)))",
        "return self.dropout(self.norm(x + sublayer(x)))",
    ),
    (
        "post-norm F.dropout without training flag (drops in eval mode too)",
        "return self.norm(x + self.dropout(sublayer(x)))",
        "return self.norm(x + F.dropout(sublayer(x), self.dropout.p))",
    ),
    (
        "pre-norm dropout on the sum, residual included",
        "return x + self.dropout(sublayer(self.norm(x)))",
        "return self.dropout(x + sublayer(self.norm(x)))",
    ),
    (
        "AddNorm without dropout",
        "return x + self.dropout(sublayer(self.norm(x)))\n"
        "        return self.norm(x + self.dropout(sublayer(x)))",
        "return x + sublayer(self.norm(x))\n        return self.norm(x + sublayer(x))",
    ),
    (
        "pre-norm residual added in place into the caller's x",
        "return x + self.dropout(sublayer(self.norm(x)))",
        "x += self.dropout(sublayer(self.norm(x)))\n            return x",
    ),
    (
        "post-norm residual added in place into the caller's x",
        "return self.norm(x + self.dropout(sublayer(x)))",
        "x += self.dropout(sublayer(x))\n        return self.norm(x)",
    ),
    (
        "self-attention built without dropout",
        "self.self_attn = MultiHeadAttention(d_model, num_heads, dropout)",
        "self.self_attn = MultiHeadAttention(d_model, num_heads)",
    ),
    (
        "feed-forward network of the layer built without dropout",
        "self.feed_forward = FeedForward(d_model, d_ff, dropout)",
        "self.feed_forward = FeedForward(d_model, d_ff)",
    ),
    (
        "attention block built without dropout",
        "self.attn_block = AddNorm(d_model, dropout, norm_first)",
        "self.attn_block = AddNorm(d_model, norm_first=norm_first)",
    ),
    (
        "norm_first not passed to the feed-forward block",
        "self.ff_block = AddNorm(d_model, dropout, norm_first)",
        "self.ff_block = AddNorm(d_model, dropout)",
    ),
    (
        "feed-forward block applied to the layer's input instead of the attention output",
        "x = self.attn_block(x, lambda y: self.self_attn(y, y, y, mask))",
        "h = self.attn_block(x, lambda y: self.self_attn(y, y, y, mask))",
    ),
    (
        "padding mask inverted (torch's True = padding convention)",
        "x = self.attn_block(x, lambda y: self.self_attn(y, y, y, mask))",
        "keep = None if mask is None else ~mask\n"
        "        x = self.attn_block(x, lambda y: self.self_attn(y, y, y, keep))",
    ),
    (
        "encoder layers built without dropout",
        "EncoderLayer(d_model, num_heads, d_ff, dropout, norm_first) for _ in range(num_layers)",
        "EncoderLayer(d_model, num_heads, d_ff, norm_first=norm_first) for _ in range(num_layers)",
    ),
    (
        "mask not passed to the layers of the stack",
        "x = layer(x, mask)",
        "x = layer(x)",
    ),
    (
        "every layer of the stack applied to the stack's input",
        "x = layer(x, mask)\n        return self.norm(x)",
        "out = layer(x, mask)\n        return self.norm(out)",
    ),
]

# Mistakes that only the contract sweep catches (autograder/contracts.py): one per clause.
SWEPT = [
    (
        "backward: AddNorm adds the residual into the sublayer's output in place (y += x)",
        "        return self.norm(x + self.dropout(sublayer(x)))",
        "        y = self.dropout(sublayer(x))\n        y += x\n        return self.norm(y)",
    ),
    (
        "training: dropout applied in place to the ReLU's output (backward fails in training)",
        "        return self.linear2(self.dropout(F.relu(self.linear1(x))))",
        "        h = F.relu(self.linear1(x))\n"
        "        return self.linear2(F.dropout(h, self.dropout.p, self.training, inplace=True))",
    ),
]

ALTERNATIVES = [
    (
        "dropout before the ReLU (same distribution), branches in AddNorm, deep-copied layers",
        {
            "feed_forward": '''class FeedForward(nn.Module):
    """FFN(x) = max(0, x W1 + b1) W2 + b2, position by position: (batch, seq, d_model) -> same."""

    def __init__(self, d_model, d_ff, dropout=0.0):
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff)
        self.dropout = nn.Dropout(p=dropout)
        self.linear2 = nn.Linear(d_ff, d_model)

    def forward(self, x):
        """x float32 (batch, seq, d_model) -> same shape."""
        hidden = self.dropout(self.linear1(x)).clamp(min=0)  # ReLU(drop(z)) = drop(ReLU(z))
        return self.linear2(hidden)
''',
            "add_norm": '''class AddNorm(nn.Module):
    """Residual connection and LayerNorm around one sublayer."""

    def __init__(self, d_model, dropout=0.0, norm_first=False):
        super().__init__()
        self.pre = norm_first
        self.dropout = nn.Dropout(dropout)
        self.norm = nn.LayerNorm(d_model)

    def forward(self, x, sublayer):
        """x (batch, seq, d_model) -> same shape."""
        inner = self.norm(x) if self.pre else x
        summed = torch.add(x, self.dropout(sublayer(inner)))
        return summed if self.pre else self.norm(summed)
''',
            "encoder_layer": '''class EncoderLayer(nn.Module):
    """Self-attention, then the feed-forward network, each wrapped in AddNorm."""

    def __init__(self, d_model, num_heads, d_ff, dropout=0.0, norm_first=False):
        super().__init__()
        self.self_attn = MultiHeadAttention(d_model=d_model, num_heads=num_heads, dropout=dropout)
        self.attn_block = AddNorm(d_model, dropout=dropout, norm_first=norm_first)
        self.feed_forward = FeedForward(d_model, d_ff, dropout=dropout)
        self.ff_block = AddNorm(d_model, dropout=dropout, norm_first=norm_first)

    def _attend(self, y, mask):
        return self.self_attn(y, y, y, mask=mask)

    def forward(self, x, mask=None):
        """x (batch, src_len, d_model) -> same shape."""
        h = self.attn_block(x, lambda y: self._attend(y, mask))
        out = self.ff_block(h, lambda y: self.feed_forward(y))
        return out
''',
            "encoder": '''class Encoder(nn.Module):
    """num_layers encoder layers, then a final LayerNorm in the pre-norm variant."""

    def __init__(self, d_model, num_heads, d_ff, num_layers, dropout=0.0, norm_first=False):
        super().__init__()
        import copy

        proto = EncoderLayer(d_model, num_heads, d_ff, dropout, norm_first)
        self.layers = nn.ModuleList([copy.deepcopy(proto) for _ in range(num_layers)])
        if norm_first:
            self.norm = nn.LayerNorm(d_model)
        else:
            self.norm = nn.Identity()

    def forward(self, x, mask=None):
        """x (batch, src_len, d_model) -> memory (batch, src_len, d_model)."""
        h = x
        for i in range(len(self.layers)):
            h = self.layers[i](h, mask=mask)
        return self.norm(h)
''',
        },
    ),
    (
        "hand-made dropout masks (torch.rand_like, torch.where), functools.reduce over layers",
        {
            "feed_forward": '''class FeedForward(nn.Module):
    """FFN(x) = max(0, x W1 + b1) W2 + b2, position by position: (batch, seq, d_model) -> same."""

    def __init__(self, d_model, d_ff, dropout=0.0):
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)
        self.p = dropout

    def forward(self, x):
        """x float32 (batch, seq, d_model) -> same shape."""
        h = torch.relu(self.linear1(x))
        if self.training and self.p > 0:
            keep = torch.rand_like(h) >= self.p
            h = torch.where(keep, h / (1 - self.p), torch.zeros_like(h))
        return self.linear2(h)
''',
            "add_norm": '''class AddNorm(nn.Module):
    """Residual connection and LayerNorm around one sublayer."""

    def __init__(self, d_model, dropout=0.0, norm_first=False):
        super().__init__()
        self.norm = nn.LayerNorm(d_model)
        self.p = dropout
        self.norm_first = norm_first

    def _drop(self, s):
        if not self.training or self.p == 0:
            return s
        keep = torch.bernoulli(torch.full_like(s, 1 - self.p))
        return s * keep / (1 - self.p)

    def forward(self, x, sublayer):
        """x (batch, seq, d_model) -> same shape."""
        if self.norm_first:
            return x + self._drop(sublayer(self.norm(x)))
        return self.norm(x + self._drop(sublayer(x)))
''',
            "encoder_layer": '''class EncoderLayer(nn.Module):
    """Self-attention, then the feed-forward network, each wrapped in AddNorm."""

    def __init__(self, d_model, num_heads, d_ff, dropout=0.0, norm_first=False):
        super().__init__()
        blocks = {name: AddNorm(d_model, dropout, norm_first) for name in ("attn", "ff")}
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout)
        self.feed_forward = FeedForward(d_model, d_ff, dropout)
        self.attn_block, self.ff_block = blocks["attn"], blocks["ff"]

    def forward(self, x, mask=None):
        """x (batch, src_len, d_model) -> same shape."""

        def attend(y):
            return self.self_attn(y, y, y, mask)

        return self.ff_block(self.attn_block(x, attend), self.feed_forward)
''',
            "encoder": '''class Encoder(nn.Module):
    """num_layers encoder layers, then a final LayerNorm in the pre-norm variant."""

    def __init__(self, d_model, num_heads, d_ff, num_layers, dropout=0.0, norm_first=False):
        super().__init__()
        self.layers = nn.ModuleList()
        for _ in range(num_layers):
            self.layers.append(EncoderLayer(d_model, num_heads, d_ff, dropout, norm_first))
        self.norm = nn.LayerNorm(d_model) if norm_first else nn.Identity()

    def forward(self, x, mask=None):
        """x (batch, src_len, d_model) -> memory (batch, src_len, d_model)."""
        import functools

        return self.norm(functools.reduce(lambda h, layer: layer(h, mask), self.layers, x))
''',
        },
    ),
]
