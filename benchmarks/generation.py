"""Greedy generation with the KV cache vs recomputing the whole prefix at every step.

An untrained model generates a fixed number of tokens (``eos_id=-1`` is never produced, so no
row stops early) with ``helpers.greedy_decode(use_cache=True)`` and ``use_cache=False``; the
two are timed alternately and must produce identical tokens. Target: speed-up >= 3x.

    .venv/bin/python benchmarks/generation.py [--quick] [--repeats N]
"""

from __future__ import annotations

import statistics
import sys

import torch

from helpers import Transformer, TransformerConfig, greedy_decode, seed_everything

from common import benchmark_parser, interleaved_times, positive_int, set_threads

TARGET_SPEEDUP = 3.0
FULL = dict(vocab=1000, d_model=512, heads=8, layers=6, d_ff=2048, batch=8, src_len=32,
            new_tokens=64, repeats=3)  # fmt: skip
QUICK = dict(vocab=50, d_model=32, heads=4, layers=1, d_ff=64, batch=2, src_len=8,
             new_tokens=8, repeats=1)  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = benchmark_parser(__doc__.splitlines()[0], "tiny model, few tokens")
    parser.add_argument("--repeats", type=positive_int, default=None, help="timed runs per method")
    args = parser.parse_args(argv)
    set_threads(args.threads)
    p = dict(QUICK if args.quick else FULL)
    if args.repeats is not None:
        p["repeats"] = args.repeats

    seed_everything(0)
    config = TransformerConfig(
        src_vocab_size=p["vocab"],
        tgt_vocab_size=p["vocab"],
        d_model=p["d_model"],
        num_heads=p["heads"],
        d_ff=p["d_ff"],
        num_encoder_layers=p["layers"],
        num_decoder_layers=p["layers"],
        max_len=256,
    )
    model = Transformer(config).eval()
    generator = torch.Generator().manual_seed(0)
    src = torch.randint(3, p["vocab"], (p["batch"], p["src_len"]), generator=generator)

    def generate(use_cache: bool) -> torch.Tensor:
        return greedy_decode(model, src, p["new_tokens"], eos_id=-1, use_cache=use_cache)

    methods = {"KV cache": True, "full recomputation": False}
    outputs = {name: generate(flag) for name, flag in methods.items()}  # warm-up and check
    cached, full = outputs.values()
    if cached.shape != (p["batch"], p["new_tokens"]):
        raise RuntimeError(f"expected {p['new_tokens']} tokens per row; got {cached.shape}")
    identical = torch.equal(cached, full)
    runs = {name: (lambda flag=flag: generate(flag)) for name, flag in methods.items()}
    times = interleaved_times(runs, p["repeats"])
    names = list(methods)

    medians = {name: statistics.median(t) for name, t in times.items()}
    speedup = medians["full recomputation"] / medians["KV cache"]
    print(
        f"greedy generation of {p['new_tokens']} tokens, batch {p['batch']}, source length "
        f"{p['src_len']}, d_model {p['d_model']}, {p['heads']} heads, {p['layers']}+"
        f"{p['layers']} layers, d_ff {p['d_ff']}, {model.num_parameters():,} parameters, "
        f"{p['repeats']} interleaved runs each, {torch.get_num_threads()} threads"
    )
    print(f"{'method':<22}{'median s':>10}{'ms/token':>10}")
    for name in names:
        print(f"{name:<22}{medians[name]:>10.3f}{medians[name] / p['new_tokens'] * 1e3:>10.1f}")
    distinct = len(torch.unique(cached))
    print(f"identical tokens: {'yes' if identical else 'NO'} ({distinct} distinct token ids)")
    print(f"speed-up full / cached: {speedup:.2f}x (target >= {TARGET_SPEEDUP}x)")
    print(f"target met: {'yes' if speedup >= TARGET_SPEEDUP and identical else 'NO'}")
    if not identical:
        print("the KV cache changed the generated tokens: that is a bug", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
