"""The published figures (issue 7, DESIGN §7) from the long scenario ``scenarios/library/long-session.json``.

    .venv/bin/python bench/scenario_figures.py [--scenario PATH] [--help-runs 5] [--no-harness] [--smoke]

1. Replays the scenario with ``reasonix replay``'s code (real goal loop, real tools and verify commands, the
   in-process emulator) and records the body of every request the emulator received.
2. Re-accounts those bodies through a fresh emulator :class:`~scenarios.emulator.accounting.Accountant` (the same
   prefix-cache accounting the emulator serves; the totals are checked against the live run) and prints, per session,
   the hit ratio (hit ÷ prompt tokens) and the cache efficiency (hit ÷ what the cache could have hit at all: the
   longest prefix shared with anything sent or generated before, unrounded), with and without the compaction point
   (the one request after the log rewrite, and the digest request itself).
3. The same request stream under the ablations a typical agent makes, each a transformation of the recorded bodies
   re-accounted through a fresh accountant, with the model's outputs unchanged:
   (a) ``shared``: planner and executor in one conversation (one system prompt holding both roles, the union of the
       tool lists, every message in the order it was sent), planner turns on pro and executor turns on flash;
   (b) ``timestamp``: the current time (to the second) appended to the system prompt of every request;
   (c) ``tools shuffled``: the tool schemas in a different order on every request.
   Cost is priced with the shipped price tables at a peak hour (the higher prices), outputs included.
4. Harness CPU per turn against conversation length (``bench/harness_bench.py``, run as a subprocess) and the
   start-up time of ``reasonix --help`` (best of N subprocess runs).

``--smoke`` (CI, ``bench/smoke.py``): the small goal ``acceptance-rerun`` instead of the long scenario, one run of
``--help``, and the harness bench at its smoke size. A harness bench that fails fails this script.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import orchestrator.replay.runner as replay_module  # noqa: E402
from orchestrator.replay.report import ReplayReport  # noqa: E402
from orchestrator.replay.runner import replay  # noqa: E402
from scenarios.emulator.accounting import Accountant  # noqa: E402
from scenarios.emulator.app import Response  # noqa: E402
from scenarios.emulator.script import Script  # noqa: E402
from scenarios.emulator.server import RunningEmulator, open_emulator  # noqa: E402
from scenarios.emulator.validation import validate  # noqa: E402
from scenarios.format import load_scenario  # noqa: E402
from sessions.accounting.prices import default_price_book  # noqa: E402
from sessions.wire.messages import Usage  # noqa: E402

LONG = ROOT / "scenarios" / "library" / "long-session.json"
SMALL = ROOT / "scenarios" / "library" / "acceptance-rerun.json"
"""A goal of seven requests, planner and executor: the smoke size."""
PEAK = datetime(2026, 11, 2, 7, 0, tzinfo=UTC)
FLASH = "deepseek-v4-flash"
PRO = "deepseek-v4-pro"
COMMAND = ".venv/bin/python bench/scenario_figures.py"


# --------------------------------------------------------------------------------------------- the requests


@dataclass(frozen=True, slots=True)
class Request:
    """One recorded request, parsed, with the reply that was appended after it (``None`` if nothing was)."""

    session: str
    body: dict[str, Any]
    model: str
    thinking: bool
    output: dict[str, Any] | None
    rewrite: bool
    """The compaction point: the log of this session was rewritten before this request (or it is the digest)."""


def _system_text(body: Mapping[str, Any]) -> str | None:
    messages = body.get("messages") or ()
    if messages and messages[0].get("role") == "system":
        content = messages[0].get("content")
        return content if isinstance(content, str) else None
    return None


def parse_requests(bodies: Iterable[bytes], script: Script, *, digest_session: str = "digest") -> list[Request]:
    parsed = []
    for raw in bodies:
        valid = validate(json.loads(raw), models=None)
        spec = script.session_for(valid.system_text, valid.last_user_text)
        parsed.append((spec.key if spec else "?", dict(valid.body), valid.model, valid.thinking))
    out: list[Request] = []
    last: dict[str, int] = {}
    outputs: dict[int, dict[str, Any]] = {}
    rewrites: set[int] = set()
    for i, (session, body, _model, _thinking) in enumerate(parsed):
        messages = body["messages"]
        j = last.get(session)
        if j is not None:
            before = parsed[j][1]["messages"]
            if messages[: len(before)] == before:
                if len(messages) > len(before) and messages[len(before)].get("role") == "assistant":
                    outputs[j] = messages[len(before)]
            else:
                rewrites.add(i)
        if session == digest_session:
            rewrites.add(i)
        last[session] = i
    for i, (session, body, model, thinking) in enumerate(parsed):
        out.append(Request(session, body, model, thinking, outputs.get(i), i in rewrites))
    return out


# ------------------------------------------------------------------------------------------------ accounting


@dataclass
class Tally:
    requests: int = 0
    prompt: int = 0
    hit: int = 0
    ideal: int = 0
    completion: int = 0
    cost: float = 0.0

    def add(self, prompt: int, hit: int, ideal: int, completion: int, cost: float) -> None:
        self.requests += 1
        self.prompt += prompt
        self.hit += hit
        self.ideal += ideal
        self.completion += completion
        self.cost += cost

    @property
    def hit_ratio(self) -> float:
        return self.hit / self.prompt if self.prompt else 0.0

    @property
    def efficiency(self) -> float:
        return self.hit / self.ideal if self.ideal else 0.0


@dataclass
class Figures:
    by_session: dict[str, Tally] = field(default_factory=dict)
    by_session_aside: dict[str, Tally] = field(default_factory=dict)
    overall: Tally = field(default_factory=Tally)
    overall_aside: Tally = field(default_factory=Tally)


def _calls(message: Mapping[str, Any]) -> list[tuple[str, str]]:
    out = []
    for c in message.get("tool_calls") or ():
        fn = c.get("function", {})
        args = fn.get("arguments", "")
        out.append((str(fn.get("name", "")), args if isinstance(args, str) else json.dumps(args)))
    return out


def account(requests: Sequence[Request], unit: int = 128) -> Figures:
    """Re-account a request stream through a fresh accountant, exactly as the emulator does per request."""
    acct = Accountant(unit)
    book = default_price_book()
    figures = Figures()
    for r in requests:
        lookup, segs = acct.account_input(r.model, r.body, thinking=r.thinking)
        completion = 0
        if r.output is not None:
            reasoning = (r.output.get("reasoning_content") or "") if r.thinking else ""
            content = r.output.get("content") or ""
            out = acct.account_output(r.model, segs, reasoning=reasoning, content=content, calls=_calls(r.output))
            completion = out.count
        usage = Usage(
            prompt_tokens=lookup.prompt_tokens,
            completion_tokens=completion,
            prompt_cache_hit_tokens=lookup.hit_tokens,
            prompt_cache_miss_tokens=lookup.miss_tokens,
        )
        cost = float(book.cost(usage, r.model, PEAK).total)
        args = (lookup.prompt_tokens, lookup.hit_tokens, lookup.ideal_hit_tokens, completion, cost)
        figures.by_session.setdefault(r.session, Tally()).add(*args)
        figures.overall.add(*args)
        if not r.rewrite:
            figures.by_session_aside.setdefault(r.session, Tally()).add(*args)
            figures.overall_aside.add(*args)
    return figures


# ------------------------------------------------------------------------------------------------- ablations


def _with_system(body: Mapping[str, Any], text: str) -> dict[str, Any]:
    messages = list(body["messages"])
    messages[0] = {**messages[0], "content": text}
    return {**body, "messages": messages}


def ablate_timestamp(requests: Sequence[Request]) -> list[Request]:
    """The current time in the system prompt, as an agent that tells the model the time does (one request every
    few seconds, so the line differs on every request)."""
    out = []
    for i, r in enumerate(requests):
        now = PEAK + timedelta(seconds=7 * i)
        text = (_system_text(r.body) or "") + f"\n\nCurrent time: {now:%Y-%m-%d %H:%M:%S} UTC"
        out.append(Request(r.session, _with_system(r.body, text), r.model, r.thinking, r.output, r.rewrite))
    return out


def ablate_tool_order(requests: Sequence[Request]) -> list[Request]:
    """The tool schemas in a different order on every request (a set or dict iteration order leaking out)."""
    out = []
    for i, r in enumerate(requests):
        tools = list(r.body.get("tools") or ())
        random.Random(i).shuffle(tools)
        out.append(Request(r.session, {**r.body, "tools": tools}, r.model, r.thinking, r.output, r.rewrite))
    return out


def ablate_shared(requests: Sequence[Request], *, planner: str = "planner") -> list[Request]:
    """Planner and executor in one conversation: one system prompt for both roles, the union of their tools, every
    message in the order it was first sent; planner requests go to pro, executor requests to flash."""
    systems: dict[str, str] = {}
    tools: dict[str, Any] = {}
    for r in requests:
        text = _system_text(r.body)
        if text is not None and r.session not in systems and r.session != "digest":
            systems[r.session] = text
        for t in r.body.get("tools") or ():
            tools.setdefault(t["function"]["name"], t)
    system = {"role": "system", "content": "\n\n".join(systems[k] for k in sorted(systems))}
    shared: list[dict[str, Any]] = []
    seen: dict[str, int] = {}
    out = []
    for r in requests:
        messages = r.body["messages"][1:]
        if r.session == "digest":
            out.append(r)
            continue
        start = seen.get(r.session, 0)
        if r.rewrite:  # compaction rewrites the shared log the same way
            shared = list(messages)
        else:
            shared.extend(messages[start:])
        seen[r.session] = len(messages)
        model = PRO if r.session == planner else FLASH
        body = {**r.body, "model": model, "tools": list(tools.values()), "messages": [system, *shared]}
        out.append(Request(r.session, body, model, r.thinking, r.output, r.rewrite))
    return out


# ------------------------------------------------------------------------------------------------- the run


_OPEN = "open_emulator"


@contextmanager
def recording_bodies(captured: list[bytes]) -> Iterator[None]:
    """While active, every chat request body the replay's in-process emulator receives is appended to ``captured``.

    ``reasonix replay`` has no hook for this, so the bench wraps the emulator it opens (bench-only; nothing else
    changes). Bodies are recorded as received, so a scenario with HTTP faults would list a retried body twice: the
    figures are for the fault-free long scenario, and the totals are checked against the live run."""
    original = open_emulator  # what orchestrator.replay.runner imported

    @asynccontextmanager
    async def recording(**kwargs: Any) -> AsyncIterator[RunningEmulator]:
        async with original(**kwargs) as running:
            handle = running.emulator.handle

            def record(method: str, path: str, headers: Mapping[str, str], body: bytes) -> Response:
                if method == "POST" and path.split("?", 1)[0].rstrip("/").endswith("/chat/completions"):
                    captured.append(body)
                return handle(method, path, headers, body)

            running.emulator.handle = record  # type: ignore[method-assign]
            yield running

    setattr(replay_module, _OPEN, recording)
    try:
        yield
    finally:
        setattr(replay_module, _OPEN, original)


def record_long_scenario(path: Path) -> tuple[list[bytes], ReplayReport, float, Script]:
    """Replay the scenario once with ``reasonix replay``'s code, recording every request body."""
    loaded = load_scenario(path)
    captured: list[bytes] = []
    with recording_bodies(captured):
        started = time.perf_counter()
        report = replay(loaded)
        seconds = time.perf_counter() - started
    if not report.ok:
        raise SystemExit(report.text_report())
    return captured, report, seconds, loaded.scenario.script


