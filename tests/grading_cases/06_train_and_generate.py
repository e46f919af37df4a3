"""Exercise 06_train_and_generate: typical mistakes (they must lose points) and correct alternatives
(they must keep full marks). The format is in ``tests/grading_cases/__init__.py``."""

MISTAKES = [
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
    # -- the model ---------------------------------------------------------------------
    (
        "no positional encoding on the target",
        "states = self.decoder(self.positional(self.tgt_embed(tgt)), memory, src_mask, tgt_mask)",
        "states = self.decoder(self.tgt_embed(tgt), memory, src_mask, tgt_mask)",
    ),
    (
        "decode returns probabilities (softmax) instead of logits",
        "return self.generator(states)",
        "return self.generator(states).softmax(dim=-1)",
    ),
    (
        "decode returns log-probabilities (log_softmax) instead of logits",
        "return self.generator(states)",
        "return torch.log_softmax(self.generator(states), dim=-1)",
    ),
    (
        "the encoder does not get src_mask",
        "return self.encoder(self.positional(self.src_embed(src)), src_mask)",
        "return self.encoder(self.positional(self.src_embed(src)))",
    ),
    (
        "the cross-attention does not get src_mask",
        "states = self.decoder(self.positional(self.tgt_embed(tgt)), memory, src_mask, tgt_mask)",
        "states = self.decoder(self.positional(self.tgt_embed(tgt)), memory, None, tgt_mask)",
    ),
    (
        "the dropout argument is not passed on (Encoder and Decoder keep their 0.1)",
        [
            (
                "self.encoder = Encoder(d_model, num_heads, d_ff, num_layers, dropout)",
                "self.encoder = Encoder(d_model, num_heads, d_ff, num_layers)",
            ),
            (
                "self.decoder = Decoder(d_model, num_heads, d_ff, num_layers, dropout)",
                "self.decoder = Decoder(d_model, num_heads, d_ff, num_layers)",
            ),
        ],
    ),
    (
        "the model has no dropout at all (the dropout argument is ignored)",
        [
            (
                "self.positional = PositionalEncoding(d_model, max_len, dropout)",
                "self.positional = PositionalEncoding(d_model, max_len, 0.0)",
            ),
            (
                "self.encoder = Encoder(d_model, num_heads, d_ff, num_layers, dropout)",
                "self.encoder = Encoder(d_model, num_heads, d_ff, num_layers, 0.0)",
            ),
            (
                "self.decoder = Decoder(d_model, num_heads, d_ff, num_layers, dropout)",
                "self.decoder = Decoder(d_model, num_heads, d_ff, num_layers, 0.0)",
            ),
        ],
    ),
    # -- the training step -------------------------------------------------------------
    (
        "label smoothing spread over V - 1 classes",
        "    loss = F.cross_entropy(\n"
        "        logits.reshape(-1, logits.size(-1)),\n"
        "        tgt.reshape(-1),\n"
        "        ignore_index=pad_id,\n"
        "        label_smoothing=label_smoothing,\n"
        "    )\n",
        "    log_p = logits.log_softmax(dim=-1)\n"
        "    nll = -log_p.gather(-1, tgt[..., None]).squeeze(-1)\n"
        "    others = -log_p.sum(dim=-1) - nll\n"
        "    V = logits.size(-1)\n"
        "    per_token = (1 - label_smoothing) * nll + label_smoothing / (V - 1) * others\n"
        "    real = tgt != pad_id\n"
        "    loss = per_token[real].mean()\n",
    ),
    (
        "loss averaged over all positions, padding included",
        "    loss = F.cross_entropy(\n"
        "        logits.reshape(-1, logits.size(-1)),\n"
        "        tgt.reshape(-1),\n"
        "        ignore_index=pad_id,\n"
        "        label_smoothing=label_smoothing,\n"
        "    )\n",
        "    per_token = F.cross_entropy(\n"
        "        logits.transpose(1, 2), tgt, reduction='none', label_smoothing=label_smoothing\n"
        "    )\n"
        "    loss = (per_token * (tgt != pad_id)).mean()\n",
    ),
    (
        "loss summed instead of averaged",
        "        label_smoothing=label_smoothing,\n    )",
        "        label_smoothing=label_smoothing,\n        reduction='sum',\n    )",
    ),
    (
        "gradients never zeroed",
        "    optimizer.zero_grad()\n",
        "",
    ),
    (
        "gradients zeroed after the step, so old gradients count",
        "    optimizer.zero_grad()\n    loss.backward()\n    optimizer.step()\n",
        "    loss.backward()\n    optimizer.step()\n    optimizer.zero_grad()\n",
    ),
    (
        "train_step does not switch the model to training mode",
        "    model.train()\n    bos",
        "    bos",
    ),
    (
        "train_step returns the loss tensor, not a float",
        "    optimizer.step()\n    return loss.item()",
        "    optimizer.step()\n    return loss",
    ),
    (
        "the shift is written into tgt in place",
        "    bos = torch.full_like(tgt[:, :1], bos_id)\n"
        "    tgt_in = torch.cat([bos, tgt[:, :-1]], dim=1)",
        "    labels = tgt.clone()\n"
        "    tgt_in = tgt\n"
        "    tgt_in[:, 1:] = labels[:, :-1]\n"
        "    tgt_in[:, 0] = bos_id\n"
        "    tgt = labels",
    ),
    (
        "BOS and PAD ids hard-coded as 1 and 0",
        [
            ("torch.full_like(tgt[:, :1], bos_id)", "torch.full_like(tgt[:, :1], 1)"),
            ("        ignore_index=pad_id,\n", "        ignore_index=0,\n"),
        ],
    ),
    # -- greedy decoding ---------------------------------------------------------------
    (
        "greedy decoding without src_mask in decode",
        "logits = model.decode(ys, memory, src_mask, tgt_mask)",
        "logits = model.decode(ys, memory, None, tgt_mask)",
    ),
    (
        "greedy decoding in training mode (no model.eval())",
        "    was_training = model.training\n    model.eval()\n",
        "    was_training = model.training\n",
    ),
    (
        "greedy decoding leaves the model in eval mode",
        "    model.train(was_training)\n",
        "",
    ),
    (
        "greedy decoding always puts the model back in training mode",
        "    model.train(was_training)\n    return ys[:, 1:]",
        "    model.train()\n    return ys[:, 1:]",
    ),
    (
        "greedy decoding records gradients (no torch.no_grad())",
        "    with torch.no_grad():\n",
        "    if True:\n",
    ),
    (
        "greedy decoding turns gradients off for good",
        "    with torch.no_grad():\n",
        "    torch.set_grad_enabled(False)\n    if True:\n",
    ),
    (
        "greedy decoding generates max_len - 1 tokens",
        "for _ in range(max_len):",
        "for _ in range(max_len - 1):",
    ),
    (
        "greedy decoding squeezes the batch axis",
        "return ys[:, 1:]",
        "return ys[:, 1:].squeeze()",
    ),
]

