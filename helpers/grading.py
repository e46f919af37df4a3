"""Checking code for the autograded exercises (nbgrader test cells import nothing else).

How a test cell uses this module
--------------------------------
A learner's notebook runs its own cells before the tests, so it could replace a checker
(``helpers.grading.assert_close = lambda *a, **k: None``) or put a fake module into
``sys.modules``. Test cells therefore never ``import helpers.grading``: each one executes
this file afresh under a unique module name, so every check runs the code on disk::

    import importlib.util as _ilu
    import pathlib as _pl
    import uuid as _uuid

    _path = _pl.Path(_ilu.find_spec("helpers").origin).with_name("grading.py")
    _spec = _ilu.spec_from_file_location(f"afz_grading_{_uuid.uuid4().hex}", _path)
    grading = _ilu.module_from_spec(_spec)
    _spec.loader.exec_module(grading)

Then, for example::

    out, w = grading.call_without(
        scaled_dot_product_attention, q, k, v, mask,
        forbidden=grading.ATTENTION_BUILTINS, what="scaled_dot_product_attention",
    )
    grading.assert_close(w, expected_w, "attention weights",
                         hint="did you take the softmax over the last axis (keys)?")

Rules for test cells
--------------------
* Expected values come from this module's own NumPy float64 references (``ref_*``) or
  from numbers written in the cell, never from ``helpers`` or ``torch`` modules that the
  learner's code could have patched.
* Run the learner's function through :func:`call_without` with the reference and the
  PyTorch built-in that do the same job in ``forbidden``. Calls are detected with a
  profiler hook by *code location* (file + qualified name) for Python code and by name for
  C built-ins, so aliases (``from helpers import x as y``), subclasses and fresh copies of
  the reference are caught too.
* Loading this module, :func:`assert_close` and :func:`call_without` run
  :func:`check_untampered`, which fails if the learner replaced a function of numpy, torch
  or the standard library (``np.allclose = lambda *a, **k: True``).
* Seed every input (:func:`rng`), keep tolerances per piece, and put a hint in every
  message: what was expected, what came out, and the likely mistake.

Typical-mistake table
---------------------
``tests/grading_cases.py`` holds ``MISTAKES = {assignment: [(name, old, new), ...]}``:
each entry replaces the exact text ``old`` (which must occur once in a solution region of
``solutions/<assignment>/<name>.ipynb``) by ``new``; ``tests/test_nbgrader.py`` autogrades
each mutated notebook with nbgrader and asserts that the score drops below full marks.

Grading environment
-------------------
Autograding (``course.py autograde``) runs each notebook in the ``afz-grader`` kernel inside
the grading sandbox (``autograder/``): ``OMP_NUM_THREADS=1`` and one CPU core (several kernels
share the machine), ``AFZ_KERNEL_MEMORY_MB`` (4096) of memory, no network, no file of the
course but ``helpers`` (read-only), and a per-cell limit of ``AFZ_CELL_TIMEOUT`` seconds (180).
Keep every cell, training included, well inside that on one thread.
``AFZ_TEST_ASSIGNMENTS=01_attention,02_multi_head pytest tests/test_nbgrader.py`` limits the
nbgrader tests to some assignments while others are drafted.
"""

from __future__ import annotations

import importlib
import inspect
import math
import os
import sys
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

# ---------------------------------------------------------------------------------------
# Forbidden references, by dotted name. Resolved lazily, so this module stays cheap.
# ---------------------------------------------------------------------------------------
SOFTMAX_BUILTINS = (
    "torch.softmax",
    "torch.nn.functional.softmax",
    "torch.Tensor.softmax",
    "torch.special.softmax",
)
ATTENTION_BUILTINS = (
    "helpers.attention.scaled_dot_product_attention",
    "torch.nn.functional.scaled_dot_product_attention",
    "torch.nn.MultiheadAttention",
    "torch.nn.functional.multi_head_attention_forward",
    "helpers.multi_head.MultiHeadAttention",
)
MASK_BUILTINS = (
    "helpers.attention.causal_mask",
    "helpers.attention.padding_mask",
    "helpers.attention.target_mask",
)
HEADS_BUILTINS = (
    "helpers.multi_head.split_heads",
    "helpers.multi_head.merge_heads",
)
MULTI_HEAD_BUILTINS = (
    "helpers.multi_head.MultiHeadAttention",
    "helpers.multi_head.split_heads",
    "helpers.multi_head.merge_heads",
    "torch.nn.MultiheadAttention",
    "torch.nn.functional.multi_head_attention_forward",
)


class ForbiddenCallError(AssertionError):
    """The learner's code called the reference or the built-in it is meant to replace."""