def help_startup(runs: int) -> float:
    exe = ROOT / ".venv" / "bin" / "reasonix"
    cmd = [str(exe), "--help"] if exe.exists() else [sys.executable, "-m", "orchestrator", "--help"]
    best = float("inf")
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(cmd, check=True, capture_output=True, cwd=ROOT)
        best = min(best, time.perf_counter() - started)
    return best


def harness_table(sizes: str = "10,100,1000", repeat: int = 15) -> str:
    cmd = [sys.executable, str(ROOT / "bench" / "harness_bench.py"), "--sizes", sizes, "--repeat", str(repeat)]
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    if done.returncode != 0:
        raise SystemExit(f"bench/harness_bench.py failed (exit {done.returncode}):\n{done.stderr.strip()[-2000:]}")
    return done.stdout.strip()


# --------------------------------------------------------------------------------------------------- output


def pct(x: float) -> str:
    return f"{100 * x:.3f} %"


def session_table(f: Figures) -> list[str]:
    lines = [
        "| session | requests | prompt tokens | hit ratio | cache efficiency | hit ratio, compaction aside "
        "| efficiency, compaction aside |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    rows: list[tuple[str, Tally, Tally]] = [
        (name, t, f.by_session_aside.get(name, Tally())) for name, t in sorted(f.by_session.items())
    ]
    rows.append(("**overall**", f.overall, f.overall_aside))
    for name, t, a in rows:
        aside = (pct(a.hit_ratio), pct(a.efficiency)) if a.requests else ("(all compaction)", "")
        lines.append(
            f"| {name} | {t.requests} | {t.prompt:,} | {pct(t.hit_ratio)} | {pct(t.efficiency)} | {aside[0]} "
            f"| {aside[1]} |"
        )
    return lines


