"""The loopback network that background jobs share outlives its last job: a command that took the network's
``nsenter`` prefix while a job ran must still run after that job ended (it failed with ``nsenter: cannot open
/proc/PID/ns/net`` when the anchor was stopped with the last job)."""

from __future__ import annotations

import shutil
from pathlib import Path

import trio

from sessions.tools.shell.bounded import HeadTail
from sessions.tools.shell.jobs import JobTable
from sessions.tools.shell.process import run_shell
from tests.support.bwrap import sandbox


async def test_a_command_that_joined_the_jobs_network_runs_after_the_last_job_ended(bwrap: str, ws: Path) -> None:
    bash = shutil.which("bash")
    assert bash is not None
    box = sandbox(bwrap)
    table = JobTable()
    try:
        job = table.start(bash, "while [ ! -e stop ]; do sleep 0.05; done", cwd=ws, env={}, sandbox=box)
        joined = table.sandbox_for(box)  # what a foreground command takes while the job runs
        assert joined is not box and table.network is not None and table.network.problem is None
        (ws / "stop").touch()
        with trio.fail_after(30):
            while not job.ended:
                await table.wait(job, 30)
        assert job.exit_code == 0

        output = HeadTail(4_000, 4_000)
        with trio.fail_after(30):
            run = await run_shell(
                bash, "echo joined", cwd=ws, env={}, timeout_s=30, output=output, sandbox=joined, workspace=ws
            )
        assert (run.exit_code, output.text()) == (0, "joined\n")
    finally:
        table.close()
    assert table.network is not None and not table.network.running  # the session's close stops the anchor
