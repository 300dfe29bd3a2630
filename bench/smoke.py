"""Every script under ``bench/`` in its smoke size, so that an API change that breaks one fails CI (issue 49).

    .venv/bin/python bench/smoke.py [NAME ...] [-j JOBS] [--timeout 120] [--verbose] [--list]

Each runnable script (``SCRIPTS``) runs as a process of this interpreter from the repository's root, with its smoke
arguments: its own size flags or ``--smoke``, the same functions as a real run with fewer rounds and smaller trees,
still printing its figures. Where a script needs what CI cannot give in seconds, its entry says why its smoke is
narrower. Each runs in a process group of its own, bounded by ``--timeout`` seconds (past it, or on Ctrl-C, the group
gets Ctrl-C, then SIGKILL), with a scratch folder of its own (``{tmp}`` in an argument or a variable), and without
``DEEPSEEK_API_KEY`` or ``DEEPSEEK_BASE_URL``: no smoke reaches a real model. ``-j`` scripts run at once (default: two
a CPU, as the test suite's workers: most of them wait on processes of their own), the longest first.

Printed: one line per script as it ends (wall seconds, CPU seconds of it and its children, ok or FAILED, the command),
a failure followed by the last lines of its output; then the totals and the load average. The exit status is 1 when
any failed: it exited otherwise than expected, its output lacked what it must say, or it ran out of time.

``MODULES`` are the files imported by the scripts, not run by themselves. tests/test_bench_smoke.py fails when a file
of ``bench/`` is in neither list, so a new bench cannot miss the smoke run.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import resource
import shlex
import signal
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import trio
import trio.lowlevel

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench"
sys.path.insert(0, str(ROOT))

from orchestrator.exits import ExitCode, is_broken_pipe, leaves, silence_stdout  # noqa: E402

TAIL = 15
"""Lines of a failed script's output that are printed."""
STOP_GRACE_S = 10.0
"""How long a script stopped early has to end after its Ctrl-C before its group is killed."""


@dataclass(frozen=True)
class Smoke:
    args: tuple[str, ...] = ("--smoke",)
    why: str = ""
    """Why the smoke leaves out part of a real run, when it does."""
    exit: int = 0
    says: str = ""
    """Text its output must hold (for a smoke that ends in the script's own error)."""
    env: Mapping[str, str] = field(default_factory=dict)


SCRIPTS: dict[str, Smoke] = {
    # The longest first, so that the run ends soonest.
    "make_screenshot.py": Smoke(
        ("--smoke", "--out", "{tmp}/dashboard.png"),
        why="the goal streams ten times as fast; the screenshot goes to the scratch folder, not docs/",
    ),
    "parallel_bench.py": Smoke(why="no latency model: the acceptance is printed, not judged"),
    "serve_bench.py": Smoke(why="this checkout's side only: the before side is the same bench on older code from git"),
    "scenario_figures.py": Smoke(why="a 7-request goal instead of the 415-request long scenario"),
    "long_session_bench.py": Smoke(why="one cycle of 7 rounds, every item on (each variant is the same code)"),
    "compaction_bench.py": Smoke(("--turns", "8", "--window", "8000")),
    "start_bench.py": Smoke(
        ("-n", "1", "--before", "HEAD", "--only=--help"),
        why="one command against HEAD: the default 'before' is a commit a shallow clone lacks",
    ),
    "mcp_bench.py": Smoke(why="no 10 MB result (its cut is tested in tests/orchestrator/mcp)"),
    "request_digest.py": Smoke(("scenarios/library/length-cut.json",), why="one library scenario of 20"),
    "subagent_bench.py": Smoke(()),
    "reread_bench.py": Smoke(),
    "client_bench.py": Smoke(),
    "harness_bench.py": Smoke(("--sizes", "10,100", "--repeat", "3")),
    "emulator_bench.py": Smoke(),
    "batch_overhead_bench.py": Smoke(
        ("--files", "20", "--rounds", "1", "--no-ray"),
        why="no Ray: a two-node cluster takes 15-25 s to start (the batch's Ray tests run one)",
    ),
    "turn_checkpoint_bench.py": Smoke(("--files", "100", "--rounds", "1")),
    "branch_bench.py": Smoke(("--files", "100", "--rounds", "1")),
    "checkpoint_bench.py": Smoke(("--files", "100", "--rounds", "1")),
    "spawn_bench.py": Smoke(("3",)),
    "sandbox_bench.py": Smoke(("3",)),
    "supervisor_checks_bench.py": Smoke(("--repeat", "2")),
    "gateway_bench.py": Smoke(("--rounds", "20", "--depth", "1")),
    "escalation_bench.py": Smoke(),
    "tools_bench.py": Smoke(),
    "tools_scale_bench.py": Smoke(),
    "plans_bench.py": Smoke(("--steps", "50", "--runs", "2")),
    "plans_scale_bench.py": Smoke(("--sizes", "100", "--runs", "1")),
    "prices_config.py": Smoke(),
    "repair_prepare.py": Smoke(),
    "mutation_score.py": Smoke(
        ("--check",),
        why="no mutant runs: mutmut is not in the test extra and the smallest group takes over ten minutes",
    ),
    "local_model.py": Smoke(
        ("run", "--model", "0.5b", "--goal", "--task", "toolz-tlz-loader", "--out", "{tmp}/runs"),
        why="no model in CI (a multi-GB download and a 30-minute build): `run` must stop with its own error",
        exit=2,
        says="run `bench/local_model.py provision`",
        env={"XDG_CACHE_HOME": "{tmp}/cache"},
    ),
    "smoke.py": Smoke(("--list",), why="this runner: it lists, it does not run itself"),
}
"""Each runnable script of bench/ and how it runs in its smoke size."""

