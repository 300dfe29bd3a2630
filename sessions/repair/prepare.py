"""The one entry point the session calls per assistant reply: turn its tool calls into what gets executed.

:func:`prepare_calls` never touches the :class:`~sessions.wire.AssistantMessage`: the message is appended to the log
and re-sent exactly as it arrived (DESIGN §3.2). What changes is only what runs:

* every entry of ``message.tool_calls`` gives one item of :attr:`PreparedBatch.items`, in call order: either a
  :class:`RepairedCall` to dispatch, or an :class:`ImmediateResult` that is the call's tool result without running
  anything (unknown tool, arguments that are not JSON even after repair, storm suppression, turn ended). Every
  ``tool_call`` id therefore gets exactly one result, as the API requires;
* arguments are parsed from the raw string, closed with json-repair when cut off (``truncation``), and nested back
  when the tool's schema was flattened (``flatten``);
* when ``tool_calls`` is empty, calls the model wrote into ``content`` or ``reasoning_content`` are scavenged into
  :attr:`PreparedBatch.scavenged`.

Scavenged calls have no ``tool_call`` entry in the re-sent assistant message, so their results cannot be tool
messages (the API would reject a ``tool_call_id`` it never issued). The session feeds their results back as a tagged
block in the tail of the next user turn instead, together with :attr:`PreparedBatch.scavenged_results`.

Every repair is a :class:`RepairEvent`. :attr:`PreparedBatch.failures` counts those that feed the per-turn failure
counter used for escalation: truncation and scavenge repairs, storm suppressions, unknown tools and bad arguments.
Flattening is not a failure: it is how the model was asked to answer.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from sessions.repair.errors import ModelArgumentsError
from sessions.repair.flatten import FlatMap, unflatten_args
from sessions.repair.scavenge import scavenge_calls
from sessions.repair.storm import StormGuard
from sessions.repair.truncation import parse_arguments
from sessions.wire import AssistantMessage


class RepairKind(StrEnum):
    FLATTEN = "flatten"
    TRUNCATION = "truncation"
    SCAVENGE = "scavenge"
    STORM = "storm"
    UNKNOWN_TOOL = "unknown_tool"
    BAD_ARGUMENTS = "bad_arguments"


FAILURE_KINDS: frozenset[RepairKind] = frozenset(RepairKind) - {RepairKind.FLATTEN}


@dataclass(frozen=True, slots=True)
class RepairEvent:
    kind: RepairKind
    call_id: str
    tool: str
    detail: str


@dataclass(frozen=True, slots=True)
class RepairedCall:
    """A call to execute: same fields as the tools' ``PreparedCall`` plus the repairs that made it executable."""

    id: str
    name: str
    args: dict[str, Any]
    repairs: tuple[RepairKind, ...] = ()


@dataclass(frozen=True, slots=True)
class ImmediateResult:
    """The tool result of a call that does not run. ``content`` is written for the model."""

    call_id: str
    content: str
    is_error: bool = True


BatchItem = RepairedCall | ImmediateResult


@dataclass(frozen=True, slots=True)
class PreparedBatch:
    items: tuple[BatchItem, ...] = ()
    """One per ``message.tool_calls`` entry, in call order."""
    scavenged: tuple[RepairedCall, ...] = ()
    """Calls found in content or reasoning while ``tool_calls`` was empty (results go into the next user turn)."""
    scavenged_results: tuple[ImmediateResult, ...] = ()
    """Results of scavenged calls that do not run (storm), to report in the same user-turn block."""
    events: tuple[RepairEvent, ...] = ()
    failures: int = 0
    end_turn: bool = False
    """The storm guard ended the turn: run nothing more after this batch; ``storm_summary`` says why."""
    storm_summary: str | None = None
    empty_reply: bool = False
    """No tool call, no scavenged call and no content: the model stopped with reasoning only (DESIGN §4)."""

    @property
    def calls(self) -> tuple[RepairedCall, ...]:
        return tuple(item for item in self.items if isinstance(item, RepairedCall))


def repair_note(repairs: tuple[RepairKind, ...]) -> str | None:
    """A short line the session may put in front of a repaired call's result, so the model knows what happened."""
    if RepairKind.TRUNCATION in repairs:
        return (
            "[note: your arguments were cut off or malformed and were closed automatically; "
            "the last value may be incomplete: check the result]"
        )
    return None


