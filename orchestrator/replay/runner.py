"""Replaying a scenario offline (``reasonix replay``): the real orchestrator against the in-process emulator.

The workspace is copied to a temporary directory; the emulator plays the scenario's script with the scenario's cache
unit; a goal or plan runs through :mod:`orchestrator.build` (the same code path as ``reasonix goal``) with a
:class:`~orchestrator.review.reviewer.ScriptedReviewer` built from the scenario's review answers, or approved
automatically when it has none; a ``run`` scenario is one executor session built as ``reasonix run`` builds it. A
scenario with ``resume`` runs once, must pause, and is resumed with the raised budget. Then the expectations are
checked (:mod:`orchestrator.replay.checks`) and a :class:`~orchestrator.replay.report.ReplayReport` says what happened.

A scripted reply is not a model: the report names the scenario's origin, and a recorded scenario's live requests are
compared with the recorded ones (prompt drift).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from functools import partial
from pathlib import Path
from typing import Any

import trio

from orchestrator.build import create_runner, goal_options, resume_runner
from orchestrator.checkpoints.git import STORES_DIR, state_home
from orchestrator.config.model import Config, ResolvedConfig
from orchestrator.conversation.engine import run_task
from orchestrator.errors import ReasonixError
from orchestrator.events import Escalated
from orchestrator.goal.runner import AnyEvent, GoalMode, GoalOptions, GoalOutcome, GoalRunner
from orchestrator.launch import ConversationLaunch, open_conversation
from orchestrator.policy.commands import CommandSetup
from orchestrator.policy.escalation import EscalationPolicy
from orchestrator.replay.checks import Observed, SessionTally, command_failures, figure_failures, file_failures
from orchestrator.replay.drift import prompt_drift
from orchestrator.replay.killed import KilledRunError, run_killed
from orchestrator.replay.recorder import RecordingTransport
from orchestrator.replay.report import ReplayReport
from orchestrator.replay.requests import RequestLog, request_failures
from orchestrator.review.reviewer import AutoApprove, Reviewer, ScriptedReviewer
from orchestrator.summary import SessionFigures
from orchestrator.text.wording import counted
from plans import Plan
from scenarios import LoadedScenario, Scenario, ScenarioError
from scenarios.emulator import open_emulator
from sessions import Compacted, DiagnosticsReported, RepairApplied, UsageReported
from sessions.sandbox import NoSandbox
from sessions.wire import ClientSettings, DeepSeekClient, DeepSeekError

REPLAY_KEY = "sk-replay-offline"
"""Sent to the in-process emulator, which accepts any non-empty key. No real key is ever read by a replay."""
RUN_ID = "replay"
DEFAULT_STALL_TIMEOUT_S = 30.0
OnRunner = Callable[[GoalRunner], None]


def _ignore(runner: GoalRunner) -> None:
    return None


def peak_clock(today: date | None = None) -> Callable[[], datetime]:
    """A fixed clock at 07:00 UTC on the latest weekday up to ``today``: today's price table at its peak rates, so a
    replay's costs and budget pauses do not depend on the hour it runs at (the conservative, peak-hour figure)."""
    day = today or datetime.now(UTC).date()
    while day.weekday() >= 5:
        day -= timedelta(days=1)
    at = datetime(day.year, day.month, day.day, 7, 0, tzinfo=UTC)
    return lambda: at


@dataclass
class _Tally:
    """Collects what the checks need from the event stream (over the first run and a resumed one), then passes each
    event on to the live view."""

    forward: Callable[[AnyEvent], None] | None = None
    sessions: dict[str, SessionTally] = field(default_factory=dict)
    escalations: int = 0
    compactions: int = 0
    repairs: Counter[str] = field(default_factory=Counter)
    log: RequestLog = field(default_factory=RequestLog)

    def __call__(self, event: AnyEvent) -> None:
        self.log(event)
        if isinstance(event, UsageReported):
            t = self.sessions.setdefault(event.session, SessionTally())
            t.count(
                event.usage.prompt_tokens,
                event.usage.prompt_cache_hit_tokens,
                event.cost_usd,
                event.usage.completion_tokens,
            )
        elif isinstance(event, DiagnosticsReported):
            self.sessions.setdefault(event.session, SessionTally()).diagnostics.append(event.diagnostics)
        elif isinstance(event, Escalated):
            self.escalations += 1
        elif isinstance(event, RepairApplied):
            self.repairs[event.repair] += 1
        elif isinstance(event, Compacted):
            self.compactions += 1
        if self.forward is not None:
            self.forward(event)


