"""What a long edit-heavy session costs with each of issue 30's items on or off (DESIGN §5 "Re-reads").

The session works on a real package's own source: this repository's ``plans/`` copied into a temporary workspace,
with a generated test file of 200 passing tests and one that fails. 42 rounds, one user turn each (a tool call, then
a short answer), six cycles over six modules M (C: the next module, M's "caller"):

1. read M; 2. grep a function of M across ``plans/``; 3. outline C (item 3 off: read C whole); 4. read one function
of C (its lines from the outline); 5. edit M (a comment line before that function); 6. read M again; 7. run the tests
(``pytest -v``).

Every tool really runs; the emulator stands in for DeepSeek (its prefix cache in 128-token units, a cold cache at
the start, peak prices pinned). Variants: every item off (the session as it was before issue 30, but with its longer
read_file schema), each item alone, every item on. Items: 1 a re-read after the session's own edit sends the changed
lines; 2 a read overlapping lines already shown sends the lines not shown yet; 3 ``outline=true``; 4 a test run's
passing progress folded. ``--only all,none,1,2,3,4`` picks variants; ``--smoke`` (CI, ``bench/smoke.py``): one cycle
(7 rounds), every item on.

Run: ``PYTHONPATH=. .venv/bin/python bench/long_session_bench.py [--only VARIANTS] [--smoke]``
"""

from __future__ import annotations

import argparse
import ast
import shutil
import sys
import tempfile
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import trio

from scenarios.emulator import ReplySpec, Script, SessionSpec, ToolCallSpec, open_emulator
from sessions.prompt.memory import load_standing_memory
from sessions.prompt.prefix import build_prefix
from sessions.session import Session, SessionSettings
from sessions.tools.base import ToolContext, ToolLimits
from sessions.tools.read_memory import FileView, ReadMemory
from sessions.tools.registry import default_registry
from sessions.wire.client import ClientSettings, DeepSeekClient

ROOT = Path(__file__).resolve().parent.parent
MODULES = ("graph.py", "lenient.py", "render.py", "revision.py", "schema.py", "loader.py")
SYSTEM = "You are the executor of a coding agent. Work in the workspace with the tools and answer briefly."
PEAK = datetime(2026, 12, 1, 2, 0, tzinfo=UTC)
TESTS = (
    "import pytest\n\nimport plans\n\n\n@pytest.mark.parametrize('n', range(200))\n"
    "def test_the_package_exports_its_names(n):\n    assert plans.__all__\n\n\n"
    "def test_a_known_failure():\n    assert plans.__name__ == 'plan', 'a failure the session leaves alone'\n"
)
ITEMS = {1: "re-read after own edit", 2: "overlapping read", 3: "outline", 4: "folded test run"}


class Memory(ReadMemory):
    """The session's read memory with items 1 and 2 switchable: off, such a read returns the text as read."""

    def __init__(self, edits: bool, overlaps: bool) -> None:
        super().__init__()
        self.edits, self.overlaps = edits, overlaps

    def present(self, call_id: str, view: FileView, content: str, epoch: int) -> str:
        known = self.known.get(view.path)
        if known is not None and not view.full:
            off = (view.sha256 == known.sha256 and not self.overlaps) or (
                view.sha256 != known.sha256 and view.sha256 == known.expected and not self.edits
            )
            if off:
                view = view.model_copy(update={"full": True})
        return super().present(call_id, view, content, epoch)


def _functions(path: Path) -> list[tuple[str, int, int]]:
    tree = ast.parse(path.read_text())
    return [(n.name, n.lineno, n.end_lineno or n.lineno) for n in tree.body if isinstance(n, ast.FunctionDef)]


def _call(name: str, **arguments: Any) -> ReplySpec:
    return ReplySpec(reasoning=f"Use {name}.", tool_calls=(ToolCallSpec(name=name, arguments=arguments),))


