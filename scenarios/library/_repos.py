"""Small realistic repositories for the scripted scenarios (see ``_build.py``): their files before the task, and the
code a correct change writes."""

from __future__ import annotations

# ------------------------------------------------------------------------------ csvsum: a CLI with a bug

CSVSUM = '''\
"""Sum a numeric column of a CSV file: python3 csvsum.py FILE COLUMN"""

import sys


def sum_column(lines, column):
    """The sum of ``column`` over the data rows of ``lines`` (the first line is the header)."""
    header = lines[0].rstrip("\\n").split(",")
    index = header.index(column)
    total = 0.0
    for line in lines[1:]:
        total += float(line.rstrip("\\n").split(",")[index])
    return total


def main(argv):
    if len(argv) != 2:
        print("usage: python3 csvsum.py FILE COLUMN", file=sys.stderr)
        return 2
    with open(argv[0], encoding="utf-8") as handle:
        lines = handle.readlines()
    print(f"{sum_column(lines, argv[1]):g}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
'''
CSVSUM_TEST = """\
import unittest

from csvsum import sum_column


class SumColumnTest(unittest.TestCase):
    def test_sums_a_column(self):
        self.assertEqual(sum_column(["a,b\\n", "1,2\\n", "3,4\\n"], "b"), 6.0)

    def test_blank_lines_are_skipped(self):
        self.assertEqual(sum_column(["a,b\\n", "1,2\\n", "\\n", "3,4\\n", "\\n"], "a"), 4.0)

    def test_quoted_fields_may_hold_commas(self):
        rows = ["name,amount\\n", '"Smith, J",2.5\\n', "Lee,1\\n"]
        self.assertEqual(sum_column(rows, "amount"), 3.5)


if __name__ == "__main__":
    unittest.main()
"""
CSVSUM_SKIP_BLANK = (
    "    for line in lines[1:]:\n"
    "        if not line.strip():\n"
    "            continue\n"
    '        total += float(line.rstrip("\\n").split(",")[index])\n'
)
CSVSUM_STRIP_QUOTES = (
    "    for line in lines[1:]:\n"
    "        if not line.strip():\n"
    "            continue\n"
    '        total += float(line.rstrip("\\n").replace(\'"\', \'\').split(",")[index])\n'
)
CSVSUM_CSV_FUNC = '''\
def sum_column(lines, column):
    """The sum of ``column`` over the data rows of ``lines`` (the first line is the header)."""
    rows = csv.reader(lines)
    index = next(rows).index(column)
    return sum(float(row[index]) for row in rows if row)
'''
CSVSUM_FIXED = CSVSUM.replace("import sys\n", "import csv\nimport sys\n").replace(
    CSVSUM[CSVSUM.index("def sum_column") : CSVSUM.index("def main")], CSVSUM_CSV_FUNC + "\n\n"
)


def csvsum_workspace() -> dict[str, str]:
    return {
        "README.md": "# csvsum\n\n`python3 csvsum.py FILE COLUMN` prints the sum of a numeric column.\n\n"
        "Tests: `python3 test_csvsum.py`\n",
        "csvsum.py": CSVSUM,
        "test_csvsum.py": CSVSUM_TEST,
        "sample.csv": 'name,amount\n"Smith, J",2.5\n\nLee,1\n',
    }


# --------------------------------------------------------------------- iniconf: a config parser missing a feature

