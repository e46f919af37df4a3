"""A class of exercise 01 for ``python -m course similarity``: honest learners who each wrote
their own correct answers, and planted copies.

Every function of the exercise (its five solution cells) has seven correct ways of writing it
below (the first is the reference solution; others follow the correct alternatives of
tests/grading_cases/01_attention.py and go further). Honest learner (a, b), for a, b in
0..6, writes cell j in way (a + b·j) mod 7: two honest learners share the way of at most one
cell (two lines of the plane Z₇² meet at most once), as learners working alone on a short
exercise may. 49 honest learners.

The planted copies (each of an honest learner, or of a copy):

- ``copy_renamed``: every variable renamed;
- ``copy_reordered``: the helper functions of the attention cell in another order, and
  renamed;
- ``copy_commented``: every comment reworded, comments and blank lines added, spacing changed;
- ``copy_of_copy``: a copy of ``copy_renamed``, renamed again and commented.
"""

from __future__ import annotations

import copy
import json
import re

from support.submissions import A1, exercise, read

GRADE_IDS = ["softmax", "attention_numpy", "causal_mask", "padding_mask", "sdpa"]
PLACEHOLDER = "    # YOUR CODE HERE\n    raise NotImplementedError()"

SOFTMAX = [
    """x = np.asarray(x)
shifted = x - x.max(axis=axis, keepdims=True)
e = np.exp(shifted)
return e / e.sum(axis=axis, keepdims=True)""",
    """arr = np.array(x, dtype=np.result_type(x, np.float32), copy=True)
arr -= np.max(arr, axis=axis, keepdims=True)
np.exp(arr, out=arr)
arr /= np.sum(arr, axis=axis, keepdims=True)
return arr""",
    """m = np.amax(x, axis=axis, keepdims=True)
z = np.exp(np.subtract(x, m))
total = np.add.reduce(z, axis=axis, keepdims=True)
return np.divide(z, total)""",
    """moved = np.moveaxis(np.asarray(x), axis, -1)
top = moved.max(-1)[..., None]
ex = np.exp(moved - top)
out = ex / ex.sum(-1)[..., None]
return np.moveaxis(out, -1, axis)""",
    """x = np.asarray(x)
biggest = np.max(x, axis, keepdims=True)
lse = biggest + np.log(np.sum(np.exp(x - biggest), axis, keepdims=True))
return np.exp(x - lse)""",
    """peak = np.expand_dims(np.max(x, axis=axis), axis)
numer = np.exp(x - peak)
denom = np.expand_dims(numer.sum(axis=axis), axis)
return numer / denom""",
    """def one(row):
    row = row - row.max()
    w = np.exp(row)
    return w / w.sum()
return np.apply_along_axis(one, axis, np.asarray(x))""",
]

ATTENTION_NUMPY = [
    """d_k = Q.shape[-1]
scores = Q @ K.T / math.sqrt(d_k)
weights = softmax(scores, axis=-1)
return weights @ V, weights""",
    """scale = 1.0 / float(np.sqrt(K.shape[1]))
logits = np.matmul(Q, K.transpose()) * scale
probs = softmax(logits, axis=1)
return np.matmul(probs, V), probs""",
    """n = Q.shape[1]
s = np.einsum("qd,kd->qk", Q, K) / n ** 0.5
w = softmax(s)
out = np.einsum("qk,kv->qv", w, V)
return out, w""",
    """sims = np.dot(Q, K.T)
sims = sims / math.sqrt(K.shape[-1])
att = softmax(sims, -1)
result = np.dot(att, V)
return result, att""",
    """rows = []
for q in Q:
    rows.append(softmax(K @ q / math.sqrt(len(q))))
w = np.stack(rows)
return w @ V, w""",
    """QK = np.tensordot(Q, K, axes=([1], [1]))
A = softmax(QK * (1 / math.sqrt(Q.shape[1])), axis=-1)
return np.tensordot(A, V, axes=1), A""",
    """scaled_q = Q / math.sqrt(Q.shape[-1])
weights = softmax(scaled_q.dot(K.T))
return weights.dot(V), weights""",
]

CAUSAL = [
    """if size < 1:
    raise ValueError(f"causal_mask needs a positive size; got {size}")
return torch.ones(size, size, dtype=torch.bool).tril()""",
    """if size <= 0:
    raise ValueError("size must be at least 1")
idx = torch.arange(size)
return idx[:, None] >= idx[None, :]""",
    """if not size >= 1:
    raise ValueError(size)
upper = torch.triu(torch.ones(size, size), diagonal=1)
return upper == 0""",
    """if size < 1:
    raise ValueError("a mask needs size >= 1")
m = torch.zeros((size, size), dtype=torch.bool)
for i in range(size):
    m[i, : i + 1] = True
return m""",
    """assert_ok = size >= 1
if not assert_ok:
    raise ValueError("bad size")
return torch.tril(torch.full((size, size), True))""",
    """if size < 1:
    raise ValueError(f"size={size}")
rows = torch.arange(size).unsqueeze(1)
cols = torch.arange(size).unsqueeze(0)
return cols.le(rows)""",
    """if size < 1:
    raise ValueError("size should be positive")
return ~torch.ones(size, size, dtype=torch.bool).triu(1)""",
]

