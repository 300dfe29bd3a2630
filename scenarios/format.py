"""The scenario format: a workspace, a command and its objective, settings, the scripted model, review answers and
what must hold at the end (DESIGN §6, issue 7).

A scenario is one JSON file (``scenarios/library/<name>.json``) or a folder holding ``scenario.json`` and a
``workspace/`` directory. Its ``script`` is the emulator's script format (``scenarios/emulator/script.py``): one
session per conversation, matched by a marker of its system prompt. ``origin`` says honestly what it is: ``scripted``
(replies written by hand: a script is not a model) or ``recorded`` (replies captured from a real DeepSeek run, with the
requests as they were sent, so a replay can report prompt drift).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from scenarios.emulator.script import Script
from scenarios.workspace import GitHistory, WorkspaceFile, folder_entries, write_entry, write_git_history

SCENARIO_FILE = "scenario.json"
LIBRARY = Path(__file__).parent / "library"


class ScenarioError(Exception):
    """A scenario file is at fault: it cannot be read or does not validate. The message names the file."""


class _Spec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ScenarioSettings(_Spec):
    preset: Literal["flash", "auto", "pro"] = "auto"
    budget_usd: float | None = Field(default=None, gt=0)
    max_requests: int | None = Field(default=None, gt=0)
    max_minutes: float | None = Field(default=None, gt=0)
    max_step_attempts: int = Field(default=2, ge=1)
    failure_threshold: int = Field(default=3, ge=1)
    max_pro_turns: int | None = Field(default=10, ge=0)
    context_window: int = Field(default=1_000_000, gt=0)
    cache_unit: int = Field(default=128, gt=0)
    thinking: bool = True
    reasoning_effort: Literal["low", "medium", "high", "max"] | None = "high"
    parallel: int = Field(default=1, ge=1)
    """``[goal] parallel`` of the recorded run: a scenario recorded before parallel waves replays one step at a time."""


class ReviewAnswer(_Spec):
    """One answer at plan review. ``edit`` carries the whole edited plan (as a plan document)."""

    decision: Literal["approve", "revise", "edit", "cancel"]
    feedback: str = ""
    plan: dict[str, Any] | None = None


class Resume(_Spec):
    """After the first run pauses, resume the same run (optionally with raised budgets), as ``--resume`` does."""

    budget_usd: float | None = Field(default=None, gt=0)
    max_requests: int | None = Field(default=None, gt=0)
    max_minutes: float | None = Field(default=None, gt=0)
    expect_paused_first: bool = True


class ToolResultExpectation(_Spec):
    """At least one result of ``tool`` (in ``session``, if given) whose preview matches ``pattern`` (re.search)."""

    tool: str
    pattern: str = ""
    session: str | None = None
    is_error: bool | None = None
    """``true``: only failed results count; ``false``: only successful ones; unset: either."""


CacheException = Literal["compaction"]


class Expectations(_Spec):
    status: str | None = None
    """Goal status (``complete``, ``blocked``, ``paused``, …) or, for ``run``, the turn status (``done``, …)."""
    files: dict[str, str] = Field(default_factory=dict)
    """Exact contents of files in the workspace afterwards."""
    file_patterns: dict[str, str] = Field(default_factory=dict)
    """A regular expression (``re.search``) each file must match."""
    absent: tuple[str, ...] = ()
    commands: tuple[str, ...] = ()
    """Shell commands (run in the workspace afterwards) that must exit 0."""
    escalations: int | None = None
    replans: int | None = None
    steps_done: int | None = None
    min_hit_ratio: dict[str, float] = Field(default_factory=dict)
    """Per session (``planner``, ``executor``) or ``overall``: the cache guard."""
    min_hit_ratio_after_first: dict[str, float] = Field(default_factory=dict)
    """The same guard leaving out each session's first request, which can hit nothing of the run."""
    max_cost_usd: float | None = None
    min_requests: dict[str, int] = Field(default_factory=dict)
    """Per session: at least this many requests (long-session scenarios)."""
    compactions: int | None = None
    faults: dict[str, int] = Field(default_factory=dict)
    """Faults the emulator must have injected, by kind (the scenario really exercised them)."""
    repairs: dict[str, int] = Field(default_factory=dict)
    """Repairs that must have happened, by kind (at least this many)."""
    max_requests: dict[str, int] = Field(default_factory=dict)
    """Per session or ``overall``: at most this many requests."""
    request_models: dict[str, str] = Field(default_factory=dict)
    """The model of request N: ``"3"`` (the run's third request, counting every session) or ``"executor:2"`` (that
    session's second) → ``flash``, ``pro`` or a full model id."""
    cache_growth: dict[str, tuple[CacheException, ...]] = Field(default_factory=dict)
    """Per session (or ``overall`` for every session): each request hits at least what the previous request of that
    session on the same model sent, minus one cache unit. The value names allowed exceptions (``compaction``: the
    request after the session was compacted)."""
    events: dict[str, int] = Field(default_factory=dict)
    """Event kinds (``escalation``, ``repair``, ``compaction``, ``plan_rejected`` …) emitted at least this often."""
    no_events: tuple[str, ...] = ()
    """Event kinds the run must never emit."""
    tool_results: tuple[ToolResultExpectation, ...] = ()
    text_pattern: str | None = None
    """A regular expression the final summary text must match (``re.search``)."""
    min_first_hit_tokens: dict[str, int] = Field(default_factory=dict)
    """Per session: its first request of the run hits at least this many tokens (a later run on a warm cache)."""


