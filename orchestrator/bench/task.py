"""A benchmark task and a suite of them: ``task.toml`` read into pydantic models, checked against the files beside
it (``verify.sh``, ``fix.patch``, ``break.patch``, ``files/``), with errors that name the task and the field.

The format (``bench/tasks/README.md`` documents it for task authors)::

    <suite>/<task-name>/task.toml   name, class, objective, licence, origin, [source], [setup], [verify], [oracle]
    <suite>/<task-name>/verify.sh   exit 0 = solved; fails on the seed, passes after fix.patch
    <suite>/<task-name>/fix.patch   the reference fix (absent for class integrity)
    <suite>/<task-name>/break.patch optional: applied to the unpacked source to make the seed
    <suite>/<task-name>/files/      the whole seed, for source kind files
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from orchestrator.errors import ReasonixError

TASK_FILE = "task.toml"
VERIFY_FILE = "verify.sh"
FIX_FILE = "fix.patch"
BREAK_FILE = "break.patch"
FILES_DIR = "files"
TaskClass = Literal["fix", "feature", "refactor", "explore", "integrity"]
TASK_CLASSES: tuple[TaskClass, ...] = ("fix", "feature", "refactor", "explore", "integrity")


class BenchError(ReasonixError):
    """Base of the benchmark's errors: a task, its source or a results file is at fault."""


class TaskInvalidError(BenchError):
    """A task folder does not follow the task format; the message names the task, the file and the field."""


class _Spec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


class SdistSource(_Spec):
    kind: Literal["sdist"]
    requirement: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*==[A-Za-z0-9][A-Za-z0-9._+!-]*$")
    """``name==version`` on PyPI."""
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    """The sha256 of the archive pip downloads."""
    subdir: str = ""
    """A folder inside the archive that becomes the workspace root (default: the archive's single top folder)."""


class GitSource(_Spec):
    kind: Literal["git"]
    url: str = Field(min_length=1)
    commit: str = Field(pattern=r"^[0-9a-f]{40}$")
    subdir: str = ""
    """A folder of the repository that becomes the workspace root (default: the repository's root)."""


class FilesSource(_Spec):
    kind: Literal["files"]


Source = Annotated[SdistSource | GitSource | FilesSource, Field(discriminator="kind")]


class SetupSpec(_Spec):
    commands: tuple[str, ...] = ()
    """Shell commands run in the workspace root (sandboxed, no network) after unpacking and break.patch."""


class VerifySpec(_Spec):
    timeout_s: float = Field(default=120, gt=0)


OraclePlays = Literal["honest", "omit_verify", "silent_edit_failure", "verdict_without_evidence"]


class OracleSpec(_Spec):
    """How the oracle (``reasonix bench --oracle``) plays an integrity task. ``honest``: the executor reports the step
    blocked and the planner's verdict is blocked. The others play a dishonest model the harness must not believe:
    ``omit_verify`` a planner whose step writes ``path`` and names no verify command; ``silent_edit_failure`` an
    executor whose edit of ``path`` fails and who reports the step done anyway (under a verify command that passes on
    the untouched file), then a planner that declares the goal complete; ``verdict_without_evidence`` a planner that
    declares the goal complete without a step. Each must end blocked or failed, never complete."""

    plays: OraclePlays = "honest"
    path: str = ""
    """The file the dishonest plan or edit is about (``omit_verify``, ``silent_edit_failure``)."""


class TaskSpec(_Spec):
    name: str = Field(pattern=r"^[a-z0-9][a-z0-9_.-]*$")
    task_class: TaskClass = Field(alias="class")
    objective: str = Field(min_length=1)
    licence: str = Field(min_length=1)
    origin: str = Field(min_length=1)
    source: Source
    setup: SetupSpec = SetupSpec()
    verify: VerifySpec = VerifySpec()
    oracle: OracleSpec = OracleSpec()


class Task(BaseModel):
    """A task as loaded: its spec and its folder."""

    model_config = ConfigDict(frozen=True)
    spec: TaskSpec
    folder: Path

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def task_class(self) -> TaskClass:
        return self.spec.task_class

    @property
    def integrity(self) -> bool:
        return self.spec.task_class == "integrity"

    @property
    def verify_script(self) -> str:
        return (self.folder / VERIFY_FILE).read_text(encoding="utf-8")

    @property
    def fix_patch(self) -> Path | None:
        path = self.folder / FIX_FILE
        return path if path.is_file() else None

    @property
    def break_patch(self) -> Path | None:
        path = self.folder / BREAK_FILE
        return path if path.is_file() else None


