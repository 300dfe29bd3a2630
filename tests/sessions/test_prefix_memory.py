from pathlib import Path

import pytest

from sessions.prompt.memory import load_standing_memory
from sessions.prompt.prefix import build_prefix
from sessions.wire.messages import FunctionSchema, ToolSchema


def _tool(name: str) -> ToolSchema:
    return ToolSchema(
        function=FunctionSchema(name=name, parameters={"type": "object", "properties": {"b": {}, "a": {}}})
    )


def test_memory_is_found_upward_and_labelled_without_absolute_paths(tmp_path: Path) -> None:
    outer = tmp_path / "outer"
    repo = outer / "repo"
    (repo / ".git").mkdir(parents=True)
    (outer / "AGENTS.md").write_text("outer rules")  # above the repository root: must not leak in
    (repo / "AGENTS.md").write_text("repo rules\r\n")
    (repo / "REASONIX.local.md").write_text("local rules")
    conf = tmp_path / "conf"
    conf.mkdir()
    (conf / "REASONIX.md").write_text("user rules")
    mem = load_standing_memory(repo, config_dir=conf)
    assert [f.label for f in mem.files] == ["~config/REASONIX.md", "REASONIX.local.md", "AGENTS.md"]
    assert str(tmp_path) not in mem.render()
    assert "outer rules" not in mem.render()
    assert "repo rules\n" in mem.render()


def test_parent_directories_are_labelled_relative(tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").write_text("top")
    sub = tmp_path / "pkg"
    sub.mkdir()
    mem = load_standing_memory(sub, stop_at=tmp_path)
    assert [f.label for f in mem.files] == ["../AGENTS.md"]


def test_prefix_is_identical_across_two_checkouts(tmp_path: Path) -> None:
    fps = []
    for name in ("one", "two"):
        ws = tmp_path / name
        (ws / ".git").mkdir(parents=True)
        (ws / "REASONIX.md").write_text("Use pytest.")
        p = build_prefix("You are an agent.", [_tool("b"), _tool("a")], load_standing_memory(ws))
        fps.append((p.fingerprint, p.system_bytes, p.tools_bytes))
    assert fps[0] == fps[1]


def test_tool_order_does_not_change_the_prefix() -> None:
    assert build_prefix("s", [_tool("a"), _tool("b")]) == build_prefix("s", [_tool("b"), _tool("a")])


def test_duplicate_tool_names_are_refused() -> None:
    with pytest.raises(ValueError, match="duplicate"):
        build_prefix("s", [_tool("a"), _tool("a")])
