"""The bash tool and what it stands on: running a shell command through a sandbox with bounded resources,
and capturing its output as a bounded head and tail with a count of what was cut. The supervisor's verify commands
run through the same path.
"""

from sessions.tools.shell.bounded import HeadTail
from sessions.tools.shell.process import run_shell

__all__ = [
    "HeadTail",
    "run_shell",
]
