"""A run killed mid-flight (issue 18): ``reasonix goal --yes`` as a real process against the replay's loopback
emulator, sent SIGKILL when it sends a given request — before that request is answered or uses a scripted reply — so
the next run can ``--resume`` it exactly as a user would after a crash.

The process gets the offline key, the emulator's URL, a home of its own (no user configuration) and the workspace,
but the user's state home: the run key that seals its run lives there (:mod:`orchestrator.run_seal`), and the next
run resumes it only if the same key sealed it (with a state home of its own, the resume was refused as forged);
without a sandbox on the machine, ``--allow-unconfined-verify`` too, so that it runs the scenario's scripted verify
commands as the replay's own runs do rather than pausing for an approval nobody can give.
Its output goes to ``killed-run-N.log`` next to the workspace (kept with ``--keep``).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import trio

from orchestrator.checkpoints.git import state_home
from orchestrator.policy.verify import UNCONFINED_FLAG
from scenarios import Scenario
from scenarios.emulator import RunningEmulator
from sessions.sandbox import sandbox_unavailable_reason

KILLED_RUN_TIMEOUT_S = 300.0


class KilledRunError(Exception):
    """The run to be killed never reached its request (it ended first, or hung)."""


def _matches(at: str, key: str, counts: dict[str, int]) -> bool:
    """Whether this request (of session ``key``) is the one ``at`` names; ``counts`` keeps the tally per session and
    over all sessions (``""``)."""
    session, _, number = at.rpartition(":")
    counts[key] = counts.get(key, 0) + 1
    counts[""] = counts.get("", 0) + 1
    return session in ("", key) and counts[session] == int(number)


def _prepare(home: Path) -> None:
    home.mkdir(parents=True, exist_ok=True)


def _tail(log: Path) -> list[str]:
    return log.read_text(encoding="utf-8", errors="replace").strip().splitlines()[-5:]


async def run_killed(scenario: Scenario, at: str, ws: Path, emu: RunningEmulator, log: Path, home: Path) -> str:
    """Start the goal, SIGKILL it at request ``at``; return the id of the run it left behind."""
    runs = ws / ".reasonix" / "runs"
    before = set(os.listdir(runs)) if runs.is_dir() else set()
    _prepare(home)
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("DEEPSEEK_", "REASONIX_"))},
        "DEEPSEEK_API_KEY": "sk-replay-offline",
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_STATE_HOME": str(state_home(os.environ)),  # the run key: the next run resumes what this one seals
    }
    s = scenario.settings
    command = [sys.executable, "-m", "orchestrator", "goal", scenario.objective, "--yes", "--json"]
    command += ["--workspace", str(ws), "--base-url", emu.base_url, "--preset", s.preset]
    if s.budget_usd is not None:
        command += ["--budget-usd", str(s.budget_usd)]
    if sandbox_unavailable_reason() is not None:
        # As the replay's own runs do: a scenario's scripted verify commands run in the temporary copy of the
        # workspace, sandboxed where a sandbox exists and otherwise without one (the replay said so once).
        command.append(UNCONFINED_FLAG)
    counts: dict[str, int] = {}
    killed = False
    with log.open("wb") as out:
        process = await trio.lowlevel.open_process(command, env=env, stdout=out, stderr=subprocess.STDOUT)

        def intercept(key: str) -> bool:
            nonlocal killed
            if killed or not _matches(at, key, counts):
                return killed
            process.kill()  # SIGKILL: no finally block, no journal flush, as when the machine dies
            killed = True
            return True

        emu.emulator.intercept = intercept
        try:
            with trio.move_on_after(KILLED_RUN_TIMEOUT_S):
                await process.wait()
        finally:
            emu.emulator.intercept = None
            if process.returncode is None:
                process.kill()
                await process.wait()
    if not killed:
        tail = _tail(log)
        raise KilledRunError(
            f"the run to be killed at request {at} ended (exit {process.returncode}) before sending it"
            + ("\n" + "\n".join(tail) if tail else "")
        )
    new = sorted(set(os.listdir(runs)) - before) if runs.is_dir() else []
    if len(new) != 1:
        raise KilledRunError(f"the killed run left {len(new)} new run directories, expected one: {new}")
    return new[0]