INICONF_PARSER = '''\
"""A small INI-style configuration parser."""


def parse(text):
    """Sections of key = value pairs as {"section": {"key": "value"}}. Lines starting with # or ; are comments."""
    config = {}
    section = None
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("[") and line.endswith("]"):
            section = config.setdefault(line[1:-1].strip(), {})
            continue
        if section is None or "=" not in line:
            raise ValueError(f"line {number}: expected [section] or key = value")
        key, value = line.split("=", 1)
        section[key.strip()] = value.strip()
    return config
'''
INICONF_TEST = """\
import unittest

from iniconf.parser import parse


class ParseTest(unittest.TestCase):
    def test_sections_and_comments(self):
        text = "# service\\n[server]\\nhost = example.org\\nport=8080\\n; done\\n"
        self.assertEqual(parse(text), {"server": {"host": "example.org", "port": "8080"}})

    def test_key_outside_a_section(self):
        with self.assertRaises(ValueError):
            parse("host = x\\n")


if __name__ == "__main__":
    unittest.main()
"""
INTERPOLATE = '''\
"""${section.key} references between values, resolved once after parsing."""

import re

REF = re.compile(r"\\$\\{([A-Za-z0-9_]+)\\.([A-Za-z0-9_]+)\\}")


def interpolate(config):
    """A copy of ``config`` with every ${section.key} replaced by that key's (resolved) value.

    Raises ValueError for a reference to a missing key and for a reference cycle (the message names the cycle).
    """
    resolved = {}

    def value_of(section, key, chain):
        if (section, key) in resolved:
            return resolved[(section, key)]
        if (section, key) in chain:
            path = " -> ".join(f"{s}.{k}" for s, k in (*chain, (section, key)))
            raise ValueError(f"reference cycle: {path}")
        try:
            raw = config[section][key]
        except KeyError:
            raise ValueError(f"unknown reference ${{{section}.{key}}}") from None
        chain = (*chain, (section, key))
        value = REF.sub(lambda m: value_of(m.group(1), m.group(2), chain), raw)
        resolved[(section, key)] = value
        return value

    return {section: {key: value_of(section, key, ()) for key in keys} for section, keys in config.items()}
'''
INTERPOLATE_TEST = """\
import unittest

from iniconf.interpolate import interpolate


class InterpolateTest(unittest.TestCase):
    def test_references_resolve_transitively(self):
        config = {"paths": {"root": "/srv", "data": "${paths.root}/data", "cache": "${paths.data}/cache"}}
        self.assertEqual(interpolate(config)["paths"]["cache"], "/srv/data/cache")

    def test_unknown_reference(self):
        with self.assertRaisesRegex(ValueError, "unknown reference"):
            interpolate({"a": {"x": "${a.y}"}})

    def test_cycle_is_named(self):
        with self.assertRaisesRegex(ValueError, "a.x -> a.y -> a.x"):
            interpolate({"a": {"x": "${a.y}", "y": "${a.x}"}})


if __name__ == "__main__":
    unittest.main()
"""
LOAD = '''\
"""Loading a configuration file: parse, then resolve references."""

from iniconf.interpolate import interpolate
from iniconf.parser import parse


def load(path):
    with open(path, encoding="utf-8") as handle:
        return interpolate(parse(handle.read()))
'''
LOAD_TEST = """\
import os
import tempfile
import unittest

from iniconf.load import load


class LoadTest(unittest.TestCase):
    def test_load_resolves_references(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "app.ini")
            with open(path, "w", encoding="utf-8") as handle:
                handle.write("[paths]\\nroot = /srv\\nlogs = ${paths.root}/logs\\n")
            self.assertEqual(load(path), {"paths": {"root": "/srv", "logs": "/srv/logs"}})


if __name__ == "__main__":
    unittest.main()
"""
GET = '''\
"""Dotted access to a parsed configuration."""


def get(config, dotted, default=None):
    """config["section"]["key"] for "section.key", or ``default`` when either is missing."""
    section, _, key = dotted.partition(".")
    return config.get(section, {}).get(key, default)
'''
GET_TEST = """\
import unittest

from iniconf.get import get


class GetTest(unittest.TestCase):
    def test_present_and_missing(self):
        config = {"server": {"port": "8080"}}
        self.assertEqual(get(config, "server.port"), "8080")
        self.assertEqual(get(config, "server.host", "localhost"), "localhost")
        self.assertIsNone(get(config, "db.name"))


if __name__ == "__main__":
    unittest.main()
"""


def iniconf_workspace() -> dict[str, str]:
    return {
        "README.md": "# iniconf\n\nA small INI-style configuration parser.\n\nTests: `python3 -m unittest`\n",
        "iniconf/__init__.py": "",
        "iniconf/parser.py": INICONF_PARSER,
        "tests/__init__.py": "",
        "tests/test_parser.py": INICONF_TEST,
    }


# ------------------------------------------------------------------------------- intervals: a tricky algorithm

