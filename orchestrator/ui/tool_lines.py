"""One tool call as a person reads it: what it touched first, then how it went.

* ``read_file textstats/core.py:10-40``, ``write_file calc/ops.py (12 lines)``, ``list_dir calc``;
* ``edit_file calc/ops.py (2 edits)`` followed by the edit as a coloured unified diff;
* ``glob src/**/*.py in src``, ``grep "def add" in src (*.py, ignore case)``;
* ``bash <the whole command>``: never cut (a long line wraps; a multi-line command keeps its lines);
* any other tool: its arguments in the order the model gave them, each value short.

Everything shown from the arguments or the result is neutralised (:mod:`orchestrator.text.safe_text`).
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Callable, Mapping
from typing import Any

from rich.text import Text

from orchestrator.text.safe_text import neutralise
from orchestrator.text.wording import counted, shorten

PREVIEW_LIMIT = 60
"""The raw argument preview, when the arguments themselves are not known."""
VALUE_LIMIT = 40
GENERIC_LIMIT = 120
ERROR_LIMIT = 1000
"""An error's reason is shown whole up to this (the terminal wraps it): cutting the reason hides what to do."""
OK_TAIL_LINES = 4
ERROR_TAIL_LINES = 15
DIFF_MAX_LINES = 40
INDENT = "    "


def short(text: str, limit: int) -> str:
    """``text`` on one line, control characters made visible, cut to ``limit`` characters with an ellipsis."""
    return shorten(neutralise(text), limit)


def _str(args: Mapping[str, Any], key: str) -> str | None:
    value = args.get(key)
    return value if isinstance(value, str) else None


def _int(args: Mapping[str, Any], key: str) -> int | None:
    value = args.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _lines(content: str) -> int:
    return content.count("\n") + (1 if content and not content.endswith("\n") else 0)


def _path(text: Text, args: Mapping[str, Any], default: str | None = None) -> None:
    path = _str(args, "path") or default
    if path is not None:
        text.append(" ")
        text.append(short(path, 200), style="cyan")


def _read_file(text: Text, args: Mapping[str, Any]) -> None:
    _path(text, args)
    start, end = _int(args, "start_line"), _int(args, "end_line")
    if start is not None or end is not None:
        text.append(f":{start or 1}-{end if end is not None else ''}", style="cyan")


def _write_file(text: Text, args: Mapping[str, Any]) -> None:
    _path(text, args)
    content = _str(args, "content")
    if content is not None:
        text.append(f" ({counted(_lines(content), 'line')})", style="dim")


def _edits(args: Mapping[str, Any]) -> list[tuple[str, str]]:
    edits = args.get("edits")
    if not isinstance(edits, list):
        return []
    pairs = []
    for edit in edits:
        if isinstance(edit, Mapping):
            old, new = _str(edit, "old"), _str(edit, "new")
            if old is not None and new is not None:
                pairs.append((old, new))
    return pairs


def _edit_file(text: Text, args: Mapping[str, Any]) -> None:
    _path(text, args)
    edits = args.get("edits")
    if isinstance(edits, list) and len(edits) != 1:
        text.append(f" ({counted(len(edits), 'edit')})", style="dim")


def _list_dir(text: Text, args: Mapping[str, Any]) -> None:
    _path(text, args, ".")


def _glob(text: Text, args: Mapping[str, Any]) -> None:
    pattern = _str(args, "pattern")
    if pattern is not None:
        text.append(" " + neutralise(pattern), style="cyan")
    path = _str(args, "path")
    if path and path != ".":
        text.append(" in ", style="dim")
        text.append(short(path, 200), style="cyan")


def _grep(text: Text, args: Mapping[str, Any]) -> None:
    pattern = _str(args, "pattern")
    if pattern is not None:
        text.append(" " + neutralise(json.dumps(pattern, ensure_ascii=False)), style="cyan")
    path = _str(args, "path")
    if path and path != ".":
        text.append(" in ", style="dim")
        text.append(short(path, 200), style="cyan")
    options = []
    only = _str(args, "glob")
    if only:
        options.append(neutralise(only))
    if args.get("ignore_case") is True:
        options.append("ignore case")
    if options:
        text.append(f" ({', '.join(options)})", style="dim")


def _bash(text: Text, args: Mapping[str, Any]) -> None:
    command = _str(args, "command")
    if command is not None:
        shown = neutralise(command.strip("\n")).replace("\n", "\n" + INDENT)
        text.append(" " + shown, style="cyan")
    timeout = args.get("timeout_s")
    if isinstance(timeout, int | float) and not isinstance(timeout, bool):
        text.append(f" (timeout {timeout:g}s)", style="dim")


def _value(value: object) -> str:
    if isinstance(value, str):
        return '"' + short(value, VALUE_LIMIT) + '"'
    if isinstance(value, list):
        return f"[{counted(len(value), 'item')}]"
    if isinstance(value, dict):
        return "{" + counted(len(value), "key") + "}"
    return short(json.dumps(value, ensure_ascii=False), VALUE_LIMIT)