MODULES: dict[str, str] = {
    "local_model_provision.py": "bench/local_model.py's provisioning (pins, cache, build, fetch, checks)",
    "local_model_tasks.py": "bench/local_model.py's serving and tasks",
}
"""The files of bench/ that other scripts import, with what they hold."""


@dataclass
class Outcome:
    name: str
    command: str
    seconds: float
    cpu: float
    problem: str
    """Empty when the script did what its smoke expects."""
    output: str


def command_of(name: str, smoke: Smoke, tmp: str = "{tmp}") -> list[str]:
    return [sys.executable, str(BENCH / name), *(arg.replace("{tmp}", tmp) for arg in smoke.args)]


class Running:
    """One script started in its smoke size, in a process group of its own; its output goes to a file (a process it
    left behind holding a pipe could not keep the runner waiting)."""

    def __init__(self, name: str, smoke: Smoke, tmp: str) -> None:
        self.name, self.smoke = name, smoke
        self.log = Path(tmp) / "output.log"
        env = {k: v for k, v in os.environ.items() if k not in ("DEEPSEEK_API_KEY", "DEEPSEEK_BASE_URL")}
        env.update({k: v.replace("{tmp}", tmp) for k, v in smoke.env.items()})
        with self.log.open("wb") as out:
            self.proc = subprocess.Popen(
                command_of(name, smoke, tmp), stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                cwd=ROOT, env=env, start_new_session=True,
            )  # fmt: skip
        self.pidfd = os.pidfd_open(self.proc.pid)
        self.code: int | None = None
        self.cpu = 0.0

    async def wait(self) -> None:
        """Until it exits; then reaped here, with its CPU and its children's."""
        if self.code is not None:
            return
        await trio.lowlevel.wait_readable(self.pidfd)  # readable once it has exited: the reap below does not block
        _, status, usage = os.wait4(self.proc.pid, os.WNOHANG)  # noqa: ASYNC222
        self.code = self.proc.returncode = os.waitstatus_to_exitcode(status)  # Popen must not reap it again
        self.cpu = usage.ru_utime + usage.ru_stime

    def signal_group(self, signum: int) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signum)

    async def stop(self) -> None:
        """Its group stopped: a script still running gets Ctrl-C (its cleanup runs: temporary folders, servers) and
        ``STOP_GRACE_S`` to end; then whatever is left of the group, the script or what it left behind, is killed."""
        with trio.CancelScope(shield=True):  # also on the way out of a cancelled run
            if self.code is None:
                self.signal_group(signal.SIGINT)
                with trio.move_on_after(STOP_GRACE_S):
                    await self.wait()
            self.signal_group(signal.SIGKILL)
            with trio.move_on_after(STOP_GRACE_S):
                await self.wait()
        os.close(self.pidfd)

    def outcome(self, seconds: float, ran_out: float | None) -> Outcome:
        """What it did; ``ran_out``: the bound it outlived, if it did."""
        output = self.log.read_text(errors="replace")
        smoke = self.smoke
        if ran_out is not None:
            problem = f"ran out of its {ran_out:.0f} s and was stopped"
        elif self.code != smoke.exit:
            problem = f"exit {self.code}" + (f" (expected {smoke.exit})" if smoke.exit else "")
        elif smoke.says and smoke.says not in output:
            problem = f"its output does not say {smoke.says!r}"
        else:
            problem = ""
        command = shlex.join(["bench/" + self.name, *smoke.args])
        return Outcome(self.name, command, seconds, self.cpu, problem, output)


