"""Checking a replayed scenario's expectations, and the cache guard.

Every check returns readable failure messages (empty: it holds). File contents are compared with a unified diff; the
cache guard names the prefix changes, log rewrites and unexplained misses that the session diagnostics recorded, so a
hit ratio below its floor says *why* the cache missed.
"""

from __future__ import annotations

import difflib
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from orchestrator.policy.verify import run_command
from plans import VerifyCommand
from scenarios import Expectations
from sessions.accounting import RequestDiagnostics
from sessions.tools.gateway import GatewayRoot

CHECK_MAX_BYTES = 64 * 1024 * 1024

COMMAND_TIMEOUT_S = 120.0
FIRST_REQUEST = "first request of the session"


@dataclass
class SessionTally:
    """What one session (``planner`` / ``executor``) did over the whole replay, resumed runs included."""

    requests: int = 0
    prompt_tokens: int = 0
    hit_tokens: int = 0
    miss_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    first_prompt_tokens: int = 0
    first_hit_tokens: int = 0
    """The session's first request: it can hit nothing of this run, so ``hit_ratio_after_first`` leaves it out."""
    diagnostics: list[RequestDiagnostics] = field(default_factory=list)

    def count(self, prompt_tokens: int, hit_tokens: int, cost_usd: float, completion_tokens: int = 0) -> None:
        """One request's usage."""
        if self.requests == 0:
            self.first_prompt_tokens, self.first_hit_tokens = prompt_tokens, hit_tokens
        self.requests += 1
        self.prompt_tokens += prompt_tokens
        self.hit_tokens += hit_tokens
        self.miss_tokens += prompt_tokens - hit_tokens
        self.completion_tokens += completion_tokens
        self.cost_usd += cost_usd

    @property
    def hit_ratio(self) -> float | None:
        return self.hit_tokens / self.prompt_tokens if self.prompt_tokens else None

    @property
    def hit_ratio_after_first(self) -> float | None:
        prompt = self.prompt_tokens - self.first_prompt_tokens
        return (self.hit_tokens - self.first_hit_tokens) / prompt if prompt else None


@dataclass
class Observed:
    """What the replay observed, checked against the expectations."""

    status: str
    escalations: int = 0
    replans: int = 0
    steps_done: int | None = None
    compactions: int = 0
    sessions: dict[str, SessionTally] = field(default_factory=dict)
    faults: Counter[str] = field(default_factory=Counter)
    repairs: Counter[str] = field(default_factory=Counter)

    @property
    def overall(self) -> SessionTally:
        total = SessionTally()
        for tally in self.sessions.values():
            total.requests += tally.requests
            total.prompt_tokens += tally.prompt_tokens
            total.hit_tokens += tally.hit_tokens
            total.miss_tokens += tally.miss_tokens
            total.completion_tokens += tally.completion_tokens
            total.cost_usd += tally.cost_usd
            total.first_prompt_tokens += tally.first_prompt_tokens
            total.first_hit_tokens += tally.first_hit_tokens
        return total


def miss_reasons(named: Sequence[tuple[str, RequestDiagnostics]], *, with_session: bool = False) -> str:
    """Why requests missed, as the diagnostics recorded it: ``request 2: prefix changed (…)``; repeated reasons are
    grouped (``requests 2, 3, 5: …``). A session's first request is named only when nothing else explains a miss."""
    groups: dict[str, list[str]] = {}
    seen: Counter[str] = Counter()
    for session, d in named:
        seen[session] += 1  # the request's position in its session over the whole replay (resumes continue it)
        label = f"{session} {seen[session]}" if with_session else str(seen[session])
        if d.unexplained_miss:
            reason = f"unexplained cache miss ({d.hit_tokens} of an expected {d.expected_hit_tokens} tokens hit)"
        elif d.change_reason is not None and d.miss_tokens > 0:
            reason = d.change_reason
        else:
            continue
        groups.setdefault(reason, []).append(label)
    if len(groups) > 1:
        groups.pop(FIRST_REQUEST, None)
    if not groups:
        return "no prefix change, log rewrite or unexplained miss was recorded"
    parts = []
    for reason, labels in groups.items():
        shown = ", ".join(labels[:6]) + (f" and {len(labels) - 6} more" if len(labels) > 6 else "")
        parts.append(f"{'requests' if len(labels) > 1 else 'request'} {shown}: {reason}")
    return "; ".join(parts)


