"""Writes the scripted scenarios of this library as JSON (``python3 -m scenarios.library._build [NAME ...]``).

The JSON files are what ``reasonix replay`` and the tests read; this script is how they are written, so a change to
a workspace or a reply is made here and the files regenerated. Stdlib only. Every scenario is ``origin: scripted``:
the replies are written by hand to exercise one behaviour of the orchestrator; they are not a model.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from scenarios.library._repos import (
    CSVSUM_FIXED,
    CSVSUM_SKIP_BLANK,
    CSVSUM_STRIP_QUOTES,
    GET,
    GET_TEST,
    INTERPOLATE,
    INTERPOLATE_TEST,
    INTERVALS,
    INTERVALS_MERGE,
    INTERVALS_TEST_TOTAL,
    LOAD,
    LOAD_TEST,
    MASS_TEST,
    SLUG_FIXED,
    TEMPERATURE,
    TEMPERATURE_TEST,
    UNITS,
    UNITS_SIGNIFICANT,
    UNITS_SIGNIFICANT_TEST,
    UNITS_WITH_MASS,
    csvsum_workspace,
    iniconf_workspace,
    intervals_workspace,
    slug_workspace,
    units_workspace,
)

HERE = Path(__file__).parent
PLANNER = "You are the planner of Reasonix"
EXECUTOR = "You are the executor of Reasonix"
DIGEST = "You compress the history"

J = dict[str, Any]


def call(name: str, **arguments: Any) -> J:
    return {"name": name, "arguments": arguments}


def reply(*calls: J, content: str = "", reasoning: str = "", **extra: Any) -> J:
    out: J = {}
    if reasoning:
        out["reasoning"] = reasoning
    if content:
        out["content"] = content
    if calls:
        out["tool_calls"] = list(calls)
    out.update(extra)
    return out


def step(
    sid: str,
    title: str,
    instructions: str,
    *,
    deps: Iterable[str] = (),
    reads: Iterable[str] = (),
    writes: Iterable[str] = (),
    verify: Iterable[str] = (),
    acceptance: Iterable[str] = (),
    **extra: Any,
) -> J:
    out: J = {
        "id": sid,
        "title": title,
        "instructions": instructions,
        "depends_on": list(deps),
        "reads": list(reads),
        "writes": list(writes),
        "acceptance": list(acceptance),
        "verify": [{"command": v} for v in verify],
    }
    out.update(extra)
    return out


def report(sid: str, summary: str, *evidence: str, status: str = "done") -> list[J]:
    """report_step: its result ends the executor's turn, so no closing reply follows (DESIGN §5 "Turn boundaries")."""
    return [reply(call("report_step", step_id=sid, status=status, summary=summary, evidence=list(evidence)))]


def verdict(*evidence: str) -> list[J]:
    """goal_verdict: its result ends the planner's turn."""
    return [reply(call("goal_verdict", verdict="complete", evidence=list(evidence)), reasoning="All steps verified.")]


def submit(objective: str, steps: list[J], *, tool: str = "submit_plan", reasoning: str = "", **extra: Any) -> J:
    return reply(call(tool, objective=objective, steps=steps, **extra), reasoning=reasoning)


def edit(path: str, old: str, new: str) -> J:
    return call("edit_file", path=path, edits=[{"old": old, "new": new}])


