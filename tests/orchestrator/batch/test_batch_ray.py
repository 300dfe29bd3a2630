"""``reasonix batch --ray`` on a real two-node Ray cluster on this machine (Ray's own multi-node test cluster, one CPU
a node, loopback only, usage statistics off, no dashboard), the driver a real process against a real emulator process.

One cluster serves the whole module, so its phases run in one test, in order: six goals land on both nodes; the
batch budget pauses every goal and none sends a request past it, and ``--resume`` finishes them from their journals
(their copies came back to the driver); then the second node's raylet is stopped mid-goal, that goal is retried on
the head and the batch completes. Nothing of the cluster listens anywhere but 127.0.0.1."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.orchestrator.run_support import clean_env, emulator_process, emulator_stats, reasonix, start_reasonix
from tests.support.batch import batch_script, goals_file, pin_peak_prices, results
from tests.support.ray_cluster import TwoNodes, listening_addresses, one_ray_at_a_time, two_node_cluster

pytestmark = pytest.mark.ray


@pytest.fixture(scope="module")
def cluster() -> Iterator[TwoNodes]:
    with one_ray_at_a_time(), two_node_cluster() as nodes:
        yield nodes


def _env(tmp_path: Path, cluster: TwoNodes) -> dict[str, str]:
    return {
        **clean_env(tmp_path),
        **cluster.env(),
        "DEEPSEEK_API_KEY": "sk-test",
        "XDG_STATE_HOME": str(tmp_path / "state"),
    }


def _only_loopback(cluster: TwoNodes) -> None:
    found = listening_addresses(cluster.pids())
    assert found, "the cluster's processes listen on nothing?"
    wrong = [(pid, address) for pid, address in found if not address.startswith("127.0.0.1:")]
    assert not wrong, wrong


def _wait(predicate: object, proc: subprocess.Popen[str], what: str, timeout: float = 600) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():  # type: ignore[operator]
            return
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.mark.bwrap
def test_a_batch_on_a_two_node_ray_cluster(tmp_path: Path, cluster: TwoNodes) -> None:
    head_id, second_id = cluster.head.node_id, cluster.second.node_id

    # ---- six goals, on both nodes
    six = [f"g{i}" for i in range(1, 7)]
    root = tmp_path / "six"
    env = _env(root, cluster)
    goals = goals_file(root, six)
    with emulator_process(batch_script(six), root, env) as url:
        proc = reasonix("batch", str(goals), "--ray", cluster.address, "--base-url", url, env=env, timeout=900)
        sent = emulator_stats(url)["total"]["requests"]
    assert proc.returncode == 0, proc.stderr + proc.stdout
    assert proc.stdout.startswith(f"joined the Ray cluster at {cluster.address}: 2 nodes, 2 CPUs"), proc.stdout
    found = results(root / "goals.batch" / "results.jsonl")
    assert sorted(found) == six and all(r["status"] == "complete" for r in found.values()), found
    assert {r["node"] for r in found.values()} == {head_id, second_id}  # the results say which node ran each
    assert all("+def add(a, b):" in r["diff"] and r["attempts"] == 1 and r["max_attempts"] == 3 for r in found.values())
    assert sent == 24 == sum(r["requests"] for r in found.values())
    assert any(line.startswith("g4 started on node ") for line in proc.stdout.splitlines())  # events streamed back
    _only_loopback(cluster)

    # ---- the batch budget stops the batch: every goal paused, resumable; no request past it
    three = ["b1", "b2", "b3"]
    root = tmp_path / "budget"
    env = _env(root, cluster)
    pin_peak_prices(env)
    goals = goals_file(root, three)
    out = root / "goals.batch" / "results.jsonl"
    budget = 0.012  # about one request's upper bound (its prompt unhit, 8,192 output tokens at flash's peak price)
    with emulator_process(batch_script(three), root, env) as url:
        base = ("--ray", cluster.address, "--base-url", url)
        proc = reasonix("batch", str(goals), "--budget-usd", str(budget), *base, env=env, timeout=900)
        sent = emulator_stats(url)["total"]["requests"]
        assert proc.returncode == 3, proc.stderr + proc.stdout
        paused = results(out)
        # Which goals the budget catches depends on when Ray starts each on its node: one that got going alone may
        # finish inside the budget before the others ask. Every other one is paused, by the batch budget.
        assert sorted(paused) == three, paused
        stopped = [r for r in paused.values() if r["status"] != "complete"]
        assert stopped and all(r["status"] == "paused" and "batch budget" in r["reason"] for r in stopped), paused
        assert sum(r["cost_usd"] for r in paused.values()) <= budget
        assert sum(r["requests"] for r in paused.values()) == sent
        resumed = reasonix("batch", str(goals), "--resume", "--budget-usd", "5", *base, env=env, timeout=900)
        total = emulator_stats(url)["total"]["requests"]
    assert resumed.returncode == 0, resumed.stderr + resumed.stdout
    final = results(out)
    assert all(r["status"] == "complete" for r in final.values()), final
    assert total == 12 == sum(r["requests"] for r in final.values())  # resumed from the journals: nothing sent twice

    # ---- the second node dies mid-goal: that goal is retried and the batch completes
    two = ["k1", "k2"]
    root = tmp_path / "kill"
    env = _env(root, cluster)
    goals = goals_file(root, two)
    stall = [{"kind": "stall", "seconds": 20, "then": "drop"}]
    with emulator_process(batch_script(two, k1=stall, k2=stall), root, env) as url:
        proc = start_reasonix("batch", str(goals), "--ray", cluster.address, "--base-url", url, env=env)

        def both_stalled() -> bool:
            sessions = emulator_stats(url)["sessions"]
            return all(sessions.get(f"{k}-planner", {}).get("faults_injected", {}).get("stall") for k in two)

        _wait(both_stalled, proc, "both goals to be mid-request, one on each node")
        _only_loopback(cluster)  # the driver, the workers and both nodes, all busy
        cluster.stop_second_raylet()
        stdout, stderr = proc.communicate(timeout=900)
    assert proc.returncode == 0, stderr + stdout
    found = results(root / "goals.batch" / "results.jsonl")
    assert all(r["status"] == "complete" and r["node"] == head_id for r in found.values()), found
    assert sorted(r["attempts"] for r in found.values()) == [1, 2]  # the one on the dead node, retried on the head
    assert all(r["max_attempts"] == 3 for r in found.values())
    retried = next(r for r in found.values() if r["attempts"] == 2)
    assert f"{retried['id']} started on node {head_id}: attempt 2" in stdout
