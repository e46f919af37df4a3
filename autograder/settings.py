"""The grading settings: every limit and policy of one run, built once and carried along.

The instructor's tool builds one ``Settings`` (``load``: the defaults, then the course root's
``grading.toml``, then ``AFZ_GRADEBOOK_URL``, then ``--set NAME=VALUE`` on its command line),
puts it in every grading task (so a Dask worker on another machine grades under the
instructor's limits, whatever its own environment says) and writes it into the folder of each
nbgrader command it runs (``write``). That folder's path is the one variable the processes
below pass on, ``AFZ_RUN``: ``nbgrader_config.py`` and the kernel launcher read the settings
from it (``of_run``), and the launcher writes each kernel's outcome there (``autograder.kernel``).

Environment variables: the three the course reads.
    AFZ_RUN             the folder of one nbgrader command (set by ``course.runner``)
    AFZ_GRADEBOOK_URL   the gradebook's database URL, kept out of files and command lines
    AFZ_TIMING          a file for the stage timestamps of ``benchmarks/grading_cost.py``
"""

from __future__ import annotations

import json
import os
import tomllib
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any

CONFIG_FILE = "grading.toml"  # in the course root; optional
# The folder of one nbgrader command (a run) holds:
RUN_FILE = "settings.json"  # these settings, less the gradebook URL (``write``)
COURSE_FILE = "course.json"  # the course root, the nbgrader command's cgroup (``course.runner``)
NBGRADER_PID = "nbgrader.pid"  # the nbgrader process, the kernel launcher's parent
# and the records of what happened (``autograder.outcomes``)
RUN_VAR = "AFZ_RUN"
URL_VAR = "AFZ_GRADEBOOK_URL"


class SettingsError(ValueError):
    """A setting that cannot be used; the message names it, where it came from and the fix."""


@dataclass(frozen=True)
class Settings:
    """What grading may spend and show. Names are those of ``grading.toml`` and ``--set``;
    ``DESCRIPTIONS`` says what each one limits (the instructor guide's table lists the same)."""

    # one learner's notebook in the grading kernel
    cell_timeout: float = 180.0
    notebook_timeout: float = 1800.0
    kernel_memory_mb: int = 4096
    kernel_processes: int = 256
    kernel_cpu_seconds: int = 1200
    kernel_cpu_cores: float = 1.0
    kernel_disk_mb: int = 512
    output_mb: float = 8.0
    sandbox: bool = True
    # the grader's own processes
    grader_memory_mb: int = 2048
    warm_nbgrader: bool = True
    # collect
    max_notebook_mb: float = 50.0
    collect_memory_mb: float = 1024.0
    collect_timeout: float = 60.0
    # feedback
    feedback_timeout: float = 120.0
    feedback_shows_hidden: bool = False
    # the gradebook ("" : gradebook.db in the course root)
    gradebook_url: str = ""
    # where each value that is not the default came from (for error messages)
    origin: dict[str, str] = field(default_factory=dict, compare=False, repr=False)

    @property
    def output_bytes(self) -> int:
        return int(self.output_mb * 1024 * 1024)

    def where(self, name: str) -> str:
        """``name = value, <where it was set>``, for a message."""
        value = getattr(self, name)
        shown = f"{value:g}" if isinstance(value, float) else repr(value)
        return f"{name} = {shown}, {self.origin.get(name, 'the default')}"

    def with_values(self, values: dict[str, Any], origin: str) -> Settings:
        """These settings with ``values`` (checked) from ``origin`` (a file, an option)."""
        known = {f.name: f for f in fields(self) if f.name != "origin"}
        changed: dict[str, Any] = {}
        for name, raw in values.items():
            if name not in known:
                raise SettingsError(
                    f"{origin}: there is no setting {name!r}; the settings are "
                    f"{', '.join(known)} (the instructor guide's table says what each limits)"
                )
            changed[name] = _checked(name, raw, known[name].type, origin)
        return replace(self, **changed, origin={**self.origin, **dict.fromkeys(changed, origin)})

    def for_workers(self) -> Settings:
        """What travels to a worker: everything but the gradebook URL (a worker grades against
        its own copy; the URL may hold a password)."""
        return replace(self, gradebook_url="", origin=dict(self.origin))

    def grading_key(self) -> str:
        """The values that can change a grade, as text (part of the grader's fingerprint)."""
        return ",".join(f"{k}={getattr(self, k)}" for k in GRADING_KEYS)

    def to_json(self) -> str:
        values = asdict(self)
        del values["origin"]
        return json.dumps({"values": values, "origin": self.origin})

    @classmethod
    def from_json(cls, text: str) -> Settings:
        data = json.loads(text)
        return replace(cls(**data["values"]), origin=data.get("origin", {}))

    def write(self, run: Path) -> Path:
        """Write these settings (less the gradebook URL) into the run folder ``run``."""
        path = run / RUN_FILE
        path.write_text(self.for_workers().to_json())
        return path


