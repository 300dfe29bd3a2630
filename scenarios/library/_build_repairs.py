"""The library's tool-call repair scenarios of issue 31: the shapes DeepSeek writes its calls in when ``tool_calls``
stays empty. ``python3 -m scenarios.library._build`` writes them with the rest.

Every scenario is ``origin: scripted``: the replies are written by hand; they are not a model.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from scenarios.library._build_regressions import _run_scenario
from scenarios.library._script import call, reply

J = dict[str, Any]
HERE = Path(__file__).parent

SETTINGS_PY = (
    '"""Settings of the fetcher."""\n\nUSER_AGENT = \'fetcher/1.0\'\nDEFAULT_TIMEOUT = 30  # seconds\nRETRIES = 3\n'
)
FETCH_PY = (
    "from settings import DEFAULT_TIMEOUT, RETRIES\n"
    "\n"
    "\n"
    "def fetch(url, timeout=DEFAULT_TIMEOUT):\n"
    "    return {'url': url, 'timeout': timeout, 'retries': RETRIES}\n"
)
SETTINGS_60 = SETTINGS_PY.replace("DEFAULT_TIMEOUT = 30", "DEFAULT_TIMEOUT = 60")


def prose_call() -> J:
    """The executor writes its first two calls as JSON in its reasoning prose, with ``tool_calls`` empty: a
    ``{"name", "arguments"}`` object mid-sentence, then the R1 ``{"tool_name", "tool_args"}`` variant. Each is
    taken, run, and its result handed back in the next request, so the run needs exactly one request per reply: a
    call left in the prose would cost a "continue: call a tool" request (and the script would run out)."""
    grep = json.dumps({"name": "grep", "arguments": {"pattern": "DEFAULT_TIMEOUT =", "path": "."}})
    read = json.dumps({"tool_name": "read_file", "tool_args": {"path": "settings.py"}})
    replies = [
        reply(
            reasoning="The user wants the default timeout raised to 60 seconds. I don't know where it is defined "
            f"yet, so I should call {grep} to find the assignment, then edit it there."
        ),
        reply(
            reasoning="grep found it in settings.py, line 4. Before editing I want the exact line with its comment: "
            f"{read}"
        ),
        reply(
            call(
                "edit_file", path="settings.py", edits=[{"old": "DEFAULT_TIMEOUT = 30", "new": "DEFAULT_TIMEOUT = 60"}]
            ),
            reasoning="Line 4 is `DEFAULT_TIMEOUT = 30  # seconds`; change the number only.",
        ),
        reply(content="The default timeout is now 60 seconds: `DEFAULT_TIMEOUT` in settings.py (fetch.py uses it)."),
    ]
    return _run_scenario(
        "prose-call",
        "Tool calls written as JSON in the reasoning prose are taken without an extra request",
        "The executor's first reply writes a grep call as a JSON object in the middle of a sentence of its "
        "reasoning, its second a read_file call in the R1 tool_name/tool_args form; neither sends tool_calls. Both "
        "are scavenged, validated against the tools' schemas and run; the results go back in the next request's "
        "user turn, so four replies take four requests and every request hits what the one before sent.",
        "Raise the default timeout of the fetcher to 60 seconds.",
        {"settings.py": SETTINGS_PY, "fetch.py": FETCH_PY},
        replies,
        {
            "status": "done",
            "files": {"settings.py": SETTINGS_60, "fetch.py": FETCH_PY},
            "repairs": {"scavenge": 2},
            "tool_results": [
                {"tool": "grep", "pattern": "settings\\.py", "is_error": False},
                {"tool": "read_file", "pattern": "DEFAULT_TIMEOUT = 30", "is_error": False},
                {"tool": "edit_file", "is_error": False},
            ],
            "max_requests": {"overall": len(replies)},
            "min_requests": {"executor": len(replies)},
            "cache_growth": {"overall": []},
            "min_hit_ratio": {"executor": 0.69, "overall": 0.69},
            "max_cost_usd": 0.0012,
        },
    )


BUILDERS: list[Callable[[], J]] = [prose_call]
