"""Exercise 03_positional_encoding: typical mistakes (they must lose points) and correct
alternatives (they must keep full marks). The format is in ``tests/grading_cases/__init__.py``."""

MISTAKES = [
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
    (
        "table allocated in float64",
        "pe = torch.zeros(max_len, d_model)",
        "pe = torch.zeros(max_len, d_model, dtype=torch.float64)",
    ),
    (
        "table built with NumPy and returned as float64",
        "    position = torch.arange(max_len, dtype=torch.float32)[:, None]  # (max_len, 1)\n"
        "    column = torch.arange(0, d_model, 2, dtype=torch.float32)  # 2i = 0, 2, 4, ...\n"
        "    angles = position / 10000.0 ** (column / d_model)  # (max_len, d_model / 2)\n"
        "    pe = torch.zeros(max_len, d_model)\n"
        "    pe[:, 0::2] = torch.sin(angles)\n"
        "    pe[:, 1::2] = torch.cos(angles)\n"
        "    return pe\n",
        "    import numpy as np\n\n"
        "    angles = np.arange(max_len)[:, None] / 10000 ** (np.arange(0, d_model, 2) / d_model)\n"
        "    pe = np.zeros((max_len, d_model))\n"
        "    pe[:, 0::2] = np.sin(angles)\n"
        "    pe[:, 1::2] = np.cos(angles)\n"
        "    return torch.from_numpy(pe)\n",
    ),
    (
        "sines in the first half of the columns, cosines in the second (torch.cat)",
        "    pe = torch.zeros(max_len, d_model)\n"
        "    pe[:, 0::2] = torch.sin(angles)\n"
        "    pe[:, 1::2] = torch.cos(angles)\n"
        "    return pe\n",
        "    return torch.cat([torch.sin(angles), torch.cos(angles)], dim=-1)\n",
    ),
    (
        "positions multiplied by 10000^(2i/d) instead of divided",
        "angles = position / 10000.0 ** (column / d_model)",
        "angles = position * 10000.0 ** (column / d_model)",
    ),
    (
        "positions counted from 1",
        "position = torch.arange(max_len, dtype=torch.float32)[:, None]",
        "position = torch.arange(1, max_len + 1, dtype=torch.float32)[:, None]",
    ),
    (
        "odd d_model checked with assert instead of ValueError",
        'raise ValueError(f"d_model must be even',
        'assert False, (f"d_model must be even',
    ),
    (
        "embedding multiplied by d_model instead of sqrt(d_model)",
        "return self.token(tokens) * math.sqrt(self.d_model) + self.pe[:seq_len]",
        "return self.token(tokens) * self.d_model + self.pe[:seq_len]",
    ),
    (
        "scale applied to the sum token + PE",
        "return self.token(tokens) * math.sqrt(self.d_model) + self.pe[:seq_len]",
        "return (self.token(tokens) + self.pe[:seq_len]) * math.sqrt(self.d_model)",
    ),
    (
        "positions concatenated to the token vectors instead of added",
        "return self.token(tokens) * math.sqrt(self.d_model) + self.pe[:seq_len]",
        "positions = self.pe[:seq_len].expand(tokens.size(0), -1, -1)\n"
        "        scaled = self.token(tokens) * math.sqrt(self.d_model)\n"
        "        return torch.cat([scaled, positions], dim=-1)",
    ),
    (
        "sequence length read from the batch axis",
        "seq_len = tokens.size(1)",
        "seq_len = tokens.size(0)",
    ),
    (
        "table not sliced to the sequence length",
        "return self.token(tokens) * math.sqrt(self.d_model) + self.pe[:seq_len]",
        "return self.token(tokens) * math.sqrt(self.d_model) + self.pe",
    ),
    (
        "seq == max_len rejected (off by one)",
        "if seq_len > self.max_len:",
        "if seq_len >= self.max_len:",
    ),
    (
        "table kept as a plain attribute",
        'self.register_buffer("pe", positional_encoding(max_len, d_model))',
        "self.pe = positional_encoding(max_len, d_model)",
    ),
    (
        "table of a fixed 512 rows whatever max_len",
        'self.register_buffer("pe", positional_encoding(max_len, d_model))',
        'self.register_buffer("pe", positional_encoding(512, d_model))',
    ),
    (
        "shift-matrix angle uses the pair number i",
        "angle = k / 10000.0 ** (2 * i / d_model)",
        "angle = k / 10000.0 ** (i / d_model)",
    ),
    (
        "shift matrix built in float64",
        "m = torch.zeros(d_model, d_model)",
        "m = torch.zeros(d_model, d_model, dtype=torch.float64)",
    ),
    (
        "shift-matrix blocks placed at rows i instead of 2i",
        "m[2 * i : 2 * i + 2, 2 * i : 2 * i + 2] = ",
        "m[i : i + 2, i : i + 2] = ",
    ),
]

