"""The goals of a batch: one :class:`GoalSpec` per goal, read from a JSONL file (one object a line) or a TOML file
(``[[goals]]`` tables), and :class:`BatchError` for a file that cannot be read.

    {"workspace": "../api", "objective": "add a --json flag", "preset": "flash", "budget_usd": 0.5}
    {"workspace": "https://example.org/lib.git", "ref": "v2.1", "objective": "fix the failing test"}

A goal's ``id`` names its copy of the workspace and its line in the results, so ``--resume`` finds it again; without
one it is derived from the workspace, ref and objective (stable while the line is unchanged).
"""

from __future__ import annotations

import hashlib
import json
import re
import tomllib
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from orchestrator.errors import ReasonixError

_URL = re.compile(r"^(?:[a-z][a-z0-9+.-]*://|[\w.-]+@[\w.-]+:)", re.IGNORECASE)
GOAL_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")


class BatchError(ReasonixError):
    """A batch that cannot run as given: its goals file, a goal's workspace, its results or its cluster."""


def is_git_url(workspace: str) -> bool:
    """Whether ``workspace`` names a repository to clone (``https://``, ``file://``, ``ssh://``, ``git@host:``)."""
    return bool(_URL.match(workspace))


class GoalSpec(BaseModel):
    """One goal of a batch."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    id: str = ""
    """Names the goal's copy and results line; default: derived from workspace, ref and objective."""
    workspace: str = Field(min_length=1)
    """A local directory (relative to the goals file), or a git URL to clone."""
    ref: str | None = None
    """The branch, tag or commit to start from (default: the repository's HEAD)."""
    objective: str = Field(min_length=1)
    preset: Literal["flash", "auto", "pro"] | None = None
    budget_usd: float | None = Field(default=None, gt=0)
    max_requests: int | None = Field(default=None, gt=0)
    max_minutes: float | None = Field(default=None, gt=0)
    review: Literal["off"] = "off"
    """A batch has nobody at a terminal: plans are approved as ``--yes`` approves them."""

    @field_validator("objective")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError('the objective is empty; say what to achieve, e.g. "add a test"')
        return value

    @field_validator("id")
    @classmethod
    def _id_shape(cls, value: str) -> str:
        if value and not GOAL_ID.fullmatch(value):
            raise ValueError("an id is letters, digits, '.', '_' or '-' (at most 64), starting with a letter or digit")
        return value

    @property
    def remote(self) -> bool:
        return is_git_url(self.workspace)

    def with_defaults(self, base: Path) -> GoalSpec:
        """The goal with its id filled in and a local workspace made absolute (relative to ``base``)."""
        workspace = self.workspace if self.remote else str((base / Path(self.workspace).expanduser()).resolve())
        digest = hashlib.sha256(f"{workspace}\0{self.ref or ''}\0{self.objective}".encode()).hexdigest()[:10]
        return self.model_copy(update={"workspace": workspace, "id": self.id or f"g-{digest}"})


def _entries(path: Path, text: str) -> list[tuple[str, object]]:
    if path.suffix == ".toml":
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise BatchError(f"{path} is not valid TOML: {exc}") from exc
        goals = data.get("goals")
        if not isinstance(goals, list):
            raise BatchError(f"{path} has no [[goals]] tables; write one per goal (workspace, objective)")
        return [(f"{path}: goal {n}", g) for n, g in enumerate(goals, 1)]
    out: list[tuple[str, object]] = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        try:
            out.append((f"{path}:{n}", json.loads(line)))
        except json.JSONDecodeError as exc:
            raise BatchError(f"{path}:{n} is not a JSON object: {exc.msg}; write one goal per line") from exc
    return out


def load_goals(path: Path) -> list[GoalSpec]:
    """Every goal of the file at ``path`` (``.toml``: ``[[goals]]``; otherwise JSON lines), with ids and absolute
    local workspaces. Raises :class:`BatchError` naming the line and the problem."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise BatchError(f"cannot read the goals file {path}: {exc.strerror}") from exc
    goals: list[GoalSpec] = []
    for where, entry in _entries(path, text):
        try:
            goals.append(GoalSpec.model_validate(entry).with_defaults(path.resolve().parent))
        except ValidationError as exc:
            problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'goal'}: {e['msg']}" for e in exc.errors())
            raise BatchError(f"{where}: {problems}") from exc
    if not goals:
        raise BatchError(f"{path} holds no goals; write one JSON object a line with workspace and objective")
    check_unique(goals)
    return goals


def check_unique(goals: Sequence[GoalSpec]) -> None:
    ids = [g.id for g in goals]
    twice = sorted({i for i in ids if ids.count(i) > 1})
    if twice:
        raise BatchError(f"goal ids must be unique; repeated: {', '.join(twice)} (give each goal its own id)")
