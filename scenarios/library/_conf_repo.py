"""The long session's ``confcheck`` repository: its validator types, coverage script, tests, and the schema and
document built from the rules of :mod:`scenarios.library._conf_rules`."""

from __future__ import annotations

from scenarios.library._conf_rules import SECTIONS, key_rule

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
        lines += [f"- `{sec}.{f}`: {key_rule(f)[1]}" for f in fields]
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