# Mistakes that only the contract sweep catches (autograder/contracts.py): one per clause.
SWEPT = [
    (
        "backward: the embedding built with padding_idx=0 (token 0's row never learns)",
        "        self.token = nn.Embedding(vocab_size, d_model)",
        "        self.token = nn.Embedding(vocab_size, d_model, padding_idx=0)",
    ),
    (
        "sizes: positional_encoding builds a table of 512 positions and cuts it",
        [
            (
                "    position = torch.arange(max_len, dtype=torch.float32)[:, None]",
                "    wanted, max_len = max_len, 512\n"
                "    position = torch.arange(max_len, dtype=torch.float32)[:, None]",
            ),
            (
                "    pe[:, 1::2] = torch.cos(angles)\n    return pe",
                "    pe[:, 1::2] = torch.cos(angles)\n    return pe[:wanted]",
            ),
        ],
    ),
    (
        "call order: the table cached at the first call of positional_encoding, and returned",
        [
            (
                "    pe = torch.zeros(max_len, d_model)\n",
                "    if (max_len, d_model) in _TABLES:\n"
                "        return _TABLES[(max_len, d_model)]\n"
                "    pe = _TABLES[(max_len, d_model)] = torch.zeros(max_len, d_model)\n",
            ),
            (
                "    pe[:, 1::2] = torch.cos(angles)\n    return pe",
                "    pe[:, 1::2] = torch.cos(angles)\n    return pe\n\n\n_TABLES = {}",
            ),
        ],
    ),
]

ALTERNATIVES = [
    (
        "exp/log frequencies, stack-and-reshape interleaving, (1, max_len, d) buffer, block_diag",
        {
            "positional_encoding": '''def positional_encoding(max_len, d_model):
    """Sinusoidal table (max_len, d_model), float32: sin in even columns, cos in odd ones."""
    if d_model % 2:
        raise ValueError("d_model must be even")
    inv_freq = torch.exp(-math.log(10000.0) * torch.arange(0, d_model, 2).float() / d_model)
    angles = torch.outer(torch.arange(max_len).float(), inv_freq)
    return torch.stack((angles.sin(), angles.cos()), dim=-1).flatten(1)
''',
            "transformer_embedding": '''class TransformerEmbedding(nn.Module):
    """Token ids (batch, seq) -> token(ids) * sqrt(d_model) + PE[:seq], shape (batch, seq, d)."""

    def __init__(self, vocab_size, d_model, max_len=512):
        super().__init__()
        self.token = nn.Embedding(vocab_size, d_model)
        self.scale = d_model**0.5
        self.register_buffer("pe", positional_encoding(max_len, d_model).unsqueeze(0))

    def forward(self, tokens):
        """tokens: int64 ids (batch, seq) -> float32 (batch, seq, d_model)."""
        n = tokens.shape[-1]
        if n > self.pe.shape[1]:
            raise ValueError(f"{n} tokens, but the table has only {self.pe.shape[1]} positions")
        return torch.add(self.pe[:, :n], self.token(tokens), alpha=self.scale)
''',
            "relative_shift_matrix": '''def relative_shift_matrix(k, d_model):
    """float32 (d_model, d_model) block-diagonal M(k): PE[pos + k] = PE[pos] @ M(k)."""
    w = 10000.0 ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    c, s = torch.cos(w * k), torch.sin(w * k)
    blocks = [torch.stack([torch.stack([ci, -si]), torch.stack([si, ci])]) for ci, si in zip(c, s)]
    return torch.block_diag(*blocks).float()
''',
        },
    ),
    (
        "NumPy table converted to float32, narrow(), rotation by index assignment",
        {
            "positional_encoding": '''def positional_encoding(max_len, d_model):
    """Sinusoidal table (max_len, d_model), float32: sin in even columns, cos in odd ones."""
    import numpy as np

    if d_model % 2 == 1:
        raise ValueError(f"odd d_model={d_model}: sines and cosines need column pairs")
    pos = np.arange(max_len)[:, np.newaxis]
    i = np.arange(d_model // 2)[np.newaxis, :]
    angle = pos / np.power(10000.0, 2 * i / d_model)
    table = np.empty((max_len, d_model))
    table[:, ::2], table[:, 1::2] = np.sin(angle), np.cos(angle)
    return torch.from_numpy(table).to(torch.float32)
''',
            "transformer_embedding": '''class TransformerEmbedding(nn.Module):
    """Token ids (batch, seq) -> token(ids) * sqrt(d_model) + PE[:seq], shape (batch, seq, d)."""

    def __init__(self, vocab_size, d_model, max_len=512):
        super().__init__()
        self.token = nn.Embedding(vocab_size, d_model)
        self.register_buffer("pe", positional_encoding(max_len, d_model), persistent=True)

    def forward(self, tokens):
        """tokens: int64 ids (batch, seq) -> float32 (batch, seq, d_model)."""
        batch, seq = tokens.shape
        max_len, d_model = self.pe.shape
        if seq > max_len:
            raise ValueError("sequence longer than max_len")
        scaled = self.token(tokens) * math.sqrt(d_model)
        return scaled + self.pe.narrow(0, 0, seq).unsqueeze(0)
''',
            "relative_shift_matrix": '''def relative_shift_matrix(k, d_model):
    """float32 (d_model, d_model) block-diagonal M(k): PE[pos + k] = PE[pos] @ M(k)."""
    m = torch.zeros(d_model, d_model)
    even = torch.arange(0, d_model, 2)
    theta = k * torch.pow(10000.0, -even.double() / d_model)
    m[even, even] = torch.cos(theta).float()
    m[even + 1, even + 1] = torch.cos(theta).float()
    m[even, even + 1] = -torch.sin(theta).float()
    m[even + 1, even] = torch.sin(theta).float()
    return m
''',
        },
    ),
]
