"""Reasonix's pointer files under ``.reasonix/`` (``headless.json`` for ``-p --continue``, ``repl.json`` for ``code
--continue``) are read through the gateway, bounded: a repository can ship ``.reasonix/``, and on 05d9218 a link
there was followed out of the workspace, a FIFO waited on and ``/dev/zero`` read until memory ran out."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from orchestrator.headless.conversation import last_conversation
from orchestrator.repl.conversation import last_run_id
from tests.orchestrator.run_support import ROOT


def _state(tmp_path: Path) -> tuple[Path, Path]:
    ws = tmp_path / "ws"
    (ws / ".reasonix").mkdir(parents=True)
    outside = tmp_path / "outside.json"
    outside.write_text(json.dumps({"session_id": "forged-outside", "run_id": "forged-outside"}))
    return ws, outside


@pytest.mark.parametrize(("name", "last"), [("headless.json", last_conversation), ("repl.json", last_run_id)])
def test_a_pointer_file_linked_out_of_the_workspace_is_not_read(tmp_path: Path, name: str, last: object) -> None:
    ws, outside = _state(tmp_path)
    assert callable(last)
    (ws / ".reasonix" / name).symlink_to(outside)
    assert last(ws) is None
    (ws / ".reasonix" / name).unlink()
    (ws / ".reasonix" / name).write_text(outside.read_text())  # the same bytes inside: read as before
    assert last(ws) == "forged-outside"


@pytest.mark.parametrize("special", ["fifo", "dev-zero"])
def test_a_pointer_file_that_never_ends_or_never_opens_is_no_pointer(tmp_path: Path, special: str) -> None:
    ws, _ = _state(tmp_path)
    for name in ("headless.json", "repl.json"):
        if special == "fifo":
            os.mkfifo(ws / ".reasonix" / name)
        else:
            (ws / ".reasonix" / name).symlink_to("/dev/zero")
    script = (
        "import sys; from pathlib import Path\n"
        "from orchestrator.headless.conversation import last_conversation\n"
        "from orchestrator.repl.conversation import last_run_id\n"
        "print(last_conversation(Path(sys.argv[1])), last_run_id(Path(sys.argv[1])))\n"
    )
    done = subprocess.run(  # a child with a bounded address space and a hang guard: the old code never returned
        [sys.executable, "-c", f"import resource; resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))\n{script}",
         str(ws)],
        cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0 and done.stdout.strip() == "None None", done.stderr
