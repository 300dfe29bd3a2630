"""bench/local_model.py's serving and tasks: llama-server on loopback, the small goal of issue 44, and one task run as
the real ``reasonix goal`` against the server, read back from its stream and checked by the task's own verify.

A module, not a bench: bench/local_model.py imports it (``MODULES`` in bench/smoke.py)."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import trio
import trio.lowlevel

ROOT = Path(__file__).resolve().parent.parent
for _folder in (str(ROOT), str(ROOT / "bench")):
    if _folder not in sys.path:
        sys.path.insert(0, _folder)

from local_model_provision import (  # noqa: E402
    SERVER_FLAGS,
    LocalModelError,
)

from orchestrator.bench.sandboxed import bench_sandbox, run_script  # noqa: E402
from orchestrator.bench.task import Task, load_task  # noqa: E402
from orchestrator.bench.workspace import prepare_workspace  # noqa: E402

# --- serving ---------------------------------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.asynccontextmanager
async def serving(
    binary: Path, model: Path, *, alias: str, log: Path, health_timeout_s: float = 300
) -> AsyncIterator[str]:
    """``llama-server`` on a free loopback port, yielding its base URL once ``/health`` answers 200; stopped on the
    way out (SIGTERM, then SIGKILL after 10 s), also when the caller is cancelled or interrupted."""
    port = free_port()
    argv = [str(binary), "-m", str(model), "-a", alias, "--host", "127.0.0.1", "--port", str(port), *SERVER_FLAGS]
    env = {**os.environ, "LD_LIBRARY_PATH": str(binary.parent)}
    base = f"http://127.0.0.1:{port}"
    with log.open("ab") as sink:
        proc = await trio.lowlevel.open_process(argv, stdout=sink, stderr=subprocess.STDOUT, env=env)
        try:
            async with httpx.AsyncClient(timeout=5) as http:
                with trio.fail_after(health_timeout_s):
                    while True:
                        if proc.poll() is not None:
                            raise LocalModelError(f"llama-server exited with {proc.returncode}; see {log}")
                        with contextlib.suppress(httpx.HTTPError):
                            if (await http.get(f"{base}/health")).status_code == 200:
                                break
                        await trio.sleep(0.5)
            yield base
        except trio.TooSlowError as exc:
            raise LocalModelError(
                f"llama-server did not become healthy within {health_timeout_s:g} s; see {log}"
            ) from exc
        finally:
            with trio.CancelScope(shield=True):
                await stop(proc, grace_s=10)


async def stop(proc: trio.Process, *, grace_s: float, first: int = signal.SIGTERM) -> None:
    if proc.poll() is None:
        proc.send_signal(first)
        with trio.move_on_after(grace_s):
            await proc.wait()
    if proc.poll() is None:
        proc.kill()
        await proc.wait()


# --- the goal of the issue: add() returns a - b ----------------------------------------------------------------------

ADD_TASK_TOML = '''name = "calc-add"
class = "fix"
objective = """The unit tests fail: add() in calc.py returns the wrong result. \
Fix add() so that python3 -m unittest passes."""
licence = "MIT"
origin = "written for the local-model run: the shape of the goal in issue 44"

[source]
kind = "files"

[verify]
timeout_s = 60
'''
ADD_FILES = {
    "calc.py": (
        'def add(a, b):\n    """The sum of a and b."""\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n'
    ),
    "test_calc.py": (
        "import unittest\n\nfrom calc import add, mul\n\n\nclass CalcTest(unittest.TestCase):\n"
        "    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n\n"
        "    def test_mul(self):\n        self.assertEqual(mul(2, 3), 6)\n\n\n"
        'if __name__ == "__main__":\n    unittest.main()\n'
    ),
}
ADD_FIX = "\n".join(
    [
        "diff --git a/calc.py b/calc.py",
        "--- a/calc.py",
        "+++ b/calc.py",
        "@@ -1,6 +1,6 @@",
        " def add(a, b):",
        '     """The sum of a and b."""',
        "-    return a - b",
        "+    return a + b",
        " ",
        " ",
        " def mul(a, b):",
        "",
    ]
)


def add_task(folder: Path) -> Task:
    """The small goal of issue 44 ("add() returns a - b"), as a ``files`` task in ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "task.toml").write_text(ADD_TASK_TOML, encoding="utf-8")
    (folder / "verify.sh").write_text("set -eu\npython -m unittest -q test_calc\n", encoding="utf-8")
    (folder / "fix.patch").write_text(ADD_FIX, encoding="utf-8")
    for name, text in ADD_FILES.items():
        (folder / "files" / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / "files" / name).write_text(text, encoding="utf-8")
    return load_task(folder)


