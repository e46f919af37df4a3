"""A learner with only the released notebooks and the course's wheel, on their own computer.

The learners' environment is built from scratch in a fresh venv by the very commands that
exercises.md gives for a laptop (read from the page, so the test runs what the page says), with
pip as this machine configures it, in a folder outside the repository that holds only what the
instructor hands out: the released notebooks (``exercises/``) and the wheel (built as ``make
release`` builds it). Then, with that
environment alone:

- through nbclient, each of the six notebooks answered with the solution passes its visible
  checks, and answered with a typical mistake fails them with the teaching message on top;
- in a real JupyterLab of that environment, driven in Chromium, exercise 01 does the same, and
  the launcher offers no kernel but the learner's.

One venv serves every test here (a module fixture): installing it takes most of the time.
(PyTorch's CPU index that the documented command names is out of this machine's reach: pip
finds the same torch==2.13.0+cpu wheel in its configured find-links folder, and PIP_RETRIES=0
keeps it from retrying the unreachable index for every package.)
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout
from support import REPO
from support.learner import answered, documented_commands
from support.submissions import ASSIGNMENTS, exercise

from course.wheel import write_wheel

ANSI = re.compile(r"\x1b\[[0-9;]*m")
LAPTOP = "### On your own computer"

# Per exercise: a typical mistake (tests/grading_cases/) that the visible checks catch, and
# what the first line of the learner's error must say.
WRONG = {
    "01_attention": ("softmax over the wrong axis", "row sums of softmax(scores) (axis=-1)"),
    "02_multi_head": (
        "heads merged without transposing back",
        "the heads are not moved back next to d_head",
    ),
    "03_positional_encoding": ("sin and cos swapped", "sin and cos are swapped"),
    "04_encoder": (
        "no ReLU in the feed-forward network",
        "there is no ReLU between linear1 and linear2",
    ),
    "05_decoder": (
        "causal mask off by one (sees the next token)",
        "so each position also sees the next one",
    ),
    "06_train_and_generate": ("no label smoothing", "there is no label smoothing"),
}

# Run by the learner's Python: one notebook through nbclient, in the learner's kernel; prints
# the first error's traceback lines (IPython's rendering), or null, and the code cells not run.
RUN_NOTEBOOK = """
import json, sys
import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

path = sys.argv[1]
nb = nbformat.read(path, as_version=4)
folder = str(__import__("pathlib").Path(path).parent)
client = NotebookClient(
    nb, timeout=900, kernel_name="python3", resources={"metadata": {"path": folder}}
)
try:
    client.execute()
except CellExecutionError:
    pass
errors = [o for c in nb.cells for o in c.get("outputs", []) if o.output_type == "error"]
unrun = [i for i, c in enumerate(nb.cells) if c.cell_type == "code" and not c.execution_count]
print(json.dumps({"error": errors[0].traceback if errors else None, "unrun": unrun}))
"""


def learner_env() -> dict[str, str]:
    """The environment of a learner's terminal: none of the repository's venv or packages."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    bin_dir = str(Path(sys.executable).parent)
    env["PATH"] = os.pathsep.join(p for p in env["PATH"].split(os.pathsep) if p != bin_dir)
    env.pop("CHECKS_MODE", None)
    env["PIP_RETRIES"] = "0"
    return env


@pytest.fixture(scope="module")
def learner(tmp_path_factory) -> Path:
    """A folder outside the repository with the released notebooks, the wheel and the venv
    ``afz`` built by exercises.md's commands for a laptop."""
    folder = tmp_path_factory.mktemp("learner")
    assert not folder.resolve().is_relative_to(REPO)
    write_wheel(folder)  # what `make release` writes beside the notebooks
    commands = documented_commands((REPO / "exercises.md").read_text(encoding="utf-8"), LAPTOP)
    assert commands[-1] == "afz/bin/jupyter lab", commands  # started by the test, not here
    started = time.monotonic()
    for command in commands[:-1]:
        done = subprocess.run(
            command, shell=True, cwd=folder, env=learner_env(), capture_output=True, text=True
        )
        assert done.returncode == 0, f"{command}:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    print(f"learner install: {time.monotonic() - started:.0f} s")
    return folder


def python(folder: Path) -> Path:
    return folder / "afz" / "bin" / "python"


def write(folder: Path, name: str, nb: dict) -> Path:
    path = folder / name
    path.write_text(json.dumps(nb, indent=1, ensure_ascii=False))
    return path