INTERVALS = '''\
"""Half-open intervals [start, end) as (start, end) tuples."""


def merge(intervals):
    """The union of ``intervals`` as sorted, non-overlapping intervals (touching ones are joined)."""
    raise NotImplementedError
'''
INTERVALS_MERGE = '''\
def merge(intervals):
    """The union of ``intervals`` as sorted, non-overlapping intervals (touching ones are joined)."""
    merged = []
    for start, end in sorted(i for i in intervals if i[0] < i[1]):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def total_length(intervals):
    """How much of the line ``intervals`` cover together."""
    return sum(end - start for start, end in merge(intervals))
'''
INTERVALS_TEST = """\
import unittest

from intervals import merge


class MergeTest(unittest.TestCase):
    def test_overlapping_and_unsorted(self):
        self.assertEqual(merge([(5, 8), (1, 3), (2, 4)]), [(1, 4), (5, 8)])

    def test_touching_intervals_join(self):
        self.assertEqual(merge([(1, 2), (2, 3)]), [(1, 3)])

    def test_contained_and_empty(self):
        self.assertEqual(merge([(1, 10), (2, 3), (4, 4)]), [(1, 10)])
        self.assertEqual(merge([]), [])


if __name__ == "__main__":
    unittest.main()
"""
INTERVALS_TEST_TOTAL = """\
import unittest

from intervals import total_length


class TotalLengthTest(unittest.TestCase):
    def test_overlaps_count_once(self):
        self.assertEqual(total_length([(0, 5), (3, 8), (10, 11)]), 9)


if __name__ == "__main__":
    unittest.main()
"""


def intervals_workspace() -> dict[str, str]:
    return {
        "README.md": "# intervals\n\nHalf-open integer intervals.\n\nTests: `python3 -m unittest`\n",
        "intervals.py": INTERVALS,
        "test_intervals.py": INTERVALS_TEST,
    }


# ---------------------------------------------------------------------------------------- slug: a unicode bug

SLUG = '''\
"""URL slugs for titles."""

import re


def slugify(title):
    """Lower-case ASCII words joined by single hyphens."""
    return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")
'''
SLUG_FIXED = '''\
"""URL slugs for titles."""

import re
import unicodedata


def slugify(title):
    """Lower-case ASCII words joined by single hyphens; accents are dropped (é -> e), not the letters."""
    ascii_text = unicodedata.normalize("NFKD", title).encode("ascii", "ignore").decode("ascii")
    return re.sub(r"[^a-z0-9]+", "-", ascii_text.lower()).strip("-")
'''
SLUG_TEST = """\
import unittest

from slug import slugify


class SlugifyTest(unittest.TestCase):
    def test_words(self):
        self.assertEqual(slugify("Hello, World!"), "hello-world")

    def test_accents_keep_their_letters(self):
        self.assertEqual(slugify("Crème brûlée à Paris"), "creme-brulee-a-paris")


if __name__ == "__main__":
    unittest.main()
"""


def slug_workspace() -> dict[str, str]:
    return {
        "README.md": "# slug\n\n`slugify(title)` for blog URLs.\n\nTests: `python3 test_slug.py`\n",
        "slug.py": SLUG,
        "test_slug.py": SLUG_TEST,
    }


# ------------------------------------------------------------------------------------ units: a converter library

