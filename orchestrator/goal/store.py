"""A goal's run directory: ``<workspace>/.reasonix/runs/<run_id>/``.

It holds ``goal.json`` (the goal's state, rewritten atomically at every change), the two session journals
(``planner.jsonl``, ``executor.jsonl``), the plan revisions (``plan.r001.json`` …) and ``events.jsonl`` (goal events).
Everything needed to resume after a crash is here: a verified step is recorded before anything else happens.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import secrets
import stat
import time
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from orchestrator.errors import ReasonixError
from orchestrator.exits import GoalState
from orchestrator.run_seal import check_sealed, seal_run
from plans import Plan, StepStatus, load_latest, save_revision, write_atomic

RUNS_DIR = Path(".reasonix") / "runs"
FORKS_DIR = "forks"
"""Where a run directory keeps the journals of the executor's forks (``orchestrator.goal.parallel.forks``)."""
TURNS_FILE = "turns.jsonl"
"""A conversation's turns in its run directory (``orchestrator.conversation.turn_log``): not a session's journal."""


class RunNotFoundError(ReasonixError):
    """The user named a run that is not there."""


class RunLockedError(ReasonixError):
    """Another process is running this run."""


RUN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
"""What a run id may be: a directory name under ``.reasonix/runs`` (never a path: no ``/``, no ``..``)."""
_HELD: dict[Path, int] = {}
"""Run directories this process holds the lock of, and the lock file's descriptor (held for the process's life)."""


def check_run_id(run_id: str) -> str:
    """``run_id`` if it names a run directory; :class:`RunNotFoundError` for a path or anything else."""
    if not RUN_ID.fullmatch(run_id) or ".." in run_id:
        raise RunNotFoundError(
            f"{run_id!r} is not a run id: --resume takes the id of a run under {RUNS_DIR} (as `reasonix runs` lists "
            "them), not a path"
        )
    return run_id


class GoalRecord(BaseModel):
    """The persistent state of one goal (``goal.json``).

    The current plan, each step with its status, result and evidence, is :attr:`plan`: the one home of step state.
    Everything else here is about the run as a whole. A ``goal.json`` written before the plan lived here (with
    per-step ``verified`` / ``statuses`` / ``results`` / ``evidence`` maps) is migrated by :meth:`RunStore.load`.
    """

    model_config = ConfigDict(extra="forbid")
    run_id: str
    objective: str
    state: GoalState = "planning"
    reason: str = ""
    plan: Plan | None = None
    attempts: dict[str, int] = Field(default_factory=dict)
    """Executor turns given to each step since it was last (re)planned."""
    approved: bool = True
    """Whether the current plan line was approved at review (or needed none). A new goal starts unapproved, so a run
    paused while its plan awaited review goes back to review on resume instead of executing an unreviewed plan.
    (True for records written before the field existed: they resume as they always did.)"""
    current_step: str | None = None
    """The step being executed when the record was written (a resumed run tells the executor so)."""
    solo: list[str] = Field(default_factory=list)
    """Steps that run alone in the executor (their parallel branch could not be merged), until verified."""
    replans: int = 0
    stuck_replanned: list[str] = Field(default_factory=list)
    """Steps an unattended run re-planned once because they were stuck (a second time ends the goal blocked)."""
    escalations: int = 0
    pro_turns: int = 0
    usage_usd: float = 0.0
    usage_requests: int = 0
    usage_seconds: float = 0.0
    settings: dict[str, Any] = Field(default_factory=dict)
    verdict: dict[str, Any] | None = None

    @property
    def plan_revision(self) -> int:
        """The current plan's revision; 0 before the first plan."""
        return self.plan.revision if self.plan is not None else 0

    @property
    def needs_review(self) -> bool:
        """Whether this run's plan must be reviewed before anything executes: no plan yet (the one the planner makes
        will need it), a run paused while planning or at its review, or a plan line no review approved (paused by a
        limit right after planning). The one rule every front end and the goal loop go by."""
        return self.plan_revision == 0 or self.state in ("planning", "awaiting_review") or not self.approved

    @property
    def preset(self) -> str | None:
        """The escalation preset the run was started with (from its settings), if it says."""
        escalation = self.settings.get("escalation")
        preset = escalation.get("preset") if isinstance(escalation, dict) else None
        return preset if isinstance(preset, str) else None

    @property
    def verified(self) -> list[str]:
        """The steps whose verify commands passed (these never run again), in plan order."""
        return [s.id for s in self.plan.steps if s.status is StepStatus.DONE] if self.plan is not None else []


_LEGACY_STEP_MAPS = ("verified", "statuses", "results", "evidence")