def rng(seed: int) -> np.random.Generator:
    """A seeded NumPy generator for test inputs."""
    return np.random.default_rng(seed)


def randn(seed: int, *shape: int, dtype: Any = None) -> Any:
    """A seeded ``torch`` tensor of standard normal values (float32 unless ``dtype``)."""
    import torch

    data = rng(seed).standard_normal(shape)
    return torch.tensor(data, dtype=dtype or torch.float32)


# ---------------------------------------------------------------------------------------
# Tampering: the checks below rely on numpy, torch and the standard library
# ---------------------------------------------------------------------------------------
def _library_dirs() -> tuple[str, ...]:
    import sysconfig

    paths = sysconfig.get_paths()
    dirs = {paths["purelib"], paths["platlib"], paths["stdlib"], os.path.dirname(__file__)}
    return tuple(os.path.realpath(d) + os.sep for d in dirs)


def check_untampered() -> None:
    """Fail if a function of numpy, torch, math, builtins, sys or importlib was replaced.

    A learner's ``np.allclose = lambda *a, **k: True`` is a function defined outside the
    installed libraries; these checks would trust it, so the test fails instead.
    """
    import builtins
    import importlib.util

    import torch
    import torch.nn.functional as F

    dirs = _library_dirs()
    spaces = {
        "numpy": np,
        "torch": torch,
        "torch.Tensor": torch.Tensor,
        "torch.nn.functional": F,
        "math": math,
        "builtins": builtins,
        "sys": sys,
        "importlib.util": importlib.util,
    }
    for label, space in spaces.items():
        for name, obj in list(vars(space).items()):
            if isinstance(obj, staticmethod | classmethod):
                obj = obj.__func__
            if not inspect.isfunction(obj):
                continue
            file = obj.__code__.co_filename
            if file.startswith("<frozen") or os.path.realpath(file).startswith(dirs):
                continue
            raise AssertionError(
                f"{label}.{name} was replaced by code defined in {file}; the tests cannot "
                "trust a patched library. Remove the cell that assigns to it and restart."
            )


# ---------------------------------------------------------------------------------------
# Conversions and comparisons
# ---------------------------------------------------------------------------------------
def to_numpy(x: Any, name: str = "value") -> np.ndarray:
    """``x`` (NumPy array, torch tensor, list, number) as a float64 NumPy array."""
    if hasattr(x, "detach") and hasattr(x, "cpu"):
        x = x.detach().cpu()
        if str(getattr(x, "dtype", "")) == "torch.bool":
            x = x.int()
        x = x.double().numpy()
    try:
        return np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError) as err:
        raise AssertionError(
            f"{name}: expected an array or tensor of numbers; got {type(x).__name__} "
            f"({err}). Did your function forget a `return`?"
        ) from None


def assert_shape(x: Any, expected: tuple[int, ...], name: str, hint: str = "") -> None:
    """Fail with a teaching message unless ``x.shape == expected``."""
    if x is None:
        raise AssertionError(f"{name}: got None. Did your function forget a `return`?")
    shape = tuple(getattr(x, "shape", np.shape(x)))
    if shape != tuple(expected):
        raise AssertionError(
            f"{name} should have shape {tuple(expected)}; got {shape}. {hint}".rstrip()
        )


def assert_close(
    actual: Any,
    expected: Any,
    name: str,
    atol: float = 1e-5,
    rtol: float = 1e-4,
    hint: str = "",
) -> None:
    """Fail unless ``actual`` has ``expected``'s shape and values (within atol + rtol·|e|)."""
    check_untampered()
    e = to_numpy(expected, "expected")
    assert_shape(actual, e.shape, name, hint)
    a = to_numpy(actual, name)
    if not np.all(np.isfinite(a)):
        raise AssertionError(
            f"{name} contains NaN or inf ({int(np.sum(~np.isfinite(a)))} entries). {hint}".rstrip()
        )
    err = np.abs(a - e)
    bad = err > atol + rtol * np.abs(e)
    if np.any(bad):
        idx = tuple(int(i) for i in np.argwhere(bad)[0])
        raise AssertionError(
            f"{name} is wrong at index {idx}: expected {e[idx]:.4f}, got {a[idx]:.4f} "
            f"(max abs error {err.max():.3g}, {int(bad.sum())} of {bad.size} entries off). "
            f"{hint}".rstrip()
        )


def assert_true(condition: bool, message: str) -> None:
    """``assert`` that survives ``python -O``."""
    if not condition:
        raise AssertionError(message)


