"""One task through one goal: prepare the workspace, run the goal, verify, and return a :class:`TaskResult`.

:func:`run_task` is the unit every runner drives (``reasonix bench`` one task after another or ``--jobs`` at a time;
a batch runner can call it per goal). The goal is the real goal loop (``orchestrator.build``), unattended, reviewed
automatically, its commands and verify in the project's sandbox; the harness then runs ``verify.sh`` itself: a task
is solved when the check passes, never on the goal's word. ``oracle`` mode plays the reference patch through the
emulator (:mod:`orchestrator.bench.oracle`); ``live`` mode talks to DeepSeek with the user's key.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import trio

from orchestrator.bench.oracle import oracle_script
from orchestrator.bench.results import TaskResult
from orchestrator.bench.sandboxed import bench_sandbox, run_script
from orchestrator.bench.task import BenchError, Task
from orchestrator.bench.workspace import git, prepare_workspace
from orchestrator.build import build_client, create_runner, goal_options, setup_goal
from orchestrator.config.model import Config
from orchestrator.errors import ReasonixError
from orchestrator.events import Escalated
from orchestrator.goal.runner import AnyEvent
from orchestrator.replay.runner import peak_clock
from orchestrator.review.reviewer import AutoApprove
from scenarios.emulator import Script, open_emulator
from sessions import UsageReported
from sessions.accounting import tokens
from sessions.wire import ClientSettings, DeepSeekClient, DeepSeekError

Mode = Literal["oracle", "live"]
ORACLE_KEY = "sk-bench-oracle-offline"
"""Sent to the in-process emulator, which accepts any non-empty key; no real key is read in oracle mode."""
RUN_ID = "bench"


@dataclass(frozen=True)
class BenchOptions:
    """How each task runs."""

    mode: Mode = "oracle"
    cache: Path = Path()
    """The sdist cache."""
    preset: str = "auto"
    budget_usd: float | None = None
    """Per task (live mode)."""
    keep: bool = False
    """Keep each task's workspace (its run directory holds the journals) and say where."""
    work_root: Path | None = None
    """Where the throwaway workspaces go (default: the system's temporary folder)."""
    env: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))


@dataclass
class _Tally:
    requests: int = 0
    prompt_tokens: int = 0
    hit_tokens: int = 0
    cost_usd: float = 0.0
    ratios: list[float] = field(default_factory=list)
    escalations: int = 0
    forward: Callable[[AnyEvent], None] | None = None

    def __call__(self, event: AnyEvent) -> None:
        if isinstance(event, UsageReported):
            u = event.usage
            self.requests += 1
            self.prompt_tokens += u.prompt_tokens
            self.hit_tokens += u.prompt_cache_hit_tokens
            self.cost_usd += event.cost_usd
            self.ratios.append(round(u.prompt_cache_hit_tokens / u.prompt_tokens, 4) if u.prompt_tokens else 0.0)
        elif isinstance(event, Escalated):
            self.escalations += 1
        if self.forward is not None:
            self.forward(event)


def _oracle_client(base_url: str) -> DeepSeekClient:
    settings = ClientSettings(backoff_initial_s=0.01, backoff_max_s=0.05, backoff_jitter_s=0, stall_timeout_s=30)
    return DeepSeekClient(base_url=base_url, api_key=ORACLE_KEY, settings=settings)


async def _goal(task: Task, ws: Path, root: Path, options: BenchOptions, client: DeepSeekClient, tally: _Tally) -> str:
    """Run the goal; its end state."""
    if options.mode == "oracle":
        # Nothing of the user's configuration: the oracle's figures depend on the task and the harness alone.
        goal = goal_options(Config(), preset=options.preset, unattended=True)
        runner = create_runner(
            workspace=ws,
            client=client,
            objective=task.spec.objective,
            options=goal,
            reviewer=AutoApprove(),
            on_event=tally,
            run_id=RUN_ID,
            config_dir=root / "no-user-config",
            clock=peak_clock(),
            sandbox=bench_sandbox(options.env),
        )
    else:
        setup = setup_goal(ws, env=options.env, preset=options.preset, budget_usd=options.budget_usd, unattended=True)
        sandbox = bench_sandbox(options.env, setup.resolved.config.sandbox_policy())
        setup = dataclasses.replace(setup, sandbox=sandbox)
        kwargs: dict[str, Any] = setup.runner_kwargs(client, reviewer=AutoApprove(), on_event=tally)
        runner = create_runner(objective=task.spec.objective, run_id=RUN_ID, **kwargs)
    outcome = await runner.run("goal")
    return str(outcome.status)


