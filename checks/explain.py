"""What an error raised by a learner's function means, in words that say what to fix.

``explained(err, what, fn, args, kwargs)`` is the error that :meth:`checks.Test.call`
raises when the learner's code crashes inside a test: the same kind of exception, whose
message keeps the original one and adds

* the call as the test made it, with each input's shape and dtype;
* what the exercise expects (the first paragraph of the function's docstring);
* what the error usually means in these exercises, and the likely mistake.

``meaning(text)`` is the last part alone; the grader also adds it to errors raised outside a
call (in the test cell's own code, on a learner's result).

In the learner's own Jupyter, such an error (and a failed check) is shown by
:func:`rendered`: the message first, then at most a few lines of the notebook's own cells that
led to it; the frames of the course's packages and of the libraries are left out (IPython
shows an exception's ``_render_traceback_()`` instead of its traceback).
"""

from __future__ import annotations

import inspect
import linecache
import re
import traceback
from collections.abc import Callable
from types import TracebackType
from typing import Any

MARK = "What this means here:"
MAX_DOC = 400
MAX_FRAMES = 2  # frames of the notebook's cells shown under a failure's message
MAX_LINES = 3  # lines of each frame's statement
_RED, _GREEN, _PLAIN = "\x1b[0;31m", "\x1b[0;32m", "\x1b[0m"

_DTYPE_HELP = (
    "Two tensors of different dtypes met in one operation: float32 ('Float', what the "
    "course's tensors and layers use) and float64 ('Double'). A tensor built from NumPy "
    "(np.arange, np.exp, ... give float64) or with dtype=torch.float64 is the usual cause. "
    "Build new tensors in the input's dtype: torch.arange(n, dtype=x.dtype), "
    "torch.tensor(values, dtype=torch.float32), or convert with .to(x.dtype)."
)

