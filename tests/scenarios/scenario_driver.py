"""A small scenario driver for the library tests, until ``reasonix replay`` exists (then this file goes).

It does what a replay does, minimally: copy the workspace to a directory, serve the scenario's script from an
in-process emulator (optionally recording every request body), run the real goal loop with real tools and verify
commands, resume once after a pause when the scenario says so, and check the expectations.
"""

from __future__ import annotations

import re
import subprocess
from collections import Counter
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import trio

from orchestrator.budget import Budget
from orchestrator.escalation import EscalationPolicy
from orchestrator.goal import AnyEvent, GoalOptions
from orchestrator.goal_build import create_runner, resume_runner
from orchestrator.goal_events import Escalated
from orchestrator.review import AutoApprove, Reviewer, ScriptedReviewer
from scenarios.emulator import Emulator
from scenarios.emulator.app import Response
from scenarios.emulator.server import serve
from scenarios.format import LoadedScenario, ScenarioSettings
from sessions.client import ClientSettings, DeepSeekClient
from sessions.events import Compacted, RepairApplied, UsageReported

#: A fixed peak-hour clock, so costs (and budget pauses) do not depend on when the test runs.
PEAK = datetime(2026, 11, 2, 7, 0, tzinfo=UTC)


@dataclass(frozen=True, slots=True)
class Captured:
    """One chat request as the emulator received it."""

    body: bytes


