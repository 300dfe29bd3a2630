"""What ``reasonix replay`` reports for one scenario: the figures, each failed expectation, and prompt drift.

:meth:`ReplayReport.summary` is the ``--json`` line; :meth:`ReplayReport.text` is the terminal report (and the message
of a failing scenario test).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from orchestrator.summary import ReplayDetails, SessionFigures, Summary
from orchestrator.text.wording import counted


class ReplayReport(BaseModel):
    model_config = ConfigDict(frozen=True)
    scenario: str
    title: str
    origin: str
    command: str
    ok: bool
    status: str
    text: str = ""
    steps_done: int | None = None
    steps_total: int | None = None
    escalations: int = 0
    replans: int = 0
    compactions: int = 0
    requests: int
    prompt_tokens: int = 0
    prompt_cache_hit_tokens: int = 0
    prompt_cache_miss_tokens: int = 0
    completion_tokens: int = 0
    cache_hit_ratio: float | None
    cost_usd: float
    sessions: dict[str, SessionFigures]
    review: str
    """``automatic`` (no review answers: approved as with --yes), ``scripted (N answers)`` or ``none`` (run)."""
    faults: dict[str, int] = {}
    repairs: dict[str, int] = {}
    failures: tuple[str, ...] = ()
    drift: tuple[str, ...] = ()
    workspace: str | None = None
    """The kept temporary workspace (``--keep``)."""
    error: str | None = None
    """The replay itself broke (not an expectation): a scenario or emulator problem."""

    def to_summary(self) -> Summary:
        """The :class:`~orchestrator.summary.Summary` of the replay (``command`` ``replay``; the scenario's own
        command, the checks and their failures are in ``replay``)."""
        details = ReplayDetails(
            scenario=self.scenario,
            title=self.title,
            origin=self.origin,
            command=self.command,
            review=self.review,
            compactions=self.compactions,
            faults=self.faults,
            repairs=self.repairs,
            failures=self.failures,
            drift=self.drift,
            workspace=self.workspace,
        )
        return Summary(
            command="replay",
            run_id=None,
            status=self.status,
            ok=self.ok,
            text=self.text,
            error=self.error,
            requests=self.requests,
            prompt_tokens=self.prompt_tokens,
            prompt_cache_hit_tokens=self.prompt_cache_hit_tokens,
            prompt_cache_miss_tokens=self.prompt_cache_miss_tokens,
            completion_tokens=self.completion_tokens,
            cost_usd=self.cost_usd,
            cache_hit_ratio=self.cache_hit_ratio,
            sessions=self.sessions,
            steps_done=self.steps_done,
            steps_total=self.steps_total,
            escalations=self.escalations,
            replans=self.replans,
            replay=details,
        )

    def summary(self) -> dict[str, Any]:
        """The ``--json`` object: one per scenario, one line each."""
        return self.to_summary().model_dump(mode="json")

    def text_report(self) -> str:
        verdict = "ok" if self.ok else "FAILED"
        lines = [f"{verdict} · {self.scenario} ({self.origin} {self.command}): {self.title}"]
        steps = f" · steps {self.steps_done}/{self.steps_total}" if self.steps_total is not None else ""
        ratio = "n/a" if self.cache_hit_ratio is None else f"{self.cache_hit_ratio:.2%}"
        lines.append(
            f"  status {self.status}{steps} · escalations {self.escalations} · replans {self.replans}"
            f" · requests {self.requests} · cache {ratio} · cost ${self.cost_usd:.4f} (current prices, peak)"
        )
        for name, s in sorted(self.sessions.items()):
            r = "n/a" if s.cache_hit_ratio is None else f"{s.cache_hit_ratio:.2%}"
            if s.cache_hit_ratio_after_first is not None:
                r += f" ({s.cache_hit_ratio_after_first:.2%} after the first request)"
            eff = "" if s.efficiency is None else f" · efficiency {s.efficiency:.2%}"
            lines.append(f"  {name}: {counted(s.requests, 'request')} · cache {r}{eff} · ${s.cost_usd:.4f}")
        review = {"automatic": "review: automatic (no review answers: the plan was approved as with --yes)"}
        if self.review != "none":
            lines.append("  " + review.get(self.review, f"review: {self.review}"))
        extras = [f"{k} {v}" for k, v in sorted(self.faults.items())] + [
            f"repair {k} {v}" for k, v in sorted(self.repairs.items())
        ]
        if self.compactions:
            extras.append(f"compactions {self.compactions}")
        if extras:
            lines.append("  " + " · ".join(extras))
        if self.text:
            lines.append(f"  summary: {self.text}")
        if self.error:
            lines.append(f"  error: {self.error}")
        for failure in self.failures:
            first, *rest = failure.rstrip("\n").split("\n")
            lines.append(f"  ✗ {first}")
            lines.extend(f"    {line}" for line in rest)
        for drift in self.drift:
            first, *rest = drift.split("\n")
            lines.append(f"  ≠ prompt drift: {first}")
            lines.extend(f"    {line}" for line in rest)
        if self.workspace:
            lines.append(f"  workspace kept at {self.workspace}")
        return "\n".join(lines)
