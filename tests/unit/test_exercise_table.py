"""The exercise table (checks/exercises.py) is the one declaration of what each exercise builds
and forbids: everything else that says it is derived from it or checked against it here.

- the grader's absent pieces (autograder/pieces.py) and the named forbidden lists
  (checks/forbidden.py, exported by checks) come from it;
- each solution notebook's test cells import exactly the lists its exercise declares;
- each notebook's introduction, in English and in its Chinese catalog, names only what is
  forbidden, and every forbidden piece of the course that the grading kernel still has;
- helpers' lazy exports keep each built module's names under that module (hiding it hides
  only them);
- the contract sweep (autograder/contracts.py) is keyed by the same exercises.
"""

from __future__ import annotations

import importlib
import json
import re
from pathlib import Path

import pytest
from babel.messages.pofile import read_po

import checks
import checks.forbidden
import checks.watch
import helpers
from autograder import contracts, pieces
from checks.exercises import BY_NAME, EXERCISES, FORBIDDEN, forbidden_lists, hidden_while_graded

REPO = Path(__file__).resolve().parents[2]
CATALOGS = REPO / "locale" / "zh_CN" / "LC_MESSAGES" / "exercises"
NAMES = [e.name for e in EXERCISES]


def notebook(name: str) -> dict:
    (path,) = sorted((REPO / "solutions" / name).glob("*.ipynb"))
    return json.loads(path.read_text(encoding="utf-8"))


def source(cell: dict) -> str:
    text = cell.get("source", "")
    return "".join(text) if isinstance(text, list) else text


def intro(name: str) -> str:
    """The exercise's introduction: the notebook's first Markdown cell."""
    return next(source(c) for c in notebook(name)["cells"] if c["cell_type"] == "markdown")


def intro_zh(name: str) -> str | None:
    """The Chinese translation of the introduction, paragraph by paragraph, from the released
    notebook's catalog; None where the exercise has no catalog."""
    (path,) = sorted((REPO / "solutions" / name).glob("*.ipynb"))
    po = CATALOGS / name / f"{path.stem}.po"
    if not po.is_file():
        return None
    with po.open("rb") as f:
        catalog = read_po(f, locale="zh_CN")
    flat = " ".join(intro(name).split())
    found = [m.string for m in catalog if m.id and isinstance(m.id, str) and m.id in flat]
    return "\n".join(s for s in found if isinstance(s, str))


def named(text: str) -> set[str]:
    """The course's and PyTorch's names a text gives in code spans (``helpers`` alone means
    the whole reference): ``helpers.X`` as ``helpers.<module>.X``, ``torch.nn.Foo(Layer)`` as
    both names, ``torch.nn.Foo*`` as every forbidden name it starts."""
    spans = re.findall(r"`([^`\n]+)`", text)
    found: set[str] = set()
    for span in spans:
        if span == "helpers":
            found.add("helpers")
        elif span.startswith("helpers."):
            rest = span.removeprefix("helpers.")
            home = helpers._HOME.get(rest)
            found.add(f"helpers.{home}.{rest}" if home else span)
        elif span.startswith("torch."):
            if m := re.fullmatch(r"([\w.]+)\((\w+)\)", span):
                found |= {m.group(1), m.group(1) + m.group(2)}
            elif span.endswith("*"):
                some = {n for ns in FORBIDDEN.values() for n in ns if n.startswith(span[:-1])}
                found |= some or {span}  # a pattern that matches nothing is not forbidden
            else:
                found.add(span)
    return found


def intro_problems(name: str, text: str) -> list[str]:
    """What the introduction ``text`` of exercise ``name`` says wrong about its table entry."""
    forbidden = {n for ns in forbidden_lists(name).values() for n in ns}
    hidden = hidden_while_graded(name)
    said = named(text)
    problems = []
    for n in sorted(said - forbidden - {"helpers"}):
        attr = n.removeprefix("helpers.")
        homes = [f.removeprefix("helpers.") for f in forbidden if f.endswith(f".{attr}")]
        if n.startswith("helpers.") and homes:
            # a forbidden reference that helpers does not export by its name
            path = "helpers/" + homes[0].rpartition(".")[0].replace(".", "/") + ".py"
            problems.append(f"names `{n}`: add {attr} to __all__ in {path}")
        else:
            problems.append(f"names `{n}` as forbidden, which no list of {name} forbids")
    # a forbidden piece of the course that the grading kernel still has must be named
    for n in sorted(forbidden):
        module, _, attr = n.removeprefix("helpers.").rpartition(".")
        if n.startswith("helpers.") and module not in hidden and attr in helpers.__all__:
            if n not in said:
                problems.append(f"does not name `helpers.{attr}`, forbidden and importable")
    # each module it builds: the reference as a whole, or one of its forbidden names
    for module in BY_NAME[name].builds:
        own = {n for n in forbidden if n.startswith(f"helpers.{module}.")}
        if own and "helpers" not in said and not own & said:
            problems.append(f"says nothing of the reference helpers.{module} it asks to write")
    return problems