class RunSpec(_Spec):
    """One more run after the scenario's own, in the same workspace against the same emulator (its cache and its
    script's remaining replies persist). Unset fields are the scenario's; ``expect`` is checked right after this run,
    against what this run did."""

    command: Literal["goal", "plan", "run"] | None = None
    objective: str | None = Field(default=None, min_length=1)
    settings: ScenarioSettings | None = None
    review: tuple[ReviewAnswer, ...] | None = None
    resume: Resume | None = None
    resume_previous: bool = False
    """This run is ``reasonix goal --resume`` of the previous run (which was killed, or paused)."""
    kill_at_request: str | None = Field(default=None, pattern=r"^([A-Za-z0-9_-]+:)?[1-9][0-9]*$")
    """Run ``reasonix goal --yes`` as a real process and SIGKILL it when it sends this request (``"5"``: its fifth,
    ``"executor:3"``: that session's third), before the request is answered or uses a reply. Only the workspace
    expectations (files, patterns, absent, commands) apply to a killed run: its events died with it."""
    expect: Expectations = Expectations()


class RecordedExchange(_Spec):
    """One request and the reply as exchanged with the real API (recorded scenarios only)."""

    session: str
    request: dict[str, Any]
    reply: dict[str, Any]
    usage: dict[str, Any] | None = None


