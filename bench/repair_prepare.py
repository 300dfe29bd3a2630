"""CPU time of tool-call repair per assistant reply: the common path, and the expensive repairs at size.

Run: .venv/bin/python bench/repair_prepare.py [--smoke]
Prints microseconds per call (best of 5 runs). Nothing here is asserted: figures only. ``--smoke`` (CI,
``bench/smoke.py``): one run each, the smallest size of each repair, 16,000 characters of unclosed tags.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable

from sessions.repair import StormGuard, flatten_schema, prepare_calls
from sessions.wire.messages import AssistantMessage, FunctionCall, FunctionSchema, ToolCall, ToolSchema

KNOWN = {"read_file": None, "write_file": None, "bash": None, "grep": None}


RUNS = 5


def best_us(fn: Callable[[], object], repeat: int) -> float:
    runs = []
    for _ in range(RUNS):
        start = time.process_time()
        for _ in range(repeat):
            fn()
        runs.append((time.process_time() - start) / repeat)
    return min(runs) * 1e6


def msg(*calls: tuple[str, str], content: str = "", reasoning: str = "") -> AssistantMessage:
    return AssistantMessage(
        content=content,
        reasoning_content=reasoning,
        tool_calls=tuple(
            ToolCall(id=f"call_{i}", function=FunctionCall(name=n, arguments=a)) for i, (n, a) in enumerate(calls)
        ),
    )


def _runner(message: AssistantMessage, finish: str) -> Callable[[], object]:
    def run() -> object:
        return prepare_calls(message, finish, known_tools=KNOWN, storm=StormGuard())

    return run


def main() -> None:
    global RUNS  # best_us's runs: one in the smoke size
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="CI's smoke size: one run each, the smallest sizes")
    smoke = parser.parse_args().smoke
    RUNS = 1 if smoke else RUNS
    plain = msg(("read_file", '{"path": "src/app.py"}'), ("bash", '{"command": "pytest -q"}'))
    us = best_us(lambda: prepare_calls(plain, "tool_calls", known_tools=KNOWN, storm=StormGuard()), 2000)
    print(f"2 clean calls:                       {us:9.1f} us")
    for size in (10_000,) if smoke else (10_000, 100_000, 1_000_000):
        body = json.dumps({"path": "big.txt", "content": "x = 1\n" * (size // 6)})[:-10]
        cut = msg(("write_file", body))
        n = max(1, 200_000 // size)
        us = best_us(_runner(cut, "length"), n)
        print(f"truncated write_file, {size:>9,} chars: {us:9.1f} us")
    for size in (10_000,) if smoke else (10_000, 100_000):
        call = '<tool_call>{"name": "bash", "arguments": {"command": "ls"}}</tool_call>'
        reasoning = ("Let me think about this step by step. " * (size // 38))[:size] + call
        sc = msg(reasoning=reasoning)
        n = max(1, 200_000 // size)
        us = best_us(_runner(sc, "stop"), n)
        print(f"scavenge in reasoning, {size:>8,} chars: {us:9.1f} us")
    loop = '<tool_call>{"name": "bash", "arguments": {"command": "ls -la && cat notes.txt, ' * (200 if smoke else 2_000)
    looping = msg(content=loop)
    us = best_us(_runner(looping, "length"), 2)
    print(f"scavenge, {len(loop):,} chars of unclosed tags: {us:9.1f} us")
    deep = {
        "type": "object",
        "properties": {
            f"g{i}": {"type": "object", "properties": {f"f{j}": {"type": "string"} for j in range(4)}} for i in range(4)
        },
    }
    tool = ToolSchema(function=FunctionSchema(name="wide", parameters=deep))
    print(f"flatten_schema, 16 leaves:           {best_us(lambda: flatten_schema(tool), 500):9.1f} us")


if __name__ == "__main__":
    main()
