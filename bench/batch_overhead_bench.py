"""What ``reasonix batch`` adds to each goal, on this machine and on Ray: copying the workspace, reading the diff,
and on Ray the cluster's start-up, joining it, a task's round trip, shipping a local workspace as a git bundle through
the object store, and streaming progress events to the driver.

    .venv/bin/python bench/batch_overhead_bench.py [--files 200] [--rounds 5] [--events 500] [--no-ray]

The workspace is a generated git repository of ``--files`` Python files (about 2 KiB each). Local figures are the
median of ``--rounds``: packing it into a bundle (:func:`orchestrator.batch.workspace.pack_local`), cloning the bundle
(:func:`~orchestrator.batch.workspace.clone`), and the goal's diff after one file changed
(:func:`~orchestrator.batch.workspace.goal_diff`). Ray figures use a real two-node cluster on this machine (one CPU a
node, loopback, usage statistics off): its start-up, the driver's join, an empty task's round trip, a task that clones
the bundle from the object store on its node, and ``--events`` progress reports sent to the hub actor and drained.
The goal loop itself is not measured here (it is the same code on both engines). Wall-clock times; the machine is
shared: rerun before comparing.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import trio

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from orchestrator.batch.spec import GoalSpec  # noqa: E402
from orchestrator.batch.workspace import clone, git, goal_diff, pack_local  # noqa: E402


def _repo(root: Path, files: int) -> Path:
    root.mkdir(parents=True)
    for n in range(files):
        (root / f"mod_{n:04d}.py").write_text(
            "".join(f"def f{i}(x):\n    return x + {n * 100 + i}\n" for i in range(60))
        )

    async def make() -> None:
        await git("init", "-q", cwd=root)
        await git("add", "-A", cwd=root)
        await git("commit", "-q", "-m", "seed", cwd=root)

    trio.run(make)
    return root


def _median(rounds: int, work: Callable[[int], float]) -> float:
    return statistics.median(work(n) for n in range(rounds))


def local_figures(ws: Path, scratch: Path, rounds: int) -> dict[str, float]:
    spec = GoalSpec(id="bench", workspace=str(ws), objective="x")
    seed = trio.run(pack_local, spec)

    def pack(_: int) -> float:
        t = time.perf_counter()
        trio.run(pack_local, spec)
        return time.perf_counter() - t

    def clone_one(n: int) -> float:
        t = time.perf_counter()
        trio.run(clone, seed, scratch / f"clone-{n}", "bench")
        return time.perf_counter() - t

    def diff(n: int) -> float:
        copy = scratch / f"clone-{n}"
        (copy / "mod_0000.py").write_text("changed\n")
        t = time.perf_counter()
        trio.run(goal_diff, copy, seed.commit)
        return time.perf_counter() - t

    return {
        "bundle_kib": len(seed.bundle or b"") / 1024,
        "pack_s": _median(rounds, pack),
        "clone_s": _median(rounds, clone_one),
        "diff_s": _median(rounds, diff),
    }


def ray_figures(ws: Path, rounds: int, events: int) -> dict[str, float]:
    from tests.support.ray_cluster import two_node_cluster

    t = time.perf_counter()
    with two_node_cluster() as cluster:
        started = time.perf_counter() - t
        import ray

        from orchestrator.batch.ray_engine import _Hub

        t = time.perf_counter()
        ray.init(address=cluster.address, logging_level="WARNING", log_to_driver=False)
        joined = time.perf_counter() - t
        spec = GoalSpec(id="bench", workspace=str(ws), objective="x")
        seed = trio.run(pack_local, spec)

        @ray.remote(num_cpus=1)
        def empty() -> str:
            return str(ray.get_runtime_context().get_node_id())

        @ray.remote(num_cpus=1)
        def clone_there(seed: Any) -> float:
            target = Path(tempfile.mkdtemp()) / "copy"
            t = time.perf_counter()
            trio.run(clone, seed, target, "bench")
            return time.perf_counter() - t

        ray.get(empty.remote())  # a worker is started once per node; that is start-up, not per goal
        ray.get([empty.remote(), empty.remote()])

        def task(_: int) -> float:
            t = time.perf_counter()
            ray.get(empty.remote())
            return time.perf_counter() - t

        def shipped(_: int) -> float:
            t = time.perf_counter()
            inside = ray.get(clone_there.remote(ray.put(seed)))
            assert inside > 0
            return time.perf_counter() - t  # the whole trip, the clone on the node included

        hub = ray.remote(num_cpus=0)(_Hub).remote(None, 0.0)
        ray.get(hub.drain.remote())
        event = {"goal_id": "bench", "kind": "cost", "text": "", "cost_usd": 0.001, "requests": 1, "node": "n"}
        t = time.perf_counter()
        for _ in range(events):
            hub.report.remote(event)
        drained = ray.get(hub.drain.remote())
        streamed = time.perf_counter() - t
        assert len(drained[0]) == events
        figures = {
            "cluster_start_s": started,
            "join_s": joined,
            "task_s": _median(rounds, task),
            "ship_and_clone_s": _median(rounds, shipped),
            "event_ms": streamed / events * 1000,
        }
        ray.shutdown()
        return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--events", type=int, default=500)
    parser.add_argument("--no-ray", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        ws = _repo(Path(tmp) / "ws", args.files)
        local = local_figures(ws, Path(tmp), args.rounds)
        print(f"workspace: {args.files} files, bundle {local['bundle_kib']:.0f} KiB")
        pack, copy, diff = (local[k] * 1000 for k in ("pack_s", "clone_s", "diff_s"))
        print(f"local, per goal: pack {pack:.0f} ms, clone {copy:.0f} ms, diff {diff:.0f} ms")
        if args.no_ray:
            return
        ray_ = ray_figures(ws, args.rounds, args.events)
        print(f"ray, once: cluster start-up {ray_['cluster_start_s']:.1f} s (two nodes), join {ray_['join_s']:.2f} s")
        print(
            f"ray, per goal: task round trip {ray_['task_s'] * 1000:.0f} ms, bundle through the object store and clone"
            f" on the node {ray_['ship_and_clone_s'] * 1000:.0f} ms, one progress event {ray_['event_ms']:.2f} ms"
        )


if __name__ == "__main__":
    main()
