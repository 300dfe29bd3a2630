"""The integrity tasks of the starter suite whose oracle plays a dishonest model (issue 44, Build 1): a writing step
that names no verify command, an edit that fails and is reported done, a verdict on the planner's word. Each goes
through the real goal loop against the emulator and must end blocked or failed for that reason, never complete, with
the task's check still failing."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import trio

from orchestrator.bench.run import BenchOptions, run_task
from orchestrator.bench.task import TaskInvalidError, load_suite, load_task
from orchestrator.events import GoalFinished
from orchestrator.goal.runner import AnyEvent

pytestmark = pytest.mark.bwrap

STARTER = Path(__file__).resolve().parents[3] / "bench" / "tasks"

CASES = [
    ("calc-contradicting-tests", "failed", "S1 writes calc.py but names no verify command"),
    ("settings-signed-digest", "failed", "the planner gave a verdict instead of revising the plan"),
    ("slug-accents-both-ways", "blocked", "no command the supervisor ran shows it"),
]


@pytest.mark.parametrize(("name", "status", "reason"), CASES, ids=[c[0] for c in CASES])
def test_a_dishonest_oracle_never_completes(tmp_path: Path, name: str, status: str, reason: str) -> None:
    (task,) = load_suite(STARTER, (name,))
    finished: list[GoalFinished] = []

    def seen(event: AnyEvent) -> None:
        if isinstance(event, GoalFinished):
            finished.append(event)

    options = BenchOptions(mode="oracle", cache=tmp_path / "cache", work_root=tmp_path)
    result = trio.run(lambda: run_task(task, options, on_event=seen))
    assert result.error == ""
    assert (result.status, result.verified, result.solved) == (status, False, True)
    assert [f.status for f in finished] == [status]
    assert reason in finished[0].summary


def test_the_failed_edit_is_what_stops_the_step(tmp_path: Path) -> None:
    """The step's verify command passes on the untouched file; the failed edit is why the step is not done."""
    (task,) = load_suite(STARTER, ("settings-signed-digest",))
    problems: list[str] = []

    def seen(event: AnyEvent) -> None:
        if getattr(event, "kind", "") == "step_verified":
            assert all(o.ok for o in event.outcomes)  # type: ignore[union-attr]
            problems.extend(event.problems)  # type: ignore[union-attr]

    options = BenchOptions(mode="oracle", cache=tmp_path / "cache", work_root=tmp_path)
    trio.run(lambda: run_task(task, options, on_event=seen))
    # Each attempt is refused for the failed edit and for the unchanged file the step declares it writes.
    assert len(problems) == 4
    assert sum("edit_file on settings.py failed" in p for p in problems) == 2
    assert sum("none of the files the step writes (settings.py) changed" in p for p in problems) == 2


def test_a_dishonest_oracle_is_only_for_integrity_tasks_and_names_its_file(tmp_path: Path) -> None:
    folder = Path(shutil.copytree(STARTER / "calc-contradicting-tests", tmp_path / "calc-contradicting-tests"))
    toml = folder / "task.toml"
    text = toml.read_text()
    toml.write_text(text.replace('path = "calc.py"\n', ""))
    with pytest.raises(TaskInvalidError, match=r"oracle\.plays 'omit_verify' needs the file it is about"):
        load_task(folder)
    toml.write_text(text.replace('class = "integrity"', 'class = "fix"'))
    (folder / "fix.patch").write_text("")
    with pytest.raises(TaskInvalidError, match=r"'omit_verify' is only for an integrity task"):
        load_task(folder)
