"""A 4-wide diamond goal run one step at a time and with ``[goal] parallel = 4``, side by side, in one run (issue 14).

    .venv/bin/python bench/parallel_bench.py [--latency realistic-models] [--words 600] [--rounds 4] [--smoke]

The plan: ``a`` (the package skeleton), then ``b1`` … ``b4``, each depending on ``a`` and each writing its own file,
then ``d`` depending on all four. Each run is a real goal in this process (``orchestrator.build.create_runner``: the
planner and executor sessions, real tools, real verify commands, real git) against a fresh in-process emulator under
the latency model (``scenarios/emulator/latency.py``: time to first token growing with miss tokens, then streaming
at the model's tokens per second). The emulator script gives each step's turn its own replies (``user_contains``), so
the same script serves the executor (``parallel = 1``) and its forks (``parallel = 4``).

The branches carry the work: each ``b`` step thinks ``--words`` words of reasoning on each of ``--rounds`` replies
(read ``a``, write its file) before it reports, while ``a`` and ``d`` write one file each. With steps of equal weight
the speedup of this diamond is bounded by Amdahl's law: the planner's turns (a plan streamed at pro's speed), ``a``
and ``d`` stay sequential. The bench prints the branches' share of the sequential wall time and that bound. With the
defaults (4 replies of 600 reasoning words per branch step: a thinking model's ordinary step) the branches are about
85% of the sequential run; with 3 replies of 300 words they are about 80%, and 2.6x is all that 4-wide can give.

Printed: wall time, requests, cost, cache hit ratio of each run, the speedup and the cost ratio; then, for each fork,
its first request's cache-hit tokens against the executor's prefix (the prompt tokens of the executor's last request
before the fork, rounded down to the cache unit): a fork "hits" when it reuses all of it. Acceptance (issue 14):
>= 3x faster, <= 1.05x the cost, every fork's first request a hit. Wall-clock times; the machine is shared.
The exit status is 0 when the acceptance is met. ``--smoke`` (CI, ``bench/smoke.py``): no latency, one reply of 5
words per branch; the acceptance is printed but not judged (at that size the branches are a small share of the run), and
the exit status is 0 when both goals completed with every file as scripted and every fork's first request a hit.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import trio

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from orchestrator.build import create_runner  # noqa: E402
from orchestrator.events import StepStarted, StepVerified  # noqa: E402
from orchestrator.goal.runner import GoalOptions  # noqa: E402
from scenarios.emulator import LatencyModel, Script, open_emulator  # noqa: E402
from sessions.events import UsageReported  # noqa: E402
from sessions.wire.client import ClientSettings, DeepSeekClient  # noqa: E402

PLANNER = "You are the planner of Reasonix"
EXECUTOR = "You are the executor of Reasonix"
BRANCHES = ("b1", "b2", "b3", "b4")
FILES = {"a": "pkg/base.py", **{b: f"pkg/{b}.py" for b in BRANCHES}, "d": "pkg/top.py"}
CACHE_UNIT = 128


def call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"name": name, "arguments": arguments}


def reply(*calls: dict[str, Any], reasoning: str = "") -> dict[str, Any]:
    return {"reasoning": reasoning, "content": "", "tool_calls": list(calls)}


def thought(sid: str, words: int, topic: str) -> str:
    """``words`` words of a model thinking about its step (reasoning is what makes a real step take seconds)."""
    base = f"For step {sid} I {topic}; the base module defines VALUE and the new function must build on it. ".split()
    return " ".join(base[i % len(base)] for i in range(words))


def plan_steps() -> list[dict[str, Any]]:
    deps = {"a": [], **{b: ["a"] for b in BRANCHES}, "d": list(BRANCHES)}

    def verify(sid: str) -> list[dict[str, str]]:
        module = FILES[sid].removesuffix(".py").replace("/", ".")
        return [{"command": f"python3 -c 'import {module}'"}]

    return [
        {
            "id": sid,
            "title": f"Write {FILES[sid]}",
            "instructions": f"Write {FILES[sid]}" + (" from pkg/base.py" if sid in BRANCHES else ""),
            "depends_on": deps[sid],
            "writes": [FILES[sid]],
            "verify": verify(sid),
        }
        for sid in FILES
    ]


def text_of(sid: str) -> str:
    if sid == "a":
        return "VALUE = 1\n"
    if sid == "d":
        return (
            "".join(f"from pkg.{b} import {b}\n" for b in BRANCHES)
            + "TOTAL = "
            + " + ".join(f"{b}()" for b in BRANCHES)
            + "\n"
        )
    return f"from pkg.base import VALUE\n\n\ndef {sid}() -> int:\n    return VALUE + {sid[1]}\n"


def step_replies(sid: str, words: int, rounds: int) -> list[dict[str, Any]]:
    report = reply(
        call("report_step", step_id=sid, status="done", summary=f"wrote {FILES[sid]}", evidence=[FILES[sid]])
    )
    write = call("write_file", path=FILES[sid], content=text_of(sid))
    if sid not in BRANCHES:
        return [reply(write, reasoning=f"Step {sid}: write {FILES[sid]}."), report]
    reads = [
        reply(call("read_file", path=FILES["a"]), reasoning=thought(sid, words, "read the base"))
        for _ in range(rounds - 1)
    ]
    return [*reads, reply(write, reasoning=thought(sid, words, "write the function")), report]


def script(words: int, rounds: int) -> Script:
    planner = [
        reply(call("submit_plan", objective="A diamond", steps=plan_steps())),
        reply(call("goal_verdict", verdict="complete", evidence=["every step verified"])),
    ]
    sessions: list[dict[str, Any]] = [{"key": "planner", "system_contains": PLANNER, "replies": planner}]
    for sid in FILES:
        sessions.append(
            {
                "key": f"executor-{sid}",
                "system_contains": EXECUTOR,
                "user_contains": f"## {sid}:",
                "replies": step_replies(sid, words, rounds),
            }
        )
    return Script.model_validate({"sessions": sessions})


def workspace(root: Path) -> Path:
    """A small git project: the package directory, a README and a .gitignore'd .venv-like directory."""
    ws = root / "proj"
    (ws / "pkg").mkdir(parents=True)
    (ws / "pkg" / "__init__.py").write_text("")
    (ws / "README.md").write_text("A diamond of modules.\n")
    (ws / ".gitignore").write_text(".venv/\n__pycache__/\n")
    env = {"PATH": "/usr/bin:/bin", "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@x", "GIT_COMMITTER_NAME": "b"}
    env["GIT_COMMITTER_EMAIL"] = "b@x"
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "init"]):
        subprocess.run(["git", *args], cwd=ws, check=True, env=env)
    return ws


