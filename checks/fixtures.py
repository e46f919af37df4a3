"""Seeded inputs and stand-in models for the exercises' test cells (no expected values here).

Everything in this module builds what a test feeds the learner's code: seeded arrays, seeded
weights put into the learner's module by parameter name, weights copied from the PyTorch
modules, and small fake models whose behaviour is known. What the results should be is the
grader's business (:mod:`checks`).
"""

from __future__ import annotations

import math
import zlib
from typing import Any

import numpy as np


def rng(seed: int) -> np.random.Generator:
    """A seeded NumPy generator for test inputs."""
    return np.random.default_rng(seed)


def randn(seed: int, *shape: int, dtype: Any = None) -> Any:
    """A seeded ``torch`` tensor of standard normal values (float32 unless ``dtype``)."""
    import torch

    data = rng(seed).standard_normal(shape)
    return torch.tensor(data, dtype=dtype or torch.float32)


def backward(output: Any, seed: int, *inputs: Any) -> list[Any]:
    """Send a seeded random weighting of ``output`` back through the graph that made it (the
    loss ``(output * w).sum()``, as training would) and return the gradient of each of
    ``inputs`` (zeros where none arrived: a detached path). The gradients of the parameters
    of the module that made ``output`` are left in their ``.grad`` (:func:`parameter_grads`)."""
    import torch

    weights = randn(seed, *output.shape, dtype=output.dtype)
    (output * weights).sum().backward()
    return [x.grad if x.grad is not None else torch.zeros_like(x) for x in inputs]


def parameter_grads(module: Any) -> Any:
    """The gradients of ``module``'s parameters, in the order of their sorted names, as one
    vector (zeros for a parameter that got none)."""
    import torch

    parts = []
    for _, p in sorted(module.named_parameters(), key=lambda item: item[0]):
        grad = p.grad if p.grad is not None else torch.zeros_like(p)
        parts.append(grad.detach().reshape(-1))
    return torch.cat(parts) if parts else torch.zeros(0)


def randomize_(module: Any, seed: int) -> None:
    """Give every parameter of ``module`` seeded values that depend on its *name* only.

    Matrices get N(0, 1/fan_in) entries; 1-D weights (LayerNorm scales) 1 + N(0, 0.2²);
    biases N(0, 0.1²). Two modules whose parameters have the same names and shapes get the
    same values, whatever else they hold, so the learner's module and the solution's agree.
    """
    import torch

    with torch.no_grad():
        for name, p in module.named_parameters():
            g = rng(seed * 1_000_003 + zlib.crc32(name.encode()))
            if p.dim() > 1:
                values = g.standard_normal(tuple(p.shape)) / math.sqrt(p.shape[-1])
            elif name.endswith("weight"):
                values = 1.0 + 0.2 * g.standard_normal(tuple(p.shape))
            else:
                values = 0.1 * g.standard_normal(tuple(p.shape))
            p.copy_(torch.tensor(values, dtype=p.dtype))


def copy_mha_weights(module: Any, torch_mha: Any) -> None:
    """Copy ``nn.MultiheadAttention`` weights into ``module.{q,k,v,out}_proj`` (nn.Linear)."""
    import torch

    from helpers.interop import torch_state_dict

    d = torch_mha.embed_dim
    state = torch_state_dict(torch_mha)
    for name in ("q_proj", "k_proj", "v_proj", "out_proj"):
        proj = getattr(module, name, None)
        if not isinstance(proj, torch.nn.Linear):
            raise AssertionError(
                f"MultiHeadAttention should have an attribute `{name}` = nn.Linear(d_model, "
                f"d_model); got {type(proj).__name__}. Create it in __init__."
            )
        if tuple(proj.weight.shape) != (d, d) or proj.bias is None:
            raise AssertionError(
                f"{name} should be nn.Linear({d}, {d}) with a bias; got weight "
                f"{tuple(proj.weight.shape)}, bias={proj.bias is not None}"
            )
        with torch.no_grad():
            proj.weight.copy_(state[f"{name}.weight"])
            proj.bias.copy_(state[f"{name}.bias"])