def cache_guard(floors: Mapping[str, float], observed: Observed, *, after_first: bool = False) -> list[str]:
    """A failure for each session (or ``overall``) whose hit ratio is below its floor, naming the recorded cause.
    With ``after_first``, each session's first request is left out of the ratio."""
    what = "hit ratio after the first request" if after_first else "hit ratio"
    failures = []
    for name, floor in sorted(floors.items()):
        if name == "overall":
            tally = observed.overall
            named = [(s, d) for s, t in sorted(observed.sessions.items()) for d in t.diagnostics]
        else:
            found = observed.sessions.get(name)
            if found is None:
                failures.append(f"{name} {what}: the session sent no request (floor {floor:.1%})")
                continue
            tally = found
            named = [(name, d) for d in tally.diagnostics]
        ratio = tally.hit_ratio_after_first if after_first else tally.hit_ratio
        if ratio is None or ratio < floor:
            shown = "n/a" if ratio is None else f"{ratio:.1%}"
            why = miss_reasons(named, with_session=name == "overall")
            failures.append(f"{name} {what} {shown} < {floor:.1%}: {why}")
    return failures


def _text(workspace: Path, rel: str) -> str:
    """A file the run left, through the gateway (a link out of the workspace reads as nothing)."""
    found = GatewayRoot(workspace).try_read(rel, limit=CHECK_MAX_BYTES)
    text = "" if found is None else found.data.decode("utf-8", errors="replace")
    return text.replace("\r\n", "\n").replace("\r", "\n")  # as read_text's newline mode


def file_failures(expect: Expectations, workspace: Path) -> list[str]:
    failures = []
    for rel, wanted in sorted(expect.files.items()):
        path = workspace / rel
        if not path.is_file():
            failures.append(f"file {rel}: missing (expected {len(wanted.splitlines())} lines)")
            continue
        actual = _text(workspace, rel)
        if actual != wanted:
            diff = difflib.unified_diff(
                wanted.splitlines(keepends=True),
                actual.splitlines(keepends=True),
                f"expected/{rel}",
                f"workspace/{rel}",
            )
            failures.append(f"file {rel} differs:\n" + "".join(d if d.endswith("\n") else d + "\n" for d in diff))
    for rel, pattern in sorted(expect.file_patterns.items()):
        path = workspace / rel
        if not path.is_file():
            failures.append(f"file {rel}: missing (expected to match /{pattern}/)")
        elif re.search(pattern, _text(workspace, rel)) is None:
            failures.append(f"file {rel} does not match /{pattern}/")
    failures.extend(f"file {rel}: should be absent, but exists" for rel in expect.absent if (workspace / rel).exists())
    return failures


async def command_failures(commands: Sequence[str], workspace: Path) -> list[str]:
    failures = []
    for command in commands:
        outcome = await run_command(VerifyCommand(command=command), workspace, default_timeout_s=COMMAND_TIMEOUT_S)
        if not outcome.ok:
            how = "timed out" if outcome.timed_out else f"exit {outcome.exit_code}"
            tail = "\n".join(outcome.output.rstrip().splitlines()[-15:])
            failures.append(f"command failed ({how}): {command}" + (f"\n{tail}" if tail else ""))
    return failures


def _counted(what: str, expected: int | None, actual: int | None) -> list[str]:
    if expected is None or actual == expected:
        return []
    return [f"{what}: expected {expected}, got {actual}"]


def figure_failures(expect: Expectations, observed: Observed) -> list[str]:
    """Status, counts, floors and ceilings (everything but files and commands)."""
    failures = []
    if expect.status is not None and observed.status != expect.status:
        failures.append(f"status: expected {expect.status}, got {observed.status}")
    failures += _counted("escalations", expect.escalations, observed.escalations)
    failures += _counted("replans", expect.replans, observed.replans)
    failures += _counted("steps done", expect.steps_done, observed.steps_done)
    failures += _counted("compactions", expect.compactions, observed.compactions)
    failures += cache_guard(expect.min_hit_ratio, observed)
    failures += cache_guard(expect.min_hit_ratio_after_first, observed, after_first=True)
    cost = observed.overall.cost_usd
    if expect.max_cost_usd is not None and cost > expect.max_cost_usd:
        failures.append(f"cost ${cost:.4f} > ${expect.max_cost_usd:.4f}")
    for session, least in sorted(expect.min_requests.items()):
        got = observed.overall.requests if session == "overall" else _requests(observed, session)
        if got < least:
            failures.append(f"{session} requests: expected at least {least}, got {got}")
    for kind, least in sorted(expect.faults.items()):
        if observed.faults[kind] < least:
            failures.append(f"fault {kind}: expected at least {least} injected, got {observed.faults[kind]}")
    for kind, least in sorted(expect.repairs.items()):
        if observed.repairs[kind] < least:
            failures.append(f"repair {kind}: expected at least {least}, got {observed.repairs[kind]}")
    return failures


def _requests(observed: Observed, session: str) -> int:
    tally = observed.sessions.get(session)
    return tally.requests if tally is not None else 0
