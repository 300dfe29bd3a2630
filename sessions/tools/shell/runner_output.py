"""Test-runner output folded for the model: failures and the summary in full, the passing noise in one line.

Output of the known shapes (pytest: its session header and final ``=== … in 0.52s ===`` line, or ``-q``'s bare
summary; unittest: ``Ran N tests in …`` then ``OK`` / ``FAILED (…)``) keeps every line but the progress of tests
that passed: pytest's ``file.py ....`` dot lines and ``-v`` ``PASSED`` / ``SKIPPED`` / ``XFAIL`` lines of its first
section, unittest's dot lines and ``… ok`` lines. Those become one line saying how many lines and tests were folded,
where the first of them stood. The failure sections, warnings, the short summary and the counts stay verbatim. Only
when folding saves :data:`FOLD_MIN_CHARS`; the bash tool keeps the whole output beside the journal (DESIGN §5).
"""

from __future__ import annotations

import re
from collections import Counter

FOLD_MIN_CHARS = 400

_PYTEST_FINAL = re.compile(
    r"^(=+ )?.*\b(passed|failed|errors?|skipped|no tests ran)\b.* in [\d.]+s( \([^)]*\))?( =+)?$"
)
_PYTEST_START = re.compile(r"^=+ test session starts =+$")
_SECTION = re.compile(r"^=+ (.+?) =+$")
_DOTS = re.compile(r"^(\S+\.py )?[.sxXfFE]+\s*(\[\s*\d+%\])?$")
_VERBOSE = re.compile(r"^\S+::\S+.* (PASSED|SKIPPED|XFAIL|XPASS)\b.*?(\[\s*\d+%\])?$")
_UNITTEST_RAN = re.compile(r"^Ran \d+ tests? in [\d.]+s$")
_UNITTEST_END = re.compile(r"^(OK|FAILED)( \(.*\))?$")
_UNITTEST_OK = re.compile(r"^\S+ \(.*\) \.\.\. (ok|skipped.*|expected failure)$")
_UNITTEST_DOTS = re.compile(r"^[.sxFEu]+$")
_DOT_NAMES = {".": "passed", "s": "skipped", "x": "xfailed", "X": "xpassed", "F": "failed", "E": "error"}


def _pytest_foldable(lines: list[str]) -> tuple[list[int], Counter[str]]:
    folded: list[int] = []
    counts: Counter[str] = Counter()
    section = "test session starts"
    for i, line in enumerate(lines):
        if (m := _SECTION.match(line)) and not _PYTEST_FINAL.match(line):
            section = m.group(1)
            continue
        if section != "test session starts":
            continue
        if _DOTS.match(line):
            marks = line.split(" [")[0].split(" ")[-1]
            counts.update(_DOT_NAMES[c] for c in marks)
            folded.append(i)
        elif m := _VERBOSE.match(line):
            counts[m.group(1).lower()] += 1
            folded.append(i)
    return folded, counts


def _unittest_foldable(lines: list[str]) -> tuple[list[int], Counter[str]]:
    folded: list[int] = []
    counts: Counter[str] = Counter()
    for i, line in enumerate(lines):
        if line.startswith(("=" * 20, "-" * 20)):
            break
        if _UNITTEST_DOTS.match(line):
            counts.update(_DOT_NAMES.get(c, "other") for c in line)
            folded.append(i)
        elif m := _UNITTEST_OK.match(line):
            counts["passed" if m.group(1) == "ok" else m.group(1).split()[0]] += 1
            folded.append(i)
    return folded, counts


def fold_test_output(text: str) -> str | None:
    """``text`` with the passing progress of a pytest or unittest run folded into one line, or None when it is not
    such a run or folding would save less than :data:`FOLD_MIN_CHARS`."""
    lines = text.split("\n")
    stripped = [line.rstrip() for line in lines]
    if any(_PYTEST_START.match(line) for line in stripped) or any(_PYTEST_FINAL.match(line) for line in stripped[-5:]):
        folded, counts = _pytest_foldable(stripped)
    elif any(_UNITTEST_RAN.match(line) for line in stripped) and any(_UNITTEST_END.match(s) for s in stripped[-5:]):
        folded, counts = _unittest_foldable(stripped)
    else:
        return None
    if sum(len(lines[i]) + 1 for i in folded) < FOLD_MIN_CHARS:
        return None
    tally = ", ".join(f"{n} {name}" for name, n in sorted(counts.items(), key=lambda item: (-item[1], item[0])))
    marker = f"[{len(folded)} lines of test progress folded ({tally}); failures and the summary follow in full]"
    drop = set(folded)
    out = [marker if i == folded[0] else line for i, line in enumerate(lines) if i == folded[0] or i not in drop]
    return "\n".join(out)
