"""What ``reasonix replay`` reports for one scenario: the figures, each failed expectation, and prompt drift.

:meth:`ReplayReport.summary` is the ``--json`` line; :meth:`ReplayReport.text` is the terminal report (and the message
of a failing scenario test).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from orchestrator.ui.wording import counted


class SessionFigures(BaseModel):
    model_config = ConfigDict(frozen=True)
    requests: int
    prompt_tokens: int
    hit_tokens: int
    hit_ratio: float | None
    hit_ratio_after_first: float | None = None
    """The same, leaving out the session's first request (which can hit nothing of this run)."""
    efficiency: float | None = None
    """Hits ÷ what a perfect cache could have hit (the emulator's count), when the emulator knows the session."""
    cost_usd: float


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
    hit_ratio: float | None
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

    def summary(self) -> dict[str, Any]:
        """The ``--json`` object: one per scenario, one line each."""
        return self.model_dump(mode="json", exclude={"text"})

    def text_report(self) -> str:
        verdict = "ok" if self.ok else "FAILED"
        lines = [f"{verdict} · {self.scenario} ({self.origin} {self.command}): {self.title}"]
        steps = f" · steps {self.steps_done}/{self.steps_total}" if self.steps_total is not None else ""
        ratio = "n/a" if self.hit_ratio is None else f"{self.hit_ratio:.2%}"
        lines.append(
            f"  status {self.status}{steps} · escalations {self.escalations} · replans {self.replans}"
            f" · requests {self.requests} · cache {ratio} · cost ${self.cost_usd:.4f} (current prices, peak)"
        )
        for name, s in sorted(self.sessions.items()):
            r = "n/a" if s.hit_ratio is None else f"{s.hit_ratio:.2%}"
            if s.hit_ratio_after_first is not None:
                r += f" ({s.hit_ratio_after_first:.2%} after the first request)"
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
