"""The gateway's promise over random trees (hypothesis): directories, files and symlinks (relative, absolute,
looping, pointing out) and random paths. No read returns a byte from outside the root, no listing names an entry
outside it, and no write creates or changes anything outside."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sessions.tools import ToolError
from sessions.tools.gateway import GatewayRoot

NAMES = ["a", "b", "c", ".git", ".reasonix"]
STEPS = [*NAMES, "..", "."]

Target = tuple[str, str]
"""How a symlink's target is made: ``("rel", "a/../b")``, ``("out", …)``, ``("in", …)`` or ``("self", "")``."""

relative_paths = st.lists(st.sampled_from(STEPS), min_size=1, max_size=4).map("/".join)
targets: st.SearchStrategy[Target] = st.one_of(
    relative_paths.map(lambda p: ("rel", p)),
    st.sampled_from(["", "zz_file", "zz_dir", "zz_dir/zz_deep", "../ws-evil", "../ws-evil/x"]).map(
        lambda p: ("out", p)
    ),
    st.sampled_from(["/etc/passwd", "/dev/zero", "/proc/self/environ"]).map(lambda p: ("sys", p)),
    st.sampled_from(["", "a", "a/b", "c"]).map(lambda p: ("in", p)),
    st.just(("self", "")),
)
entries = st.lists(
    st.tuples(
        st.lists(st.sampled_from(NAMES), min_size=1, max_size=3).map("/".join),
        st.sampled_from(["dir", "file", "link"]),
        targets,
    ),
    max_size=12,
)
paths = st.one_of(
    relative_paths,
    st.lists(st.sampled_from(STEPS), min_size=1, max_size=5).map(lambda p: "./" + "/".join(p)),
    st.sampled_from(["/etc/passwd", "~/x", "~outputs/x", "", "a/../../ws-evil/x"]),
)


def _outside(base: Path) -> None:
    out = base / "outside"
    (out / "zz_dir").mkdir(parents=True)
    (out / "zz_file").write_bytes(b"OUTSIDE-1")
    (out / "zz_dir" / "zz_deep").write_bytes(b"OUTSIDE-2")
    (base / "ws-evil").mkdir()  # a sibling whose name starts like the root's
    (base / "ws-evil" / "x").write_bytes(b"OUTSIDE-3")


def _build(ws: Path, base: Path, tree: list[tuple[str, str, Target]]) -> None:
    for number, (rel, kind, (how, where)) in enumerate(tree):
        path = ws / rel
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            if kind == "dir":
                path.mkdir()
            elif kind == "file":
                path.write_bytes(f"INSIDE-{number}".encode())
            else:
                target = {
                    "rel": where,
                    "out": str(base / "outside" / where) if not where.startswith("..") else str(base / where[3:]),
                    "sys": where,
                    "in": str(ws / where),
                    "self": path.name,
                }[how]
                os.symlink(target, path)
        except OSError:
            continue  # a parent that is a file or a link out, a name taken: the tree is what could be made


def _snapshot(base: Path, ws: Path) -> dict[str, tuple[str, bytes]]:
    """Everything under ``base`` except the workspace: kind and content (a symlink's target)."""
    seen: dict[str, tuple[str, bytes]] = {}
    for dirpath, dirnames, filenames in os.walk(base):
        if Path(dirpath) == ws or ws in Path(dirpath).parents:
            dirnames[:] = []
            continue
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            if path == ws:
                continue
            if path.is_symlink():
                seen[str(path)] = ("link", os.readlink(path).encode())
            elif path.is_file():
                seen[str(path)] = ("file", path.read_bytes())
            else:
                seen[str(path)] = ("dir", b"")
    return seen


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tree=entries, raws=st.lists(paths, min_size=1, max_size=6))
def test_no_read_leaves_the_root_and_no_write_changes_anything_outside(
    tree: list[tuple[str, str, Target]], raws: list[str]
) -> None:
    with tempfile.TemporaryDirectory(prefix="gateway-prop-") as scratch:
        base = Path(scratch)
        ws = base / "ws"
        ws.mkdir()
        _outside(base)
        _build(ws, base, tree)
        before = _snapshot(base, ws)
        for refused in (frozenset({".git", ".reasonix"}), frozenset()):
            root = GatewayRoot(ws, refused=refused)
            for raw in raws:
                try:
                    data = root.read(raw, limit=1 << 16).data
                except ToolError:
                    data = b""
                assert b"OUTSIDE" not in data and (data in (b"", b"WRITTEN") or data.startswith(b"INSIDE-")), raw
                listed = root.names(raw)
                assert not any(name.startswith("zz_") or name == "x" for name in listed), (raw, listed)
                try:
                    located = root.locate(raw)
                except ToolError:
                    located = None
                if located is not None:
                    assert not located.real.startswith(".."), (raw, located)
                    if refused:
                        assert not set(located.real.split("/")) & refused, (raw, located)
                with contextlib.suppress(ToolError, OSError):  # refused, or a name the file system will not take
                    root.write(raw, b"WRITTEN")
                assert _snapshot(base, ws) == before, raw