#: The cache guard and the cost ceiling of each scenario: the hit ratios measured with the emulator (cache unit
#: 128, a cold cache at the start) minus 0.02 (0.002 for the long session), and 1.5 x the measured cost at peak
#: prices. Short sessions sit at 60-95 %: their first request misses the whole prefix. Re-measure after a change
#: that legitimately moves them.
GUARDS: dict[str, J] = {
    "api-faults": {"min_hit_ratio": {"executor": 0.93, "planner": 0.62, "overall": 0.73}, "max_cost_usd": 0.0022},
    "budget-pause-resume": {
        "min_hit_ratio": {"executor": 0.81, "planner": 0.62, "overall": 0.73},
        "max_cost_usd": 0.004,
    },
    "call-storm": {"min_hit_ratio": {"executor": 0.8, "planner": 0.6, "overall": 0.73}, "max_cost_usd": 0.0038},
    "cyclic-plan": {"min_hit_ratio": {"executor": 0.76, "planner": 0.7, "overall": 0.73}, "max_cost_usd": 0.004},
    "executor-escalation": {
        "min_hit_ratio": {"executor": 0.74, "planner": 0.63, "overall": 0.71},
        "max_cost_usd": 0.0093,
    },
    "failure-escalation": {
        "min_hit_ratio": {"executor": 0.62, "planner": 0.61, "overall": 0.62},
        "max_cost_usd": 0.0077,
    },
    "flagship": {"min_hit_ratio": {"executor": 0.84, "planner": 0.7, "overall": 0.81}, "max_cost_usd": 0.015},
    "long-session": {
        "min_hit_ratio": {"executor": 0.995, "planner": 0.68, "overall": 0.994},
        "min_hit_ratio_after_first": {"executor": 0.995, "planner": 0.778},
        "max_cost_usd": 0.71,
    },
    "planner-escalation": {"min_hit_ratio": {"executor": 0.86, "planner": 0.42, "overall": 0.7}, "max_cost_usd": 0.012},
    "reasoning-scavenge": {
        "min_hit_ratio": {"executor": 0.77, "planner": 0.63, "overall": 0.71},
        "max_cost_usd": 0.0035,
    },
    "review-revise": {"min_hit_ratio": {"executor": 0.77, "planner": 0.76, "overall": 0.76}, "max_cost_usd": 0.0044},
    "truncated-arguments": {
        "min_hit_ratio": {"executor": 0.72, "planner": 0.61, "overall": 0.66},
        "max_cost_usd": 0.003,
    },
    "verify-retry-replan": {
        "min_hit_ratio": {"executor": 0.85, "planner": 0.73, "overall": 0.8},
        "max_cost_usd": 0.0053,
    },
}


def scenario(
    name: str,
    title: str,
    description: str,
    objective: str,
    workspace: dict[str, str],
    planner: list[J],
    executor: list[J],
    expect: J,
    *,
    settings: J | None = None,
    review: list[J] | None = None,
    resume: J | None = None,
    digest: list[J] | None = None,
) -> J:
    sessions: list[J] = [
        {"key": "planner", "system_contains": PLANNER, "replies": planner},
        {"key": "executor", "system_contains": EXECUTOR, "replies": executor},
    ]
    if digest is not None:
        sessions.append({"key": "digest", "system_contains": DIGEST, "replies": digest})
    out: J = {
        "name": name,
        "title": title,
        "description": description,
        "origin": "scripted",
        "command": "goal",
        "objective": objective,
        "workspace": workspace,
        "settings": settings or {},
        "script": {"version": 1, "sessions": sessions},
        "review": review or [],
        "expect": {**expect, **GUARDS.get(name, {})},
    }
    if resume is not None:
        out["resume"] = resume
    return out


# ============================================================================================== workspaces

TEXTSTATS_CORE = '''\
"""Word statistics for plain text."""


def words(text):
    """The lower-cased words of ``text``; punctuation is not part of a word."""
    return text.lower().split()


def word_counts(text):
    """How often each word occurs."""
    counts = {}
    for word in words(text):
        counts[word] = counts.get(word, 0) + 1
    return counts
'''
DOCLINE = '"""Word statistics for plain text."""\n'
WORD_PATTERN = '\nimport re\n\nWORD = re.compile(r"[a-z0-9]+(?:\'[a-z]+)?")\n'
TEXTSTATS_CORE_FIXED = TEXTSTATS_CORE.replace(DOCLINE, DOCLINE + WORD_PATTERN).replace(
    "    return text.lower().split()\n", "    return WORD.findall(text.lower())\n"
)
TEXTSTATS_TEST_CORE = """\
import unittest

from textstats.core import word_counts, words


class WordsTest(unittest.TestCase):
    def test_lower_case(self):
        self.assertEqual(words("The Cat"), ["the", "cat"])

    def test_punctuation_is_not_part_of_a_word(self):
        self.assertEqual(words("Hello, world! It's fine."), ["hello", "world", "it's", "fine"])

    def test_counts(self):
        self.assertEqual(word_counts("a b a. B!"), {"a": 2, "b": 2})


if __name__ == "__main__":
    unittest.main()
"""


