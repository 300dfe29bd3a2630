"""Escalation scenarios: the planner, the executor, and a repeated failure asking for (or earning) a pro turn."""

from __future__ import annotations

from scenarios.library._repos import (
    INTERPOLATE,
    INTERPOLATE_TEST,
    INTERVALS,
    INTERVALS_MERGE,
    INTERVALS_TEST_TOTAL,
    LOAD,
    LOAD_TEST,
    SLUG_FIXED,
    iniconf_workspace,
    intervals_workspace,
    slug_workspace,
)
from scenarios.library._script import J, call, edit, reply, report, scenario, step, submit, verdict


def planner_escalation() -> J:
    s1 = step(
        "S1",
        "Add interpolate(config)",
        "Create iniconf/interpolate.py: interpolate(config) resolves ${section.key} references transitively; "
        "ValueError naming an unknown reference; ValueError naming the cycle ('a.x -> a.y -> a.x'). Tests in "
        "tests/test_interpolate.py.",
        writes=["iniconf/interpolate.py", "tests/test_interpolate.py"],
        verify=["python3 -m unittest tests.test_interpolate"],
        risk="medium",
    )
    s2 = step(
        "S2",
        "Add load(path)",
        "Create iniconf/load.py: load(path) = interpolate(parse(text)); tests in tests/test_load.py.",
        deps=["S1"],
        writes=["iniconf/load.py", "tests/test_load.py"],
        verify=["python3 -m unittest"],
    )
    planner = [
        reply(
            reasoning="Interpolation with transitive references and cycle detection; the error has to name the cycle.",
            content="<<<NEEDS_PRO: resolving references with cycle detection needs a careful design>>>",
        ),
        reply(
            call("read_file", path="iniconf/parser.py"),
            reasoning="Pro: parse() returns plain dicts of strings, so interpolation can be a separate pass.",
        ),
        submit(
            "Add ${section.key} interpolation to iniconf",
            [s1, s2],
            reasoning="Resolve lazily with memoisation; carry the chain of keys being resolved to detect cycles.",
            assumptions=["references use ${section.key}; no escaping is needed yet"],
        ),
        *verdict("python3 -m unittest: parser, interpolate and load tests pass"),
    ]
    executor = [
        reply(call("write_file", path="iniconf/interpolate.py", content=INTERPOLATE), reasoning="As planned."),
        reply(call("write_file", path="tests/test_interpolate.py", content=INTERPOLATE_TEST)),
        reply(call("bash", command="python3 -m unittest tests.test_interpolate")),
        *report("S1", "interpolate() with cycle detection", "3 tests OK"),
        reply(call("write_file", path="iniconf/load.py", content=LOAD)),
        reply(call("write_file", path="tests/test_load.py", content=LOAD_TEST)),
        reply(call("bash", command="python3 -m unittest")),
        *report("S2", "load(path) parses and interpolates", "python3 -m unittest: 6 tests OK"),
    ]
    return scenario(
        "planner-escalation",
        "The planner escalates a design question to pro with the marker",
        "A config parser lacks ${section.key} interpolation. The planner's flash reply starts with "
        "<<<NEEDS_PRO: ...>>>; the identical request goes to pro, which reads the parser and submits the plan. The "
        "planner's next turn (the verdict) is on flash again.",
        "Add ${section.key} references to iniconf: values may refer to other keys; unknown references and cycles "
        "are errors that name the problem.",
        iniconf_workspace(),
        planner,
        executor,
        {
            "status": "complete",
            "escalations": 1,
            "steps_done": 2,
            "files": {"iniconf/interpolate.py": INTERPOLATE},
            "commands": ["python3 -m unittest"],
        },
    )