def copy_from_torch(ours: Any, theirs: Any, what: str) -> None:
    """Load the weights of a ``torch.nn.TransformerEncoder(Layer)``/``Decoder(Layer)`` into the
    learner's module (course names: ``self_attn``, ``feed_forward.linear1``,
    ``attn_block.norm``, ``layers.0.…``, ``norm``; the mapping is :mod:`helpers.interop`'s).
    """
    from helpers.interop import torch_state_dict

    state = torch_state_dict(theirs)
    expected = set(state)
    have = set(ours.state_dict())
    missing, extra = sorted(expected - have), sorted(have - expected)
    if missing or extra:
        raise AssertionError(
            f"{what}: the parameter names do not follow the task. Missing: {missing[:6]}; "
            f"unexpected: {extra[:6]}. Use the attribute names given in the task (and "
            "nn.Identity(), which has no parameters, where there is no final norm)."
        )
    try:
        ours.load_state_dict(state)
    except RuntimeError as err:
        raise AssertionError(f"{what}: a parameter has the wrong shape: {err}") from None


def randomize_norms_(module: Any, seed: int) -> None:
    """Seeded, non-trivial scales and shifts for every ``nn.LayerNorm`` in ``module``."""
    import torch

    g = rng(seed)
    with torch.no_grad():
        for m in module.modules():
            if isinstance(m, torch.nn.LayerNorm):
                shape = tuple(m.weight.shape)
                m.weight.copy_(torch.tensor(1.0 + 0.2 * g.standard_normal(shape)))
                m.bias.copy_(torch.tensor(0.1 * g.standard_normal(shape)))


def reverse_task(n: int, seq_len: int, vocab_size: int, seed: int) -> tuple[Any, Any]:
    """Held-out reversal data made here (not by helpers): ``(src, tgt)`` LongTensors
    ``(n, seq_len + 1)``, tokens in [3, vocab_size), each row ending in EOS = 2."""
    import torch

    body = rng(seed).integers(3, vocab_size, size=(n, seq_len))
    eos = np.full((n, 1), 2)
    src = np.concatenate([body, eos], axis=1)
    tgt = np.concatenate([body[:, ::-1], eos], axis=1)
    return torch.tensor(src, dtype=torch.long), torch.tensor(tgt.copy(), dtype=torch.long)


class ScriptedReverser:
    """A fake model for testing greedy decoding: ``encode``/``decode`` as in exercise 06.

    Its decode puts logit 5 on the right next token (the source without padding and EOS,
    reversed, then EOS) at every position whose prefix is right so far, and on token 3
    elsewhere. It checks the masks it is given and counts its decode calls.
    """

    def __init__(self, vocab_size: int = 13, pad_id: int = 0, bos_id: int = 1, eos_id: int = 2):
        self.vocab_size, self.pad_id, self.bos_id, self.eos_id = vocab_size, pad_id, bos_id, eos_id
        self.decode_calls = 0
        self.training = True

    def eval(self) -> ScriptedReverser:
        self.training = False
        return self

    def train(self, mode: bool = True) -> ScriptedReverser:
        self.training = mode
        return self

    def parameters(self) -> Any:
        """One dummy tensor, for code that asks ``next(model.parameters()).device``."""
        import torch

        return iter([torch.zeros(1)])

    def targets(self, src: Any) -> list[list[int]]:
        rows = []
        for row in src.tolist():
            body = [t for t in row if t not in (self.pad_id, self.eos_id)]
            rows.append(body[::-1] + [self.eos_id])
        return rows

    def encode(self, src: Any, src_mask: Any) -> Any:
        import torch

        expected = (src != self.pad_id)[:, None, None, :]
        if (
            src_mask is None
            or tuple(src_mask.shape) != tuple(expected.shape)
            or not torch.equal(src_mask.bool(), expected)
        ):
            raise AssertionError(
                "greedy_decode should encode with the padding mask of src, shape "
                f"(batch, 1, 1, src_len) = {tuple(expected.shape)}, True = real token; got "
                f"{None if src_mask is None else tuple(src_mask.shape)}"
            )
        return src.clone()

    def decode(self, tgt: Any, memory: Any, src_mask: Any, tgt_mask: Any) -> Any:
        import torch

        self.decode_calls += 1
        n = tgt.size(1)
        shape = (tgt.size(0), 1, n, n)
        try:
            mask = None if tgt_mask is None else np.broadcast_to(tgt_mask.bool().numpy(), shape)
        except ValueError:  # a mask of another size, e.g. (max_len, max_len)
            mask = None
        if mask is None or not np.array_equal(
            mask, np.broadcast_to(np.tril(np.ones((n, n), dtype=bool)), shape)
        ):
            raise AssertionError(
                "greedy_decode should call model.decode with a causal tgt_mask for the "
                f"{n} tokens so far (torch.ones(n, n, dtype=torch.bool).tril()); got "
                f"{None if tgt_mask is None else tuple(tgt_mask.shape)}"
            )
        if tgt.dtype != torch.long or not bool((tgt[:, 0] == self.bos_id).all()):
            raise AssertionError(
                "the decoder input should start with BOS (id 1) in every row, as integer ids"
            )
        logits = torch.zeros(tgt.size(0), n, self.vocab_size)
        for b, target in enumerate(self.targets(memory)):
            prefix = tgt[b].tolist()
            for t in range(n):
                right = prefix[1 : t + 1] == target[:t] and t < len(target)
                logits[b, t, target[t] if right else 3] = 5.0
        return logits