def textstats_workspace() -> dict[str, str]:
    return {
        "README.md": "# textstats\n\nWord statistics for plain text files.\n\nRun the tests: `python3 -m unittest`\n",
        "textstats/__init__.py": '"""Word statistics for plain text."""\n\n'
        "from textstats.core import word_counts, words\n\n"
        '__all__ = ["word_counts", "words"]\n',
        "textstats/core.py": TEXTSTATS_CORE,
        "tests/__init__.py": "",
        "tests/test_core.py": TEXTSTATS_TEST_CORE,
    }


# ================================================================================================ flagship

RANK = '''\
"""Ranking words by frequency."""

from textstats.core import word_counts


def top_words(text, n=10):
    """The ``n`` most frequent words as (word, count) pairs: most frequent first, ties in alphabetical order."""
    counts = word_counts(text)
    return sorted(counts.items(), key=lambda item: (-item[1], item[0]))[:n]
'''
TEST_RANK = """\
import unittest

from textstats.rank import top_words


class TopWordsTest(unittest.TestCase):
    def test_most_frequent_first(self):
        self.assertEqual(top_words("b a b c b a", 2), [("b", 3), ("a", 2)])

    def test_ties_are_alphabetical(self):
        self.assertEqual(top_words("pear apple fig", 3), [("apple", 1), ("fig", 1), ("pear", 1)])

    def test_empty_text(self):
        self.assertEqual(top_words(""), [])


if __name__ == "__main__":
    unittest.main()
"""
SUMMARY = '''\
"""A one-line summary of a text."""

from textstats.core import words


def summary(text):
    """Lines, words and distinct words of ``text``."""
    found = words(text)
    return {"lines": len(text.splitlines()), "words": len(found), "distinct": len(set(found))}
'''
TEST_SUMMARY = """\
import unittest

from textstats.summary import summary


class SummaryTest(unittest.TestCase):
    def test_counts(self):
        self.assertEqual(summary("a b\\nb c\\n"), {"lines": 2, "words": 4, "distinct": 3})


if __name__ == "__main__":
    unittest.main()
"""
MAIN = '''\
"""python3 -m textstats FILE: a summary line and the five most frequent words."""

import sys

from textstats.rank import top_words
from textstats.summary import summary


def main(argv):
    if len(argv) != 1:
        print("usage: python3 -m textstats FILE", file=sys.stderr)
        return 2
    with open(argv[0], encoding="utf-8") as handle:
        text = handle.read()
    s = summary(text)
    print(f"{s['lines']} lines, {s['words']} words, {s['distinct']} distinct")
    for word, count in top_words(text, 5):
        print(f"{count:6d} {word}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
'''
TEST_CLI = """\
import subprocess
import sys
import tempfile
import unittest


class CliTest(unittest.TestCase):
    def test_prints_summary_and_top_words(self):
        with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as handle:
            handle.write("to be or not to be\\n")
        out = subprocess.run(
            [sys.executable, "-m", "textstats", handle.name], capture_output=True, text=True, check=True
        ).stdout.splitlines()
        self.assertEqual(out[0], "1 lines, 6 words, 4 distinct")
        self.assertEqual(out[1].split(), ["2", "be"])

    def test_usage(self):
        done = subprocess.run([sys.executable, "-m", "textstats"], capture_output=True, text=True)
        self.assertEqual(done.returncode, 2)


if __name__ == "__main__":
    unittest.main()
"""
FLAGSHIP_OBJECTIVE = (
    "Fix the failing test in tests/test_core.py (punctuation ends up inside words), then add top_words(text, n) "
    "(most frequent first, ties alphabetical), a summary(text) with lines/words/distinct counts, and a command line "
    "`python3 -m textstats FILE` that prints the summary and the five most frequent words. Tests for each part."
)