def ablation_table(results: Sequence[tuple[str, Figures]]) -> list[str]:
    base = results[0][1].overall.cost
    lines = [
        "| variant | hit ratio | cache efficiency | input miss tokens | cost (USD, peak) | × cost |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for name, f in results:
        t = f.overall
        lines.append(
            f"| {name} | {pct(t.hit_ratio)} | {pct(t.efficiency)} | {t.prompt - t.hit:,} | {t.cost:.4f} "
            f"| {t.cost / base:.1f} |"
        )
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scenario", type=Path, default=LONG, help="the long scenario (default: %(default)s)")
    parser.add_argument("--help-runs", type=int, default=5, help="runs of `reasonix --help` (best of)")
    parser.add_argument("--no-harness", action="store_true", help="skip bench/harness_bench.py")
    parser.add_argument("--smoke", action="store_true", help="CI's smoke size: a small goal, the harness bench small")
    args = parser.parse_args(argv)
    if args.smoke:
        args.scenario, args.help_runs = SMALL, 1

    bodies, report, seconds, script = record_long_scenario(args.scenario)
    requests = parse_requests(bodies, script)
    base = account(requests)
    # The live replay books the compaction digest request under the session that compacted: compare totals.
    live_hit = sum(s.prompt_cache_hit_tokens for s in report.sessions.values())
    live_prompt = sum(s.prompt_tokens for s in report.sessions.values())
    if (base.overall.hit, base.overall.prompt) != (live_hit, live_prompt):
        print(
            f"warning: re-accounting differs from the live replay (hit {base.overall.hit} vs {live_hit}, "
            f"prompt {base.overall.prompt} vs {live_prompt})"
        )
    transforms: list[tuple[str, Callable[[Sequence[Request]], list[Request]]]] = [
        ("(a) planner + executor in one conversation, model switches", ablate_shared),
        ("(b) timestamp in the system prompt", ablate_timestamp),
        ("(c) tool schemas reordered on every request", ablate_tool_order),
    ]
    results = [("Reasonix (as replayed)", base)]
    results += [(name, account(fn(requests))) for name, fn in transforms]
    startup = help_startup(args.help_runs)

    shown = args.scenario.relative_to(ROOT) if args.scenario.is_relative_to(ROOT) else args.scenario
    out = [
        f"## Cache figures: `{shown}` (scripted; {len(requests)} requests, replayed in {seconds:.1f} s)",
        "",
        *session_table(base),
        "",
        "Compaction aside: without the request right after the log rewrite and the digest request itself.",
        "",
        "## The same requests under a typical agent's habits",
        "",
        *ablation_table(results),
        "",
        f"## Start-up: `reasonix --help` best of {args.help_runs}: {startup * 1000:.0f} ms",
        "",
    ]
    if not args.no_harness:
        table = harness_table("10,100", 3) if args.smoke else harness_table()
        out += ["## Harness CPU per turn against conversation length (bench/harness_bench.py)", "", table, ""]
    out += [f"Reproduce: `{COMMAND}`"]
    print("\n".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
