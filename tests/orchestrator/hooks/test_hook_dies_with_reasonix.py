"""A hook's command dies with Reasonix: SIGKILL the process that runs a hook (unsandboxed here, where nothing else
would take it down) and the hook's command is gone too, not left running in its own session."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from tests.support.leftovers import assert_gone, pids_running

DRIVER = textwrap.dedent(
    """
    import sys, trio
    from pathlib import Path
    from orchestrator.hooks.process import run_hook_command
    from sessions.sandbox import NoSandbox

    async def main() -> None:
        await run_hook_command(
            sys.argv[1], sys.argv[2], b"{}", workspace=Path(sys.argv[3]), sandbox=NoSandbox(),
            timeout_s=600, env={"PATH": "/usr/bin:/bin"},
        )

    trio.run(main)
    """
)


def test_a_sigkill_of_reasonix_takes_the_running_hook_with_it(tmp_path: Path) -> None:
    tag = str(9000 + os.getpid() % 997)  # only the hook's sleep has it as a word of its command line
    bash = shutil.which("bash")
    assert bash is not None
    driver = subprocess.Popen([sys.executable, "-c", DRIVER, bash, f"sleep {tag}", str(tmp_path)])
    try:
        for _ in range(600):  # the hook starts within a few seconds on a loaded machine
            if pids_running(tag):
                break
            assert driver.poll() is None, "the driver exited before its hook started"
            time.sleep(0.05)
        assert pids_running(tag), "the hook never started"
        driver.send_signal(signal.SIGKILL)
        driver.wait()
        assert_gone(tag, "the hook's command outlived the Reasonix process that ran it")
    finally:
        if driver.poll() is None:
            driver.kill()
            driver.wait()
        for pid in pids_running(tag):
            os.kill(pid, signal.SIGKILL)
