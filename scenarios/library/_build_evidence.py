"""Scenarios of issue 44's first rule: no goal is complete without evidence from the host (DESIGN §5 "Evidence from
the host"). Each pins one way a goal could end ``complete`` on a model's word, and shows it does not:

* ``unverified-plan``: the planner's plan changes a file and names no verify command, three turns running;
* ``silent-edit-failure``: the run seen with a real 1.5B model, scripted: the edit fails (old text not found), the
  executor ends its turn with ``<<<NEEDS_PRO>>>`` under the flash preset, the step's one verify command is too weak to
  notice, and the planner then says the goal is complete;
* ``verdict-without-evidence``: the planner says ``complete`` at once, with no plan;
* ``acceptance-rerun``: every step passes its own verify commands, but the last one breaks what the first fixed: the
  verify commands run again after the last step fail, and the planner's ``complete`` is never asked for.

Every scenario is ``origin: scripted``: the replies are written by hand; they are not a model.
"""

from __future__ import annotations

from scenarios.library._script import J, call, edit, reply, report, scenario, step, submit

CALC = "def add(a, b):\n    return a - b\n"
CALC_FIXED = "def add(a, b):\n    return a + b\n"
TEST_CALC = (
    "import unittest\n\nfrom calc import add\n\n\n"
    "class AddTest(unittest.TestCase):\n"
    "    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n\n"
    "    def test_zero(self):\n        self.assertEqual(add(0, 4), 4)\n\n\n"
    'if __name__ == "__main__":\n    unittest.main()\n'
)
OBJECTIVE = "add() in calc.py subtracts: make it add, so that python3 -m unittest passes."
UNITTEST = "python3 -m unittest"
WEAK = "python3 -c 'import calc'"
STILL_SUBTRACTS = "grep -q 'return a - b' calc.py"


def _workspace() -> dict[str, str]:
    return {"calc.py": CALC, "test_calc.py": TEST_CALC}


def _verdict_complete(*evidence: str) -> J:
    return reply(call("goal_verdict", verdict="complete", evidence=list(evidence)), reasoning="It is done.")


def unverified_plan() -> J:
    no_verify = step(
        "S1",
        "Make add() add",
        "In calc.py, change add() to return a + b.",
        reads=["calc.py"],
        writes=["calc.py"],
        acceptance=["python3 -m unittest passes"],
    )
    turn = [submit(OBJECTIVE, [no_verify]), reply(content="Submitted the plan.")]
    return scenario(
        "unverified-plan",
        "A plan that changes a file with no verify command is sent back, and never runs",
        "The planner's one step writes calc.py and names no verify command, only an acceptance sentence. The plan "
        "tool refuses it with the reason (nothing the supervisor runs could show the step done), each of the "
        "planner's three turns; the goal fails without the executor ever running.",
        OBJECTIVE,
        _workspace(),
        [reply(call("read_file", path="calc.py")), *turn, *turn, *turn],
        [],
        {
            "status": "failed",
            "steps_done": 0,
            "files": {"calc.py": CALC},
            "commands": [STILL_SUBTRACTS],
            "events": {"plan_rejected": 3},
            "no_events": ["step_started"],
            "tool_results": [
                {"tool": "submit_plan", "is_error": True, "pattern": "S1 writes calc.py but names no verify command"}
            ],
            "text_pattern": "no valid plan in 3 attempts",
        },
    )


