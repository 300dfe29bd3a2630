"""The batch's live progress and its summary table. On a terminal: a live panel (done, running, failed, cost so far,
a line per running goal). Otherwise (a pipe, a file, CI): plain lines, one per thing that happened, each naming its
goal, so ``reasonix batch … | tee log`` reads as it goes."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import TextIO

from rich.console import Console, Group
from rich.live import Live
from rich.table import Table
from rich.text import Text

from orchestrator.batch.progress_event import Progress
from orchestrator.batch.result import GoalResult
from orchestrator.text.wording import shorten


class BatchDisplay:
    def __init__(self, total: int, *, out: TextIO | None = None, live: bool | None = None) -> None:
        self.out = out or sys.stdout
        self.total = total
        self.live_mode = self.out.isatty() if live is None else live
        self.console = Console(file=self.out, highlight=False, soft_wrap=not self.live_mode)
        self.running: dict[str, Progress] = {}
        self.lines: dict[str, str] = {}
        self.spent: dict[str, float] = {}
        self.done = 0
        self.failed = 0
        self._live: Live | None = None

    # ------------------------------------------------------------------------------------------------ live

    def __enter__(self) -> BatchDisplay:
        if self.live_mode:
            self._live = Live(self._panel(), console=self.console, refresh_per_second=4, transient=True)
            self._live.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._live is not None:
            self._live.__exit__(None, None, None)
            self._live = None

    def header(self) -> str:
        cost = sum(self.spent.values())
        return (
            f"{self.done}/{self.total} done · {len(self.running)} running · {self.failed} failed · ${cost:.4f} so far"
        )

    def _panel(self) -> Group:
        rows = [Text(self.header(), style="bold")]
        for goal_id, progress in self.running.items():
            rows.append(Text(f"  {goal_id} [{progress.node}] ${progress.cost_usd:.4f} · {self.lines.get(goal_id, '')}"))
        return Group(*rows)

    def note(self, text: str) -> None:
        self.console.print(text, markup=False)

    def progress(self, progress: Progress) -> None:
        self.spent[progress.goal_id] = max(progress.cost_usd, self.spent.get(progress.goal_id, 0.0))
        if progress.kind != "ended":
            self.running[progress.goal_id] = progress
        if progress.text:
            self.lines[progress.goal_id] = shorten(progress.text, 100)
        if self._live is not None:
            self._live.update(self._panel())
        elif progress.kind not in ("cost", "ended"):
            if progress.kind == "state":  # "» judging: every step is verified …", as the goal view says it
                self.note(f"{progress.goal_id} {progress.text}")
                return
            where = f" on node {progress.node}" if progress.kind == "started" and progress.node != "local" else ""
            self.note(f"{progress.goal_id} {progress.kind}{where}{': ' + progress.text if progress.text else ''}")

    def result(self, result: GoalResult) -> None:
        self.running.pop(result.id, None)
        self.spent[result.id] = result.cost_usd
        self.done += 1
        if result.status in ("failed", "error"):
            self.failed += 1
        line = (
            f"{result.id} {result.status} · ${result.cost_usd:.4f} · {result.requests} requests · {result.wall_s:.1f}s"
        )
        if result.attempts > 1:
            line += f" · attempt {result.attempts} of {result.max_attempts}"
        if result.reason and result.status != "complete":
            line += f" · {shorten(result.reason, 120)}"
        if self._live is not None:
            self._live.update(self._panel(), refresh=True)
            self._live.console.print(line, markup=False)
        else:
            self.note(line)
            self.note(self.header())


def summary_table(results: Sequence[GoalResult]) -> Table:
    table = Table(title="batch", show_lines=False)
    for name, justify in (
        ("goal", "left"),
        ("status", "left"),
        ("cost", "right"),
        ("requests", "right"),
        ("cache", "right"),
        ("seconds", "right"),
        ("node", "left"),
        ("diff", "right"),
    ):
        table.add_column(name, justify=justify)  # type: ignore[arg-type]
    for r in results:
        ratio = f"{r.cache_hit_ratio:.1%}" if r.cache_hit_ratio is not None else "-"
        lines = sum(
            1 for line in r.diff.splitlines() if line.startswith(("+", "-")) and not line.startswith(("+++", "---"))
        )
        table.add_row(
            r.id,
            r.status,
            f"${r.cost_usd:.4f}",
            str(r.requests),
            ratio,
            f"{r.wall_s:.1f}",
            r.node[:12],
            f"{lines} lines",
        )
    total = sum(r.cost_usd for r in results)
    table.add_row("total", "", f"${total:.4f}", str(sum(r.requests for r in results)), "", "", "", "")
    return table