# The settings that can change a learner's grade.
GRADING_KEYS = (
    "cell_timeout",
    "notebook_timeout",
    "kernel_memory_mb",
    "kernel_processes",
    "kernel_cpu_seconds",
    "kernel_cpu_cores",
    "kernel_disk_mb",
    "output_mb",
    "sandbox",
)
DESCRIPTIONS = {
    "cell_timeout": "seconds one cell may run; then it is interrupted and graded as an error",
    "notebook_timeout": "seconds the grading of one submission may take in all",
    "kernel_memory_mb": "MiB of memory for all of a grading kernel's processes together",
    "kernel_processes": "processes and threads a grading kernel may have",
    "kernel_cpu_seconds": "CPU seconds each process of a grading kernel may use",
    "kernel_cpu_cores": "CPU cores a grading kernel may keep busy (0: no quota)",
    "kernel_disk_mb": "MiB a kernel may write to its home and to /tmp, each",
    "output_mb": (
        "MiB of output one notebook may print (widget and comm messages included); the rest "
        "is dropped, the tests' results are kept"
    ),
    "sandbox": "grade in the OS sandbox (false is --no-sandbox: unsafe)",
    "grader_memory_mb": "MiB for one nbgrader command's own processes (not its kernel)",
    "warm_nbgrader": "start nbgrader commands from a warm server (false: a fresh interpreter)",
    "max_notebook_mb": "MB of one file collect extracts at most",
    "collect_memory_mb": "MiB that reading one notebook at collect may take",
    "collect_timeout": "seconds that reading one notebook at collect may take",
    "feedback_timeout": ("seconds the feedback of one notebook may take, inside the class's run"),
    "feedback_shows_hidden": "feedback shows the hidden tests' code (after the deadline)",
    "gradebook_url": "the gradebook's database URL (default: gradebook.db in the course root)",
}
_MINIMUM = {"grader_memory_mb": 64, "kernel_memory_mb": 64, "kernel_processes": 16}
_ZERO_ALLOWED = {"kernel_cpu_cores"}


def _checked(name: str, raw: Any, kind: Any, origin: str) -> Any:
    """``raw`` as the setting ``name`` takes it (texts from ``--set`` are parsed)."""
    kind = str(kind)
    wrong = f"{origin}: {name} = {raw!r}"
    if kind == "bool":
        if isinstance(raw, str) and raw.lower() in ("true", "1", "yes", "false", "0", "no"):
            return raw.lower() in ("true", "1", "yes")
        if isinstance(raw, bool):
            return raw
        raise SettingsError(f"{wrong} is not true or false")
    if kind == "str":
        if not isinstance(raw, str):
            raise SettingsError(f"{wrong} is not a text (write it in quotes)")
        return raw
    unit = (
        "MiB" if name.endswith("_mb") else "seconds" if "time" in name or "seconds" in name else ""
    )
    try:
        if isinstance(raw, bool):
            raise ValueError
        value = int(raw) if kind == "int" else float(raw)
        if kind == "int" and isinstance(raw, float) and raw != int(raw):
            raise ValueError
    except (TypeError, ValueError):
        whole = "a whole number" if kind == "int" else "a number"
        raise SettingsError(f"{wrong} is not {whole}{f' of {unit}' if unit else ''}") from None
    least = _MINIMUM.get(name, 0 if name in _ZERO_ALLOWED else None)
    if (least is None and not value > 0) or (least is not None and value < least):
        bound = "above 0" if least is None else f"at least {least}"
        raise SettingsError(f"{wrong} must be {bound}{f' ({unit})' if unit else ''}")
    return value


def load(root: Path | None, options: list[str] | tuple[str, ...] = ()) -> Settings:
    """The defaults, then ``root``'s ``grading.toml`` (if any), then ``AFZ_GRADEBOOK_URL``,
    then ``options`` (``NAME=VALUE`` each, from ``--set``)."""
    settings = Settings()
    if root is not None and (Path(root) / CONFIG_FILE).is_file():
        path = Path(root) / CONFIG_FILE
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as err:
            raise SettingsError(f"{path} is not TOML: {err}") from None
        table = data.get("grading", data)
        if not isinstance(table, dict) or any(isinstance(v, dict) for v in table.values()):
            raise SettingsError(f"{path}: write the settings as NAME = VALUE lines")
        settings = settings.with_values(table, str(path))
    if os.environ.get(URL_VAR):
        settings = settings.with_values({"gradebook_url": os.environ[URL_VAR]}, URL_VAR)
    for option in options:
        name, sep, value = option.partition("=")
        if not sep or not name.strip():
            raise SettingsError(f"--set {option!r}: write it as --set NAME=VALUE")
        settings = settings.with_values({name.strip(): value.strip()}, f"--set {name.strip()}")
    return settings


def of_run(run: str | Path | None = None) -> Settings | None:
    """The settings of the nbgrader command whose folder is ``run`` (default: ``AFZ_RUN``);
    None outside such a command (nbgrader started by hand)."""
    folder = run or os.environ.get(RUN_VAR)
    if not folder or not (Path(folder) / RUN_FILE).is_file():
        return None
    return Settings.from_json((Path(folder) / RUN_FILE).read_text())


def run_folder() -> Path | None:
    """The folder of the nbgrader command this process belongs to (``AFZ_RUN``), if any."""
    folder = os.environ.get(RUN_VAR)
    return Path(folder) if folder else None
