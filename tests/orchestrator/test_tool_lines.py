"""Tool lines as a person reads them (issue 11 item 17): the path first, a bash command whole, an edit as a coloured
diff, a failed verification with the tail of its output; and the ``--json`` events unchanged."""

from __future__ import annotations

import io
import json
from typing import Any

from rich.console import Console

from orchestrator.events import StepVerified, VerifyOutcome
from orchestrator.ui.goal_view import GoalTerminalUI
from orchestrator.ui.stream import JsonLinesRenderer, TerminalRenderer
from orchestrator.ui.tool_lines import edit_diff, tool_line
from sessions.events import SessionEvent, ToolFinished, ToolStarted

S = "executor"


def _render(*calls: tuple[str, dict[str, Any]], error: str | None = None, width: int = 100) -> str:
    buffer = io.StringIO()
    renderer = TerminalRenderer(Console(file=buffer, width=width, color_system=None, force_terminal=False))
    for i, (name, args) in enumerate(calls):
        preview = json.dumps(args, sort_keys=True)[:159]  # what the session sends alongside: sorted and cut
        renderer(ToolStarted(session=S, call_id=f"c{i}", name=name, args_preview=preview, args=args))
        renderer(
            ToolFinished(
                session=S, call_id=f"c{i}", name=name, is_error=error is not None, preview=error or "", chars=0
            )
        )
    return buffer.getvalue()


def test_file_tools_show_the_path_first() -> None:
    content = "".join(f"line {i} of a module with a long body that sorts before the path\n" for i in range(12))
    assert _render(
        ("write_file", {"content": content, "path": "calc/ops.py"}),
        ("read_file", {"path": "textstats/core.py", "start_line": 10, "end_line": 40}),
        ("read_file", {"path": "README.md", "start_line": 300}),
        ("read_file", {"path": "setup.py"}),
        ("list_dir", {}),
        ("list_dir", {"path": "calc"}),
        ("glob", {"pattern": "src/**/*.py", "path": "src"}),
        ("grep", {"pattern": "def add", "glob": "*.py", "ignore_case": True}),
    ) == (
        "▸ write_file calc/ops.py (12 lines) · ok\n"
        "▸ read_file textstats/core.py:10-40 · ok\n"
        "▸ read_file README.md:300- · ok\n"
        "▸ read_file setup.py · ok\n"
        "▸ list_dir . · ok\n"
        "▸ list_dir calc · ok\n"
        "▸ glob src/**/*.py in src · ok\n"
        '▸ grep "def add" (*.py, ignore case) · ok\n'
    )


def test_a_bash_command_is_shown_whole_however_long() -> None:
    long = "python -m pytest -q tests/" + " ".join(f"test_module_number_{i}.py" for i in range(12)) + " && echo END"
    out = _render(("bash", {"command": long, "timeout_s": 300}), width=80)
    assert out == f"▸ bash {long} (timeout 300s) · ok\n"  # one logical line: the terminal wraps it, nothing cut
    heredoc = "cat > notes.txt <<'EOF'\nfirst\nsecond\nEOF\nwc -l notes.txt"
    assert _render(("bash", {"command": heredoc})) == (
        "▸ bash cat > notes.txt <<'EOF'\n    first\n    second\n    EOF\n    wc -l notes.txt · ok\n"
    )


def test_an_edit_is_a_unified_diff_coloured_on_a_terminal() -> None:
    args = {
        "path": "textstats/core.py",
        "edits": [
            {
                "old": "def words(text):\n    return text.lower().split()\n",
                "new": "def words(text):\n    return WORD.findall(text.lower())\n",
            },
            {"old": "import re\n", "new": 'import re\n\nWORD = re.compile(r"[a-z\']+")\n'},
        ],
    }
    assert _render(("edit_file", args)) == (
        "▸ edit_file textstats/core.py (2 edits) · ok\n"
        "     def words(text):\n"
        "    -    return text.lower().split()\n"
        "    +    return WORD.findall(text.lower())\n"
        "    ⋯\n"
        "     import re\n"
        "    +\n"
        '    +WORD = re.compile(r"[a-z\']+")\n'
    )
    diff = edit_diff(args)
    styles = {line.strip()[:1]: str(span.style) for line, span in zip(diff.plain.split("\n"), diff.spans, strict=True)}
    assert styles["-"] == "red" and styles["+"] == "green" and styles["d"] == "dim"


