"""Running a batch's goals on a Ray cluster (``reasonix batch --ray auto|ADDRESS``, ``pip install 'reasonix[ray]'``).
Only this module imports Ray, and only ``--ray`` imports this module.

Ray is the engine: every pending goal is one task (one CPU), submitted at once; Ray queues and places them, and
retries a task whose worker or node died (``max_retries``). A task runs :func:`~orchestrator.batch.goal_run.
run_one_goal` under its own ``trio.run``, in a copy of the goal's workspace made on its node: cloned from the goal's
URL there, or from a git bundle of a local directory that the driver put in the object store. One actor
(:class:`_Hub`, no CPU of its own, on the driver's node) keeps the batch's ledger
(:class:`~orchestrator.batch.ledger.BatchLedger`), which every request of every task asks first, counts each goal's
attempts, and buffers the goals' progress, which the driver drains for its display. A paused goal's copy (journals
and run directory included) comes back to the driver as a tarball kept in the batch directory, so ``--resume``
continues it from its journals on whatever node runs it next.
"""

from __future__ import annotations

import io
import ipaddress
import os
import tarfile
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import trio

from orchestrator.batch.archive import extract_tar
from orchestrator.batch.driver import BatchRun
from orchestrator.batch.ledger import BatchLedger, bound_of
from orchestrator.batch.progress_event import Progress
from orchestrator.batch.result import GoalResult
from orchestrator.batch.spec import BatchError, GoalSpec
from orchestrator.batch.workspace import Seed, seed_for
from orchestrator.policy.budget import BudgetReachedError
from sessions.wire import RequestEstimate

ARCHIVE = "copy.tar.gz"
POLL_S = 0.25
_PASSED_ENV = ("DEEPSEEK_", "REASONIX_", "XDG_CONFIG_HOME", "XDG_STATE_HOME")
"""What of the driver's environment a task gets (its key and Reasonix's settings); the rest is the node's own."""


def _reseal(goal_dir: Path) -> None:
    """The batch's own copy came back from another node (another key, another directory): its run, the one
    ``copy.json`` names, is sealed again here so that it resumes (:mod:`orchestrator.run_seal`)."""
    from orchestrator.batch.goal_run import COPY_FILE, GoalCopy
    from orchestrator.run_seal import seal_run

    try:
        copy = GoalCopy.model_validate_json((goal_dir / COPY_FILE).read_text(encoding="utf-8"))
        seal_run(goal_dir / "workspace", copy.run_id)
    except (OSError, ValueError):
        return  # no run was created yet: the goal starts from its seed


def _loopback(address: str) -> bool:
    host = address.rsplit(":", 1)[0].strip("[]") if ":" in address else address
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"


def _import_ray(address: str) -> Any:
    if _loopback(address):  # Ray swaps 127.0.0.1 for the machine's address unless told it is a one-machine cluster
        os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    try:
        import ray
    except ImportError as exc:
        raise BatchError("--ray needs Ray: pip install 'reasonix[ray]'") from exc
    return ray


class _Hub:
    """The batch's one actor: its ledger, each goal's attempts, and the progress waiting for the driver."""

    def __init__(self, limit_usd: float | None, spent_usd: float) -> None:
        self.ledger = BatchLedger(limit_usd, spent_usd=spent_usd)
        self.attempts: dict[str, int] = {}
        self.progress: list[dict[str, Any]] = []

    def start(self, goal_id: str) -> tuple[int, str | None]:
        """A new attempt of ``goal_id``: its number, and the ledger's refusal if it is closed."""
        n = self.attempts.get(goal_id, 0) + 1
        self.attempts[goal_id] = n
        self.ledger.forget(f"{goal_id}#{n - 1}")  # what a dead attempt held
        return n, self.ledger.refusal

    def reserve(self, bound_usd: float, holder: str) -> tuple[int, str | None]:
        return self.ledger.reserve(bound_usd, holder)

    def release(self, token: int) -> None:
        self.ledger.release(token)

    def charge(self, usd: float, requests: int) -> None:
        self.ledger.charge(usd, requests)

    def report(self, progress: dict[str, Any]) -> None:
        self.progress.append(progress)

    def drain(self) -> tuple[list[dict[str, Any]], float, str | None]:
        out, self.progress = self.progress, []
        return out, self.ledger.spent_usd, self.ledger.refusal

    def attempts_of(self, goal_id: str) -> int:
        return self.attempts.get(goal_id, 0)


