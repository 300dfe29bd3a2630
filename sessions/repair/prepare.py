"""The one entry point the session calls per assistant reply: turn its tool calls into what gets executed.

:func:`prepare_calls` never touches the :class:`~sessions.wire.messages.AssistantMessage`: the message is appended to
the log and re-sent exactly as it arrived (DESIGN §3.2). What changes is only what runs:

* every entry of ``message.tool_calls`` gives one item of :attr:`PreparedBatch.items`, in call order: either a
  :class:`RepairedCall` to dispatch, or an :class:`ImmediateResult` that is the call's tool result without running
  anything (unknown tool, arguments that are not JSON even after repair, storm suppression, turn ended). Every
  ``tool_call`` id therefore gets exactly one result, as the API requires;
* arguments are parsed from the raw string, closed with json-repair when cut off (``truncation``), and nested back
  when the tool's schema was flattened (``flatten``); a tool name or an arguments object that a stalled stream wrote
  twice is taken once (``stall``);
* when ``tool_calls`` is empty, calls the model wrote into ``content`` or ``reasoning_content`` are scavenged into
  :attr:`PreparedBatch.scavenged`: with the session's ``tools``, a candidate written in prose only when its
  arguments validate against its tool (:mod:`sessions.repair.vet`), one written as markup or a fenced object always
  (the dispatcher answers bad arguments as for a native call), and at most ``max_scavenged`` of them per reply
  (the rest get a "not run" result); when none is found, a call in ``content`` of a tool that does not exist
  (:func:`~sessions.repair.scavenge.stray_calls`) gets the unknown-tool result a native call would;
* a tool that declares itself ``storm_exempt`` (a polling tool) is never suppressed and never counts toward a storm.

Scavenged calls have no ``tool_call`` entry in the re-sent assistant message, so their results cannot be tool
messages (the API would reject a ``tool_call_id`` it never issued). The session feeds their results back as a tagged
block in the tail of the next user turn instead, together with :attr:`PreparedBatch.scavenged_results`.

Every repair is a :class:`RepairEvent`. :attr:`PreparedBatch.failures` counts those that feed the per-turn failure
counter used for escalation: truncation, stall and scavenge repairs, storm suppressions, unknown tools and bad
arguments.
Flattening is not a failure: it is how the model was asked to answer.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any

from sessions.repair.errors import ModelArgumentsError
from sessions.repair.flatten import FlatMap, unflatten_args
from sessions.repair.scavenge import ScavengedCall, scavenge_calls, stray_calls
from sessions.repair.stall import repeated_name, run_together
from sessions.repair.storm import StormGuard
from sessions.repair.truncation import parse_arguments
from sessions.repair.vet import ToolTable, trim_bodies, validates
from sessions.wire.messages import AssistantMessage

MAX_SCAVENGED_CALLS = 3
"""Calls taken from one reply's text at most (``prepare_calls(max_scavenged=...)``): a reasoning that lists many
candidate calls does not fire them all."""


class RepairKind(StrEnum):
    FLATTEN = "flatten"
    TRUNCATION = "truncation"
    STALL = "stall"
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
    if RepairKind.STALL in repairs:
        return "[note: your tool call repeated itself (a stalled reply); it was run once]"
    return None


@dataclass
class _Builder:
    known_tools: Mapping[str, FlatMap | None]
    storm: StormGuard
    tools: ToolTable | None = None
    events: list[RepairEvent] = field(default_factory=list)

    def event(self, kind: RepairKind, call_id: str, tool: str, detail: str) -> None:
        self.events.append(RepairEvent(kind, call_id, tool, detail))

    def unknown_tool(self, call_id: str, name: str) -> ImmediateResult:
        valid = sorted(self.known_tools)
        parts = run_together(name, valid)
        close = difflib.get_close_matches(name, valid, n=1)  # pragma: no mutate  — only close[0] is read
        if parts is not None:
            hint = f" It reads as {len(parts)} tool names run together: did you mean {len(parts)} calls, " + (
                ", then ".join(repr(p) for p in parts) + ", each with its own arguments?"
            )
        else:
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
        offered = self.tools.get(name) if self.tools is not None else None
        if offered is not None and offered.storm_exempt:  # polling: repeating the call is its purpose
            return RepairedCall(call_id, name, args, tuple(repairs))
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
    tools: ToolTable | None = None,
    max_scavenged: int = MAX_SCAVENGED_CALLS,
) -> PreparedBatch:
    """What to execute for one assistant reply. ``known_tools`` maps each tool name to its flat map (or None).

    ``tools``: the session's tools (a :class:`~sessions.tools.ToolRegistry`). With them a call found in text must
    validate to be taken, and ``storm_exempt`` tools bypass the storm guard; without them (tests, tools known by
    schema only) a known name is enough.
    """
    b = _Builder(known_tools, storm, tools)
    truncated = finish_reason == "length"
    items: list[BatchItem] = []
    for call in message.tool_calls:
        name, raw = call.function.name, call.function.arguments
        if storm.turn_ended:
            items.append(ImmediateResult(call.id, "Not run: the turn was ended by the storm guard."))
            continue
        repairs: list[RepairKind] = []
        if name not in known_tools and (single := repeated_name(name, known_tools)) is not None:
            b.event(RepairKind.STALL, call.id, single, f"tool name {name!r} is {single!r} repeated (a stall)")
            repairs.append(RepairKind.STALL)
            name = single
        if name not in known_tools:
            items.append(b.unknown_tool(call.id, name))
            continue
        try:
            parsed = parse_arguments(raw, truncated=truncated)
        except ModelArgumentsError as exc:
            b.event(RepairKind.BAD_ARGUMENTS, call.id, name, str(exc))
            items.append(ImmediateResult(call.id, f"Error: {name} was not run. {exc}"))
            continue
        if parsed.copies > 1:
            if RepairKind.STALL not in repairs:
                repairs.append(RepairKind.STALL)
            b.event(RepairKind.STALL, call.id, name, f"arguments object written {parsed.copies} times (a stall)")
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
        if not found:  # a call of a tool that does not exist is answered as a native one would be
            strays = stray_calls(content=message.content, known_tools=known_tools.keys())
            scavenged_results.extend(b.unknown_tool(sc.id, sc.name) for sc in strays[: max(0, max_scavenged)])
        taken = [c for c in (_vetted(sc, known_tools, tools) for sc in found) if c is not None]
        over = taken[max(0, max_scavenged) :]
        if over:
            b.event(
                RepairKind.SCAVENGE,
                over[0].id,
                over[0].name,
                f"{len(over)} more calls written in {over[0].source} not run (at most {max_scavenged} per reply)",
            )
        for sc in taken[: max(0, max_scavenged)]:
            if storm.turn_ended:
                scavenged_results.append(ImmediateResult(sc.id, "Not run: the turn was ended by the storm guard."))
                continue
            b.event(RepairKind.SCAVENGE, sc.id, sc.name, f"call written as {sc.shape} markup in {sc.source}")
            repairs = [RepairKind.SCAVENGE]
            if sc.written_name:
                repairs.append(RepairKind.STALL)
                b.event(RepairKind.STALL, sc.id, sc.name, f"tool name {sc.written_name!r} repeats {sc.name!r}")
            if sc.repaired:
                repairs.append(RepairKind.TRUNCATION)
                b.event(RepairKind.TRUNCATION, sc.id, sc.name, "scavenged arguments closed with json-repair")
            result = b.finish(sc.id, sc.name, sc.args, repairs)
            if isinstance(result, RepairedCall):
                scavenged.append(result)
            else:
                scavenged_results.append(result)
        scavenged_results.extend(
            ImmediateResult(
                sc.id,
                f"Not run: at most {max_scavenged} calls written in your text are run per reply. If you still need "
                f"this {sc.name} call, make it through the tool-calling interface.",
            )
            for sc in over
        )

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


def _vetted(
    sc: ScavengedCall, known_tools: Mapping[str, FlatMap | None], tools: ToolTable | None
) -> ScavengedCall | None:
    """The candidate as it will run (DSML identifiers trimmed), or None when it is not a call of the session's.

    A call written as markup or as a fenced call object whose arguments do not validate is taken all the same: the
    dispatcher answers it with the problem, exactly as a native call with those arguments (issue 44: dropped, the
    model heard nothing and the turn ended ``done``). Only an object in prose must validate to count as a call."""
    if tools is None:
        return sc
    tool = tools.get(sc.name)
    if tool is None:
        return None
    args = trim_bodies(tool, sc.args, sc.bodies)
    if not validates(tool, unflatten_args(args, known_tools.get(sc.name))) and sc.shape == "prose_json":
        return None  # prose may name a tool by accident; markup or a fenced call object is meant as a call
    return replace(sc, args=args) if args is not sc.args else sc  # pragma: no mutate  — a copy equals sc
