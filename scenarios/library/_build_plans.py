"""Scenarios of the plan's life: a failed verification retried then re-planned, a review that asks for a revision,
a plan with a cycle that the supervisor refuses, and the evidence a goal needs before it is complete (issue 44)."""

from __future__ import annotations

from scenarios.library._repos import (
    CSVSUM_FIXED,
    CSVSUM_SKIP_BLANK,
    CSVSUM_STRIP_QUOTES,
    TEMPERATURE,
    TEMPERATURE_TEST,
    UNITS,
    csvsum_workspace,
    units_workspace,
)
from scenarios.library._script import J, call, edit, reply, report, scenario, step, submit, verdict

# ============================================================================================ more scenarios


def verify_retry_replan() -> J:
    s1 = step(
        "S1",
        "Skip blank lines in sum_column",
        "In csvsum.py, make sum_column ignore empty lines so test_csvsum.py passes.",
        writes=["csvsum.py"],
        verify=["python3 test_csvsum.py"],
    )
    s2 = step(
        "S2",
        "Parse rows with the csv module",
        "Rewrite sum_column in csvsum.py to read rows with csv.reader (quoted fields may hold commas) and skip empty "
        "rows. Keep main() as it is.",
        writes=["csvsum.py"],
        verify=["python3 test_csvsum.py", "python3 csvsum.py sample.csv amount"],
    )
    planner = [
        reply(call("read_file", path="test_csvsum.py"), reasoning="Which tests fail?"),
        submit("Make test_csvsum.py pass", [s1], reasoning="Blank lines crash float(''); skip them."),
        reply(
            call("read_file", path="csvsum.py"),
            reasoning="Two attempts failed on quoted fields: splitting on commas cannot work; use csv.",
        ),
        submit("Make test_csvsum.py pass", [s2], tool="revise_plan"),
        *verdict("python3 test_csvsum.py passes", "python3 csvsum.py sample.csv amount prints 3.5"),
    ]
    loop = '    for line in lines[1:]:\n        total += float(line.rstrip("\\n").split(",")[index])\n'
    executor = [
        reply(call("read_file", path="csvsum.py"), reasoning="Look at the loop."),
        reply(edit("csvsum.py", loop, CSVSUM_SKIP_BLANK), reasoning="Skip lines that are only whitespace."),
        reply(call("bash", command="python3 test_csvsum.py 2>&1 | tail -n 3")),
        *report("S1", "blank lines are skipped", "test_blank_lines_are_skipped passes"),
        # attempt 2, after the supervisor's failed verification: the retry starts from the step's checkpoint, so
        # the loop is as it was before attempt 1
        reply(
            edit("csvsum.py", loop, CSVSUM_STRIP_QUOTES),
            reasoning="The quoted test fails: strip the quotes before splitting.",
        ),
        reply(call("bash", command="python3 test_csvsum.py 2>&1 | tail -n 3")),
        *report("S1", "quotes are stripped", "ran the tests"),
        # S2 after the re-plan
        reply(call("write_file", path="csvsum.py", content=CSVSUM_FIXED), reasoning="csv.reader handles quotes."),
        reply(call("bash", command="python3 test_csvsum.py && python3 csvsum.py sample.csv amount")),
        *report("S2", "sum_column reads rows with csv.reader", "3 tests OK", "sample.csv amount: 3.5"),
    ]
    return scenario(
        "verify-retry-replan",
        "A fix that fails verification twice, then a re-plan that works",
        "A CSV-summing CLI crashes on blank lines and miscounts quoted fields. The executor's first fix (skip blank "
        "lines) and its retry (strip quotes) both report done, but the supervisor's own run of the tests fails "
        "both times; after max_step_attempts the planner revises the plan to parse rows with the csv module, "
        "which passes.",
        "csvsum.py crashes on blank lines and gets quoted fields wrong: make test_csvsum.py pass.",
        csvsum_workspace(),
        planner,
        executor,
        {
            "status": "complete",
            "replans": 1,
            "escalations": 0,
            "steps_done": 1,
            "files": {"csvsum.py": CSVSUM_FIXED},
            "commands": ["python3 test_csvsum.py", 'test "$(python3 csvsum.py sample.csv amount)" = 3.5'],
        },
    )


