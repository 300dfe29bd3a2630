"""The supervisor runs a step's verify commands itself, in the workspace (DESIGN §5: never the executor's word).

Each command runs with ``bash -c`` in the workspace root:

* no stdin (``/dev/null``); a new session, so the command and all it starts form one process group;
* stdout and stderr merged, kept as a bounded head and tail (``sessions.tools.shell.bounded.HeadTail``), so the text is
  a deterministic function of what the command printed: nothing of ours (no clock, no temp path) is added to it;
* through the run's sandbox (:mod:`sessions.sandbox`; bubblewrap confines writes to the workspace, without network)
  and with the allowlisted environment, never the API key;
* on timeout the whole process group is killed; on cancellation too, and the cancellation propagates;
* when the command exits, whatever it left running is killed (a leftover keeping the output open gets a short grace
  first): a verify command never leaves processes behind.

An outcome is ok iff the exit code equals the command's ``expect_exit``.

Without a sandbox (bubblewrap missing or broken, and the user did not choose ``full-access``) a verify command would run
on the host with the user's full rights, so it runs only when the user said so for exactly that
(:class:`UnconfinedVerify`): ``--allow-unconfined-verify``, or approving, at a plan review that named it as running
unconfined, the plan that holds it. ``--yes`` alone approves nothing of the kind: the goal pauses with a message
saying what to do (:meth:`UnconfinedVerify.refusal`), and :func:`run_verify` refuses as a last line.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import trio

from orchestrator.errors import ReasonixError
from orchestrator.events import VerifyOutcome
from orchestrator.text.safe_text import neutralise
from plans import Plan, Step, StepStatus, VerifyCommand
from sessions.sandbox import Sandbox, sandbox_unavailable_reason
from sessions.tools.shell import HeadTail, run_shell

#: How long a command that has exited may keep its output open through a background process before the group dies.
EXIT_GRACE_S = 1.0


#: The flag that lets a goal's verify commands run on this machine when no sandbox is available.
UNCONFINED_FLAG = "--allow-unconfined-verify"


class VerifyError(ReasonixError):
    """The supervisor could not run verification at all (no workspace, no bash): not the step's fault."""


class UnconfinedVerifyError(VerifyError):
    """A verify command would have run without a sandbox, and the user had not approved that."""


def unconfined_reason(sandbox: Sandbox | None) -> str | None:
    """Why verify commands would run unconfined under ``sandbox``; ``None`` when they are confined, when the user
    chose ``full-access``, or when no sandbox was asked for at all (a caller running them directly: tests, replay in a
    throwaway copy)."""
    if sandbox is None or sandbox.confines or sandbox.policy.mode == "full-access":
        return None
    return sandbox_unavailable_reason() or "no sandbox is available here"


def pending_commands(plan: Plan) -> list[str]:
    """The verify commands of the steps still to run, each once, in plan order."""
    steps = [s for s in plan.steps if s.status is not StepStatus.DONE]
    return list(dict.fromkeys(v.command for s in steps for v in s.verify))


@dataclass
class UnconfinedVerify:
    """Which verify commands may run without a sandbox in this run (see the module docstring)."""

    reason: str | None
    """Why they would be unconfined; ``None``: they are not, nothing needs approving."""
    allow_all: bool = False
    """``--allow-unconfined-verify``."""
    approved: set[str] = field(default_factory=set)
    """Commands a person approved at a review that named them as unconfined."""

    def unapproved(self, steps: Sequence[Step]) -> list[str]:
        """The commands of ``steps`` that would run unconfined without the user's say-so."""
        if self.reason is None or self.allow_all:
            return []
        commands = dict.fromkeys(v.command for s in steps for v in s.verify)
        return [c for c in commands if c not in self.approved]

    def approve(self, commands: Iterable[str]) -> None:
        self.approved.update(commands)

    def refusal(self, steps: Sequence[Step]) -> str | None:
        """The message that stops the goal before ``steps`` run, or ``None`` when they may."""
        commands = self.unapproved(steps)
        if not commands:
            return None
        names = ", ".join(s.id for s in steps if any(v.command in commands for v in s.verify))
        shown = "; ".join(f"`{neutralise(c)}`" for c in commands)
        return (
            f"nothing was run: the verify commands of {names} would run on this machine without a sandbox "
            f"({self.reason}): {shown}. Resume once a sandbox works, or, to run them on this machine with your "
            f"rights, resume with {UNCONFINED_FLAG}"
        )


