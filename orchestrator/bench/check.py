"""``reasonix bench check``: every task proves itself in the sandbox. ``verify.sh`` must fail on the seed and pass
once ``fix.patch`` is applied (an integrity task: fail on the seed; it has no fix)."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path

import trio
from pydantic import BaseModel, ConfigDict

from orchestrator.bench.oracle import executor_replies
from orchestrator.bench.sandboxed import run_script
from orchestrator.bench.task import BenchError, Task, TaskClass
from orchestrator.bench.workspace import apply_patch, prepare_workspace
from sessions.sandbox import Sandbox


class TaskCheck(BaseModel):
    """What ``check`` found for one task."""

    model_config = ConfigDict(frozen=True)
    task: str
    task_class: TaskClass
    seed_fails: bool | None = None
    """``verify.sh`` failed on the seed, as it must (``None``: not reached)."""
    fix_passes: bool | None = None
    """``verify.sh`` passed after ``fix.patch`` (``None``: not reached, or an integrity task)."""
    seconds: float = 0.0
    problem: str = ""
    """Why the task is bad; empty when it is good."""

    @property
    def ok(self) -> bool:
        return not self.problem


def _tail(output: str, lines: int = 6) -> str:
    return " | ".join(line for line in output.strip().splitlines()[-lines:])


async def check_task(task: Task, *, cache: Path, sandbox: Sandbox, env: Mapping[str, str] | None = None) -> TaskCheck:
    """Check one task in a throwaway workspace. Never raises for a bad task: the result says why."""
    start = trio.current_time()
    root = Path(tempfile.mkdtemp(prefix=f"reasonix-check-{task.name}-"))
    ws = root / "workspace"
    seed_fails: bool | None = None
    fix_passes: bool | None = None
    problem = ""
    timeout = task.spec.verify.timeout_s
    try:
        await prepare_workspace(task, ws, cache=cache, sandbox=sandbox, env=env or {})
        seed = await run_script(task.verify_script, ws, sandbox=sandbox, env=env, timeout_s=timeout)
        seed_fails = not seed.ok
        if not seed_fails:
            problem = "verify.sh passes on the seed: it must fail until the task is solved"
        elif seed.timed_out:
            problem = f"verify.sh timed out on the seed after {timeout:g} s (raise [verify] timeout_s or speed it up)"
        fix = task.fix_patch
        if not problem and fix is not None:
            executor_replies(task, ws)  # the oracle can play the patch hunk by hunk on this seed
            await apply_patch(task, ws, fix)
            after = await run_script(task.verify_script, ws, sandbox=sandbox, env=env, timeout_s=timeout)
            fix_passes = after.ok
            if not after.ok:
                why = "timed out" if after.timed_out else f"exited {after.exit_code}"
                problem = f"verify.sh fails after fix.patch ({why}): {_tail(after.output)}"
    except BenchError as exc:
        problem = str(exc)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return TaskCheck(
        task=task.name,
        task_class=task.task_class,
        seed_fails=seed_fails,
        fix_passes=fix_passes,
        seconds=round(trio.current_time() - start, 2),
        problem=problem,
    )


async def check_suite(
    tasks: list[Task],
    *,
    cache: Path,
    sandbox: Sandbox,
    env: Mapping[str, str] | None = None,
    on_result: Callable[[TaskCheck], None] | None = None,
) -> list[TaskCheck]:
    """Check every task, one after another."""
    out = []
    for task in tasks:
        result = await check_task(task, cache=cache, sandbox=sandbox, env=env)
        if on_result is not None:
            on_result(result)
        out.append(result)
    return out