# ---------------------------------------------------------------------------------------
# Forbidden-call detection
# ---------------------------------------------------------------------------------------
def _resolve(dotted: str) -> Any:
    parts = dotted.split(".")
    for i in range(len(parts) - 1, 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for attr in parts[i:]:
            obj = getattr(obj, attr)
        return obj
    raise ValueError(f"cannot resolve {dotted!r}")


def _real(path: str) -> str:
    return os.path.normcase(os.path.realpath(path))


class _Targets:
    """Code locations (file, qualname prefix) and built-in names to watch for."""

    def __init__(self, forbidden: Iterable[str]) -> None:
        self.code: dict[str, list[tuple[str, str]]] = {}  # file -> [(qualname, label)]
        self.builtin_names: dict[str, str] = {}
        self.builtin_ids: dict[int, str] = {}
        for dotted in forbidden:
            try:
                obj = _resolve(dotted)
            except (AttributeError, ValueError):
                continue
            obj = inspect.unwrap(obj) if callable(obj) else obj
            if inspect.isclass(obj):
                try:
                    file = inspect.getsourcefile(obj)
                except TypeError:
                    file = None
                if file:
                    self.code.setdefault(_real(file), []).append((obj.__qualname__ + ".", dotted))
            elif hasattr(obj, "__code__"):
                code = obj.__code__
                self.code.setdefault(_real(code.co_filename), []).append((code.co_qualname, dotted))
            else:  # a C built-in or method descriptor
                self.builtin_ids[id(obj)] = dotted
                name = getattr(obj, "__name__", None)
                if name:
                    self.builtin_names[name] = dotted
        self._file_cache: dict[str, str] = {}

    def match_code(self, code: Any) -> str | None:
        file = self._file_cache.get(code.co_filename)
        if file is None:
            file = self._file_cache[code.co_filename] = _real(code.co_filename)
        for qualname, label in self.code.get(file, ()):
            if code.co_qualname == qualname or (
                qualname.endswith(".") and code.co_qualname.startswith(qualname)
            ):
                return label
        return None

    def match_builtin(self, fn: Any) -> str | None:
        label = self.builtin_ids.get(id(fn))
        if label is None:
            label = self.builtin_names.get(getattr(fn, "__name__", None) or "")
        return label


def call_without(
    fn: Callable[..., Any],
    *args: Any,
    forbidden: Iterable[str],
    what: str | None = None,
    **kwargs: Any,
) -> Any:
    """Call ``fn(*args, **kwargs)`` and fail if it ran any of the ``forbidden`` references.

    ``forbidden`` holds dotted names (``"torch.nn.MultiheadAttention"``,
    ``"helpers.attention.scaled_dot_product_attention"``); a class forbids all its methods.
    """
    check_untampered()
    targets = _Targets(forbidden)
    hits: list[str] = []

    def hook(frame: Any, event: str, arg: Any) -> None:
        if event == "call":
            label = targets.match_code(frame.f_code)
        elif event == "c_call":
            label = targets.match_builtin(arg)
        else:
            return
        if label is not None and label not in hits:
            hits.append(label)

    what = what or getattr(fn, "__name__", type(fn).__name__)
    previous = sys.getprofile()
    sys.setprofile(hook)
    try:
        result = fn(*args, **kwargs)
    finally:
        still_ours = sys.getprofile() is hook
        sys.setprofile(previous)
    if not still_ours:
        raise ForbiddenCallError(
            f"{what} removed the grader's call monitor (sys.setprofile); the tests cannot "
            "check it. Do not change sys.setprofile/sys.settrace in your solution."
        )
    if hits:
        raise ForbiddenCallError(
            f"{what} calls {', '.join(hits)}, which does the job this exercise asks you to "
            "write yourself. Rewrite it with basic tensor operations (matmul, softmax, "
            "masked_fill, view/transpose, ...)."
        )
    return result


# ---------------------------------------------------------------------------------------
# NumPy float64 references (expected values for the tests)
# ---------------------------------------------------------------------------------------
def ref_softmax(x: Any, axis: int = -1) -> np.ndarray:
    """Numerically stable softmax in float64."""
    x = to_numpy(x)
    z = np.exp(x - x.max(axis=axis, keepdims=True))
    return z / z.sum(axis=axis, keepdims=True)


def ref_attention(q: Any, k: Any, v: Any, mask: Any = None) -> tuple[np.ndarray, np.ndarray]:
    """softmax(q kᵀ / √d_k) v in float64; ``mask`` True = may attend; fully masked rows → 0."""
    q, k, v = to_numpy(q), to_numpy(k), to_numpy(v)
    scores = q @ np.swapaxes(k, -1, -2) / math.sqrt(q.shape[-1])
    if mask is not None:
        m = np.broadcast_to(to_numpy(mask).astype(bool), scores.shape)
        scores = np.where(m, scores, -np.inf)
        row_max = np.max(np.where(m, scores, -1e300), axis=-1, keepdims=True)
        z = np.where(m, np.exp(scores - row_max), 0.0)
        total = z.sum(axis=-1, keepdims=True)
        weights = np.divide(z, total, out=np.zeros_like(z), where=total > 0)
    else:
        weights = ref_softmax(scores)
    return weights @ v, weights


def ref_split_heads(x: Any, num_heads: int) -> np.ndarray:
    """``(batch, seq, d_model)`` → ``(batch, heads, seq, d_head)``: head i = columns i·d_head…"""
    x = to_numpy(x)
    b, s, d = x.shape
    return x.reshape(b, s, num_heads, d // num_heads).transpose(0, 2, 1, 3)


def ref_merge_heads(x: Any) -> np.ndarray:
    """``(batch, heads, seq, d_head)`` → ``(batch, seq, heads·d_head)``."""
    x = to_numpy(x)
    b, h, s, d = x.shape
    return x.transpose(0, 2, 1, 3).reshape(b, s, h * d)


def ref_multi_head_attention(
    query: Any,
    key: Any,
    value: Any,
    num_heads: int,
    weights: dict[str, Any],
    mask: Any = None,
) -> np.ndarray:
    """Multi-head attention in float64 from ``weights`` = {"q_w", "q_b", ..., "o_w", "o_b"}."""
    w = {name: to_numpy(t) for name, t in weights.items()}

    def linear(x: np.ndarray, role: str) -> np.ndarray:
        return x @ w[f"{role}_w"].T + w[f"{role}_b"]

    q = ref_split_heads(linear(to_numpy(query), "q"), num_heads)
    k = ref_split_heads(linear(to_numpy(key), "k"), num_heads)
    v = ref_split_heads(linear(to_numpy(value), "v"), num_heads)
    out, _ = ref_attention(q, k, v, mask)
    return linear(ref_merge_heads(out), "o")


def copy_mha_weights(module: Any, torch_mha: Any) -> dict[str, np.ndarray]:
    """Copy ``nn.MultiheadAttention`` weights into ``module.{q,k,v,out}_proj`` (nn.Linear).

    Returns the same weights as float64 arrays for :func:`ref_multi_head_attention`.
    """
    import torch

    d = torch_mha.embed_dim
    w_q, w_k, w_v = torch_mha.in_proj_weight.detach().chunk(3)
    b_q, b_k, b_v = torch_mha.in_proj_bias.detach().chunk(3)
    o_w, o_b = torch_mha.out_proj.weight.detach(), torch_mha.out_proj.bias.detach()
    pairs = {
        "q_proj": (w_q, b_q),
        "k_proj": (w_k, b_k),
        "v_proj": (w_v, b_v),
        "out_proj": (o_w, o_b),
    }
    for name, (w, b) in pairs.items():
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
            proj.weight.copy_(w)
            proj.bias.copy_(b)
    return {
        "q_w": w_q, "q_b": b_q, "k_w": w_k, "k_b": b_k, "v_w": w_v, "v_b": b_v,
        "o_w": o_w, "o_b": o_b,
    }  # fmt: skip


# ---------------------------------------------------------------------------------------
# Assignments 03-06: positional encoding, encoder, decoder, training and decoding
# ---------------------------------------------------------------------------------------
POSITIONAL_BUILTINS = (
    "helpers.positional.sinusoidal_positional_encoding",
    "helpers.positional.PositionalEncoding",
    "helpers.positional.LearnedPositionalEncoding",
    "helpers.positional.TokenEmbedding",
)
ENCODER_BUILTINS = (
    "helpers.layers.FeedForward",
    "helpers.layers.AddNorm",
    "helpers.layers.EncoderLayer",
    "helpers.layers.Encoder",
    "torch.nn.TransformerEncoderLayer",
    "torch.nn.TransformerEncoder",
    "torch.nn.Transformer",
)
DECODER_BUILTINS = (
    "helpers.layers.DecoderLayer",
    "helpers.layers.Decoder",
    "torch.nn.TransformerDecoderLayer",
    "torch.nn.TransformerDecoder",
    "torch.nn.Transformer",
)
MODEL_BUILTINS = (
    "helpers.model.Transformer",
    "torch.nn.Transformer",
    "torch.nn.TransformerEncoder",
    "torch.nn.TransformerDecoder",
    "torch.nn.TransformerEncoderLayer",
    "torch.nn.TransformerDecoderLayer",
)
TRAINING_BUILTINS = (
    "helpers.training.train_step",
    "helpers.training.train",
    "helpers.training.sequence_loss",
)
DECODING_BUILTINS = (
    "helpers.decoding.greedy_decode",
    "helpers.decoding.beam_search",
    "helpers.decoding.next_token_logits",
    "helpers.training.exact_match",
)


def ref_positional_encoding(max_len: int, d_model: int) -> np.ndarray:
    """PE[pos, 2i] = sin(pos / 10000^(2i/d)), PE[pos, 2i+1] = cos(...), float64."""
    position = np.arange(max_len, dtype=np.float64)[:, None]
    angles = position / 10000.0 ** (np.arange(0, d_model, 2) / d_model)
    pe = np.zeros((max_len, d_model))
    pe[:, 0::2] = np.sin(angles)
    pe[:, 1::2] = np.cos(angles)
    return pe


def ref_relative_shift(k: int, d_model: int) -> np.ndarray:
    """The (d_model, d_model) matrix M with PE[pos + k] = PE[pos] @ M for every pos."""
    m = np.zeros((d_model, d_model))
    for i in range(d_model // 2):
        a = k / 10000.0 ** (2 * i / d_model)
        c, s = math.cos(a), math.sin(a)
        m[2 * i : 2 * i + 2, 2 * i : 2 * i + 2] = [[c, -s], [s, c]]
    return m


def module_weights(module: Any) -> dict[str, np.ndarray]:
    """Every entry of ``module.state_dict()`` as a float64 NumPy array, by name."""
    return {name: to_numpy(t, name) for name, t in module.state_dict().items()}


def randomize_(module: Any, seed: int) -> dict[str, np.ndarray]:
    """Give every parameter of ``module`` seeded values; return :func:`module_weights`.

    Matrices get N(0, 1/fan_in) entries; 1-D weights (LayerNorm scales) 1 + N(0, 0.2²);
    biases N(0, 0.1²). So a LayerNorm with swapped weight and bias is caught too.
    """
    import torch

    g = rng(seed)
    with torch.no_grad():
        for name, p in sorted(module.named_parameters()):
            if p.dim() > 1:
                values = g.standard_normal(tuple(p.shape)) / math.sqrt(p.shape[-1])
            elif name.endswith("weight"):
                values = 1.0 + 0.2 * g.standard_normal(tuple(p.shape))
            else:
                values = 0.1 * g.standard_normal(tuple(p.shape))
            p.copy_(torch.tensor(values, dtype=p.dtype))
    return module_weights(module)


def _weight(w: dict[str, np.ndarray], name: str) -> np.ndarray:
    if name not in w:
        close = sorted(n for n in w if n.rsplit(".", 1)[-1] == name.rsplit(".", 1)[-1])[:6]
        raise AssertionError(
            f"your module has no parameter named {name!r}; the task fixes the attribute "
            f"names. Parameters with the same ending that it has: {close or sorted(w)[:6]}"
        )
    return w[name]


def ref_layer_norm(x: Any, weight: Any, bias: Any, eps: float = 1e-5) -> np.ndarray:
    """LayerNorm over the last axis (biased variance, as torch.nn.LayerNorm)."""
    x = to_numpy(x)
    mean = x.mean(axis=-1, keepdims=True)
    var = x.var(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * to_numpy(weight) + to_numpy(bias)


def ref_feed_forward(x: Any, w: dict[str, np.ndarray], prefix: str = "") -> np.ndarray:
    """max(0, x W1ᵀ + b1) W2ᵀ + b2 from ``w[prefix + "linear1.weight"]`` etc."""
    h = to_numpy(x) @ _weight(w, prefix + "linear1.weight").T + _weight(w, prefix + "linear1.bias")
    h = np.maximum(h, 0.0)
    return h @ _weight(w, prefix + "linear2.weight").T + _weight(w, prefix + "linear2.bias")


def _mha_weights(w: dict[str, np.ndarray], prefix: str) -> dict[str, np.ndarray]:
    roles = {"q": "q_proj", "k": "k_proj", "v": "v_proj", "o": "out_proj"}
    out = {}
    for role, name in roles.items():
        out[f"{role}_w"] = _weight(w, f"{prefix}{name}.weight")
        out[f"{role}_b"] = _weight(w, f"{prefix}{name}.bias")
    return out


def ref_add_norm(
    x: Any,
    sublayer: Callable[[np.ndarray], np.ndarray],
    w: dict[str, np.ndarray],
    prefix: str,
    norm_first: bool,
) -> np.ndarray:
    """post-norm LayerNorm(x + sublayer(x)); pre-norm x + sublayer(LayerNorm(x)).

    The LayerNorm's parameters are ``w[prefix + "weight"]`` and ``w[prefix + "bias"]``.
    """
    x = to_numpy(x)

    def norm(y: np.ndarray) -> np.ndarray:
        return ref_layer_norm(y, _weight(w, prefix + "weight"), _weight(w, prefix + "bias"))

    if norm_first:
        return x + sublayer(norm(x))
    return norm(x + sublayer(x))


def ref_encoder_layer(
    x: Any,
    w: dict[str, np.ndarray],
    num_heads: int,
    mask: Any = None,
    norm_first: bool = False,
    prefix: str = "",
) -> np.ndarray:
    """Encoder layer (names as in ``helpers.EncoderLayer``) in float64."""
    attn = _mha_weights(w, prefix + "self_attn.")

    def self_attention(y: np.ndarray) -> np.ndarray:
        return ref_multi_head_attention(y, y, y, num_heads, attn, mask)

    x = ref_add_norm(x, self_attention, w, prefix + "attn_block.norm.", norm_first)

    def ffn(y: np.ndarray) -> np.ndarray:
        return ref_feed_forward(y, w, prefix + "feed_forward.")

    return ref_add_norm(x, ffn, w, prefix + "ff_block.norm.", norm_first)


def ref_decoder_layer(
    x: Any,
    memory: Any,
    w: dict[str, np.ndarray],
    num_heads: int,
    src_mask: Any = None,
    tgt_mask: Any = None,
    norm_first: bool = False,
    prefix: str = "",
) -> np.ndarray:
    """Decoder layer (names as in ``helpers.DecoderLayer``) in float64."""
    memory = to_numpy(memory)
    self_w = _mha_weights(w, prefix + "self_attn.")
    cross_w = _mha_weights(w, prefix + "cross_attn.")

    def self_attention(y: np.ndarray) -> np.ndarray:
        return ref_multi_head_attention(y, y, y, num_heads, self_w, tgt_mask)

    def cross_attention(y: np.ndarray) -> np.ndarray:
        return ref_multi_head_attention(y, memory, memory, num_heads, cross_w, src_mask)

    def ffn(y: np.ndarray) -> np.ndarray:
        return ref_feed_forward(y, w, prefix + "feed_forward.")

    x = ref_add_norm(x, self_attention, w, prefix + "self_attn_block.norm.", norm_first)
    x = ref_add_norm(x, cross_attention, w, prefix + "cross_attn_block.norm.", norm_first)
    return ref_add_norm(x, ffn, w, prefix + "ff_block.norm.", norm_first)


def _final_norm(x: np.ndarray, w: dict[str, np.ndarray], final_norm: bool) -> np.ndarray:
    if not final_norm:
        return x
    return ref_layer_norm(x, _weight(w, "norm.weight"), _weight(w, "norm.bias"))


def ref_encoder(
    x: Any,
    w: dict[str, np.ndarray],
    num_heads: int,
    num_layers: int,
    mask: Any = None,
    norm_first: bool = False,
    final_norm: bool | None = None,
) -> np.ndarray:
    """A stack ``layers.0 … layers.{n-1}`` (+ ``norm`` when ``final_norm``, default norm_first)."""
    x = to_numpy(x)
    for i in range(num_layers):
        x = ref_encoder_layer(x, w, num_heads, mask, norm_first, f"layers.{i}.")
    return _final_norm(x, w, norm_first if final_norm is None else final_norm)


def ref_decoder(
    x: Any,
    memory: Any,
    w: dict[str, np.ndarray],
    num_heads: int,
    num_layers: int,
    src_mask: Any = None,
    tgt_mask: Any = None,
    norm_first: bool = False,
    final_norm: bool | None = None,
) -> np.ndarray:
    """A decoder stack, like :func:`ref_encoder`."""
    x = to_numpy(x)
    for i in range(num_layers):
        x = ref_decoder_layer(
            x, memory, w, num_heads, src_mask, tgt_mask, norm_first, f"layers.{i}."
        )
    return _final_norm(x, w, norm_first if final_norm is None else final_norm)


def _torch_layer_state(layer: Any, prefix: str, out: dict[str, Any]) -> None:
    """Map one ``nn.TransformerEncoderLayer``/``DecoderLayer`` to the course's names."""
    attentions = [("self_attn", "self_attn")]
    norms = {"norm1": "attn_block.norm", "norm2": "ff_block.norm"}
    if hasattr(layer, "multihead_attn"):
        attentions.append(("multihead_attn", "cross_attn"))
        norms = {
            "norm1": "self_attn_block.norm",
            "norm2": "cross_attn_block.norm",
            "norm3": "ff_block.norm",
        }
    for theirs, ours in attentions:
        mha = getattr(layer, theirs)
        for kind in ("weight", "bias"):
            q, k, v = getattr(mha, f"in_proj_{kind}").detach().chunk(3)
            for role, t in (("q", q), ("k", k), ("v", v)):
                out[f"{prefix}{ours}.{role}_proj.{kind}"] = t
            out[f"{prefix}{ours}.out_proj.{kind}"] = getattr(mha.out_proj, kind).detach()
    for name in ("linear1", "linear2"):
        for kind in ("weight", "bias"):
            out[f"{prefix}feed_forward.{name}.{kind}"] = getattr(layer, name).get_parameter(kind)
    for theirs, ours in norms.items():
        for kind in ("weight", "bias"):
            out[f"{prefix}{ours}.{kind}"] = getattr(getattr(layer, theirs), kind).detach()


def copy_from_torch(ours: Any, theirs: Any, what: str) -> dict[str, np.ndarray]:
    """Load the weights of a ``torch.nn.TransformerEncoder(Layer)``/``Decoder(Layer)`` into the
    learner's module (course names: ``self_attn``, ``feed_forward.linear1``,
    ``attn_block.norm``, ``layers.0.…``, ``norm``); return :func:`module_weights` of it.
    """
    import torch

    state: dict[str, Any] = {}
    if hasattr(theirs, "layers"):
        for i, layer in enumerate(theirs.layers):
            _torch_layer_state(layer, f"layers.{i}.", state)
        if theirs.norm is not None:
            state["norm.weight"] = theirs.norm.weight.detach()
            state["norm.bias"] = theirs.norm.bias.detach()
    else:
        _torch_layer_state(theirs, "", state)
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
        with torch.no_grad():
            ours.load_state_dict({k: v.detach().clone() for k, v in state.items()})
    except RuntimeError as err:
        raise AssertionError(f"{what}: a parameter has the wrong shape: {err}") from None
    return module_weights(ours)


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


def ref_causal_mask(size: int) -> np.ndarray:
    """Boolean (size, size), True on and below the diagonal."""
    return np.tril(np.ones((size, size), dtype=bool))


def ref_label_smoothed_loss(
    logits: Any, targets: Any, pad_id: int = 0, smoothing: float = 0.1
) -> float:
    """Mean over non-pad targets of (1-ε)·(-log p[target]) + ε·mean_v(-log p[v])."""
    z = to_numpy(logits)
    t = to_numpy(targets).astype(np.int64)
    z = z - z.max(axis=-1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(axis=-1, keepdims=True))
    nll = -np.take_along_axis(logp, t[..., None], axis=-1)[..., 0]
    smooth = -logp.mean(axis=-1)
    keep = t != pad_id
    return float((((1 - smoothing) * nll + smoothing * smooth) * keep).sum() / keep.sum())


def ref_label_smoothed_grad(
    logits: Any, targets: Any, pad_id: int = 0, smoothing: float = 0.1
) -> np.ndarray:
    """d loss / d logits of :func:`ref_label_smoothed_loss`, same shape as ``logits``."""
    z = to_numpy(logits)
    t = to_numpy(targets).astype(np.int64)
    p = np.exp(z - z.max(axis=-1, keepdims=True))
    p /= p.sum(axis=-1, keepdims=True)
    q = np.full_like(p, smoothing / p.shape[-1])
    np.put_along_axis(q, t[..., None], 1 - smoothing + smoothing / p.shape[-1], axis=-1)
    keep = (t != pad_id)[..., None]
    return (p - q) * keep / keep.sum()


def reverse_task(n: int, seq_len: int, vocab_size: int, seed: int) -> tuple[Any, Any]:
    """Held-out reversal data made here (not by helpers): ``(src, tgt)`` LongTensors
    ``(n, seq_len + 1)``, tokens in [3, vocab_size), each row ending in EOS = 2."""
    import torch

    body = rng(seed).integers(3, vocab_size, size=(n, seq_len))
    eos = np.full((n, 1), 2)
    src = np.concatenate([body, eos], axis=1)
    tgt = np.concatenate([body[:, ::-1], eos], axis=1)
    return torch.tensor(src, dtype=torch.long), torch.tensor(tgt.copy(), dtype=torch.long)


def exact_match(predicted: Any, expected: Any, pad_id: int = 0) -> float:
    """Fraction of rows equal up to trailing padding (both ``(batch, len)``)."""
    p, e = to_numpy(predicted, "predicted tokens"), to_numpy(expected, "expected tokens")
    if p.ndim != 2 or p.shape[0] != e.shape[0]:
        raise AssertionError(
            f"decoded tokens should have shape (batch={e.shape[0]}, length); got {p.shape}"
        )
    width = max(p.shape[1], e.shape[1])
    p = np.pad(p, ((0, 0), (0, width - p.shape[1])), constant_values=pad_id)
    e = np.pad(e, ((0, 0), (0, width - e.shape[1])), constant_values=pad_id)
    return float((p == e).all(axis=1).mean())


def reference_greedy(model: Any, src: Any, max_len: int, bos_id: int = 1, eos_id: int = 2) -> Any:
    """The grader's own greedy decoding through ``model.encode``/``model.decode`` (logits)."""
    import torch

    pad_id = 0
    was_training = model.training
    model.eval()
    try:
        with torch.no_grad():
            src_mask = (src != pad_id)[:, None, None, :]
            memory = model.encode(src, src_mask)
            ys = torch.full((src.size(0), 1), bos_id, dtype=torch.long)
            done = torch.zeros(src.size(0), dtype=torch.bool)
            for _ in range(max_len):
                n = ys.size(1)
                tgt_mask = torch.ones(n, n, dtype=torch.bool).tril()
                logits = model.decode(ys, memory, src_mask, tgt_mask)
                nxt = logits[:, -1].argmax(dim=-1).masked_fill(done, pad_id)
                ys = torch.cat([ys, nxt[:, None]], dim=1)
                done |= nxt == eos_id
                if bool(done.all()):
                    break
    finally:
        model.train(was_training)
    return ys[:, 1:]


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
        if tgt_mask is None or not np.array_equal(
            np.broadcast_to(to_numpy(tgt_mask).astype(bool), (tgt.size(0), 1, n, n)),
            np.broadcast_to(ref_causal_mask(n), (tgt.size(0), 1, n, n)),
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


def bigram_grad(
    table: Any, tgt_in: Any, labels: Any, pad_id: int = 0, smoothing: float = 0.1
) -> np.ndarray:
    """Gradient of the label-smoothed loss of :func:`make_bigram_model` w.r.t. its table."""
    table = to_numpy(table)
    tgt_in = to_numpy(tgt_in).astype(np.int64)
    dlogits = ref_label_smoothed_grad(table[tgt_in], labels, pad_id, smoothing)
    grad = np.zeros_like(table)
    np.add.at(grad, tgt_in.reshape(-1), dlogits.reshape(-1, table.shape[-1]))
    return grad


def check_teacher_forcing(
    seen: dict[str, Any], src: Any, labels: Any, pad_id: int = 0, bos_id: int = 1
) -> None:
    """Check what a training step fed the model (a call recorded by the bigram model)."""
    src_np, y = to_numpy(src).astype(np.int64), to_numpy(labels).astype(np.int64)
    b, n = y.shape
    real = y != pad_id
    assert_true(
        seen["src"] is not None and np.array_equal(to_numpy(seen["src"]), src_np),
        "the model should get the source ids `src` unchanged as its first argument",
    )
    tgt_in = seen["tgt"]
    assert_shape(tgt_in, (b, n), "the decoder input", "it should have the labels' shape.")
    tgt_in = to_numpy(tgt_in).astype(np.int64)
    shifted = np.concatenate([np.full((b, 1), bos_id), y[:, :-1]], axis=1)
    if not np.array_equal(tgt_in[real], shifted[real]):
        row = int(np.argwhere((tgt_in != shifted) & real)[0][0])
        raise AssertionError(
            f"the decoder input should be the labels shifted right (BOS first): for labels "
            f"{y[row].tolist()} expected {shifted[row].tolist()}, got {tgt_in[row].tolist()}. "
            "Without the shift each position reads the very token it must predict."
        )
    for name, got, expected, shape in (
        (
            "src_mask",
            seen["src_mask"],
            (src_np != pad_id)[:, None, None, :],
            (b, 1, n, src_np.shape[1]),
        ),
        ("tgt_mask", seen["tgt_mask"], None, (b, 1, n, n)),
    ):
        assert_true(got is not None, f"the model should get a {name}; it got None")
        try:
            m = np.broadcast_to(to_numpy(got).astype(bool), shape)
        except ValueError:
            raise AssertionError(
                f"{name} of shape {tuple(got.shape)} does not broadcast to {shape}"
            ) from None
        if expected is None:
            expected = np.broadcast_to(ref_causal_mask(n), shape)
            rows = np.broadcast_to(real[:, None, :, None], shape)  # queries with a real label
            ok = np.array_equal(m[rows], expected[rows])
            hint = "it should be causal (query i sees keys j <= i) and hide padding"
        else:
            ok = np.array_equal(m, np.broadcast_to(expected, shape))
            hint = "it should be True exactly where the source token is not padding"
        assert_true(ok, f"{name} is wrong: {hint} (True = may attend).")


check_untampered()  # also when a test cell loads this module
