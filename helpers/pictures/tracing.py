"""Tracing a live forward pass: the "dimension table" of its shapes, and the attention weights
behind a translation (:func:`record_translation`).

    >>> model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    >>> print_shape_table(model, torch.randn(3, 4))
    module   type        input shape(s)  output shape(s)
    -------  ----------  --------------  ---------------
    (model)  Sequential  (3, 4)          (3, 2)
      0      Linear      (3, 4)          (3, 8)
      1      ReLU        (3, 8)          (3, 8)
      2      Linear      (3, 8)          (3, 2)

The root module is kept as the first row, named "(model)" at depth 0: it shows what goes into
the whole model and what comes out. Rows follow call order (a module before the submodules it
calls), and a module called several times gets one row per call. Names are indented by depth.
Submodules that are never called as modules (e.g. weights used through torch.nn.functional)
get no row.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import torch
from torch import nn
from torch.utils.hooks import RemovableHandle

if TYPE_CHECKING:  # the model's modules are exercises: import them only where they are used
    from ..model import Transformer

__all__ = ["format_shape_table", "print_shape_table", "record_translation", "trace_shapes"]

ROOT_NAME = "(model)"

Shape = tuple[int, ...]


@dataclass
class ShapeRecord:
    """One module call seen during a traced forward pass.

    name: dotted name from `model.named_modules()` ("(model)" for the root); a module shared
    under several names lists them all, e.g. "src_embed = tgt_embed".
    type: class name, e.g. "Linear". depth: number of dotted components of the first name
    (0 for the root).
    input_shapes / output_shapes: shapes of every tensor in the positional and keyword
    arguments / in the output, in order, looking inside nested tuples, lists and dicts.
    """

    name: str
    type: str
    depth: int
    input_shapes: list[Shape]
    output_shapes: list[Shape]


def _tensors(value: Any) -> Iterator[torch.Tensor]:
    """Every tensor inside `value`, depth first through tuples, lists and dicts."""
    if isinstance(value, torch.Tensor):
        yield value
    elif isinstance(value, (tuple, list)):
        for item in value:
            yield from _tensors(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _tensors(item)


def _shapes(value: Any) -> list[Shape]:
    return [tuple(tensor.shape) for tensor in _tensors(value)]


def trace_shapes(
    model: nn.Module, *inputs: Any, max_depth: int | None = None, **kwargs: Any
) -> list[ShapeRecord]:
    """Run `model(*inputs, **kwargs)` under torch.no_grad() and record every module call.

    max_depth: only modules whose depth is at most this are recorded (0 = the root only,
    1 = the root and its direct children, None = everything). The model's train/eval mode is
    left as it is. Hooks are removed afterwards, also when the forward pass raises.
    Returns the records in call order.
    """
    if max_depth is not None and max_depth < 0:
        raise ValueError(f"max_depth must be None or >= 0, got {max_depth}")
    records: list[ShapeRecord] = []
    # Record indices of calls still in progress, per module: the pre-hook opens a row so rows
    # come out in call order; the forward hook fills in the output when the call returns.
    open_calls: dict[int, list[int]] = {}
    handles: list[RemovableHandle] = []

    def make_hooks(name: str, depth: int) -> tuple[Callable[..., None], Callable[..., None]]:
        def pre_hook(module: nn.Module, args: tuple[Any, ...], kw: dict[str, Any]) -> None:
            open_calls.setdefault(id(module), []).append(len(records))
            shapes = _shapes(args) + _shapes(kw)
            records.append(ShapeRecord(name, type(module).__name__, depth, shapes, []))

        def post_hook(
            module: nn.Module, args: tuple[Any, ...], kw: dict[str, Any], output: Any
        ) -> None:
            records[open_calls[id(module)].pop()].output_shapes = _shapes(output)

        return pre_hook, post_hook

    # A shared module (e.g. tied source/target embeddings) is registered under several names;
    # they are all shown, since a hook cannot tell which name the caller used.
    names: dict[int, tuple[nn.Module, list[str]]] = {}
    for name, module in model.named_modules(remove_duplicate=False):
        names.setdefault(id(module), (module, []))[1].append(name or ROOT_NAME)

    try:
        for module, aliases in names.values():
            depth = 0 if aliases[0] == ROOT_NAME else aliases[0].count(".") + 1
            if max_depth is not None and depth > max_depth:
                continue
            pre_hook, post_hook = make_hooks(" = ".join(aliases), depth)
            handles.append(module.register_forward_pre_hook(pre_hook, with_kwargs=True))
            handles.append(module.register_forward_hook(post_hook, with_kwargs=True))
        with torch.no_grad():
            model(*inputs, **kwargs)
    finally:
        for handle in handles:
            handle.remove()
    return records


def _format_shapes(shapes: list[Shape]) -> str:
    return ", ".join(str(shape) for shape in shapes) if shapes else "-"


def format_shape_table(records: list[ShapeRecord]) -> str:
    """Aligned text table: module (indented by depth), type, input shape(s), output shape(s).

    Several tensors in one cell are separated by commas, e.g. "(2, 10, 16), (2, 2, 10, 10)";
    "-" marks a call without tensors.
    """
    header = ("module", "type", "input shape(s)", "output shape(s)")
    rows = [
        (
            "  " * record.depth + record.name,
            record.type,
            _format_shapes(record.input_shapes),
            _format_shapes(record.output_shapes),
        )
        for record in records
    ]
    widths = [max(len(row[col]) for row in [header, *rows]) for col in range(len(header))]
    lines = [
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
        for row in [header, tuple("-" * width for width in widths), *rows]
    ]
    return "\n".join(lines)


def print_shape_table(
    model: nn.Module, *inputs: Any, max_depth: int | None = None, **kwargs: Any
) -> None:
    """Trace `model(*inputs, **kwargs)` with `trace_shapes` and print the dimension table."""
    print(format_shape_table(trace_shapes(model, *inputs, max_depth=max_depth, **kwargs)))


def record_translation(
    model: Transformer, src: torch.Tensor, max_len: int, bos_id: int = 1
) -> tuple[torch.Tensor, torch.Tensor]:
    """Translate ``src (1, src_len)`` greedily, then run the model once more, teacher-forced on
    its own translation, with every attention module recording its weights.

    Returns ``(tgt_in, tgt_out)``, each ``(1, length)``: the translation up to and with its
    EOS, and the decoder's input that predicts it (BOS, then the translation less its last
    token). Recording stays on, so that each attention module's ``.last_weights`` (``(1, heads,
    queries, keys)``) can be read: call ``model.record_attention(False)`` when done.
    """
    from ..decoding import greedy_decode

    out = greedy_decode(model, src, max_len=max_len, bos_id=bos_id)
    length = int((out[0] != model.config.pad_id).sum())
    tgt_out = out[:, :length]
    tgt_in = torch.cat([torch.full((1, 1), bos_id), tgt_out[:, :-1]], dim=1)
    model.record_attention(True)
    with torch.no_grad():
        model(src, tgt_in, *model.make_masks(src, tgt_in))
    return tgt_in, tgt_out