@dataclass
class _Result:
    status: str
    text: str = ""
    steps_done: int | None = None
    steps_total: int | None = None
    replans: int = 0
    failures: list[str] = field(default_factory=list)


def review_label(scenario: Scenario) -> str:
    if scenario.command == "run":
        return "none"
    if not scenario.review:
        return "automatic"
    n = len(scenario.review)
    return f"scripted ({counted(n, 'answer')})"


def reviewer_for(scenario: Scenario) -> Reviewer:
    """The scenario's review answers, or automatic approval (``--yes``) when it has none."""
    if not scenario.review:
        return AutoApprove()
    answers = [
        {
            "kind": a.decision,
            "feedback": a.feedback,
            "plan": Plan.model_validate(a.plan) if a.plan is not None else None,
        }
        for a in scenario.review
    ]
    return ScriptedReviewer(answers)


def _options(scenario: Scenario, config: Config, **budget: Any) -> GoalOptions:
    s = scenario.settings
    return goal_options(
        config,
        preset=s.preset,
        escalation=EscalationPolicy(
            preset=s.preset, failure_threshold=s.failure_threshold, max_pro_turns=s.max_pro_turns
        ),
        max_step_attempts=s.max_step_attempts,
        context_window=s.context_window,
        reasoning_effort=s.reasoning_effort,
        parallel=s.parallel,
        **budget,
    )


def _goal_result(outcome: GoalOutcome, failures: list[str]) -> _Result:
    return _Result(
        status=outcome.status,
        text=outcome.summary,
        steps_done=outcome.steps_done,
        steps_total=outcome.steps_total,
        replans=outcome.record.replans,
        failures=failures,
    )


async def _run_goal(
    scenario: Scenario,
    ws: Path,
    client: DeepSeekClient,
    tally: _Tally,
    config_dir: Path,
    on_runner: OnRunner,
    run_id: str = RUN_ID,
    resume_id: str | None = None,
) -> _Result:
    s = scenario.settings
    config = Config(thinking=s.thinking)
    mode: GoalMode = "plan" if scenario.command == "plan" else "goal"
    reviewer = reviewer_for(scenario)
    common: dict[str, Any] = dict(
        workspace=ws, client=client, reviewer=reviewer, on_event=tally, config_dir=config_dir, clock=peak_clock()
    )
    options = _options(
        scenario, config, budget_usd=s.budget_usd, max_requests=s.max_requests, max_minutes=s.max_minutes
    )
    if resume_id is not None:  # --resume of the previous run (killed or paused)
        runner = resume_runner(run_id=resume_id, options=options, **common)
    else:
        runner = create_runner(objective=scenario.objective, options=options, run_id=run_id, **common)
    on_runner(runner)
    outcome = await runner.run(mode)
    failures: list[str] = []
    resume = scenario.resume
    if resume is None:
        return _goal_result(outcome, failures)
    if outcome.status != "paused":
        if resume.expect_paused_first:
            failures.append(f"resume: expected the first run to pause, but it ended {outcome.status}")
        return _goal_result(outcome, failures)
    raised = _options(
        scenario,
        config,
        budget_usd=resume.budget_usd,
        max_requests=resume.max_requests,
        max_minutes=resume.max_minutes,
    )
    runner = resume_runner(run_id=outcome.run_id, options=raised, **common)
    on_runner(runner)
    return _goal_result(await runner.run(mode), failures)