def executor_escalation() -> J:
    s1 = step(
        "S1",
        "Implement merge()",
        "Implement merge(intervals) in intervals.py: sort, join overlapping and touching intervals, drop empty ones.",
        writes=["intervals.py"],
        verify=["python3 -m unittest test_intervals"],
    )
    s2 = step(
        "S2",
        "Add total_length()",
        "Add total_length(intervals) = the summed length of merge(intervals); test it in test_total.py.",
        deps=["S1"],
        writes=["intervals.py", "test_total.py"],
        verify=["python3 -m unittest"],
    )
    stub = (
        "def merge(intervals):\n"
        '    """The union of ``intervals`` as sorted, non-overlapping intervals (touching ones are joined)."""\n'
        "    raise NotImplementedError\n"
    )
    merge_only = INTERVALS_MERGE.split("\n\n\ndef total_length")[0] + "\n"
    executor = [
        reply(call("read_file", path="test_intervals.py"), reasoning="What exactly must merge() do?"),
        reply(
            reasoning="Touching intervals join, empty ones vanish, contained ones disappear: an edge is easy to miss.",
            content="<<<NEEDS_PRO: interval merging edge cases (touching, contained, empty)>>>",
        ),
        reply(
            edit("intervals.py", stub, merge_only),
            reasoning="Sort the non-empty intervals; extend the last merged one while start <= its end.",
        ),
        reply(call("bash", command="python3 -m unittest test_intervals")),
        *report("S1", "merge() sorts and sweeps", "3 tests OK"),
        reply(
            edit("intervals.py", merge_only, INTERVALS_MERGE),
            reasoning="total_length is a sum over merge().",
        ),
        reply(call("write_file", path="test_total.py", content=INTERVALS_TEST_TOTAL)),
        reply(call("bash", command="python3 -m unittest")),
        *report("S2", "total_length() over merge()", "4 tests OK"),
    ]
    planner = [
        reply(call("read_file", path="intervals.py"), reasoning="merge() is a stub."),
        submit("Implement interval merging and total length", [s1, s2]),
        *verdict("python3 -m unittest passes"),
    ]
    return scenario(
        "executor-escalation",
        "The executor escalates a tricky step to pro with the marker",
        "merge() of an interval library is a stub. On S1 the executor's flash reply starts with the marker; the "
        "identical request goes to pro, which writes the sweep; S2 is on flash again.",
        "Implement merge() in intervals.py so test_intervals.py passes, and add total_length().",
        intervals_workspace(),
        planner,
        executor,
        {
            "status": "complete",
            "escalations": 1,
            "steps_done": 2,
            "files": {"intervals.py": INTERVALS.replace(stub, INTERVALS_MERGE)},
            "commands": ["python3 -m unittest"],
        },
    )


def failure_escalation() -> J:
    s1 = step(
        "S1",
        "Keep the letters of accented characters",
        "In slug.py, transliterate accented letters to ASCII (unicodedata NFKD) before replacing the rest with "
        "hyphens, so test_slug.py passes.",
        writes=["slug.py"],
        verify=["python3 test_slug.py"],
    )
    planner = [
        reply(call("read_file", path="slug.py"), reasoning="Accents are dropped together with their letters."),
        submit("Fix slugify for accented titles", [s1]),
        *verdict("python3 test_slug.py passes"),
    ]
    executor = [
        reply(
            call("apply_patch", patch="*** Update File: slug.py\n@@\n-import re\n+import re\n+import unicodedata\n"),
            reasoning="Patch the import in.",
        ),
        reply(call("run_tests", path="test_slug.py"), reasoning="No apply_patch here. Run the tests first."),
        reply(
            call("str_replace_editor", command="view", path="slug.py"),
            reasoning="Let me view the file with the editor tool.",
        ),
        # three failures (unknown tools) in this turn: the rest of the turn goes to pro
        reply(call("write_file", path="slug.py", content=SLUG_FIXED), reasoning="Rewrite slug.py with NFKD."),
        reply(call("bash", command="python3 test_slug.py")),
        *report("S1", "slugify transliterates with NFKD", "2 tests OK"),
    ]
    return scenario(
        "failure-escalation",
        "Three failed tool calls in one turn send the rest of the turn to pro",
        "A slug function drops accented letters. The flash executor calls tools from another agent's toolbox "
        "(apply_patch, run_tests, str_replace_editor): each is answered with the valid tool names and counts as a "
        "failure; at the third, the failure counter escalates the rest of the turn to pro, which fixes the file.",
        "slugify() drops accented letters ('Crème' becomes 'cr-me'): keep them as their ASCII letters.",
        slug_workspace(),
        planner,
        executor,
        {
            "status": "complete",
            "escalations": 1,
            "steps_done": 1,
            "repairs": {"unknown_tool": 3},
            "files": {"slug.py": SLUG_FIXED},
            "commands": ["python3 test_slug.py"],
        },
    )
