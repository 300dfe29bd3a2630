"""Harness CPU time per turn at 10, 100 and 1000 log entries (DESIGN §7: harness work grows with the new content of a
turn, not with the length of the conversation, apart from joining the bytes that are sent).

    .venv/bin/python bench/harness_bench.py [--sizes 10,100,1000] [--repeat 40]

A real executor session (the ``reasonix run`` prefix: run prompt, built-in tools) whose log is pre-filled with N
realistic entries (user turn, assistant with reasoning and a tool call, a ~2 KB tool result, a final answer), driven by
an in-process reply source that returns canned replies: no network, no emulator, so ``time.process_time`` measures
only our own work. Per turn, the median (and p90) CPU µs over
``--repeat`` fresh sessions at that size:

* ``text turn``  : one request, the model answers (append user turn, build body, account, diagnostics, events);
* ``tool turn``  : two requests: a ``read_file`` call (repair checks, dispatch, a real file read, the result appended)
                   then the answer;
* ``+journal``   : the text turn with the JSONL journal on (each message and event written, fsync at the turn end);
* ``text-body`` / ``tool-body`` : the turn minus the time spent inside ``Session.body()`` during it: the harness work
                   that must stay flat as the log grows;
* ``body()``     : building one request body now (head + ``b",".join`` of the stored bytes + ``]}``);
* ``join``       : the bare ``b",".join`` of the stored bytes, for comparison;
* ``1-join``     : the same bytes as ``body()`` built here with one join (head and the closing ``]}`` folded in), as
                   ``body()`` builds them: what ``body()`` adds to that join is its own call and the head lookup.

Like ``timeit``, the timed turns run with the garbage collector paused (collected before each), so a collection
triggered by the benchmark's own set-up does not land in a turn.
"""

from __future__ import annotations

import argparse
import gc
import itertools
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import trio

from orchestrator.executor_prompt import EXECUTOR_RUN_SYSTEM
from sessions.log import MessageLog
from sessions.prompt.prefix import Prefix, build_prefix
from sessions.session import Session, SessionSettings
from sessions.tools.base import ToolContext
from sessions.tools.registry import ToolRegistry, default_registry
from sessions.wire.messages import (
    AssistantMessage,
    FunctionCall,
    Message,
    ToolCall,
    ToolMessage,
    Usage,
    UserMessage,
)
from sessions.wire.reply import ReplyRequest
from sessions.wire.stream import Reply, StreamEvent

USAGE = Usage(prompt_tokens=20_000, completion_tokens=120, prompt_cache_hit_tokens=19_968, prompt_cache_miss_tokens=32)


def _call(i: int) -> ToolCall:
    return ToolCall(id=f"call_{i:05d}", function=FunctionCall(name="read_file", arguments='{"path": "app.py"}'))


def history(n: int) -> list[Message]:
    """N realistic log entries, repeating user → assistant(tool call) → tool result → assistant(answer)."""
    out: list[Message] = []
    i = 0
    while len(out) < n:
        out.append(UserMessage(content=f"Question {i}: why does add() in app.py return the wrong sum? " * 3))
        out.append(
            AssistantMessage(
                content="",
                reasoning_content=f"Turn {i}: I should read app.py before answering. " * 8,
                tool_calls=(_call(i),),
            )
        )
        out.append(ToolMessage(tool_call_id=f"call_{i:05d}", content="def add(a, b):\n    return a - b\n" * 60))
        out.append(AssistantMessage(content=f"Answer {i}: add() subtracts; it should return a + b. " * 4))
        i += 1
    return out[:n]


class Canned:
    """A reply source that hands back canned replies in order: the network left out."""

    def __init__(self, replies: list[Reply]) -> None:
        self.replies = replies

    async def __call__(self, call: ReplyRequest, emit: Callable[[StreamEvent], None]) -> Reply:
        return self.replies.pop(0)


def answer() -> Reply:
    return Reply(
        message=AssistantMessage(content="add() subtracts; change it to return a + b.", reasoning_content="Easy."),
        usage=USAGE,
        finish_reason="stop",
    )


def tool_call() -> Reply:
    return Reply(
        message=AssistantMessage(content="", reasoning_content="Read it.", tool_calls=(_call(99_999),)),
        usage=USAGE,
        finish_reason="tool_calls",
    )


class TimedSession(Session):
    """A session that keeps the CPU time spent building request bodies, so a turn's time can be split."""

    body_time = 0.0

    def body(self, model: str | None = None, max_tokens: int | None = None) -> bytes:
        t0 = time.process_time()
        data = super().body(model, max_tokens)
        self.body_time += time.process_time() - t0
        return data