class _RayShare:
    """A goal's view of the hub's ledger from inside its task (a :class:`~orchestrator.policy.budget.SharedLedger`).
    Calls from one task reach the actor in the order made, so a charge lands before the release after it."""

    def __init__(self, ray: Any, hub: Any, holder: str) -> None:
        self.ray, self.hub, self.holder = ray, hub, holder

    def admit(self, estimate: RequestEstimate) -> Callable[[], None]:
        token, refusal = self.ray.get(self.hub.reserve.remote(bound_of(estimate), self.holder))
        if refusal is not None:
            raise BudgetReachedError(refusal, "usd")
        return lambda: self.hub.release.remote(token)

    def charge(self, *, usd: float = 0.0, requests: int = 0) -> None:
        self.hub.charge.remote(usd, requests)


def _pack(goal_dir: Path) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        tar.add(goal_dir, arcname=".")
    return buffer.getvalue()


def _goal_task(
    spec_json: str,
    seed: Seed | None,
    archive: bytes | None,
    hub: Any,
    env: Mapping[str, str],
    base_url: str | None,
    max_attempts: int,
) -> tuple[str, bytes | None]:
    """One goal on a Ray worker: its result (JSON) and, when it paused, its copy as a tarball."""
    import ray

    from orchestrator.batch.goal_run import run_one_goal

    spec = GoalSpec.model_validate_json(spec_json)
    node = ray.get_runtime_context().get_node_id()
    attempt, refusal = ray.get(hub.start.remote(spec.id))
    if refusal is not None:
        result = GoalResult(
            id=spec.id,
            objective=spec.objective,
            workspace=spec.workspace,
            status="paused",
            reason=f"not started: {refusal}",
            node=node,
            attempts=attempt,
            max_attempts=max_attempts,
        )
        return result.model_dump_json(), archive
    os.environ.update(env)
    goal_dir = Path(tempfile.mkdtemp(prefix=f"reasonix-batch-{spec.id}-"))
    if archive is not None:
        with tarfile.open(fileobj=io.BytesIO(archive), mode="r:gz") as tar:
            extract_tar(tar, goal_dir)
        _reseal(goal_dir)

    async def main() -> GoalResult:
        return await run_one_goal(
            spec,
            seed,
            goal_dir,
            env=dict(os.environ),
            shared=_RayShare(ray, hub, f"{spec.id}#{attempt}"),
            base_url=base_url,
            on_progress=lambda p: hub.report.remote(p.model_dump()),
            node=node,
            attempt=attempt,
            max_attempts=max_attempts,
        )

    result = trio.run(main)
    return result.model_dump_json(), (_pack(goal_dir) if result.status == "paused" else None)


LOOPBACK = "127.0.0.1"
"""Where a cluster ``--ray auto`` starts listens: ``--ray ADDRESS`` is what reaches beyond this machine."""


def _one_machine(ray: Any) -> None:
    """Before ``--ray auto`` starts a cluster: Ray takes the machine's address instead of 127.0.0.1 unless told the
    cluster is this machine's alone. The cluster's processes read that from the environment when they start; this
    one read it when it imported ray (joining the machine's cluster, which ``auto`` tries first, needs the machine's
    address), so it is told here too."""
    os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
    constants = getattr(getattr(ray, "_private", None), "ray_constants", None)
    if constants is not None and hasattr(constants, "ENABLE_RAY_CLUSTER"):
        constants.ENABLE_RAY_CLUSTER = False


