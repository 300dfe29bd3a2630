"""Running ``reasonix bench`` as a real process on the starter fixtures, for the bench CLI tests."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

SUITE = Path(__file__).resolve().parents[2] / "fixtures" / "bench-suite"


def bench(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    full = {k: v for k, v in os.environ.items() if k not in ("DEEPSEEK_API_KEY", "DEEPSEEK_BASE_URL")}
    full.update({"COLUMNS": "200", "XDG_CACHE_HOME": str(cwd / "cache"), **(env or {})})
    return subprocess.run(
        [sys.executable, "-m", "orchestrator", "bench", *args],
        cwd=cwd,
        env=full,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
