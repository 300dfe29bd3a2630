"""The flagship scenario (``reasonix replay``'s default, the newcomer demo): the ``textstats`` package fixed and grown
in four steps, one of them escalated to pro."""

from __future__ import annotations

from scenarios.library._script import J, call, edit, reply, report, scenario, step, submit, verdict

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