def _migrate(data: dict[str, Any], latest: Plan | None) -> dict[str, Any]:
    """A ``goal.json`` with the old per-step maps: the latest plan revision with the maps applied to its steps."""
    legacy = {key: data.pop(key) for key in _LEGACY_STEP_MAPS if key in data}
    data.pop("plan_revision", None)
    if "plan" in data or latest is None:
        return data
    verified = set(legacy.get("verified") or ())
    statuses: dict[str, str] = legacy.get("statuses") or {}
    results: dict[str, str] = legacy.get("results") or {}
    evidence: dict[str, list[str]] = legacy.get("evidence") or {}
    steps = tuple(
        step.model_copy(
            update={
                "status": StepStatus.DONE
                if step.id in verified
                else StepStatus(statuses.get(step.id, StepStatus.PENDING.value)),
                "result": results.get(step.id, step.result),
                "evidence": tuple(evidence.get(step.id, step.evidence)),
            }
        )
        for step in latest.steps
    )
    data["plan"] = latest.model_copy(update={"steps": steps}).model_dump(mode="json")
    return data


class StateDirError(ReasonixError):
    """The workspace's ``.reasonix`` (or a directory in it) is a symlink or not a directory: nothing is written."""


STATE_DIR_NAME = ".reasonix"
STATE_SUBDIRS = ("runs",)
"""Directories of ``.reasonix`` that Reasonix writes into, checked with it."""


def state_subdir(workspace: Path, *parts: str, create: bool = True) -> Path:
    """``<workspace>/.reasonix/<parts…>``, each directory made when missing (with ``create``). A symlink anywhere on
    the way (a repository may ship ``.reasonix -> /elsewhere``) or something that is not a directory is refused with
    :class:`StateDirError`: Reasonix never writes its state through a link, where it would land outside the
    workspace."""
    path = workspace
    for name in (STATE_DIR_NAME, *parts):
        path = path / name
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            if not create:
                return path
            try:
                os.mkdir(path, 0o755)
                continue
            except FileExistsError:
                st = os.lstat(path)
        _check_dir(path, st)
    return path


def _check_dir(path: Path, st: os.stat_result) -> None:
    if stat.S_ISLNK(st.st_mode):
        raise StateDirError(
            f"{path} is a symlink (to {os.readlink(path)}): Reasonix keeps its run state in the workspace and never "
            f"writes it through a link; remove the link (rm {path}) and run again"
        )
    if not stat.S_ISDIR(st.st_mode):
        raise StateDirError(
            f"{path} is not a directory: Reasonix keeps its run state there; move it away and run again"
        )


def check_no_links(directory: Path) -> None:
    """Refuse a run directory holding a symlink (a repository may ship a run whose ``events.jsonl`` links to a file
    of the user's): what Reasonix appends to its records must land in them."""
    with os.scandir(directory) as entries:
        for entry in entries:
            if entry.is_symlink():
                raise StateDirError(
                    f"{entry.path} is a symlink (to {os.readlink(entry.path)}): Reasonix never writes its run records "
                    f"through a link; remove it (rm {entry.path}) or start a new run"
                )


STATE_GITIGNORE = (
    "# Reasonix's local state (runs, history, jobs) is not source; a team's commands, skills and agents are.\n"
    "/*\n"
    "!/commands/\n"
    "!/skills/\n"
    "!/agents/\n"
)
"""``.reasonix/.gitignore``: everything Reasonix writes there stays out of the user's git; the folders a team shares
(custom commands, skills, subagent profiles) can be committed."""
_OLD_STATE_GITIGNORE = "# Reasonix run journals and plans: local state, not source.\n*\n"
"""What earlier versions wrote (``*``: nothing under ``.reasonix/`` could be committed); replaced when found as is."""


def ensure_state_dir(workspace: Path) -> Path:
    """``<workspace>/.reasonix`` (checked by :func:`state_subdir`, with ``runs/``), created with
    :data:`STATE_GITIGNORE`, so runs never show up in the user's git while shared commands, skills and agents can."""
    state = state_subdir(workspace)
    for sub in STATE_SUBDIRS:
        state_subdir(workspace, sub)
    path = state / ".gitignore"
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    except FileExistsError:
        _upgrade_gitignore(path)
        return state
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(STATE_GITIGNORE)
    return state


def _upgrade_gitignore(path: Path) -> None:
    """Replace an earlier version's ``*`` (exactly as it wrote it; a file the user changed is theirs), never through
    a link: the new text is written beside it and renamed over it."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return
    with os.fdopen(fd, "rb") as fh:
        if fh.read(len(_OLD_STATE_GITIGNORE) + 1) != _OLD_STATE_GITIGNORE.encode():
            return
    partial = path.with_name(".gitignore.partial")
    with contextlib.suppress(FileNotFoundError):
        partial.unlink()
    try:
        fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    except OSError:
        return
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(STATE_GITIGNORE)
    os.replace(partial, path)


def run_state_dir(workspace: Path, run_id: str) -> Path:
    """``<workspace>/.reasonix/runs/<run_id>``, made or checked for what Reasonix writes there: no symlink on the
    way, none in it (:class:`StateDirError` otherwise); made, it is sealed as this user's, and one that was there
    already must carry this user's seal (:class:`~orchestrator.run_seal.ForgedRunError` otherwise)."""
    ensure_state_dir(workspace)
    existed = os.path.lexists(workspace / RUNS_DIR / check_run_id(run_id))
    path = state_subdir(workspace, *RUNS_DIR.parts[1:], run_id)
    check_no_links(path)
    _claim(workspace, run_id, existed)
    return path


