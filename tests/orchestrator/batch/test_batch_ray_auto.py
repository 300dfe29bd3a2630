"""``reasonix batch --ray auto`` where no cluster runs: the local cluster it starts listens on 127.0.0.1 only (every
process of it, while a goal runs), though the environment does not ask for it."""

from __future__ import annotations

import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.orchestrator.run_support import clean_env, emulator_process, emulator_stats, start_reasonix
from tests.support.batch import batch_script, goals_file
from tests.support.ray_cluster import descendants, listening_addresses, one_ray_at_a_time

pytestmark = pytest.mark.ray


def _name(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()[:160]
    except OSError:
        return str(pid)


@pytest.fixture(autouse=True)
def _alone() -> Iterator[None]:
    with one_ray_at_a_time():
        yield


@pytest.mark.bwrap
def test_ray_auto_starts_a_cluster_on_loopback_only(tmp_path: Path) -> None:
    ray_tmp = Path(tempfile.mkdtemp(prefix="rx-ray-", dir="/tmp"))  # short: Ray's socket paths must fit 107 bytes
    env = {
        **{k: v for k, v in clean_env(tmp_path).items() if not k.startswith("RAY_")},
        "RAY_TMPDIR": str(ray_tmp),  # no cluster to find there: --ray auto starts its own
        "DEEPSEEK_API_KEY": "sk-test",
        "XDG_STATE_HOME": str(tmp_path / "state"),
    }
    goals = goals_file(tmp_path, ["s1"])
    stall = [{"kind": "stall", "seconds": 120, "then": "drop"}]
    proc: subprocess.Popen[str] | None = None
    try:
        with emulator_process(batch_script(["s1"], s1=stall), tmp_path, env) as url:
            proc = start_reasonix("batch", str(goals), "--ray", "auto", "--base-url", url, env=env)
            deadline = time.monotonic() + 600
            while not emulator_stats(url)["sessions"].get("s1-planner", {}).get("faults_injected", {}).get("stall"):
                assert proc.poll() is None, proc.communicate()
                assert time.monotonic() < deadline, "the goal never reached its first request"
                time.sleep(0.2)
            found = [(_name(pid), address) for pid, address in listening_addresses(descendants(proc.pid))]
            proc.send_signal(signal.SIGINT)
            out, _ = proc.communicate(timeout=120)
    finally:
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait()
        shutil.rmtree(ray_tmp, ignore_errors=True)
    assert out.startswith("joined the Ray cluster at 127.0.0.1:"), out
    assert len({pid for pid, _ in found}) >= 2, found  # the GCS and the raylet at least
    wrong = [(pid, address) for pid, address in found if not address.startswith("127.0.0.1:")]
    assert not wrong, wrong
