"""The long session: one documented key of ``confcheck`` an edit-and-test cycle, 410 executor requests and one
compaction, the scenario the long-run cache floor of DESIGN §7 is measured on."""

from __future__ import annotations

import json
from typing import Any

from scenarios.library._conf_repo import conf_workspace
from scenarios.library._conf_rules import SECTIONS, key_rule
from scenarios.library._script import J, call, edit, reply, report, scenario, step, submit, verdict


def _why(rule: str) -> str:
    if rule.startswith("Bool"):
        return (
            'booleans must be real booleans: the TOML loader gives True or False, and a string such as "yes" is a '
            "typo in the file that the validator should report instead of silently accepting"
        )
    if rule.startswith("Choice"):
        return (
            "the documentation lists the accepted values exactly, so a Choice with those strings in the same order; "
            "anything else, including a different capitalisation, is rejected"
        )
    if rule.startswith("IntRange"):
        return (
            "an IntRange with both bounds inclusive, as the documentation says 'from ... to ...'; IntRange already "
            "rejects booleans, which matters because bool is a subclass of int in Python"
        )
    if rule.startswith("Duration"):
        return (
            "durations are strings with a unit suffix, so Duration(); a bare number is ambiguous (seconds or "
            "milliseconds?) and the documentation asks for the unit, so it must be rejected"
        )
    return (
        "plain text: Text(255) rejects the empty string, which is what an unset value in the TOML template looks "
        "like, and caps the length like the other free-text keys"
    )


def _reasoning_rule(key: str, doc: str, rule: str, sec: str, n: int, total: int) -> str:
    return (
        f"Key {n} of {total} in this section: `{key}`. docs/keys.md documents it as {doc}. In the schema that is "
        f"`{rule}`: {_why(rule)}. RULES keeps the keys grouped by section in the order of the documentation, so the "
        f"new line goes directly above the `# end of {sec}` marker; that marker occurs exactly once in "
        "confcheck/schema.py, so edit_file can anchor on it without touching the rules around it, and the edit stays "
        "a one-line addition that is easy to review. validate() itself does not change: unknown keys already raise "
        "KeyError naming the key, which is what the documentation promises for typos in section or key names. "
        f"Before writing it I check the neighbours: the previous keys of {sec} already use the same rule types, and "
        "the imports at the top of the module (Bool, Choice, Duration, IntRange, Text) cover every type this key "
        "could need, so the import line stays as it is and the module still imports cleanly. The value in the "
        "documentation is the only source of truth here; the defaults in the sample service.toml are not part of "
        "the schema and I do not encode them. I also keep the quoting style of the file: double quotes around the "
        "key, a space after the colon, the rule constructor, a trailing comma. The order of keys inside a section "
        "follows docs/keys.md line by line, so a reader can compare the two files side by side, and a later diff "
        "that adds or removes a documented key lines up with the documentation diff. If the documentation were "
        "ambiguous (no range, no unit) I would stop and report the step as blocked with the question, rather than "
        "invent a constraint; here it is explicit, so I go ahead with the edit. " + _why(rule).capitalize() + ". "
        "One more check on the edit itself: old must match the file exactly, including the four spaces of "
        f"indentation and the newline after `# end of {sec}`, and new repeats the marker line after the rule, so "
        "the marker survives for the next key of this section and the file keeps one rule per line. Nothing else in "
        "the file moves, which keeps the earlier rules byte for byte as they were and the review of this step to a "
        "list of added lines."
    )


def _reasoning_case(key: str, good: Any, bad: Any) -> str:
    return (
        f"Now the test cases for `{key}`: one valid value ({good!r}) and one that must be rejected ({bad!r}), placed "
        "above the `# end of cases` marker in tests/test_rules.py. Two cases per key are enough here because the rule "
        "types themselves are tested through every key that uses them; what these cases pin down is that the right "
        "rule, with the right bounds or options, is attached to this particular key, which is exactly the mistake a "
        "copy-and-paste of the previous line would make. The valid value is the edge of what the documentation "
        "allows where there is an edge (the upper bound of a range, the last listed option), because an off-by-one "
        "in a bound or a forgotten option is the likeliest slip; the invalid value is the nearest thing that must "
        "fail (one past the bound, a string instead of a boolean, a number without its unit, the empty string). "
        "Cases are tuples of key, value and the expected answer, in the same order as the rules, with double "
        "quotes like the rest of the file. The test iterates over CASES with subTest, so a wrong case names its "
        "key and value in the failure message instead of stopping at the first mismatch, and the run after this "
        f"edit will show at once whether `{key}` behaves as documented. The cases file is also what a later "
        "reader uses to see what each key accepts, so the pair reads as documentation: the accepted edge first, "
        "the rejected neighbour second. I anchor the edit on the `# end of cases` marker, which occurs once, and "
        "repeat it after the two new lines so the next key can be added the same way; the earlier cases stay "
        "untouched, so a failure after this edit can only come from the two lines I am adding now or from the rule "
        "line of the previous edit."
    )


def _reasoning_run(key: str) -> str:
    return (
        f"Run the rule tests now, after `{key}` and its cases went in, rather than at the end of the section: if the "
        "insertion broke the module (a missing comma, an unbalanced parenthesis) the failure points at this one line. "
        "The quiet flag keeps the output to the summary line, which is all I need to read here. The suite is small "
        "and runs in well under a second, so running it after every key costs nothing and keeps each change "
        "verified on its own; the coverage check of the section waits until every key of the section is in, "
        "because until then it is expected to report the keys that are still missing. If the summary line says "
        "FAILED, the subTest output above it names the key and value, and the fix goes into the line just added, "
        "not into the rule types, which every earlier key already exercises. Piping through tail keeps only the "
        "last line, OK or FAILED with the counts; the exit status of the pipeline is tail's, so I read the line "
        "itself rather than the exit code, and the step's own verify commands at the end of the section run "
        "without the pipe, where the exit code is what the supervisor checks."
    )


