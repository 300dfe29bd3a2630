"""The happy ``calc`` goal with a diamond plan (S1, then S2 and S3, then S4), run in process: its workspace and the
planner's and executor's replies."""

from __future__ import annotations

from pathlib import Path

from tests.orchestrator.goal_support import call, executor_step, reply, step


def diamond_workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "proj"
    (ws / "calc").mkdir(parents=True)
    (ws / "calc" / "__init__.py").write_text("")
    (ws / "README.md").write_text("# calc\nA tiny calculator package.\n")
    return ws


DIAMOND = [
    step("S1", "Add calc/ops.py with add()", writes=["calc/ops.py"], verify=["python3 -c 'import calc.ops'"]),
    step(
        "S2",
        "Add calc/mul.py",
        deps=["S1"],
        writes=["calc/mul.py"],
        verify=["python3 -c 'from calc.mul import mul; assert mul(3, 4) == 12'"],
    ),
    step(
        "S3",
        "Add calc/neg.py",
        deps=["S1"],
        writes=["calc/neg.py"],
        verify=["python3 -c 'from calc.neg import neg; assert neg(2) == -2'"],
    ),
    step(
        "S4", "Add test_calc.py and run it", deps=["S2", "S3"], writes=["test_calc.py"], verify=["python3 test_calc.py"]
    ),
]


OPS = "def add(a, b):\n    return a + b\n"
MUL = "from calc.ops import add\n\n\ndef mul(a, b):\n    return a * b\n"


NEG = "def neg(a):\n    return -a\n"
TEST = (
    "from calc.mul import mul\nfrom calc.neg import neg\n\n"
    "assert mul(2, 5) == 10\nassert neg(mul(1, 3)) == -3\nprint('ok')\n"
)


def diamond_planner() -> list[dict[str, object]]:
    return [
        reply(call("list_dir", path="."), reasoning="Look at the package first."),
        reply(call("submit_plan", objective="Grow calc", steps=DIAMOND)),
        # after every step is verified:
        reply(call("goal_verdict", verdict="complete", evidence=["test_calc.py passes"])),
    ]


def diamond_executor() -> list[dict[str, object]]:
    return [
        *executor_step("S1", "calc/ops.py", OPS),
        *executor_step("S2", "calc/mul.py", MUL),
        *executor_step("S3", "calc/neg.py", NEG),
        *executor_step("S4", "test_calc.py", TEST),
    ]
