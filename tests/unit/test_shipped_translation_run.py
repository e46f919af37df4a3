"""The Spanish–English run that chapter 11 reads (helpers/weights/chapter11_es_en/): every file
is the one its provenance records, the float16 weights load into the model the record
describes, and the record's test scores are those of the translations shipped beside it."""

from __future__ import annotations

import hashlib
import json
import re

import pytest
import torch

import helpers
from helpers.translation import corpus_bleu

RUN = helpers.checkpoints.DEFAULT_CHECKPOINT.parent / "chapter11_es_en"


def test_every_file_is_the_one_its_provenance_records():
    rows = re.findall(
        r"^\| `([^`]+)` \| (\d+) \| `([0-9a-f]{64})` \|$", (RUN / "PROVENANCE.md").read_text(), re.M
    )
    assert {name for name, _, _ in rows} == {p.name for p in RUN.iterdir()} - {"PROVENANCE.md"}
    for name, size, digest in rows:
        data = (RUN / name).read_bytes()
        assert (len(data), hashlib.sha256(data).hexdigest()) == (int(size), digest), name


def test_the_weights_are_float16_and_load_into_the_recorded_model():
    checkpoint = torch.load(RUN / "model.pt", map_location="cpu", weights_only=True)
    floats = [v for v in checkpoint["state_dict"].values() if v.is_floating_point()]
    assert floats and all(v.dtype == torch.float16 for v in floats)
    record = json.loads((RUN / "results.json").read_text())
    settings = record["settings"]
    config = checkpoint["config"]
    assert (config["d_model"], config["num_heads"], config["d_ff"]) == (
        settings["d_model"],
        settings["heads"],
        settings["d_ff"],
    )
    model = helpers.Transformer.from_checkpoint(checkpoint)
    assert sum(p.numel() for p in model.parameters()) == record["parameters"]


@pytest.mark.parametrize("split", ["dev", "test"])
def test_the_recorded_scores_are_those_of_the_shipped_translations(split):
    record = json.loads((RUN / "results.json").read_text())["final"][split]
    hypotheses = json.loads((RUN / f"{split}_hypotheses.json").read_text())
    refs = [p.english for p in helpers.load_verse_pairs(split)]
    for row in record["against dictionary"]:
        bleu, signature = corpus_bleu(hypotheses[row["name"]], refs)
        assert abs(bleu - row["bleu"]) < 1e-9, row["name"]
        assert signature in record["signature"].replace("bs:1000|seed:12345|", "")


def test_each_comparison_run_changes_one_setting_of_the_main_run():
    main = json.loads((RUN / "results.json").read_text())
    comparisons = json.loads((RUN / "comparisons.json").read_text())
    # What every comparison run changes on purpose: its name, a budget of steps instead of
    # minutes, one thread, and a short final (its last weights only, on the test books).
    budget = {"name", "steps", "eval_steps", "threads", "stop_at", "final", "minutes"}
    settings = {"separate_vocab": False, **main["settings"]}  # the option came after the run
    changed = {}
    for name, run in comparisons["runs"].items():
        assert run["steps"] == run["settings"]["steps"], name
        assert len(run["test"]["last, greedy"]) == len(helpers.load_verse_pairs("test")), name
        changed[name] = {
            k for k, v in run["settings"].items() if k not in budget and v != settings[k]
        }
    assert changed == {
        "cmp_base": set(),
        "cmp_ls0": {"label_smoothing"},
        "cmp_sepvocab": {"separate_vocab"},
    }
    assert len({run["steps"] for run in comparisons["runs"].values()}) == 1


def test_the_fewer_snapshots_averaged_are_the_last_of_the_main_run():
    curve = json.loads((RUN / "results.json").read_text())["curve"]
    for system, entry in json.loads((RUN / "comparisons.json").read_text())["averages"].items():
        n = int(system.split()[2].rstrip(","))
        assert entry["minutes"] == [p["minutes"] for p in curve][-n:], system
        for split in ("dev", "test"):
            assert len(entry[split]) == len(helpers.load_verse_pairs(split)), (system, split)
