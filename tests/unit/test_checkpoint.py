"""The shipped number translator (helpers/weights/number_translator.pt) still translates."""

import math

import pytest
import torch

from helpers import Transformer, TransformerConfig, exact_match, greedy_decode
from helpers.checkpoints import (
    DEFAULT_CHECKPOINT,
    load_book_run,
    load_number_translator,
    translate_number,
)
from helpers.data import make_number_translation, pairs_to_batch

# Training runs and decoding: `make test` runs these again with AVX2-only kernels.
pytestmark = pytest.mark.cpu_kernels

NUM_CHECKED = 300  # held-out numbers decoded here (the script measured all of them)


@pytest.fixture(scope="module")
def shipped():
    assert DEFAULT_CHECKPOINT.is_file(), (
        f"{DEFAULT_CHECKPOINT} is missing; it is committed with the repository and "
        "recreated by `.venv/bin/python benchmarks/number_translation.py`"
    )
    return load_number_translator()


@pytest.fixture(scope="module")
def data(shipped):
    info = shipped[3]
    return make_number_translation(**info["data_args"])


def test_checkpoint_is_small_and_half_precision():
    size_mb = DEFAULT_CHECKPOINT.stat().st_size / 1e6
    assert size_mb < 5, f"checkpoint is {size_mb:.1f} MB; keep it under 5 MB (save in float16)"
    raw = torch.load(DEFAULT_CHECKPOINT, map_location="cpu", weights_only=True)
    assert {v.dtype for v in raw["state_dict"].values()} == {torch.float16}


def test_info_records_training(shipped):
    model, src_vocab, tgt_vocab, info = shipped
    assert not model.training, "the loader should return the model in eval mode"
    assert info["heldout_accuracy"] >= 0.95
    assert info["train_seconds"] > 0 and isinstance(info["seed"], int)
    history = info["history"]
    assert len(history) == info["steps"] and all(math.isfinite(x) for x in history)
    assert history[-1] < history[0] / 2, "the stored loss curve does not go down"
    # Chapter 9 studies lengths beyond those seen in training.
    assert 10 <= info["train_max_src_len"] < model.config.max_len
    assert 10 <= info["train_max_tgt_len"] < model.config.max_len
    assert len(src_vocab) == model.config.src_vocab_size
    assert len(tgt_vocab) == model.config.tgt_vocab_size


def test_vocabularies_match_the_data(shipped, data):
    _, src_vocab, tgt_vocab, _ = shipped
    assert src_vocab.itos == data.src_vocab.itos
    assert tgt_vocab.itos == data.tgt_vocab.itos


def test_heldout_numbers_are_disjoint_from_training(data):
    assert not set(data.heldout_numbers) & set(data.train_numbers)


def test_heldout_exact_match_at_least_95_percent(shipped, data):
    model = shipped[0]
    pairs = data.heldout_pairs[:NUM_CHECKED]
    batch = pairs_to_batch(pairs)
    accuracy = exact_match(model, batch.src, batch.tgt_out, max_len=batch.tgt_out.size(1) + 2)
    assert accuracy >= 0.95, f"held-out exact match {accuracy:.3f} < 0.95"


@pytest.mark.parametrize(
    "number, chinese",
    [(3005, "三千零五"), (15, "十五"), (1010, "一千零一十"), (10000100, "一千万零一百")],
)
def test_translates_examples(shipped, number, chinese):
    model, src_vocab, tgt_vocab, _ = shipped
    assert translate_number(model, src_vocab, tgt_vocab, number) == chinese


def test_missing_checkpoint_says_how_to_make_it(tmp_path):
    with pytest.raises(FileNotFoundError, match="benchmarks/number_translation.py"):
        load_number_translator(tmp_path / "nope.pt")


# The book's runs of chapters 7, 9 and 10 (tools/book_runs.py): what each chapter loads.
BOOK_RUNS = {
    "chapter07_reverse": {
        "500 steps", "100 steps", "150 steps", "no target positions", "no source positions",
    },
    "chapter09_short": {"short model"},
    "chapter10_copy": {"sinusoidal", "learned", "rope", "alibi", "none", "encoder-decoder"},
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(BOOK_RUNS))
def test_book_runs_are_shipped_whole_in_float32(name):
    runs = load_book_run(name)
    assert set(runs) == BOOK_RUNS[name]
    for state in runs.values():
        assert state and all(math.isfinite(v.float().sum().item()) for v in state.values())
        assert {v.dtype for v in state.values() if v.is_floating_point()} == {torch.float32}


def test_book_run_of_chapter_7_loads_into_its_model_and_reverses():
    config = TransformerConfig(
        src_vocab_size=13, tgt_vocab_size=13, d_model=64, num_heads=4, d_ff=128,
        num_encoder_layers=2, num_decoder_layers=2, dropout=0.0, max_len=512,
    )  # fmt: skip
    model = Transformer(config)
    model.load_state_dict(load_book_run("chapter07_reverse")["500 steps"])
    src = torch.tensor([[5, 3, 4, 4, 3, 9, 7, 6, 2]])  # c a b b a g e d <eos>
    assert greedy_decode(model, src, max_len=10)[0].tolist() == [6, 7, 9, 3, 4, 4, 3, 5, 2]


def test_a_missing_book_run_says_which_exist_and_how_to_make_one():
    with pytest.raises(FileNotFoundError, match=r"chapter07_reverse.*tools/book_runs.py"):
        load_book_run("chapter99")