def flagship() -> J:
    s1 = step(
        "S1",
        "Fix words() so punctuation is not part of a word",
        "In textstats/core.py, make words() find words with a regular expression (letters, digits, an inner "
        "apostrophe) instead of str.split, so tests/test_core.py passes.",
        reads=["textstats/core.py", "tests/test_core.py"],
        writes=["textstats/core.py"],
        acceptance=["tests/test_core.py passes"],
        verify=["python3 -m unittest tests.test_core"],
    )
    s2 = step(
        "S2",
        "Add top_words(text, n)",
        "Create textstats/rank.py with top_words(text, n=10) returning (word, count) pairs, most frequent first and "
        "ties in alphabetical order; add tests/test_rank.py.",
        deps=["S1"],
        writes=["textstats/rank.py", "tests/test_rank.py"],
        acceptance=["ties are ordered alphabetically", "empty text gives []"],
        verify=["python3 -m unittest tests.test_rank"],
    )
    s3 = step(
        "S3",
        "Add summary(text)",
        "Create textstats/summary.py with summary(text) -> {lines, words, distinct}; add tests/test_summary.py.",
        deps=["S1"],
        writes=["textstats/summary.py", "tests/test_summary.py"],
        verify=["python3 -m unittest tests.test_summary"],
    )
    s4 = step(
        "S4",
        "Add the command line python3 -m textstats FILE",
        "Create textstats/__main__.py printing the summary line and the five most frequent words; exit 2 with a usage "
        "line without a file. Add tests/test_cli.py. Run the whole suite.",
        deps=["S2", "S3"],
        writes=["textstats/__main__.py", "tests/test_cli.py"],
        verify=["python3 -m unittest", "python3 -m textstats README.md"],
    )
    planner = [
        reply(call("list_dir", path="."), reasoning="Start with the layout of the package."),
        reply(
            call("read_file", path="textstats/core.py"),
            call("read_file", path="tests/test_core.py"),
            reasoning="The failing test is about punctuation; read the code and the test together.",
        ),
        submit(
            "Fix punctuation in words(); add top_words, summary and a command line, with tests",
            [s1, s2, s3, s4],
            reasoning="A diamond: the fix first; ranking and summary are independent; the CLI needs both.",
        ),
        *verdict("python3 -m unittest passes (4 test modules)", "python3 -m textstats README.md prints the summary"),
    ]
    executor = [
        # S1
        reply(call("read_file", path="textstats/core.py"), reasoning="Read words() before changing it."),
        reply(
            edit("textstats/core.py", DOCLINE, DOCLINE + WORD_PATTERN),
            reasoning="Add a word pattern at the top of the module.",
        ),
        reply(
            edit("textstats/core.py", "    return text.lower().split()\n", "    return WORD.findall(text.lower())\n"),
            reasoning="Use it in words().",
        ),
        reply(call("bash", command="python3 -m unittest tests.test_core"), reasoning="Run the step's test."),
        *report("S1", "words() uses a regex; punctuation no longer sticks to words", "tests.test_core: 3 tests OK"),
        # S2: the flash reply starts with the marker; the identical request goes to pro, which does the step.
        reply(
            reasoning="Ties must be ordered alphabetically while counts sort descending; I am not sure of the key.",
            content="<<<NEEDS_PRO: sort order with ties (descending count, ascending word) must be exactly right>>>",
        ),
        reply(
            call("write_file", path="textstats/rank.py", content=RANK),
            reasoning="Sort by (-count, word): descending counts, ties ascending. Slice to n.",
        ),
        reply(call("write_file", path="tests/test_rank.py", content=TEST_RANK)),
        reply(call("bash", command="python3 -m unittest tests.test_rank")),
        *report("S2", "top_words sorts by (-count, word)", "tests.test_rank: 3 tests OK"),
        # S3
        reply(call("write_file", path="textstats/summary.py", content=SUMMARY), reasoning="Small and direct."),
        reply(call("write_file", path="tests/test_summary.py", content=TEST_SUMMARY)),
        reply(call("bash", command="python3 -m unittest tests.test_summary")),
        *report("S3", "summary() counts lines, words, distinct words", "tests.test_summary: OK"),
        # S4
        reply(call("write_file", path="textstats/__main__.py", content=MAIN), reasoning="The CLI joins S2 and S3."),
        reply(call("write_file", path="tests/test_cli.py", content=TEST_CLI)),
        reply(call("bash", command="python3 -m unittest && python3 -m textstats README.md")),
        *report("S4", "python3 -m textstats FILE prints the summary and top five", "python3 -m unittest: 9 tests OK"),
    ]
    return scenario(
        "flagship",
        "Fix a failing test and grow a small package (the newcomer demo)",
        "A Python package whose punctuation test fails. The planner reads it and submits a 4-step diamond plan (fix; "
        "ranking and summary independent, one wave run one step at a time (parallel = 1); a CLI joining both). "
        "Review is automatic (--yes). The executor "
        "fixes the bug, escalates the ranking step to pro with the <<<NEEDS_PRO>>> marker, and the supervisor "
        "verifies each step by running its tests. Scripted replies: this is a demo of the orchestration, not a model.",
        FLAGSHIP_OBJECTIVE,
        textstats_workspace(),
        planner,
        executor,
        {
            "status": "complete",
            "steps_done": 4,
            "escalations": 1,
            "replans": 0,
            "files": {"textstats/rank.py": RANK, "textstats/__main__.py": MAIN},
            "commands": ["python3 -m unittest", "python3 -m textstats README.md"],
        },
    )


