"""MCP figures on this machine: how long the notes test server takes to start and list its tools, a small call's
latency, a 10 MB result's time and the size it is cut to, and the executor's tool-schema bytes with and without it.

    .venv/bin/python bench/mcp_bench.py [--smoke]

``--smoke`` (CI, ``bench/smoke.py``): 3 calls, and no 10 MB result (about five seconds of a loaded machine's CPU; the
cut itself is tested in tests/orchestrator/mcp).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

import trio

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from orchestrator.config.mcp import McpConfig, McpServerConfig  # noqa: E402
from orchestrator.mcp.hub import McpHub  # noqa: E402
from orchestrator.mcp.tool import McpArgs  # noqa: E402
from sessions.session import Session  # noqa: E402
from sessions.tools.base import ToolContext, ToolResult  # noqa: E402
from sessions.tools.registry import ToolRegistry, default_registry  # noqa: E402
from sessions.wire.messages import encode_tools  # noqa: E402

SERVER = ROOT / "tests" / "orchestrator" / "mcp" / "notes_server.py"


async def main(smoke: bool) -> None:
    calls = 3 if smoke else 20
    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp)
        server = McpServerConfig(command=sys.executable, args=[str(SERVER), "--misbehave"])
        hub = McpHub(McpConfig(servers={"notes": server}), ws)
        start = trio.current_time()
        async with hub.open():
            started = trio.current_time() - start
            tools = {t.name: t for t in hub.tools()}
            ctx = ToolContext(root=ws)
            await tools["mcp__notes__write_note"].run(McpArgs(name="a", text="x"), ctx)
            times = []
            for _ in range(calls):
                t0 = trio.current_time()
                await tools["mcp__notes__read_note"].run(McpArgs(name="a"), ctx)
                times.append(trio.current_time() - t0)
            huge: ToolResult | None = None
            huge_s = 0.0
            if not smoke:
                t0 = trio.current_time()
                huge = await tools["mcp__notes__huge"].run(McpArgs(), ctx)
                huge_s = trio.current_time() - t0
            built_in = encode_tools(Session.schemas_for(default_registry()))
            with_mcp = encode_tools(Session.schemas_for(ToolRegistry([*default_registry(), *hub.tools()])))
    print(f"start + list tools (1 stdio server): {started:.2f} s")
    median, most = statistics.median(times) * 1000, max(times) * 1000
    print(f"read_note call: median {median:.1f} ms, max {most:.1f} ms ({calls} calls)")
    if huge is not None:
        print(f"10 MB result: {huge_s:.2f} s, cut to {len(huge.content)} characters")
    print(f"tool schemas: {len(built_in)} bytes built-in, {len(with_mcp)} bytes with the notes server's 4 tools")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--smoke", action="store_true", help="CI's smoke size: 3 calls, no 10 MB result")
    trio.run(main, parser.parse_args().smoke)
