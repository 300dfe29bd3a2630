"""``ToolRegistry.replace``: a tool may stand in for another only with the same schema, so the prefix built from the
registry is never moved by the swap."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from sessions.tools import Tool, ToolContext, ToolResult, default_registry


class _Other(BaseModel):
    where: str


class _Stand(Tool[Any]):
    name = "read_file"
    description = "another description"
    read_only = True
    parallel_safe = True

    def __init__(self, inner: Tool[Any] | None) -> None:
        self.inner = inner
        self.args_model = inner.args_model if inner is not None else _Other

    def schema(self) -> Any:
        return self.inner.schema() if self.inner is not None else super().schema()

    async def run(self, args: BaseModel, ctx: ToolContext) -> ToolResult:
        return ToolResult(content="stand-in")


def test_a_tool_with_the_same_schema_replaces_the_registered_one() -> None:
    registry = default_registry(use_ripgrep=False)
    before = registry.schemas()
    stand = _Stand(registry.get("read_file"))
    registry.replace(stand)
    assert registry.get("read_file") is stand and registry.schemas() == before


def test_a_tool_with_another_schema_or_an_unknown_name_is_refused() -> None:
    registry = default_registry(use_ripgrep=False)
    with pytest.raises(ValueError, match="another schema"):
        registry.replace(_Stand(None))

    class _Unknown(_Stand):
        name = "nope"

    with pytest.raises(KeyError, match="register it instead"):
        registry.replace(_Unknown(None))