# ============================================================================================ long session

SECTIONS: dict[str, list[str]] = {
    "server": [
        "port",
        "host",
        "workers",
        "backlog",
        "keepalive_timeout",
        "request_timeout",
        "max_body_kb",
        "tls",
        "tls_min_version",
        "access_log",
        "gzip",
        "gzip_level",
        "proxy_protocol",
    ],
    "database": [
        "host",
        "port",
        "name",
        "user",
        "pool_size",
        "pool_timeout",
        "statement_timeout",
        "sslmode",
        "read_replicas",
        "retry_attempts",
        "retry_backoff",
        "migrations_auto",
        "echo_sql",
    ],
    "cache": [
        "backend",
        "ttl",
        "max_entries",
        "eviction",
        "namespace",
        "compress",
        "compress_threshold_kb",
        "warmup",
        "stale_while_revalidate",
        "redis_db",
        "redis_timeout",
        "local_size",
        "metrics",
    ],
    "queue": [
        "backend",
        "concurrency",
        "prefetch",
        "visibility_timeout",
        "max_retries",
        "retry_delay",
        "dead_letter",
        "priority_levels",
        "batch_size",
        "poll_interval",
        "ack_mode",
        "durable",
        "max_message_kb",
    ],
    "auth": [
        "provider",
        "session_ttl",
        "cookie_secure",
        "cookie_samesite",
        "password_min_length",
        "lockout_attempts",
        "lockout_window",
        "mfa",
        "token_issuer",
        "token_ttl",
        "refresh_ttl",
        "jwks_refresh",
        "allow_signup",
    ],
    "logging": [
        "level",
        "format",
        "color",
        "file",
        "rotate",
        "max_size_mb",
        "backups",
        "utc",
        "include_caller",
        "sample_rate_pct",
        "slow_request_ms",
        "redact",
        "stderr_level",
    ],
    "metrics": [
        "enabled",
        "backend",
        "port",
        "path",
        "interval",
        "histogram_buckets",
        "prefix",
        "include_runtime",
        "push_gateway",
        "push_interval",
        "labels_max",
        "retention_days",
        "exemplars",
    ],
    "storage": [
        "backend",
        "root",
        "bucket",
        "region",
        "multipart_threshold_mb",
        "part_size_mb",
        "max_concurrency",
        "checksum",
        "encryption",
        "public_read",
        "retention_days",
        "versioning",
        "timeout",
    ],
    "mailer": [
        "backend",
        "host",
        "port",
        "tls",
        "user",
        "from_name",
        "max_per_minute",
        "retry_attempts",
        "retry_delay",
        "timeout",
        "template_dir",
        "bounce_tracking",
        "sandbox",
    ],
    "scheduler": [
        "enabled",
        "timezone",
        "tick",
        "max_jobs",
        "jitter",
        "misfire_grace",
        "coalesce",
        "lock_backend",
        "lock_ttl",
        "history_days",
        "catch_up",
        "workers",
        "pause_on_error",
    ],
}
_BOOLS = {
    "tls",
    "access_log",
    "gzip",
    "proxy_protocol",
    "migrations_auto",
    "echo_sql",
    "compress",
    "warmup",
    "stale_while_revalidate",
    "metrics",
    "dead_letter",
    "durable",
    "cookie_secure",
    "mfa",
    "allow_signup",
    "color",
    "rotate",
    "utc",
    "include_caller",
    "redact",
    "enabled",
    "include_runtime",
    "exemplars",
    "checksum",
    "encryption",
    "public_read",
    "versioning",
    "bounce_tracking",
    "sandbox",
    "coalesce",
    "catch_up",
    "pause_on_error",
    "read_replicas",
}
_CHOICES: dict[str, tuple[str, ...]] = {
    "backend": ("memory", "redis", "sqs", "s3", "smtp", "prometheus", "local"),
    "tls_min_version": ("1.2", "1.3"),
    "sslmode": ("disable", "prefer", "require", "verify-full"),
    "eviction": ("lru", "lfu", "fifo"),
    "ack_mode": ("auto", "manual"),
    "provider": ("local", "oidc", "ldap"),
    "cookie_samesite": ("lax", "strict", "none"),
    "level": ("debug", "info", "warning", "error"),
    "stderr_level": ("debug", "info", "warning", "error"),
    "format": ("text", "json"),
    "lock_backend": ("none", "redis", "database"),
    "region": ("eu-west-1", "eu-central-1", "us-east-1", "ap-southeast-1"),
}
_DURATIONS = ("timeout", "ttl", "interval", "delay", "tick", "window", "grace", "backoff", "jitter", "refresh")
_RANGES: dict[str, tuple[int, int]] = {
    "port": (1, 65535),
    "workers": (1, 256),
    "backlog": (1, 65535),
    "max_body_kb": (1, 1048576),
    "gzip_level": (1, 9),
    "pool_size": (1, 512),
    "retry_attempts": (0, 20),
    "max_entries": (1, 10000000),
    "compress_threshold_kb": (1, 65536),
    "redis_db": (0, 15),
    "local_size": (0, 1000000),
    "concurrency": (1, 1024),
    "prefetch": (1, 10000),
    "max_retries": (0, 100),
    "priority_levels": (1, 10),
    "batch_size": (1, 10000),
    "max_message_kb": (1, 262144),
    "password_min_length": (8, 128),
    "lockout_attempts": (1, 100),
    "max_size_mb": (1, 102400),
    "backups": (0, 1000),
    "sample_rate_pct": (0, 100),
    "slow_request_ms": (1, 600000),
    "histogram_buckets": (1, 64),
    "labels_max": (1, 1000),
    "retention_days": (1, 3650),
    "multipart_threshold_mb": (5, 5120),
    "part_size_mb": (5, 5120),
    "max_concurrency": (1, 256),
    "max_per_minute": (1, 100000),
    "max_jobs": (1, 100000),
    "history_days": (1, 3650),
}