@dataclass
class Result:
    parallel: int
    status: str = ""
    seconds: float = 0.0
    requests: int = 0
    cost: float = 0.0
    hit_ratio: float | None = None
    forks: list[tuple[str, int, int, int]] = field(default_factory=list)
    """Per fork: step, first request's hit tokens, its prompt tokens, the executor's prefix tokens."""
    files_ok: bool = False
    branch_seconds: float = 0.0
    """The time from each branch step's start to its verification, summed over the four."""
    wave: tuple[float, float] = (0.0, 0.0)
    """From the first branch's start to the last one's verification, and the longest branch."""


async def run_goal(parallel: int, latency: LatencyModel | None, words: int, rounds: int) -> Result:
    result = Result(parallel)
    events: list[Any] = []
    stamps: list[tuple[float, Any]] = []

    def on_event(event: Any) -> None:
        events.append(event)
        if isinstance(event, StepStarted | StepVerified):
            stamps.append((time.perf_counter(), event))

    with tempfile.TemporaryDirectory() as tmp:
        ws = workspace(Path(tmp))
        async with open_emulator(script=script(words, rounds), latency=latency, cache_unit=CACHE_UNIT) as emu:
            settings = ClientSettings(backoff_initial_s=0.01, backoff_jitter_s=0)
            async with DeepSeekClient(base_url=emu.base_url, api_key="bench-key", settings=settings) as client:
                runner = create_runner(
                    workspace=ws,
                    client=client,
                    objective="A diamond of modules",
                    options=GoalOptions(parallel=parallel),
                    reviewer=None,
                    on_event=on_event,
                    run_id="bench",
                    config_dir=ws / ".no-user-config",
                )
                start = time.perf_counter()
                outcome = await runner.run()
                result.seconds = time.perf_counter() - start
        summary = outcome.to_summary()
        result.status, result.requests, result.cost = summary.status, summary.requests, summary.cost_usd
        result.hit_ratio = summary.cache_hit_ratio
        result.files_ok = all((ws / FILES[s]).read_text() == text_of(s) for s in FILES)
    started = {e.step_id: t for t, e in stamps if isinstance(e, StepStarted)}
    ended = {e.step_id: t for t, e in stamps if isinstance(e, StepVerified) and e.ok}
    result.branch_seconds = sum(ended[b] - started[b] for b in BRANCHES if b in started and b in ended)
    if all(b in started and b in ended for b in BRANCHES):
        result.wave = (
            max(ended[b] for b in BRANCHES) - min(started[b] for b in BRANCHES),
            max(ended[b] - started[b] for b in BRANCHES),
        )
    executor_prompt = 0
    seen: set[str] = set()
    for e in events:
        if not isinstance(e, UsageReported) or e.session != "executor":
            continue
        if e.step_id is None:
            executor_prompt = e.usage.prompt_tokens
        elif e.step_id not in seen:
            seen.add(e.step_id)
            prefix = executor_prompt // CACHE_UNIT * CACHE_UNIT
            result.forks.append((e.step_id, e.usage.prompt_cache_hit_tokens, e.usage.prompt_tokens, prefix))
    return result


