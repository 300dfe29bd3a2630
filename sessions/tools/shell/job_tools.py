"""``job_output`` and ``job_kill``, and :func:`with_jobs`, which gives a registry background jobs.

The tools and ``bash``'s ``background`` parameter are part of the frozen prefix, so they are opt-in: a registry
without :func:`with_jobs` sends exactly the bytes it sent before. ``job_output`` polls, so the storm guard leaves it
alone (``storm_exempt``); it can wait a bounded while for output or the end instead of being called in a loop.
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from sessions.tools.base import Tool, ToolArgs, ToolContext, ToolResult
from sessions.tools.errors import ToolError
from sessions.tools.registry import ToolRegistry
from sessions.tools.shell.bash import BackgroundBashTool, BashTool
from sessions.tools.shell.jobs import Job, JobTable

MAX_WAIT_S = 60.0


class JobArgs(ToolArgs):
    job: int = Field(ge=1, description="The job's number, from bash's answer when it started.")


class JobOutputArgs(JobArgs):
    wait_s: float = Field(
        0, ge=0, le=MAX_WAIT_S, description="Wait up to this many seconds for new output or the end; default 0."
    )


def _job(jobs: JobTable, number: int) -> Job:
    job = jobs.get(number)
    if job is None:
        known = ", ".join(str(n) for n in jobs.jobs) or "none started yet"
        raise ToolError(f"there is no job {number}; the jobs of this session: {known}")
    return job


def _report(job: Job) -> str:
    if job.ended:
        job.announced = True  # its end is told here: no note later
    output = job.take()
    head = f"{job.name} (`{' '.join(job.command.split())[:80]}`): {job.state()}"
    return f"{head}\n{output}" if output else f"{head}; no new output"


class JobOutputTool(Tool[JobOutputArgs]):
    name = "job_output"
    description = (
        "The new output of a background job since you last read it (long output keeps head and tail) and whether "
        "it still runs or how it ended."
    )
    args_model = JobOutputArgs
    read_only: ClassVar[bool] = True
    parallel_safe: ClassVar[bool] = True
    storm_exempt: ClassVar[bool] = True

    def __init__(self, jobs: JobTable) -> None:
        self.jobs = jobs

    async def run(self, args: JobOutputArgs, ctx: ToolContext) -> ToolResult:
        job = _job(self.jobs, args.job)
        await self.jobs.wait(job, args.wait_s)
        return ToolResult(content=_report(job), data={"job": job.number, "running": not job.ended})


class JobKillTool(Tool[JobArgs]):
    name = "job_kill"
    description = "Stop a background job: its whole process group is killed. Returns its last output."
    args_model = JobArgs
    read_only: ClassVar[bool] = False
    parallel_safe: ClassVar[bool] = False

    def __init__(self, jobs: JobTable) -> None:
        self.jobs = jobs

    async def run(self, args: JobArgs, ctx: ToolContext) -> ToolResult:
        job = _job(self.jobs, args.job)
        await self.jobs.kill(job)
        return ToolResult(content=_report(job), data={"job": job.number, "running": not job.ended})


def with_jobs(registry: ToolRegistry, jobs: JobTable) -> ToolRegistry:
    """``registry`` with background jobs: ``bash`` gains ``background``, and ``job_output`` and ``job_kill`` join.
    A registry without ``bash`` is returned unchanged."""
    if not isinstance(registry.get(BashTool.name), BashTool):
        return registry
    others = [tool for tool in registry if tool.name not in (BashTool.name, JobOutputTool.name, JobKillTool.name)]
    return ToolRegistry([*others, BackgroundBashTool(jobs), JobOutputTool(jobs), JobKillTool(jobs)])


def jobs_of(registry: ToolRegistry) -> JobTable | None:
    """The job table a registry's tools share (None: no background jobs)."""
    bash = registry.get(BashTool.name)
    return bash.jobs if isinstance(bash, BashTool) else None
