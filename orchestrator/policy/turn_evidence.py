"""What an executor turn shows besides its verify commands (DESIGN §5 "Evidence from the host").

A step is not done when its executor turn ended with an edit that failed and was never made good, with an escalation
marker nobody could act on (``<<<NEEDS_PRO>>>`` under the flash preset), or without any change to the files the step
declares it writes, even when its verify commands pass: they were written before any work was done, and a weak one
passes on an untouched workspace. :class:`TurnWatch` sees the tool calls of each turn in flight through the session
events; :func:`turn_problems` says what is wrong with a finished turn, in words for the executor and the user.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from orchestrator.policy.marker import find_marker
from orchestrator.policy.stuck import workspace_fingerprint
from sessions import SessionEvent, ToolFinished, ToolStarted

#: Tools that write files: a failed call of one of them is a failed edit unless a later call on the same path worked.
WRITING_TOOLS = frozenset({"edit_file", "write_file"})

LaneKey = tuple[str, str | None]


@dataclass(frozen=True, slots=True)
class CallSeen:
    """One finished tool call of a turn."""

    name: str
    path: str
    is_error: bool
    preview: str


@dataclass
class TurnWatch:
    """The tool calls of each session's (and each parallel branch's) current turn, from its events."""

    _started: dict[tuple[str, str | None, str], tuple[str, str]] = field(default_factory=dict)
    _calls: dict[LaneKey, list[CallSeen]] = field(default_factory=dict)

    def begin(self, key: LaneKey) -> None:
        self._calls[key] = []

    def observe(self, event: SessionEvent) -> None:
        if isinstance(event, ToolStarted):
            path = event.args.get("path")
            self._started[event.session, event.step_id, event.call_id] = (
                event.name,
                path if isinstance(path, str) else "",
            )
        elif isinstance(event, ToolFinished):
            calls = self._calls.get((event.session, event.step_id))
            name, path = self._started.pop((event.session, event.step_id, event.call_id), (event.name, ""))
            if calls is not None:
                calls.append(CallSeen(name, path, event.is_error, event.preview))

    def calls(self, key: LaneKey) -> tuple[CallSeen, ...]:
        return tuple(self._calls.get(key, ()))


def declared(path: str, writes: tuple[str, ...]) -> bool:
    """Whether ``path`` (as a tool call named it) is one the step declares it writes: the path itself, a file under a
    declared folder, or a match of a declared glob. Everything when the step declares nothing."""
    if not writes:
        return True
    name = PurePosixPath(path.removeprefix("./"))
    for raw in writes:
        pattern = raw.removeprefix("./").rstrip("/")
        if name.as_posix() == pattern or name.is_relative_to(pattern) or fnmatch.fnmatch(name.as_posix(), pattern):
            return True
    return False


def failed_edits(calls: Iterable[CallSeen], writes: tuple[str, ...] = ()) -> list[CallSeen]:
    """The failed writing calls on the step's declared writes that no later successful writing call on the same path
    made good (a refused write elsewhere, such as outside the workspace, is the tool's business, not the step's)."""
    failed: dict[str, CallSeen] = {}
    for call in calls:
        if call.name not in WRITING_TOOLS or not declared(call.path, writes):
            continue
        if call.is_error:
            failed[call.path] = call
        else:
            failed.pop(call.path, None)
    return list(failed.values())


def files_fingerprint(root: Path, paths: Iterable[str]) -> frozenset[str] | None:
    """The content of the declared paths (each file's hash, globs expanded: the stuck detector's fingerprint), or
    ``None`` when one of them is a folder, whose change this cannot judge (it is then never called unchanged)."""
    paths = tuple(paths)
    if any((root / p.rstrip("/")).is_dir() for p in paths if not any(c in p for c in "*?[")):
        return None
    return frozenset(workspace_fingerprint(root, paths))


def turn_problems(calls: Iterable[CallSeen], final_text: str, *, writes: tuple[str, ...], changed: bool) -> list[str]:
    """Why the turn does not show its step done, each a sentence for the executor; empty when nothing is wrong."""
    problems = []
    for call in failed_edits(calls, writes):
        first = call.preview.strip().splitlines()[0] if call.preview.strip() else "an error"
        problems.append(f"{call.name} on {call.path or 'a file'} failed ({first}) and no later call made it good")
    marker = find_marker(final_text)
    if marker is not None:
        why = (marker.group(1) or "").strip()
        problems.append(
            "the turn ended with an escalation marker that could not be acted on"
            + (f" ({why})" if why else "")
            + ": the step was not done"
        )
    if writes and not changed:
        problems.append(f"none of the files the step writes ({', '.join(writes)}) changed")
    return problems


def problems_feedback(problems: list[str]) -> str:
    """The text sent back to the executor (and shown to the user) when the turn shows the step not done."""
    listing = "\n".join(f"- {p}" for p in problems)
    return f"The step is not done, whatever its verify commands say:\n{listing}"
