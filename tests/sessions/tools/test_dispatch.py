"""The dispatcher: unknown tools, bad arguments, read-only refusal, batching of parallel-safe calls, call order."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

import pytest
import trio
import trio.testing

from sessions.tools import (
    PreparedCall,
    Tool,
    ToolArgs,
    ToolContext,
    ToolError,
    ToolRegistry,
    ToolResult,
    current_call_id,
    dispatch,
)
from sessions.tools.registry import default_registry
from tests.support.tools import call

Log = list[tuple[str, str, float]]


class NapArgs(ToolArgs):
    label: str
    seconds: float = 0


class Nap(Tool[NapArgs]):
    """Test-only: sleeps on the trio clock and logs when it starts and ends."""

    name = "nap"
    description = "sleep"
    args_model = NapArgs
    read_only = True
    parallel_safe = True

    def __init__(self, log: Log) -> None:
        self.log = log

    async def run(self, args: NapArgs, ctx: ToolContext) -> ToolResult:
        self.log.append(("start", args.label, trio.current_time()))
        await trio.sleep(args.seconds)
        self.log.append(("end", args.label, trio.current_time()))
        return ToolResult(content=args.label)


class SoloNap(Nap):
    name = "solo_nap"
    parallel_safe = False


class MeetArgs(ToolArgs):
    me: str
    other: str


class Meet(Tool[MeetArgs]):
    """Test-only rendezvous: each call waits until the other has started. Sequential execution would deadlock."""

    name = "meet"
    description = "rendezvous"
    args_model = MeetArgs
    read_only = True
    parallel_safe = True

    def __init__(self) -> None:
        self.arrived: dict[str, trio.Event] = {"x": trio.Event(), "y": trio.Event()}

    async def run(self, args: MeetArgs, ctx: ToolContext) -> ToolResult:
        self.arrived[args.me].set()
        await self.arrived[args.other].wait()
        return ToolResult(content=f"{args.me} met {args.other}")


class Fails(Tool[NapArgs]):
    name = "fails"
    description = "always fails"
    args_model = NapArgs
    read_only = True
    parallel_safe = True

    async def run(self, args: NapArgs, ctx: ToolContext) -> ToolResult:
        raise ToolError(f"cannot do {args.label}; try something else")


class Breaks(Tool[NapArgs]):
    """Test-only: fails the way a bug does (what web_fetch's LookupError and outline's RecursionError were)."""

    name = "breaks"
    description = "raises what no tool reports itself"
    args_model = NapArgs
    read_only = True
    parallel_safe = True

    async def run(self, args: NapArgs, ctx: ToolContext) -> ToolResult:
        errors: dict[str, Exception] = {
            "lookup": LookupError("'rot13' is not a text encoding"),
            "recursion": RecursionError("maximum recursion depth exceeded"),
            "value": ValueError(""),
        }
        raise errors[args.label]


class OpensMissing(Tool[NapArgs]):
    """A tool whose real ``open`` fails: the OSError a tool lets through (the file tools' own now come back as
    ToolErrors from the gateway)."""

    name = "opens_missing"
    description = "opens a file that is not there"
    args_model = NapArgs
    read_only = True
    parallel_safe = True

    async def run(self, args: NapArgs, ctx: ToolContext) -> ToolResult:
        return ToolResult(content=(ctx.root / "missing" / args.label).read_text())


def calls(*specs: tuple[str, dict[str, object]]) -> list[PreparedCall]:
    return [PreparedCall(id=f"call_{i}", name=name, args=dict(args)) for i, (name, args) in enumerate(specs)]


async def test_parallel_batch_keeps_call_order_and_barrier_waits(ctx: ToolContext, autojump_clock: object) -> None:
    log: Log = []
    registry = ToolRegistry([Nap(log), SoloNap(log)])
    started: list[str] = []
    finished: list[str] = []
    t0 = trio.current_time()
    results = await dispatch(
        registry,
        calls(
            ("nap", {"label": "a", "seconds": 3}),
            ("nap", {"label": "b", "seconds": 2}),
            ("nap", {"label": "c", "seconds": 1}),
            ("solo_nap", {"label": "d", "seconds": 1}),
            ("nap", {"label": "e", "seconds": 1}),
            ("nap", {"label": "f", "seconds": 1}),
        ),
        ctx,
        read_only=False,
        on_start=lambda c: started.append(c.args["label"]),
        on_finish=lambda c, r: finished.append(r.content),
    )
    assert [r.content for r in results] == ["a", "b", "c", "d", "e", "f"]
    times = {(kind, label): t - t0 for kind, label, t in log}
    # a, b, c ran together: all started at 0 and finished in reverse order of the calls.
    assert [times["start", x] for x in "abc"] == [0, 0, 0]
    assert [label for kind, label, _ in log if kind == "end"][:3] == ["c", "b", "a"]
    # d is a barrier: it starts when the whole batch is done, and e, f wait for it.
    assert times["start", "d"] == 3 and times["end", "d"] == 4
    assert times["start", "e"] == times["start", "f"] == 4
    assert trio.current_time() - t0 == 5  # concurrent: 3 + 1 + 1, where one by one would take 9
    assert started == ["a", "b", "c", "d", "e", "f"]
    assert finished == ["c", "b", "a", "d", "e", "f"] or finished == ["c", "b", "a", "d", "f", "e"]


async def test_parallel_safe_calls_really_overlap(ctx: ToolContext, autojump_clock: object) -> None:
    meet = Meet()
    with trio.fail_after(60):  # run one after the other, each would wait for the other forever
        results = await dispatch(
            ToolRegistry([meet]),
            calls(("meet", {"me": "x", "other": "y"}), ("meet", {"me": "y", "other": "x"})),
            ctx,
            read_only=True,
        )
    assert [r.content for r in results] == ["x met y", "y met x"]


async def test_unknown_tool_lists_valid_names_and_the_turn_goes_on(ctx: ToolContext, autojump_clock: object) -> None:
    log: Log = []
    results = await dispatch(
        ToolRegistry([Nap(log), SoloNap(log)]),
        calls(("nap", {"label": "a"}), ("read_fiel", {"path": "x"}), ("nap", {"label": "b"})),
        ctx,
        read_only=False,
    )
    assert results[1].is_error
    assert results[1].content == "unknown tool 'read_fiel'; the valid tools are: nap, solo_nap"
    assert [results[0].content, results[2].content] == ["a", "b"]


async def test_bad_arguments_give_the_validation_error(ctx: ToolContext, registry: ToolRegistry) -> None:
    missing = await call(registry, ctx, "read_file", start_line=2)
    assert missing.is_error
    assert missing.content.startswith("invalid arguments for read_file: path: Field required")
    low = await call(registry, ctx, "read_file", path="a", start_line=0)
    assert "start_line: Input should be greater than or equal to 1" in low.content
    extra = await call(registry, ctx, "read_file", path="a", file="b")
    assert "file: Extra inputs are not permitted" in extra.content
    nested = await call(registry, ctx, "edit_file", path="a", edits=[{"old": "x"}])
    assert "edits.0.new: Field required" in nested.content
    assert "pydantic.dev" not in missing.content + low.content + extra.content + nested.content


async def test_read_only_refuses_changing_tools_at_dispatch(ws: Path, ctx: ToolContext) -> None:
    registry = default_registry(use_ripgrep=False)
    schemas_before = registry.schemas()
    (ws / "a.txt").write_text("one\n")
    results = await dispatch(
        registry,
        calls(
            ("write_file", {"path": "b.txt", "content": "x"}),
            ("edit_file", {"path": "a.txt", "edits": [{"old": "one", "new": "two"}]}),
            ("bash", {"command": "touch marker"}),
            ("read_file", {"path": "a.txt"}),
            ("grep", {"pattern": "one"}),
        ),
        ctx,
        read_only=True,
    )
    assert results[0].content == (
        "refused: write_file can change the workspace and this session is read-only (plan mode); "
        "use the read-only tools, and describe the change in your plan instead"
    )
    assert all(r.is_error and r.content.startswith("refused: ") for r in results[:3])
    assert results[3].content == "1\tone" and not results[3].is_error
    assert results[4].content == "a.txt:1:one"
    assert os.listdir(ws) == ["a.txt"]
    assert (ws / "a.txt").read_text() == "one\n"
    assert registry.schemas() == schemas_before  # the mode never changes the tool list


async def test_read_only_flags_of_builtins() -> None:
    registry = default_registry(use_ripgrep=False)
    assert {t.name for t in registry if t.read_only} == {"read_file", "list_dir", "glob", "grep"}
    assert {t.name for t in registry if t.parallel_safe} == {"read_file", "list_dir", "glob", "grep"}


async def test_tool_errors_and_os_errors_become_error_results(
    ws: Path, ctx: ToolContext, registry: ToolRegistry
) -> None:
    [failed] = await dispatch(ToolRegistry([Fails()]), calls(("fails", {"label": "x"})), ctx, read_only=True)
    assert failed.is_error and failed.content == "cannot do x; try something else"
    [result] = await dispatch(
        ToolRegistry([OpensMissing()]), calls(("opens_missing", {"label": "x"})), ctx, read_only=True
    )
    assert result.is_error
    assert result.content.startswith("opens_missing failed: ")
    assert str(ws) not in result.content


async def test_any_exception_a_tool_raises_is_a_result_and_the_other_calls_still_run(
    ctx: ToolContext, autojump_clock: object
) -> None:
    log: Log = []
    registry = ToolRegistry([Breaks(), Nap(log)])
    specs = [("breaks", {"label": label}) for label in ("lookup", "recursion", "value")]
    results = await dispatch(registry, calls(*specs, ("nap", {"label": "after"})), ctx, read_only=True)
    assert [r.is_error for r in results] == [True, True, True, False] and results[3].content == "after"
    assert results[0].content == (
        "breaks failed unexpectedly (LookupError: 'rot13' is not a text encoding); the session goes on. "
        "Try different arguments or another tool"
    )
    assert results[1].content.startswith("breaks failed unexpectedly (RecursionError: maximum recursion depth")
    assert results[2].content.startswith("breaks failed unexpectedly (ValueError); the session goes on.")


async def test_cancellation_propagates_out_of_a_batch(ctx: ToolContext, autojump_clock: object) -> None:
    log: Log = []
    registry = ToolRegistry([Nap(log)])
    with trio.move_on_after(5) as scope:
        await dispatch(
            registry, calls(("nap", {"label": "a", "seconds": 100}), ("nap", {"label": "b", "seconds": 100})), ctx,
            read_only=True,
        )  # fmt: skip
    assert scope.cancelled_caught
    assert [kind for kind, _, _ in log] == ["start", "start"]


def test_duplicate_registration_is_refused() -> None:
    from sessions.tools import DuplicateToolError

    registry = ToolRegistry([Nap([])])
    with pytest.raises(DuplicateToolError):
        registry.register(Nap([]))


async def test_the_gate_and_the_tool_see_their_own_calls_id_in_a_parallel_batch(
    ctx: ToolContext, autojump_clock: object
) -> None:
    """``current_call_id()`` names the call being gated and run, in each of a batch's concurrent tasks (a gate that
    sleeps lets the others interleave): a hook's ``tool_use_id``."""
    seen: list[tuple[str, str, str]] = []

    class Gate:
        async def check(self, tool: Tool[NapArgs], args: NapArgs, ctx: ToolContext) -> str | None:
            await trio.sleep(args.seconds)
            seen.append(("gate", args.label, current_call_id()))
            return None

        async def after(self, tool: Tool[NapArgs], args: NapArgs, result: ToolResult, ctx: ToolContext) -> ToolResult:
            seen.append(("after", args.label, current_call_id()))
            return result

    log: Log = []
    gated = replace(ctx, gate=Gate())
    specs = [("nap", {"label": x, "seconds": s}) for x, s in (("a", 3), ("b", 1), ("c", 2))]
    await dispatch(
        ToolRegistry([Nap(log), SoloNap(log)]), calls(*specs, ("solo_nap", {"label": "d"})), gated, read_only=False
    )
    ids = {"a": "call_0", "b": "call_1", "c": "call_2", "d": "call_3"}
    assert sorted(seen) == sorted((kind, x, ids[x]) for kind in ("gate", "after") for x in "abcd")
    assert [x for kind, x, _ in seen if kind == "gate"] == ["b", "c", "a", "d"]  # they did interleave
    assert current_call_id() == ""  # outside dispatch