def make_bigram_model(vocab_size: int, seed: int) -> Any:
    """A stand-in model for testing a training step: ``logits = table[tgt]``.

    ``forward(src, tgt, src_mask, tgt_mask)`` returns ``table(tgt)`` ``(batch, tgt_len, V)``
    and appends what it was given (and ``training``) to ``model.calls``. Its gradient is
    known in closed form (:func:`bigram_grad`), so a whole update can be checked.
    """
    import torch

    class BigramModel(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.table = torch.nn.Embedding(vocab_size, vocab_size)
            self.calls: list[dict[str, Any]] = []

        def forward(self, src: Any, tgt: Any, src_mask: Any = None, tgt_mask: Any = None) -> Any:
            def keep(t: Any) -> Any:
                return None if t is None else t.detach().clone()

            self.calls.append(
                {
                    "src": keep(src),
                    "tgt": keep(tgt),
                    "src_mask": keep(src_mask),
                    "tgt_mask": keep(tgt_mask),
                    "training": self.training,
                }
            )
            return self.table(tgt)

    model = BigramModel()
    with torch.no_grad():
        values = rng(seed).standard_normal((vocab_size, vocab_size))
        model.table.weight.copy_(torch.tensor(values, dtype=torch.float32))
    return model


def row_codes(ids: Any, base: int = 16) -> Any:
    """One integer per row of token ids ``(batch, length)``, so that :meth:`Test.agree
    <checks.Test.agree>` can judge many decoded rows from few recorded numbers.

    The code of a row is ``sum_i ids[i] * base**i``: two rows get the same code exactly when
    they are equal up to trailing padding 0. A row with an id outside ``[0, base)``, or with a
    nonzero id beyond what an int64 can code exactly, gets -1 (it matches no real row).
    Returns ``(batch, 1)`` int64; anything that is not 2-D ids is returned unchanged, so the
    check reports its shape.
    """
    import torch

    if isinstance(ids, torch.Tensor):
        a = ids.detach().cpu().numpy()
    else:
        try:
            a = np.asarray(ids)
        except (TypeError, ValueError):
            return ids
    if a.ndim != 2 or a.dtype == object or not np.issubdtype(a.dtype, np.number):
        return ids
    width = 1
    while base ** (width + 1) <= 2**62:
        width += 1
    a = np.asarray(a, dtype=np.float64)
    ok = np.all((a >= 0) & (a < base) & (a == np.floor(a)), axis=1)
    ok &= ~np.any(a[:, width:] != 0, axis=1)
    digits = np.where(ok[:, None], a[:, :width], 0).astype(np.int64)
    codes = (digits * base ** np.arange(digits.shape[1], dtype=np.int64)).sum(axis=1)
    return torch.tensor(np.where(ok, codes, -1)[:, None], dtype=torch.long)


def teacher_forced(model: Any, src: Any, tgt: Any, bos_id: int = 1, pad_id: int = 0) -> Any:
    """The model's most likely token at every position when it reads the right answer so far.

    One pass of ``model.decode(tgt_in, model.encode(src, src_mask), src_mask, tgt_mask)`` in
    eval mode, with ``tgt_in`` = BOS + ``tgt`` shifted right, the padding mask of ``src`` and a
    causal ``tgt_mask``; returns the argmax ids ``(batch, tgt_len)``. A model whose rows are
    all right here decodes them right greedily too, so this checks the model itself without
    a decoder in the test.
    """
    import torch

    tgt_in = torch.cat([torch.full_like(tgt[:, :1], bos_id), tgt[:, :-1]], dim=1)
    src_mask = (src != pad_id)[:, None, None, :]
    n = tgt.size(1)
    tgt_mask = torch.ones(n, n, dtype=torch.bool).tril()
    model.eval()
    with torch.no_grad():
        logits = model.decode(tgt_in, model.encode(src, src_mask), src_mask, tgt_mask)
    return logits.argmax(dim=-1)
