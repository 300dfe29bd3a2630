"""A tool call's result as the model reads it: text, bounded like the built-in tools' output.

Text blocks are joined; an image or audio block is described by type and size (never its bytes); an embedded resource
gives its text or, for a blob, its URI, type and size; a link gives its URI. Without content, structured content is
shown as sorted JSON. The whole is cut to the first and last bytes the limits allow, with a marker saying how much was
left out, so a 10 MB answer costs no more context than a long ``bash`` output.
"""

from __future__ import annotations

import json
from typing import Any

import mcp.types as types

from sessions.tools import ToolLimits, ToolResult
from sessions.tools.shell import HeadTail


def _size(data: str) -> int:
    """Bytes in a base64 payload, without decoding it."""
    return len(data) * 3 // 4 - data[-2:].count("=") if data else 0


def render_block(block: Any) -> str:
    if isinstance(block, types.TextContent):
        return block.text
    if isinstance(block, types.ImageContent | types.AudioContent):
        kind = "image" if isinstance(block, types.ImageContent) else "audio"
        return f"[{kind}: {block.mime_type}, {_size(block.data)} bytes, not shown]"
    if isinstance(block, types.EmbeddedResource):
        res = block.resource
        if isinstance(res, types.TextResourceContents):
            return res.text
        return f"[resource {res.uri}: {res.mime_type or 'binary'}, {_size(res.blob)} bytes, not shown]"
    if isinstance(block, types.ResourceLink):
        return f"[resource link {block.uri}" + (f": {block.description}]" if block.description else "]")
    return f"[{getattr(block, 'type', 'unknown')} content, not shown]"


def render(result: types.CallToolResult, limits: ToolLimits, *, tool: str) -> ToolResult:
    parts = [render_block(block) for block in result.content]
    if not parts and result.structured_content is not None:
        parts = [json.dumps(result.structured_content, sort_keys=True, ensure_ascii=False)]
    text = "\n".join(parts)
    if not text:
        text = "(the tool returned nothing)"
    capture = HeadTail(limits.bash_head_bytes, limits.bash_tail_bytes, full_cap=limits.bash_full_text_bytes)
    capture.feed(text.encode("utf-8"))
    content = capture.text()
    full = capture.full_text() if capture.bounded else None
    if result.is_error:
        return ToolResult(content=f"{tool} failed: {content}", is_error=True, full_text=full)
    return ToolResult(content=content, full_text=full)
