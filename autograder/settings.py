"""The grading settings: every limit and policy of one run, built once and carried along.

The instructor's tool builds one ``Settings`` (``load``: the defaults, then the course root's
``grading.toml``, then ``AFZ_GRADEBOOK_URL``, then ``--set NAME=VALUE`` on its command line),
puts it in every grading task (so a Dask worker on another machine grades under the
instructor's limits, whatever its own environment says) and writes it into the folder of each
nbgrader command it runs (``write``). That folder's path is the one variable the processes
below pass on, ``AFZ_RUN``: ``nbgrader_config.py`` and the kernel launcher read the settings
from it (``of_run``), and the launcher writes each kernel's outcome there (``autograder.kernel``).

Environment variables: the three the course reads.
    AFZ_RUN             the folder of one nbgrader command
                        (set by ``course.grading.nbgrader_command``)
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
COURSE_FILE = "course.json"  # the course root, its cgroup (course.grading.nbgrader_command)
NBGRADER_PID = "nbgrader.pid"  # the nbgrader process, the kernel launcher's parent
# and the records of what happened (``autograder.outcomes``)
RUN_VAR = "AFZ_RUN"
URL_VAR = "AFZ_GRADEBOOK_URL"


class SettingsError(ValueError):
    """A setting that cannot be used; the message names it, where it came from and the fix."""


def setting(
    default: Any,
    unit: str,
    description: str,
    zh: str,
    *,
    grading: bool = False,
    least: float | None = None,
    traitlet: str = "",
    via: str = "",
) -> Any:
    """One setting's declaration: its default; its unit (in messages; "" for a flag or a
    text); what it limits, in Markdown as the instructor guide's table shows it, and the same
    in the guide's Chinese edition (``tools/settings_table.py`` writes the table and its
    catalog's rows from these); whether it can change a grade (then it is part of the grader's
    fingerprint: a change grades every submission again); its least value (default: above 0);
    the nbgrader traitlet that carries it into nbgrader's preprocessors, ``"Class.trait"``, if
    one does (``nbgrader_config.py`` sets each from ``Settings.traitlets``), and ``via``, the
    property that gives the value in the traitlet's own unit (default: the setting itself)."""
    metadata = {
        "unit": unit,
        "description": description,
        "zh": zh,
        "grading": grading,
        "least": least,
        "traitlet": traitlet,
        "via": via,
    }
    return field(default=default, metadata=metadata)