def silent_edit_failure() -> J:
    weak = step(
        "S1",
        "Make add() add",
        "In calc.py, change add() to return a + b.",
        reads=["calc.py"],
        writes=["calc.py"],
        acceptance=["python3 -m unittest passes"],
        verify=[WEAK],
    )
    wrong = edit("calc.py", "return a-b", "return a+b")  # the real model's old text: not in the file
    attempt = [
        reply(wrong, reasoning="Change the operator."),
        reply(content="<<<NEEDS_PRO: the edit did not apply>>>"),
    ]
    planner = [
        reply(call("read_file", path="calc.py")),
        submit(OBJECTIVE, [weak]),
        _verdict_complete("python3 -m unittest passes"),  # asked to revise the failed step, it claims success
    ]
    return scenario(
        "silent-edit-failure",
        "A failed edit and a marker nobody acts on are not a done step, whatever a weak verify says",
        "Issue 44's real-model run, scripted. Under the flash preset the executor's edit fails (old text not "
        "found) and its turn ends with a <<<NEEDS_PRO>>> marker nothing can act on; the step's only verify command "
        "(import calc) passes on the untouched file. The step is not done (failed edit, marker, calc.py unchanged), "
        "twice; asked to revise, the planner says the goal is complete with 'python3 -m unittest passes' as "
        "evidence. The goal ends failed, calc.py still subtracts.",
        OBJECTIVE,
        _workspace(),
        planner,
        [*attempt, *attempt],
        {
            "status": "failed",
            "steps_done": 0,
            "files": {"calc.py": CALC},
            "commands": [STILL_SUBTRACTS],
            "tool_results": [{"tool": "edit_file", "is_error": True, "session": "executor"}],
            "text_pattern": "verdict instead of revising the plan",
        },
        settings={"preset": "flash"},
    )


def verdict_without_evidence() -> J:
    return scenario(
        "verdict-without-evidence",
        "A complete verdict with no plan and no command run ends blocked, not complete",
        "The planner reads calc.py and says the goal is complete at once, with 'the tests pass' as evidence. No "
        "step ran and no command checked anything: the goal ends blocked with the reason, and calc.py still "
        "subtracts.",
        OBJECTIVE,
        _workspace(),
        [reply(call("read_file", path="calc.py")), _verdict_complete("the tests pass")],
        [],
        {
            "status": "blocked",
            "steps_done": 0,
            "files": {"calc.py": CALC},
            "commands": [STILL_SUBTRACTS],
            "no_events": ["step_started"],
            "text_pattern": "no command the supervisor ran shows it",
        },
    )


def acceptance_rerun() -> J:
    fix = step(
        "S1",
        "Make add() add",
        "In calc.py, change add() to return a + b.",
        writes=["calc.py"],
        verify=[UNITTEST],
    )
    doc = step(
        "S2",
        "Document add()",
        "Give add() in calc.py a docstring.",
        deps=["S1"],
        writes=["calc.py"],
        verify=[WEAK],
    )
    broken = 'def add(a, b):\n    """The sum of a and b."""\n    return a - b\n'
    planner = [
        reply(call("read_file", path="calc.py")),
        submit(OBJECTIVE, [fix, doc]),
        reply(
            call("goal_verdict", verdict="blocked", question="S2 keeps undoing the fix: should add() change at all?"),
            reasoning="The docstring step reverted the fix.",
        ),
    ]
    executor = [
        reply(edit("calc.py", "return a - b", "return a + b")),
        *report("S1", "add() adds", "python3 -m unittest: OK"),
        reply(call("write_file", path="calc.py", content=broken), reasoning="Rewrite it with a docstring."),
        *report("S2", "add() has a docstring", "import calc works"),
    ]
    return scenario(
        "acceptance-rerun",
        "Verify commands run again after the last step catch a later step undoing an earlier one",
        "S1 fixes add() and its unittest run passes; S2 rewrites calc.py with a docstring and the old body, and its "
        "own verify (import calc) passes. Before the planner is asked for a verdict, the plan's verify commands run "
        "again on the host: the unit tests fail, S1 goes back to the planner, which ends the goal blocked.",
        OBJECTIVE,
        _workspace(),
        planner,
        executor,
        {
            "status": "blocked",
            "replans": 1,
            "steps_done": 1,
            "files": {"calc.py": broken},
            "commands": [STILL_SUBTRACTS],
            "text_pattern": "S2 keeps undoing the fix",
        },
    )


BUILDERS = [unverified_plan, silent_edit_failure, verdict_without_evidence, acceptance_rerun]
