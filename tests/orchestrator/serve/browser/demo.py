"""The scripted goal the dashboard is shown and tested with: four steps in a diamond (S1 → S2 ∥ S3 → S4, the middle
two in a parallel wave), an executor escalation to pro on S2, real files, an edit and commands with several lines of
output (S1), real verify commands, played by ``reasonix emulate``.

``bench/make_screenshot.py`` and the browser tests share it, so the committed screenshot shows what the tests check.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...goal_support import EXECUTOR, PLANNER, call, executor_step, reply, step

OBJECTIVE = "Grow calc: add mul() and neg(), then document them"
HOSTILE_TITLE = "Add mul() <script>alert(1)</script>"

OPS = "def add(a, b):\n    return a + b\n"
OPS_EDITED = 'def add(a, b):\n    """a + b"""\n    return a + b\n'
COUNT = "python3 -c 'for i in range(1, 7): print(\"line\", i)'"
"""A command whose output is six lines: the page shows the last four."""
FAIL = "python3 -c 'import sys\nfor i in range(1, 9): print(\"fail\", i)\nsys.exit(3)'"
"""A command that fails after eight lines: the page shows them all."""
MUL = "def mul(a, b):\n    return a * b\n"
NEG = "def neg(a):\n    return -a\n"
DOC = "# calc\n\nadd(a, b), mul(a, b), neg(a).\n"


def workspace(root: Path) -> Path:
    """A small package to grow (its own ``.git`` ends the upward search for standing memory)."""
    ws = root / "calc-ws"
    (ws / "calc").mkdir(parents=True)
    (ws / ".git").mkdir()
    (ws / "calc" / "__init__.py").write_text("")
    return ws


def steps(hostile: bool) -> list[dict[str, Any]]:
    return [
        step("S1", "Add calc/ops.py with add()", writes=["calc/ops.py"], verify=["python3 -c 'import calc.ops'"]),
        step(
            "S2",
            HOSTILE_TITLE if hostile else "Add calc/mul.py with mul()",
            deps=["S1"],
            writes=["calc/mul.py"],
            verify=["python3 -c 'from calc.mul import mul; assert mul(3, 4) == 12'"],
        ),
        step(
            "S3",
            "Add calc/neg.py with neg()",
            deps=["S1"],
            writes=["calc/neg.py"],
            verify=["python3 -c 'from calc.neg import neg; assert neg(2) == -2'"],
        ),
        step("S4", "Document calc in README.md", deps=["S2", "S3"], writes=["README.md"], verify=["test -s README.md"]),
    ]


def _with_reasoning(replies: list[dict[str, Any]], text: str) -> list[dict[str, Any]]:
    """The same replies, the first thinking aloud for longer (something to watch streaming in the page)."""
    return [{**replies[0], "reasoning": text}, *replies[1:]]


def script(*, hostile: bool = False) -> dict[str, Any]:
    """The emulator script: the planner submits the plan (and later the verdict); the executor does each step (S2 and
    S3 at once, in forks), S2 after asking for pro with the marker."""
    planner = [
        reply(call("submit_plan", objective=OBJECTIVE, steps=steps(hostile)), reasoning="Four small steps."),
        reply(call("goal_verdict", verdict="complete", evidence=["every step verified"])),
    ]
    s1 = executor_step("S1", "calc/ops.py", OPS)
    edit = call(
        "edit_file", path="calc/ops.py", edits=[{"old": "    return a + b", "new": '    """a + b"""\n    return a + b'}]
    )
    per_step = {
        "S1": [s1[0], reply(edit, call("bash", command=COUNT), call("bash", command=FAIL)), s1[1]],
        "S2": [
            reply(content="<<<NEEDS_PRO: mul() must keep integer semantics for every input>>>", reasoning="Tricky?"),
            *executor_step("S2", "calc/mul.py", MUL, summary="mul() multiplies"),
        ],
        "S3": executor_step("S3", "calc/neg.py", NEG),
        "S4": _with_reasoning(
            executor_step("S4", "README.md", DOC, summary="README.md documents add, mul and neg"),
            "The README names each function with its arguments: add(a, b) and mul(a, b) take two numbers, neg(a) one. "
            "One short line is enough; the verify command only needs the file to be non-empty.",
        ),
    }
    # Each step's turns have their own replies (matched by the step's heading in the last user message): S2 and S3
    # run at once in a parallel wave, in forks of the executor, and their requests arrive in any order.
    executors = [
        {"key": f"executor-{sid}", "system_contains": EXECUTOR, "user_contains": f"## {sid}:", "replies": replies}
        for sid, replies in per_step.items()
    ]
    return {"sessions": [{"key": "planner", "system_contains": PLANNER, "replies": planner}, *executors]}
