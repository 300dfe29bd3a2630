"""``reasonix bench``: measure the agent on a suite of real tasks.

    reasonix bench check [SUITE]                    every task's verify.sh fails on the seed and passes on its fix
    reasonix bench [SUITE] [--oracle] [--output F]  run every task through a goal; results JSONL + an HTML report
    reasonix bench compare A.jsonl B.jsonl          per-task differences and an exact McNemar p-value

SUITE defaults to the starter suite, ``bench/tasks`` here or, from anywhere else, beside the installed package (a
checkout installed with ``pip install -e``). ``check`` and a run need the ``bench`` extra (the build backends pip
prepares the tasks' sdists with, and pytest): missing, the command says so first. ``--oracle`` plays each task's
reference patch through the emulator (offline; the figures measure the harness, not a model); without it the goals
run against DeepSeek with your key. ``--faults`` (oracle mode) runs every task again once per provider fault kind and
reports what each cost.

Exit status: 0 when every task is good (check) or solved (run); 1 when one is not; 2 for a bad suite, file or option.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

    from rich.console import Console

    from orchestrator.bench.check import TaskCheck
    from orchestrator.bench.results import TaskResult

DEFAULT_SUITE = "bench/tasks"
DEFAULT_OUTPUT = "bench-results.jsonl"
BENCH_EXTRA = ("wheel", "flit_core", "setuptools_scm", "pytest")
"""What ``pip install 'reasonix[bench]'`` brings (pyproject.toml's ``bench`` extra), as modules."""


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "words",
        nargs="*",
        metavar="[check|compare] ARGS",
        help=f"SUITE (default {DEFAULT_SUITE}); check [SUITE]; compare A.jsonl B.jsonl",
    )
    parser.add_argument("--oracle", action="store_true", help="offline: replies derived from each reference patch")
    parser.add_argument("--output", "-o", default=DEFAULT_OUTPUT, help=f"results JSONL (default {DEFAULT_OUTPUT})")
    parser.add_argument(
        "--faults",
        nargs="?",
        const="all",
        metavar="KIND,...",
        help="with --oracle: run each task again per provider fault kind (default: all) and report the cost",
    )
    parser.add_argument("--task", action="append", default=[], metavar="NAME", help="only this task (repeatable)")
    parser.add_argument("--jobs", "-j", type=int, default=1, help="tasks run at once (default 1)")
    parser.add_argument("--cache", help="the sdist cache (default $XDG_CACHE_HOME/reasonix/sdists)")
    parser.add_argument("--preset", default="auto", choices=("flash", "auto", "pro"), help="the goals' preset")
    parser.add_argument("--budget-usd", type=float, help="live mode: the budget of each task's goal")
    parser.add_argument("--keep", action="store_true", help="keep each task's workspace and print where it is")