async def run_command(
    verify: VerifyCommand,
    workspace: Path,
    *,
    default_timeout_s: float = 300,
    output_chars: int = 4000,
    env: Mapping[str, str] | None = None,
    sandbox: Sandbox | None = None,
) -> VerifyOutcome:
    """Run one verify command; see the module docstring. ``env`` holds overrides joining the allowlisted environment;
    ``sandbox`` defaults to none."""
    bash = shutil.which("bash")
    if bash is None:
        raise VerifyError("bash is not installed on this machine; install it so verify commands can run")
    if not await trio.Path(workspace).is_dir():
        raise VerifyError(f"the workspace {workspace} is not a directory; verify commands run in the workspace root")
    timeout = verify.timeout_s if verify.timeout_s is not None else default_timeout_s
    head = max(output_chars // 2, 0)
    output = HeadTail(head_cap=head, tail_cap=max(output_chars - head, 0))
    try:
        run = await run_shell(
            bash,
            verify.command,
            cwd=workspace,
            env=env or {},
            timeout_s=timeout,
            output=output,
            exit_grace_s=EXIT_GRACE_S,
            sandbox=sandbox,
            workspace=workspace,
        )
    except OSError as exc:
        raise VerifyError(f"could not start bash for a verify command in {workspace}: {exc}") from exc
    timed_out, exit_code = run.timed_out, run.exit_code
    return VerifyOutcome(
        command=verify.command,
        exit_code=exit_code,
        expected=verify.expect_exit,
        ok=not timed_out and exit_code == verify.expect_exit,
        timed_out=timed_out,
        output=output.text() + (f"\n[{run.bound}]" if run.bound else ""),
    )


async def run_verify(
    step: Step,
    workspace: Path,
    *,
    default_timeout_s: float = 300,
    output_chars: int = 4000,
    env: Mapping[str, str] | None = None,
    stop_on_failure: bool = False,
    sandbox: Sandbox | None = None,
    unconfined: UnconfinedVerify | None = None,
) -> tuple[VerifyOutcome, ...]:
    """Run every verify command of ``step`` in order (all of them, unless ``stop_on_failure``). With ``unconfined``
    given, raises :class:`UnconfinedVerifyError` instead of running a command it does not allow."""
    refusal = unconfined.refusal([step]) if unconfined is not None else None
    if refusal is not None:
        raise UnconfinedVerifyError(refusal)
    outcomes: list[VerifyOutcome] = []
    for verify in step.verify:
        outcome = await run_command(
            verify,
            workspace,
            default_timeout_s=default_timeout_s,
            output_chars=output_chars,
            env=env,
            sandbox=sandbox,
        )
        outcomes.append(outcome)
        if stop_on_failure and not outcome.ok:
            break
    return tuple(outcomes)


def _status(outcome: VerifyOutcome) -> str:
    if outcome.timed_out:
        return f"timed out and was killed (expected exit {outcome.expected})"
    code = outcome.exit_code
    if code is not None and code < 0:
        return f"killed by signal {-code} (expected exit {outcome.expected})"
    return f"exit {code}, expected {outcome.expected}"


def failure_digest(outcomes: Iterable[VerifyOutcome], tail_lines: int = 8) -> str:
    """What a user needs to see of a failed verification: each failed command, how it ended, the tail of its
    output (``$ pytest -q  [exit 1, expected 0]`` then the last lines)."""
    parts = []
    for outcome in outcomes:
        if outcome.ok:
            continue
        lines = outcome.output.rstrip("\n").splitlines()
        tail = lines[-tail_lines:] if lines else ["(no output)"]
        more = [f"… {len(lines) - tail_lines} earlier lines"] if len(lines) > tail_lines else []
        parts.append("\n".join([f"$ {outcome.command}  [{_status(outcome)}]", *more, *tail]))
    return "\n".join(parts)


def verify_feedback(outcomes: Iterable[VerifyOutcome]) -> str:
    """The compact text sent back to the executor when verification failed; empty when every command passed."""
    outcomes = tuple(outcomes)
    failed = [o for o in outcomes if not o.ok]
    if not failed:
        return ""
    lines = [f"Verification failed: {len(failed)} of {len(outcomes)} command(s) did not pass."]
    for outcome in failed:
        lines.append("")
        lines.append(f"$ {outcome.command}")
        lines.append(f"[{_status(outcome)}]")
        body = outcome.output.rstrip("\n")
        lines.append(body if body else "(no output)")
    return "\n".join(lines)