# ---------------------------------------------------------------------------------------
# derived
# ---------------------------------------------------------------------------------------
def test_the_grader_hides_what_the_table_says():
    assert pieces.PIECES == {e.name: e.builds for e in EXERCISES}
    for i, e in enumerate(EXERCISES):
        later = {m for x in EXERCISES[i:] for m in x.builds}
        assert set(pieces.absent_modules(e.name)) == later
        assert all(pieces.absent_modules(e.name)[m] == e.name for m in e.builds)
    assert pieces.absent_modules("07_unknown") == {}


def test_every_list_has_its_name_and_each_is_declared_once():
    declared = [n for e in EXERCISES for n in e.forbids]
    assert len(declared) == len(set(declared)), "a list declared by two exercises"
    for e in EXERCISES:
        assert set(e.also_forbids) <= set(declared), e.name
        earlier = {n for x in EXERCISES[: NAMES.index(e.name)] for n in x.forbids}
        assert set(e.also_forbids) <= earlier, f"{e.name} borrows a list of a later exercise"
    exported = {n for n in dir(checks.forbidden) if n.endswith("_BUILTINS")}
    assert exported == set(FORBIDDEN), "checks/forbidden.py: one name per declared list"
    for n in FORBIDDEN:
        assert getattr(checks.forbidden, n) == FORBIDDEN[n]
        assert n in checks.__all__ and getattr(checks, n) == FORBIDDEN[n], n


def test_every_forbidden_name_exists():
    """A renamed helpers function or a PyTorch name that moved would otherwise be watched for
    in vain: each dotted name resolves here, where every module is present."""
    names = sorted({n for ns in FORBIDDEN.values() for n in ns})
    missing = [n for n in names if checks.watch._resolve(n) is None]
    assert missing == []


def test_each_built_module_exists_and_is_placed_once():
    modules = [m for e in EXERCISES for m in e.builds]
    assert len(modules) == len(set(modules)), "a module built by two exercises"
    for m in modules:
        assert (REPO / "helpers" / f"{m}.py").is_file(), m


# ---------------------------------------------------------------------------------------
# checked equal
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", NAMES)
def test_the_test_cells_import_the_declared_lists(name):
    used = set()
    for cell in notebook(name)["cells"]:
        if cell["cell_type"] == "code":
            used |= set(re.findall(r"\b[A-Z][A-Z_]*_BUILTINS\b", source(cell)))
    assert used == set(forbidden_lists(name)), "checks/exercises.py and the test cells differ"


@pytest.mark.parametrize("name", NAMES)
def test_the_introduction_names_the_forbidden_pieces(name):
    assert intro_problems(name, intro(name)) == []
    chinese = intro_zh(name)
    if chinese is not None:
        assert chinese, f"{name}: the catalog has no translation of the introduction"
        assert named(chinese) == named(intro(name)), "the Chinese introduction names others"


def test_the_introduction_check_fails_on_a_drift():
    text = intro("05_decoder")
    dropped = text.replace("`helpers.causal_mask`,", "")
    assert dropped != text
    assert "does not name `helpers.causal_mask`, forbidden and importable" in intro_problems(
        "05_decoder", dropped
    )
    promised = intro("04_encoder") + " Nor `helpers.Decoder`."
    assert any("`helpers.decoder.Decoder`" in p for p in intro_problems("04_encoder", promised))
    silent = re.sub(r"`helpers[^`]*`", "`x`", intro("03_positional_encoding"))
    assert any("helpers.positional" in p for p in intro_problems("03_positional_encoding", silent))


def test_a_reference_left_out_of_the_lazy_exports_is_named(monkeypatch):
    """A new reference class forbidden and named in the introduction, but not exported by
    helpers: the check says where to export it."""
    monkeypatch.delitem(helpers._HOME, "AddNorm")
    assert "names `helpers.AddNorm`: add AddNorm to __all__ in helpers/layers.py" in (
        intro_problems("04_encoder", intro("04_encoder"))
    )


def test_hiding_a_built_module_hides_only_its_own_names():
    """helpers exports each name lazily from the module whose ``__all__`` lists it: a name
    listed by a module it is only imported into would vanish while that module is hidden, or
    stay while its real home is hidden."""
    built = {m for e in EXERCISES for m in e.builds}
    wrong = []
    for name, module in helpers._HOME.items():
        if module.split(".")[0] not in built:
            continue
        value = getattr(importlib.import_module(f"helpers.{module}"), name)
        home = getattr(value, "__module__", f"helpers.{module}")
        if home != f"helpers.{module}":
            wrong.append(f"{name}: listed under {module}, defined in {home}")
    for n in {n for ns in FORBIDDEN.values() for n in ns if n.startswith("helpers.")}:
        module, _, attr = n.removeprefix("helpers.").rpartition(".")
        if attr in helpers._HOME and helpers._HOME[attr] != module:
            wrong.append(f"{n}: helpers exports {attr} from {helpers._HOME[attr]}")
    assert wrong == []


def test_the_contract_sweep_is_keyed_by_the_same_exercises():
    assert list(contracts.CONTRACTS) == NAMES
