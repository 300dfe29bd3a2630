"""Scenarios of things going wrong on the wire or in a reply: truncated arguments, calls written in the reasoning,
a call storm, API faults and retries, and a budget that pauses the goal until it is raised."""

from __future__ import annotations

from scenarios.library._repos import (
    CSVSUM_FIXED,
    GET,
    GET_TEST,
    MASS_TEST,
    SLUG_FIXED,
    UNITS,
    UNITS_SIGNIFICANT,
    UNITS_SIGNIFICANT_TEST,
    UNITS_WITH_MASS,
    csvsum_workspace,
    iniconf_workspace,
    slug_workspace,
    units_workspace,
)
from scenarios.library._script import J, call, edit, reply, report, scenario, step, submit, verdict


def truncated_arguments() -> J:
    s1 = step(
        "S1",
        "Add get(config, 'section.key', default)",
        "Create iniconf/get.py with get(); tests in tests/test_get.py.",
        writes=["iniconf/get.py", "tests/test_get.py"],
        verify=["python3 -m unittest tests.test_get"],
    )
    raw = '{"command": "python3 -m unittest tests.test_get", "timeout_s": 60}'
    keep = raw.index(', "timeout_s"') + len(', "time')
    planner = [
        reply(call("list_dir", path="iniconf")),
        submit("Dotted access to configuration values", [s1]),
        *verdict("tests.test_get passes"),
    ]
    executor = [
        reply(call("write_file", path="iniconf/get.py", content=GET)),
        reply(call("write_file", path="tests/test_get.py", content=GET_TEST)),
        reply(
            {"name": "bash", "arguments": raw},
            reasoning="Run the new test with a timeout.",
            faults=[{"kind": "truncate_arguments", "keep_chars": keep}],
        ),
        *report("S1", "get() with a default", "tests.test_get OK (the repaired call ran)"),
    ]
    return scenario(
        "truncated-arguments",
        "Tool-call arguments cut off at finish_reason=length are closed and the call runs",
        "The executor's bash call is cut off mid-argument (the emulator's truncate_arguments fault, finish_reason "
        "length). The repair layer closes the JSON (dropping the half-written key), the command runs, and its "
        "result carries a note that the arguments were repaired. The re-sent assistant message keeps the raw "
        "truncated string, so the cache is unaffected.",
        "Add get(config, 'section.key', default) to iniconf with a test.",
        iniconf_workspace(),
        planner,
        executor,
        {
            "status": "complete",
            "steps_done": 1,
            "faults": {"truncate_arguments": 1},
            "repairs": {"truncation": 1},
            "files": {"iniconf/get.py": GET},
            "commands": ["python3 -m unittest"],
        },
    )


def reasoning_scavenge() -> J:
    old = UNITS[UNITS.index("def convert") :]
    s1 = step(
        "S1",
        "Round to 6 significant digits, not 6 decimals",
        "convert() in units.py promises 6 significant digits but rounds to 6 decimal places, so small results "
        "become 0 or 1e-06. Format with '.6g' instead; add test_significant.py.",
        writes=["units.py", "test_significant.py"],
        verify=["python3 -m unittest"],
    )
    planner = [
        reply(call("grep", pattern="round\\(", path="."), reasoning="Where is the rounding?"),
        submit("Significant digits in convert()", [s1]),
        *verdict("python3 -m unittest passes"),
    ]
    executor = [
        reply(
            call("read_file", path="units.py"),
            reasoning="First read units.py to see the rounding.",
            faults=[{"kind": "tool_call_in_reasoning"}],
        ),
        reply(edit("units.py", old, UNITS_SIGNIFICANT), reasoning="round(x, 6) is decimals; use float(f'{x:.6g}')."),
        reply(call("write_file", path="test_significant.py", content=UNITS_SIGNIFICANT_TEST)),
        reply(call("bash", command="python3 -m unittest")),
        *report("S1", "convert() keeps 6 significant digits", "python3 -m unittest: 5 tests OK"),
    ]
    return scenario(
        "reasoning-scavenge",
        "A tool call written only in the reasoning is scavenged and run",
        "The executor's first reply writes its read_file call as markup at the end of its reasoning, with no "
        "tool_calls (the emulator's tool_call_in_reasoning fault, a known DeepSeek habit). The repair layer finds "
        "it, runs it, and hands the result back in a tagged user turn; the executor carries on.",
        "convert() rounds to 6 decimals instead of 6 significant digits: convert(1, 'mm', 'mi') gives 1e-06.",
        units_workspace(),
        planner,
        executor,
        {
            "status": "complete",
            "steps_done": 1,
            "faults": {"tool_call_in_reasoning": 1},
            "repairs": {"scavenge": 1},
            "commands": ["python3 -m unittest"],
            "file_patterns": {"units.py": r"\.6g"},
        },
    )


