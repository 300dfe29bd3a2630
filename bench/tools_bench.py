"""What the tools cost: prefix bytes and tokens of their schemas, dispatch overhead, and grep on a generated tree.

Run: .venv/bin/python bench/tools_bench.py [--smoke]
Prints figures only (nothing asserted). Times are wall-clock medians of 5 runs on a temporary tree. ``--smoke`` (CI,
``bench/smoke.py``): 200 files, 20 reads, one run of each.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import trio

from sessions.accounting import tokens
from sessions.tools import PreparedCall, ToolContext, ToolRegistry, default_registry, dispatch
from sessions.tools.search.ripgrep import find_rg
from sessions.wire.messages import canonical_dumps, encode_tools


def median_ms(fn: Callable[[], Awaitable[object]], runs: int = 5) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        trio.run(fn)
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


def make_tree(root: Path, files: int) -> None:
    (root / ".gitignore").write_text("build/\n*.log\n")
    for n in range(files):
        sub = root / f"pkg{n % 20}" / f"mod{n % 7}"
        sub.mkdir(parents=True, exist_ok=True)
        body = "".join(f"def f{i}(x):\n    return x + {i}  # value {n}\n" for i in range(40))
        (sub / f"m{n}.py").write_text(body + ("TARGET = 1\n" if n % 50 == 0 else ""))
    (root / "build").mkdir()
    for n in range(files // 4):
        (root / "build" / f"gen{n}.py").write_text("TARGET = 2\n" * 40)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="CI's smoke size: 200 files, 20 reads, one run of each")
    smoke = parser.parse_args().smoke
    files, batch, runs = (200, 20, 1) if smoke else (2000, 100, 5)
    registry = default_registry()
    wire = encode_tools(registry.schemas())
    print("tool schemas in the prefix (sent on every request, cached after the first):")
    for schema in registry.schemas():
        text = canonical_dumps(schema.to_wire())
        print(f"  {schema.function.name:<11} {len(text):>5} bytes {tokens.count(text):>5} tokens")
    print(f"  {'all':<11} {len(wire):>5} bytes {tokens.count(wire.decode()):>5} tokens")

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        make_tree(root, files)
        ctx = ToolContext(root=root)

        reads = [PreparedCall(id=f"c{i}", name="read_file", args={"path": f"pkg{i % 20}/mod{i % 7}/m{i}.py"})
                 for i in range(batch)]  # fmt: skip

        async def read_batch() -> None:
            await dispatch(registry, reads, ctx, read_only=True)

        ms = median_ms(read_batch, runs)
        each = ms / batch * 1000
        print(f"dispatch: {batch} parallel read_file calls (80 lines each): {ms:.1f} ms total, {each:.0f} µs per call")

        matches = len(range(0, files, 50))  # m0, m50, … hold TARGET
        for label, use_rg in (("python", False), ("ripgrep", True)):
            if use_rg and find_rg() is None:
                print("grep ripgrep: no rg (neither beside this Python nor on PATH), skipped")
                continue
            grep = default_registry(use_ripgrep=use_rg)
            call = [PreparedCall(id="g", name="grep", args={"pattern": "TARGET"})]

            async def search(grep: ToolRegistry = grep, call: list[PreparedCall] = call) -> None:
                [result] = await dispatch(grep, call, ctx, read_only=True)
                assert result.data == {"matches": matches}, result.content

            ms = median_ms(search, runs)
            print(f"grep {label}: {files} files (+{files // 4} ignored), {matches} matches: {ms:.0f} ms")


if __name__ == "__main__":
    main()
