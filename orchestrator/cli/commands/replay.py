"""``reasonix replay [SCENARIO | --all]``: re-run a scripted or recorded scenario offline against the in-process
DeepSeek emulator, with the real orchestrator, real tools and real files on a temporary copy of its workspace.

SCENARIO is a path (a ``.json`` file or a scenario folder) or the name of a scenario in ``scenarios/library/``;
without one, the flagship demo scenario is replayed. While replaying one scenario the terminal shows what a user of
``reasonix goal`` would see (plan tree, review, steps, escalations, cost and cache footers); then a report: status,
steps, escalations, requests, hit ratio per session and overall, cost at current prices, and each failed expectation
with a readable diff. ``--json`` prints one summary object per scenario per line instead.

``--list`` names the library's scenarios. ``--compare SETTING=V1,V2,…`` replays one scenario once per value of a
setting (``preset=flash,auto,pro``, ``max_pro_turns=0,10``, ``failure_threshold=1,3``) and prints the outcomes side by
side (``--json``: one object per setting).

Exit status: 0 when every expectation of every scenario holds; 1 when any fails; 2 when a scenario cannot be found or
read. No API key and no network are needed.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console

    from orchestrator.replay.report import ReplayReport
    from scenarios import LoadedScenario

FLAGSHIP = "flagship"


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "scenario", nargs="?", help=f"a scenario file or folder, or a library scenario's name (default: {FLAGSHIP})"
    )
    parser.add_argument("--all", action="store_true", help="replay every scenario of scenarios/library/")
    parser.add_argument("--list", action="store_true", help="list the library's scenarios and what each exercises")
    parser.add_argument("--json", action="store_true", help="one JSON summary object per scenario per line")
    parser.add_argument("--keep", action="store_true", help="keep the temporary workspace and print where it is")
    parser.add_argument("-q", "--quiet", action="store_true", help="only the report, not the live session output")
    parser.add_argument("-v", "--verbose", action="store_true", help="with --all: show every session's output too")
    parser.add_argument(
        "--compare",
        metavar="SETTING=V1,V2,...",
        help="replay the scenario once per value of one setting (preset, max_pro_turns, failure_threshold, ...) and "
        "print the outcomes side by side",
    )


def resolve(arg: str | None) -> list[Path]:
    """The scenario paths to replay. Raises ScenarioError naming what exists when nothing matches."""
    from scenarios import LIBRARY, ScenarioError, library_paths

    if arg is None:
        found = [p for p in library_paths() if p.name in (FLAGSHIP, FLAGSHIP + ".json")]
        if found:
            return found[:1]
        everything = library_paths()
        if not everything:
            raise ScenarioError(f"the scenario library {LIBRARY} is empty; name a scenario file to replay")
        return everything[:1]
    path = Path(arg)
    if path.exists():
        return [path]
    for candidate in (LIBRARY / f"{arg}.json", LIBRARY / arg):
        if candidate.exists():
            return [candidate]
    names = ", ".join(p.name.removesuffix(".json") for p in library_paths()) or "(none)"
    raise ScenarioError(f"no scenario {arg!r}: not a file or folder, and not in the library ({names})")


def run(args: argparse.Namespace) -> int:
    import json
    import sys

    from rich.console import Console
    from rich.text import Text

    from orchestrator.exits import ExitCode
    from scenarios import ScenarioError, library_paths, load_scenario

    err = Console(stderr=True, highlight=False, soft_wrap=True)
    console = Console(highlight=False, soft_wrap=True)
    if args.all and args.scenario:
        err.print(Text("reasonix replay: give a scenario or --all, not both", style="red"))
        return ExitCode.USAGE
    if args.list:
        return _list(console, err)
    try:
        paths = library_paths() if args.all else resolve(args.scenario)
        if not paths:
            raise ScenarioError("the scenario library is empty: nothing to replay")
        loaded = [load_scenario(p) for p in paths]
    except ScenarioError as exc:
        err.print(Text(f"reasonix replay: {exc}", style="red"))
        return ExitCode.USAGE

    if args.compare:
        if len(loaded) != 1:
            err.print(Text("reasonix replay: --compare takes one scenario, not --all", style="red"))
            return 2
        return _compare(loaded[0], args.compare, console, err, as_json=args.json)
    show_live = not args.json and not args.quiet and (args.verbose or not args.all)
    failed = 0
    for item in loaded:
        report = _replay_one(item, console, keep=args.keep, live=show_live)
        if not report.ok:
            failed += 1
        if args.json:
            sys.stdout.write(json.dumps(report.summary(), ensure_ascii=False) + "\n")
            sys.stdout.flush()
        else:
            console.print(Text(report.text_report(), style="" if report.ok else "red"), soft_wrap=True)
    if not args.json and len(loaded) > 1:
        style = "bold green" if not failed else "bold red"
        console.print(Text(f"{len(loaded) - failed} of {len(loaded)} scenarios passed", style=style))
    return ExitCode.FAILED if failed else ExitCode.OK


def _compare(item: LoadedScenario, spec: str, console: Console, err: Console, *, as_json: bool) -> int:
    """One replay per value of the setting; a table side by side (or one JSON object per setting)."""
    import json

    import trio
    from rich.table import Table
    from rich.text import Text

    from orchestrator.replay.compare import SCRIPTED_NOTE, CompareError, compare, table_rows

    try:
        results = trio.run(compare, item, spec)
    except CompareError as exc:
        err.print(Text(f"reasonix replay: {exc}", style="red"))
        return 2
    if as_json:
        for result in results:
            console.file.write(json.dumps(result.summary(), ensure_ascii=False) + "\n")
        return 0
    sc = item.scenario
    table = Table(title=f"{sc.name} ({sc.origin}) by {results[0].setting}", box=None, header_style="bold")
    table.add_column("")
    for result in results:
        table.add_column(f"{result.setting}={result.value}", overflow="fold")
    for label, cells in table_rows(results):
        table.add_row(label, *cells)
    console.print(table)
    console.print(
        Text(
            "model time: the emulator's realistic latency model (time to first token grows with the miss "
            "tokens, then 80 tokens/s); tools and verification not counted.",
            style="dim",
        )
    )
    console.print(Text(SCRIPTED_NOTE, style="dim"))
    return 0


def _list(console: Console, err: Console) -> int:
    """One line per library scenario: its name (what ``reasonix replay NAME`` takes), origin and title."""
    from rich.table import Table
    from rich.text import Text

    from scenarios import ScenarioError, library_paths, load_scenario

    table = Table(box=None, show_header=True, header_style="bold", pad_edge=False)
    for column in ("scenario", "origin", "command", "what it exercises"):
        table.add_column(column, overflow="fold")
    try:
        for path in library_paths():
            sc = load_scenario(path).scenario
            table.add_row(path.name.removesuffix(".json"), sc.origin, sc.command, sc.title)
    except ScenarioError as exc:
        err.print(Text(f"reasonix replay: {exc}", style="red"))
        return 2
    console.print(table)
    console.print(Text("Replay one with `reasonix replay NAME`, or all with `reasonix replay --all`.", style="dim"))
    return 0


def _replay_one(item: LoadedScenario, console: Console, *, keep: bool, live: bool) -> ReplayReport:
    """Replay one scenario; with ``live``, show its sessions and goal as ``reasonix goal`` would."""
    from rich.text import Text

    from orchestrator.goal.runner import GoalRunner
    from orchestrator.replay.runner import replay

    if not live:
        return replay(item, keep=keep)
    from orchestrator.ui.goal_view import GoalTerminalUI

    sc = item.scenario
    runners: list[GoalRunner] = []
    label = "recorded from a real DeepSeek run" if sc.origin == "recorded" else "scripted replies, not a model"
    pace = "; one step at a time: [goal] parallel = 1" if sc.command == "goal" and sc.settings.parallel == 1 else ""
    console.print(Text(f"▶ {sc.name}: {sc.title} ({label}; offline, against the emulator{pace})", style="bold"))
    ui = GoalTerminalUI(console, plan_state=lambda: runners[-1].plan_with_state() if runners else None, live=False)
    try:
        return replay(item, keep=keep, on_event=ui, on_runner=runners.append)
    finally:
        ui.stop()