def _generic(text: Text, args: Mapping[str, Any]) -> None:
    if args:
        parts = " ".join(f"{neutralise(str(key))}={_value(value)}" for key, value in args.items())
        text.append(" " + short(parts, GENERIC_LIMIT))


_SHOWN: dict[str, Callable[[Text, Mapping[str, Any]], None]] = {
    "read_file": _read_file,
    "write_file": _write_file,
    "edit_file": _edit_file,
    "list_dir": _list_dir,
    "glob": _glob,
    "grep": _grep,
    "bash": _bash,
}


def _parsed(preview: str) -> dict[str, Any] | None:
    try:
        value = json.loads(preview)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def edit_diff(args: Mapping[str, Any], max_lines: int = DIFF_MAX_LINES) -> Text:
    """The edits of an ``edit_file`` call as a unified diff, ``-`` lines red and ``+`` lines green, indented; hunks
    and edits apart by a dim ``⋯``. At most ``max_lines`` lines, then how many more there were."""
    rows: list[tuple[str, str]] = []
    for old, new in _edits(args):
        if rows:
            rows.append(("⋯", "dim"))
        hunks = difflib.unified_diff(old.splitlines(), new.splitlines(), lineterm="", n=2)
        for row in list(hunks)[2:]:
            if row.startswith("@@"):
                if rows and rows[-1][0] != "⋯":
                    rows.append(("⋯", "dim"))
                continue
            style = "red" if row.startswith("-") else "green" if row.startswith("+") else "dim"
            rows.append((row, style))
    text = Text()
    for i, (row, style) in enumerate(rows[:max_lines]):
        if i:
            text.append("\n")
        text.append(INDENT + neutralise(row), style=style)
    if len(rows) > max_lines:
        text.append(f"\n{INDENT}… {counted(len(rows) - max_lines, 'more diff line')}", style="dim")
    return text


_STATUS = re.compile(r"^\[(exit code -?\d+|killed by signal \d+|timed out after [^;\]]+)[^\]]*\]$")


def split_status(output: str) -> tuple[str, str | None]:
    """A ``bash`` result's output and its last line ``[exit code 1]`` apart (None when there is none)."""
    body, _, last = output.rstrip("\n").rpartition("\n")
    if _STATUS.match(last):
        return body, last[1:-1]
    return output.rstrip("\n"), None


def output_tail(output: str, lines: int) -> Text:
    """The last ``lines`` lines of a command's output, dim and indented under its tool line, saying how many lines
    came before and that ``/output`` shows them all."""
    rows = output.splitlines()
    text = Text()
    if len(rows) > lines:
        text.append(f"{INDENT}… {counted(len(rows) - lines, 'earlier line')} (/output shows all)\n", style="dim")
    for i, row in enumerate(rows[-lines:]):
        if i:
            text.append("\n")
        text.append(f"{INDENT}│ " + neutralise(row), style="dim")
    return text


def tool_line(
    name: str,
    args: Mapping[str, Any] | None,
    *,
    is_error: bool,
    result_preview: str,
    args_preview: str | None = None,
    output: str | None = None,
    diff: bool = True,
) -> Text:
    """``▸ name <what it touched> · ok`` (or ``· error: <why>``), then an edit's diff on the lines below (unless
    ``diff`` is False: the approval prompt showed it already), or the tail of a command's ``output``
    (:data:`OK_TAIL_LINES` lines, :data:`ERROR_TAIL_LINES` for a failure).

    ``args`` are the call's arguments in full; without them ``args_preview`` (the raw JSON, perhaps cut) is read if
    it parses and shown cut otherwise. An error is shown whole (the terminal wraps it): the user needs the reason."""
    text = Text("▸ ")
    text.append(neutralise(name), style="bold")
    if args is None and args_preview is not None:
        args = _parsed(args_preview)
        if args is None:
            text.append(" " + short(args_preview, PREVIEW_LIMIT))
    if args is not None:
        _SHOWN.get(name, _generic)(text, args)
    if name == "bash" and output is not None:
        body, status = split_status(output)
        if is_error:
            text.append(" · " + (status or "error"), style="red")
        else:
            text.append(" · ok", style="green")
        if body.strip():
            text.append("\n")
            text.append_text(output_tail(body, ERROR_TAIL_LINES if is_error else OK_TAIL_LINES))
        return text
    if is_error:
        reason = output if output else result_preview
        text.append(" · error: ", style="red")
        text.append(short(reason, ERROR_LIMIT), style="red")
        return text
    text.append(" · ok", style="green")
    if name == "edit_file" and args is not None and diff:
        shown = edit_diff(args)
        if shown.plain:
            text.append("\n")
            text.append_text(shown)
    return text
