"""The README's main job on a machine without bubblewrap: ``reasonix replay`` runs the library's scenarios, their
scripted commands in the temporary copy, never stopping to ask — the killed-and-resumed one too, whose first run is a
``reasonix goal`` process of its own (bubblewrap is hidden from PATH here; it paused for an approval before)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.orchestrator.run_support import ROOT
from tests.support.parts import path_without


def test_the_kill_resume_scenario_replays_without_a_sandbox(tmp_path: Path) -> None:
    env = {**os.environ, "PATH": path_without(tmp_path / "bin", "bwrap"), "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-m", "orchestrator", "replay", "kill-resume"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "ok · kill-resume" in done.stdout and "status complete · steps 2/2" in done.stdout