# --- one task --------------------------------------------------------------------------------------------------------

STORM_PREFIXES = ("Not run: this is call number", "Turn ended by the storm guard")


@dataclass
class Outcome:
    task: str
    task_class: str
    model: str
    status: str = "error"
    """The goal's end state (complete, blocked, failed, paused …), ``timeout`` or ``error``."""
    why: str = ""
    exit_code: int | None = None
    verified: bool = False
    requests: int = 0
    repairs: int = 0
    repair_kinds: dict[str, int] = field(default_factory=dict)
    storms: int = 0
    tool_calls: int = 0
    tool_errors: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    wall_s: float = 0.0
    recording: str = ""
    changed: list[str] = field(default_factory=list)

    @property
    def solved(self) -> bool:
        return self.verified and self.task_class != "integrity"

    @property
    def false_claim(self) -> bool:
        return self.status == "complete" and not self.verified

    def line(self) -> str:
        mark = "solved" if self.solved else "not solved"
        claim = "  FALSE CLAIM: ended complete, the check fails" if self.false_claim else ""
        repairs = ", ".join(f"{k} {v}" for k, v in sorted(self.repair_kinds.items())) or "none"
        why = re.sub(r"\s+", " ", self.why).strip()
        why = why if len(why) <= 160 else why[:157] + "..."
        return (
            f"{mark:<10} {self.task}: {self.status} (exit {self.exit_code}), {self.requests} requests, "
            f"{self.wall_s:.0f} s, {self.tool_calls} tool calls ({self.tool_errors} errors), repairs: {repairs}, "
            f"storms: {self.storms}{claim}\n           why: {why or '-'}"
        )


def read_stream(path: Path, outcome: Outcome) -> None:
    """Fill ``outcome``'s figures from the goal's stream-json output."""
    if not path.is_file():
        return
    for raw in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            line = json.loads(raw)
        except json.JSONDecodeError:
            continue
        if not isinstance(line, dict):
            continue
        kind, sub = line.get("type"), line.get("subtype")
        raw_message = line.get("message")
        message: dict[str, Any] = raw_message if isinstance(raw_message, dict) else {}
        if kind == "assistant":
            outcome.requests += 1
            usage = message.get("usage") or {}
            outcome.prompt_tokens += int(usage.get("prompt_tokens") or 0)
            outcome.completion_tokens += int(usage.get("output_tokens") or 0)
        elif kind == "user":
            for block in message.get("content") or []:
                if block.get("type") != "tool_result":
                    continue
                outcome.tool_calls += 1  # native or scavenged from the text: each call run (or refused) once
                outcome.tool_errors += bool(block.get("is_error"))
                text = block.get("content")
                text = text if isinstance(text, str) else json.dumps(text)
                outcome.storms += any(text.startswith(p) for p in STORM_PREFIXES)
        elif kind == "system" and sub == "repair":
            outcome.repairs += 1
            data = line.get("data") or {}
            key = str(data.get("repair") or data.get("what") or data.get("kind_of_repair") or "repair")
            outcome.repair_kinds[key] = outcome.repair_kinds.get(key, 0) + 1
        elif kind == "system" and sub == "goal_event":
            data = line.get("data") or {}
            if data.get("kind") == "goal_finished":
                outcome.status = str(data.get("status"))
                outcome.why = str(data.get("summary") or "")


def user_config(stall_timeout_s: float, deadline_s: float, model: str) -> str:
    """The client's timeouts, and a price of $0 for the model id llama-server answers with (its alias): without
    one, the price book has no price for it and the run stops at the first reply."""
    return (
        f"[client]\nstall_timeout_s = {stall_timeout_s}\ndeadline_s = {deadline_s}\nmax_attempts = 2\n\n"
        f'[prices.families."{model}"]\nhit = 0\nmiss = 0\noutput = 0\n'
    )


def private_home(home: Path) -> dict[str, str]:
    homes = {
        "HOME": home,
        "XDG_CONFIG_HOME": home / ".config",
        "XDG_STATE_HOME": home / ".local" / "state",
        "XDG_CACHE_HOME": home / ".cache",
        "XDG_DATA_HOME": home / ".local" / "share",
    }
    for path in homes.values():
        path.mkdir(parents=True, exist_ok=True)
    return {name: str(path) for name, path in homes.items()}