def _py(value: Any) -> str:
    return json.dumps(value) if isinstance(value, str) else repr(value)


def long_session() -> J:
    plan_steps: list[J] = []
    executor: list[J] = []
    prev: str | None = None
    for i, (sec, fields) in enumerate(SECTIONS.items(), start=1):
        sid = f"S{i}"
        listed = ", ".join(f"{sec}.{f}" for f in fields)
        plan_steps.append(
            step(
                sid,
                f"Rules for the {sec} section",
                f"Add a rule to RULES in confcheck/schema.py for each {sec} key documented in docs/keys.md ({listed}), "
                f"above '# end of {sec}', and two cases per key (one valid, one invalid) in tests/test_rules.py. "
                "Run the tests after each key.",
                deps=[prev] if prev else [],
                reads=["docs/keys.md"],
                writes=["confcheck/schema.py", "tests/test_rules.py"],
                acceptance=[f"every {sec} key has a rule", "two cases per key pass"],
                verify=["python3 -m unittest -q tests.test_rules", f"python3 -m confcheck.coverage {sec}"],
            )
        )
        prev = sid
        for n, f in enumerate(fields, start=1):
            key = f"{sec}.{f}"
            rule, doc, (good, good_ok), (bad, bad_ok) = key_rule(f)
            executor.append(
                reply(
                    edit("confcheck/schema.py", f"    # end of {sec}\n", f'    "{key}": {rule},\n    # end of {sec}\n'),
                    reasoning=_reasoning_rule(key, doc, rule, sec, n, len(fields)),
                )
            )
            cases = f'    ("{key}", {_py(good)}, {good_ok}),\n    ("{key}", {_py(bad)}, {bad_ok}),\n'
            executor.append(
                reply(
                    edit("tests/test_rules.py", "    # end of cases\n", cases + "    # end of cases\n"),
                    reasoning=_reasoning_case(key, good, bad),
                )
            )
            executor.append(
                reply(
                    call("bash", command="python3 -m unittest -q tests.test_rules 2>&1 | tail -n 1"),
                    reasoning=_reasoning_run(key),
                )
            )
        executor.append(
            reply(
                call("bash", command=f"python3 -m unittest -q tests.test_rules && python3 -m confcheck.coverage {sec}"),
                reasoning=f"All {len(fields)} {sec} keys are in; run the step's verify commands before reporting.",
            )
        )
        executor += report(
            sid, f"{len(fields)} {sec} rules with two cases each", "tests.test_rules OK", f"coverage {sec}: 0 missing"
        )
    planner = [
        reply(call("list_dir", path="."), reasoning="See the package layout first."),
        reply(
            call("read_file", path="docs/keys.md"),
            call("read_file", path="confcheck/schema.py"),
            reasoning="The documentation lists every key; the schema has markers per section.",
        ),
        submit(
            "Add a validation rule and test cases for every documented configuration key",
            plan_steps,
            reasoning="One step per section, in the order of the documentation; each is verified by the rule tests "
            "and the coverage check of its section. They all write the same two files, so they form a chain.",
        ),
        *verdict("python3 -m unittest passes", "python3 -m confcheck.coverage: 0 missing"),
    ]
    digest = [
        reply(
            content="Task: add a validation rule and two test cases for every key in docs/keys.md, section by section, "
            "in confcheck/schema.py (above '# end of <section>') and tests/test_rules.py (above '# end of cases'). "
            "Rule types: Bool(), Choice(...), IntRange(lo, hi), Duration(), Text(255) from confcheck/types.py. Done "
            "so far: every section before the current step, each verified with python3 -m unittest -q "
            "tests.test_rules and python3 -m confcheck.coverage <section> (0 missing). Nothing failed. Remaining: the "
            "keys of the current step and the steps after it."
        )
    ]
    total = sum(len(f) for f in SECTIONS.values())
    return scenario(
        "long-session",
        "A long executor session: 130 documented config keys, one edit-and-test cycle each, across compaction",
        "A configuration validator missing rules for 130 documented keys. Ten chained steps, one per section; the "
        "executor adds each key's rule and test cases and runs the tests after every key: over 400 executor requests "
        "in one conversation whose context grows mostly with the model's own output (reasoning and edits, which the "
        "cache hits when re-sent) and passes the compaction threshold of its context window once. The compaction "
        "digest is scripted. This is the scenario behind the cache figures of bench/scenario_figures.py.",
        f"Add a validation rule and two test cases for each of the {total} configuration keys documented in "
        "docs/keys.md that confcheck/schema.py does not cover yet.",
        conf_workspace(),
        planner,
        executor,
        {
            "status": "complete",
            "steps_done": len(SECTIONS),
            "escalations": 0,
            "replans": 0,
            "compactions": 1,
            "min_requests": {"executor": 150},
            "commands": ["python3 -m unittest -q", "python3 -m confcheck.coverage"],
            "file_patterns": {"confcheck/schema.py": '"scheduler.pause_on_error": Bool\\(\\)'},
        },
        settings={"context_window": 225_000},
        digest=digest,
    )