async def _run_task(
    scenario: Scenario,
    ws: Path,
    client: DeepSeekClient,
    tally: _Tally,
    config_dir: Path,
    on_runner: OnRunner,
    run_id: str = RUN_ID,
    resume_id: str | None = None,
) -> _Result:
    if resume_id is not None:
        raise ScenarioError("a `run` scenario cannot resume a previous run; resume_previous needs command goal")
    s = scenario.settings
    config = Config(base_url=client.base_url, thinking=s.thinking, reasoning_effort=s.reasoning_effort or "high")
    resolved = ResolvedConfig(config=config, api_key=REPLAY_KEY, sources={})
    conversation = open_conversation(
        ConversationLaunch(
            workspace=ws,
            model="pro" if s.preset == "pro" else "flash",
            max_requests=s.max_requests,
            run_id=run_id,
            checkpoints=False,
        ),
        env={},
        on_event=tally,
        resolved=resolved,
        commands=CommandSetup(sandbox=NoSandbox(), gate=None, notice=None),  # type: ignore[arg-type]
        client=client,
        memory_config_dir=config_dir,
    )
    session = conversation.start()
    session.ledger.clock = peak_clock()  # priced as the goal's sessions are: today's table, peak rates
    try:
        summary = await run_task(conversation, scenario.objective)
    finally:
        conversation.close()
    failures = [f"run error: {summary.error}"] if summary.error else []
    return _Result(status=summary.status, text=summary.text, failures=failures)


def _observed(result: _Result, tally: _Tally, stats: dict[str, Any]) -> Observed:
    return Observed(
        status=result.status,
        escalations=tally.escalations,
        replans=result.replans,
        steps_done=result.steps_done,
        compactions=tally.compactions,
        sessions=tally.sessions,
        faults=Counter(stats.get("total", {}).get("faults_injected", {})),
        repairs=tally.repairs,
    )


async def _run_failures(
    scenario: Scenario, result: _Result, tally: _Tally, ws: Path, stats: dict[str, Any]
) -> list[str]:
    """Every expectation of one run, checked right after it (the emulator's fault counts are cumulative)."""
    expect = scenario.expect
    failures = list(result.failures)
    failures += figure_failures(expect, _observed(result, tally, stats))
    failures += request_failures(expect, tally.log, cache_unit=scenario.settings.cache_unit, text=result.text)
    failures += file_failures(expect, ws)
    failures += await command_failures(expect.commands, ws)
    return failures


def _figures(tally: _Tally, emulator_stats: dict[str, Any]) -> dict[str, SessionFigures]:
    known = emulator_stats.get("sessions", {})
    out = {}
    for name, t in sorted(tally.sessions.items()):
        efficiency = known.get(name, {}).get("efficiency")
        out[name] = SessionFigures(
            requests=t.requests,
            prompt_tokens=t.prompt_tokens,
            prompt_cache_hit_tokens=t.hit_tokens,
            prompt_cache_miss_tokens=t.miss_tokens,
            completion_tokens=t.completion_tokens,
            cost_usd=round(t.cost_usd, 6),
            cache_hit_ratio=t.hit_ratio,
            cache_hit_ratio_after_first=t.hit_ratio_after_first,
            efficiency=efficiency,
        )
    return out


def forget_stores(root: Path) -> None:
    """Remove the checkpoint stores (in the user's state home) of every workspace the replay made under ``root``: the
    temporary copies are gone, and a replay leaves nothing of itself behind."""
    stores = state_home(os.environ) / STORES_DIR
    prefix = str(root.resolve()) + os.sep
    try:
        entries = list(os.scandir(stores))
    except OSError:
        return
    for entry in entries:
        try:
            named = (Path(entry.path) / "workspace").read_text(encoding="utf-8").strip()
        except OSError:
            continue
        if named.startswith(prefix) and not entry.is_symlink():
            shutil.rmtree(entry.path, ignore_errors=True)


