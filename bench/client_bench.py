"""Client overhead per streamed chunk, and tokenizer throughput, on this machine.

    .venv/bin/python bench/client_bench.py [--chunks 20000] [--repeat 3] [--smoke]

Overhead is measured on a long synthetic DeepSeek stream (reasoning, content, then two tool calls whose arguments
arrive in small fragments, usage on the last chunk), shaped like the recorded samples in tests/fixtures/deepseek-wire:

* ``sse``       : the SSE line parser alone;
* ``assemble``  : SSE parser + chunk JSON decoding (pydantic) + the StreamAssembler, no IO;
* ``client``    : the whole client (httpx + MockTransport + reader task + memory channel + events to the caller),
                  with the body arriving in 16 KiB reads and, worst case, one read per SSE line.

Tokenizer throughput counts tokens of a mixed corpus (this repository's Python source, English and Chinese prose)
with the real DeepSeek vocabulary through ``sessions.accounting.tokens``. ``--smoke`` (CI, ``bench/smoke.py``): 500
chunks, one run, the corpus cut to 100 KB.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import httpx
import trio

from sessions.accounting import tokens
from sessions.wire.client import ClientSettings, DeepSeekClient
from sessions.wire.messages import ChatRequest, UserMessage
from sessions.wire.sse import SseData, SseParser
from sessions.wire.stream import Completed, StreamAssembler, decode_chunk

ROOT = Path(__file__).resolve().parent.parent
HEAD = {
    "id": "6e77be01-935b-42f6-8b05-d6c763528589",
    "object": "chat.completion.chunk",
    "created": 1786782779,
    "model": "deepseek-v4-flash",
    "system_fingerprint": "a26a7955944dc5c60445bff77fac9c8e",
}
WORDS = ["The", " user", " asks", " about", " the", " weather", " in", " San", " Francisco", ".", " 我", "可以", "帮"]


def _chunk(delta: dict[str, object], finish: str | None = None, usage: dict[str, object] | None = None) -> bytes:
    body = {
        **HEAD,
        "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
        "usage": usage,
    }
    return b"data: " + json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode() + b"\n\n"


def synthetic_stream(n: int) -> bytes:
    """``n`` chunks: 60 % reasoning, 30 % content, 10 % tool-call argument fragments (two calls)."""
    parts = [_chunk({"role": "assistant", "content": None, "reasoning_content": ""})]
    n_reason, n_content = int(n * 0.6), int(n * 0.3)
    n_args = max(4, n - n_reason - n_content - 4)
    parts += [_chunk({"content": None, "reasoning_content": WORDS[i % len(WORDS)]}) for i in range(n_reason)]
    parts += [_chunk({"content": WORDS[i % len(WORDS)]}) for i in range(n_content)]
    for call in range(2):
        parts.append(
            _chunk(
                {
                    "tool_calls": [
                        {
                            "index": call,
                            "id": f"call_0{call}_x",
                            "type": "function",
                            "function": {"name": "weather", "arguments": ""},
                        }
                    ]
                }
            )
        )
        pieces = ['{"', "location", '": "', *(["San Francisco "] * (n_args // 2 - 4)), '"}']
        parts += [_chunk({"tool_calls": [{"index": call, "function": {"arguments": p}}]}) for p in pieces]
    usage = {
        "prompt_tokens": 374,
        "completion_tokens": n,
        "total_tokens": 374 + n,
        "prompt_tokens_details": {"cached_tokens": 256},
        "prompt_cache_hit_tokens": 256,
        "prompt_cache_miss_tokens": 118,
    }
    parts.append(_chunk({"content": "", "reasoning_content": None}, finish="tool_calls", usage=usage))
    parts.append(b"data: [DONE]\n\n")
    return b"".join(parts)


def best_of(repeat: int, fn: Callable[[], object]) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def bench_sse(body: bytes) -> None:
    parser = SseParser()
    for i in range(0, len(body), 16384):
        parser.feed(body[i : i + 16384])


def bench_assemble(body: bytes) -> None:
    parser = SseParser()
    assembler = StreamAssembler()
    for i in range(0, len(body), 16384):
        for item in parser.feed(body[i : i + 16384]):
            if isinstance(item, SseData):
                assembler.feed(decode_chunk(item.payload))
    assembler.finish()


class _Body(httpx.AsyncByteStream):
    def __init__(self, pieces: list[bytes]) -> None:
        self.pieces = pieces

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for piece in self.pieces:
            yield piece


def bench_client(body: bytes, per_line: bool) -> None:
    pieces = body.splitlines(keepends=True) if per_line else [body[i : i + 16384] for i in range(0, len(body), 16384)]

    async def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, stream=_Body(pieces))

    async def main() -> None:
        request = ChatRequest(model="deepseek-v4-flash", messages=(UserMessage(content="hi"),))
        async with (
            DeepSeekClient(
                base_url="http://bench.invalid",
                api_key="k",
                settings=ClientSettings(),
                transport=httpx.MockTransport(handler),
            ) as client,
            client.stream(request) as events,
        ):
            async for event in events:
                if isinstance(event, Completed):
                    assert event.reply.finish_reason == "tool_calls"

    trio.run(main)


def corpus(limit: int | None = None) -> str:
    files = sorted(
        p for pkg in ("sessions", "orchestrator", "plans", "scenarios", "tests") for p in (ROOT / pkg).rglob("*.py")
    )
    code = "".join(p.read_text(encoding="utf-8") for p in files)
    prose = (
        "The planner reads the repository and writes a plan; the executor carries it out step by step. "
        "规划器只读取代码库并编写计划，执行器逐步执行。"
    ) * 2000
    text = code + prose
    return text if limit is None else text[: limit // 2] + text[-limit // 2 :]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--chunks", type=int, default=20000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--smoke", action="store_true", help="CI's smoke size: 500 chunks, one run, 100 KB of corpus")
    args = parser.parse_args()
    if args.smoke:
        args.chunks, args.repeat = 500, 1

    body = synthetic_stream(args.chunks)
    n = body.count(b"data: {")  # chunks; [DONE] excluded
    print(f"synthetic stream: {n} chunks, {len(body) / 1e6:.2f} MB, {len(body) / n:.0f} B/chunk")
    figures = {
        "sse parser only": best_of(args.repeat, lambda: bench_sse(body)),
        "sse + decode + assembler (no IO)": best_of(args.repeat, lambda: bench_assemble(body)),
        "whole client, 16 KiB reads": best_of(args.repeat, lambda: bench_client(body, per_line=False)),
        "whole client, one read per line": best_of(args.repeat, lambda: bench_client(body, per_line=True)),
    }
    for name, seconds in figures.items():
        print(f"  {name:<34} {seconds / n * 1e6:8.2f} µs/chunk   ({n / seconds:,.0f} chunks/s)")
    overhead = figures["whole client, 16 KiB reads"] - figures["sse + decode + assembler (no IO)"]
    print(f"  {'client machinery beyond assembly':<34} {overhead / n * 1e6:8.2f} µs/chunk")

    text = corpus(100_000 if args.smoke else None)
    size_mb = len(text.encode("utf-8")) / 1e6
    start = time.perf_counter()
    tokens.count("warm up: load the vocabulary")
    load_s = time.perf_counter() - start
    single = best_of(args.repeat, lambda: tokens.count(text))
    lines = text.splitlines()
    batches = [lines[i : i + 64] for i in range(0, len(lines), 64)]
    batched = best_of(args.repeat, lambda: [tokens.count_many(["\n".join(b)]) for b in batches])
    per_message = [("\n".join(b)) for b in batches]
    many = best_of(args.repeat, lambda: tokens.count_many(per_message))
    count = tokens.count(text)
    print(
        f"tokenizer: corpus {size_mb:.2f} MB, {count:,} tokens ({len(text.encode()) / count:.2f} B/token), "
        f"vocabulary load {load_s * 1e3:.0f} ms"
    )
    print(f"  {'count(one big text)':<34} {size_mb / single:8.2f} MB/s")
    print(f"  {'count per 64-line message':<34} {size_mb / batched:8.2f} MB/s")
    print(f"  {'count_many(all messages, batch)':<34} {size_mb / many:8.2f} MB/s")
    print(f"(best of {args.repeat} runs each; the machine is shared, so rerun before comparing figures)")


if __name__ == "__main__":
    main()