@dataclass(frozen=True)
class Settings:
    """What grading may spend and show, one declaration per setting. Names are those of
    ``grading.toml`` and ``--set``; the instructor guide's table is written from these
    declarations (``tools/settings_table.py``; ``tests/unit/test_settings_table.py`` checks
    it, its Chinese catalog and the nbgrader traitlets that carry a setting)."""

    # one learner's notebook in the grading kernel
    cell_timeout: float = setting(
        180.0,
        "seconds",
        "seconds one cell may run; then it is interrupted and graded as an error",
        "一个单元格最多可运行的秒数；超时即被中断，并按出错评分",
        grading=True,
        traitlet="Execute.timeout",
        via="execute_timeout",
    )
    notebook_timeout: float = setting(
        1800.0,
        "seconds",
        "seconds the grading of one submission may take in all",
        "一份提交的整个评分过程最多可用的秒数",
        grading=True,
    )
    kernel_memory_mb: int = setting(
        4096,
        "MiB",
        "MiB of memory for all of a grading kernel's processes together",
        "一个评分内核所有进程合计可用的内存（MiB）",
        grading=True,
        least=64,
    )
    kernel_processes: int = setting(
        256,
        "processes",
        "processes and threads a grading kernel may have",
        "一个评分内核最多可有的进程和线程数",
        grading=True,
        least=16,
    )
    kernel_cpu_seconds: int = setting(
        1200,
        "CPU seconds",
        "CPU seconds each process of a grading kernel may use",
        "评分内核中每个进程最多可用的 CPU 秒数",
        grading=True,
    )
    kernel_cpu_cores: float = setting(
        1.0,
        "CPU cores",
        "CPU cores a grading kernel may keep busy (0: no quota)",
        "一个评分内核最多可占满的 CPU 核心数（0：不设配额）",
        grading=True,
        least=0,
    )
    kernel_disk_mb: int = setting(
        512,
        "MiB",
        "MiB a kernel may write to its home and to `/tmp`, each",
        "内核在其主目录和 `/tmp` 中各自最多可写入的 MiB 数",
        grading=True,
    )
    output_mb: float = setting(
        8.0,
        "MiB",
        "MiB of output one notebook may print (widget and comm messages included); the rest "
        "is dropped, the tests' results are kept",
        "一个笔记本最多可打印的输出（MiB，含 widget 和 comm 消息）；"
        "超出部分被丢弃，测试的结果照样保留",
        grading=True,
        traitlet="LimitedExecute.max_output_bytes",
        via="output_bytes",
    )
    sandbox: bool = setting(
        True,
        "",
        "grade in the OS sandbox (`false` is `--no-sandbox`: unsafe)",
        "在操作系统沙箱中评分（`false` 即 `--no-sandbox`：不安全）",
        grading=True,
    )
    # the grader's own processes
    grader_memory_mb: int = setting(
        2048,
        "MiB",
        "MiB for one nbgrader command's own processes (not its kernel)",
        "一条 nbgrader 命令自身进程可用的 MiB 数（不含其内核）",
        least=64,
    )
    warm_nbgrader: bool = setting(
        True,
        "",
        "start nbgrader commands from a warm server (`false`: a fresh interpreter)",
        "从预热好的服务进程启动 nbgrader 命令（`false`：每次启动新的解释器）",
    )
    # collect
    max_notebook_mb: float = setting(
        50.0,
        "MiB",
        "MiB of one file `collect` extracts at most",
        "`collect` 最多解压的单个文件大小（MiB）",
    )
    collect_memory_mb: float = setting(
        1024.0,
        "MiB",
        "MiB that reading one notebook at `collect` may take",
        "`collect` 读取一个笔记本最多可用的 MiB 数",
    )
    collect_timeout: float = setting(
        60.0,
        "seconds",
        "seconds that reading one notebook at `collect` may take",
        "`collect` 读取一个笔记本最多可用的秒数",
    )
    # feedback
    feedback_timeout: float = setting(
        120.0,
        "seconds",
        "seconds the feedback of one notebook may take, inside the class's run",
        "在全班的反馈运行中，生成一个笔记本的反馈最多可用的秒数",
    )
    feedback_shows_hidden: bool = setting(
        False,
        "",
        "feedback shows the hidden tests' code (after the deadline)",
        "反馈中显示隐藏测试的代码（截止日期之后）",
        traitlet="SafeFeedback.show_hidden_tests",
    )
    # the gradebook
    gradebook_url: str = setting(
        "",
        "",
        "the gradebook's database URL (default: `gradebook.db` in the course root)",
        "成绩册数据库的 URL（默认：课程根目录下的 `gradebook.db`）",
    )
    # where each value that is not the default came from (for error messages)
    origin: dict[str, str] = field(default_factory=dict, compare=False, repr=False)

    @property
    def output_bytes(self) -> int:
        return int(self.output_mb * 1024 * 1024)

    @property
    def execute_timeout(self) -> int:
        """``cell_timeout`` as nbgrader's ``Execute.timeout`` takes it: whole seconds, 1 or more."""
        return max(1, round(self.cell_timeout))

    def traitlets(self) -> dict[str, Any]:
        """``{"Class.trait": value}`` for each setting that an nbgrader traitlet carries (its
        declaration names the traitlet); ``nbgrader_config.py`` sets them all."""
        return {
            f.metadata["traitlet"]: getattr(self, f.metadata["via"] or f.name)
            for f in DECLARED
            if f.metadata["traitlet"]
        }

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


DECLARED = [f for f in fields(Settings) if f.name != "origin"]
# The settings that can change a learner's grade.
GRADING_KEYS = tuple(f.name for f in DECLARED if f.metadata["grading"])
DESCRIPTIONS = {f.name: f.metadata["description"] for f in DECLARED}
DESCRIPTIONS_ZH = {f.name: f.metadata["zh"] for f in DECLARED}  # the guide's Chinese edition
UNITS = {f.name: f.metadata["unit"] for f in DECLARED}
_LEAST = {f.name: f.metadata["least"] for f in DECLARED}


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
    unit = UNITS.get(name, "")
    try:
        if isinstance(raw, bool):
            raise ValueError
        value = int(raw) if kind == "int" else float(raw)
        if kind == "int" and isinstance(raw, float) and raw != int(raw):
            raise ValueError
    except (TypeError, ValueError):
        whole = "a whole number" if kind == "int" else "a number"
        raise SettingsError(f"{wrong} is not {whole}{f' of {unit}' if unit else ''}") from None
    least = _LEAST.get(name)
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