# (pattern on "ExceptionName: message", what it means). The first match wins; patterns may
# name groups that the text uses.
RULES: list[tuple[str, str]] = [
    (
        r"^NotImplementedError:?\s*$",
        "This part is not written yet: replace `raise NotImplementedError()` with your code.",
    ),
    (
        r"same dtype|expected scalar type (Float|Double) but found (Float|Double)|"
        r"[Ff]ound dtype (Float|Double) but expected (Float|Double)|float != double|"
        r"double != float|Float and Double|Double and Float",
        _DTYPE_HELP,
    ),
    (
        r"shape '\[(?P<shape>[^\]]*)\]' is invalid for input of size (?P<size>\d+)",
        "A view/reshape asked for shape [{shape}], which does not hold the tensor's {size} "
        "numbers. Take the sizes from the tensor itself (batch, seq, _ = x.shape) instead of "
        "fixed numbers, and check which axis is which: splitting heads is (batch, seq, "
        "num_heads, d_model // num_heads), merging them back is (batch, seq, num_heads * "
        "d_head) after moving the head axis back next to d_head; keys and values have k_len "
        "positions, queries q_len.",
    ),
    (
        r"view size is not compatible with input tensor's size and stride",
        "After transpose or permute a tensor is not contiguous in memory, so .view cannot "
        "regroup its axes: use .reshape(...), or .contiguous().view(...).",
    ),
    (
        r"mat1 and mat2 shapes cannot be multiplied \((?P<a>\d+)x(?P<b>\d+) and "
        r"(?P<c>\d+)x(?P<d>\d+)\)",
        "A linear layer (or matrix product) got an input whose last axis has {b} numbers, but it "
        "expects {c}. An nn.Linear(in, out) needs inputs (..., in): check which size each layer "
        "was built with (d_model -> d_ff, then d_ff -> d_model; d_model -> d_model in attention) "
        "and that it is applied to the tensor you meant.",
    ),
    (
        r"size of tensor a \((?P<a>\d+)\) must match the size of tensor b \((?P<b>\d+)\) at "
        r"non-singleton dimension (?P<dim>\d+)",
        "Two tensors do not broadcast: one has {a} entries on axis {dim} of the result, the "
        "other {b}. Usual causes here: a mask of the wrong shape (a key/padding mask is "
        "(batch, 1, 1, k_len), a causal mask (q_len, q_len)), positions longer than the "
        "sequence (slice the table: pe[:seq_len]), heads not split or merged, or scores "
        "(q_len, k_len) mixed up with (k_len, q_len) when q_len != k_len, or k.T on a tensor "
        "with more than 2 axes (it reverses every axis; use k.transpose(-2, -1)).",
    ),
    (
        r"The shape of the mask \[(?P<m>[^\]]*)\] at index \d+ does not match the shape of the "
        r"indexed tensor \[(?P<t>[^\]]*)\]",
        "Indexing with a boolean mask (scores[~mask] = ...) needs a mask of exactly the "
        "indexed tensor's shape [{t}], but the mask is [{m}]: a causal (q_len, k_len) or "
        "padding (batch, 1, 1, k_len) mask only broadcasts. Use "
        "scores.masked_fill(~mask, float('-inf')) or torch.where(mask, scores, ...).",
    ),
    (
        r"Dimension out of range \(expected to be in range of \[(?P<lo>-?\d+), (?P<hi>-?\d+)\], "
        r"but got (?P<got>-?\d+)\)",
        "The code asks for axis {got} of a tensor that has only {hi} + 1 axes. Count axes from "
        "the end (dim=-1 the last, -2 the one before) so that the code works with and without "
        "leading batch and head axes.",
    ),
    (
        r"too many indices for (tensor|array) of dimension (?P<n>\d+)",
        "The code indexes more axes than the tensor has ({n}). Count axes from the end, or "
        "check which tensor this is (a 2-D mask is not (batch, heads, q, k)).",
    ),
    (
        r"number of dims don't match in permute|permute\(sparse_coo\)",
        "permute needs one entry per axis of the tensor; for two axes use transpose(-2, -1).",
    ),
    (
        r"masked_fill.*(Bool|bool)|expected.*mask.*(bool|Bool)|mask.*must be.*bool",
        "masked_fill needs a boolean mask (dtype=torch.bool). Build masks from comparisons "
        "((tokens != pad_id), torch.ones(...).tril() == 1, or torch.ones(..., dtype=torch.bool)).",
    ),
    (
        r"Boolean value of Tensor with more than one value is ambiguous|"
        r"truth value of an array with more than one element is ambiguous",
        "Python's `if`, `and`, `or` and `not` need one True/False, but got a whole tensor. "
        "Combine masks element by element with &, | and ~ (not `and`, `or`, `not`).",
    ),
    (
        r"'NoneType' object|NoneType|cannot unpack non-iterable NoneType",
        "A value was None where a tensor was needed: does every path of your function end "
        "with `return ...`? (A forward that computes the result but forgets to return it "
        "gives None.)",
    ),
    (
        r"index out of range in self",
        "An embedding got a token id outside 0 .. num_embeddings - 1. Build nn.Embedding with "
        "the vocabulary size and pass token ids, not positions, embeddings or a shifted "
        "sequence.",
    ),
    (
        r"modified by an inplace operation",
        "An operation in place (add_, masked_fill_, +=, x[...] = ...) changed a tensor that "
        "backpropagation still needs. Use the out-of-place versions (masked_fill, x = x + y).",
    ),
    (
        r"leaf Variable that requires grad is being used in an in-place operation",
        "The code changes a parameter in place during forward. Compute new tensors "
        "(x = x + y) instead of writing into a parameter.",
    ),
    (
        r"Expected target size \[(?P<t>[^\]]*)\], got \[(?P<g>[^\]]*)\]",
        "cross_entropy reads axis 1 as the classes, so 3-D logits (batch, length, vocab) "
        "do not fit targets (batch, length). Flatten both: logits.reshape(-1, vocab) and "
        "targets.reshape(-1) (or pass logits.transpose(1, 2)).",
    ),
    (
        r"Expected input batch_size \((?P<a>\d+)\) to match target batch_size \((?P<b>\d+)\)",
        "cross_entropy got {a} rows of logits but {b} targets. Flatten both the same way: "
        "logits.reshape(-1, vocab) and targets.reshape(-1), with the targets shifted to match "
        "the decoder's input.",
    ),
    (
        r"expected scalar type Long|Expected floating point type for target|"
        r"expected .*Long.* but (got|found) .*Float|target.*must be.*(int|Long)",
        "Targets of cross_entropy are class ids (an integer tensor, torch.long), one per "
        "position; the logits are the floats.",
    ),
    (
        r"\"bitwise_(and|or|xor|not)\w*\" not implemented for '(Float|Double)'",
        "&, | and ~ combine boolean tensors, but one of these is a float 0/1 matrix. Build "
        "masks as torch.bool: comparisons (tokens != pad_id) or "
        "torch.ones(n, n, dtype=torch.bool).tril().",
    ),
    (
        r"output with shape \[(?P<o>[^\]]*)\] doesn't match the broadcast shape "
        r"\[(?P<b>[^\]]*)\]",
        "An in-place operation (&=, +=, mul_, masked_fill_) cannot grow a tensor [{o}] to "
        "the broadcast shape [{b}]. Write a new tensor instead: mask = padding & causal.",
    ),
    (
        r"not implemented for '(Long|Int|Bool)'|result type Float can't be cast to the desired "
        r"output type (Long|Int)",
        "A float operation ran on an integer (or boolean) tensor. Tensors of numbers to compute "
        "with need a float dtype: torch.arange(n, dtype=torch.float32), or .float().",
    ),
    (
        r"missing \d+ required positional argument|takes \d+ positional arguments? but \d+ "
        r"(were|was) given|got an unexpected keyword argument|got multiple values for argument",
        "The test calls the function with the arguments the exercise gives it (see the call "
        "above). Keep the signature of the exercise's template: same arguments, same order, "
        "same defaults.",
    ),
    (
        r"operands could not be broadcast together with (remapped )?shapes (?P<s>.*)",
        "Two NumPy arrays do not broadcast ({s}). Keep the reduced axis with keepdims=True "
        "(x.max(axis=axis, keepdims=True)), and transpose K (K.T) in Q @ K.T.",
    ),
    (
        r"matmul: Input operand \d+ has a mismatch in its core dimension",
        "A matrix product whose inner sizes differ: A @ B needs A (.., n, k) and B (.., k, m). "
        "Scores are Q @ K.T (keys transposed); the output is weights @ V.",
    ),
    (
        r"must be Tensor, not (?P<t>\w+)|expected Tensor as element|"
        r"'(?P<t2>numpy\.ndarray|list)' object has no attribute",
        "A torch function got a NumPy array or a list, or a NumPy value got a torch method. "
        "Stay with one library per exercise: torch.as_tensor(x) to convert, x.size(-1) / "
        "x.shape[-1] for sizes.",
    ),
    (
        r"Tensors must have same number of dimensions|Sizes of tensors must match except in "
        r"dimension (?P<d>\d+)",
        "torch.cat joins tensors along one axis; all other axes must agree. Check the shapes "
        "of the pieces (a start token is (batch, 1); the tokens so far are (batch, length)).",
    ),
    (
        r"Given normalized_shape=\[(?P<n>\d+)\], expected input with shape \[\*, (?P=n)\]",
        "LayerNorm(d_model) normalises the last axis, which must have d_model = {n} numbers: "
        "apply it to (batch, seq, d_model) tensors, not to scores or heads.",
    ),
    (
        r"object is not callable",
        "The code calls something that is not a function: a tensor or number stored under a "
        "name that was meant for a layer (self.norm = ... overwritten?), or a module attribute "
        "shadowed by a variable.",
    ),
    (
        r"has no attribute '(?P<attr>\w+)'",
        "The code uses an attribute `{attr}` that does not exist on that object. Check the "
        "names the exercise asks for (linear1, linear2, norm, dropout, self_attn, ...) and "
        "that __init__ creates them.",
    ),
    (
        r"^RecursionError",
        "The function ends up calling itself without end: a method that "
        "calls itself (forward calling self(...), say) instead of the layer it wraps.",
    ),
    (
        r"^ZeroDivisionError",
        "A division by zero: check the sizes you divide by "
        "(d_model // num_heads, sqrt(d_k), the number of real tokens).",
    ),
]
_COMPILED = [(re.compile(p, re.S), m) for p, m in RULES]


