"""The library's regression scenarios of issue 18: each pins one regression with the format's newer fields (stream
shapes, finish reasons, per-request expectations). ``marker-split`` derives from ``executor_escalation()`` so the two
stay one story told two ways. ``python3 -m scenarios.library._build`` writes them with the rest.

Every scenario is ``origin: scripted``: the replies are written by hand; they are not a model.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from scenarios.library._build_escalations import executor_escalation
from scenarios.library._script import call, reply

J = dict[str, Any]
HERE = Path(__file__).parent
MARKER_CUT = "<<<NEE"


def _run_scenario(
    name: str, title: str, description: str, objective: str, workspace: J, replies: list[J], expect: J
) -> J:
    return {
        "name": name,
        "title": title,
        "description": description,
        "origin": "scripted",
        "command": "run",
        "objective": objective,
        "workspace": workspace,
        "settings": {},
        "script": {"version": 1, "sessions": [{"key": "executor", "replies": replies}]},
        "expect": expect,
    }


def marker_split() -> J:
    """The executor's marker arrives as ``<<<NEE`` + ``DS_PRO: …>>>``: a detector that looked at one delta at a time
    would miss it, run the step on flash and never escalate."""
    out = executor_escalation()
    executor = next(s for s in out["script"]["sessions"] if s["key"] == "executor")
    index = next(i for i, r in enumerate(executor["replies"]) if r.get("content", "").startswith("<<<NEEDS_PRO"))
    marker = executor["replies"][index]
    content = marker.pop("content")
    cut = content.index("DS_PRO")
    marker["stream"] = {"content_pieces": [content[:cut], content[cut:]]}
    assert content[:cut] == MARKER_CUT
    out.update(
        name="marker-split",
        title="The escalation marker split across two stream chunks still escalates",
        description=(
            "executor-escalation with the marker streamed as '<<<NEE' + 'DS_PRO: …>>>'. Pins the marker detector "
            "holding text across deltas: the request after the marker goes to pro, the step after it to flash."
        ),
    )
    out["expect"] = {
        **out["expect"],
        "request_models": {f"executor:{index + 1}": "flash", f"executor:{index + 2}": "pro"},
        "events": {"escalation": 1},
        "cache_growth": {"overall": []},
    }
    return out


LENGTH_WORKSPACE = {
    "notes.md": "# Notes\n\nThe parser accepts `key = value` lines.\n",
}


CUT = reply(
    reasoning="The parser reads key = value lines; first consider every edge case. " * 6, finish_reason="length"
)


def length_cut() -> J:
    """A reply cut at the output limit while still thinking: reasoning only, ``finish_reason: length``. The run must
    stop and say it was cut at the output limit, not report success or loop."""
    return _run_scenario(
        "length-cut",
        "A reply cut at the output limit with reasoning only stops the run and says so",
        "The executor's only reply is reasoning that ends with finish_reason length (no content, no tool call).",
        "Explain the parser described in notes.md.",
        LENGTH_WORKSPACE,
        [CUT, CUT],
        {
            # A reasoning-only cut is its own outcome, "length" (it was once reported as "empty"). `run` does not
            # retry it (a goal retries once with more room), so the second reply is never asked for.
            "status": "length",
            "max_requests": {"overall": 2},
            "max_cost_usd": 0.0007,
            "no_events": ["tool_started", "escalation"],
            "files": LENGTH_WORKSPACE,
        },
    )


GREETING = "Grüße, café, naïve — 日本語のテスト ✓ 🙂\n"


def utf8_split() -> J:
    """Every byte of every SSE event is its own socket write, so each multi-byte character of the arguments straddles
    two writes. A decoder that decoded each network read on its own would write U+FFFD into the file."""
    shape = {"write_bytes": 1}
    return _run_scenario(
        "utf8-split",
        "Multi-byte UTF-8 characters split across network reads arrive whole",
        "The executor writes a file of accented, CJK and emoji text; the stream is written one byte at a time.",
        "Write greeting.txt with the greeting in several scripts.",
        {"README.md": "# Greetings\n"},
        [
            reply(call("write_file", path="greeting.txt", content=GREETING), reasoning="Write it — ✓.", stream=shape),
            reply(content="Wrote greeting.txt — ✓ 日本語.", stream=shape),
        ],
        {
            "status": "done",
            "files": {"greeting.txt": GREETING},
            "tool_results": [{"tool": "write_file", "pattern": "greeting\\.txt", "is_error": False}],
            "max_requests": {"overall": 2},
            "cache_growth": {"overall": []},
            "min_hit_ratio": {"executor": 0.45, "overall": 0.45},
            "max_cost_usd": 0.0007,
        },
    )


PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYGD4DwABBAEAcCBlCwAAAABJRU5ErkJggg=="
PARSER_V1 = "def parse(line):\n    return line.split('=')\n"
PARSER_V2 = "def parse(line):\n    key, _, value = line.partition('=')\n    return key.strip(), value.strip()\n"


def symlink_escape() -> J:
    """The workspace as it is on disk: a git repository with history, a symlink inside, symlinks out (absolute and
    relative), an executable script and a binary file. Reading through the inside link works; through a link out it
    is refused, and so is writing through one; git and the script run."""
    out = _run_scenario(
        "symlink-escape",
        "Symlinks out of the workspace are refused; the repository, modes and binary files are as on disk",
        "A git repository with two commits, docs/latest -> v2.md, etc-link -> /etc, up -> .., an executable "
        "check.sh and a PNG. The executor reads through each link, tries to write through up (it would land in the "
        "replay's temporary folder, never elsewhere), runs git and the script.",
        "Look around the repository and run check.sh.",
        {"docs/v2.md": "# Version two\n", "README.md": "# Parser\n"},
        [
            reply(call("read_file", path="docs/latest"), reasoning="Read the latest docs through the link."),
            reply(call("read_file", path="etc-link/hostname")),
            reply(call("read_file", path="up/README.md")),
            reply(call("write_file", path="up/reasonix-was-here", content="x\n")),
            reply(call("bash", command="git log --format=%s && ./check.sh && git status --short")),
            reply(content="The links out are refused; the repository has two commits and check.sh passes."),
        ],
        {
            "status": "done",
            "tool_results": [
                {"tool": "read_file", "pattern": "Version two", "is_error": False},
                {"tool": "read_file", "pattern": "symlink that leads outside the workspace", "is_error": True},
                {"tool": "read_file", "pattern": "outside the workspace", "is_error": True},
                {"tool": "write_file", "pattern": "outside the workspace", "is_error": True},
                {
                    "tool": "bash",
                    "pattern": "Parse key = value[\\s\\S]*First parser[\\s\\S]*check ok",
                    "is_error": False,
                },
            ],
            "commands": [
                "test -L docs/latest && test -L etc-link && test -L up",
                "test -x check.sh",
                'test "$(git rev-list --count HEAD)" = 2',
                "git diff --quiet HEAD -- parser.py",
                'test "$(head -c 4 logo.png | od -An -c | tr -d \' \')" = "211PNG"',
            ],
            "absent": ["up/reasonix-was-here"],
            "max_requests": {"overall": 6},
            "cache_growth": {"overall": []},
            "max_cost_usd": 0.003,
        },
    )
    out["git"] = {
        "commits": [
            {"message": "First parser", "files": {"parser.py": PARSER_V1, "README.md": "# Parser\n"}},
            {"message": "Parse key = value, stripped", "files": {"parser.py": PARSER_V2}},
        ]
    }
    out["files"] = [
        {"path": "docs/latest", "symlink": "v2.md"},
        {"path": "etc-link", "symlink": "/etc"},
        {"path": "up", "symlink": ".."},
        {"path": "check.sh", "text": "#!/bin/sh\ntest -f parser.py && echo check ok\n", "mode": "755"},
        {"path": "logo.png", "base64": PNG},
    ]
    return out


TODO_V1 = "# Todo\n\n- [ ] write the changelog\n"


def second_run_cache() -> J:
    """Two ``reasonix run`` tasks one after the other in the same workspace, against one emulator whose cache
    persists: the second run's first request must hit the system prompt and tool schemas the first one sent. A run
    id, a date or a workspace listing in the prefix would make every new run start cold."""
    out = _run_scenario(
        "second-run-cache",
        "A second run in the same workspace hits the cache from its first request",
        "Run 1 ticks the changelog item in TODO.md; run 2 adds CHANGELOG.md. Same emulator, same cache.",
        "Tick the changelog item in TODO.md.",
        {"TODO.md": TODO_V1},
        [
            reply(call("edit_file", path="TODO.md", edits=[{"old": "- [ ] write", "new": "- [x] write"}])),
            reply(content="Ticked."),
            reply(call("write_file", path="CHANGELOG.md", content="# Changelog\n\n## 0.1.0\n- First release.\n")),
            reply(content="Wrote CHANGELOG.md."),
        ],
        {
            "status": "done",
            "files": {"TODO.md": "# Todo\n\n- [x] write the changelog\n"},
            "max_requests": {"overall": 2},
            "max_cost_usd": 0.0015,
        },
    )
    out["runs"] = [
        {
            "objective": "Add a CHANGELOG.md with a 0.1.0 entry.",
            "expect": {
                "status": "done",
                "file_patterns": {"CHANGELOG.md": "0\\.1\\.0"},
                "min_first_hit_tokens": {"executor": 1024},
                "commands": ["grep -q '^- \\[x\\] write the changelog' TODO.md", "grep -q '## 0.1.0' CHANGELOG.md"],
                "cache_growth": {"overall": []},
                "max_requests": {"overall": 2},
            },
        }
    ]
    return out


def kill_resume() -> J:
    """``reasonix goal`` is SIGKILLed as it asks the executor about S2 (S1 done and verified); ``--resume`` must
    go on with S2 and never run S1 again. The script has no replies for a second S1: a resume that re-ran it would
    send S2's edits to S1, or ask for more executor requests than the resumed run may make."""
    out = executor_escalation()
    executor = next(s for s in out["script"]["sessions"] if s["key"] == "executor")
    executor["replies"] = [r for r in executor["replies"] if not r.get("content", "").startswith("<<<NEEDS_PRO")]
    s1_report = next(
        i
        for i, r in enumerate(executor["replies"])
        if any(
            c.get("name") == "report_step" and c["arguments"].get("step_id") == "S1" for c in r.get("tool_calls", ())
        )
    )
    s2_first = s1_report + 2  # the request (1-based) after S1's report_step, which ends S1's turn
    expect = out["expect"]
    merged = expect["files"]["intervals.py"].split("\n\n\ndef total_length")[0] + "\n"
    out.update(
        name="kill-resume",
        title="A goal killed with SIGKILL after a verified step resumes without re-running it",
        description=(
            "executor-escalation without the marker. Run 1 is a real `reasonix goal --yes` process, killed as it "
            "sends the executor's first S2 request; run 2 is `--resume`: S2 only, then the verdict."
        ),
    )
    out["expect"] = {"files": {"intervals.py": merged}, "max_cost_usd": expect["max_cost_usd"]}
    out["kill_at_request"] = f"executor:{s2_first}"
    out["runs"] = [
        {
            "resume_previous": True,
            "expect": {
                "status": "complete",
                "steps_done": 2,
                "files": expect["files"],
                "commands": expect["commands"],
                "max_requests": {"executor": len(executor["replies"]) - s2_first + 1},
                "events": {"step_started": 1},
                "no_events": ["escalation"],
            },
        },
    ]
    return out


BUILDERS: list[Callable[[], J]] = [
    marker_split,
    length_cut,
    utf8_split,
    symlink_escape,
    second_run_cache,
    kill_resume,
]