def _claim(workspace: Path, run_id: str, existed: bool) -> None:
    """Seal a run directory Reasonix just made; refuse one it found there unsealed (a repository may ship it)."""
    if existed:
        check_sealed(workspace, run_id)
    else:
        seal_run(workspace, run_id)


def new_run_id() -> str:
    """Sortable and unique; never sent to the model (it only names the directory)."""
    return time.strftime("%Y%m%d-%H%M%S", time.gmtime()) + "-" + secrets.token_hex(3)


class RunStore:
    def __init__(self, workspace: Path, run_id: str) -> None:
        self.workspace = workspace
        self.run_id = run_id
        self.dir = workspace / RUNS_DIR / run_id
        self._events: Any = None

    @classmethod
    def create(cls, workspace: Path, run_id: str | None = None) -> RunStore:
        store = cls(workspace, check_run_id(run_id) if run_id else new_run_id())
        ensure_state_dir(workspace)
        existed = os.path.lexists(store.dir)
        state_subdir(workspace, *RUNS_DIR.parts[1:], store.run_id)
        _claim(workspace, store.run_id, existed)
        return store

    @classmethod
    def open(cls, workspace: Path, run_id: str) -> RunStore:
        store = cls(workspace, check_run_id(run_id))
        state_subdir(workspace, *RUNS_DIR.parts[1:], run_id, create=False)
        if (store.dir / "goal.json").is_file():
            check_no_links(store.dir)
            check_sealed(workspace, run_id)
            return store
        known = sorted(p.name for p in (workspace / RUNS_DIR).glob("*") if (p / "goal.json").is_file())
        hint = f" Known runs: {', '.join(known[-5:])}." if known else " There are no runs in this workspace."
        raise RunNotFoundError(f"no run {run_id!r} under {workspace / RUNS_DIR}.{hint}")

    def lock(self) -> None:
        """Hold this run for the life of the process (``flock`` on ``lock`` in the run directory), so two processes
        never run one run at once. :class:`RunLockedError` names the process that holds it."""
        key = self.dir.resolve()
        if key in _HELD:
            return
        path = self.dir / "lock"
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode("ascii", "replace").strip() or "unknown"
            os.close(fd)
            raise RunLockedError(
                f"run {self.run_id} is already running in process {holder}; wait for it or stop it"
            ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        _HELD[key] = fd

    @property
    def planner_journal(self) -> Path:
        return self.dir / "planner.jsonl"

    @property
    def executor_journal(self) -> Path:
        return self.dir / "executor.jsonl"

    def save(self, record: GoalRecord) -> None:
        write_atomic(self.dir / "goal.json", record.model_dump_json(indent=2) + "\n")

    def load(self) -> GoalRecord:
        path = self.dir / "goal.json"
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            if isinstance(data, dict) and ("plan_revision" in data or "plan" not in data):
                data = _migrate(data, self.latest_plan())
            return GoalRecord.model_validate(data)
        except (OSError, ValueError) as exc:
            raise RunNotFoundError(f"{path} cannot be read: {exc}") from exc

    def save_plan(self, plan: Plan) -> Path:
        return save_revision(self.dir, plan)

    def latest_plan(self) -> Plan | None:
        return load_latest(self.dir)

    def append_event(self, event: dict[str, Any]) -> None:
        if self._events is None:
            self._events = (self.dir / "events.jsonl").open("a", encoding="utf-8")
        self._events.write(json.dumps(event, ensure_ascii=False, separators=(",", ":")) + "\n")
        self._events.flush()

    def sync(self) -> None:
        if self._events is not None:
            os.fsync(self._events.fileno())

    def close(self) -> None:
        if self._events is not None:
            self._events.close()
            self._events = None


def read_jsonl(path: Path, needle: bytes = b"") -> list[dict[str, Any]]:
    """The records of a JSON-lines file of a run directory (only the lines holding ``needle``), a torn line left out."""
    if not path.is_file():
        return []
    out = []
    with path.open("rb") as fh:
        for raw in fh:
            if needle and needle not in raw:
                continue
            try:
                out.append(json.loads(raw))
            except json.JSONDecodeError:
                continue  # a torn last line
    return out


def usage_events(journal: Path) -> list[dict[str, Any]]:
    """The usage events a session journal holds (one per request), torn or corrupt lines left out."""
    records = read_jsonl(journal, b'"usage"')
    events = [r.get("event") for r in records if r.get("t") == "event"]
    return [e for e in events if isinstance(e, dict) and e.get("kind") == "usage"]
