"""A command imports only what it uses (DESIGN §7, issue 49): each real command runs in a fresh interpreter, and what
it left in ``sys.modules`` is held against the heavy modules it may not load. The goal loop (and networkx with it)
is for goals; the tokenizer for a count that is really needed (``doctor`` checks it); the tool registry and the
client for commands that run a session."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from .run_support import ROOT, clean_env, start_reasonix

GOAL_LOOP = ("networkx", "plans.graph", "orchestrator.goal.runner", "orchestrator.goal.context", "orchestrator.build")
"""What only a goal (or plan validation) needs: ``orchestrator.build`` builds goals and imports the session stack."""
SESSION_STACK = ("tokenizers", "httpx", "sessions.tools", "sessions.session")
"""What only a command that runs a session needs."""
EVERYTHING = ("pydantic", "rich", "trio", *GOAL_LOOP, *SESSION_STACK)

CODE = """\
import json, sys
from orchestrator.cli.main import main
try:
    code = main({args!r})
except SystemExit as exc:
    code = exc.code
print(json.dumps({{"code": code, "loaded": sorted(m for m in {heavy!r} if m in sys.modules)}}), file=sys.stderr)
"""


def _loaded(args: list[str], heavy: tuple[str, ...], env: dict[str, str]) -> tuple[object, list[str]]:
    """Run ``reasonix ARGS`` in a fresh interpreter: its exit status and which of ``heavy`` it imported."""
    code = CODE.format(args=args, heavy=heavy)
    proc = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    last = json.loads(proc.stderr.strip().splitlines()[-1])
    return last["code"], last["loaded"]


@contextmanager
def _emulator(env: dict[str, str]) -> Iterator[str]:
    proc = start_reasonix("emulate", "--port", "0", env=env)
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline().strip()
        assert first.startswith("listening on http://"), first
        yield first.removeprefix("listening on ")
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return clean_env(tmp_path / "home")


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    return workspace


@pytest.mark.parametrize("args", [["--help"], ["--version"], ["goal", "--help"], ["no-such-command"]])
def test_help_version_and_argparse_errors_import_nothing_heavy(args: list[str], env: dict[str, str]) -> None:
    """``reasonix --help`` stays fast: argparse's exit passes through the entry point's handler without imports."""
    _code, loaded = _loaded(args, EVERYTHING, env)
    assert loaded == []


@pytest.mark.parametrize(
    "args", [["goal", "--budget-usd", "0", "x"], ["plan", "--max-requests", "0", "x"], ["exec", "--max-minutes", "0"]]
)
def test_a_goal_limit_that_is_wrong_is_said_before_anything_heavy_is_imported(
    args: list[str], env: dict[str, str], ws: Path
) -> None:
    code, loaded = _loaded([*args, "--workspace", str(ws)], EVERYTHING, env)
    assert code == 2
    assert loaded == []


@pytest.mark.parametrize("command", ["runs", "checkpoints", "undo"])
def test_the_commands_that_read_past_runs_import_no_goal_loop_and_no_session(
    command: str, env: dict[str, str], ws: Path
) -> None:
    heavy = (*GOAL_LOOP, *SESSION_STACK, "orchestrator.events")  # a run's state is read without the events' models
    code, loaded = _loaded([command, "--workspace", str(ws)], heavy, env)
    assert code in (0, 1)  # undo with nothing to undo says so and exits 1 (trio is allowed: git runs under it)
    assert loaded == []


def test_doctor_offline_loads_the_tokenizer_it_checks_and_no_goal_loop(env: dict[str, str], ws: Path) -> None:
    code, loaded = _loaded(["doctor", "--offline", "--workspace", str(ws)], (*GOAL_LOOP, "tokenizers"), env)
    assert code in (0, 1)  # a machine without bubblewrap fails that check
    assert loaded == ["tokenizers"]


def test_a_print_task_loads_neither_the_goal_loop_nor_the_tokenizer(env: dict[str, str], ws: Path) -> None:
    """``reasonix -p`` with one request: the server reports the context, so nothing is counted."""
    with _emulator(env) as url:
        heavy = (*GOAL_LOOP[:-1], "tokenizers", "sessions.session")
        code, loaded = _loaded(["-p", "hi", "--base-url", url, "--workspace", str(ws)], heavy, env)
    assert code == 0
    assert loaded == ["sessions.session"]  # it ran a session (the check is not vacuous)
