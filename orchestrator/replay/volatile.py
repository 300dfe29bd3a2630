"""What may legitimately differ between two runs of the same command inside a tool's output, blanked before a replay
compares a request with its recording (issue 44: a real recording failed its own replay on unittest's
``Ran 2 tests in 0.004s``).

Only tool output is touched (tool messages, and the ``<tool-results>`` block that carries the results of calls written
as text): timings and durations, memory addresses, process ids, temporary names. Everything else of a request (the
system prompt, the tools, the user's and the model's words) is compared byte for byte, so a changed prompt is still
drift.
"""

from __future__ import annotations

import re
from typing import Any

_VOLATILE: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\b\d+(?:\.\d+)?\s?(?:ms|µs|us|ns|s|sec|secs|seconds|minutes?)\b"), "<duration>"),
    (re.compile(r"\b\d{1,2}:\d{2}:\d{2}(?:\.\d+)?\b"), "<duration>"),
    (re.compile(r"\b0x[0-9a-fA-F]{4,}\b"), "0x<address>"),
    (re.compile(r"\b(pid|PID|process|Process)([ =:#]+)\d+\b"), r"\1\2<pid>"),
    (re.compile(r"(/tmp/|/var/folders/)[^\s/'\"]+"), r"\1<tmp>"),
)
_TOOL_RESULTS = re.compile(r"<tool-results>.*?</tool-results>", re.DOTALL)


def steady_text(text: str) -> str:
    """``text`` with what differs from run to run of the same command blanked."""
    for pattern, replacement in _VOLATILE:
        text = pattern.sub(replacement, text)
    return text


def steady_request(request: Any) -> Any:
    """A request body (parsed JSON) with the volatile parts of its tool output blanked; the rest as it was."""
    if not isinstance(request, dict) or not isinstance(request.get("messages"), list):
        return request
    messages = []
    for message in request["messages"]:
        if isinstance(message, dict) and isinstance(message.get("content"), str):
            content = message["content"]
            if message.get("role") == "tool":
                message = {**message, "content": steady_text(content)}
            elif message.get("role") == "user" and "<tool-results>" in content:
                message = {**message, "content": _TOOL_RESULTS.sub(lambda m: steady_text(m.group(0)), content)}
        messages.append(message)
    return {**request, "messages": messages}
