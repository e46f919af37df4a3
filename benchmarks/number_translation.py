"""Train the toy translator (English number words → Chinese numerals) and ship its checkpoint.

Target: held-out exact match >= 95 % within 3 minutes of training on 2 CPU cores.

Train, validation and held-out numbers are disjoint. Training stops as soon as the
*validation* numbers (carved out of the training draw and never trained on) reach
``Settings.stop_at`` exact match, or when the time budget is spent; the held-out numbers are
decoded once, at the end, from the saved float16 checkpoint. The numbers are drawn with
``zero_digit_prob`` > 0 so that zeros (the rules of 零) are common, and 0..99 are repeated.

    .venv/bin/python benchmarks/number_translation.py          # overwrites helpers/weights/...
    .venv/bin/python benchmarks/number_translation.py --quick  # tiny run, temporary file
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import sys
import tempfile
import time
from pathlib import Path

import torch

from helpers import (
    Transformer,
    TransformerConfig,
    exact_match,
    make_optimizer,
    noam_scheduler,
    seed_everything,
    train,
)
from helpers.checkpoints import DEFAULT_CHECKPOINT, load_number_translator
from helpers.data import Pair, endless_batches, make_number_translation, pairs_to_batch

from common import benchmark_parser, set_threads

TARGET_ACCURACY = 0.95
TARGET_SECONDS = 180.0


@dataclasses.dataclass
class Settings:
    num_train: int = 40_000
    num_validation: int = 500  # taken from the end of the training numbers, not trained on
    num_heldout: int = 1_000
    data_seed: int = 0
    zero_digit_prob: float = 0.3  # uniform values seldom hold the zeros that 零 is about
    repeat_below_100: int = 10  # 0..99 occur once each in 40k numbers; repeat them (十五, 四十)
    seed: int = 0
    d_model: int = 64
    num_heads: int = 4
    d_ff: int = 256
    num_layers: int = 2
    dropout: float = 0.1
    max_len: int = 128  # positions the model can take; chapter 9 goes beyond training lengths
    batch_size: int = 64
    warmup_steps: int = 400
    lr_factor: float = 1.0
    eval_every: int = 200
    stop_at: float = 0.99
    time_budget: float = 165.0  # seconds of training (evaluation included) before giving up


QUICK = dict(num_train=600, num_validation=50, num_heldout=50, d_model=32, d_ff=64,
             num_layers=1, eval_every=20, time_budget=4.0)  # fmt: skip


def accuracy(model: Transformer, pairs: list[Pair]) -> float:
    batch = pairs_to_batch(pairs)
    return exact_match(model, batch.src, batch.tgt_out, max_len=batch.tgt_out.size(1) + 2)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = benchmark_parser(__doc__.splitlines()[0], "tiny smoke run (seconds)")
    parser.add_argument(
        "--out",
        type=Path,
        default=None,
        help=f"checkpoint path (default {DEFAULT_CHECKPOINT}; --quick writes to a temp dir)",
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the model and batches")
    parser.add_argument("--time-budget", type=float, default=None, help="seconds of training")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    settings = Settings(seed=args.seed, **(QUICK if args.quick else {}))
    if args.time_budget is not None:
        if args.time_budget <= 0:
            raise SystemExit(f"--time-budget must be positive seconds; got {args.time_budget}")
        settings.time_budget = args.time_budget
    s = settings
    set_threads(args.threads)

    data_args = dict(
        num_train=s.num_train + s.num_validation,
        num_heldout=s.num_heldout,
        seed=s.data_seed,
        zero_digit_prob=s.zero_digit_prob,
    )
    data = make_number_translation(**data_args)
    train_pairs = data.train_pairs[: s.num_train]
    train_numbers = data.train_numbers[: s.num_train]
    small = [pair for n, pair in zip(train_numbers, train_pairs, strict=True) if n < 100]
    train_pairs = train_pairs + small * s.repeat_below_100
    validation_pairs = data.train_pairs[s.num_train :]
    src_vocab, tgt_vocab = data.src_vocab, data.tgt_vocab

    seed_everything(s.seed)
    config = TransformerConfig(
        src_vocab_size=len(src_vocab),
        tgt_vocab_size=len(tgt_vocab),
        d_model=s.d_model,
        num_heads=s.num_heads,
        d_ff=s.d_ff,
        num_encoder_layers=s.num_layers,
        num_decoder_layers=s.num_layers,
        dropout=s.dropout,
        max_len=s.max_len,
        tie_embeddings=False,
    )
    model = Transformer(config)
    optimizer = make_optimizer(model)
    scheduler = noam_scheduler(optimizer, s.d_model, s.warmup_steps, s.lr_factor)

    evaluations: list[list] = []  # (step, seconds, validation accuracy)

    def validated_or_out_of_time(step: int, loss: float) -> bool:
        """Every ``eval_every`` steps: validate, and stop at ``stop_at`` or past the budget."""
        if step % s.eval_every:
            return False
        val = accuracy(model, validation_pairs)
        elapsed = time.perf_counter() - start
        evaluations.append([step, round(elapsed, 1), round(val, 4)])
        print(f"step {step:5d}  {elapsed:6.1f} s  loss {loss:.3f}  val {val:.3f}", flush=True)
        return val >= s.stop_at or elapsed >= s.time_budget

    start, cpu_start = time.perf_counter(), time.process_time()
    history = train(
        model,
        endless_batches(train_pairs, s.batch_size, s.seed),
        optimizer,
        scheduler,
        progress=False,
        should_stop=validated_or_out_of_time,
    )
    step = len(history)
    train_seconds = time.perf_counter() - start
    cpu_seconds = time.process_time() - cpu_start  # all threads; wall time is noisy when shared

    out = args.out
    if out is None:
        out = (
            Path(tempfile.mkdtemp()) / "number_translator.pt" if args.quick else DEFAULT_CHECKPOINT
        )
    checkpoint = model.checkpoint()
    checkpoint["state_dict"] = {k: v.half() for k, v in checkpoint["state_dict"].items()}
    train_src_lengths = [len(src) for src, _ in train_pairs]
    train_tgt_lengths = [len(tgt) for _, tgt in train_pairs]
    checkpoint.update(
        src_vocab=src_vocab.itos,
        tgt_vocab=tgt_vocab.itos,
        history=[round(x, 4) for x in history],
        evaluations=evaluations,
        train_seconds=round(train_seconds, 1),
        train_cpu_seconds=round(cpu_seconds, 1),
        steps=step,
        seed=s.seed,
        # make_number_translation(**data_args) rebuilds the data; the last num_validation of
        # its training pairs were held back for early stopping and never trained on.
        data_args=data_args,
        num_validation=s.num_validation,
        # Lengths in tokens, EOS included (the decoder input is BOS + target without EOS).
        train_max_src_len=max(train_src_lengths),
        train_max_tgt_len=max(train_tgt_lengths),
        train_max_number=max(train_numbers),
        settings=dataclasses.asdict(s),
        torch_version=str(torch.__version__),
    )
    out.parent.mkdir(parents=True, exist_ok=True)
    # Held-out accuracy of the float16 weights as shipped: save, reload, evaluate, save again.
    torch.save(checkpoint, out)
    reloaded, *_ = load_number_translator(out)
    heldout = accuracy(reloaded, data.heldout_pairs)
    checkpoint["heldout_accuracy"] = round(heldout, 4)
    torch.save(checkpoint, out)
    size_mb = out.stat().st_size / 1e6

    rows = [
        ("held-out exact match", f"{heldout:.4f}", f">= {TARGET_ACCURACY}",
         f"{heldout / TARGET_ACCURACY:.3f}"),
        ("training time (s)", f"{train_seconds:.1f}", f"<= {TARGET_SECONDS:.0f}",
         f"{train_seconds / TARGET_SECONDS:.3f}"),
        ("training CPU time (s)", f"{cpu_seconds:.1f}", "", ""),
        ("steps", str(step), "", ""),
        ("validation exact match", f"{evaluations[-1][2]:.4f}", f"stop at {s.stop_at}", ""),
        ("parameters", f"{model.num_parameters():,}", "", ""),
        ("checkpoint size (MB)", f"{size_mb:.2f}", "< 5", f"{size_mb / 5:.3f}"),
    ]  # fmt: skip
    print(
        f"\nnumber translation: {s.num_train} train numbers (+{len(small)} below 100 repeated "
        f"x{s.repeat_below_100}) / {len(validation_pairs)} validation / "
        f"{len(data.heldout_pairs)} held-out numbers; {torch.get_num_threads()} threads; "
        f"saved {out}"
    )
    print(f"{'measure':<24}{'value':>12}{'target':>14}{'ratio':>8}")
    for name, value, target, ratio in rows:
        print(f"{name:<24}{value:>12}{target:>14}{ratio:>8}")
    met = heldout >= TARGET_ACCURACY and train_seconds <= TARGET_SECONDS
    print(f"target met: {'yes' if met else 'NO'}")
    if not math.isfinite(history[-1]):
        print("training diverged (loss is not finite)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
