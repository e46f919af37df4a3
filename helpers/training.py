"""Training (chapter 7): label-smoothed loss, the paper's warm-up schedule, a small loop."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable
from typing import Protocol

import numpy as np
import torch
from torch import Tensor, nn
from torch.optim.lr_scheduler import LambdaLR
from tqdm.auto import tqdm

from .attention import padding_mask, target_mask
from .decoding import greedy_decode
from .model import Transformer

__all__ = [
    "exact_match",
    "make_optimizer",
    "noam_lr",
    "noam_scheduler",
    "seed_everything",
    "sequence_loss",
    "train",
    "train_step",
]


class Batch(Protocol):
    """What the training loop needs of a batch: ids ``(batch, len)``, padded."""

    src: Tensor  # source ids
    tgt_out: Tensor  # target, ending in EOS: what the decoder must predict


def seed_everything(seed: int) -> None:
    """Seed Python's, NumPy's and PyTorch's generators."""
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def noam_lr(step: int, d_model: int, warmup_steps: int, factor: float = 1.0) -> float:
    """lrate = factor · d_model^-0.5 · min(step^-0.5, step · warmup^-1.5), step counted from 1."""
    step = max(step, 1)
    return factor * d_model**-0.5 * min(step**-0.5, step * warmup_steps**-1.5)


def noam_scheduler(
    optimizer: torch.optim.Optimizer, d_model: int, warmup_steps: int = 4000, factor: float = 1.0
) -> LambdaLR:
    """The paper's schedule: linear warm-up, then decay ∝ 1/√step.

    ``LambdaLR`` multiplies the optimizer's lr by this factor: create the optimizer with ``lr=1``.
    """
    return LambdaLR(optimizer, lambda step: noam_lr(step + 1, d_model, warmup_steps, factor))


def make_optimizer(model: nn.Module, lr: float = 1.0) -> torch.optim.Adam:
    """Adam with the paper's β1 = 0.9, β2 = 0.98, ε = 1e-9."""
    return torch.optim.Adam(model.parameters(), lr=lr, betas=(0.9, 0.98), eps=1e-9)


def sequence_loss(
    logits: Tensor, targets: Tensor, pad_id: int = 0, label_smoothing: float = 0.1
) -> Tensor:
    """Mean cross-entropy over non-pad targets ``(batch, len)``; logits ``(batch, len, vocab)``.

    With label smoothing ε, the target distribution puts 1 - ε on the right token and spreads ε
    over the whole vocabulary.
    """
    loss_fn = nn.CrossEntropyLoss(ignore_index=pad_id, label_smoothing=label_smoothing)
    return loss_fn(logits.reshape(-1, logits.size(-1)), targets.reshape(-1))


def train_step(
    model: Transformer,
    optimizer: torch.optim.Optimizer,
    src: Tensor,
    tgt: Tensor,
    pad_id: int | None = None,
    bos_id: int = 1,
    label_smoothing: float = 0.1,
    *,
    scheduler: LambdaLR | None = None,
    clip_norm: float | None = 1.0,
) -> float:
    """One teacher-forced update: the whole target in one forward pass, backward, step.

    ``src (batch, src_len)`` and ``tgt (batch, tgt_len)`` are ids padded with ``pad_id``
    (default ``model.config.pad_id``); ``tgt`` holds the labels, each row ending with EOS. The
    decoder reads ``tgt`` shifted right behind ``bos_id``. Returns the loss as a Python float.
    The same contract as exercise 06's ``train_step``, plus an optional ``scheduler`` (stepped
    after the update) and gradient clipping to ``clip_norm`` (``None``: no clipping).
    """
    if pad_id is None:
        pad_id = model.config.pad_id
    model.train()
    tgt_in = torch.cat([torch.full_like(tgt[:, :1], bos_id), tgt[:, :-1]], dim=1)
    src_mask, tgt_mask = padding_mask(src, pad_id), target_mask(tgt_in, pad_id)
    logits = model(src, tgt_in, src_mask, tgt_mask)
    loss = sequence_loss(logits, tgt, pad_id, label_smoothing)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    if clip_norm is not None:
        nn.utils.clip_grad_norm_(model.parameters(), clip_norm)
    optimizer.step()
    if scheduler is not None:
        scheduler.step()
    return loss.item()


def train(
    model: Transformer,
    batches: Iterable[Batch],
    optimizer: torch.optim.Optimizer,
    scheduler: LambdaLR | None = None,
    steps: int | None = None,
    label_smoothing: float = 0.1,
    clip_norm: float | None = 1.0,
    progress: bool = True,
    should_stop: Callable[[int, float], bool] | None = None,
    bos_id: int = 1,
) -> list[float]:
    """Run ``train_step`` over ``batches`` (at most ``steps`` of them) and return the loss history.

    ``should_stop(step, loss)`` is asked after every step; returning True ends training early.
    Each batch's ``tgt_out`` is the ``tgt`` of ``train_step``; the decoder input is rebuilt from it
    behind ``bos_id``.
    """
    history: list[float] = []
    bar = tqdm(total=steps, disable=not progress, desc="training", leave=False)
    for step, batch in enumerate(batches, start=1):
        loss = train_step(
            model,
            optimizer,
            batch.src,
            batch.tgt_out,
            bos_id=bos_id,
            label_smoothing=label_smoothing,
            scheduler=scheduler,
            clip_norm=clip_norm,
        )
        history.append(loss)
        bar.update()
        bar.set_postfix(loss=f"{loss:.3f}")
        if (steps is not None and step >= steps) or (should_stop and should_stop(step, loss)):
            break
    bar.close()
    return history


def exact_match(
    model: Transformer,
    src: Tensor,
    tgt_out: Tensor,
    max_len: int | None = None,
    bos_id: int = 1,
    eos_id: int = 2,
) -> float:
    """Fraction of rows whose greedy decoding equals the target exactly (up to and with EOS).

    ``src (batch, src_len)``, ``tgt_out (batch, tgt_len)`` padded with ``pad_id`` after EOS.
    """
    pad_id = model.config.pad_id
    max_len = tgt_out.size(1) if max_len is None else max_len
    predicted = greedy_decode(model, src, max_len, bos_id, eos_id)
    width = max(predicted.size(1), tgt_out.size(1))
    predicted = nn.functional.pad(predicted, (0, width - predicted.size(1)), value=pad_id)
    expected = nn.functional.pad(tgt_out, (0, width - tgt_out.size(1)), value=pad_id)
    return (predicted == expected).all(dim=1).float().mean().item()