def meaning(text: str) -> str:
    """What the error ``text`` ("Name: message") usually means in these exercises, or ""."""
    for pattern, message in _COMPILED:
        match = pattern.search(text)
        if match:
            groups = {k: (v or "?") for k, v in match.groupdict().items()}
            try:
                return message.format(**groups)
            except (KeyError, IndexError):
                return message
    return ""


def describe(value: Any, depth: int = 0) -> str:
    """One input in a few words: ``float32 tensor (2, 5, 8)``, ``int 4``, ``EncoderLayer``."""
    if hasattr(value, "dtype") and hasattr(value, "shape"):
        dtype = str(value.dtype).removeprefix("torch.")
        kind = "tensor" if type(value).__module__.startswith("torch") else "array"
        return f"{dtype} {kind} {tuple(int(n) for n in value.shape)}"
    if value is None or isinstance(value, bool | int | float):
        return f"{type(value).__name__} {value!r}"
    if isinstance(value, str):
        return repr(value[:40])
    if isinstance(value, list | tuple) and depth < 1:
        inner = ", ".join(describe(v, depth + 1) for v in value[:4])
        more = ", ..." if len(value) > 4 else ""
        return f"{type(value).__name__} [{inner}{more}]"
    if callable(value) and getattr(value, "__name__", None):
        return f"function {value.__name__}"
    return type(value).__name__


def _contract(fn: Callable[..., Any]) -> str:
    doc = inspect.getdoc(fn) or ""
    if not doc and not inspect.isroutine(fn):  # a module instance: its forward, then its class
        doc = inspect.getdoc(getattr(type(fn), "forward", None)) or inspect.getdoc(type(fn)) or ""
    doc = " ".join(doc.split("\n\n")[0].split())
    return doc if len(doc) <= MAX_DOC else doc[: MAX_DOC - 1] + "…"