def _rule(field: str) -> tuple[str, str, tuple[Any, bool], tuple[Any, bool]]:
    """(rule source, documentation, a valid case, an invalid case) for one field name."""
    if field in _BOOLS:
        return "Bool()", "true or false", (True, True), ("yes", False)
    if field in _CHOICES:
        opts = _CHOICES[field]
        listed = ", ".join(f'"{o}"' for o in opts)
        return f"Choice({listed})", "one of " + ", ".join(f"`{o}`" for o in opts), (opts[-1], True), ("other", False)
    if field in _RANGES:
        lo, hi = _RANGES[field]
        return f"IntRange({lo}, {hi})", f"an integer from {lo} to {hi}", (hi, True), (hi + 1, False)
    if any(field.endswith(d) or field.startswith(d) for d in _DURATIONS):
        return "Duration()", "a duration such as `500ms`, `30s`, `5m` or `2h`", ("45s", True), ("45", False)
    return "Text(255)", "non-empty text of at most 255 characters", ("main", True), ("", False)


CONF_TYPES = '''\
"""The rule types of the configuration schema: each has check(value) -> bool."""

import re

_DURATION = re.compile(r"[0-9]+(ms|s|m|h)")


class IntRange:
    def __init__(self, lo, hi):
        self.lo, self.hi = lo, hi

    def check(self, value):
        return isinstance(value, int) and not isinstance(value, bool) and self.lo <= value <= self.hi


class Bool:
    def check(self, value):
        return isinstance(value, bool)


class Choice:
    def __init__(self, *options):
        self.options = options

    def check(self, value):
        return value in self.options


class Duration:
    def check(self, value):
        return isinstance(value, str) and _DURATION.fullmatch(value) is not None


class Text:
    def __init__(self, max_len=255):
        self.max_len = max_len

    def check(self, value):
        return isinstance(value, str) and 0 < len(value) <= self.max_len
'''
CONF_COVERAGE = '''\
"""python3 -m confcheck.coverage [SECTION ...]: every key documented in docs/keys.md has a rule (exit 1 if not)."""

import re
import sys
from pathlib import Path

from confcheck.schema import RULES

DOC = Path(__file__).resolve().parent.parent / "docs" / "keys.md"


def documented(sections):
    keys = re.findall(r"^- `([a-z_]+[.][a-z_]+)`", DOC.read_text(encoding="utf-8"), re.M)
    return [k for k in keys if not sections or k.split(".")[0] in sections]


def main(argv):
    missing = [k for k in documented(argv) if k not in RULES]
    for key in missing:
        print(f"no rule for {key}")
    print(f"{len(missing)} missing")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
'''
CONF_TEST = """\
import unittest

from confcheck.schema import validate

CASES = [
    # (key, value, valid)
    ("service.name", "billing", True),
    ("service.name", "", False),
    # end of cases
]


class RulesTest(unittest.TestCase):
    def test_cases(self):
        for key, value, valid in CASES:
            with self.subTest(key=key, value=value):
                self.assertEqual(validate(key, value), valid)

    def test_unknown_key(self):
        with self.assertRaises(KeyError):
            validate("nope.nothing", 1)


if __name__ == "__main__":
    unittest.main()
"""