async def replay_scenario(
    loaded: LoadedScenario,
    *,
    keep: bool = False,
    on_event: Callable[[AnyEvent], None] | None = None,
    on_runner: OnRunner | None = None,
    stall_timeout_s: float = DEFAULT_STALL_TIMEOUT_S,
) -> ReplayReport:
    """Replay one scenario and check its expectations. Never raises for a failing scenario: the report says it.
    A bug in our own code still raises. ``on_event`` sees every session and goal event (a live view);
    ``on_runner`` gets each goal runner as it is built (the first run's, then a resumed one's)."""
    scenario = loaded.scenario
    root = Path(tempfile.mkdtemp(prefix=f"reasonix-replay-{scenario.name}-"))
    ws = root / "workspace"
    config_dir = root / "no-user-config"  # no user memory: a replay depends on nothing outside the scenario
    loaded.write_workspace(ws)
    tally = _Tally(forward=on_event)
    transport = RecordingTransport() if scenario.origin == "recorded" else None
    error: str | None = None
    result = _Result(status="error")
    failures: list[str] = []
    drift: list[str] = []
    runs = scenario.run_scenarios()
    try:
        async with open_emulator(script=scenario.script, cache_unit=scenario.settings.cache_unit) as emu:
            client = DeepSeekClient(
                base_url=emu.base_url,
                api_key=REPLAY_KEY,
                settings=ClientSettings(
                    backoff_initial_s=0.01, backoff_max_s=0.05, backoff_jitter_s=0, stall_timeout_s=stall_timeout_s
                ),
                transport=transport,
            )
            async with client:
                previous_id: str | None = None
                for index, (sc, spec) in enumerate(zip(runs, scenario.run_specs(), strict=True)):
                    label = f"run {index + 1}: " if len(runs) > 1 else ""
                    run_tally = _Tally(forward=tally)
                    run_id = RUN_ID if index == 0 else f"{RUN_ID}-{index + 1}"
                    result = _Result(status="error")
                    try:
                        if spec.kill_at_request is not None:
                            log, home = root / f"killed-run-{index + 1}.log", root / "home"
                            previous_id = await run_killed(sc, spec.kill_at_request, ws, emu, log, home)
                            result = _Result(status="killed")
                            found = file_failures(sc.expect, ws) + await command_failures(sc.expect.commands, ws)
                            failures += [label + f for f in found]
                            continue
                        run = _run_task if sc.command == "run" else _run_goal
                        resume_id = previous_id if spec.resume_previous else None
                        result = await run(
                            sc, ws, client, run_tally, config_dir, on_runner or _ignore, run_id, resume_id
                        )
                        previous_id = resume_id or run_id
                    except (ReasonixError, DeepSeekError, KilledRunError, ScenarioError) as exc:
                        error = error or f"{label}{type(exc).__name__}: {exc}"
                        failures.append(f"{label}the replay stopped: {type(exc).__name__}: {exc}")
                    found = await _run_failures(sc, result, run_tally, ws, emu.stats())
                    failures += [label + f for f in found]
                    if result.status == "error":
                        if index + 1 < len(runs):
                            failures.append(f"runs {index + 2}–{len(runs)} were not started: run {index + 1} broke")
                        break
        drift = prompt_drift(scenario.recorded, transport.exchanges) if transport is not None else []
        if drift:
            failures.append(f"prompt drift: {counted(len(drift), 'request')} differ from the recording (diffs below)")
        stats = emu.stats()
        observed = _observed(result, tally, stats)
    finally:
        if not keep:
            shutil.rmtree(root, ignore_errors=True)
            forget_stores(root)
    overall = observed.overall
    return ReplayReport(
        scenario=scenario.name,
        title=scenario.title,
        origin=scenario.origin,
        command=scenario.command,
        ok=not failures,
        status=result.status,
        text=result.text,
        steps_done=result.steps_done,
        steps_total=result.steps_total,
        escalations=tally.escalations,
        replans=result.replans,
        compactions=tally.compactions,
        requests=overall.requests,
        prompt_tokens=overall.prompt_tokens,
        prompt_cache_hit_tokens=overall.hit_tokens,
        prompt_cache_miss_tokens=overall.miss_tokens,
        completion_tokens=overall.completion_tokens,
        cache_hit_ratio=overall.hit_ratio,
        cost_usd=round(overall.cost_usd, 6),
        sessions=_figures(tally, stats),
        review=review_label(scenario),
        faults=dict(sorted(observed.faults.items())),
        repairs=dict(sorted(tally.repairs.items())),
        failures=tuple(failures),
        drift=tuple(drift),
        workspace=str(ws) if keep else None,
        error=error,
    )


def replay(loaded: LoadedScenario, **kwargs: Any) -> ReplayReport:
    """:func:`replay_scenario` in a fresh Trio run (from synchronous code: the CLI, a synchronous test)."""
    return trio.run(partial(replay_scenario, loaded, **kwargs))
