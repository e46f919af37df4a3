"""The contract sweep's probes: a graded piece used the way the course uses it, recorded.

The grader declares, per exercise, which probes each graded piece goes through
(``autograder/contracts.py``) and appends them to that piece's test cell as hidden checks; the
replay runs them with the solution and the kernel with the learner's code. Each probe calls the
learner's function or module through ``Test.call`` and records small fingerprints of what came
back (:func:`fingerprint`: a norm, a sum and a few entries, never a whole tensor), so that the
verdicts are reached outside the kernel like every other check:

* :func:`backward`: outputs and the gradients of a fixed weighted sum of them, with respect to
  every input and every parameter (eval mode); in training mode, that backward runs at all
  (an in-place operation on a tensor autograd saved breaks it) and which parameters get a
  gradient;
* :func:`dtypes`: the dtype and the values of the results for each input dtype;
* :func:`sizes`: the results for sizes past the small examples (batch 1, length 1, more than
  512 positions, ...);
* :func:`call_order`: the results of calls with different sizes in both orders, and of a call
  after an earlier result was changed in place (a cached table, a view of module state).

Every check's name starts with the clause it belongs to, which the message repeats.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

FINGERPRINT_ENTRIES = 6
BACKWARD_SEED = 7919  # the weights of the weighted sum whose gradients are compared


def fingerprint(x: Any) -> Any:
    """A small record of ``x``: for a tensor or an array, its size, norm and sum and its first
    entries (float64, NaN where it has fewer); a tuple or list, one such row per element;
    anything else as it is."""
    import numpy as np

    if isinstance(x, tuple | list):
        rows = [fingerprint(v) for v in x]
        if all(isinstance(r, np.ndarray) for r in rows) and rows:
            return np.stack(rows)
        return rows
    if hasattr(x, "detach") and hasattr(x, "double"):  # a torch tensor
        x = x.detach().cpu()
        x = x.double().numpy() if x.is_floating_point() else x.numpy()
    if isinstance(x, np.ndarray | np.generic):
        a = np.asarray(x, dtype=np.float64).reshape(-1)
        head = np.full(FINGERPRINT_ENTRIES, np.nan)
        head[: min(a.size, FINGERPRINT_ENTRIES)] = a[:FINGERPRINT_ENTRIES]
        return np.concatenate([[a.size, np.linalg.norm(a), a.sum()], head])
    return x


def _dtypes(x: Any) -> Any:
    if isinstance(x, tuple | list):
        return [_dtypes(v) for v in x]
    dtype = getattr(x, "dtype", None)
    return str(dtype) if dtype is not None else type(x).__name__


def _tensors(x: Any) -> list[Any]:
    if isinstance(x, tuple | list):
        return [t for v in x for t in _tensors(v)]
    return [x] if hasattr(x, "requires_grad") and x.is_floating_point() else []


def seeded(module: Any, seed: int) -> Any:
    """``module`` with seeded weights (``checks.fixtures.randomize_``), returned."""
    from .fixtures import randomize_

    randomize_(module, seed)
    return module


def backward(
    t: Any,
    label: str,
    piece: Any,
    inputs: Sequence[Any],
    *,
    train: bool = False,
    what: str,
    forbidden: Sequence[str] = (),
    parameters: bool = True,
    by_name: bool = True,
    module: Any = None,
) -> None:
    """Call ``piece`` (a module, already built and seeded, or a function) on ``inputs``, send
    a fixed weighted sum of its float outputs back, and record the outputs and the gradients
    (eval mode), or that backward ran and which parameters and embedding rows got no
    gradient (``train``; ``by_name=False``: how many, where the task does not name the
    parts). ``module``: the module whose parameters count, when ``piece`` is a function that
    calls it (with a mask, say)."""
    import torch

    from .fixtures import randn

    module = piece if isinstance(piece, torch.nn.Module) else module
    if module is not None:
        module.train(train)
    leaves = [x.detach().clone().requires_grad_() if _tensors(x) else x for x in inputs]
    with torch.enable_grad():  # whatever a scratch cell set (torch.set_grad_enabled(False))
        out = t.call(piece, *leaves, forbidden=forbidden, what=what)
    outputs = _tensors(out)
    if not outputs or not any(o.requires_grad for o in outputs):
        raise AssertionError(
            f"{label}: the result carries no gradient (detached, computed under no_grad or "
            "rebuilt from numbers), so nothing it was computed from can learn. "
            "结果不带梯度（被 detach、在 no_grad 下计算或由数字重建），计算它的参数学不到东西。"
        )
    try:
        with torch.enable_grad():
            loss = sum(
                (o * randn(BACKWARD_SEED + i, *o.shape, dtype=o.dtype)).sum()
                for i, o in enumerate(outputs)
            )
            loss.backward()
    except RuntimeError as err:
        mode = "in training mode" if train else "in eval mode"
        raise AssertionError(
            f"{label}: backward failed {mode} ({str(err).splitlines()[0][:200]}). An in-place "
            "operation (masked_fill_, add_, +=, x[...] = ...) on a tensor that backward needs? "
            "反向传播失败：是否对反向传播需要的张量做了原地修改？"
        ) from None
    named = sorted(module.named_parameters()) if module is not None and parameters else []
    if train:
        silent = [name for name, p in named if p.grad is None or not bool(p.grad.any())]
        t.equal(
            f"{label}: parameters that get no gradient in training mode",
            silent if by_name else len(silent),
            hint="every parameter the solution trains must get a gradient in training mode: "
            "is a part skipped, detached or replaced in training mode? "
            "训练模式下，答案训练的每个参数都应得到梯度。",
        )
        rows = 0
        for part in module.modules() if module is not None else ():
            if isinstance(part, torch.nn.Embedding) and part.weight.grad is not None:
                rows += int((part.weight.grad.abs().sum(dim=1) == 0).sum())
        t.equal(
            f"{label}: embedding rows that get no gradient",
            rows,
            hint="every token the batch holds must send a gradient to its embedding row: a "
            "padding_idx, or a row kept out of training? "
            "批次中出现的每个词元都应让它的嵌入行得到梯度。",
        )
        return
    for i, o in enumerate(outputs):
        t.close(f"{label}: output {i}", fingerprint(o))
    hint = (
        "the gradients differ from the solution's although the output may not: is a path "
        "detached (.detach(), .data, torch.no_grad, a NumPy round trip), or a value "
        "changed in place after it was used? "
        "梯度与答案不同：是否有一条路径被截断，或某个值用过之后被原地修改？"
    )

    def grad(x: Any) -> Any:  # none arrived: zeros, so that the message can say what it means
        return x.grad if x.grad is not None else torch.zeros_like(x)

    for i, x in enumerate(leaves):
        if _tensors(x):
            t.close(f"{label}: gradient of input {i}", fingerprint(grad(x)), hint=hint)
    for name, p in named:
        t.close(f"{label}: gradient of {name}", fingerprint(grad(p)), hint=hint)


def dtypes(
    t: Any,
    label: str,
    call: Callable[[Any], Any],
    cast: Callable[[str], Any],
    kinds: Sequence[str],
    *,
    hint: str = "",
) -> None:
    """For each dtype name in ``kinds``: ``call(cast(kind))`` (the inputs in that dtype, the
    learner's piece called through ``t.call`` inside ``call``), its results' dtypes and values.
    Float64 values are compared to float64's precision: a result computed in float32 and
    converted back fails."""
    for kind in kinds:
        out = call(cast(kind))
        t.equal(
            f"{label}: the dtype of the result for {kind} inputs",
            _dtypes(out),
            hint=hint
            or f"{kind} inputs give {kind} results (the text says: in the dtype of the inputs). "
            f"输入是 {kind}，结果也应是 {kind}。",
        )
        t.equal(f"{label}: the shape of the result for {kind} inputs", _shapes(out))
        precise = kind.endswith("64")
        t.close(
            f"{label}: the result for {kind} inputs",
            fingerprint(out),
            atol=1e-12 if precise else 1e-5,
            rtol=1e-9 if precise else 1e-4,
            hint="computed in another precision than the inputs'? 计算精度与输入不同？"
            if precise
            else "",
        )


def sizes(
    t: Any,
    label: str,
    calls: Sequence[tuple[str, Callable[[], Any]]],
    *,
    values: bool = True,
) -> None:
    """Each ``(what, call)``: the result of ``call()`` (which calls the learner's piece through
    ``t.call``) for a size the small examples do not use. ``values=False``: its shape and
    that every number is finite, where the task leaves the parts' names (and so their seeded
    weights) to the learner."""
    import numpy as np

    for what, call in calls:
        out = call()
        t.equal(f"{label}: the shape for {what}", _shapes(out))
        if not values:
            finite = bool(np.isfinite(np.asarray(fingerprint(out), dtype=float)[..., :3]).all())
            t.equal(f"{label}: every number finite for {what}", finite)
            continue
        t.close(
            f"{label}: the result for {what}",
            fingerprint(out),
            hint="a size fixed in advance (a table of 512 positions, a cached shape)? "
            "是否把某个尺寸写死了（例如只算 512 个位置的表，或缓存了形状）？",
        )


def call_order(
    t: Any,
    label: str,
    first: Callable[[], Any],
    second: Callable[[], Any],
    alike: Callable[[], Any] | None = None,
) -> None:
    """``first()``, ``second()``, ``first()`` again, ``alike()`` (the first call's sizes with
    other values), then ``first()`` once more after the previous result was changed in place:
    each compared with the solution's, so that a value kept from an earlier call (a length, a
    table, a mask, a cache keyed by shape, a view of module state) shows."""
    hint = (
        "a value kept from an earlier call (a cached length, table or mask), or a result that "
        "is a view of the module's state? 是否保留了上一次调用的值，或者返回了模块状态的视图？"
    )
    steps = [("the first call", first), ("the second call", second)]
    steps.append(("the first call again", first))
    if alike is not None:
        steps.append(("a call with the first's sizes and other values", alike))
    for step, call in steps:
        out = call()
        t.equal(f"{label}: the shape of {step}", _shapes(out))
        t.close(f"{label}: {step}", fingerprint(out), hint=hint)
    _change_in_place(first())
    t.close(
        f"{label}: a call after the caller changed an earlier result in place",
        fingerprint(first()),
        hint=hint,
    )


def _shapes(x: Any) -> Any:
    if isinstance(x, tuple | list):
        return [_shapes(v) for v in x]
    shape = getattr(x, "shape", None)
    return [int(n) for n in shape] if shape is not None else type(x).__name__


def _change_in_place(x: Any) -> None:
    """What a caller may do to a result it owns: add one to it (flip a mask)."""
    import numpy as np

    if isinstance(x, tuple | list):
        for v in x:
            _change_in_place(v)
        return
    if hasattr(x, "detach"):
        import torch

        with torch.no_grad():
            target = x.detach()
            if target.dtype == torch.bool:
                target.logical_not_()
            else:
                target.add_(1)
    elif isinstance(x, np.ndarray) and x.flags.writeable:
        if x.dtype == bool:
            np.logical_not(x, out=x)
        else:
            x += 1
