"""Running a task's scripts (``verify.sh``, setup commands) the way a goal's verify commands run: ``bash -c`` in the
workspace root, through the project's sandbox (bubblewrap, the workspace writable, the network off), with the
allowlisted environment and ``python`` on ``PATH`` being the interpreter that runs reasonix."""

from __future__ import annotations

import dataclasses
import os
import sys
from collections.abc import Mapping
from pathlib import Path

from orchestrator.bench.task import BenchError
from orchestrator.events import VerifyOutcome
from orchestrator.policy.verify import run_command
from plans import VerifyCommand
from sessions.sandbox import Sandbox, SandboxPolicy, sandbox_for, sandbox_unavailable_reason


class NoSandboxError(BenchError):
    """The benchmark runs task scripts only in a sandbox, and none works on this machine."""


#: pytest loads no plugin of the environment reasonix runs in: a task's outcome does not depend on what else is
#: installed there (and pytest starts in a fraction of the time).
NO_PLUGINS = "PYTEST_DISABLE_PLUGIN_AUTOLOAD"


def bench_env(base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment the sandbox filters: ``PATH`` led by this interpreter's folder, no bytecode written into the
    workspace (it would show in the diff), no pytest plugins loaded by entry point."""
    env = dict(os.environ if base is None else base)
    here = str(Path(sys.executable).parent)
    env["PATH"] = here + os.pathsep + env.get("PATH", "/usr/bin:/bin")
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env[NO_PLUGINS] = "1"
    return env


def bench_policy(policy: SandboxPolicy | None = None) -> SandboxPolicy:
    """``policy`` (default: workspace-write, no network) passing :data:`NO_PLUGINS` through."""
    policy = policy or SandboxPolicy(mode="workspace-write")
    return dataclasses.replace(policy, env=tuple(dict.fromkeys((*policy.env, NO_PLUGINS))))


def bench_sandbox(env: Mapping[str, str] | None = None, policy: SandboxPolicy | None = None) -> Sandbox:
    """The sandbox task scripts and goals run in (default: workspace-write, no network). Raises
    :class:`NoSandboxError` where none can start."""
    sandbox = sandbox_for(bench_policy(policy), base_env=bench_env(env))
    if not sandbox.confines:
        reason = sandbox_unavailable_reason() or "no sandbox is available here"
        raise NoSandboxError(f"reasonix bench runs task scripts only in a sandbox: {reason}")
    return sandbox


async def run_script(
    script: str, ws: Path, *, sandbox: Sandbox, env: Mapping[str, str] | None = None, timeout_s: float = 120
) -> VerifyOutcome:
    """Run ``script`` with ``bash -c`` in ``ws`` in the sandbox; the outcome is ok on exit 0."""
    verify = VerifyCommand(command=script, timeout_s=timeout_s)
    return await run_command(verify, ws, sandbox=sandbox, env=dict(env or {}), output_chars=6000)