class RecordingEmulator(Emulator):
    """An emulator that keeps the raw body of every chat request (for re-accounting under ablations)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.captured: list[Captured] = []
        self.recording = False

    def handle(self, method: str, path: str, headers: Mapping[str, str], body: bytes) -> Response:
        if self.recording and method == "POST" and path.rstrip("/").endswith("/chat/completions"):
            self.captured.append(Captured(body))
        return super().handle(method, path, headers, body)


@dataclass
class DriveResult:
    status: str
    summary: dict[str, Any]
    stats: dict[str, Any]
    events: list[AnyEvent]
    workspace: Path
    emulator: RecordingEmulator
    paused_first: bool | None = None
    failures: list[str] = field(default_factory=list)

    @property
    def cost_usd(self) -> float:
        return sum(e.cost_usd for e in self.events if isinstance(e, UsageReported))

    @property
    def escalations(self) -> int:
        return sum(1 for e in self.events if isinstance(e, Escalated))


def _int(value: float | int | None) -> int | None:
    return None if value is None else int(value)


def options_for(settings: ScenarioSettings, **budget: float | int | None) -> GoalOptions:
    return GoalOptions(
        thinking=settings.thinking,
        reasoning_effort=settings.reasoning_effort,
        escalation=EscalationPolicy(
            preset=settings.preset,
            failure_threshold=settings.failure_threshold,
            max_pro_turns=settings.max_pro_turns,
        ),
        budget=Budget(
            usd=budget.get("usd", settings.budget_usd),
            requests=_int(budget.get("requests", settings.max_requests)),
            minutes=budget.get("minutes", settings.max_minutes),
        ),
        max_step_attempts=settings.max_step_attempts,
        context_window=settings.context_window,
    )


@asynccontextmanager
async def _served(emulator: RecordingEmulator) -> AsyncIterator[str]:
    async with trio.open_nursery() as nursery:
        host, port = await nursery.start(serve, emulator, "127.0.0.1", 0)
        yield f"http://{host}:{port}"
        nursery.cancel_scope.cancel()


def _reviewer(loaded: LoadedScenario) -> Reviewer:
    answers = loaded.scenario.review
    if not answers:
        return AutoApprove()
    decisions = [
        {"kind": a.decision, "feedback": a.feedback, **({"plan": a.plan} if a.plan is not None else {})}
        for a in answers
    ]
    return ScriptedReviewer(decisions)


async def drive(loaded: LoadedScenario, root: Path, *, capture: bool = False) -> DriveResult:
    sc = loaded.scenario
    ws = root / "workspace"
    for rel, data in loaded.workspace_files().items():
        target = ws / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    ws.mkdir(parents=True, exist_ok=True)
    emulator = RecordingEmulator(script=sc.script, cache_unit=sc.settings.cache_unit)
    emulator.recording = capture
    events: list[AnyEvent] = []
    paused_first: bool | None = None
    async with _served(emulator) as base_url:
        client = DeepSeekClient(
            base_url=base_url,
            api_key="scenario-key",
            settings=ClientSettings(backoff_initial_s=0.01, backoff_jitter_s=0),
        )
        async with client:
            runner = create_runner(
                workspace=ws,
                client=client,
                objective=sc.objective,
                options=options_for(sc.settings),
                reviewer=_reviewer(loaded),
                on_event=events.append,
                run_id="scenario",
                config_dir=ws / ".no-user-config",
                clock=lambda: PEAK,
            )
            outcome = await runner.run()
            if sc.resume is not None:
                paused_first = outcome.status == "paused"
                r = sc.resume
                runner = resume_runner(
                    workspace=ws,
                    client=client,
                    run_id="scenario",
                    options=options_for(sc.settings, usd=r.budget_usd, requests=r.max_requests, minutes=r.max_minutes),
                    reviewer=_reviewer(loaded),
                    on_event=events.append,
                    config_dir=ws / ".no-user-config",
                    clock=lambda: PEAK,
                )
                outcome = await runner.run()
    result = DriveResult(
        status=outcome.status,
        summary=outcome.to_summary(),
        stats=emulator.stats(),
        events=events,
        workspace=ws,
        emulator=emulator,
        paused_first=paused_first,
    )
    result.failures = check(loaded, result)
    return result


def check(loaded: LoadedScenario, r: DriveResult) -> list[str]:
    """Every expectation that does not hold, as a readable line."""
    exp = loaded.scenario.expect
    out: list[str] = []
    if exp.status is not None and r.status != exp.status:
        out.append(f"status: expected {exp.status}, got {r.status} ({r.summary.get('text')})")
    for rel, text in exp.files.items():
        path = r.workspace / rel
        got = path.read_text() if path.is_file() else None
        if got != text:
            out.append(f"file {rel}: expected {text!r}, got {got!r}")
    for rel, pattern in exp.file_patterns.items():
        path = r.workspace / rel
        if not path.is_file() or not re.search(pattern, path.read_text()):
            out.append(f"file {rel}: does not match {pattern!r}")
    for rel in exp.absent:
        if (r.workspace / rel).exists():
            out.append(f"file {rel}: should be absent")
    for cmd in exp.commands:
        proc = subprocess.run(["bash", "-c", cmd], cwd=r.workspace, capture_output=True, text=True, timeout=120)
        if proc.returncode != 0:
            out.append(f"command {cmd!r} exited {proc.returncode}: {(proc.stdout + proc.stderr)[-400:]}")
    if exp.escalations is not None and r.escalations != exp.escalations:
        out.append(f"escalations: expected {exp.escalations}, got {r.escalations}")
    if exp.replans is not None and r.summary["replans"] != exp.replans:
        out.append(f"replans: expected {exp.replans}, got {r.summary['replans']}")
    if exp.steps_done is not None and r.summary["steps_done"] != exp.steps_done:
        out.append(f"steps_done: expected {exp.steps_done}, got {r.summary['steps_done']}")
    sessions = r.stats["sessions"]
    for name, floor in exp.min_hit_ratio.items():
        counters = r.stats["total"] if name == "overall" else sessions.get(name, {})
        ratio = counters.get("hit_ratio") or 0.0
        if ratio < floor:
            out.append(f"hit ratio of {name}: {ratio:.4f} < floor {floor:.4f}")
    if exp.max_cost_usd is not None and r.cost_usd > exp.max_cost_usd:
        out.append(f"cost: {r.cost_usd:.6f} USD > max {exp.max_cost_usd}")
    for name, least in exp.min_requests.items():
        got = sessions.get(name, {}).get("requests", 0)
        if got < least:
            out.append(f"requests of {name}: {got} < {least}")
    compactions = sum(1 for e in r.events if isinstance(e, Compacted))
    if exp.compactions is not None and compactions != exp.compactions:
        out.append(f"compactions: expected {exp.compactions}, got {compactions}")
    faults: Counter[str] = Counter()
    for counters in sessions.values():
        faults.update(counters.get("faults_injected", {}))
    for kind, least in exp.faults.items():
        if faults[kind] < least:
            out.append(f"fault {kind}: injected {faults[kind]} < {least}")
    repairs = Counter(e.repair for e in r.events if isinstance(e, RepairApplied))
    for kind, least in exp.repairs.items():
        if repairs[kind] < least:
            out.append(f"repair {kind}: {repairs[kind]} < {least}")
    if loaded.scenario.resume is not None and loaded.scenario.resume.expect_paused_first and not r.paused_first:
        out.append("resume: the first run was expected to pause")
    return out
