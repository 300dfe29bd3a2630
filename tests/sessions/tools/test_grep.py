"""grep on real trees, through the pure-Python path (always) and ripgrep (when it is on PATH): same results."""

from __future__ import annotations

import random
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
import trio
from hypothesis import given
from hypothesis import strategies as st

from sessions.tools import ToolContext, ToolLimits, default_registry
from sessions.tools.search.grep import Matches
from sessions.tools.search.ripgrep import find_rg
from tests.support.tools import call

HAVE_RG = find_rg() is not None
BACKENDS = [
    pytest.param(False, id="python"),
    pytest.param(True, id="ripgrep", marks=pytest.mark.skipif(not HAVE_RG, reason="ripgrep (rg) is not installed")),
]


def test_ripgrep_comes_with_reasonix() -> None:
    """The ripgrep wheel is a dependency: rg is found next to this Python even when it is not on PATH."""
    rg = find_rg()
    assert rg is not None
    version = subprocess.run([rg, "--version"], capture_output=True, text=True, check=True).stdout
    assert version.startswith("ripgrep ")


def make_tree(ws: Path) -> None:
    files = {
        ".gitignore": "*.log\nbuild/\n!keep.log\n",
        "src/app.py": "import os\nNEEDLE = 1\nprint(NEEDLE)\n",
        "src/.hidden.py": "needle_hidden = True\n",
        "src/sub/.gitignore": "generated.py\n",
        "src/sub/generated.py": "NEEDLE generated\n",
        "src/sub/kept.py": "x = 'NEEDLE in sub'\n",
        "debug.log": "NEEDLE in a log\n",
        "keep.log": "NEEDLE kept log\n",
        "build/out.py": "NEEDLE built\n",
        ".git/config": "NEEDLE in git\n",
        ".reasonix/journal.jsonl": "NEEDLE in journal\n",
        "README.md": "needle lower\n",
    }
    for rel, text in files.items():
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_text(text)
    (ws / "blob.bin").write_bytes(b"NEEDLE\x00\x01binary")


@pytest.mark.parametrize("use_rg", BACKENDS)
async def test_grep_honours_gitignore(ws: Path, ctx: ToolContext, use_rg: bool) -> None:
    make_tree(ws)
    result = await call(default_registry(use_ripgrep=use_rg), ctx, "grep", pattern="NEEDLE")
    assert result.content == "\n".join(
        [
            "keep.log:1:NEEDLE kept log",
            "src/app.py:2:NEEDLE = 1",
            "src/app.py:3:print(NEEDLE)",
            "src/sub/kept.py:1:x = 'NEEDLE in sub'",
        ]
    )
    assert result.data == {"matches": 4}


@pytest.mark.parametrize("use_rg", BACKENDS)
async def test_grep_options(ws: Path, ctx: ToolContext, use_rg: bool) -> None:
    make_tree(ws)
    registry = default_registry(use_ripgrep=use_rg)
    insensitive = await call(registry, ctx, "grep", pattern="needle_h|needle l", ignore_case=True)
    assert insensitive.content == "README.md:1:needle lower\nsrc/.hidden.py:1:needle_hidden = True"
    only_py = await call(registry, ctx, "grep", pattern="NEEDLE", glob="*.py", path="src")
    assert only_py.content == (
        "src/app.py:2:NEEDLE = 1\nsrc/app.py:3:print(NEEDLE)\nsrc/sub/kept.py:1:x = 'NEEDLE in sub'"
    )
    one_file = await call(registry, ctx, "grep", pattern=r"^import \w+$", path="src/app.py")
    assert one_file.content == "src/app.py:1:import os"
    none = await call(registry, ctx, "grep", pattern="absent_thing", path="src")
    assert none.content == "no matches for 'absent_thing' in src" and not none.is_error
    bad = await call(registry, ctx, "grep", pattern="(unclosed")
    assert bad.is_error
    missing = await call(registry, ctx, "grep", pattern="x", path="nowhere")
    assert missing.is_error and missing.content.startswith("not found: 'nowhere'")


