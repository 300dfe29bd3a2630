"""``bash``: run a command with ``bash -c`` in the workspace root, bounded in time and output.

* No stdin (``/dev/null``); a new session, so the command and everything it starts share one process group, with no
  controlling terminal to prompt on.
* On timeout and on cancellation the whole process group is killed (SIGKILL) and reaped before returning.
* Output (stdout and stderr interleaved) keeps its head and tail with a marker saying how much was cut; a pytest or
  unittest run keeps its failures and summary and folds the passing progress into one line
  (:mod:`sessions.tools.shell.runner_output`), the whole output kept beside the journal for ``read_file``.
* If the command exits but background processes keep its output open, they get a short grace and are then killed.
* It runs through the context's sandbox (:mod:`sessions.sandbox`): bubblewrap confines it to the workspace, without
  network; the environment is an allowlist, never the API key.
* Nothing the command starts outlives it; the status says how many leftovers were killed, and only those seen gone.
* With background jobs on (:func:`~sessions.tools.shell.job_tools.with_jobs`), ``background = true`` starts the
  command as a job (:mod:`sessions.tools.shell.jobs`) and returns at once; the schema has that parameter only then.
"""

from __future__ import annotations

import shutil

from pydantic import Field

from sessions.tools.base import Tool, ToolArgs, ToolContext, ToolResult
from sessions.tools.errors import ToolError
from sessions.tools.shell.bounded import HeadTail
from sessions.tools.shell.jobs import JobTable
from sessions.tools.shell.process import ShellRun, run_shell
from sessions.tools.shell.runner_output import fold_test_output

__all__ = ["BackgroundBashArgs", "BackgroundBashTool", "BashArgs", "BashTool"]


class BashArgs(ToolArgs):
    command: str = Field(min_length=1, description="Shell command(s), run by bash -c in the workspace root.")
    timeout_s: float | None = Field(
        None, gt=0, le=600, description="Seconds before the command is killed; default 120."
    )


class BackgroundBashArgs(BashArgs):
    background: bool = Field(
        False,
        description="Start it as a background job and return at once with its id (a server, a long test run); "
        "read it with job_output, stop it with job_kill. timeout_s does not apply.",
    )


def _status_line(exit_code: int | None, timeout: float, run: ShellRun) -> str:
    if run.timed_out:
        status = f"[timed out after {timeout:g}s; the process group was killed"
    else:
        signalled = exit_code is not None and exit_code < 0
        status = f"[killed by signal {-(exit_code or 0)}" if signalled else f"[exit code {exit_code}"
        if run.lingering and not (run.leftovers_killed or run.leftovers_survived):
            status += "; background processes held the output open"
    if run.leftovers_killed:
        status += f"; killed {counted(run.leftovers_killed, 'process')} it left running"
    if run.leftovers_survived:
        status += f"; {counted(run.leftovers_survived, 'process')} it left running could not be killed"
    if run.bound:
        status += f"; {run.bound}"
    return status + "]"


def counted(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}es"


def _with_status(body: str, status: str) -> str:
    if not body:
        return status
    return body + ("" if body.endswith("\n") else "\n") + status


class BashTool(Tool[BashArgs]):
    name = "bash"
    description = (
        "Run a bash command in the workspace root, without stdin. Returns combined stdout/stderr "
        "(long output keeps head and tail) and the exit code."
    )
    args_model = BashArgs
    read_only = False
    parallel_safe = False
    sandboxed = True

    jobs: JobTable | None = None

    async def run(self, args: BashArgs, ctx: ToolContext) -> ToolResult:
        bash = shutil.which("bash")
        if bash is None:
            raise ToolError("bash is not installed on this machine; the command cannot run")
        sandbox = ctx.sandbox
        if self.jobs is not None:
            if isinstance(args, BackgroundBashArgs) and args.background:
                return self._start(bash, args.command, ctx)
            sandbox = self.jobs.sandbox_for(sandbox)  # the loopback network the jobs listen on
        limits = ctx.limits
        timeout = min(args.timeout_s or limits.bash_timeout_s, limits.bash_max_timeout_s)
        output = HeadTail(limits.bash_head_bytes, limits.bash_tail_bytes, limits.bash_full_text_bytes)
        run = await run_shell(
            bash,
            args.command,
            cwd=ctx.root,
            env=ctx.env,
            timeout_s=timeout,
            output=output,
            exit_grace_s=limits.bash_exit_grace_s,
            sandbox=sandbox,
            workspace=ctx.root,
        )
        exit_code, timed_out = run.exit_code, run.timed_out
        status = _status_line(exit_code, timeout, run)
        full = output.full_text() if output.bounded else None
        data = {"exit_code": exit_code, "timed_out": timed_out, "output_bytes": output.total}
        whole = full if output.bounded else output.text()
        folded = fold_test_output(whole) if whole is not None and limits.fold_test_runs else None
        if folded is not None and whole is not None:  # a test run: failures and summary in full, the rest kept aside
            return ToolResult(
                content=_with_status(folded, status),
                is_error=timed_out or exit_code != 0,
                data={**data, "folded": True},
                full_text=_with_status(whole, status),
            )
        return ToolResult(
            content=_with_status(output.text(), status),
            is_error=timed_out or exit_code != 0,
            data=data,
            full_text=None if full is None else _with_status(full, status),
        )

    def _start(self, bash: str, command: str, ctx: ToolContext) -> ToolResult:
        assert self.jobs is not None
        try:
            job = self.jobs.start(bash, command, cwd=ctx.root, env=ctx.env, sandbox=ctx.sandbox)
        except RuntimeError as exc:
            raise ToolError(str(exc)) from exc
        network = self.jobs.network
        shared = network is not None and network.problem is None
        reach = (
            " Later commands share its loopback network."
            if shared
            else ""
            if network is None
            else f" Its network is its own ({network.problem}): later commands cannot reach its ports."
        )
        return ToolResult(
            content=f"started {job.name} in the background.{reach} Read its output with job_output "
            f"(job={job.number}); stop it with job_kill. You will be told when it ends.",
            data={"job": job.number},
        )


class BackgroundBashTool(BashTool):
    """``bash`` with the ``background`` parameter, for a session with background jobs."""

    description = (
        f"{BashTool.description} With background=true it starts a background job and returns its id at once; "
        "you are told when a job ends."
    )

    def __init__(self, jobs: JobTable) -> None:
        self.jobs = jobs
        self.args_model = BackgroundBashArgs