@dataclass
class _Builder:
    known_tools: Mapping[str, FlatMap | None]
    storm: StormGuard
    finish_reason: str | None
    events: list[RepairEvent] = field(default_factory=list)

    def event(self, kind: RepairKind, call_id: str, tool: str, detail: str) -> None:
        self.events.append(RepairEvent(kind, call_id, tool, detail))

    def unknown_tool(self, call_id: str, name: str) -> ImmediateResult:
        valid = sorted(self.known_tools)
        close = difflib.get_close_matches(name, valid, n=1)
        hint = f" Did you mean {close[0]!r}?" if close else ""
        self.event(RepairKind.UNKNOWN_TOOL, call_id, name, f"unknown tool {name!r}")
        return ImmediateResult(
            call_id,
            f"Error: there is no tool named {name!r}.{hint} Valid tool names: {', '.join(valid) or '(none)'}. "
            "Call one of these with arguments that match its schema.",
        )

    def finish(
        self, call_id: str, name: str, args: dict[str, Any], repairs: list[RepairKind]
    ) -> RepairedCall | ImmediateResult:
        flatmap = self.known_tools[name]
        if flatmap is not None:
            nested = unflatten_args(args, flatmap)
            if nested != args:
                repairs.append(RepairKind.FLATTEN)
                self.event(RepairKind.FLATTEN, call_id, name, "nested dotted arguments back into objects")
            args = nested
        verdict = self.storm.check(name, args)
        if verdict.kind == "allow":
            return RepairedCall(call_id, name, args, tuple(repairs))
        self.event(RepairKind.STORM, call_id, name, f"{verdict.kind}: identical call repeated")
        return ImmediateResult(call_id, verdict.summary)


def prepare_calls(
    message: AssistantMessage,
    finish_reason: str | None,
    *,
    known_tools: Mapping[str, FlatMap | None],
    storm: StormGuard,
) -> PreparedBatch:
    """What to execute for one assistant reply. ``known_tools`` maps each tool name to its flat map (or None)."""
    b = _Builder(known_tools, storm, finish_reason)
    truncated = finish_reason == "length"
    items: list[BatchItem] = []
    for call in message.tool_calls:
        name, raw = call.function.name, call.function.arguments
        if storm.turn_ended:
            items.append(ImmediateResult(call.id, "Not run: the turn was ended by the storm guard."))
            continue
        if name not in known_tools:
            items.append(b.unknown_tool(call.id, name))
            continue
        try:
            parsed = parse_arguments(raw, truncated=truncated)
        except ModelArgumentsError as exc:
            b.event(RepairKind.BAD_ARGUMENTS, call.id, name, str(exc))
            items.append(ImmediateResult(call.id, f"Error: {name} was not run. {exc}"))
            continue
        repairs: list[RepairKind] = []
        if parsed.repaired:
            repairs.append(RepairKind.TRUNCATION)
            why = "cut off at finish_reason=length" if truncated else f"malformed (finish_reason={finish_reason})"
            b.event(RepairKind.TRUNCATION, call.id, name, f"arguments {why}; closed with json-repair")
        items.append(b.finish(call.id, name, parsed.args, repairs))

    scavenged: list[RepairedCall] = []
    scavenged_results: list[ImmediateResult] = []
    if not message.tool_calls:
        found = scavenge_calls(
            content=message.content, reasoning=message.reasoning_content, known_tools=known_tools.keys()
        )
        for sc in found:
            if storm.turn_ended:
                scavenged_results.append(ImmediateResult(sc.id, "Not run: the turn was ended by the storm guard."))
                continue
            b.event(RepairKind.SCAVENGE, sc.id, sc.name, f"call written as {sc.shape} markup in {sc.source}")
            repairs = [RepairKind.SCAVENGE]
            if sc.repaired:
                repairs.append(RepairKind.TRUNCATION)
                b.event(RepairKind.TRUNCATION, sc.id, sc.name, "scavenged arguments closed with json-repair")
            result = b.finish(sc.id, sc.name, sc.args, repairs)
            if isinstance(result, RepairedCall):
                scavenged.append(result)
            else:
                scavenged_results.append(result)

    return PreparedBatch(
        items=tuple(items),
        scavenged=tuple(scavenged),
        scavenged_results=tuple(scavenged_results),
        events=tuple(b.events),
        failures=sum(1 for e in b.events if e.kind in FAILURE_KINDS),
        end_turn=storm.turn_ended,
        storm_summary=storm.summary() if storm.turn_ended else None,
        empty_reply=not (message.tool_calls or scavenged or scavenged_results or (message.content or "").strip()),
    )