@pytest.mark.parametrize("use_rg", BACKENDS)
async def test_grep_caps_matches_and_long_lines(ws: Path, use_rg: bool) -> None:
    (ws / "many.txt").write_text("".join(f"hit {n}\n" for n in range(50)) + "hit " + "x" * 1000 + "\n")
    ctx = ToolContext(root=ws, limits=ToolLimits(grep_max_matches=3, grep_line_max_chars=20))
    result = await call(default_registry(use_ripgrep=use_rg), ctx, "grep", pattern="hit")
    assert result.content == (
        "many.txt:1:hit 0\nmany.txt:2:hit 1\nmany.txt:3:hit 2\n"
        "… 48 more matches not shown; narrow the pattern, path or glob"
    )
    long = await call(default_registry(use_ripgrep=use_rg), ctx, "grep", pattern="x{10}")
    assert long.content == "many.txt:51:hit " + "x" * 16 + "…"


@pytest.mark.skipif(not HAVE_RG, reason="ripgrep (rg) is not on PATH")
async def test_both_backends_agree_on_a_real_tree(ws: Path, ctx: ToolContext) -> None:
    make_tree(ws)
    for pattern in ("NEEDLE", "import", "e", r"\d"):
        py = await call(default_registry(use_ripgrep=False), ctx, "grep", pattern=pattern)
        rg = await call(default_registry(use_ripgrep=True), ctx, "grep", pattern=pattern)
        assert py.content == rg.content, pattern


CATASTROPHIC = "(a|aa)+$"  # backtracks without end in Python's re and in the regex package alike


async def test_a_catastrophic_pattern_is_stopped_with_a_clear_error(ws: Path) -> None:
    (ws / "a.txt").write_text("a" * 60 + "!\n")
    ctx = ToolContext(root=ws, limits=ToolLimits(grep_timeout_s=0.5))
    with trio.move_on_after(60) as guard:  # a guard against the old hang, not a timing assertion
        result = await call(default_registry(use_ripgrep=False), ctx, "grep", pattern=CATASTROPHIC)
    assert not guard.cancelled_caught
    assert result.is_error
    assert result.content == (
        "the regular expression '(a|aa)+$' took more than 0.5 s on a.txt:1 and was stopped; nested or overlapping "
        "repetition such as (a+)+ or (a|aa)+ backtracks without end: simplify the pattern"
    )
    # The issue's own example finishes at once (the regex engine handles it), with an honest answer.
    (ws / "b.txt").write_text("a" * 36 + "!\n")
    plain = await call(default_registry(use_ripgrep=False), ctx, "grep", pattern="(a+)+$", path="b.txt")
    assert plain.content == "no matches for '(a+)+$' in b.txt"


def test_ctrl_c_stops_a_catastrophic_search(ws: Path) -> None:
    """A real Ctrl-C (SIGINT) while the Python search runs a catastrophic regex ends the process at once."""
    (ws / "a.txt").write_text("a" * 60 + "!\n")
    child = textwrap.dedent(
        f"""
        import functools
        from pathlib import Path

        import trio

        from sessions.tools import ToolContext, default_registry
        from tests.support.tools import call

        grep = functools.partial(call, default_registry(use_ripgrep=False), ToolContext(root=Path({str(ws)!r})))
        print("ready", flush=True)
        trio.run(functools.partial(grep, "grep", pattern={CATASTROPHIC!r}))
        """
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", child],
        cwd=Path(__file__).parents[3],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline() == "ready\n"
        time.sleep(1.0)  # let the search reach the regex (the child is a plain process, not a trio test)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode != 0 and "KeyboardInterrupt" in err


@given(
    files=st.dictionaries(
        st.text(alphabet="ab./", min_size=1, max_size=6).filter(lambda p: not p.startswith("/")),
        st.integers(min_value=1, max_value=6),
        max_size=12,
    ),
    cap=st.integers(min_value=1, max_value=10),
    seed=st.randoms(use_true_random=False),
)
def test_matches_keep_the_first_lines_in_path_order_whatever_order_files_arrive(
    files: dict[str, int], cap: int, seed: random.Random
) -> None:
    """ripgrep searches in parallel: files arrive in any order, yet the kept lines are the first in path order."""
    expected = Matches(cap, 100)
    for rel in sorted(files, key=lambda p: p.replace("/", "\0")):
        for n in range(1, files[rel] + 1):
            expected.add(rel, n, "x")
    shuffled = Matches(cap, 100)
    arrival = list(files)
    seed.shuffle(arrival)
    for rel in arrival:
        for n in range(1, files[rel] + 1):
            shuffled.add(rel, n, "x")
    assert shuffled.lines == expected.lines and shuffled.total == expected.total == sum(files.values())
    assert len(shuffled._order) <= cap + 1  # bounded: only files that can still hold a kept line
