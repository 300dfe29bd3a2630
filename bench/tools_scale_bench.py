"""glob and grep on a real-sized repository: a generated 50,000-file tree with root and nested .gitignore files.

Run: .venv/bin/python bench/tools_scale_bench.py [--files N] [--ripgrep-only] [--smoke]
Prints figures only (nothing asserted). Times are wall-clock medians of 3 runs, through the same dispatch a session
uses. DESIGN §7: glob and grep answer in well under a second on a 50,000-file tree (target: under 0.5 s).
``--smoke`` (CI, ``bench/smoke.py``): 50 kept files in 5 packages, 300 ignored, one run of each.
"""

from __future__ import annotations

import argparse
import functools
import statistics
import tempfile
import time
from pathlib import Path

import trio

from sessions.tools import PreparedCall, ToolContext, ToolRegistry, default_registry, dispatch
from sessions.tools.search.ripgrep import find_rg

PACKAGES = 50
MODULES = 10


def make_tree(root: Path, files: int, packages: int = PACKAGES, build_files: int = 2_000) -> int:
    """``files`` kept files under ``src/`` plus ignored ones (root ``build/``, nested ``generated/`` and ``*.tmp``).

    Returns the number of ignored files written."""
    (root / ".gitignore").write_text("build/\n*.log\nnode_modules/\n")
    per_module = max(1, files // (packages * MODULES))
    ignored = 0
    for p in range(packages):
        pkg = root / "src" / f"pkg{p}"
        pkg.mkdir(parents=True)
        (pkg / ".gitignore").write_text("generated/\n*.tmp\n")
        (pkg / "generated").mkdir()
        for n in range(20):
            (pkg / "generated" / f"gen{n}.py").write_text("TARGET = 0\n")
            (pkg / f"scratch{n}.tmp").write_text("TARGET = 0\n")
            ignored += 2
        for m in range(MODULES):
            mod = pkg / f"mod{m}"
            mod.mkdir()
            for n in range(per_module):
                body = f"def f{n}(x):\n    return x + {n}\n" + ("TARGET = 1\n" if (p + m + n) % 97 == 0 else "")
                (mod / f"file{n}.py").write_text(body)
    build = root / "build"
    build.mkdir()
    for n in range(build_files):
        (build / f"out{n}.py").write_text("TARGET = 2\n")
        ignored += 1
    return ignored


def median_s(
    registry: ToolRegistry, ctx: ToolContext, name: str, args: dict[str, object], runs: int = 3
) -> tuple[float, str]:
    calls = [PreparedCall(id="c", name=name, args=args)]
    times: list[float] = []
    content = ""
    for _ in range(runs):
        start = time.perf_counter()
        [result] = trio.run(functools.partial(dispatch, registry, calls, ctx, read_only=True))
        times.append(time.perf_counter() - start)
        content = result.content
    return statistics.median(times), content


def summary(content: str) -> str:
    lines = content.split("\n")
    if lines[-1].startswith("… "):
        return lines[-1][2:].split(";")[0] + f" + {len(lines) - 1} shown"
    return f"{len(lines)} lines" if not content.startswith("no ") else content


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--files", type=int, default=50_000)
    parser.add_argument("--ripgrep-only", action="store_true", help="skip the (slow) Python fallback")
    parser.add_argument("--smoke", action="store_true", help="CI's smoke size: 50 files in 5 packages, one run")
    options = parser.parse_args()
    files, packages, build_files, runs = (50, 5, 100, 1) if options.smoke else (options.files, PACKAGES, 2_000, 3)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        start = time.perf_counter()
        ignored = make_tree(root, files, packages, build_files)
        print(f"tree: {files} files kept + {ignored} ignored, written in {time.perf_counter() - start:.1f} s")
        print(f"ripgrep: {find_rg() or 'not found (Python fallback)'}")
        ctx = ToolContext(root=root)
        backends = [] if options.ripgrep_only else [("python", default_registry(use_ripgrep=False))]
        if find_rg() is not None:
            backends.insert(0, ("ripgrep", default_registry(use_ripgrep=True)))
        for label, registry in backends:
            for pattern in ("*.py", "src/pkg3/**/file1.py", "src/pkg7/mod2/*.py", "**/mod3/file7.py", "*.tmp"):
                seconds, content = median_s(registry, ctx, "glob", {"pattern": pattern}, runs)
                print(f"glob {label:<8} {pattern!r:<26} {seconds:6.3f} s  ({summary(content)})")
            for args in ({"pattern": "TARGET"}, {"pattern": "TARGET", "path": "src/pkg3"}, {"pattern": "^def f7\\("}):
                seconds, content = median_s(registry, ctx, "grep", dict(args), runs)
                shown = " ".join(f"{k}={v!r}" for k, v in args.items())
                print(f"grep {label:<8} {shown:<26} {seconds:6.3f} s  ({summary(content)})")


if __name__ == "__main__":
    main()