def reasonix_argv() -> list[str]:
    script = Path(sys.executable).parent / "reasonix"
    return [str(script)] if script.is_file() else [sys.executable, "-m", "orchestrator"]


@dataclass(frozen=True)
class RunSettings:
    base_url: str
    model: str
    out: Path
    sdists: Path
    task_timeout_s: float
    stall_timeout_s: float
    alias: str = ""
    """The model id llama-server answers with."""
    preset: str = "flash"


async def run_one(task: Task, settings: RunSettings) -> Outcome:
    """One task: seed, ``reasonix goal`` against the local server (bounded), then the task's own check."""
    outcome = Outcome(task=task.name, task_class=task.task_class, model=settings.model)
    start = trio.current_time()
    root = Path(tempfile.mkdtemp(prefix=f"reasonix-local-{task.name}-"))
    ws = root / "workspace"
    recording = settings.out / f"{settings.model}-{task.name}.json"
    stream = settings.out / f"{settings.model}-{task.name}.stream.jsonl"
    outcome.recording = str(recording)
    sandbox = bench_sandbox()
    try:
        await prepare_workspace(task, ws, cache=settings.sdists, sandbox=sandbox, env={})
        # A home of its own: the user's configuration, key and checkpoints stay out of it, and the run leaves
        # nothing in the real home.
        homes = private_home(root / "home")
        config = Path(homes["XDG_CONFIG_HOME"]) / "reasonix"
        config.mkdir(parents=True)
        (config / "config.toml").write_text(
            user_config(settings.stall_timeout_s, settings.task_timeout_s, settings.alias), encoding="utf-8"
        )
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith(("DEEPSEEK_", "XDG_", "REASONIX_"))},
            **homes,
            "DEEPSEEK_BASE_URL": settings.base_url,
            "DEEPSEEK_API_KEY": "sk-local-model-no-key",
        }
        argv = [
            *reasonix_argv(),
            "goal",
            "--unattended",
            # The goal stops itself (paused, resumable, its recording written) before the harness's hard bound.
            "--max-runtime",
            f"{int(settings.task_timeout_s * 0.9)}s",
            "--preset",
            settings.preset,
            "--output-format",
            "stream-json",
            "--record",
            str(recording),
            task.spec.objective,
        ]
        with stream.open("wb") as sink, stream.with_suffix(".stderr.txt").open("wb") as errors:
            proc = await trio.lowlevel.open_process(argv, cwd=ws, env=env, stdout=sink, stderr=errors)
            try:
                with trio.move_on_after(settings.task_timeout_s) as bound:
                    await proc.wait()
                if bound.cancelled_caught:
                    outcome.status = "timeout"
                    # Ctrl-C pauses the goal (resumable) and writes the recording; SIGKILL if it does not.
                    with trio.CancelScope(shield=True):
                        await stop(proc, grace_s=60, first=signal.SIGINT)
            finally:
                with trio.CancelScope(shield=True):
                    await stop(proc, grace_s=30, first=signal.SIGINT)
        outcome.exit_code = proc.returncode
        timed_out = outcome.status == "timeout"
        read_stream(stream, outcome)
        if timed_out:
            outcome.why = f"stopped after {settings.task_timeout_s:g} s (the goal was {outcome.status}): " + outcome.why
            outcome.status = "timeout"
        elif outcome.status == "error":
            tail = stream.with_suffix(".stderr.txt").read_text(encoding="utf-8", errors="replace").strip()
            outcome.why = f"the goal printed no end state (exit {proc.returncode}): {tail[-300:] or '(no stderr)'}"
        check = await run_script(task.verify_script, ws, sandbox=sandbox, timeout_s=task.spec.verify.timeout_s)
        outcome.verified = check.ok
        status = await trio.run_process(
            ["git", "status", "--porcelain", "--untracked-files=all"], cwd=ws, capture_stdout=True, check=False
        )
        lines = status.stdout.decode("utf-8", "replace").splitlines()
        outcome.changed = [ln[3:] for ln in lines if ln[3:] and not ln[3:].startswith(".reasonix")]
    finally:
        outcome.wall_s = round(trio.current_time() - start, 1)
        shutil.rmtree(root, ignore_errors=True)
    return outcome