def session_at(
    stored: list[bytes],
    messages: list[Message],
    prefix: Prefix,
    registry: ToolRegistry,
    root: Path,
    replies: list[Reply],
    journal: Path | None,
) -> TimedSession:
    kwargs: dict[str, Any] = dict(
        name="executor",
        client=None,
        prefix=prefix,
        registry=registry,
        tool_context=ToolContext(root=root),
        settings=SessionSettings(),
        reply_source=Canned(replies),
    )
    session = TimedSession.start(journal_path=journal, **kwargs)
    assert isinstance(session, TimedSession)
    for message, data in zip(messages, stored, strict=True):
        session.log.append(message, data=data)  # pre-encoded: the set-up does not re-encode
    return session


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def timed_turn(session: TimedSession) -> tuple[float, float]:
    """(CPU seconds of one whole turn, of which building bodies), with the garbage collector paused."""
    gc.collect()
    gc.disable()
    try:
        t0 = time.process_time()
        await session.send("Why is add() wrong?")
        return time.process_time() - t0, session.body_time
    finally:
        gc.enable()


COLUMNS = [
    ("entries", 7), ("log KiB", 7), ("text turn", 9), ("p90", 5), ("tool turn", 9), ("p90", 5), ("+journal", 8),
    ("text-body", 9), ("tool-body", 9), ("body()", 6), ("join", 5), ("1-join", 6),
]  # fmt: skip


async def measure(sizes: list[int], repeat: int) -> None:
    registry = default_registry(use_ripgrep=False)
    prefix = build_prefix(EXECUTOR_RUN_SYSTEM, Session.schemas_for(registry))
    us = 1e6
    med = statistics.median
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "app.py").write_text("def add(a, b):\n    return a - b\n")
        # Warm up: the tokenizer loads lazily, and the first turn pays for imports and caches.
        await session_at([], [], prefix, registry, root, [tool_call(), answer()], None).send("warm up")
        print("CPU µs per turn (median of", repeat, "fresh sessions; p90 beside)")
        print(" ".join(f"{name:>{width}}" for name, width in COLUMNS))
        print("-" * sum(width + 1 for _, width in COLUMNS))
        for n in sizes:
            messages = history(n)
            log = MessageLog()
            for m in messages:
                log.append(m)
            stored = list(log.encoded)
            text: list[float] = []
            text_rest: list[float] = []
            tool: list[float] = []
            tool_rest: list[float] = []
            journaled: list[float] = []
            bodies: list[float] = []
            joins: list[float] = []
            single: list[float] = []
            for r in range(repeat):
                total, in_body = await timed_turn(
                    session_at(stored, messages, prefix, registry, root, [answer()], None)
                )
                text.append(total)
                text_rest.append(total - in_body)
                s = session_at(stored, messages, prefix, registry, root, [tool_call(), answer()], None)
                total, in_body = await timed_turn(s)
                tool.append(total)
                tool_rest.append(total - in_body)
                j = session_at(stored, messages, prefix, registry, root, [answer()], root / f"j{n}-{r}.jsonl")
                journaled.append((await timed_turn(j))[0])

                t0 = time.process_time()
                s.body()
                bodies.append(time.process_time() - t0)
                t0 = time.process_time()
                b",".join(stored)
                joins.append(time.process_time() - t0)
                head, sent = s.bytes.head(s.prefix, s.settings.model), s.log.encoded
                t0 = time.process_time()
                one = b",".join(itertools.chain((head,), sent[:-1], (sent[-1] + b"]}",)))
                single.append(time.process_time() - t0)
                assert one == s.body()
            row = [
                n, sum(map(len, stored)) / 1024, med(text) * us, pct(text, 0.9) * us, med(tool) * us,
                pct(tool, 0.9) * us, med(journaled) * us, med(text_rest) * us, med(tool_rest) * us,
                med(bodies) * us, med(joins) * us, med(single) * us,
            ]  # fmt: skip
            print(" ".join(f"{value:>{width}.0f}" for value, (_, width) in zip(row, COLUMNS, strict=True)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="10,100,1000", help="log sizes in entries (default: 10,100,1000)")
    parser.add_argument("--repeat", type=int, default=40, help="turns measured per size (default: 40)")
    args = parser.parse_args()
    trio.run(measure, [int(s) for s in args.sizes.split(",")], args.repeat)


if __name__ == "__main__":
    main()
