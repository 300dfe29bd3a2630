"""For random disjoint edit sets on random small trees, merging the branches back in any order gives the tree that
applying every edit to the workspace gives."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest
import trio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from orchestrator.branches import BranchWorkspace
from tests.support.git_repo import make_repo, tree_state

pytestmark = pytest.mark.git  # real git repositories (tests/support/parts.py)

NAMES = st.sampled_from(["a", "b", "c", "d/e", "d/f", "g/h/i", "j.txt"])
CONTENT = st.text(alphabet="xyz\n", max_size=12)
Edit = tuple[str, str | None]  # path, new content (None: delete)


@st.composite
def cases(draw: st.DrawFn) -> tuple[dict[str, str], list[list[Edit]], list[int], bool]:
    tree = draw(st.dictionaries(NAMES, CONTENT, min_size=1))
    paths = sorted(set(tree) | {"new1", "n/new2", "d/new3", "z/new4"})
    # a file and a directory of the same name are impossible here: NAMES and new paths never clash
    owners = draw(st.lists(st.integers(0, 2), min_size=len(paths), max_size=len(paths)))
    edits: list[list[Edit]] = [[], [], []]
    for path, owner in zip(paths, owners, strict=True):
        if path in tree:
            content = draw(st.none() | CONTENT)
        else:
            content = draw(st.none() | CONTENT)
            if content is None:
                continue  # nothing to delete
        edits[owner].append((path, content))
    order = draw(st.permutations(range(3)))
    return tree, edits, list(order), draw(st.booleans())


def _apply(root: Path, edits: list[Edit]) -> None:
    for path, content in edits:
        target = root / path
        if content is None:
            if target.exists():
                target.unlink()
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(content)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases())
def test_disjoint_branches_merge_to_the_same_tree_in_any_order(
    case: tuple[dict[str, str], list[list[Edit]], list[int], bool],
) -> None:
    tree, edits, order, git = case
    with tempfile.TemporaryDirectory() as tmp:
        ws, expected = Path(tmp) / "ws", Path(tmp) / "expected"
        if git:
            make_repo(ws, tree)
        else:
            for rel, text in tree.items():
                (ws / rel).parent.mkdir(parents=True, exist_ok=True)
                (ws / rel).write_text(text)
        shutil.copytree(ws, expected, ignore=shutil.ignore_patterns(".git"))
        for batch in edits:
            _apply(expected, batch)

        async def main() -> None:
            branches = [await BranchWorkspace.open(ws, ws / ".reasonix" / "runs" / "r", f"s{i}") for i in range(3)]
            for branch, batch in zip(branches, edits, strict=True):
                _apply(branch.path, batch)
            for i in order:
                out = await branches[i].merge_back([p for p, _ in edits[i]])
                assert out.merged, out.reason
                await branches[i].discard()

        trio.run(main)
        assert tree_state(ws) == tree_state(expected)