def run(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.text import Text

    from orchestrator.bench.task import BenchError
    from orchestrator.errors import ReasonixError
    from orchestrator.exits import ExitCode

    err = Console(stderr=True, highlight=False, soft_wrap=True)
    out = Console(highlight=False, soft_wrap=True)
    words = list(args.words)
    try:
        if words[:1] == ["check"]:
            if len(words) > 2:
                raise _Usage("bench check takes one SUITE at most")
            _need_extra()
            return _check(args, words[1] if len(words) == 2 else _default_suite(), out)
        if words[:1] == ["compare"]:
            if len(words) != 3:
                raise _Usage("bench compare takes two results files: reasonix bench compare A.jsonl B.jsonl")
            return _compare(words[1], words[2], out)
        if len(words) > 1:
            raise _Usage(f"give one SUITE folder, not {len(words)} (or `check` / `compare`)")
        return _bench(args, words[0] if words else _default_suite(), out, err)
    except _Usage as exc:
        err.print(Text(f"reasonix bench: {exc}", style="red"))
        return ExitCode.USAGE
    except (BenchError, ReasonixError) as exc:
        err.print(Text(f"reasonix bench: {exc}", style="red"))
        return ExitCode.USAGE


class _Usage(Exception):
    pass


def _need_extra() -> None:
    """The bench extra is installed, or a usage error naming what is missing and the one command that brings it."""
    import importlib.util
    import sys

    missing = [name for name in BENCH_EXTRA if importlib.util.find_spec(name) is None]
    if missing:
        raise _Usage(
            f"reasonix bench needs the bench extra, and {', '.join(missing)} {'is' if len(missing) == 1 else 'are'} "
            f"not installed in {sys.executable}: pip install 'reasonix[bench]' (in a checkout: pip install -e "
            "'.[bench]'). pip prepares each task's sdist without build isolation, so its build backend must be here"
        )


def _default_suite() -> str:
    """``bench/tasks`` here when there is one, else the starter suite beside the installed package (a checkout)."""
    from pathlib import Path

    import orchestrator

    if Path(DEFAULT_SUITE).is_dir():
        return DEFAULT_SUITE
    beside = Path(orchestrator.__file__).resolve().parents[1] / DEFAULT_SUITE
    if beside.is_dir():
        return str(beside)
    raise _Usage(
        f"no suite given and no {DEFAULT_SUITE} here or beside the installed package: name a suite folder "
        "(reasonix bench SUITE), or run from a Reasonix checkout, whose bench/tasks is the starter suite"
    )


def _check(args: argparse.Namespace, suite: str, out: Console) -> int:
    from pathlib import Path

    import trio
    from rich.table import Table

    from orchestrator.bench.check import check_suite
    from orchestrator.bench.sandboxed import bench_sandbox
    from orchestrator.bench.task import load_suite
    from orchestrator.exits import ExitCode
    from orchestrator.text.wording import counted

    tasks = load_suite(Path(suite), tuple(args.task))
    sandbox = bench_sandbox()
    cache = Path(args.cache) if args.cache else _default_cache()

    def line(c: TaskCheck) -> None:
        mark = "[green]ok[/]" if c.ok else "[red]BAD[/]"
        out.print(f"{mark} {c.task} ({c.task_class}, {c.seconds:.1f} s){'' if c.ok else ': ' + c.problem}")

    results = trio.run(lambda: check_suite(tasks, cache=cache, sandbox=sandbox, on_result=line))
    table = Table(title=f"reasonix bench check {suite}")
    for column in ("task", "class", "seed fails", "fix passes", "s", "problem"):
        table.add_column(column)
    for c in results:
        table.add_row(
            c.task,
            c.task_class,
            _mark(c.seed_fails),
            "—" if c.task_class == "integrity" else _mark(c.fix_passes),
            f"{c.seconds:.1f}",
            c.problem if len(c.problem) <= 60 else c.problem[:59] + "…",
        )
    out.print(table)
    bad = [c.task for c in results if not c.ok]
    if bad:
        verb = "is" if len(bad) == 1 else "are"
        out.print(f"[red]{len(bad)} of {counted(len(results), 'task')} {verb} bad: {', '.join(bad)}[/]")
        return ExitCode.FAILED
    out.print(f"[green]{'the task is' if len(results) == 1 else f'all {len(results)} tasks are'} good[/]")
    return ExitCode.OK


def _default_cache() -> Path:
    from orchestrator.bench.workspace import default_cache

    return default_cache()


def _mark(value: bool | None) -> str:
    return "—" if value is None else ("yes" if value else "no")


def _bench(args: argparse.Namespace, suite: str, out: Console, err: Console) -> int:
    import os
    from pathlib import Path

    import trio

    from orchestrator.bench.oracle import FAULTS
    from orchestrator.bench.report import write_report
    from orchestrator.bench.run import BenchOptions, live_client
    from orchestrator.bench.sandboxed import bench_sandbox
    from orchestrator.bench.suite import run_suite
    from orchestrator.bench.task import load_suite
    from orchestrator.build import MissingApiKeyError
    from orchestrator.exits import ExitCode

    faults: list[str] = []
    if args.faults:
        if not args.oracle:
            raise _Usage("--faults needs --oracle: faults are injected by the emulator")
        faults = list(FAULTS) if args.faults == "all" else [k.strip() for k in args.faults.split(",") if k.strip()]
        unknown = [k for k in faults if k not in FAULTS]
        if unknown:
            raise _Usage(f"unknown fault kind {', '.join(unknown)}; known: {', '.join(FAULTS)}")
    if args.jobs < 1:
        raise _Usage("--jobs is at least 1")
    _need_extra()
    tasks = load_suite(Path(suite), tuple(args.task))
    bench_sandbox()  # no sandbox, no run: said before any work
    client = None
    if not args.oracle:
        try:
            client = live_client(os.environ)
        except MissingApiKeyError as exc:
            raise _Usage(
                f"{exc}. Live mode runs the goals against DeepSeek: run `reasonix setup` or set DEEPSEEK_API_KEY; "
                "or pass --oracle to run the suite offline against the emulator"
            ) from exc
    output = Path(args.output)
    output.parent.mkdir(parents=True, exist_ok=True)
    options = BenchOptions(
        mode="oracle" if args.oracle else "live",
        cache=Path(args.cache) if args.cache else _default_cache(),
        preset=args.preset,
        budget_usd=args.budget_usd,
        keep=args.keep,
    )
    with output.open("w", encoding="utf-8") as sink:

        def line(r: TaskResult) -> None:
            sink.write(r.line() + "\n")
            sink.flush()
            mark = "[green]solved[/]" if r.solved else "[red]not solved[/]"
            fault = f" (fault {r.fault})" if r.fault else ""
            where = f" (kept in {r.workspace})" if r.workspace else ""
            extra = f": {r.error}" if r.error else ""
            out.print(
                f"{mark} {r.task}{fault}: {r.status}, ${r.cost_usd:.5f}, {r.requests} requests, "
                f"{r.cache_hit_ratio:.1%} hits, {r.wall_s:.1f} s{where}{extra}"
            )

        async def go() -> list[TaskResult]:
            if client is None:
                return await run_suite(tasks, options, faults=faults, jobs=args.jobs, on_result=line)
            async with client:
                return await run_suite(tasks, options, faults=faults, jobs=args.jobs, client=client, on_result=line)

        results = trio.run(go)
    _summary(results, out)
    report = write_report(results, output)
    out.print(f"results: {output}  report: {report}")
    if options.mode == "oracle":
        out.print("oracle figures measure the harness (the reference patch played back), not a model")
    return ExitCode.OK if all(r.solved for r in results if r.fault is None) else ExitCode.FAILED


def _summary(results: list[TaskResult], out: Console) -> None:
    from rich.table import Table

    from orchestrator.bench.results import fault_costs, summarize

    table = Table(title="reasonix bench")
    for column in ("class", "tasks", "solved", "pass", "$/task", "$/solved", "hits", "s/task"):
        table.add_column(column, justify="left" if column == "class" else "right")
    for f in summarize(results):
        per_solved = "—" if f.cost_per_solved is None else f"${f.cost_per_solved:.5f}"
        table.add_row(
            f.name,
            str(f.tasks),
            str(f.solved),
            f"{f.pass_rate:.0%}",
            f"${f.cost_per_task:.5f}",
            per_solved,
            f"{f.mean_hit_ratio:.1%}",
            f"{f.seconds_per_task:.1f}",
        )
    out.print(table)
    faults = fault_costs(results)
    if faults:
        ft = Table(title="what each fault cost (against the clean run)")
        for column in ("fault", "runs", "solved", "injected", "+req", "+tries", "+$", "+s"):
            ft.add_column(column, justify="left" if column == "fault" else "right")
        for g in faults:
            ft.add_row(
                g.fault,
                str(g.runs),
                str(g.solved),
                str(g.injected),
                f"{g.extra_requests:+d}",
                f"{g.extra_attempts:+d}",
                f"{'-' if g.extra_cost_usd < 0 else '+'}${abs(g.extra_cost_usd):.5f}",
                f"{g.extra_seconds:+.2f}",
            )
        out.print(ft)


def _compare(a: str, b: str, out: Console) -> int:
    from pathlib import Path

    from rich.table import Table

    from orchestrator.bench.compare import compare
    from orchestrator.bench.results import read_results
    from orchestrator.exits import ExitCode

    result = compare(read_results(Path(a)), read_results(Path(b)))
    table = Table(title=f"A = {a}   B = {b}")
    for column in ("task", "class", "A", "B", "change", "cost A", "cost B"):
        table.add_column(column)
    for d in result.tasks:
        table.add_row(
            d.task, d.task_class, _mark(d.solved_a), _mark(d.solved_b), d.change, f"${d.cost_a:.5f}", f"${d.cost_b:.5f}"
        )
    out.print(table)
    n = len(result.tasks)
    out.print(f"solved: A {result.solved_a}/{n}, B {result.solved_b}/{n}; only A: {result.b}, only B: {result.c}")
    out.print(f"exact McNemar p = {result.p_value:.4g}")
    out.print(f"cost: A ${result.cost_a:.5f}, B ${result.cost_b:.5f}")
    for name, missing in (("A", result.only_a), ("B", result.only_b)):
        if missing:
            out.print(f"only in {name} (not compared): {', '.join(missing)}")
    return ExitCode.OK