def _join(ray: Any, address: str) -> str:
    """Connect to the cluster (``auto``: the one this machine knows, else a new one here, on loopback; usage
    statistics are off, :func:`_import_ray`); what was joined."""
    options: dict[str, Any] = {"logging_level": "WARNING", "log_to_driver": False, "configure_logging": True}
    try:
        if address == "auto":
            try:
                ray.init(address="auto", **options)
            except ConnectionError:  # none: a new one of this machine alone, on loopback
                _one_machine(ray)
                ray.init(include_dashboard=False, _node_ip_address=LOOPBACK, **options)
        else:
            ray.init(address=address, **options)
    except (ConnectionError, ValueError, RuntimeError) as exc:
        raise BatchError(f"cannot join the Ray cluster at {address}: {exc}; start one with `ray start --head`") from exc
    nodes = [n for n in ray.nodes() if n.get("Alive")]
    cpus = sum(n.get("Resources", {}).get("CPU", 0) for n in nodes)
    where = ray.get_runtime_context().gcs_address
    names = ", ".join(f"{n['NodeID'][:12]} ({n['NodeManagerAddress']})" for n in nodes)
    return f"joined the Ray cluster at {where}: {len(nodes)} nodes, {cpus:g} CPUs: {names}"


async def run_on_ray(
    batch: BatchRun, *, address: str, retries: int = 2, on_joined: Callable[[str], None] = print
) -> None:
    """Run every pending goal of ``batch`` as a Ray task on the cluster at ``address`` (see the module's docstring).
    A cancellation (Ctrl-C) cancels the tasks still running (their goals run again on ``--resume``)."""
    ray = _import_ray(address)
    on_joined(await trio.to_thread.run_sync(_join, ray, address))
    try:
        await _drive(ray, batch, retries)
    finally:
        ray.shutdown()


async def _drive(ray: Any, batch: BatchRun, retries: int) -> None:
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    here = NodeAffinitySchedulingStrategy(ray.get_runtime_context().get_node_id(), soft=False)
    hub_class = ray.remote(num_cpus=0, scheduling_strategy=here)(_Hub)  # on the driver's node: it lives as long as it
    hub = hub_class.remote(batch.ledger.limit_usd, batch.ledger.spent_usd)
    task = ray.remote(_goal_task).options(num_cpus=1, max_retries=retries, retry_exceptions=False)
    env = {k: v for k, v in batch.env.items() if k.startswith(_PASSED_ENV)}
    refs: dict[Any, GoalSpec] = {}
    for goal in batch.pending:
        archive_path = batch.goal_dir(goal.id) / ARCHIVE
        archive = archive_path.read_bytes() if archive_path.exists() else None
        seed = None if archive is not None and not goal.remote else await seed_for(goal)
        seed_ref = ray.put(seed)  # a bundle travels once through the object store, to the node that runs the goal
        refs[task.remote(goal.model_dump_json(), seed_ref, archive, hub, env, batch.base_url, retries + 1)] = goal
    try:
        while refs:
            ready, _ = await trio.to_thread.run_sync(lambda: ray.wait(list(refs), num_returns=1, timeout=POLL_S))
            events, spent, refusal = await trio.to_thread.run_sync(lambda: ray.get(hub.drain.remote()))
            batch.ledger.spent_usd, batch.ledger.refusal = spent, refusal
            for event in events:
                batch.on_progress(Progress.model_validate(event))
            for ref in ready:
                goal = refs.pop(ref)
                batch.record(await _collect(ray, hub, batch, goal, ref, retries))
    finally:
        for ref in refs:
            ray.cancel(ref, force=True)


async def _collect(ray: Any, hub: Any, batch: BatchRun, goal: GoalSpec, ref: Any, retries: int) -> GoalResult:
    archive_path = batch.goal_dir(goal.id) / ARCHIVE
    try:
        result_json, archive = await trio.to_thread.run_sync(ray.get, ref)
    except ray.exceptions.RayError as exc:
        attempts = await trio.to_thread.run_sync(lambda: ray.get(hub.attempts_of.remote(goal.id)))
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return GoalResult(
            id=goal.id,
            objective=goal.objective,
            workspace=goal.workspace,
            status="error",
            reason=f"its task failed {attempts} times (at most {retries + 1} attempts): {first}",
            attempts=attempts,
            max_attempts=retries + 1,
        )
    if archive is not None:
        archive_path.parent.mkdir(parents=True, exist_ok=True)
        archive_path.write_bytes(archive)
    else:
        archive_path.unlink(missing_ok=True)
    return GoalResult.model_validate_json(result_json)
