"""Mutation scores of the modules that guard cost and safety: how much of their behaviour the tests really pin.

    python3 -m venv .venv-mut && .venv-mut/bin/pip install -e '.[test,mutation]'   # once: mutmut beside the suite
    .venv-mut/bin/python bench/mutation_score.py [GROUP ...] [--max-children 1] [--report-only] [--diffs]
    .venv-mut/bin/python bench/mutation_score.py repair-calls --only sessions/repair/flatten.py   # one module

Each group (``--list`` names them) is run on its own: its files are copied, with the tests named for it, into
``.mutation/GROUP/``, and mutmut 3 (``[tool.mutmut]`` in pyproject.toml, narrowed here to the group's files and tests)
changes one operator, constant or branch at a time and runs the tests that call the changed function (a group may
leave out slow tests whose behaviour faster ones pin: pytest's ``--deselect``). A module's score
is its caught mutants (killed, or timed out) over all its mutants; lines marked ``# pragma: no mutate`` (mutants no
test could tell from the code, each with its reason) make no mutants, so they are excluded. A mutant no test calls
counts as survived. The script prints each module's figures and its survivors (``--diffs``: each survivor's diff), and
exits 1 when a module is under ``--threshold`` (85 %). ``--report-only`` reprints the last run's figures.

``--only FILE`` (repeatable) mutates only those of the group's files, with the group's tests, in a folder of its own
(``.mutation/GROUP--STEM/``): a group too big for one sitting is measured a module at a time, and ``--again`` or
``--report-only`` with the same ``--only`` picks that run up.

A group takes minutes (the machine's CPUs are shared: ``--max-children`` bounds the test processes mutmut forks).

``--check`` (CI, ``bench/smoke.py``; no mutmut needed) runs no mutant: it checks that every group's modules, tests
and deselected tests exist and that its narrowed ``[tool.mutmut]`` reads back as the group, so a module moved or a
test renamed fails CI rather than the next mutation run (the smallest group, ``ledger``, takes over ten minutes).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tomllib
from collections import Counter
from dataclasses import KW_ONLY, dataclass, replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WORK = ROOT / ".mutation"
PACKAGES = ("sessions", "plans", "scenarios", "orchestrator")
MEMORY = 3 << 30
IGNORE = shutil.ignore_patterns("__pycache__", "*.pyc")
CAUGHT = {"killed", "timeout", "caught by type check", "killed the run"}
KILLED_THE_RUN = 38
STATUS: dict[int | None, str] = {
    1: "killed",
    3: "killed",  # pytest's internal error, raised by the mutant
    0: "survived",
    5: "no tests",
    33: "no tests",
    34: "skipped",
    35: "suspicious",
    36: "timeout",
    -24: "timeout",  # SIGXCPU: the CPU limit mutmut sets from the tests' clean time
    24: "timeout",
    152: "timeout",
    37: "caught by type check",
    255: "error",  # the test run itself raised (not the tests failing)
    -1: "error",
    -11: "segfault",
    -9: "killed by SIGKILL",
    KILLED_THE_RUN: "killed the run",  # own_pids: its test run SIGKILLed mutmut's fork server (see _crashed)
    None: "not checked",
}


@dataclass(frozen=True)
class Group:
    files: tuple[str, ...]
    """The modules mutated (paths from the repository's root)."""
    tests: tuple[str, ...]
    """The tests run against them (files or folders under tests/)."""
    _: KW_ONLY  # the options by name: a tuple given where a flag is meant once switched the sandbox group to fork
    fork: bool = False
    """The tests start no processes of their own, so each mutant's test run may be forked straight from mutmut's own
    process (``process_isolation = "fork"``): it has the tests imported already and runs the fastest first, several
    times quicker per mutant than a fresh process from the fork server (which the other groups need: their tests'
    children must not be taken for mutants)."""
    deselect: tuple[str, ...] = ()
    """Test ids among ``tests`` left out (pytest's ``--deselect``): slow ones whose behaviour faster tests pin."""
    own_pids: bool = False
    """mutmut runs in a PID namespace of its own (``unshare --pid --mount-proc``, mutmut as its init): a mutant of the
    reaper that sends SIGKILL to every process it finds in /proc then finds only the run's own, never the machine's
    (as root, everyone's), and cannot kill mutmut itself (an init ignores signals it has no handler for)."""


GROUPS: dict[str, Group] = {
    "rules": Group(("sessions/permissions/rules.py",), ("tests/sessions/permissions",)),
    "shell": Group(
        ("sessions/permissions/shell.py", "sessions/permissions/unwrap.py"),
        ("tests/sessions/permissions",),
    ),
    "graph": Group(("plans/graph.py",), ("tests/plans/test_graph.py", "tests/plans/test_graph_pins.py"), fork=True),
    "repair": Group(
        ("sessions/repair/storm.py", "sessions/repair/truncation.py"),
        (
            "tests/sessions/repair/test_storm.py",
            "tests/sessions/repair/test_truncation.py",
            "tests/sessions/repair/test_repair_pins.py",
        ),
    ),
    "repair-calls": Group(
        ("sessions/repair/json_calls.py", "sessions/repair/scavenge.py", "sessions/repair/flatten.py"),
        (
            "tests/sessions/repair/test_flatten.py",
            "tests/sessions/repair/test_flatten_pins.py",
            "tests/sessions/repair/test_scavenge.py",
            "tests/sessions/repair/test_scavenge_pins.py",
            "tests/sessions/repair/test_text_calls.py",
            "tests/sessions/repair/test_text_call_properties.py",
            "tests/sessions/repair/test_calls_pins.py",
        ),
        fork=True,
    ),
    "repair-flow": Group(
        ("sessions/repair/prepare.py", "sessions/repair/stall.py", "sessions/repair/vet.py"),
        (
            "tests/sessions/repair/test_prepare.py",
            "tests/sessions/repair/test_text_calls.py",
            "tests/sessions/repair/test_text_call_properties.py",
            "tests/sessions/repair/test_truncation.py",
            "tests/sessions/repair/test_flow_pins.py",
        ),
        fork=True,
    ),
    "diagnostics": Group(
        ("sessions/accounting/diagnostics.py",),
        ("tests/sessions/test_diagnostics.py", "tests/sessions/test_diagnostics_pins.py"),
    ),
    "sandbox": Group(
        (
            "sessions/sandbox/bwrap.py",
            "sessions/sandbox/hide.py",
            "sessions/sandbox/bounds.py",
            "sessions/sandbox/env.py",
        ),
        ("tests/sessions/sandbox",),
        deselect=(
            # 12 s each: it waits out trio's idle worker threads (the pins assert --die-with-parent is passed).
            "tests/sessions/sandbox/test_hostile.py::test_a_command_longer_than_ten_seconds_is_not_killed",
            # 30 staggered SIGKILLs of a starting sandbox: a race, about 2 s; spawn.py is not mutated here.
            "tests/sessions/sandbox/test_startup_race.py::test_a_sigkill_while_the_sandbox_starts_leaves_nothing_running",
        ),
    ),
    "sandbox-procs": Group(
        (
            "sessions/sandbox/reaper.py",
            "sessions/sandbox/spawn.py",
            "sessions/sandbox/netns.py",
            "sessions/sandbox/policy.py",
            "sessions/sandbox/probe.py",
            "sessions/sandbox/choose.py",
            "sessions/sandbox/base.py",
            "sessions/sandbox/none.py",
            "sessions/sandbox/__init__.py",
        ),
        # test_bash.py: the reaper's sweep of what an unconfined command left (setsid, background, process group).
        ("tests/sessions/sandbox", "tests/sessions/tools/test_bash.py"),
        deselect=(
            # 12 s: it waits out trio's idle worker threads; test_spawn_pins.py pins that spawn forks on the trio
            # thread and arms the death signal, in milliseconds.
            "tests/sessions/sandbox/test_hostile.py::test_a_command_longer_than_ten_seconds_is_not_killed",
        ),
        own_pids=True,
    ),
    "budget": Group(
        ("orchestrator/policy/budget.py",),
        ("tests/orchestrator/test_budget.py", "tests/orchestrator/test_budget_pins.py"),
    ),
    "checkpoints": Group(
        ("orchestrator/checkpoints/undo.py",),
        (
            "tests/orchestrator/test_checkpoints.py",
            "tests/orchestrator/test_undo_pins.py",
        ),
    ),
    "gate": Group(("sessions/permissions/gate.py",), ("tests/sessions/permissions",)),
    "ledger": Group(("sessions/usage_ledger.py",), ("tests/sessions/test_usage_ledger_pins.py",)),
    "emulator-cache": Group(
        ("scenarios/emulator/cache.py", "scenarios/emulator/accounting.py"),
        ("tests/scenarios/test_emulator_cache.py", "tests/scenarios/test_emulator_cache_pins.py"),
    ),
}


def _config(group: Group) -> str:
    """The repository's pyproject.toml with ``[tool.mutmut]`` narrowed to the group."""
    text = (ROOT / "pyproject.toml").read_text()
    base = tomllib.loads(text)["tool"]["mutmut"]
    start = text.index("[tool.mutmut]")
    end = text.index("\n[", start + 1)
    lines = ["[tool.mutmut]"]
    settings = {
        **base,
        "only_mutate": list(group.files),
        "pytest_add_cli_args_test_selection": list(group.tests),
        "pytest_add_cli_args": [*base.get("pytest_add_cli_args", []), *(f"--deselect={t}" for t in group.deselect)],
    }
    if group.fork:
        settings["process_isolation"] = "fork"
    for key, value in settings.items():
        lines.append(f"{key} = {_toml(value)}")
    return text[:start] + "\n".join(lines) + "\n" + text[end:]


def _toml(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return str(value)


def _prepare(name: str, group: Group) -> Path:
    """A fresh copy of the code and the group's tests, so mutmut's mutants/ of one group never sees another's."""
    work = WORK / name
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    for package in PACKAGES:
        shutil.copytree(ROOT / package, work / package, ignore=IGNORE)
    shutil.copytree(ROOT / "tests", work / "tests", ignore=IGNORE)
    (work / "pyproject.toml").write_text(_config(group))
    return work


def _mutmut(
    work: Path, *args: str, log: Path | None = None, own_pids: bool = False
) -> subprocess.CompletedProcess[str]:
    """mutmut in ``work`` (without PYTHONPATH: the tests must import the mutated copy); ``log`` gets its output;
    ``own_pids``: in a PID namespace of its own (:attr:`Group.own_pids`), as the same user."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"} | {"HYPOTHESIS_PROFILE": "mutation"}
    command = [str(Path(sys.executable).with_name("mutmut")), *args]
    if own_pids:
        user = [] if os.geteuid() == 0 else ["--user", "--map-current-user"]
        command = ["unshare", *user, "--pid", "--fork", "--mount-proc", "--kill-child", *command]
    if log is None:
        return subprocess.run(command, cwd=work, env=env, text=True, capture_output=True, check=False)
    with log.open("w") as out:
        return subprocess.run(
            command, cwd=work, env=env, text=True, stdout=out, stderr=subprocess.STDOUT, check=False, preexec_fn=_bound
        )


def _bound() -> None:
    """A mutant that loops allocating would take the shared machine's memory: each process gets MEMORY bytes (a test
    that runs out fails, so the mutant counts as killed, as one that loops forever counts as timed out)."""
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))


def _results(work: Path, files: tuple[str, ...]) -> dict[str, str]:
    """Each mutant's status, from mutmut's own records (``mutants/PATH.meta``).

    Read here rather than through ``mutmut results``, which reports a test run that crashed (exit -1: a test id pytest
    could not find, say) as a timeout: here it is an error, never caught."""
    found: dict[str, str] = {}
    for path in files:
        meta = work / "mutants" / (path + ".meta")
        if not meta.exists():
            continue
        for mutant, code in json.loads(meta.read_text())["exit_code_by_key"].items():
            found[mutant] = STATUS.get(code, f"exit {code}")
    return found


def _crashed(work: Path, log: Path) -> bool:
    """After mutmut stopped because its fork server died: mark the mutants in flight ``killed the run`` and say
    whether there were any (then the run goes on where it stopped).

    In a group with :attr:`Group.own_pids` a mutant of the reaper that widens its search SIGKILLs every process it
    finds, the fork server that runs the tests among them: a behaviour no test can miss (it killed a process the
    command never started), but one that ends mutmut's run rather than failing a test."""
    text = log.read_text(errors="replace")
    if "ForkServerCrashError" not in text:
        return False
    lost = text[text.rindex("in-flight mutant(s):") :].split("\n\n", 1)[0].splitlines()[1:]
    names = {line.strip().removeprefix("- ") for line in lost if line.strip().startswith("- ")}
    marked = False
    for meta in (work / "mutants").rglob("*.py.meta"):
        data = json.loads(meta.read_text())
        hit = names & set(data["exit_code_by_key"])
        for name in hit:
            data["exit_code_by_key"][name] = KILLED_THE_RUN
        if hit:
            meta.write_text(json.dumps(data))
            marked = True
    return marked


def _module_of(mutant: str, files: tuple[str, ...]) -> str:
    for path in files:
        dotted = path.removesuffix(".py").replace("/", ".")
        if mutant.startswith(dotted + "."):
            return path
    return "?"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("groups", nargs="*", help="groups to run (default: all)")
    parser.add_argument("--max-children", type=int, default=2)
    parser.add_argument("--report-only", action="store_true", help="reprint the last run's figures")
    parser.add_argument(
        "--again",
        action="store_true",
        help="after tests were added (the code unchanged): rerun only the last run's uncaught mutants",
    )
    parser.add_argument("--diffs", action="store_true", help="print each survivor's diff")
    parser.add_argument("--threshold", type=float, default=85.0)
    parser.add_argument(
        "--only", action="append", default=[], metavar="FILE", help="mutate only this file of the group (repeatable)"
    )
    parser.add_argument("--list", action="store_true")
    parser.add_argument("--check", action="store_true", help="check the groups' files and configuration; run nothing")
    options = parser.parse_args()
    if options.check:
        return _check(options.groups or list(GROUPS))
    if options.list:
        for name, group in GROUPS.items():
            without = f" (without {', '.join(group.deselect)})" if group.deselect else ""
            print(f"{name}: {', '.join(group.files)}  <- {', '.join(group.tests)}{without}")
        return 0
    chosen = options.groups or list(GROUPS)
    unknown = [g for g in chosen if g not in GROUPS]
    if unknown:
        parser.error(f"unknown group(s) {unknown}; --list names them")
    runs = [_narrowed(name, GROUPS[name], options.only) for name in chosen]
    missing = sorted(set(options.only) - {f for _, group in runs for f in group.files})
    if missing:
        parser.error(f"--only {missing}: in none of the groups {chosen}")
    rows: list[tuple[str, int, int, float]] = []
    for name, group in runs:
        if not group.files:
            continue
        work = WORK / name
        if not options.report_only:
            again: list[str] = []
            if options.again and (work / "mutants").is_dir():
                shutil.copytree(ROOT / "tests", work / "tests", dirs_exist_ok=True, ignore=IGNORE)
                again = sorted(m for m, status in _results(work, group.files).items() if status not in CAUGHT)
                print(f"== {name}: retesting {len(again)} uncaught mutants", flush=True)
            else:
                work = _prepare(name, group)
                print(f"== {name}: mutating {', '.join(group.files)}", flush=True)
            log = work / "mutmut-run.log"
            run = ("run", "--max-children", str(options.max_children), *again)
            done = _mutmut(work, *run, log=log, own_pids=group.own_pids)
            for _ in range(100):  # each round marks one mutant: --max-children 1 has one in flight
                if done.returncode == 0 or not group.own_pids or not _crashed(work, log):
                    break
                if again:
                    results = _results(work, group.files)
                    again = [m for m in again if results.get(m) not in CAUGHT]
                    run = ("run", "--max-children", str(options.max_children), *again)
                done = _mutmut(work, *run, log=log, own_pids=True)
            if done.returncode != 0:
                print(log.read_text()[-3000:])
                print(f"mutmut failed for {name} (exit {done.returncode}); its output is in {log}")
                continue
        results = _results(work, group.files)
        for path in group.files:
            mine = {m: s for m, s in results.items() if _module_of(m, group.files) == path}
            counts = Counter(mine.values())
            caught = sum(counts[s] for s in CAUGHT)
            score = 100.0 * caught / len(mine) if mine else 100.0
            rows.append((path, len(mine), caught, score))
            other = ", ".join(f"{s} {n}" for s, n in sorted(counts.items()) if s not in CAUGHT)
            print(f"-- {path}: {caught}/{len(mine)} caught = {score:.1f} %" + (f" ({other})" if other else ""))
            for mutant, status in sorted(mine.items(), key=lambda kv: _order(kv[0])):
                if status in CAUGHT:
                    continue
                print(f"   {status}: {mutant}")
                if options.diffs:
                    print("     " + _mutmut(work, "show", mutant).stdout.replace("\n", "\n     "))
    print()
    print("| module | mutants | caught | score |")
    print("| --- | ---: | ---: | ---: |")
    for path, total, caught, score in rows:
        print(f"| `{path}` | {total} | {caught} | {score:.1f} % |")
    return 0 if all(score >= options.threshold for *_, score in rows) else 1


def _check(names: list[str]) -> int:
    """Each group's files, tests and deselected tests exist, and its narrowed configuration reads back as it."""
    bad = 0
    for name in names:
        group = GROUPS.get(name)
        if group is None:
            print(f"{name}: no such group (--list names them)")
            bad += 1
            continue
        missing = [p for p in (*group.files, *group.tests) if not (ROOT / p).exists()]
        for test in group.deselect:
            path, _, function = test.partition("::")
            if not (ROOT / path).is_file() or f"def {function}(" not in (ROOT / path).read_text():
                missing.append(test)
        settings = tomllib.loads(_config(group))["tool"]["mutmut"]
        wrong = settings["only_mutate"] != list(group.files) or settings["pytest_add_cli_args_test_selection"] != list(
            group.tests
        )
        if missing or wrong:
            bad += 1
            why = [f"missing {', '.join(missing)}"] if missing else []
            print(f"{name}: " + "; ".join([*why, *(["its [tool.mutmut] does not read back"] if wrong else [])]))
        else:
            sizes = f"{len(group.files)} modules, {len(group.tests)} test paths, {len(group.deselect)} deselected"
            print(f"{name}: {sizes}: ok")
    return 1 if bad else 0


def _narrowed(name: str, group: Group, only: list[str]) -> tuple[str, Group]:
    """The group as run: with ``only``, just those of its files (none: nothing to run), named for them."""
    if not only:
        return name, group
    files = tuple(f for f in group.files if f in only)
    stems = "-".join(Path(f).stem for f in files)
    return f"{name}--{stems}", replace(group, files=files)


def _order(mutant: str) -> tuple[str, int]:
    base, _, number = mutant.rpartition("__mutmut_")
    return base, int(number) if number.isdigit() else 0


if __name__ == "__main__":
    sys.exit(main())
