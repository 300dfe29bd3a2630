"""Accounting cost per request of the emulator's prefix cache, as the conversation grows.

For conversations of about 10k, 100k and 500k tokens, the previous request is already accounted (its messages are
memoized and its prefix stored); each timed request appends one new ~150-token user message, as an agent turn does.
Printed: median and p90 milliseconds per request for the accounting layer (render + lookup + store), the part spent
tokenizing the new message, and for scale what tokenizing the whole conversation from scratch would cost.

Run: ``.venv/bin/python bench/emulator_bench.py [--smoke]`` (``--smoke``, CI's size: the 10k conversation, 5 requests).
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

from scenarios.emulator.accounting import Accountant
from scenarios.emulator.render import render_request
from sessions.accounting import tokens

MODEL = "deepseek-v4-flash"
SIZES = (10_000, 100_000, 500_000)
REPEATS = 25


def tool_result(i: int) -> str:
    return "\n".join(
        f"src/mod_{i}/file_{j}.py:{j * 7 + i}: value_{i}_{j} = compute({i}, {j}) # note {i * j}" for j in range(40)
    )


def conversation(target_tokens: int) -> list[dict[str, Any]]:
    msgs: list[dict[str, Any]] = [{"role": "system", "content": "You are the executor. " * 40}]
    total, i = 0, 0
    while total < target_tokens:
        call_id = f"call_{i:04d}"
        msgs.append({"role": "user", "content": f"Step {i}: look at module {i}."})
        msgs.append(
            {
                "role": "assistant",
                "content": "",
                "reasoning_content": f"I will grep module {i}.",
                "tool_calls": [
                    {
                        "id": call_id,
                        "type": "function",
                        "function": {"name": "grep", "arguments": f'{{"q": "mod_{i}"}}'},
                    }
                ],
            }
        )
        result = tool_result(i)
        msgs.append({"role": "tool", "tool_call_id": call_id, "content": result})
        total += tokens.count(result) + 40
        i += 1
    return msgs


def new_message(k: int) -> dict[str, Any]:
    words = " ".join(f"item{k}_{j}" for j in range(60))
    return {"role": "user", "content": f"Next step {k}: check these: {words}"}


def bench(size: int, repeats: int = REPEATS) -> dict[str, float]:
    acct = Accountant(128)
    msgs = conversation(size)
    body: dict[str, Any] = {"model": MODEL, "messages": msgs}
    lookup, _ = acct.account_input(MODEL, body, thinking=True)
    prompt = lookup.prompt_tokens
    timings, new_tok = [], []
    for k in range(repeats):
        msgs = [*msgs, new_message(k)]
        body = {"model": MODEL, "messages": msgs}
        t0 = time.perf_counter()
        tokens.encode(render_request({"messages": [msgs[-1]]}, thinking=True)[-1])
        new_tok.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        lookup, _ = acct.account_input(MODEL, body, thinking=True)
        timings.append(time.perf_counter() - t0)
        assert lookup.prompt_tokens - lookup.hit_tokens < 128 + 400, "only the new message may miss"
    t0 = time.perf_counter()
    tokens.count_many(render_request(body, thinking=True))
    scratch = time.perf_counter() - t0
    timings.sort()
    return {
        "prompt": prompt,
        "messages": len(msgs),
        "median_ms": statistics.median(timings) * 1000,
        "p90_ms": timings[int(len(timings) * 0.9)] * 1000,
        "new_tokenize_ms": statistics.median(new_tok) * 1000,
        "scratch_ms": scratch * 1000,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--smoke", action="store_true", help="CI's smoke size: the 10k conversation, 5 requests")
    smoke = parser.parse_args().smoke
    sizes, repeats = (SIZES[:1], 5) if smoke else (SIZES, REPEATS)
    tokens.tokenizer()  # load the vocabulary outside the timings
    print(f"emulator accounting cost per request (cache unit 128, {repeats} requests each, one new message)")
    print(
        f"{'conversation':>14} {'messages':>9} {'median ms':>10} {'p90 ms':>8} "
        f"{'new-msg tok ms':>15} {'from scratch ms':>16}"
    )
    for size in sizes:
        r = bench(size, repeats)
        print(
            f"{int(r['prompt']):>14,} {int(r['messages']):>9} {r['median_ms']:>10.2f} {r['p90_ms']:>8.2f} "
            f"{r['new_tokenize_ms']:>15.2f} {r['scratch_ms']:>16.1f}"
        )


if __name__ == "__main__":
    main()