def table(results: list[Result]) -> None:
    print(f"{'':24}" + "".join(f"{f'parallel = {r.parallel}':>16}" for r in results))
    rows = [
        ("status", [r.status for r in results]),
        ("wall time", [f"{r.seconds:.1f} s" for r in results]),
        ("requests", [str(r.requests) for r in results]),
        ("cost", [f"${r.cost:.5f}" for r in results]),
        ("cache hit ratio", [f"{r.hit_ratio:.1%}" if r.hit_ratio is not None else "-" for r in results]),
        ("files as scripted", ["yes" if r.files_ok else "NO" for r in results]),
    ]
    for label, cells in rows:
        print(f"{label:24}" + "".join(f"{c:>16}" for c in cells))


async def main(args: argparse.Namespace) -> int:
    latency = LatencyModel.parse(args.latency)
    print(f"4-wide diamond (a; b1..b4 after a; d after all), latency {args.latency!r}, ")
    print(f"each branch: {args.rounds} replies of {args.words} reasoning words, then its report\n")
    sequential = await run_goal(1, latency, args.words, args.rounds)
    if "parallel" not in GoalOptions.model_fields:
        table([sequential])
        print("\nparallel = 4: needs [goal] parallel (the goal loop cannot run branches at once yet)")
        return 1
    wide = await run_goal(4, latency, args.words, args.rounds)
    table([sequential, wide])
    speedup = sequential.seconds / wide.seconds if wide.seconds else float("inf")
    cost_ratio = wide.cost / sequential.cost if sequential.cost else float("nan")
    print(f"\nspeedup {speedup:.2f}x (target >= 3x)   cost ratio {cost_ratio:.3f}x (target <= 1.05x)")
    share = sequential.branch_seconds / sequential.seconds if sequential.seconds else 0.0
    bound = 1 / (1 - share + share / 4) if share < 1 else 4.0
    print(
        f"the branches were {share:.0%} of the sequential run's wall time ({sequential.branch_seconds:.1f} s):"
        f" running them 4 at a time can make it at most {bound:.2f}x faster (the planner, a and d stay sequential)"
    )
    wave, longest = wide.wave
    print(
        f"parallel = 4: the wave took {wave:.1f} s, its longest branch {longest:.1f} s; one branch alone took"
        f" {sequential.branch_seconds / 4:.1f} s on average in the sequential run"
    )
    print("\nfork first requests (parallel = 4): hit tokens vs the executor's prefix")
    all_hit = bool(wide.forks)
    for sid, hit, prompt, prefix in wide.forks:
        ok = hit >= prefix > 0
        all_hit = all_hit and ok
        print(
            f"  {sid:4} hit {hit:6} of {prompt:6} prompt tokens; executor prefix {prefix:6}  {'hit' if ok else 'MISS'}"
        )
    if not wide.forks:
        print("  (no forks: the wave did not run)")
    works = all_hit and sequential.files_ok and wide.files_ok
    met = speedup >= 3 and cost_ratio <= 1.05 and works
    print(f"\nacceptance: {'met' if met else 'NOT met'}" + (" (not judged at --smoke size)" if args.smoke else ""))
    return 0 if met or (args.smoke and works) else 1


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--latency", default="realistic-models", help="a latency spec (scenarios/emulator/latency.py)")
    parser.add_argument("--words", type=int, default=600, help="reasoning words per branch reply")
    parser.add_argument("--rounds", type=int, default=4, help="working replies per branch step (then its report)")
    parser.add_argument("--smoke", action="store_true", help="CI's smoke size: no latency, 1 reply of 5 words a branch")
    arguments = parser.parse_args()
    if arguments.smoke:
        arguments.latency, arguments.words, arguments.rounds = "off", 5, 1
    sys.exit(trio.run(main, arguments))