def call_storm() -> J:
    s1 = step(
        "S1",
        "Skip blank lines and honour quotes",
        "Fix sum_column in csvsum.py (csv.reader; skip empty rows) so test_csvsum.py passes.",
        writes=["csvsum.py"],
        verify=["python3 test_csvsum.py"],
    )
    planner = [
        reply(call("read_file", path="csvsum.py")),
        submit("Fix csvsum", [s1]),
        *verdict("python3 test_csvsum.py passes"),
    ]
    run = call("bash", command="python3 test_csvsum.py")
    executor = [
        reply(run, reasoning="See what fails."),
        reply(run, reasoning="Run it again to be sure."),
        reply(run, reasoning="Once more."),
        reply(call("read_file", path="csvsum.py"), reasoning="Same call refused: read the code instead."),
        reply(call("write_file", path="csvsum.py", content=CSVSUM_FIXED), reasoning="csv.reader; skip empty rows."),
        reply(call("bash", command="python3 test_csvsum.py 2>&1 | tail -n 1")),
        *report("S1", "csv.reader, empty rows skipped", "3 tests OK"),
    ]
    return scenario(
        "call-storm",
        "A storm of identical calls is suppressed and the model changes approach",
        "The executor runs the same failing test command three times in a row. The third identical call is not run: "
        "the storm guard answers with a stub telling the model to change approach; it reads the code and fixes it.",
        "csvsum.py crashes on blank lines and gets quoted fields wrong: make test_csvsum.py pass.",
        csvsum_workspace(),
        planner,
        executor,
        {
            "status": "complete",
            "steps_done": 1,
            "repairs": {"storm": 1},
            "files": {"csvsum.py": CSVSUM_FIXED},
            "commands": ["python3 test_csvsum.py"],
        },
    )


def api_faults() -> J:
    s1 = step(
        "S1",
        "Fix slugify for accented titles",
        "Transliterate with unicodedata NFKD in slug.py.",
        writes=["slug.py"],
        verify=["python3 test_slug.py"],
    )
    planner = [
        reply(
            call("read_file", path="slug.py"),
            faults=[{"kind": "http_status", "status": 429, "times": 3, "retry_after": 0}],
        ),
        {
            **submit("Fix slugify", [s1]),
            "faults": [{"kind": "http_status", "status": 503, "times": 1, "retry_after": 0}],
        },
        *verdict("python3 test_slug.py passes"),
    ]
    executor = [
        reply(
            call("write_file", path="slug.py", content=SLUG_FIXED),
            reasoning="Normalize to NFKD and drop the combining marks.",
            faults=[{"kind": "drop", "after_chunks": 3}],
        ),
        reply(call("bash", command="python3 test_slug.py"), faults=[{"kind": "keep_alive", "count": 3}]),
        *report("S1", "slugify transliterates with NFKD", "2 tests OK"),
    ]
    return scenario(
        "api-faults",
        "API faults: a 429 burst, a 503 and a connection dropped mid-stream, each retried",
        "The planner's first request is answered 429 three times (Retry-After: 0), its second 503 once; the "
        "executor's first stream is cut after three chunks, and its next waits behind keep-alive comments. The "
        "client retries each identical body; the goal completes and the retried requests hit the cache.",
        "slugify() drops accented letters ('Crème' becomes 'cr-me'): keep them as their ASCII letters.",
        slug_workspace(),
        planner,
        executor,
        {
            "status": "complete",
            "steps_done": 1,
            "faults": {"http_429": 3, "http_503": 1, "drop": 1, "keep_alive": 1},
            "files": {"slug.py": SLUG_FIXED},
            "commands": ["python3 test_slug.py"],
        },
    )


def budget_pause_resume() -> J:
    mass_step = step(
        "S1",
        "Add a MASS table",
        "Add MASS (mg, g, kg, t, oz, lb in kilograms) to units.py and make convert() look the units up in the table "
        "that has both, raising ValueError for units of different kinds. Add test_mass.py.",
        writes=["units.py", "test_mass.py"],
        verify=["python3 -m unittest"],
    )
    readme_step = step(
        "S2",
        "Document mass units in the README",
        "Mention mass units in README.md.",
        deps=["S1"],
        writes=["README.md"],
        verify=["grep -q 'mass' README.md"],
    )
    planner = [
        reply(call("read_file", path="units.py")),
        submit("Mass units", [mass_step, readme_step]),
        *verdict("python3 -m unittest passes; README mentions mass"),
    ]
    readme = "# units\n\n`convert(value, from_unit, to_unit)` for lengths and mass (mg, g, kg, t, oz, lb).\n\n"
    executor = [
        reply(call("write_file", path="units.py", content=UNITS_WITH_MASS), reasoning="A second table."),
        reply(call("write_file", path="test_mass.py", content=MASS_TEST)),
        reply(call("bash", command="python3 -m unittest")),
        *report("S1", "MASS table; kinds do not mix", "python3 -m unittest: 5 tests OK"),
        # resumed run
        reply(
            edit("README.md", "`convert(value, from_unit, to_unit)` for lengths.\n\n", readme),
            reasoning="Resumed: S1 is verified; document mass.",
        ),
        *report("S2", "README mentions mass units", "README.md"),
    ]
    return scenario(
        "budget-pause-resume",
        "The budget runs out: the goal pauses, then resumes with a raised budget",
        "The dollar budget covers the first step but not the upper bound of the next request (every request is "
        "checked before it is sent: its prompt at the cache-miss price plus 8,192 output tokens). The goal pauses "
        "before the second step sends anything (resumable, the finished step verified); the resumed run, with a "
        "raised budget, continues at the next step and never repeats a verified one.",
        "Add mass units (mg, g, kg, t, oz, lb) to the units library.",
        units_workspace(),
        planner,
        executor,
        {
            "status": "complete",
            "steps_done": 2,
            "files": {"units.py": UNITS_WITH_MASS},
            "commands": ["python3 -m unittest"],
        },
        settings={"budget_usd": 0.0126},
        resume={"budget_usd": 0.05},
    )
