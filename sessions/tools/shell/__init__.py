"""The bash tool and what it stands on: running a shell command through a sandbox with bounded resources,
and capturing its output as a bounded head and tail with a count of what was cut. The supervisor's verify commands
run through the same path. Background jobs (``bash`` with ``background = true``, ``job_output``, ``job_kill``) are
opt-in: :func:`with_jobs` gives a registry them, and a session's :class:`JobTable` dies with it.
"""

from sessions.tools.shell.bounded import HeadTail
from sessions.tools.shell.job_tools import jobs_of, with_jobs
from sessions.tools.shell.jobs import JobTable
from sessions.tools.shell.process import run_shell

__all__ = [
    "HeadTail",
    "JobTable",
    "jobs_of",
    "run_shell",
    "with_jobs",
]
