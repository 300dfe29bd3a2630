"""What unchanged re-reads cost, before and after they became a short note (issue 14 item 3, DESIGN §5).

A 12-round exploration of a real package's source (the installed httpx): one session, one user turn per round, each
round reads one file (``read_file``, the first 400 lines at most) and answers; rounds 7-12 read the same 6 files
again, unchanged. Run against the emulator (its prefix cache, 128-token units, a cold cache at the start) twice:
with the note ("after"), and with a read_file whose results carry no ``unchanged_key`` ("before": every re-read sends
the text again). Printed per variant: requests, prompt tokens, cache hits and misses, hit ratio, cost (peak prices,
pinned by the session's clock).

Run: ``.venv/bin/python bench/reread_bench.py [--smoke]`` (``--smoke``, CI's size: 2 files, 4 rounds a variant).
"""

from __future__ import annotations

import argparse
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import trio

from scenarios.emulator import ReplySpec, Script, SessionSpec, ToolCallSpec, open_emulator
from sessions.prompt.memory import load_standing_memory
from sessions.prompt.prefix import build_prefix
from sessions.session import Session, SessionSettings
from sessions.tools.base import ToolContext, ToolResult
from sessions.tools.files.read_file import ReadFileArgs, ReadFileTool
from sessions.tools.registry import ToolRegistry, default_registry
from sessions.wire.client import ClientSettings, DeepSeekClient

PEAK = datetime(2026, 12, 1, 2, 0, tzinfo=UTC)
"""A Tuesday at 02:00 UTC: peak prices, whatever the hour the bench runs."""
FILES = ("_api.py", "_auth.py", "_config.py", "_exceptions.py", "_decoders.py", "_urls.py")
SYSTEM = "You are the executor of a coding agent. Explore the package with the tools and answer briefly."


class ReadFileWithoutNote(ReadFileTool):
    """read_file as it was before: no ``unchanged_key`` and no view, so a re-read returns the text again."""

    async def run(self, args: ReadFileArgs, ctx: ToolContext) -> ToolResult:
        result = await super().run(args, ctx)
        return result.model_copy(update={"unchanged_key": None, "view": None})


def registry(note: bool) -> ToolRegistry:
    tools = default_registry(use_ripgrep=False)
    if note:
        return tools
    return ToolRegistry(ReadFileWithoutNote() if t.name == "read_file" else t for t in tools)


def script(files: tuple[str, ...] = FILES) -> Script:
    replies: list[ReplySpec] = []
    for name in files * 2:
        replies.append(
            ReplySpec(
                reasoning=f"Read {name} to see how it fits.",
                tool_calls=(ToolCallSpec(name="read_file", arguments={"path": name}),),
            )
        )
        replies.append(ReplySpec(content=f"{name}: noted."))
    return Script(sessions=(SessionSpec(key="executor", replies=tuple(replies)),))


async def explore(root: Path, note: bool, files: tuple[str, ...] = FILES) -> dict[str, Any]:
    tools = registry(note)
    prefix = build_prefix(SYSTEM, Session.schemas_for(tools), load_standing_memory(root, stop_at=root))
    async with open_emulator(script=script(files)) as emu:
        client = DeepSeekClient(base_url=emu.base_url, api_key="bench", settings=ClientSettings())
        async with client:
            session = Session.start(
                journal_path=None,
                name="executor",
                client=client,
                prefix=prefix,
                registry=tools,
                tool_context=ToolContext(root=root),
                settings=SessionSettings(),
                clock=lambda: PEAK,
            )
            for i, name in enumerate(files * 2, start=1):
                await session.send(f"Round {i}: what does {name} do?")
    u = session.usage
    return {
        "requests": session.requests,
        "prompt": u.prompt_tokens,
        "hit": u.prompt_cache_hit_tokens,
        "miss": u.prompt_cache_miss_tokens,
        "ratio": u.prompt_cache_hit_tokens / u.prompt_tokens,
        "cost": session.cost_usd,
    }


async def main(smoke: bool) -> None:
    root = Path(httpx.__file__).parent
    files = FILES[:2] if smoke else FILES
    print(f"{2 * len(files)} rounds over httpx {httpx.__version__} ({root}): {', '.join(files)}, each read twice")
    rows = {"before": await explore(root, note=False, files=files), "after": await explore(root, True, files)}
    print(f"{'':8}{'requests':>9}{'prompt':>10}{'hit':>10}{'miss':>8}{'hit ratio':>11}{'cost $':>11}")
    for label, r in rows.items():
        print(
            f"{label:8}{r['requests']:>9}{r['prompt']:>10}{r['hit']:>10}{r['miss']:>8}{r['ratio']:>11.2%}"
            f"{r['cost']:>11.6f}"
        )
    b, a = rows["before"], rows["after"]
    print(
        f"after/before: prompt tokens {a['prompt'] / b['prompt']:.2f}x, missed tokens {a['miss'] / b['miss']:.2f}x, "
        f"cost {a['cost'] / b['cost']:.2f}x"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="CI's smoke size: 2 files, 4 rounds a variant")
    trio.run(main, parser.parse_args().smoke)
