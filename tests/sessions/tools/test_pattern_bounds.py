"""Path patterns that backtrack without end stop within their bound (issue 43 item 18): a 28-star glob ran past 60 s
on ``glob`` and on grep's ``glob`` argument, and a cloned repository's ``.gitignore`` can hold such a line too. Each
call now ends with an error the model reads, naming the pattern; real files, both listings, the real tools."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
import trio

from sessions.tools import ToolContext, default_registry
from sessions.tools.base import ToolLimits
from sessions.tools.search.ripgrep import find_rg
from tests.support.tools import call

BACKENDS = [
    pytest.param(False, id="python"),
    pytest.param(True, id="ripgrep", marks=pytest.mark.skipif(find_rg() is None, reason="ripgrep is not installed")),
]
STARS = "*a" * 28 + "b"  # [^/]*a … 28 times, then b: Python's re backtracks through every split of a long name
LONG_NAME = "a" * 40 + "bc.txt"


def _ctx(ws: Path, bound_s: float | None = None) -> ToolContext:
    if bound_s is None:
        return ToolContext(root=ws)  # the default limits
    return ToolContext(root=ws, limits=replace(ToolLimits(), match_timeout_s=bound_s))


def _tree(ws: Path) -> None:
    (ws / "src").mkdir()
    (ws / "src" / LONG_NAME).write_text("needle\n")
    (ws / "src" / "main.py").write_text("needle\n")


@pytest.mark.parametrize("use_rg", BACKENDS)
async def test_a_glob_with_many_stars_answers_at_once(ws: Path, use_rg: bool) -> None:
    _tree(ws)
    registry = default_registry(use_ripgrep=use_rg)
    with trio.fail_after(60):  # with Python's re the match ran for hours
        result = await call(registry, _ctx(ws), "glob", pattern=STARS)
        assert result.content == f"no files match {STARS!r} under ."
        found = await call(registry, _ctx(ws), "glob", pattern="*a" * 28 + "*.txt")
        assert found.content == f"src/{LONG_NAME}"


@pytest.mark.parametrize("use_rg", BACKENDS)
async def test_greps_glob_argument_with_many_stars_answers_at_once(ws: Path, use_rg: bool) -> None:
    _tree(ws)
    registry = default_registry(use_ripgrep=use_rg)
    with trio.fail_after(60):
        result = await call(registry, _ctx(ws), "grep", pattern="needle", glob=STARS)
    assert result.content == "no matches for 'needle' in ."


@pytest.mark.parametrize("use_rg", BACKENDS)
async def test_a_gitignore_line_with_many_stars_answers_at_once(ws: Path, use_rg: bool) -> None:
    _tree(ws)
    (ws / "src" / ".gitignore").write_text(STARS + "\n")
    registry = default_registry(use_ripgrep=use_rg)
    with trio.fail_after(60):
        listed = await call(registry, _ctx(ws), "glob", pattern="src/**/*.txt")
        searched = await call(registry, _ctx(ws), "grep", pattern="needle", path="src")
    assert listed.content == f"src/{LONG_NAME}"
    assert searched.content == f"src/{LONG_NAME}:1:needle\nsrc/main.py:1:needle"


@pytest.mark.parametrize("use_rg", BACKENDS)
async def test_matching_past_the_bound_is_an_error_that_names_the_pattern(ws: Path, use_rg: bool) -> None:
    """The bound itself (the regex engine's repeat guards answer the patterns above at once; whatever still
    backtracks stops here): a budget already spent stops the first match."""
    _tree(ws)
    (ws / ".gitignore").write_text("*.log\n")
    registry = default_registry(use_ripgrep=use_rg)
    listed = await call(registry, _ctx(ws, 0), "glob", pattern="*.py")
    assert listed.is_error
    assert listed.content.startswith(
        "matching file names against the rules of ./.gitignore took more than 0 s and was stopped: a pattern with "
        "many '*' backtracks without end on long names; use fewer wildcards, or a literal part of the name"
    ) or listed.content.startswith("matching file names against the glob '*.py' took more than 0 s")
    searched = await call(registry, _ctx(ws, 0), "grep", pattern="needle", glob="*.py")
    assert searched.is_error and "took more than 0 s and was stopped" in searched.content
