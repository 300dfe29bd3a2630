"""Scenarios of the plan's life: a failed verification retried then re-planned, a review that asks for a revision,
and a plan with a cycle that the supervisor refuses."""

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