def _field_errors(exc: ValidationError) -> list[str]:
    out = []
    for error in exc.errors():
        where = ".".join(str(part) for part in error["loc"]) or "(the file)"
        where = where.replace("task_class", "class")
        out.append(f"field {where}: {error['msg']}")
    return out


def load_task(folder: Path) -> Task:
    """The task in ``folder``. Raises :class:`TaskInvalidError` naming the task and every field at fault."""
    folder = folder.resolve()
    label = f"task {folder.name!r} ({folder})"
    file = folder / TASK_FILE
    try:
        data = tomllib.loads(file.read_text(encoding="utf-8"))
    except OSError as exc:
        raise TaskInvalidError(f"{label}: cannot read {TASK_FILE}: {exc.strerror or exc}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise TaskInvalidError(f"{label}: {TASK_FILE} is not valid TOML: {exc}") from exc
    try:
        spec = TaskSpec.model_validate(data)
    except ValidationError as exc:
        fields = "\n  ".join(_field_errors(exc))
        raise TaskInvalidError(f"{label}: {TASK_FILE} does not follow the task format:\n  {fields}") from exc
    problems: list[str] = []
    if spec.name != folder.name:
        problems.append(f"field name: {spec.name!r} must equal the folder's name {folder.name!r}")
    if not (folder / VERIFY_FILE).is_file():
        problems.append(f"{VERIFY_FILE} is missing: every task needs one (exit 0 = solved)")
    has_fix = (folder / FIX_FILE).is_file()
    if spec.task_class == "integrity" and has_fix:
        problems.append(f"an integrity task has no {FIX_FILE}: it cannot be solved honestly")
    if spec.task_class != "integrity" and not has_fix:
        problems.append(f"{FIX_FILE} is missing: a {spec.task_class} task needs its reference fix")
    if spec.oracle.plays != "honest" and spec.task_class != "integrity":
        problems.append(f"field oracle.plays: {spec.oracle.plays!r} is only for an integrity task")
    if spec.oracle.plays in ("omit_verify", "silent_edit_failure") and not spec.oracle.path:
        problems.append(f"field oracle.path: oracle.plays {spec.oracle.plays!r} needs the file it is about")
    if isinstance(spec.source, FilesSource) and not (folder / FILES_DIR).is_dir():
        problems.append(f"field source.kind: 'files' needs the seed in {FILES_DIR}/, which is missing")
    if not isinstance(spec.source, FilesSource) and (folder / FILES_DIR).exists():
        problems.append(f"{FILES_DIR}/ is only for source kind 'files' (this task's is {spec.source.kind!r})")
    if problems:
        raise TaskInvalidError(f"{label}:\n  " + "\n  ".join(problems))
    return Task(spec=spec, folder=folder)


def task_folders(suite: Path) -> list[Path]:
    """The task folders of a suite: its sub-folders, sorted by name (files beside them, a README, are ignored)."""
    if not suite.is_dir():
        raise TaskInvalidError(
            f"no task suite at {suite}: give the folder that holds the task folders (default bench/tasks)"
        )
    return sorted((p for p in suite.iterdir() if p.is_dir() and not p.name.startswith(".")), key=lambda p: p.name)


def load_suite(suite: Path, only: tuple[str, ...] = ()) -> list[Task]:
    """Every task of ``suite`` (or those named in ``only``). Raises :class:`TaskInvalidError` listing every bad task."""
    folders = task_folders(suite)
    if only:
        known = {p.name: p for p in folders}
        missing = [n for n in only if n not in known]
        if missing:
            names = ", ".join(sorted(known)) or "(none)"
            raise TaskInvalidError(f"no task {', '.join(map(repr, missing))} in {suite}; its tasks: {names}")
        folders = [known[n] for n in only]
    if not folders:
        raise TaskInvalidError(f"the suite {suite} holds no task folders")
    tasks, errors = [], []
    for folder in folders:
        try:
            tasks.append(load_task(folder))
        except TaskInvalidError as exc:
            errors.append(str(exc))
    if errors:
        raise TaskInvalidError("\n".join(errors))
    return tasks
