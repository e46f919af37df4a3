"""The shipped, trained toy translator (chapter 9): English number words → Chinese numerals.

``benchmarks/number_translation.py`` trains it and writes ``helpers/weights/number_translator.pt``,
package data of ``helpers`` (pyproject.toml), so it is installed with the package, editable or not.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch

from .data import Vocab, english_tokens, number_to_words
from .decoding import greedy_decode
from .model import Transformer

# A path beside this module rather than an importlib.resources Traversable: the benchmark
# writes it too. Wheels and editable installs both keep package data on disk.
DEFAULT_CHECKPOINT = Path(__file__).resolve().parent / "weights" / "number_translator.pt"


def load_number_translator(
    path: str | Path | None = None,
) -> tuple[Transformer, Vocab, Vocab, dict[str, Any]]:
    """Load the trained number translator, in eval mode, on the CPU.

    Returns:
        ``(model, src_vocab, tgt_vocab, info)``; ``info`` holds everything else the
        checkpoint stores: ``history`` (loss per step), ``heldout_accuracy``,
        ``train_seconds``, ``seed``, ``data_args`` (``make_number_translation(**data_args)``
        rebuilds the train and held-out numbers; the last ``num_validation`` training pairs
        were kept for early stopping and not trained on), ``train_max_src_len`` and
        ``train_max_tgt_len`` (longest training sequences in tokens, EOS included), ...
    """
    path = DEFAULT_CHECKPOINT if path is None else Path(path)
    if not path.is_file():
        raise FileNotFoundError(
            f"no checkpoint at {path}. The package ships helpers/weights/number_translator.pt; "
            "recreate it with `.venv/bin/python benchmarks/number_translation.py`"
        )
    checkpoint = torch.load(path, map_location="cpu", weights_only=True)
    missing = {"config", "state_dict", "src_vocab", "tgt_vocab"} - checkpoint.keys()
    if missing:
        raise ValueError(
            f"{path} is not a number-translator checkpoint: it lacks {sorted(missing)}"
        )
    model = Transformer.from_checkpoint(checkpoint).eval()
    vocabs = []
    for key in ("src_vocab", "tgt_vocab"):
        itos = checkpoint[key]
        vocab = Vocab(itos[len(Vocab.SPECIALS) :])
        if vocab.itos != itos:
            raise ValueError(
                f"{path}: {key} does not start with the special tokens {Vocab.SPECIALS}"
            )
        vocabs.append(vocab)
    skip = {"config", "state_dict", "src_vocab", "tgt_vocab"}
    info = {k: v for k, v in checkpoint.items() if k not in skip}
    return model, vocabs[0], vocabs[1], info


def translate_number(
    model: Transformer, src_vocab: Vocab, tgt_vocab: Vocab, n: int, max_len: int = 40
) -> str:
    """Greedy translation of one number, e.g. ``3005`` → ``"三千零五"``.

    ``n`` is turned into English words (``number_to_words``), encoded with ``src_vocab``,
    decoded greedily and read back with ``tgt_vocab``.
    """
    src = torch.tensor([src_vocab.encode(english_tokens(number_to_words(n)))])
    out = greedy_decode(model, src, max_len, Vocab.BOS, Vocab.EOS)
    return "".join(tgt_vocab.decode(out[0]))


def load_book_run(name: str) -> dict[str, dict[str, torch.Tensor]]:
    """The weights of a training run of the book, as its chapter's stored outputs used them.

    Training amplifies the last-bit differences between CPUs (AVX-512 and AVX2 kernels sum
    in another order), so the same seeded run ends elsewhere on another machine. A chapter
    that studies a run trains it in front of the reader, then loads the book's own weights
    with this function, so that the numbers its text discusses are the ones every machine
    prints. ``tools/book_runs.py`` writes them into ``helpers/weights/<name>.pt``.

    Returns:
        ``{label: state_dict}``, e.g. ``{"500 steps": ..., "100 steps": ...}`` for
        ``"chapter07_reverse"``; each state dict loads into the chapter's model.
    """
    path = DEFAULT_CHECKPOINT.parent / f"{name}.pt"
    if not path.is_file():
        shipped = sorted(p.stem for p in path.parent.glob("chapter*.pt"))
        raise FileNotFoundError(
            f"no saved run {name!r} at {path}; the package ships {shipped}. Recreate one with "
            "`.venv/bin/python tools/book_runs.py chapters/<chapter>.ipynb`"
        )
    runs: dict[str, dict[str, torch.Tensor]] = torch.load(
        path, map_location="cpu", weights_only=True
    )
    return runs