def review_revise() -> J:
    one = step(
        "S1",
        "Add temperatures to convert()",
        "Add C, F and K to convert() in units.py.",
        writes=["units.py"],
        verify=["python3 -m unittest"],
    )
    s1 = step(
        "S1",
        "Add convert_temperature() in temperature.py",
        "Create temperature.py with convert_temperature(value, from_unit, to_unit) for C, F and K through kelvin "
        "(offsets, not ratios); units.py stays as it is.",
        writes=["temperature.py"],
        verify=['python3 -c \'from temperature import convert_temperature as c; assert c(100, "C", "F") == 212\''],
    )
    s2 = step(
        "S2",
        "Round-trip tests for temperatures",
        "Add test_temperature.py: fixed points and a round trip for every pair of units.",
        deps=["S1"],
        writes=["test_temperature.py"],
        verify=["python3 -m unittest"],
    )
    planner = [
        reply(call("read_file", path="units.py"), reasoning="Lengths are ratios to metres."),
        submit("Temperature conversion", [one]),
        reply(
            call("read_file", path="test_units.py"),
            reasoning="The user wants temperatures apart from the ratio table, and round-trip tests.",
        ),
        submit("Temperature conversion", [s1, s2], tool="revise_plan"),
        *verdict("python3 -m unittest passes, including round trips"),
    ]
    executor = [
        reply(call("write_file", path="temperature.py", content=TEMPERATURE), reasoning="Through kelvin."),
        *report("S1", "convert_temperature via kelvin", "temperature.py"),
        reply(call("write_file", path="test_temperature.py", content=TEMPERATURE_TEST)),
        reply(call("bash", command="python3 -m unittest")),
        *report("S2", "round trips for all unit pairs", "python3 -m unittest: 5 tests OK"),
    ]
    return scenario(
        "review-revise",
        "Plan review: the user asks for changes, the planner revises, the user approves",
        "The first plan folds temperatures into the length ratio table. At review the user answers 'revise' with "
        "feedback (keep temperatures separate, add round-trip tests); the planner calls revise_plan; the user sees "
        "the diff and approves. Review answers are scripted.",
        "Add temperature conversion (C, F, K) to the units library.",
        units_workspace(),
        planner,
        executor,
        {
            "status": "complete",
            "steps_done": 2,
            "files": {"temperature.py": TEMPERATURE, "units.py": UNITS},
            "absent": [],
            "commands": ["python3 -m unittest"],
        },
        review=[
            {
                "decision": "revise",
                "feedback": "Temperatures are not ratios: keep them out of the LENGTH table, in their own module, "
                "and add round-trip tests for every pair of units.",
            },
            {"decision": "approve"},
        ],
    )


def cyclic_plan() -> J:
    a = step(
        "S1",
        "Fix blank lines and quoted fields",
        "Rewrite sum_column in csvsum.py with csv.reader, skipping empty rows.",
        deps=["S2"],
        writes=["csvsum.py"],
        verify=["python3 test_csvsum.py"],
    )
    b = step(
        "S2",
        "Check the CLI on sample.csv",
        "Run python3 csvsum.py sample.csv amount; it must print 3.5.",
        deps=["S1"],
        verify=['test "$(python3 csvsum.py sample.csv amount)" = 3.5'],
    )
    planner = [
        reply(call("read_file", path="csvsum.py")),
        submit("Fix csvsum", [a, b], reasoning="Fix the parser and check the CLI."),
        submit(
            "Fix csvsum",
            [{**a, "depends_on": []}, b],
            reasoning="S1 cannot wait for S2, which checks S1's result: S1 has no dependency.",
        ),
        *verdict("tests pass; the CLI prints 3.5 for sample.csv"),
    ]
    executor = [
        reply(call("write_file", path="csvsum.py", content=CSVSUM_FIXED), reasoning="Use csv.reader."),
        reply(call("bash", command="python3 test_csvsum.py")),
        *report("S1", "csv.reader, empty rows skipped", "3 tests OK"),
        reply(call("bash", command="python3 csvsum.py sample.csv amount")),
        *report("S2", "the CLI prints 3.5", "python3 csvsum.py sample.csv amount -> 3.5"),
    ]
    return scenario(
        "cyclic-plan",
        "An invalid plan (a dependency cycle) is rejected with its errors and corrected",
        "The planner's first submit_plan has S1 and S2 depending on each other. The tool answers with the cycle "
        "(S1 → S2 → S1) and nothing reaches the executor; the planner resubmits without the cycle in the same turn.",
        "csvsum.py crashes on blank lines and gets quoted fields wrong: fix it and check the CLI on sample.csv.",
        csvsum_workspace(),
        planner,
        executor,
        {
            "status": "complete",
            "steps_done": 2,
            "files": {"csvsum.py": CSVSUM_FIXED},
            "commands": ["python3 test_csvsum.py"],
        },
    )


# ============================================================================= evidence from the host (issue 44)
# Scenarios of issue 44's first rule: no goal is complete without evidence from the host (DESIGN §5 "Evidence from
# the host"). Each pins one way a goal could end ``complete`` on a model's word, and shows it does not:
#
# * ``unverified-plan``: the planner's plan changes a file and names no verify command, three turns running;
# * ``silent-edit-failure``: the run seen with a real 1.5B model, scripted: the edit fails (old text not found), the
#   executor ends its turn with ``<<<NEEDS_PRO>>>`` under the flash preset, the step's one verify command is too weak to
#   notice, and the planner then says the goal is complete;
# * ``verdict-without-evidence``: the planner says ``complete`` at once, with no plan;
# * ``acceptance-rerun``: every step passes its own verify commands, but the last one breaks what the first fixed: the
#   verify commands run again after the last step fail, and the planner's ``complete`` is never asked for.
#
# Every scenario is ``origin: scripted``: the replies are written by hand; they are not a model.

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


EVIDENCE = [unverified_plan, silent_edit_failure, verdict_without_evidence, acceptance_rerun]