UNITS = '''\
"""Unit conversion: convert(value, from_unit, to_unit)."""

LENGTH = {"mm": 0.001, "cm": 0.01, "m": 1.0, "km": 1000.0, "in": 0.0254, "ft": 0.3048, "mi": 1609.344}


def convert(value, from_unit, to_unit):
    """``value`` in ``from_unit`` expressed in ``to_unit``, rounded to 6 significant digits."""
    if from_unit not in LENGTH or to_unit not in LENGTH:
        raise ValueError(f"unknown unit: {from_unit if from_unit not in LENGTH else to_unit}")
    return round(value * LENGTH[from_unit] / LENGTH[to_unit], 6)
'''
UNITS_TEST = """\
import unittest

from units import convert


class LengthTest(unittest.TestCase):
    def test_metric(self):
        self.assertEqual(convert(1500, "m", "km"), 1.5)

    def test_imperial(self):
        self.assertEqual(convert(1, "ft", "in"), 12.0)

    def test_unknown_unit(self):
        with self.assertRaises(ValueError):
            convert(1, "m", "parsec")


if __name__ == "__main__":
    unittest.main()
"""
UNITS_SIGNIFICANT = '''\
def convert(value, from_unit, to_unit):
    """``value`` in ``from_unit`` expressed in ``to_unit``, rounded to 6 significant digits."""
    if from_unit not in LENGTH or to_unit not in LENGTH:
        raise ValueError(f"unknown unit: {from_unit if from_unit not in LENGTH else to_unit}")
    return float(f"{value * LENGTH[from_unit] / LENGTH[to_unit]:.6g}")
'''
UNITS_SIGNIFICANT_TEST = """\
import unittest

from units import convert


class SignificantDigitsTest(unittest.TestCase):
    def test_small_results_keep_six_significant_digits(self):
        self.assertEqual(convert(1, "mm", "mi"), 6.21371e-07)

    def test_large_results(self):
        self.assertEqual(convert(123456789, "mm", "m"), 123457.0)


if __name__ == "__main__":
    unittest.main()
"""
TEMPERATURE = '''\
"""Temperature conversion: not a ratio like lengths, so it has its own function."""

TO_KELVIN = {"C": lambda v: v + 273.15, "F": lambda v: (v - 32) * 5 / 9 + 273.15, "K": lambda v: v}
FROM_KELVIN = {"C": lambda k: k - 273.15, "F": lambda k: (k - 273.15) * 9 / 5 + 32, "K": lambda k: k}


def convert_temperature(value, from_unit, to_unit):
    """``value`` degrees in ``from_unit`` (C, F or K) in ``to_unit``, rounded to 6 decimal places."""
    if from_unit not in TO_KELVIN or to_unit not in TO_KELVIN:
        raise ValueError(f"unknown temperature unit: {from_unit if from_unit not in TO_KELVIN else to_unit}")
    return round(FROM_KELVIN[to_unit](TO_KELVIN[from_unit](value)), 6)
'''
TEMPERATURE_TEST = """\
import unittest

from temperature import convert_temperature


class TemperatureTest(unittest.TestCase):
    def test_fixed_points(self):
        self.assertEqual(convert_temperature(100, "C", "F"), 212.0)
        self.assertEqual(convert_temperature(0, "K", "C"), -273.15)

    def test_round_trips(self):
        for unit in ("C", "F", "K"):
            for other in ("C", "F", "K"):
                there = convert_temperature(36.6, unit, other)
                self.assertAlmostEqual(convert_temperature(there, other, unit), 36.6, places=5)


if __name__ == "__main__":
    unittest.main()
"""
MASS_LINE = 'MASS = {"mg": 0.000001, "g": 0.001, "kg": 1.0, "t": 1000.0, "oz": 0.028349523125, "lb": 0.45359237}\n'
UNITS_WITH_MASS = UNITS.replace(
    '"mi": 1609.344}\n',
    '"mi": 1609.344}\n' + MASS_LINE + "TABLES = (LENGTH, MASS)\n",
).replace(
    """    if from_unit not in LENGTH or to_unit not in LENGTH:
        raise ValueError(f"unknown unit: {from_unit if from_unit not in LENGTH else to_unit}")
    return round(value * LENGTH[from_unit] / LENGTH[to_unit], 6)
""",
    """    for table in TABLES:
        if from_unit in table and to_unit in table:
            return round(value * table[from_unit] / table[to_unit], 6)
    raise ValueError(f"unknown unit or units of different kinds: {from_unit}, {to_unit}")
""",
)
MASS_TEST = """\
import unittest

from units import convert


class MassTest(unittest.TestCase):
    def test_mass(self):
        self.assertEqual(convert(2, "kg", "g"), 2000.0)
        self.assertEqual(convert(1, "lb", "oz"), 16.0)

    def test_kinds_do_not_mix(self):
        with self.assertRaises(ValueError):
            convert(1, "kg", "m")


if __name__ == "__main__":
    unittest.main()
"""


def units_workspace() -> dict[str, str]:
    return {
        "README.md": "# units\n\n`convert(value, from_unit, to_unit)` for lengths.\n\nTests: `python3 -m unittest`\n",
        "units.py": UNITS,
        "test_units.py": UNITS_TEST,
    }
