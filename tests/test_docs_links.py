"""README is for a newcomer's first sitting and the rest lives in ``docs/``: every relative link of README,
CONTRIBUTING and the pages under ``docs/`` reaches a file (and a heading, when it names one), every page of ``docs/``
is linked from README, and README stays short."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
MAX_README_LINES = 220
PENDING: set[str] = set()
"""Pages README already links that another branch is writing; a pending page that exists is checked like any other.
Remove its name here once it has landed."""

_FENCE = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)
_CODE = re.compile(r"`[^`\n]*`")
_LINK = re.compile(r"\]\(([^)\s]+)\)")
_HEADING = re.compile(r"^#{1,6} +(.+?) *#*$", re.MULTILINE)


def _pages() -> list[Path]:
    return [README, ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").glob("*.md"))]


def _prose(text: str) -> str:
    """The text without code blocks and inline code, where brackets and parentheses are not links."""
    return _CODE.sub("", _FENCE.sub("", text))


def _links(page: Path) -> list[str]:
    return [t for t in _LINK.findall(_prose(page.read_text(encoding="utf-8"))) if not re.match(r"[a-z]+:", t)]


def slug(heading: str) -> str:
    """A heading's anchor as GitHub makes it: lower case, punctuation but ``-`` and ``_`` dropped, spaces as ``-``."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    """Every anchor of a Markdown page; a heading seen again gets ``-1``, ``-2``, … as on GitHub."""
    seen: dict[str, int] = {}
    found = set()
    for heading in _HEADING.findall(_FENCE.sub("", page.read_text(encoding="utf-8"))):
        base = slug(heading)
        found.add(f"{base}-{seen[base]}" if base in seen else base)
        seen[base] = seen.get(base, 0) + 1
    return found


def test_slugs_are_githubs() -> None:
    assert slug("The conversation: `reasonix code`") == "the-conversation-reasonix-code"
    assert slug("2. Layout and import rules") == "2-layout-and-import-rules"
    assert slug("Long sessions (`bench/long_session_bench.py`)") == "long-sessions-benchlong_session_benchpy"


def test_a_repeated_heading_gets_a_numbered_anchor(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("# A\n## Notes\n```\n## not a heading\n```\n## Notes\n")
    assert anchors(page) == {"a", "notes", "notes-1"}


@pytest.mark.parametrize("page", _pages(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(page: Path) -> None:
    broken = []
    for link in _links(page):
        path, _, anchor = link.partition("#")
        target = (page.parent / path).resolve() if path else page
        name = str(target.relative_to(ROOT)) if target.is_relative_to(ROOT) else str(target)
        if not target.exists():
            if name not in PENDING:
                broken.append(f"{link}: no such file")
        elif anchor and (target.suffix != ".md" or anchor not in anchors(target)):
            broken.append(f"{link}: no heading with that anchor")
    assert broken == []


def test_every_page_of_docs_is_linked_from_the_readme() -> None:
    linked = {(ROOT / link.partition("#")[0]).resolve() for link in _links(README)}
    assert [str(p.relative_to(ROOT)) for p in sorted((ROOT / "docs").glob("*.md")) if p not in linked] == []


def test_the_readme_stays_short() -> None:
    """What a newcomer needs in one sitting; the guide, the reference and the figures are pages of ``docs/``."""
    assert len(README.read_text(encoding="utf-8").splitlines()) <= MAX_README_LINES


def test_ci_runs_the_readme_test_command() -> None:
    """The second of README's two commands is the line ``.ci/run`` runs, so CI proves what a newcomer types."""
    blocks = re.findall(r"^```sh\n(.*?)\n```", README.read_text(encoding="utf-8"), re.MULTILINE | re.DOTALL)
    test_command = next(b for b in blocks if b.endswith("pytest"))
    assert test_command in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
