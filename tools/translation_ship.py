"""Ship a Spanish–English run of ``tools/translation_run.py`` with the book (chapter 11).

    .venv/bin/python tools/translation_ship.py benchmarks/out/translation/main

Copies into ``helpers/weights/chapter11_es_en/`` what the chapter reads: the run's record
(``results.json``), its merges (``bpe.json``), its translations of the dev and test books
(``dev_hypotheses.json``, ``test_hypotheses.json``: every system the run scored), and the
averaged weights in float16 (``model.pt``, ``{"config", "state_dict"}`` as
``helpers.Transformer.from_checkpoint`` loads it; half the bytes of float32). Float16 must not
change the reading: the tool translates both books greedily with the float16 weights, as the
chapter does, and records against the run's float32 translations how many verses differ and
the BLEU of each, in ``PROVENANCE.md`` with the checksum of every file.

    .venv/bin/python tools/translation_ship.py benchmarks/out/translation/main \
        --compare benchmarks/out/translation/cmp_base benchmarks/out/translation/cmp_ls0 \
        benchmarks/out/translation/cmp_sepvocab --also-average 3

also writes ``comparisons.json``: for each comparison run (shorter runs that change one setting,
``--steps`` and ``--final short``), its settings, curve and greedy translations of the test books
with its last weights; and, from the main run's last snapshots (``snapshots.pt``), the dev and
test translations of the average of fewer snapshots, for the question of what averaging buys.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import sys
import time
from pathlib import Path

from other_kernels import AVX2  # tools/, beside this script
from translation_run import average_snapshots

ROOT = Path(__file__).resolve().parent.parent
DEST = ROOT / "helpers" / "weights" / "chapter11_es_en"
COPIED = ("results.json", "bpe.json", "dev_hypotheses.json", "test_hypotheses.json")


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def command(record: dict) -> str:  # type: ignore[type-arg]
    """The command line that made a run, from its recorded settings."""
    return "tools/translation_run.py " + " ".join(
        f"--{k.replace('_', '-')}" + ("" if v is True else f" {v}")
        for k, v in record["settings"].items()
        if v is not None and v is not False and k not in ("out", "native_kernels", "sentences")
    )


def compare(args, record, model, bpe) -> str:  # type: ignore[no-untyped-def]
    """Write comparisons.json; return the provenance's paragraph about it."""
    import torch  # imported by main() already, after the kernel settings

    import helpers
    from helpers.translation import translate

    out: dict[str, object] = {"runs": {}, "averages": {}}
    lines = ["", "`comparisons.json` holds, for the comparison runs (each run's last weights,"]
    lines.append("greedy decoding of the test books):")
    lines.append("")
    for folder in args.compare:
        run = json.loads((folder / "results.json").read_text())
        hyps = json.loads((folder / "test_hypotheses.json").read_text())
        out["runs"][folder.name] = {  # type: ignore[index]
            "settings": run["settings"],
            "parameters": run["parameters"],
            "vocab": run["vocab"],
            "steps": run["steps"],
            "curve": run["curve"],
            "machine": run["machine"],
            "test": {"last, greedy": hyps["last, greedy"]},
        }
        lines.append(f"- `{folder.name}`: `{command(run)}` on {run['date']}, {run['steps']} steps")
    if args.also_average:
        snapshots = torch.load(args.run / "snapshots.pt", map_location="cpu", weights_only=True)
        minutes = [p["minutes"] for p in record["curve"]][-len(snapshots) :]
        for n in args.also_average:
            model.load_state_dict(average_snapshots(snapshots[-n:]))
            model.eval()
            entry: dict[str, object] = {"minutes": minutes[-n:]}
            for split in ("dev", "test"):
                verses = helpers.load_verse_pairs(split)[: args.sentences]
                entry[split] = translate(model, bpe, [v.spanish for v in verses])
            out["averages"][f"average of {n}, greedy"] = entry  # type: ignore[index]
            lines.append(
                f"- the average of the main run's last {n} snapshots (float32, from its "
                f"`snapshots.pt`, training minutes {', '.join(map(str, minutes[-n:]))}), "
                "greedy, on the dev and test books"
            )
    (args.dest / "comparisons.json").write_text(json.dumps(out, ensure_ascii=False, indent=0))
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("run", type=Path, help="the run's folder (benchmarks/out/translation/<name>)")
    p.add_argument("--dest", type=Path, default=DEST)
    p.add_argument("--sentences", type=int, help="check only the first ... (a run made so)")
    p.add_argument("--compare", type=Path, nargs="*", default=[], help="comparison runs' folders")
    p.add_argument(
        "--also-average", type=int, nargs="*", default=[], help="average this many snapshots too"
    )
    args = p.parse_args(argv)
    os.environ.update(AVX2)  # the kernels the run computed with
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    import torch

    import helpers
    from helpers.data import BPE
    from helpers.translation import corpus_bleu, translate

    torch.set_num_threads(1)
    missing = [n for n in (*COPIED, "weights.pt") if not (args.run / n).is_file()]
    if missing:
        raise SystemExit(f"{args.run} lacks {missing}: is the run finished?")
    record = json.loads((args.run / "results.json").read_text())
    args.dest.mkdir(parents=True, exist_ok=True)
    for name in COPIED:
        shutil.copyfile(args.run / name, args.dest / name)
    saved = torch.load(args.run / "weights.pt", map_location="cpu", weights_only=True)
    half: dict[str, torch.Tensor] = {}
    for k, v in saved["averaged"].items():  # the tied embeddings stored once, not three times
        twin = next((h for j, h in half.items() if torch.equal(saved["averaged"][j], v)), None)
        half[k] = twin if twin is not None else v.half() if v.is_floating_point() else v
    torch.save({"config": saved["config"], "state_dict": half}, args.dest / "model.pt")

    merges = [tuple(m) for m in json.loads((args.run / "bpe.json").read_text())]
    train = helpers.load_verse_pairs("train")  # the merges again, with their alphabet
    bpe: BPE = helpers.train_bpe(
        [p.spanish for p in train] + [p.english for p in train], len(merges)
    )
    if [tuple(m) for m in bpe.merges] != merges:
        raise SystemExit("the merges learned again differ from the run's bpe.json")
    model = helpers.Transformer.from_checkpoint(torch.load(args.dest / "model.pt"))
    model.eval()
    system = f"average of {record['settings']['average']}, greedy"
    lines = []
    for split in ("dev", "test"):
        verses = helpers.load_verse_pairs(split)[: args.sentences]
        hyps = json.loads((args.run / f"{split}_hypotheses.json").read_text())
        hyps = {k: v[: args.sentences] for k, v in hyps.items()}
        tick = time.process_time()
        shipped = translate(model, bpe, [v.spanish for v in verses])
        seconds = time.process_time() - tick
        refs = [v.english for v in verses]
        full, _ = corpus_bleu(hyps[system], refs)
        halved, _ = corpus_bleu(shipped, refs)
        differ = sum(a != b for a, b in zip(hyps[system], shipped, strict=True))
        lines.append(
            f"- {split}: {differ} of {len(verses)} verses translated otherwise; BLEU "
            f"{full:.2f} with float32, {halved:.2f} with float16 ({seconds:.0f} CPU s)"
        )
        print(lines[-1], flush=True)

    compared = ""
    if args.compare or args.also_average:
        compared = compare(args, record, model, bpe)
    files = sorted(p for p in args.dest.iterdir() if p.name != "PROVENANCE.md")
    table = "\n".join(f"| `{p.name}` | {p.stat().st_size} | `{sha256(p)}` |" for p in files)
    (args.dest / "PROVENANCE.md").write_text(
        f"""# Chapter 11's run: provenance

Written by `tools/translation_ship.py` from the run's folder; do not edit by hand.

Made by `{command(record)}` on {record["date"]}: {record["machine"]["cpu"]},
{record["machine"]["cores"]} cores, PyTorch {record["torch"]}, {record["kernels"]} kernels;
{record["wall_minutes"]} minutes of wall time in all.

| file | bytes | sha256 |
|---|---|---|
{table}

`model.pt` holds the average of the last {record["settings"]["average"]} snapshots in float16.
Float16 against the run's float32 weights, greedy decoding of the held-out books:

{chr(10).join(lines)}
{compared}"""
    )
    print(f"wrote {args.dest}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