class Scenario(_Spec):
    name: str = Field(min_length=1, pattern=r"^[a-z0-9][a-z0-9_-]*$")
    title: str
    description: str = ""
    origin: Literal["scripted", "recorded"]
    command: Literal["goal", "plan", "run"] = "goal"
    objective: str = Field(min_length=1)
    workspace: dict[str, str] = Field(default_factory=dict)
    """Inline files (path → text). A folder scenario's ``workspace/`` directory is merged under these."""
    files: tuple[WorkspaceFile, ...] = ()
    """More workspace entries, written last: binary files (base64), modes, symlinks (see ``scenarios/workspace.py``)."""
    git: GitHistory | None = None
    """The workspace is a git repository with this history; the files above are written over its last commit."""
    settings: ScenarioSettings = ScenarioSettings()
    script: Script
    review: tuple[ReviewAnswer, ...] = ()
    """Answers at plan review, in order. Empty: approved automatically (``--yes``), and the report says so."""
    resume: Resume | None = None
    expect: Expectations = Expectations()
    """Checked right after the first run (the scenario's own), against what that run did."""
    kill_at_request: str | None = Field(default=None, pattern=r"^([A-Za-z0-9_-]+:)?[1-9][0-9]*$")
    """The scenario's own run is killed at this request (see :attr:`RunSpec.kill_at_request`)."""
    runs: tuple[RunSpec, ...] = ()
    """More runs in the same workspace against the same emulator, in order (run 2, 3, …)."""
    recorded: tuple[RecordedExchange, ...] = ()

    def run_scenarios(self) -> list[Scenario]:
        """The scenario's own run, then each of ``runs`` as a scenario of its own (no further runs)."""
        out = [self.model_copy(update={"runs": ()})]
        for run in self.runs:
            given = {
                k: getattr(run, k)
                for k in ("command", "objective", "settings", "review")
                if getattr(run, k) is not None
            }
            out.append(self.model_copy(update={**given, "resume": run.resume, "expect": run.expect, "runs": ()}))
        return out

    def run_specs(self) -> list[RunSpec]:
        """Each run's own spec (the scenario's own run first, as an empty spec)."""
        return [RunSpec(kill_at_request=self.kill_at_request), *self.runs]

    @model_validator(mode="after")
    def _runs_consistent(self) -> Scenario:
        if self.kill_at_request is not None and self.command != "goal":
            raise ValueError("kill_at_request runs `reasonix goal`; it needs command goal")
        for n, run in enumerate(self.runs, start=2):
            if run.kill_at_request is not None and (run.command or self.command) != "goal":
                raise ValueError(f"run {n}: kill_at_request runs `reasonix goal`; it needs command goal")
            if run.kill_at_request is not None and run.resume_previous:
                raise ValueError(f"run {n}: a resumed run is replayed in-process and cannot be killed")
        return self

    @model_validator(mode="after")
    def _origin_consistent(self) -> Scenario:
        if self.origin == "recorded" and not self.recorded:
            raise ValueError("a recorded scenario carries its recorded exchanges ('recorded' is empty)")
        if self.origin == "scripted" and self.recorded:
            raise ValueError("a scripted scenario has no recorded exchanges; set origin to 'recorded'")
        return self


class LoadedScenario(BaseModel):
    """A scenario and where it came from (for workspace folders and messages)."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)
    scenario: Scenario
    source: Path
    workspace_dir: Path | None = None

    def write_workspace(self, ws: Path) -> None:
        """Build the workspace in ``ws`` (created): git history, then the folder, inline texts and entries."""
        ws.mkdir(parents=True)
        if self.scenario.git is not None:
            write_git_history(ws, self.scenario.git)
        entries = folder_entries(self.workspace_dir) if self.workspace_dir is not None else []
        entries += [WorkspaceFile(path=rel, text=text) for rel, text in self.scenario.workspace.items()]
        for entry in [*entries, *self.scenario.files]:
            write_entry(ws, entry)

    def workspace_files(self) -> dict[str, bytes]:
        """Every workspace file: the folder's (if any), then the inline ones (which win)."""
        files: dict[str, bytes] = {}
        if self.workspace_dir is not None:
            for path in sorted(self.workspace_dir.rglob("*")):
                if path.is_file():
                    files[path.relative_to(self.workspace_dir).as_posix()] = path.read_bytes()
        for rel, text in self.scenario.workspace.items():
            files[rel] = text.encode("utf-8")
        return files


def load_scenario(path: Path) -> LoadedScenario:
    """A scenario from a ``.json`` file or a folder with ``scenario.json``."""
    folder: Path | None = None
    file = path
    if path.is_dir():
        folder = path
        file = path / SCENARIO_FILE
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ScenarioError(f"cannot read scenario {file}: {exc.strerror or exc}") from exc
    except json.JSONDecodeError as exc:
        raise ScenarioError(f"{file} is not valid JSON: {exc}") from exc
    try:
        scenario = Scenario.model_validate(data)
    except ValidationError as exc:
        raise ScenarioError(f"{file} is not a valid scenario:\n{exc}") from exc
    ws = folder / "workspace" if folder is not None and (folder / "workspace").is_dir() else None
    return LoadedScenario(scenario=scenario, source=file, workspace_dir=ws)


def library_paths(root: Path = LIBRARY) -> list[Path]:
    """Every scenario in a library folder: ``*.json`` files and folders with ``scenario.json``, sorted by name."""
    if not root.is_dir():
        return []
    out = [p for p in root.iterdir() if (p.suffix == ".json" and p.is_file()) or (p / SCENARIO_FILE).is_file()]
    return sorted(out, key=lambda p: p.name)