def run(folder: Path, notebook: Path) -> dict:
    done = subprocess.run(
        [python(folder), "-c", RUN_NOTEBOOK, notebook],
        cwd=folder,
        env=learner_env(),
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_environment_is_the_documented_one(learner):
    """PyTorch's CPU build, the course's packages from the wheel (not PyPI's `checks` or
    `helpers`), nothing of the repository on the path, and no grader."""
    probe = (
        "import json, torch, checks, helpers, importlib.util as u\n"
        "print(json.dumps([torch.__version__, torch.version.cuda, checks.__file__,"
        " helpers.__file__, u.find_spec('course'), u.find_spec('nbgrader')]))"
    )
    done = subprocess.run(
        [python(learner), "-c", probe], cwd=learner, env=learner_env(), capture_output=True,
        text=True,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    version, cuda, checks_file, helpers_file, course, nbgrader = json.loads(done.stdout)
    assert version == "2.13.0+cpu" and cuda is None
    for file in (checks_file, helpers_file):
        assert "/afz/lib/" in file and "site-packages" in file, file
    assert course is None and nbgrader is None


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_a_released_notebook_passes_right_code_and_fails_wrong_code(learner, assignment):
    name = exercise(assignment).name
    right = run(learner, write(learner, f"right_{name}", answered(assignment)))
    assert right["error"] is None, "\n".join(right["error"] or [])
    assert right["unrun"] == [], right  # every cell ran, every visible check passed

    mistake, message = WRONG[assignment]
    wrong = run(learner, write(learner, f"wrong_{name}", answered(assignment, mistake)))
    assert wrong["error"], f"{assignment}: the mistake {mistake!r} passed the visible checks"
    lines = [ANSI.sub("", line) for line in "\n".join(wrong["error"]).splitlines()]
    assert lines[0].startswith("CheckFailed: ") and message in lines[0], lines
    assert not [line for line in lines if "site-packages" in line or "checks/" in line], lines
    assert len(lines) <= 12, lines


def test_a_notebook_without_its_released_values_fails_loudly(learner):
    """The released test cell's line edited back to a bare Test("..."): the check that needs
    the solution's value fails and says what to do, even with the right answer."""
    nb = answered("01_attention")
    for cell in nb["cells"]:
        text = "".join(cell["source"])
        cell["source"] = re.sub(r'Test\("(\w+)", expected="[^"]*"\)', r'Test("\1")', text)
    result = run(learner, write(learner, "edited_attention.ipynb", nb))
    first = ANSI.sub("", result["error"][0])
    assert first.startswith("CheckFailed: softmax(scores): this check compares"), first
    assert "as released" in first


def test_course_validate_says_when_nbgrader_is_missing(learner, tmp_path):
    """`python -m course validate` in an environment without nbgrader says so (not FAILED)."""
    nb = write(learner, "validate_me.ipynb", answered("01_attention"))
    env = {**learner_env(), "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        [python(learner), "-m", "course", "validate", nb], cwd=tmp_path, env=env,
        capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr[-2000:]
    assert "nbgrader is not installed" in done.stdout and "FAILED" not in done.stdout


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def lab(learner):
    """JupyterLab of the learner's environment, serving the learner's folder."""
    port, token = free_port(), "learner-token"
    command = [
        str(learner / "afz" / "bin" / "jupyter"), "lab", "--no-browser", f"--port={port}",
        f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={learner}",
    ]  # fmt: skip
    if os.geteuid() == 0:
        command.append("--allow-root")
    # JupyterLab draws only the cells in view (a windowed notebook); the test reads an output
    # anywhere in the notebook, so its session draws every cell (a setting of this session's
    # own settings folder, not of the learner's environment).
    settings = learner / "lab-settings" / "@jupyterlab" / "notebook-extension"
    settings.mkdir(parents=True, exist_ok=True)
    (settings / "tracker.jupyterlab-settings").write_text('{"windowingMode": "none"}\n')
    env = {**learner_env(), "JUPYTERLAB_SETTINGS_DIR": str(learner / "lab-settings")}
    log = (learner / "lab.log").open("w")
    server = subprocess.Popen(command, cwd=learner, env=env, stdout=log, stderr=log)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_for_server(url, token, learner / "lab.log")
        yield url, token
    finally:
        stop(server)
        log.close()


def kernelspecs(url: str, token: str) -> list[str]:
    with urllib.request.urlopen(f"{url}/api/kernelspecs?token={token}", timeout=10) as r:
        return sorted(json.load(r)["kernelspecs"])


def test_jupyter_in_the_repository_offers_no_grading_kernel(tmp_path):
    """A Jupyter server started in the course repository loads nbgrader_config.py (nbgrader's
    extensions do), which once put the grading kernel's spec on JUPYTER_PATH: its launcher
    offered a kernel that can only run inside the grading sandbox."""
    port, token = free_port(), "repository-token"
    command = [
        str(Path(sys.executable).parent / "jupyter"), "server", "--no-browser",
        f"--port={port}", f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={REPO}",
    ]  # fmt: skip
    if os.geteuid() == 0:
        command.append("--allow-root")
    with (tmp_path / "server.log").open("w") as log:
        server = subprocess.Popen(command, cwd=REPO, stdout=log, stderr=log)
        try:
            url = f"http://127.0.0.1:{port}"
            wait_for_server(url, token, tmp_path / "server.log")
            log_text = (tmp_path / "server.log").read_text()
            assert "nbgrader.server_extensions.formgrader | extension was successfully loaded" in (
                log_text
            ), log_text[-2000:]
            assert kernelspecs(url, token) == ["python3"]
        finally:
            stop(server)


def wait_for_server(url: str, token: str, log: Path) -> None:
    for _ in range(240):
        try:
            with urllib.request.urlopen(f"{url}/api/status?token={token}", timeout=2):
                return
        except OSError:
            time.sleep(0.5)
    raise AssertionError(log.read_text()[-3000:])


def stop(server: subprocess.Popen) -> None:
    server.terminate()
    try:
        server.wait(timeout=20)
    except subprocess.TimeoutExpired:
        server.kill()
        server.wait()


def test_only_the_learners_kernel_is_offered(lab):
    assert kernelspecs(*lab) == ["python3"]


# After Run All Cells, the last cell's prompt gets its number when every cell before it has run.
LAST_CELL_RUN = """() => {
    const cells = document.querySelectorAll(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-CodeCell");
    const prompt = cells.length ? cells[cells.length - 1].querySelector(".jp-InputPrompt") : null;
    return prompt !== null && /^\\[\\d+\\]:$/.test(prompt.textContent.trim());
}"""
VISIBLE_ERRORS = (
    ".jp-NotebookPanel:not(.lm-mod-hidden) "
    ".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']"
)


def run_all_in_lab(page, url: str, token: str, notebook: str) -> None:
    """Open ``notebook`` alone in JupyterLab and run all its cells (Run > Run All Cells)."""
    page.goto(f"{url}/lab/tree/{notebook}?reset&token={token}")
    page.wait_for_selector(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Cell", timeout=120_000)
    page.get_by_text("Python 3 (ipykernel) | Idle").wait_for(timeout=120_000)  # its kernel
    page.get_by_role("menuitem", name="Run", exact=True).click()
    page.get_by_role("menuitem", name="Run All Cells", exact=True).click()
    try:  # JupyterLab may still ask which kernel to run the cells in: the learner's own
        page.get_by_role("button", name="Select", exact=True).click(timeout=5_000)
    except PlaywrightTimeout:
        pass


def saved_by_lab(page, path: Path) -> dict:
    """The notebook as JupyterLab saves it (Ctrl+S), once every code cell has run."""
    page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook").focus()
    page.keyboard.press("Control+s")
    for _ in range(60):
        nb = json.loads(path.read_text(encoding="utf-8"))
        code = [c for c in nb["cells"] if c["cell_type"] == "code"]
        if all(c.get("execution_count") for c in code):
            return nb
        time.sleep(0.5)
    raise AssertionError(f"{path.name}: JupyterLab saved it with cells not run")


def test_jupyterlab_shows_the_teaching_message_first_and_passes_right_code(lab, learner, browser):
    url, token = lab
    mistake, message = WRONG["01_attention"]
    write(learner, "lab_wrong.ipynb", answered("01_attention", mistake))
    right = write(learner, "lab_right.ipynb", answered("01_attention"))
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    try:
        run_all_in_lab(page, url, token, "lab_wrong.ipynb")
        error = page.locator(VISIBLE_ERRORS).first
        error.wait_for(state="attached", timeout=300_000)
        error.scroll_into_view_if_needed()
        error.wait_for(timeout=30_000)
        text = error.text_content() or ""
        first = text.strip().splitlines()[0]
        assert first.startswith("CheckFailed: ") and message in first, text
        assert "did you sum over axis 0 instead of `axis`?" in first  # the hint, whole
        assert "site-packages" not in text and "checks/" not in text, text
        assert len(text.strip().splitlines()) <= 8, text
        page.screenshot(path=str(learner / "lab_wrong.png"))

        run_all_in_lab(page, url, token, "lab_right.ipynb")
        page.wait_for_function(LAST_CELL_RUN, timeout=600_000)
        page.screenshot(path=str(learner / "lab_right.png"))
        nb = saved_by_lab(page, right)
        outputs = [o for c in nb["cells"] for o in c.get("outputs", [])]
        assert not [o for o in outputs if o["output_type"] == "error"], outputs
        printed = "".join("".join(o.get("text", "")) for o in outputs)
        for line in ("softmax: visible tests passed", "dtypes: visible tests passed"):
            assert line in printed, printed
    except Exception:
        page.screenshot(path=str(learner / "lab_failed.png"))  # what JupyterLab showed
        raise
    finally:
        page.close()
