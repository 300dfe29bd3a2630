"""A name → tool table, and the built-in set.

The order of :meth:`ToolRegistry.schemas` is canonical (sorted by name, as :func:`sessions.wire.messages.encode_tools`
sorts), so registering in a different order never changes the bytes of the prefix.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from sessions.tools.base import Tool
from sessions.tools.errors import DuplicateToolError
from sessions.wire.messages import ToolSchema


class ToolRegistry:
    def __init__(self, tools: Iterable[Tool[Any]] = ()) -> None:
        self._tools: dict[str, Tool[Any]] = {}
        for tool in tools:
            self.register(tool)

    def register(self, tool: Tool[Any]) -> None:
        if tool.name in self._tools:
            raise DuplicateToolError(f"a tool named {tool.name!r} is already registered; give the new one another name")
        self._tools[tool.name] = tool

    def get(self, name: str) -> Tool[Any] | None:
        return self._tools.get(name)

    def names(self) -> tuple[str, ...]:
        return tuple(sorted(self._tools))

    def schemas(self) -> tuple[ToolSchema, ...]:
        return tuple(self._tools[name].schema() for name in self.names())

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __iter__(self) -> Iterator[Tool[Any]]:
        return (self._tools[name] for name in self.names())

    def __len__(self) -> int:
        return len(self._tools)


def default_registry(*, use_ripgrep: bool | None = None, web_fetch: bool = False) -> ToolRegistry:
    """The built-ins: read_file, write_file, edit_file, list_dir, glob, grep, bash.

    ``use_ripgrep``: None picks ripgrep when it is installed; False forces the pure-Python grep and glob.
    ``web_fetch``: add the opt-in ``web_fetch`` tool (``[tools] web_fetch``; off, the prefix is as before).
    """
    from sessions.tools.files.edit_file import EditFileTool
    from sessions.tools.files.read_file import ReadFileTool
    from sessions.tools.files.write_file import WriteFileTool
    from sessions.tools.search.glob_tool import GlobTool
    from sessions.tools.search.grep import GrepTool
    from sessions.tools.search.list_dir import ListDirTool
    from sessions.tools.shell.bash import BashTool

    registry = ToolRegistry(
        [
            ReadFileTool(),
            WriteFileTool(),
            EditFileTool(),
            ListDirTool(),
            GlobTool(use_ripgrep=use_ripgrep),
            GrepTool(use_ripgrep=use_ripgrep),
            BashTool(),
        ]
    )
    if web_fetch:
        from sessions.tools.web.fetch import WebFetchTool

        registry.register(WebFetchTool())
    return registry
