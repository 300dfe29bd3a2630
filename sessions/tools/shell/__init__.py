"""The bash tool and what it stands on: running a shell command through a sandbox with bounded resources,
and capturing its output as a bounded head and tail with a count of what was cut. The supervisor's verify commands
run through the same path.
"""

__all__: list[str] = []