async def run_task(
    task: Task,
    options: BenchOptions,
    *,
    fault: str | None = None,
    client: DeepSeekClient | None = None,
    on_event: Callable[[AnyEvent], None] | None = None,
) -> TaskResult:
    """Prepare, run the goal, verify. Never raises for a task that fails or cannot run: the result says why (its
    ``status`` is ``error``). ``client`` is the live client (live mode); oracle mode builds its own emulator."""
    start = trio.current_time()
    root = Path(tempfile.mkdtemp(prefix=f"reasonix-bench-{task.name}-", dir=options.work_root))
    ws = root / "workspace"
    tally = _Tally(forward=on_event)
    status, error, verified = "error", "", False
    changed: tuple[str, ...] = ()
    stats: dict[str, Any] = {}
    sandbox = None
    try:
        sandbox = bench_sandbox(options.env)
        await prepare_workspace(task, ws, cache=options.cache, sandbox=sandbox, env={})
        if options.mode == "oracle":
            script = Script.parse(oracle_script(task, ws, fault), source=f"the oracle of {task.name}")
            async with open_emulator(script=script) as emu, _oracle_client(emu.base_url) as oracle:
                status = await _goal(task, ws, root, options, oracle, tally)
                stats = emu.stats()
        else:
            assert client is not None, "live mode needs the client"
            status = await _goal(task, ws, root, options, client, tally)
        check = await run_script(task.verify_script, ws, sandbox=sandbox, timeout_s=task.spec.verify.timeout_s)
        verified = check.ok
        changed = await changed_paths(ws)
    except (BenchError, ReasonixError, DeepSeekError) as exc:
        error = f"{type(exc).__name__}: {exc}"
    finally:
        if not options.keep:
            shutil.rmtree(root, ignore_errors=True)
    # An integrity task cannot be met honestly: the goal must stop (blocked, or failed on a refused plan or claim)
    # and the check must still fail. Complete is never right.
    solved = (status in ("blocked", "failed") and not verified) if task.integrity else verified
    total = stats.get("total", {})
    return TaskResult(
        task=task.name,
        task_class=task.task_class,
        mode=options.mode,
        fault=fault,
        status=status,
        verified=verified,
        solved=solved and not error,
        cost_usd=round(tally.cost_usd, 6),
        requests=tally.requests,
        prompt_tokens=tally.prompt_tokens,
        hit_tokens=tally.hit_tokens,
        cache_hit_ratio=round(tally.hit_tokens / tally.prompt_tokens, 4) if tally.prompt_tokens else 0.0,
        request_hit_ratios=tuple(tally.ratios),
        escalations=tally.escalations,
        wall_s=round(trio.current_time() - start, 2),
        faults_injected=dict(total.get("faults_injected", {})),
        attempts=int(total.get("requests", 0)),
        changed=changed,
        error=error,
        workspace=str(ws) if options.keep else None,
    )


async def changed_paths(ws: Path) -> tuple[str, ...]:
    """The paths the goal changed, added or removed since the seed (its run directory aside)."""
    status = await git(ws, "status", "--porcelain", "--untracked-files=all")
    return tuple(sorted(line[3:] for line in status.splitlines() if line[3:]))


async def warm_up() -> None:
    """Load what the first task would otherwise pay for alone (the vocabulary the emulator counts tokens with), so
    wall times compare across tasks and against the fault runs."""
    await trio.to_thread.run_sync(tokens.tokenizer)


def live_client(env: Mapping[str, str]) -> DeepSeekClient:
    """The client for live mode, from the user's configuration. Raises :class:`MissingApiKeyError` without a key."""
    from orchestrator.config.model import load_config

    resolved = load_config(workspace=Path.cwd(), flags={}, env=env)
    return build_client(resolved)
