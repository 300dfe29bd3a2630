"""``reasonix replay [SCENARIO | --all]``: re-run a scripted or recorded scenario offline against the in-process
DeepSeek emulator, with the real orchestrator, real tools and real files on a temporary copy of its workspace.

SCENARIO is a path (a ``.json`` file or a scenario folder) or the name of a scenario in ``scenarios/library/``;
without one, the flagship demo scenario is replayed. While replaying one scenario the terminal shows what a user of
``reasonix goal`` would see (plan tree, review, steps, escalations, cost and cache footers); then a report: status,
steps, escalations, requests, hit ratio per session and overall, cost at current prices, and each failed expectation
with a readable diff. ``--json`` prints one summary object per scenario per line instead.

``--list`` names the library's scenarios.

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
    from scenarios.format import LoadedScenario

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


def resolve(arg: str | None) -> list[Path]:
    """The scenario paths to replay. Raises ScenarioError naming what exists when nothing matches."""
    from scenarios.format import LIBRARY, ScenarioError, library_paths

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

    from orchestrator.cli.exits import ExitCode
    from scenarios.format import ScenarioError, library_paths, load_scenario

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


def _list(console: Console, err: Console) -> int:
    """One line per library scenario: its name (what ``reasonix replay NAME`` takes), origin and title."""
    from rich.table import Table
    from rich.text import Text

    from scenarios.format import ScenarioError, library_paths, load_scenario

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
    console.print(Text(f"▶ {sc.name}: {sc.title} ({label}; offline, against the emulator)", style="bold"))
    ui = GoalTerminalUI(console, plan_state=lambda: runners[-1].plan_with_state() if runners else None, live=False)
    try:
        return replay(item, keep=keep, on_event=ui, on_runner=runners.append)
    finally:
        ui.stop()