def _signature(fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[str]:
    try:
        if inspect.isroutine(fn) or inspect.isclass(fn):  # a function, or a class built
            names = list(inspect.signature(fn).parameters)
        else:  # a module instance, called: its forward
            names = list(inspect.signature(type(fn).forward).parameters)[1:]  # type: ignore[attr-defined]
    except (TypeError, ValueError, AttributeError):
        names = []
    parts = []
    for i, a in enumerate(args):
        label = names[i] if i < len(names) else f"arg{i + 1}"
        parts.append(f"{label}={describe(a)}")
    parts += [f"{k}={describe(v)}" for k, v in kwargs.items()]
    return parts


def explained(
    err: BaseException,
    what: str,
    fn: Callable[..., Any],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
) -> BaseException:
    """``err`` as the same kind of exception, with the call, the contract and its meaning."""
    original = f"{type(err).__name__}: {err}".strip()
    if MARK in str(err):  # already explained (a call inside a call)
        return err
    lines = [
        f"{what} raised {original}",
        f"The test called {what}({', '.join(_signature(fn, args, kwargs))}).",
    ]
    contract = _contract(fn)
    if contract:
        lines.append(f"The exercise expects: {contract}")
    hint = meaning(original)
    if hint:
        lines.append(f"{MARK} {hint}")
    text = "\n".join(lines)
    try:
        new = type(err)(text)
        if str(new) != text:
            raise TypeError
    except Exception:  # noqa: BLE001 - an exception class with another constructor
        new = RuntimeError(text)
    return new


def _cell_names() -> dict[str, int]:
    """``{file name IPython compiled a cell under: its execution count}`` ({} outside IPython)."""
    try:
        from IPython import get_ipython
    except ImportError:
        return {}
    shell = get_ipython()
    names = getattr(getattr(shell, "compile", None), "_filename_map", None)
    return dict(names) if isinstance(names, dict) else {}


def _cell_lines(tb: TracebackType | None) -> list[str]:
    """The frames of ``tb`` that run a notebook cell, one line each."""
    cells = _cell_names()
    shown = []
    for frame in traceback.extract_tb(tb):
        if frame.filename not in cells:
            continue  # the course's packages, the libraries, IPython
        where = f"Cell In[{cells[frame.filename]}], line {frame.lineno}"
        if frame.name != "<module>":
            where += f", in {frame.name}"
        shown.append(f"{_GREEN}{where}:{_PLAIN}\n{_statement(frame)}")
    return shown


def _statement(frame: traceback.FrameSummary) -> str:
    """The lines of the statement ``frame`` ran (at most :data:`MAX_LINES`), indented."""
    first = frame.lineno or 0
    last = min(frame.end_lineno or first, first + MAX_LINES - 1)
    lines = [linecache.getline(frame.filename, n).rstrip() for n in range(first, last + 1)]
    lines = [line for line in lines if line.strip()] or [(frame.line or "").strip()]
    indent = min(len(line) - len(line.lstrip()) for line in lines)
    return "\n".join("    " + line[indent:] for line in lines)


def rendered(err: BaseException) -> list[str]:
    """What Jupyter shows for ``err``: its kind and message, then the notebook's own lines that
    led to it (the test's line, then those of the error it explains, when it explains one)."""
    lines = f"{_RED}{type(err).__name__}{_PLAIN}: {err}".splitlines()
    cell_lines = _cell_lines(err.__traceback__)
    cause = err.__cause__
    if cause is not None and cause is not err:
        cell_lines += _cell_lines(cause.__traceback__)
    cell_lines = cell_lines[-MAX_FRAMES:]
    return lines + [part for cell in cell_lines for part in ["", *cell.splitlines()]]


def render_in_jupyter(err: BaseException) -> None:
    """Have Jupyter show ``err`` by :func:`rendered` (an exception's own attribute, which IPython
    reads in place of its traceback)."""
    try:
        err._render_traceback_ = lambda: rendered(err)  # type: ignore[attr-defined]
    except AttributeError:  # an exception class with __slots__
        pass


def check_returns(result: Any, n: int, what: str) -> None:
    """``result`` must be a tuple (or list) of ``n`` values, as ``out, weights = f(...)``."""
    if isinstance(result, tuple | list) and len(result) == n:
        return
    got = describe(result)
    if isinstance(result, tuple | list):
        got = f"{len(result)} values"
    raise TypeError(
        f"{what} should return {n} values (a tuple, as in `a, b = {what}(...)`); it returned "
        f"{got}. {MARK} Return all of them, in the order the exercise gives (attention: "
        "`return output, weights`)."
    )
