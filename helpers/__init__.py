"""Attention from Zero: the course's reference Transformer, one module per idea.

Tensors are batch-first, ``(batch, seq, d_model)``; masks are boolean, ``True`` = may attend.
The exercises' test cells use a package of their own, ``checks``. The modules, in course
order, one line each:

- ``attention``: scaled dot-product attention and its masks.
- ``multi_head``: multi-head attention, splitting and merging heads, the KV cache.
- ``positional``: token embedding, sinusoidal and learned positional encodings.
- ``layers``: feed-forward, Add & Norm, the encoder layer and the encoder stack.
- ``decoder``: the decoder layer and stack, and its cache.
- ``model``: the Transformer and its configuration (the paper's base model by default).
- ``decoding``: greedy decoding and beam search.
- ``training``: loss, optimiser, the Noam schedule, the training loop.
- ``checkpoints``: the trained weights the chapters load (``weights/``).
- ``interop``: PyTorch's ``nn.MultiheadAttention`` and ``nn.Transformer`` weights, copied in.
- ``data``: the tasks' data: numbers in words, vocabularies, tasks, batches, verses, BPE.
- ``translation``: real sentences translated, a word-by-word baseline, BLEU (sacrebleu).
- ``pictures``: the chapters' pictures and measurements, not part of the model.

Each module's ``__all__`` lists the names ``helpers`` re-exports from it; they are read from
the sources and imported from their module on first use (``from helpers import
MultiHeadAttention`` loads ``helpers.multi_head`` only). While an exercise is graded, the
modules that hold what it asks the learner to write (and those of later exercises) are stubs
that keep their ``__all__``: importing one of their names raises an ``ImportError`` that says
why, and every other name keeps working.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import re
from pathlib import Path
from typing import Any

# The modules whose public names (each one's ``__all__``) ``helpers`` re-exports, course order.
_MODULES = (
    "attention",
    "multi_head",
    "positional",
    "layers",
    "decoder",
    "model",
    "decoding",
    "training",
    "data",
    "pictures.printing",
    "pictures.timing",
    "pictures.tracing",
)


def _public_names(module: str) -> list[str]:
    """The ``__all__`` of ``helpers.<module>``, read from its source without importing it."""
    path = Path(__file__).parent.joinpath(*module.split("."))
    path = path / "__init__.py" if path.is_dir() else path.with_suffix(".py")
    if not path.is_file():  # the learners' wheel leaves out the chapters' pictures
        return []
    # A search, not a parse: parsing the modules cost 10 ms at every import of helpers.
    found = re.search(r"^__all__ = (\[.*?\])$", path.read_text(encoding="utf-8"), re.M | re.S)
    if found is None:
        raise ImportError(f"{path} has no __all__: list the names helpers exports from it there")
    return list(ast.literal_eval(found.group(1)))


_HOME = {name: module for module in _MODULES for name in _public_names(module)}

__all__ = sorted(_HOME)


def __getattr__(name: str) -> Any:
    module = _HOME.get(name)
    if module is None:  # a submodule, as ``import helpers; helpers.data.make_batch``
        if name.startswith("_") or importlib.util.find_spec(f"{__name__}.{name}") is None:
            raise AttributeError(f"module 'helpers' has no attribute {name!r}")
        return importlib.import_module(f".{name}", __name__)
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