PADDING = [
    """return (tokens != pad_id)[:, None, None, :]""",
    """return tokens.ne(pad_id).unsqueeze(1).unsqueeze(2)""",
    """keep = tokens != pad_id
return keep.view(tokens.size(0), 1, 1, tokens.size(1))""",
    """return torch.logical_not(tokens == pad_id).reshape(tokens.shape[0], 1, 1, -1)""",
    """b, n = tokens.shape
return (tokens - pad_id).bool().reshape(b, 1, 1, n)""",
    """return torch.where(tokens == pad_id, False, True)[:, None, None]""",
    """real = ~tokens.eq(pad_id)
return real[:, None][:, :, None]""",
]

# Way 1 of the attention cell defines helpers before the function (HELPERS), the body calls them.
HELPERS = '''def _scores(q, k):
    """Scaled scores of every query against every key."""
    return torch.matmul(q, k.transpose(-1, -2)) / (q.shape[-1] ** 0.5)


def _apply_mask(scores, mask):
    """Scores with the masked places at the smallest number of their dtype."""
    if mask is None:
        return scores
    return scores.masked_fill(mask.logical_not(), torch.finfo(scores.dtype).min)


'''
SDPA = [
    """d_k = q.size(-1)
scores = q @ k.transpose(-2, -1) / math.sqrt(d_k)
if mask is not None:
    scores = scores.masked_fill(~mask, float("-inf"))
weights = torch.softmax(scores, dim=-1)
return weights @ v, weights""",
    """w = torch.softmax(_apply_mask(_scores(q, k), mask), dim=-1)
return torch.matmul(w, v), w""",
    """scores = torch.einsum("...qd,...kd->...qk", q, k) / math.sqrt(k.shape[-1])
if mask is not None:
    scores = torch.where(mask, scores, torch.full_like(scores, float("-inf")))
attn = scores.softmax(dim=-1)
return torch.einsum("...qk,...kv->...qv", attn, v), attn""",
    """dk = q.size(-1)
logits = (q / math.sqrt(dk)) @ k.transpose(-1, -2)
if mask is not None:
    logits = logits.masked_fill(mask == 0, -1e9)
p = torch.nn.functional.softmax(logits, dim=-1)
return p @ v, p""",
    """s = q.matmul(k.mT) * (1.0 / math.sqrt(q.shape[-1]))
if mask is not None:
    s = s.masked_fill(~mask.bool(), float("-inf"))
s = s - s.amax(dim=-1, keepdim=True)
e = s.exp()
w = e / e.sum(dim=-1, keepdim=True)
return w.matmul(v), w""",
    """out_scale = k.shape[-1] ** -0.5
attn_logits = q @ k.swapaxes(-2, -1)
attn_logits = attn_logits * out_scale
if mask is not None:
    attn_logits = attn_logits.masked_fill(mask.logical_not(), -float("inf"))
weights = torch.nn.functional.softmax(attn_logits, -1)
output = weights @ v
return output, weights""",
    """if mask is None:
    mask = torch.ones(q.shape[-2], k.shape[-2], dtype=torch.bool)
neg = torch.tensor(float("-inf"), dtype=q.dtype)
raw = torch.matmul(q, torch.transpose(k, -2, -1)).div(math.sqrt(q.shape[-1]))
probs = torch.softmax(torch.where(mask, raw, neg), dim=-1)
return probs @ v, probs""",
]
WAYS = [SOFTMAX, ATTENTION_NUMPY, CAUSAL, PADDING, SDPA]


def indent(code: str) -> str:
    return "\n".join("    " + line if line else "" for line in code.split("\n"))


def notebook(bodies: list[str], helpers: str = "") -> dict:
    """The released exercise with each solution cell's placeholder replaced by its body
    (``helpers`` before the attention function's definition)."""
    nb = copy.deepcopy(read(exercise(A1)))
    for cell in nb["cells"]:
        gid = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
        if gid in GRADE_IDS and cell["metadata"]["nbgrader"].get("solution"):
            source = "".join(cell["source"])
            assert PLACEHOLDER in source, gid
            body = bodies[GRADE_IDS.index(gid)]
            source = source.replace(PLACEHOLDER, indent(body))
            if gid == "sdpa" and helpers:
                source = helpers + source
            cell["source"] = source
    return nb