def rounds(ws: Path, outline: bool, cycles: int = len(MODULES)) -> list[ReplySpec]:
    """The tool call of every round, in order."""
    calls: list[ReplySpec] = []
    test = f"{sys.executable} -m pytest -v -p no:cacheprovider tests"
    for i, module in enumerate(MODULES[:cycles]):
        caller = MODULES[(i + 1) % len(MODULES)]
        name, _first, _last = _functions(ws / "plans" / module)[0]
        other, first, last = _functions(ws / "plans" / caller)[-1]
        def_line = next(
            line for line in (ws / "plans" / module).read_text().splitlines() if line.startswith(f"def {name}(")
        )
        calls += [
            _call("read_file", path=f"plans/{module}"),
            _call("grep", pattern=rf"\b{name}\b", path="plans"),
            _call("read_file", path=f"plans/{caller}", **({"outline": True} if outline else {})),
            _call("read_file", path=f"plans/{caller}", start_line=first, end_line=last),
            _call("edit_file", path=f"plans/{module}", edits=[{"old": def_line, "new": f"# on {other}\n{def_line}"}]),
            _call("read_file", path=f"plans/{module}"),
            _call("bash", command=test),
        ]
    return calls


def workspace(parent: Path) -> Path:
    ws = parent / "ws"
    shutil.copytree(ROOT / "plans", ws / "plans", ignore=shutil.ignore_patterns("__pycache__"))
    (ws / "tests").mkdir()
    (ws / "tests" / "test_plans_exports.py").write_text(TESTS)
    return ws


async def run_variant(on: set[int], cycles: int = len(MODULES)) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        ws = workspace(Path(tmp))
        calls = rounds(ws, outline=3 in on, cycles=cycles)
        replies = tuple(r for c in calls for r in (c, ReplySpec(content="Noted.")))
        tools = default_registry(use_ripgrep=False)
        prefix = build_prefix(SYSTEM, Session.schemas_for(tools), load_standing_memory(ws, stop_at=ws))
        limits = replace(ToolLimits(), fold_test_runs=4 in on)
        async with open_emulator(script=Script(sessions=(SessionSpec(key="executor", replies=replies),))) as emu:
            client = DeepSeekClient(base_url=emu.base_url, api_key="bench", settings=ClientSettings())
            async with client:
                session = Session.start(
                    journal_path=Path(tmp) / "run" / "executor.jsonl",
                    name="executor",
                    client=client,
                    prefix=prefix,
                    registry=tools,
                    tool_context=ToolContext(root=ws, env={"PYTHONPATH": str(ws)}, limits=limits),
                    settings=SessionSettings(),
                    clock=lambda: PEAK,
                )
                session.tool_batch.reads = Memory(edits=1 in on, overlaps=2 in on)
                for n in range(1, len(calls) + 1):
                    await session.send(f"Round {n}: go on with the review.")
    u = session.usage
    return {
        "rounds": len(calls),
        "requests": session.requests,
        "prompt": u.prompt_tokens,
        "miss": u.prompt_cache_miss_tokens,
        "ratio": u.prompt_cache_hit_tokens / u.prompt_tokens,
        "cost": session.cost_usd,
    }


VARIANTS = {
    "none": set[int](),
    **{str(k): {k} for k in ITEMS},
    "all": set(ITEMS),
}


def _label(variant: str) -> str:
    if variant in ("none", "all"):
        return {"none": "every item off", "all": "every item on"}[variant]
    return f"only item {variant} ({ITEMS[int(variant)]})"


async def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--only", default=",".join(VARIANTS), help="variants to run: none, 1, 2, 3, 4, all")
    parser.add_argument("--smoke", action="store_true", help="CI's smoke size: one cycle, every item on")
    args = parser.parse_args()
    if args.smoke:
        args.only = "all"
    cycles = 1 if args.smoke else len(MODULES)
    chosen = [v.strip() for v in args.only.split(",") if v.strip()]
    rows = {v: await run_variant(VARIANTS[v], cycles) for v in chosen}
    base = rows.get("none")
    print(f"{cycles * 7} rounds over this repository's plans/ ({', '.join(MODULES[:cycles])}), peak prices")
    print("| variant | requests | prompt tokens | miss tokens | hit ratio | cost $ | cost vs none |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for v, r in rows.items():
        versus = f"{r['cost'] / base['cost']:.2f}x" if base else ""
        cells = [_label(v), str(r["requests"]), f"{r['prompt']:,}", f"{r['miss']:,}", f"{r['ratio']:.1%}"]
        print("| " + " | ".join([*cells, f"{r['cost']:.5f}", versus]) + " |")


if __name__ == "__main__":
    trio.run(main)
