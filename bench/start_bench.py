"""What a ``reasonix`` command costs to start, before and after (issue 49, "Start"), side by side in one run.

Each command runs as a whole process, ``python -m orchestrator ARGS``: "after" is this checkout, "before" another
revision (``--before REF``, default ``9bfc8b7``, engine45's tip, whose branch is gone) checked out in a temporary
``git worktree`` and put first on ``PYTHONPATH``, so both run on the same interpreter and the same installed
dependencies and differ only in our code. The two alternate (A B A B …) after a warm-up that also writes their
bytecode (``PYTHONDONTWRITEBYTECODE`` is dropped: a user's installation has its ``.pyc`` files). Per command: the
median CPU time (user + system) and the median peak RSS of the process (``wait4``'s rusage), and the after/before
ratio of each. ``-p`` sends one request to the DeepSeek emulator (started here on loopback, no latency) in a scratch
workspace with a scratch ``HOME``.

    .venv/bin/python bench/start_bench.py [-n RUNS] [--before REF] [--only NAME …]

CI (``bench/smoke.py``) runs ``-n 1 --before HEAD --only=--help``: one command, every step of the bench.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

COMMANDS: dict[str, list[str]] = {
    "-p hi (one request)": ["-p", "hi", "--base-url", "{url}", "--workspace", "{ws}"],
    "runs": ["runs", "--workspace", "{ws}"],
    "checkpoints": ["checkpoints", "--workspace", "{ws}"],
    "undo (nothing to undo)": ["undo", "--workspace", "{ws}"],
    "doctor --offline": ["doctor", "--offline", "--workspace", "{ws}"],
    "goal --budget-usd 0 x (usage error)": ["goal", "--budget-usd", "0", "x", "--workspace", "{ws}"],
    "--help": ["--help"],
}
"""Name → arguments of ``reasonix`` (``{url}``: the emulator, ``{ws}``: the scratch workspace)."""


def run_once(source: Path, argv: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float, int]:
    """One process: (CPU seconds, peak RSS in MiB, exit status)."""
    child_env = {**env, "PYTHONPATH": str(source)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "orchestrator", *argv],
        cwd=cwd,
        env=child_env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, proc.returncode


@contextmanager
def before_tree(ref: str) -> Iterator[Path]:
    """``ref`` checked out in a temporary worktree (removed afterwards)."""
    parent = Path(tempfile.mkdtemp(prefix="start-bench-before-"))
    tree = parent / "tree"
    added = subprocess.run(
        ["git", "-C", str(ROOT), "worktree", "add", "--detach", str(tree), ref], capture_output=True, text=True
    )
    if added.returncode != 0:
        shutil.rmtree(parent, ignore_errors=True)
        raise SystemExit(f"--before {ref}: git cannot check it out ({added.stderr.strip()}); name a commit or branch")
    try:
        yield tree
    finally:
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)], capture_output=True)
        shutil.rmtree(parent, ignore_errors=True)


@contextmanager
def emulator(env: dict[str, str]) -> Iterator[str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "orchestrator", "emulate", "--port", "0"],
        env={**env, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline().split()
        if first[:2] != ["listening", "on"]:
            raise SystemExit(f"the emulator did not start: {first}")
        yield first[2]
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", "--runs", type=int, default=5, help="counted runs of each command each way")
    parser.add_argument("--before", default="9bfc8b7", help="the revision to compare with (default: engine45's tip)")
    parser.add_argument("--only", action="append", default=[], help="only the commands whose name starts so")
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="start-bench-"))
    home, ws = scratch / "home", scratch / "ws"
    home.mkdir()
    ws.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPATH")}
    env.update(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"), XDG_STATE_HOME=str(home / ".state"))
    env.pop("DEEPSEEK_API_KEY", None)
    commands = {k: v for k, v in COMMANDS.items() if not args.only or any(k.startswith(o) for o in args.only)}
    try:
        with before_tree(args.before) as before, emulator(env) as url:
            load = os.getloadavg()
            print(f"before: {args.before} ({_rev(args.before)}), after: this checkout ({_rev('HEAD')}{_dirty()})")
            print(f"{args.runs} runs each way, interleaved, after one warm-up; load average {load[0]:.2f} at start")
            header = f"{'command':38} {'CPU before':>10} {'CPU after':>10} {'ratio':>6}  {'RSS before':>10} "
            print(header + f"{'RSS after':>10} {'ratio':>6}  status")
            for name, template in commands.items():
                argv = [a.format(url=url, ws=ws) for a in template]
                figures: dict[str, list[tuple[float, float, int]]] = {"before": [], "after": []}
                for source in (before, ROOT):  # warm-up: bytecode written, caches filled
                    run_once(source, argv, env, ws)
                for _ in range(args.runs):
                    figures["before"].append(run_once(before, argv, env, ws))
                    figures["after"].append(run_once(ROOT, argv, env, ws))
                cpu = {k: statistics.median(f[0] for f in v) for k, v in figures.items()}
                rss = {k: statistics.median(f[1] for f in v) for k, v in figures.items()}
                codes = {k: sorted({f[2] for f in v}) for k, v in figures.items()}
                print(
                    f"{name:38} {cpu['before']:9.3f}s {cpu['after']:9.3f}s {cpu['after'] / cpu['before']:6.2f}  "
                    f"{rss['before']:7.1f}MiB {rss['after']:7.1f}MiB {rss['after'] / rss['before']:6.2f}  "
                    f"exit {codes['before']}/{codes['after']}"
                )
            end = os.getloadavg()
            print(
                f"load average {end[0]:.2f} at the end; goals (quiet machine): -p ≤ 0.35 s CPU and ≤ 70 MiB, ", end=""
            )
            print("runs, checkpoints, undo, doctor --offline and a usage error ≤ 0.25 s CPU")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _rev(ref: str) -> str:
    out = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", ref], capture_output=True, text=True)
    return out.stdout.strip() or ref


def _dirty() -> str:
    out = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain"], capture_output=True, text=True)
    return " + uncommitted changes" if out.stdout.strip() else ""


if __name__ == "__main__":
    main()