def conf_schema() -> str:
    marks = "".join(f"    # {sec}\n    # end of {sec}\n" for sec in SECTIONS)
    return (
        '"""Validation rules for every configuration key of the service (documented in docs/keys.md)."""\n\n'
        "from confcheck.types import Bool, Choice, Duration, IntRange, Text\n\n"
        "RULES = {\n"
        '    "service.name": Text(64),\n'
        f"{marks}"
        "}\n\n\n"
        "def validate(key, value):\n"
        '    """True when value is valid for key; KeyError for a key the schema does not know."""\n'
        "    rule = RULES.get(key)\n"
        "    if rule is None:\n"
        '        raise KeyError(f"unknown configuration key: {key}")\n'
        "    return rule.check(value)\n"
    )


def conf_doc() -> str:
    intro = "Every key of `service.toml`, by section. `service.name`: the service name."
    lines = ["# Configuration keys", "", intro, ""]
    for sec, fields in SECTIONS.items():
        lines += [f"## {sec}", ""]
        lines += [f"- `{sec}.{f}`: {_rule(f)[1]}" for f in fields]
        lines.append("")
    return "\n".join(lines)


def conf_workspace() -> dict[str, str]:
    return {
        "README.md": "# confcheck\n\nValidates `service.toml` against the documented keys (docs/keys.md).\n\n"
        "Tests: `python3 -m unittest`. Coverage of the documentation: `python3 -m confcheck.coverage`.\n",
        "docs/keys.md": conf_doc(),
        "confcheck/__init__.py": "",
        "confcheck/types.py": CONF_TYPES,
        "confcheck/schema.py": conf_schema(),
        "confcheck/coverage.py": CONF_COVERAGE,
        "tests/__init__.py": "",
        "tests/test_rules.py": CONF_TEST,
    }


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
            rule, doc, (good, good_ok), (bad, bad_ok) = _rule(f)
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
        # attempt 2, after the supervisor's failed verification
        reply(
            edit("csvsum.py", CSVSUM_SKIP_BLANK, CSVSUM_STRIP_QUOTES),
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


# ================================================================================================== main

BUILDERS: list[Callable[[], J]] = [
    flagship,
    verify_retry_replan,
    planner_escalation,
    executor_escalation,
    failure_escalation,
    review_revise,
    cyclic_plan,
    truncated_arguments,
    reasoning_scavenge,
    call_storm,
    api_faults,
    budget_pause_resume,
    long_session,
]


def main(argv: list[str]) -> int:
    wanted = set(argv)
    for build in BUILDERS:
        data = build()
        if wanted and data["name"] not in wanted:
            continue
        path = HERE / f"{data['name']}.json"
        path.write_text(json.dumps(data, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {path.relative_to(HERE.parent.parent)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