async def run_one(name: str, smoke: Smoke, bound_s: float) -> Outcome:
    with tempfile.TemporaryDirectory(prefix=f"smoke-{Path(name).stem}-") as tmp:
        started = trio.current_time()
        running = await trio.to_thread.run_sync(Running, name, smoke, tmp)
        ran_out: float | None = None
        try:
            with trio.move_on_after(bound_s) as bound:
                await running.wait()
            if bound.cancelled_caught:
                ran_out = bound_s
        finally:
            await running.stop()
        return running.outcome(trio.current_time() - started, ran_out)


def report(outcome: Outcome, verbose: bool) -> None:
    state = "FAILED" if outcome.problem else "ok"
    print(f"{outcome.seconds:6.1f} s {outcome.cpu:6.1f} s CPU  {state:6}  {outcome.command}", flush=True)
    if outcome.problem or verbose:
        lines = outcome.output.rstrip().splitlines()
        shown = lines if verbose else lines[-TAIL:]
        for line in shown:
            print(f"        | {line}")
        if outcome.problem:
            print(f"        {outcome.problem}", flush=True)


async def run_all(names: Sequence[str], jobs: int, bound_s: float, verbose: bool) -> tuple[list[Outcome], float]:
    """The scripts, ``jobs`` at once in the order given; (their outcomes in the order they ended, seconds in all)."""
    limiter = trio.CapacityLimiter(jobs)
    outcomes: list[Outcome] = []
    started = trio.current_time()

    async def one(name: str, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        async with limiter:
            task_status.started()
            outcome = await run_one(name, SCRIPTS[name], bound_s)
        outcomes.append(outcome)
        report(outcome, verbose)

    async with trio.open_nursery() as nursery:
        for name in names:
            await nursery.start(one, name)  # returns once it has its place: the scripts start in the order named
    return outcomes, trio.current_time() - started


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("names", nargs="*", metavar="NAME", help="only these scripts (file names in bench/)")
    parser.add_argument("-j", "--jobs", type=int, default=2 * (os.cpu_count() or 1), help="scripts at once (2 a CPU)")
    parser.add_argument("--timeout", type=float, default=120, help="seconds a script may take (default 120)")
    parser.add_argument("--verbose", action="store_true", help="print every script's whole output")
    parser.add_argument("--list", action="store_true", help="print each script's smoke command and exit")
    args = parser.parse_args(argv)
    unknown = [n for n in args.names if n not in SCRIPTS]
    if unknown:
        parser.error(f"not a runnable script of bench/: {', '.join(unknown)} (--list names them)")
    names = args.names or list(SCRIPTS)
    if args.list:
        try:
            for name in names:
                smoke = SCRIPTS[name]
                print(shlex.join(["bench/" + name, *smoke.args]) + (f"  # {smoke.why}" if smoke.why else ""))
            for name, what in MODULES.items():
                print(f"bench/{name}: a module, not run ({what})")
            sys.stdout.flush()
        except BrokenPipeError:  # piped into head: the reader has what it wanted
            silence_stdout()
            return ExitCode.BROKEN_PIPE
        return 0
    load = os.getloadavg()
    print(f"{len(names)} bench scripts in their smoke size, {args.jobs} at once, each bounded to {args.timeout:.0f} s")
    print(f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} on {os.cpu_count()} CPUs")
    cpu_before = resource.getrusage(resource.RUSAGE_CHILDREN)
    signal.signal(signal.SIGINT, signal.default_int_handler)  # started in the background by a script, it is ignored
    try:
        outcomes, seconds = trio.run(run_all, names, max(1, args.jobs), args.timeout, args.verbose)
    except BaseException as exc:  # the scripts that were running have been killed on the way out
        if is_broken_pipe(exc):  # piped into head: the reader has what it wanted
            silence_stdout()
            return ExitCode.BROKEN_PIPE
        if any(isinstance(leaf, KeyboardInterrupt) for leaf in leaves(exc)):
            print("interrupted: the scripts that were running were stopped", file=sys.stderr)
            return ExitCode.INTERRUPTED
        raise
    cpu_after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (cpu_after.ru_utime + cpu_after.ru_stime) - (cpu_before.ru_utime + cpu_before.ru_stime)
    failed = [o.name for o in outcomes if o.problem]
    load = os.getloadavg()
    print(
        f"{len(outcomes) - len(failed)} ok, {len(failed)} failed in {seconds:.1f} s "
        f"({cpu:.1f} s CPU in all); load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} at the end"
    )
    if failed:
        print(f"failed: {', '.join(failed)}; rerun one with `.venv/bin/python bench/smoke.py NAME --verbose`")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
