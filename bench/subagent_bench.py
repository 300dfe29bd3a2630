"""What subagents of one profile save by sharing one prefix (issue 26, DESIGN §3).

A parent session (``reasonix run``'s executor) calls the ``task`` tool three times in one reply; each subagent reads
one file and reports (two requests each). Two variants against the emulator (its prefix cache, 128-token units, a cold
cache at the start): "shared" — three subagents of one profile, whose prefixes (preamble, profile text, tools,
standing memory) are the same bytes; "distinct" — three profiles with the same guidelines but a different first
line, so no two subagents share a prefix beyond the request's head. Printed per variant and for the subagents alone:
requests, prompt tokens, cache hits and misses, hit ratio and cost (peak prices). Variant "shared, one at a time"
runs the same three with ``max_parallel = 1``.

The emulator stores a prompt when it arrives, so subagents that start together hit each other's prefix; DeepSeek's
cache may take a moment to hold a new prefix, so on the real API the concurrent variant can hit less than shown and
the one-at-a-time variant is the lower-bound figure.

Run: ``.venv/bin/python bench/subagent_bench.py``
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from typing import Any

import trio

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from orchestrator.config.model import load_config  # noqa: E402
from orchestrator.conversation import run_task  # noqa: E402
from orchestrator.launch import ConversationLaunch, open_conversation  # noqa: E402
from orchestrator.policy.commands import CommandSetup  # noqa: E402
from orchestrator.subagents.task_tool import TaskTool  # noqa: E402
from scenarios.emulator import Script, open_emulator  # noqa: E402
from sessions.sandbox import NoSandbox  # noqa: E402
from sessions.wire.client import ClientSettings, DeepSeekClient  # noqa: E402

GUIDELINES = "\n".join(
    f"{i}. When you review {topic}, check {what}, and cite the file and line of every finding."
    for i, (topic, what) in enumerate(
        [
            ("error handling", "that every exception names what happened and what to do next"),
            ("concurrency", "that every wait is bounded and cancellation is never swallowed"),
            ("tests", "that each asserts behaviour and would fail without the change"),
            ("naming", "that each module is named for the one thing it holds"),
            ("imports", "that lower layers import nothing of the higher ones"),
            ("performance", "that hot loops do not allocate per item"),
        ]
        * 12,
        start=1,
    )
)
TASKS = "abc"


def profile(name: str, first_line: str) -> str:
    return (
        f"---\nname: {name}\ndescription: Reviews one file\ntools: [read_file, grep]\n---\n"
        f"{first_line}\n\nYou review Python code against these guidelines.\n\n{GUIDELINES}\n"
    )


def workspace(root: Path, shared: bool) -> Path:
    ws = root / ("shared" if shared else "distinct")
    (ws / ".git").mkdir(parents=True)
    (ws / ".reasonix" / "agents").mkdir(parents=True)
    for n in TASKS:
        (ws / f"{n}.py").write_text(f"def f_{n}(x):\n    return x + 1\n" * 40)
    names = ["reviewer"] if shared else [f"reviewer-{n}" for n in TASKS]
    for name in names:
        (ws / ".reasonix" / "agents" / f"{name}.md").write_text(profile(name, f"You are {name}."))
    return ws


def script() -> Script:
    subs = [
        {
            "key": f"sub-{n}",
            "system_contains": "You review Python code",
            "user_contains": f"TASK-{n}",
            "replies": [
                {"tool_calls": [{"name": "read_file", "arguments": {"path": f"{n}.py"}}]},
                {"content": f"{n}.py: no findings."},
            ],
        }
        for n in TASKS
    ]
    return Script.model_validate({"sessions": [{"key": "executor", "replies": []}, *subs]})


def parent_script(shared: bool) -> list[dict[str, Any]]:
    calls = [
        {"name": "task", "arguments": {"agent": "reviewer" if shared else f"reviewer-{n}", "task": f"TASK-{n}"}}
        for n in TASKS
    ]
    return [{"tool_calls": calls}, {"content": "Reviewed."}]


async def variant(root: Path, shared: bool, parallel: int) -> Any:
    ws = workspace(root, shared)
    spec = script().model_dump()
    spec["sessions"][0]["replies"] = parent_script(shared)
    resolved = load_config(workspace=ws, env={"HOME": str(root), "XDG_CONFIG_HOME": str(root / "cfg")})
    async with open_emulator(script=Script.model_validate(spec)) as emu:
        client = DeepSeekClient(base_url=emu.base_url, api_key="k", settings=ClientSettings(backoff_initial_s=0.01))
        async with client:
            bare = CommandSetup(sandbox=NoSandbox(), gate=None, notice=None)  # type: ignore[arg-type]
            launch = ConversationLaunch(workspace=ws, checkpoints=False)
            run = open_conversation(launch, env={}, resolved=resolved, commands=bare, client=client)
            tool = run.start().registry.get("task")
            assert isinstance(tool, TaskTool)
            tool.runner.max_parallel = parallel
            summary = await run_task(run, "Review a, b and c")
            run.close()
    assert summary.status == "done", summary
    return summary


def row(label: str, figures: list[Any]) -> str:
    requests = sum(f.requests for f in figures)
    prompt = sum(f.prompt_tokens for f in figures)
    hit = sum(f.prompt_cache_hit_tokens for f in figures)
    cost = sum(f.cost_usd for f in figures)
    ratio = hit / prompt if prompt else 0.0
    return f"{label:<42} {requests:>4} {prompt:>8} {hit:>8} {prompt - hit:>8} {ratio:>7.1%} {cost:>10.6f}"


async def main() -> None:
    print(f"{'variant':<42} {'reqs':>4} {'prompt':>8} {'hit':>8} {'miss':>8} {'ratio':>7} {'cost $':>10}")
    for label, shared, parallel in (
        ("shared profile, at once", True, 3),
        ("shared profile, one at a time", True, 1),
        ("distinct profiles, at once", False, 3),
    ):
        with tempfile.TemporaryDirectory() as tmp:
            summary = await variant(Path(tmp), shared, parallel)
        subs = [f for name, f in summary.sessions.items() if name.startswith("agent:")]
        print(row(f"{label}: subagents", subs))
        print(row(f"{label}: whole run", list(summary.sessions.values())))


if __name__ == "__main__":
    trio.run(main)
