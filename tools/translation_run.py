"""Train the course's Transformer on the Spanish–English verses for a time budget, and score it.

    nice -n 19 .venv/bin/python tools/translation_run.py --minutes 120 --threads 2 --name main

The pipeline of chapter 11, as one run: a byte-pair encoding shared by both languages, learned
from the training books only (``helpers.train_bpe``); the training pairs in batches of similar
length under a budget of tokens (``helpers.data.token_batches``); ``helpers.Transformer`` trained
with label smoothing, Adam and a warm-up then 1/√step schedule (``helpers.training``); every
``--eval-minutes`` of training, the dev books' loss and their BLEU with greedy decoding (the
curve of BLEU against minutes), and a snapshot of the weights. At the end: the last snapshots
averaged (the paper's checkpoint averaging), greedy and beam search (``helpers.translation``), and
sacrebleu's BLEU on the dev and test books with its signature, against the two baselines that
need no network, copying the source and the word-by-word dictionary of IBM Model 1, with
sacrebleu's paired bootstrap.

Minutes are training minutes measured in CPU time (the process's, all threads) divided by
``--threads``: on cores of its own that is the wall time of the training steps, and on a
machine shared with other work the budget and the curve stay those of the run itself. The
evaluations are not counted; the wall minutes are recorded beside.

Writes into ``--out`` (default ``benchmarks/out/translation/<name>/``, not kept in git):
``results.json`` (settings, machine, the curve, the final scores, the test's signatures),
``bpe.json`` (the merges), ``weights.pt`` (the averaged and the last weights, float32) and
``snapshots.pt`` (the last ``--average`` snapshots, rewritten at each evaluation).
Like ``tools/book_runs.py``, it computes with AVX2 kernels unless ``--native-kernels``, so that
the run can be made again on an AVX2 or an AVX-512 machine. The pilot runs that chose the
default sizes, with their numbers: ``tools/translation_pilot.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

from other_kernels import AVX2  # tools/, beside this script

ROOT = Path(__file__).resolve().parent.parent


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--name", default="run", help="the run's folder under benchmarks/out/")
    p.add_argument("--out", type=Path, help="where to write (default: benchmarks/out/...)")
    p.add_argument("--minutes", type=float, default=120.0, help="training minutes")
    p.add_argument("--eval-minutes", type=float, default=10.0, help="dev BLEU every ... minutes")
    p.add_argument(
        "--steps",
        type=int,
        help="end training after this many steps instead (with --eval-steps: comparison runs "
        "that stop and are measured at the same steps, whatever their speed)",
    )
    p.add_argument("--eval-steps", type=int, help="dev BLEU every ... steps instead of minutes")
    p.add_argument("--threads", type=int, default=1, help="PyTorch CPU threads")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--merges", type=int, default=8000, help="BPE merges (shared vocabulary)")
    p.add_argument(
        "--separate-vocab",
        action="store_true",
        help="a vocabulary for each language (--merges each), the target embedding tied to the "
        "output layer only, instead of one shared vocabulary and all three tied",
    )
    p.add_argument("--max-len", type=int, default=100, help="longest training pair, in pieces")
    p.add_argument("--max-tokens", type=int, default=4000, help="a batch's padded size")
    p.add_argument("--d-model", type=int, default=256)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--d-ff", type=int, default=1024)
    p.add_argument("--layers", type=int, default=3, help="encoder and decoder layers each")
    p.add_argument("--dropout", type=float, default=0.1)
    p.add_argument("--label-smoothing", type=float, default=0.1)
    p.add_argument("--peak-lr", type=float, default=1e-3, help="learning rate after warm-up")
    p.add_argument("--warmup", type=int, default=1000, help="warm-up steps")
    p.add_argument("--average", type=int, default=5, help="snapshots averaged at the end")
    p.add_argument("--beam", type=int, default=4, help="beam size of the final scores (0: none)")
    p.add_argument("--length-penalty", type=float, default=0.6)
    p.add_argument("--native-kernels", action="store_true", help="this CPU's own kernels")
    p.add_argument("--sentences", type=int, help="score only the first ... (a quick try)")
    p.add_argument(
        "--final",
        choices=("full", "short"),
        default="full",
        help="full: dev and test, last and averaged weights, greedy and beam; short: the last "
        "weights, greedy, on test (a pilot)",
    )
    p.add_argument("--stop-at", help="end training at this UTC time, HH:MM, if not done before")
    return p.parse_args(argv)


def machine() -> dict[str, object]:
    """The CPU model, whether it has AVX-512, and the load when the run started."""
    with open("/proc/cpuinfo", encoding="utf-8") as f:
        info = f.read()
    model = next(
        (ln.split(":", 1)[1].strip() for ln in info.splitlines() if "model name" in ln), ""
    )
    return {
        "cpu": model,
        "avx512": "avx512f" in info,
        "cores": os.cpu_count(),
        "load_at_start": os.getloadavg(),
        "python": platform.python_version(),
    }


def average_snapshots(snapshots: list[dict]) -> dict:  # type: ignore[type-arg]
    """The parameter-wise mean of state dicts (the paper's checkpoint averaging)."""
    return {k: sum(s[k] for s in snapshots) / len(snapshots) for k in snapshots[0]}


def past(hhmm: str | None) -> bool:
    """Whether the UTC time of day is at or after ``hhmm`` (``None``: never)."""
    return hhmm is not None and time.strftime("%H:%M", time.gmtime()) >= hhmm


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if not args.native_kernels:
        os.environ.update(AVX2)  # before torch is imported
    os.environ.setdefault("OMP_NUM_THREADS", str(args.threads))
    import torch  # after the kernel settings

    import helpers
    from helpers.data import token_batches
    from helpers.training import make_optimizer, noam_lr, noam_scheduler, sequence_loss
    from helpers.translation import (
        corpus_bleu,
        paired_bootstrap,
        train_word_dictionary,
        translate,
    )

    torch.set_num_threads(args.threads)
    out = args.out or ROOT / "benchmarks" / "out" / "translation" / args.name
    out.mkdir(parents=True, exist_ok=True)
    helpers.seed_everything(args.seed)
    train, dev, test = (helpers.load_verse_pairs(s) for s in ("train", "dev", "test"))
    dev, test = dev[: args.sentences], test[: args.sentences]

    started, host = time.time(), machine()
    if args.separate_vocab:
        bpe = helpers.train_bpe([p.spanish for p in train], args.merges)
        target_bpe = helpers.train_bpe([p.english for p in train], args.merges)
        merges = {"spanish": bpe.merges, "english": target_bpe.merges}
    else:
        bpe = target_bpe = helpers.train_bpe(
            [p.spanish for p in train] + [p.english for p in train], args.merges
        )
        merges = bpe.merges  # type: ignore[assignment]
    (out / "bpe.json").write_text(json.dumps(merges, ensure_ascii=False))
    encoded = [(bpe.encode(p.spanish), target_bpe.encode(p.english)) for p in train]
    pairs = [(s, t) for s, t in encoded if max(len(s), len(t)) <= args.max_len]
    dev_pairs = [(bpe.encode(p.spanish), target_bpe.encode(p.english)) for p in dev]
    print(
        f"{bpe}, {target_bpe}, {len(pairs)} of {len(encoded)} training pairs "
        f"({time.time() - started:.0f} s)"
    )

    config = helpers.TransformerConfig(
        src_vocab_size=len(bpe.vocab),
        tgt_vocab_size=len(target_bpe.vocab),
        tie_embeddings=not args.separate_vocab,
        d_model=args.d_model,
        num_heads=args.heads,
        d_ff=args.d_ff,
        num_encoder_layers=args.layers,
        num_decoder_layers=args.layers,
        dropout=args.dropout,
        max_len=512,
    )
    model = helpers.Transformer(config)
    if args.separate_vocab:  # the target embedding and the output layer share one matrix
        model.generator.weight = model.tgt_embed.embedding.weight
    parameters = sum(p.numel() for p in model.parameters())
    optimizer = make_optimizer(model)
    factor = args.peak_lr / noam_lr(args.warmup, args.d_model, args.warmup)
    scheduler = noam_scheduler(optimizer, args.d_model, args.warmup, factor)
    print(f"{parameters / 1e6:.2f}M parameters, {args.threads} thread(s), {args.minutes} min")

    def dev_loss() -> float:
        """Cross-entropy per dev target piece, no label smoothing (its exp is perplexity)."""
        total, pieces = 0.0, 0
        with helpers.decoding.eval_mode(model):
            for batch in token_batches(dev_pairs, args.max_tokens):
                logits = model(batch.src, batch.tgt_in, *model_masks(batch))
                n = batch.ntokens
                total += sequence_loss(logits, batch.tgt_out, label_smoothing=0.0).item() * n
                pieces += n
        return total / pieces

    def model_masks(batch: helpers.data.Seq2SeqBatch) -> tuple[torch.Tensor, torch.Tensor]:
        return helpers.padding_mask(batch.src, 0), helpers.target_mask(batch.tgt_in, 0)

    def score(split: list[helpers.VersePair], **kwargs: object) -> float:
        sentences = [p.spanish for p in split]
        hyps = translate(model, bpe, sentences, target_bpe=target_bpe, **kwargs)  # type: ignore[arg-type]
        return corpus_bleu(hyps, [p.english for p in split])[0]

    curve: list[dict[str, float]] = []
    snapshots: list[dict[str, torch.Tensor]] = []
    trained, step, epoch, seen, losses = 0.0, 0, 0, 0, []
    next_eval = args.eval_minutes * 60
    budget = args.minutes * 60

    def done() -> bool:
        if args.steps is not None:
            return step >= args.steps
        return trained >= budget or past(args.stop_at)

    def evaluation_due() -> bool:
        if args.eval_steps is not None:
            return step % args.eval_steps == 0 or done()
        return trained >= next_eval or done()

    while not done():
        for batch in token_batches(pairs, args.max_tokens, seed=args.seed * 1000 + epoch):
            tick = time.process_time()
            loss = helpers.train_step(
                model,
                optimizer,
                batch.src,
                batch.tgt_out,
                label_smoothing=args.label_smoothing,
                scheduler=scheduler,
            )
            trained += (time.process_time() - tick) / args.threads
            step += 1
            seen += batch.src.size(0)
            losses.append(loss)
            if evaluation_due():
                tick = time.time()
                point = {
                    "minutes": round(trained / 60, 2),
                    "wall_minutes": round((time.time() - started) / 60, 2),
                    "step": step,
                    "epochs": round(seen / len(pairs), 2),
                    "train_loss": round(sum(losses) / len(losses), 4),
                    "dev_loss": round(dev_loss(), 4),
                    "dev_bleu": round(score(dev), 2),
                }
                point["eval_seconds"] = round(time.time() - tick, 1)
                curve.append(point)
                losses = []
                snapshots = [*snapshots, {k: v.clone() for k, v in model.state_dict().items()}]
                snapshots = snapshots[-args.average :]
                print(json.dumps(point), flush=True)
                (out / "curve.json").write_text(json.dumps(curve, indent=1))  # so far
                torch.save(snapshots, out / "snapshots.pt")  # what a crash at the end would lose
                next_eval += args.eval_minutes * 60
            if done():
                break
        epoch += 1

    last = {k: v.clone() for k, v in model.state_dict().items()}
    averaged = average_snapshots(snapshots)
    final: dict[str, object] = {}
    seconds: dict[str, float] = {}  # CPU seconds / threads of each final translation
    hyps: dict[str, dict[str, list[str]]] = {"dev": {}, "test": {}}
    dictionary = train_word_dictionary([(p.spanish, p.english) for p in train])
    splits = (("dev", dev), ("test", test)) if args.final == "full" else (("test", test),)
    for name, split in splits:
        hyps[name]["copy"] = [p.spanish for p in split]
        hyps[name]["dictionary"] = [dictionary.translate(p.spanish) for p in split]
        runs = [("last, greedy", last, 1), (f"average of {len(snapshots)}, greedy", averaged, 1)]
        if args.final == "short":
            runs = runs[:1]
        elif args.beam > 0:
            runs.append((f"average of {len(snapshots)}, beam {args.beam}", averaged, args.beam))
        for system, weights, beam in runs:
            model.load_state_dict(weights)
            tick = time.process_time()
            hyps[name][system] = translate(
                model,
                bpe,
                [p.spanish for p in split],
                beam_size=beam,
                length_penalty=args.length_penalty,
                target_bpe=target_bpe,
            )
            seconds[f"{name}, {system}"] = round((time.process_time() - tick) / args.threads, 1)
        refs = [p.english for p in split]
        final[name] = {}
        for baseline in ("dictionary", "copy"):
            systems = {baseline: hyps[name][baseline]}
            systems.update({k: v for k, v in hyps[name].items() if k != baseline})
            results, signature = paired_bootstrap(systems, refs)
            final[name][f"against {baseline}"] = [vars(r) for r in results]  # type: ignore[index]
        final[name]["signature"] = signature  # type: ignore[index]
        print(name, json.dumps(final[name], indent=1), flush=True)
        (out / f"{name}_hypotheses.json").write_text(
            json.dumps(hyps[name], ensure_ascii=False, indent=0)
        )

    results = {
        "settings": {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()},
        "machine": host,
        "torch": torch.__version__,
        "kernels": "native" if args.native_kernels else "AVX2",
        "parameters": parameters,
        "vocab": len(bpe.vocab) if target_bpe is bpe else [len(bpe.vocab), len(target_bpe.vocab)],
        "training_pairs": len(pairs),
        "steps": step,
        "curve": curve,
        "final": final,
        "translation_seconds": seconds,
        "wall_minutes": round((time.time() - started) / 60, 1),
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
    }
    (out / "results.json").write_text(json.dumps(results, indent=1))
    torch.save({"config": vars(config), "last": last, "averaged": averaged}, out / "weights.pt")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
