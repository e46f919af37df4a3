"""One training step of helpers.Transformer vs the same-sized torch.nn.Transformer.

Both models get the same batch (padding and causal masks included), the same label-smoothed
loss and Adam; a step is forward + backward + optimizer step. The two are timed alternately,
step by step (A B, B A, A B, ...), so that a noisy shared machine slows both alike; the table
reports the median time per step. Target: ours / torch <= 1.0.

    .venv/bin/python benchmarks/train_step.py [--quick] [--rounds N]
"""

from __future__ import annotations

import statistics
import sys
from collections.abc import Callable

import torch
from torch import Tensor, nn

from helpers import (
    Transformer,
    TransformerConfig,
    make_optimizer,
    seed_everything,
    sequence_loss,
    sinusoidal_positional_encoding,
)
from helpers.data import make_batch

from common import benchmark_parser, interleaved_times, positive_int, set_threads

TARGET_RATIO = 1.0
FULL = dict(vocab=1000, d_model=256, heads=4, layers=3, d_ff=1024, batch=32, length=32,
            dropout=0.1, rounds=40, warmup=3)  # fmt: skip
QUICK = dict(vocab=50, d_model=32, heads=4, layers=1, d_ff=64, batch=4, length=8,
             dropout=0.1, rounds=3, warmup=1)  # fmt: skip


class TorchSeq2Seq(nn.Module):
    """nn.Embedding + sinusoidal positions + nn.Transformer (batch_first) + nn.Linear."""

    def __init__(self, vocab: int, d_model: int, heads: int, layers: int, d_ff: int, dropout):
        super().__init__()
        self.src_embed = nn.Embedding(vocab, d_model)
        self.tgt_embed = nn.Embedding(vocab, d_model)
        self.register_buffer("pe", sinusoidal_positional_encoding(512, d_model), persistent=False)
        self.dropout = nn.Dropout(dropout)
        self.transformer = nn.Transformer(
            d_model, heads, layers, layers, d_ff, dropout, batch_first=True
        )
        self.generator = nn.Linear(d_model, vocab)
        self.scale = d_model**0.5

    def embed(self, embedding: nn.Embedding, tokens: Tensor) -> Tensor:
        return self.dropout(embedding(tokens) * self.scale + self.pe[: tokens.size(1)])

    def forward(self, src: Tensor, tgt: Tensor, pad_id: int = 0) -> Tensor:
        src_pad, tgt_pad = src == pad_id, tgt == pad_id  # torch's convention: True = masked
        causal = nn.Transformer.generate_square_subsequent_mask(tgt.size(1), dtype=torch.bool)
        states = self.transformer(
            self.embed(self.src_embed, src),
            self.embed(self.tgt_embed, tgt),
            tgt_mask=causal,
            src_key_padding_mask=src_pad,
            tgt_key_padding_mask=tgt_pad,
            memory_key_padding_mask=src_pad,
            tgt_is_causal=True,
        )
        return self.generator(states)


def random_batch(vocab: int, batch: int, length: int, generator: torch.Generator):
    """Source and target rows of random lengths in [3/4 length, length], padded to ``length``."""
    lengths = torch.randint(max(1, 3 * length // 4), length + 1, (2, batch), generator=generator)
    srcs = [torch.randint(3, vocab, (int(n) - 1,), generator=generator).tolist() + [2]
            for n in lengths[0]]  # fmt: skip
    tgts = [torch.randint(3, vocab, (int(n) - 1,), generator=generator).tolist() + [2]
            for n in lengths[1]]  # fmt: skip
    return make_batch(srcs, tgts)


def make_step(model: nn.Module, forward: Callable[[], Tensor], targets: Tensor):
    optimizer = make_optimizer(model, lr=1e-4)

    def step() -> float:
        model.train()
        loss = sequence_loss(forward(), targets)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        return loss.item()

    return step


def main(argv: list[str] | None = None) -> int:
    parser = benchmark_parser(__doc__.splitlines()[0], "tiny sizes, a few rounds")
    parser.add_argument("--rounds", type=positive_int, default=None, help="timed steps per model")
    args = parser.parse_args(argv)
    set_threads(args.threads)
    p = dict(QUICK if args.quick else FULL)
    if args.rounds is not None:
        p["rounds"] = args.rounds

    seed_everything(0)
    batch = random_batch(p["vocab"], p["batch"], p["length"], torch.Generator().manual_seed(0))
    config = TransformerConfig(
        src_vocab_size=p["vocab"],
        tgt_vocab_size=p["vocab"],
        d_model=p["d_model"],
        num_heads=p["heads"],
        d_ff=p["d_ff"],
        num_encoder_layers=p["layers"],
        num_decoder_layers=p["layers"],
        dropout=p["dropout"],
        max_len=512,
        tie_embeddings=False,
    )
    ours = Transformer(config)
    theirs = TorchSeq2Seq(
        p["vocab"], p["d_model"], p["heads"], p["layers"], p["d_ff"], p["dropout"]
    )
    # nn.Transformer ends each stack with a LayerNorm (even post-norm); ours does not.
    n_ours, n_theirs = ours.num_parameters(), sum(q.numel() for q in theirs.parameters())
    if n_theirs - n_ours != 4 * p["d_model"]:
        raise RuntimeError(f"sizes differ beyond the final LayerNorms: {n_ours} vs {n_theirs}")

    def ours_forward() -> Tensor:
        return ours(batch.src, batch.tgt_in, *ours.make_masks(batch.src, batch.tgt_in))

    steps = {
        "helpers.Transformer": make_step(ours, ours_forward, batch.tgt_out),
        "torch nn.Transformer": make_step(
            theirs, lambda: theirs(batch.src, batch.tgt_in), batch.tgt_out
        ),
    }
    names = list(steps)
    for _ in range(p["warmup"]):
        for name in names:
            steps[name]()
    times = interleaved_times(steps, p["rounds"])

    medians = {name: statistics.median(t) for name, t in times.items()}
    ratio = medians[names[0]] / medians[names[1]]
    print(
        f"train step (forward + backward + Adam), d_model {p['d_model']}, {p['heads']} heads, "
        f"{p['layers']}+{p['layers']} layers, d_ff {p['d_ff']}, batch {p['batch']}, "
        f"length {p['length']}, dropout {p['dropout']}, {n_ours:,} vs {n_theirs:,} parameters "
        f"(torch adds 2 final LayerNorms), {p['rounds']} interleaved steps each, "
        f"{torch.get_num_threads()} threads"
    )
    print(f"{'model':<24}{'median ms':>10}{'min ms':>9}{'max ms':>9}")
    for name in names:
        t = times[name]
        print(f"{name:<24}{medians[name] * 1e3:>10.1f}{min(t) * 1e3:>9.1f}{max(t) * 1e3:>9.1f}")
    print(f"ratio ours / torch: {ratio:.3f} (target <= {TARGET_RATIO})")
    print(f"target met: {'yes' if ratio <= TARGET_RATIO else 'NO'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
