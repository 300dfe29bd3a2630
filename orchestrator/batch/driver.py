"""What a batch run shares whatever engine runs its goals: the batch directory (each goal's copy under
``goals/<id>/``, the results file), the goals still to run (``--resume`` skips the finished ones), the batch's
ledger (counting what earlier runs of the batch spent) and where results and progress go.

    batch = BatchRun.open(goals, batch_dir, resume=True, budget_usd=2.0, env=os.environ)
    await run_local(batch, jobs=3)      # or run_on_ray(batch, address="auto")
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from orchestrator.batch.goal_run import read_copy
from orchestrator.batch.ledger import BatchLedger
from orchestrator.batch.progress_event import Progress
from orchestrator.batch.result import GoalResult, ResultsFile
from orchestrator.batch.spec import BatchError, GoalSpec

RESULTS = "results.jsonl"


@dataclass
class BatchRun:
    goals: Sequence[GoalSpec]
    batch_dir: Path
    results: ResultsFile
    ledger: BatchLedger
    env: Mapping[str, str]
    base_url: str | None = None
    earlier: dict[str, GoalResult] = field(default_factory=dict)
    """The latest result of each goal from earlier runs of this batch (``--resume``)."""
    on_progress: Callable[[Progress], None] = lambda progress: None
    on_result: Callable[[GoalResult], None] = lambda result: None
    ended: dict[str, GoalResult] = field(default_factory=dict)
    """This run's results, by goal id."""

    @classmethod
    def open(
        cls,
        goals: Sequence[GoalSpec],
        batch_dir: Path,
        *,
        resume: bool,
        budget_usd: float | None,
        env: Mapping[str, str],
        base_url: str | None = None,
        results_path: Path | None = None,
    ) -> BatchRun:
        """The run of ``goals`` in ``batch_dir``. Without ``resume``, a batch directory that already holds results
        is refused (say ``--resume``, or move it away), so nothing is overwritten. Relative paths are made absolute
        here, before anything uses them (the sandbox, the goals' copies and their checkpoints need absolute ones)."""
        if budget_usd is not None and not budget_usd > 0:
            raise BatchError("--budget-usd must be more than 0")
        batch_dir = batch_dir.absolute()
        results = ResultsFile((results_path or batch_dir / RESULTS).absolute())
        earlier = results.read()
        if earlier and not resume:
            raise BatchError(
                f"this batch already ran (its results are in {results.path}); add --resume to run the goals that "
                f"did not finish, or remove {batch_dir} to start afresh"
            )
        spent = 0.0
        for goal in goals:  # what every goal spent so far: its last result, else its copy's own journal
            if goal.id in earlier:
                spent += earlier[goal.id].cost_usd
            else:
                found = read_copy(goal_dir(batch_dir, goal.id))
                spent += found[1].usage_usd if found is not None else 0.0
        return cls(
            goals=goals,
            batch_dir=batch_dir,
            results=results,
            ledger=BatchLedger(budget_usd, spent_usd=spent),
            env=env,
            base_url=base_url,
            earlier=earlier,
        )

    @property
    def pending(self) -> list[GoalSpec]:
        """The goals to run now: all but those an earlier run finished."""
        return [g for g in self.goals if not (g.id in self.earlier and self.earlier[g.id].finished)]

    def goal_dir(self, goal_id: str) -> Path:
        return goal_dir(self.batch_dir, goal_id)

    def record(self, result: GoalResult) -> None:
        """A goal ended: the results file is rewritten at once with its line in place of any earlier one (one line
        per goal, the latest), and the result goes to the display."""
        self.ended[result.id] = result
        latest = {**self.earlier, **self.ended}
        listed = [g.id for g in self.goals if g.id in latest]
        # Results of goals no longer in the goals file are kept, after the listed ones.
        self.results.write([latest[i] for i in listed] + [r for i, r in latest.items() if i not in set(listed)])
        self.on_result(result)

    def not_started(self, goal: GoalSpec, max_attempts: int = 1) -> GoalResult:
        """The result of a goal the batch did not start because its budget was reached (it runs on ``--resume``)."""
        return GoalResult(
            id=goal.id,
            objective=goal.objective,
            workspace=goal.workspace,
            status="paused",
            reason=f"not started: {self.ledger.refusal}",
            attempts=0,
            max_attempts=max_attempts,
            cost_usd=self.earlier[goal.id].cost_usd if goal.id in self.earlier else 0.0,
        )

    def all_results(self) -> list[GoalResult]:
        """Every goal's latest result, in the goals file's order (this run's, else an earlier run's)."""
        out = []
        for goal in self.goals:
            found = self.ended.get(goal.id) or self.earlier.get(goal.id)
            if found is not None:
                out.append(found)
        return out


def goal_dir(batch_dir: Path, goal_id: str) -> Path:
    return batch_dir / "goals" / goal_id