def honest() -> dict[str, dict]:
    """The 49 honest learners' notebooks: ``honest_a_b``."""
    out = {}
    for a in range(7):
        for b in range(7):
            ways = [(a + b * j) % 7 for j in range(5)]
            bodies = [WAYS[j][w] for j, w in enumerate(ways)]
            out[f"honest_{a}_{b}"] = notebook(bodies, HELPERS if ways[4] == 1 else "")
    return out


def ways_of(name: str) -> list[int]:
    a, b = map(int, name.split("_")[1:])
    return [(a + b * j) % 7 for j in range(5)]


def rename(nb: dict, names: dict[str, str]) -> dict:
    """``nb`` with the names renamed in its solution cells (whole words)."""
    nb = copy.deepcopy(nb)
    pattern = re.compile(r"\b(" + "|".join(map(re.escape, names)) + r")\b")
    for cell in nb["cells"]:
        if cell.get("metadata", {}).get("nbgrader", {}).get("solution"):
            source = "".join(cell["source"])
            cell["source"] = pattern.sub(lambda m: names[m.group(1)], source)
    return nb


RENAMES = {
    "shifted": "centred",
    "e": "expd",
    "scores": "sc",
    "weights": "attn",
    "d_k": "depth",
    "logits": "lg",
    "probs": "pr",
    "arr": "buf",
    "m": "mx",
    "z": "zz",
    "total": "tot",
    "moved": "mv",
    "top": "hi",
    "ex": "exps",
    "biggest": "big",
    "lse": "norm",
    "peak": "pk",
    "numer": "num",
    "denom": "den",
    "one": "row_softmax",
    "row": "r",
    "w": "ww",
    "scale": "factor",
    "n": "dim",
    "s": "ss",
    "sims": "sim",
    "att": "at",
    "result": "outv",
    "rows": "acc",
    "QK": "qk",
    "A": "aa",
    "scaled_q": "qs",
    "idx": "pos",
    "upper": "up",
    "i": "ii",
    "assert_ok": "ok",
    "cols": "cc",
    "keep": "flag",
    "b": "bs",
    "real": "rl",
    "dk": "d",
    "p": "pp",
    "out_scale": "mul",
    "attn_logits": "al",
    "output": "o",
    "neg": "ninf",
    "raw": "rw",
    "_scores": "_qk_scores",
    "_apply_mask": "_masked",
}
RENAMES_AGAIN = {v: v + "_2" for v in RENAMES.values()}


def comment(nb: dict) -> dict:
    """``nb`` with a comment on every line of its solution cells' code, blank lines added,
    and spaces around operators changed."""
    nb = copy.deepcopy(nb)
    for cell in nb["cells"]:
        if cell.get("metadata", {}).get("nbgrader", {}).get("solution"):
            lines = "".join(cell["source"]).split("\n")
            out, in_doc = [], False
            for line in lines:
                if line.strip().startswith('"""') or in_doc:
                    if line.count('"""') == 1:
                        in_doc = not in_doc
                    out.append(line)
                    continue
                if line.strip() and not line.strip().startswith(("def ", "#", "@")):
                    line = line.replace(" = ", "=").replace(", ", ",")
                    out.append(line + "  # my own step")
                    out.append("")
                else:
                    out.append(line)
            cell["source"] = "\n".join(out)
    return nb


def reorder_helpers(nb: dict) -> dict:
    """``nb`` with the attention cell's two helpers swapped and placed after the function."""
    nb = copy.deepcopy(nb)
    for cell in nb["cells"]:
        if cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") == "sdpa":
            source = "".join(cell["source"])
            assert source.startswith(HELPERS)
            first, second = HELPERS.strip().split("\n\n\n")
            cell["source"] = source[len(HELPERS) :] + "\n\n\n" + second + "\n\n\n" + first + "\n"
    return nb


def planted(honest_class: dict[str, dict]) -> tuple[dict[str, dict], set[frozenset[str]]]:
    """The planted copies and every planted pair (copy and original, copies of one origin)."""
    with_helpers = next(n for n in sorted(honest_class) if ways_of(n)[4] == 1)
    renamed = rename(honest_class["honest_0_1"], RENAMES)
    copies = {
        "copy_renamed": renamed,
        "copy_reordered": rename(reorder_helpers(honest_class[with_helpers]), RENAMES),
        "copy_commented": comment(honest_class["honest_3_2"]),
        "copy_of_copy": comment(rename(renamed, RENAMES_AGAIN)),
    }
    pairs = {
        frozenset({"copy_renamed", "honest_0_1"}),
        frozenset({"copy_of_copy", "honest_0_1"}),
        frozenset({"copy_of_copy", "copy_renamed"}),
        frozenset({"copy_reordered", with_helpers}),
        frozenset({"copy_commented", "honest_3_2"}),
    }
    return copies, pairs


def dumps(nb: dict) -> str:
    return json.dumps(nb, indent=1, ensure_ascii=False)