MODEL_OTHER_NAMES = '''class Seq2SeqTransformer(nn.Module):
    """Encoder-decoder Transformer; other attribute names, one positional encoding per side."""

    def __init__(
        self, vocab_size, d_model=64, num_heads=4, d_ff=128, num_layers=2, dropout=0.0, max_len=64
    ):
        super().__init__()
        self.embed = nn.ModuleDict(
            {"src": TokenEmbedding(vocab_size, d_model), "tgt": TokenEmbedding(vocab_size, d_model)}
        )
        self.pos_src = PositionalEncoding(d_model, max_len, dropout)
        self.pos_tgt = PositionalEncoding(d_model, max_len, dropout)
        self.enc = Encoder(d_model, num_heads, d_ff, num_layers, dropout=dropout)
        self.dec = Decoder(d_model, num_heads, d_ff, num_layers, dropout=dropout)
        self.out = nn.Linear(d_model, vocab_size)

    def encode(self, src, src_mask=None):
        """src (batch, src_len) -> memory (batch, src_len, d_model)."""
        return self.enc(self.pos_src(self.embed["src"](src)), mask=src_mask)

    def decode(self, tgt, memory, src_mask=None, tgt_mask=None):
        """tgt (batch, tgt_len), memory -> logits (batch, tgt_len, V)."""
        y = self.pos_tgt(self.embed["tgt"](tgt))
        h = self.dec(y, memory, src_mask=src_mask, tgt_mask=tgt_mask)
        return torch.einsum("btd,vd->btv", h, self.out.weight) + self.out.bias

    def forward(self, src, tgt, src_mask=None, tgt_mask=None):
        """src, tgt ids -> logits (batch, tgt_len, V)."""
        memory = self.encode(src, src_mask)
        return self.decode(tgt, memory, src_mask=src_mask, tgt_mask=tgt_mask)
'''

