"""Wall time until the copy task is solved: 100 % exact match on 1,000 held-out sequences.

The Annotated Transformer's toy task: vocabulary 11, length 10. Here ids 0, 1, 2 are
pad/bos/eos, so the sequences use the 8 regular tokens 3..10; training and held-out
sequences are disjoint. Every ``--check-every`` steps the held-out set is decoded greedily;
the clock (training and checks together) stops at the first check that is all correct.
Target: <= 30 s on 2 cores.

    .venv/bin/python benchmarks/copy_task.py [--quick] [--seed N]
"""

from __future__ import annotations

import dataclasses
import sys
import time

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
from helpers.data import as_pairs, endless_batches, make_disjoint_copy_splits, pairs_to_batch

from common import benchmark_parser, set_threads

TARGET_SECONDS = 30.0


@dataclasses.dataclass
class Settings:
    vocab_size: int = 11
    seq_len: int = 10
    num_train: int = 20_000
    num_heldout: int = 1_000
    d_model: int = 128
    num_heads: int = 4
    d_ff: int = 256
    num_layers: int = 1  # one encoder and one decoder layer suffice to copy
    dropout: float = 0.0
    batch_size: int = 64
    warmup_steps: int = 200
    lr_factor: float = 1.0
    check_every: int = 50
    max_seconds: float = 240.0  # give up (and say so) after this long


QUICK = dict(num_train=200, num_heldout=20, d_model=16, d_ff=32, num_layers=1, check_every=5,
             max_seconds=3.0)  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = benchmark_parser(__doc__.splitlines()[0], "tiny model, gives up in seconds")
    parser.add_argument("--seed", type=int, default=0, help="seed of data, model and batches")
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="override a setting, e.g. --set num_layers=1 (see Settings)",
    )
    args = parser.parse_args(argv)
    set_threads(args.threads)
    s = Settings(**(QUICK if args.quick else {}))
    for item in args.set:
        name, _, value = item.partition("=")
        if name not in Settings.__dataclass_fields__ or not value:
            raise SystemExit(
                f"--set {item!r}: expected NAME=VALUE with NAME one of "
                f"{', '.join(Settings.__dataclass_fields__)}"
            )
        kind = type(getattr(s, name))
        try:
            setattr(s, name, kind(value))
        except ValueError:
            raise SystemExit(f"--set {item!r}: {name} takes a {kind.__name__}") from None

    (train_src, train_tgt), (test_src, test_tgt) = make_disjoint_copy_splits(
        s.num_train, s.num_heldout, s.seq_len, s.vocab_size, seed=args.seed
    )
    train_pairs = as_pairs(train_src, train_tgt)
    test = pairs_to_batch(as_pairs(test_src, test_tgt))  # sources end with EOS, as in training

    seed_everything(args.seed)
    model = Transformer(
        TransformerConfig(
            src_vocab_size=s.vocab_size,
            tgt_vocab_size=s.vocab_size,
            d_model=s.d_model,
            num_heads=s.num_heads,
            d_ff=s.d_ff,
            num_encoder_layers=s.num_layers,
            num_decoder_layers=s.num_layers,
            dropout=s.dropout,
            max_len=64,
        )
    )
    optimizer = make_optimizer(model)
    scheduler = noam_scheduler(optimizer, s.d_model, s.warmup_steps, s.lr_factor)

    accuracy = 0.0

    def solved_or_out_of_time(step: int, loss: float) -> bool:
        """Decode the held-out set every ``check_every`` steps; stop once it is all right."""
        nonlocal accuracy
        out_of_time = time.perf_counter() - start >= s.max_seconds
        if step % s.check_every == 0 or out_of_time:
            accuracy = exact_match(model, test.src, test.tgt_out)
            return accuracy == 1.0 or out_of_time
        return False

    start, cpu_start = time.perf_counter(), time.process_time()
    history = train(
        model,
        endless_batches(train_pairs, s.batch_size, args.seed),
        optimizer,
        scheduler,
        progress=False,
        should_stop=solved_or_out_of_time,
    )
    step, loss = len(history), history[-1]
    solved = accuracy == 1.0
    seconds = time.perf_counter() - start
    cpu_seconds = time.process_time() - cpu_start

    print(
        f"copy task: vocabulary {s.vocab_size} (tokens 3..{s.vocab_size - 1}), length "
        f"{s.seq_len}, {s.num_train} train / {s.num_heldout} held-out sequences (disjoint); "
        f"model d_model {s.d_model}, {s.num_heads} heads, {s.num_layers}+{s.num_layers} layers, "
        f"d_ff {s.d_ff}, {model.num_parameters():,} parameters; batch {s.batch_size}, "
        f"warm-up {s.warmup_steps}, lr factor {s.lr_factor}, check every {s.check_every} "
        f"steps; {torch.get_num_threads()} threads"
    )
    print(f"{'measure':<28}{'value':>10}{'target':>10}{'ratio':>8}")
    print(f"{'wall time to 100 % (s)':<28}{seconds:>10.1f}{'<= 30':>10}"
          f"{seconds / TARGET_SECONDS:>8.3f}")  # fmt: skip
    print(f"{'CPU time, all threads (s)':<28}{cpu_seconds:>10.1f}")
    print(f"{'steps':<28}{step:>10d}")
    print(f"{'held-out exact match':<28}{accuracy:>10.4f}{'1.0':>10}{accuracy:>8.3f}")
    print(f"{'last training loss':<28}{loss:>10.4f}")
    met = solved and seconds <= TARGET_SECONDS
    print(f"target met: {'yes' if met else 'NO'}" + ("" if solved else " (never reached 100 %)"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
