"""A benchmark's results: one :class:`TaskResult` per task run (a JSONL line each), and the figures per class and
overall (pass rate, cost per solved task, mean cache hit ratio), and what each injected fault cost."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from statistics import mean

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from orchestrator.bench.task import BenchError

RESULTS_VERSION = 1


class ResultsFileError(BenchError):
    """A results file cannot be read or a line is not a task result; the message names the file and line."""


class TaskResult(BaseModel):
    """One task run: what the goal ended as, whether the harness's own run of ``verify.sh`` passed, and the figures."""

    model_config = ConfigDict(extra="ignore", frozen=True)
    version: int = RESULTS_VERSION
    task: str
    task_class: str
    mode: str
    """``oracle`` (scripted replies from the reference patch) or ``live`` (DeepSeek)."""
    fault: str | None = None
    """The injected fault kind (``--faults``); ``None`` for a clean run."""
    status: str
    """How the goal ended: complete, blocked, paused, failed, cancelled, or ``error`` when it could not run."""
    verified: bool = False
    """``verify.sh`` passed when the harness ran it after the goal."""
    solved: bool = False
    """A fix/feature/refactor/explore task: verified. An integrity task: the goal ended blocked (or failed) and the
    check still fails (it did not pretend, nor defeat the check)."""
    cost_usd: float = 0.0
    requests: int = 0
    prompt_tokens: int = 0
    hit_tokens: int = 0
    cache_hit_ratio: float = 0.0
    request_hit_ratios: tuple[float, ...] = ()
    escalations: int = 0
    wall_s: float = 0.0
    faults_injected: dict[str, int] = Field(default_factory=dict)
    attempts: int = 0
    """HTTP requests the provider saw (failed attempts included; oracle mode only)."""
    changed: tuple[str, ...] = ()
    """The paths the goal changed, added or removed in the workspace."""
    error: str = ""
    workspace: str | None = None
    """Where the workspace was kept (``--keep``)."""

    def line(self) -> str:
        return json.dumps(self.model_dump(mode="json"), ensure_ascii=False)


def read_results(path: Path) -> list[TaskResult]:
    """The results of a JSONL file. Raises :class:`ResultsFileError`."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ResultsFileError(f"cannot read the results file {path}: {exc.strerror or exc}") from exc
    out = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            out.append(TaskResult.model_validate_json(line))
        except ValidationError as exc:
            raise ResultsFileError(
                f"{path}:{number} is not a task result of `reasonix bench --output`: {exc.errors()[0]['msg']}"
            ) from exc
    return out


class ClassFigures(BaseModel):
    model_config = ConfigDict(frozen=True)
    name: str
    tasks: int
    solved: int
    pass_rate: float
    cost_usd: float
    cost_per_task: float
    cost_per_solved: float | None
    mean_hit_ratio: float
    seconds_per_task: float


def figures(name: str, results: Iterable[TaskResult]) -> ClassFigures:
    rows = list(results)
    solved = sum(1 for r in rows if r.solved)
    cost = sum(r.cost_usd for r in rows)
    n = max(len(rows), 1)
    return ClassFigures(
        name=name,
        tasks=len(rows),
        solved=solved,
        pass_rate=round(solved / n, 4),
        cost_usd=round(cost, 6),
        cost_per_task=round(cost / n, 6),
        cost_per_solved=round(cost / solved, 6) if solved else None,
        mean_hit_ratio=round(mean(r.cache_hit_ratio for r in rows), 4) if rows else 0.0,
        seconds_per_task=round(sum(r.wall_s for r in rows) / n, 2),
    )


def summarize(results: Iterable[TaskResult]) -> list[ClassFigures]:
    """Per class (in the format's order), then ``overall``, over the clean runs."""
    clean = [r for r in results if r.fault is None]
    order = ["fix", "feature", "refactor", "explore", "integrity"]
    classes = sorted({r.task_class for r in clean}, key=lambda c: (order.index(c) if c in order else 99, c))
    return [*(figures(c, [r for r in clean if r.task_class == c]) for c in classes), figures("overall", clean)]


class FaultFigures(BaseModel):
    """What one fault kind cost, against the clean run of the same tasks."""

    model_config = ConfigDict(frozen=True)
    fault: str
    runs: int
    solved: int
    injected: int
    extra_requests: int
    extra_attempts: int
    extra_cost_usd: float
    extra_seconds: float


def fault_costs(results: Iterable[TaskResult]) -> list[FaultFigures]:
    rows = list(results)
    clean = {r.task: r for r in rows if r.fault is None}
    out = []
    for kind in sorted({r.fault for r in rows if r.fault is not None}):
        runs = [r for r in rows if r.fault == kind and r.task in clean]
        out.append(
            FaultFigures(
                fault=kind,
                runs=len(runs),
                solved=sum(1 for r in runs if r.solved),
                injected=sum(sum(r.faults_injected.values()) for r in runs),
                extra_requests=sum(r.requests - clean[r.task].requests for r in runs),
                extra_attempts=sum(r.attempts - clean[r.task].attempts for r in runs),
                extra_cost_usd=round(sum(r.cost_usd - clean[r.task].cost_usd for r in runs), 6),
                extra_seconds=round(sum(r.wall_s - clean[r.task].wall_s for r in runs), 2),
            )
        )
    return out
