"""Routing policies compared offline (``reasonix replay SCENARIO --compare preset=flash,auto,pro``, issue 18).

One scenario is replayed once per value of one setting (``preset``, ``max_pro_turns`` — the escalation cap —,
``failure_threshold``, ``max_step_attempts``, …: any field of the scenario's settings) and the outcomes are put side by
side: status and expectations, requests per model, escalations, cost, cache hits, and the time the model would have
taken under the emulator's latency model (``realistic`` unless told otherwise; computed from each request's miss and
output tokens, so nothing sleeps).

A scripted reply is not a model: every setting is served the same replies in the same order, whatever model a request
goes to. Under ``preset=flash`` a reply written as the marker stays as written (nothing escalates); under ``pro`` the
replies written for flash are served by "pro"; a setting that asks for more replies than were written runs out of
script. The table judges how the orchestrator routes recorded work, not how another model would have answered.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from orchestrator.replay.report import ReplayReport
from orchestrator.replay.runner import replay_scenario
from orchestrator.text.wording import counted
from scenarios import LoadedScenario, ScenarioSettings
from scenarios.emulator import LatencyModel
from sessions import UsageReported

SCRIPTED_NOTE = (
    "Scripted replies are not a model: every setting is served the same replies in the same order. Under "
    "preset=flash a marker reply stays as written (nothing escalates); under pro the replies written for flash are "
    "served by pro; a setting that needs more replies than were written runs out of script."
)


class CompareError(ValueError):
    """The ``--compare`` setting is at fault (unknown field, a value that does not validate)."""


def parse_compare(spec: str, base: ScenarioSettings) -> tuple[str, list[ScenarioSettings]]:
    """``KEY=V1,V2,…`` → the field name and the scenario's settings with each value in turn."""
    key, sep, values = spec.partition("=")
    key = key.strip().replace("-", "_")
    fields = sorted(ScenarioSettings.model_fields)
    if not sep or key not in ScenarioSettings.model_fields:
        raise CompareError(f"--compare takes SETTING=V1,V2,… with a setting among: {', '.join(fields)} (got {spec!r})")
    out = []
    for raw in (v.strip() for v in values.split(",")):
        if not raw:
            raise CompareError(f"--compare {key}: an empty value in {values!r}")
        value: Any = None if raw in ("none", "null") else raw
        try:
            out.append(ScenarioSettings.model_validate({**base.model_dump(), key: value}))
        except ValidationError as exc:
            raise CompareError(f"--compare {key}={raw}: {exc.errors()[0]['msg']}") from None
    if len(out) < 2:
        raise CompareError(f"--compare {key}: give at least two values to compare, separated by commas")
    return key, out


@dataclass
class _Timing:
    """Collects each answered request's model, miss and output tokens."""

    latency: LatencyModel
    models: Counter[str] = field(default_factory=Counter)
    seconds: float = 0.0

    def __call__(self, event: Any) -> None:
        if isinstance(event, UsageReported):
            self.models[event.model.removeprefix("deepseek-")] += 1
            u = event.usage
            miss = u.prompt_tokens - u.prompt_cache_hit_tokens
            model = self.latency.for_model(event.model)
            self.seconds += model.first_token_delay(miss) + u.completion_tokens * model.chunk_delay


@dataclass(frozen=True)
class Compared:
    setting: str
    value: Any
    report: ReplayReport
    models: dict[str, int]
    model_seconds: float

    def summary(self) -> dict[str, Any]:
        """The ``--json`` object of one setting."""
        r = self.report
        return {
            "scenario": r.scenario,
            "origin": r.origin,
            "setting": {self.setting: self.value},
            "status": r.status,
            "ok": r.ok,
            "failures": list(r.failures),
            "error": r.error,
            "steps_done": r.steps_done,
            "steps_total": r.steps_total,
            "requests": r.requests,
            "requests_per_model": self.models,
            "escalations": r.escalations,
            "replans": r.replans,
            "cost_usd": r.cost_usd,
            "cache_hit_ratio": r.cache_hit_ratio,
            "model_seconds": round(self.model_seconds, 3),
        }


async def compare(loaded: LoadedScenario, spec: str, latency: LatencyModel | None = None) -> list[Compared]:
    """Replay ``loaded`` once per value of ``spec``; raises :class:`CompareError` for a bad ``spec``."""
    key, variants = parse_compare(spec, loaded.scenario.settings)
    model = latency or LatencyModel()
    out = []
    for settings in variants:
        scenario = loaded.scenario.model_copy(update={"settings": settings})
        timing = _Timing(model)
        report = await replay_scenario(loaded.model_copy(update={"scenario": scenario}), on_event=timing)
        value = getattr(settings, key)
        out.append(Compared(key, value, report, dict(sorted(timing.models.items())), timing.seconds))
    return out


def table_rows(results: list[Compared]) -> list[tuple[str, list[str]]]:
    """The rows of the side-by-side table: a label and one cell per setting."""

    def status(c: Compared) -> str:
        r = c.report
        steps = f" {r.steps_done}/{r.steps_total}" if r.steps_total is not None else ""
        return f"{r.status}{steps}"

    def expectations(c: Compared) -> str:
        return "hold" if c.report.ok else f"{counted(len(c.report.failures), 'failure')}"

    def models(c: Compared) -> str:
        return " · ".join(f"{m} {n}" for m, n in c.models.items()) or "none"

    def ratio(c: Compared) -> str:
        return "n/a" if c.report.cache_hit_ratio is None else f"{c.report.cache_hit_ratio:.1%}"

    return [
        ("outcome", [status(c) for c in results]),
        ("expectations", [expectations(c) for c in results]),
        ("requests", [str(c.report.requests) for c in results]),
        ("per model", [models(c) for c in results]),
        ("escalations", [str(c.report.escalations) for c in results]),
        ("replans", [str(c.report.replans) for c in results]),
        ("cost (peak)", [f"${c.report.cost_usd:.4f}" for c in results]),
        ("cache hits", [ratio(c) for c in results]),
        ("model time", [f"{c.model_seconds:.1f} s" for c in results]),
    ]