TRAIN_STEP_BY_HAND = '''\
def train_step(model, optimizer, src, tgt, pad_id=0, bos_id=1, label_smoothing=0.1):
    """One teacher-forced update; the label-smoothed loss written out by hand."""
    model.train()
    optimizer.zero_grad(set_to_none=True)
    tgt_in = tgt.roll(1, dims=1)  # a new tensor: tgt stays as it was
    tgt_in[:, 0] = bos_id
    n = tgt.size(1)
    src_mask = (src != pad_id).unsqueeze(1).unsqueeze(2)
    tgt_mask = (tgt_in != pad_id)[:, None, None, :] & torch.tril(torch.ones(n, n)).bool()
    log_p = F.log_softmax(model(src, tgt_in, src_mask, tgt_mask), dim=-1)
    vocab = log_p.size(-1)
    wanted = F.one_hot(tgt, vocab).to(log_p.dtype)
    target = (1 - label_smoothing) * wanted + label_smoothing / vocab
    per_label = -(target * log_p).sum(dim=-1)
    real = tgt != pad_id
    loss = torch.where(real, per_label, torch.zeros_like(per_label)).sum() / real.sum()
    loss.backward()
    optimizer.step()
    return float(loss)
'''

GREEDY_BUFFER = '''def greedy_decode(model, src, max_len, bos_id=1, eos_id=2, pad_id=0):
    """Greedy decoding into a preallocated buffer, under inference_mode."""
    was_training = model.training
    model.train(False)
    try:
        with torch.inference_mode():
            batch = src.size(0)
            src_mask = (src != pad_id).unsqueeze(1).unsqueeze(2)
            memory = model.encode(src, src_mask)
            out = torch.full((batch, max_len + 1), pad_id, dtype=torch.long)
            out[:, 0] = bos_id
            done = torch.zeros(batch, dtype=torch.bool)
            steps = 0
            while steps < max_len and not bool(done.all()):
                n = steps + 1
                causal = torch.tril(torch.ones(n, n)).bool()
                scores = model.decode(out[:, :n], memory, src_mask, causal)
                best = scores[:, n - 1, :].argmax(-1)
                token = torch.where(done, torch.full_like(best, pad_id), best)
                out[:, n] = token
                done = done | (token == eos_id)
                steps += 1
            return out[:, 1 : steps + 1].clone()
    finally:
        model.train(was_training)
'''

# Mistakes that only the contract sweep catches (autograder/contracts.py).
SWEPT = [
    (
        "sizes: the positional encoding made for 512 positions whatever max_len says",
        "        self.positional = PositionalEncoding(d_model, max_len, dropout)",
        "        self.positional = PositionalEncoding(d_model, 512, dropout)",
    ),
    (
        "dtypes: zero steps of greedy decoding return a float tensor",
        "    was_training = model.training\n",
        "    if max_len == 0:\n"
        "        return torch.zeros(src.size(0), 0)\n"
        "    was_training = model.training\n",
    ),
]

ALTERNATIVES = [
    (
        "model with other attribute names, a positional encoding per side, einsum output",
        {"model": MODEL_OTHER_NAMES},
    ),
    (
        "train_step with the label-smoothed loss written by hand",
        {"train_step": TRAIN_STEP_BY_HAND},
    ),
    (
        "greedy_decode into a preallocated buffer under inference_mode",
        {"greedy_decode": GREEDY_BUFFER},
    ),
]