def test_a_long_edit_is_cut_with_a_count_and_a_failed_edit_shows_no_diff() -> None:
    args = {"path": "big.py", "edits": [{"old": "", "new": "".join(f"x = {i}\n" for i in range(100))}]}
    lines = _render(("edit_file", args)).splitlines()
    assert lines[0] == "▸ edit_file big.py · ok" and lines[1] == "    +x = 0"
    assert len(lines) == 42 and lines[-1] == "    … 60 more diff lines"
    failed = _render(("edit_file", args), error="edit 1: the text to replace was not found in big.py")
    assert failed == "▸ edit_file big.py · error: edit 1: the text to replace was not found in big.py\n"


def test_other_tools_show_their_arguments_in_the_order_given() -> None:
    args = {"status": "done", "summary": "wrote calc/ops.py " * 5, "evidence": ["tests pass"], "retries": 0}
    assert _render(("report_step", args)) == (
        '▸ report_step status="done" summary="wrote calc/ops.py wrote calc/ops.py wro…" evidence=[1 item] '
        "retries=0 · ok\n"
    )


def test_without_the_arguments_the_preview_is_read_or_cut() -> None:
    line = tool_line("glob", None, is_error=False, result_preview="", args_preview='{"pattern": "*.py"}')
    assert line.plain == "▸ glob *.py · ok"
    cut = tool_line("bash", None, is_error=False, result_preview="", args_preview='{"command": "' + "x" * 200)
    assert cut.plain == '▸ bash {"command": "' + "x" * 46 + "… · ok"


def test_json_events_do_not_change() -> None:
    """``--json`` is an API: the full arguments ride on the event for the terminal only (the JSON has them bounded,
    ``args_shown``, as the session's tool batch fills it)."""
    buffer = io.StringIO()
    event = ToolStarted(session=S, call_id="c1", name="bash", args_preview='{"command": "ls"}', args={"command": "ls"})
    events: list[SessionEvent] = [event]
    JsonLinesRenderer(buffer)(events[0])
    assert buffer.getvalue() == (
        '{"session": "executor", "kind": "tool_started", "call_id": "c1", "name": "bash", '
        '"args_preview": "{\\"command\\": \\"ls\\"}", "args_shown": {}}\n'
    )
    assert event.model_dump(mode="json") == ToolStarted.model_validate_json(buffer.getvalue()).model_dump(mode="json")


def test_a_failed_verification_shows_the_command_and_the_tail_of_its_output() -> None:
    out = io.StringIO()
    ui = GoalTerminalUI(Console(file=out, width=100, color_system=None, force_terminal=False), live=False, tick=False)
    output = "".join(f"test_{i} ... ok\n" for i in range(30)) + "FAIL: test_ties\nAssertionError: ['b', 'a']\n"
    ui(
        StepVerified(
            step_id="S2",
            ok=False,
            outcomes=(
                VerifyOutcome(command="python3 -m unittest tests.test_rank", exit_code=1, ok=False, output=output),
                VerifyOutcome(command="python3 -m textstats README.md", exit_code=2, ok=False, output="usage"),
            ),
        )
    )
    assert out.getvalue() == (
        "✗ S2 verification failed: `python3 -m unittest tests.test_rank` exit 1, expected 0 (+1 more)\n"
        "    … 20 earlier lines\n" + "".join(f"    test_{i} ... ok\n" for i in range(20, 30)) + "    FAIL: test_ties\n"
        "    AssertionError: ['b', 'a']\n"
    )
