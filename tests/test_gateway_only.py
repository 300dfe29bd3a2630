"""Nothing but the gateway opens a workspace path by name (issue 43, build item 1).

Every call that opens a file by its path — ``open()``, ``io.open``/``os.open`` without ``dir_fd``,
``Path.read_text/read_bytes/write_text/write_bytes``, ``Path.open`` with a mode, ``plans.write_atomic`` — is found in
the product packages by their syntax tree. A module may hold such calls only if it is listed below with their number
and the reason none of them names workspace content: what the model, a tool argument or a file in the workspace
names goes through ``sessions.tools.gateway`` instead. A new call anywhere, or one more in a listed module, fails
here: route it through the gateway, or, when the file is not workspace content, raise the count and say why.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("sessions", "orchestrator", "plans", "scenarios")
GATEWAY = "sessions/tools/gateway/"
PATH_CALLS = frozenset({"read_text", "read_bytes", "write_text", "write_bytes"})
MODES = frozenset({"r", "rb", "rt", "r+", "rb+", "r+b", "w", "wb", "wt", "w+", "a", "ab", "at", "x", "xb"})

STATE = "Reasonix's own run state under .reasonix/ (read-only to the sandbox; links refused where it is written)"
RUN_DIR = "files in a run's or a batch's own directory, which Reasonix made"
TEMP = "a temporary directory of its own"
USER_FILE = "a file the user names on the command line or keeps in their config directory"
PROC = "/proc and cgroup files of the host"

ALLOWED: dict[str, tuple[int, str]] = {
    # sessions/
    "sessions/accounting/prices.py": (1, "the package's own prices.json"),
    "sessions/journal/jsonl.py": (3, "the session journal, in the run directory or the state home"),
    "sessions/journal/kept_output.py": (1, "kept outputs beside the journal (read back through the gateway)"),
    "sessions/sandbox/bounds.py": (5, PROC),
    "sessions/sandbox/reaper.py": (4, PROC + "; the first line of the program to run, O_NONBLOCK, a regular file only"),
    # The workspace's `.git` pointer file is read through the gateway (bounded, regular files only).
    "sessions/sandbox/hide.py": (1, "/proc/PID/net/unix"),
    "sessions/tiers/archive.py": (2, "the session's archive in its state directory"),
    # orchestrator/
    "orchestrator/acp/tools.py": (1, TEMP),
    "orchestrator/batch/goal_run.py": (2, RUN_DIR),
    "orchestrator/batch/ray_engine.py": (5, RUN_DIR),
    "orchestrator/batch/result.py": (2, RUN_DIR),
    "orchestrator/batch/spec.py": (1, USER_FILE),
    "orchestrator/batch/workspace.py": (1, RUN_DIR),
    "orchestrator/bench/oracle.py": (2, "the suite's fix.patch (suite input, not a workspace)"),
    "orchestrator/bench/report.py": (1, USER_FILE),
    "orchestrator/bench/results.py": (1, USER_FILE),
    "orchestrator/bench/task.py": (2, "the suite's task files (suite input, not a workspace)"),
    "orchestrator/bench/workspace.py": (1, "the sdist in the user's cache, checked by sha256"),
    "orchestrator/branches/merge.py": (1, TEMP),
    "orchestrator/branches/workspace.py": (5, "a branch's state in the run directory and git's fresh worktree files"),
    "orchestrator/checkpoints/git.py": (2, "the checkpoint store in the state home"),
    "orchestrator/checkpoints/objects.py": (4, "the checkpoint store's loose objects and head, in the state home"),
    "orchestrator/checkpoints/ledger.py": (2, "the checkpoint store in the state home"),
    "orchestrator/cli/commands/bench.py": (1, USER_FILE),
    "orchestrator/cli/options.py": (1, USER_FILE),
    "orchestrator/cli/setup_provider.py": (1, USER_FILE),
    "orchestrator/cli/setup_wizard.py": (2, USER_FILE),
    "orchestrator/conversation/engine.py": (1, STATE + "; the pointer files it writes are read through the gateway"),
    # The user's own config file, by name (a symlink there is the user's). The workspace's reasonix.toml,
    # reasonix.local.toml and .mcp.json go through the gateway (read_config_bytes(within=workspace)).
    "orchestrator/config/files.py": (1, USER_FILE),
    "orchestrator/config/trust.py": (2, "the trust store in the state home"),
    "orchestrator/exits.py": (1, "os.devnull"),
    "orchestrator/goal/parallel/forks.py": (2, RUN_DIR),
    "orchestrator/headless/conversation.py": (
        2,
        STATE + "; --fork-session copies a sealed run's journal (O_NOFOLLOW) into the run it just made (O_EXCL)",
    ),
    "orchestrator/goal/store.py": (8, STATE + "; .reasonix/.gitignore made and upgraded with O_NOFOLLOW"),
    "orchestrator/conversation/turn_log.py": (6, STATE),
    "orchestrator/replay/killed.py": (2, RUN_DIR),
    "orchestrator/replay/recorder.py": (1, USER_FILE),
    "orchestrator/run_seal.py": (
        4,
        "the user's run key in the state home, and the seal in a run directory Reasonix made",
    ),
    "orchestrator/replay/runner.py": (1, "a checkpoint store's own record of its workspace, in the state home"),
    "orchestrator/review/editor.py": (2, TEMP),
    "orchestrator/runs/history.py": (1, STATE),
    "orchestrator/serve/events.py": (3, RUN_DIR),
    "orchestrator/serve/manager.py": (2, RUN_DIR),
    "orchestrator/serve/workspaces.py": (2, "the server's list of workspaces in the state home"),
    "orchestrator/subagents/runner.py": (2, RUN_DIR),
    "orchestrator/unattended/report.py": (1, RUN_DIR),
    # plans/ and scenarios/
    "plans/loader.py": (1, USER_FILE),
    "plans/storage.py": (1, "write_atomic itself; its callers are counted"),
    "scenarios/emulator/script.py": (1, USER_FILE),
    "scenarios/format.py": (2, "a scenario's own files"),
    "scenarios/library/_build.py": (1, "the scenario library's own files"),
    "scenarios/workspace.py": (3, "a scenario's seed workspace, written before anything runs in it"),
}


def opens_by_name(source: str) -> list[tuple[int, str]]:
    """``(line, call)`` for every call in ``source`` that opens a file by its path."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        fn = node.func
        if isinstance(fn, ast.Name) and fn.id in ("open", "write_atomic") and node.args:
            found.append((node.lineno, fn.id))
        elif isinstance(fn, ast.Attribute) and fn.attr in PATH_CALLS:
            found.append((node.lineno, fn.attr))
        elif isinstance(fn, ast.Attribute) and fn.attr == "open":
            module = fn.value.id if isinstance(fn.value, ast.Name) else ""
            if module in ("os", "io"):
                if node.args and not any(k.arg == "dir_fd" for k in node.keywords):
                    found.append((node.lineno, f"{module}.open"))
            elif any(isinstance(a, ast.Constant) and a.value in MODES for a in node.args) or any(
                k.arg == "mode" for k in node.keywords
            ):
                found.append((node.lineno, "Path.open"))
    return found


def test_only_the_gateway_opens_workspace_paths_by_name() -> None:
    sites: dict[str, list[tuple[int, str]]] = defaultdict(list)
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            if rel.startswith(GATEWAY):
                continue
            sites[rel] += opens_by_name(path.read_text(encoding="utf-8"))
    problems = []
    for module, calls in sorted(sites.items()):
        allowed = ALLOWED.get(module, (0, ""))[0]
        if len(calls) != allowed:
            where = ", ".join(f"line {line} {call}()" for line, call in calls)
            problems.append(f"{module}: {len(calls)} opens by name, {allowed} allowed ({where})")
    assert not problems, (
        "a module opens a file by name where the gateway should (sessions.tools.gateway.GatewayRoot); route "
        "workspace content through it, or, for a file that is not workspace content, update ALLOWED with the count "
        "and the reason:\n" + "\n".join(problems)
    )
    stale = sorted(set(ALLOWED) - set(sites))
    assert not stale, f"ALLOWED names modules that no longer exist: {stale}"


def test_the_scan_finds_each_way_of_opening_by_name() -> None:
    source = """
from pathlib import Path
import io, os
def f(workspace: Path, ctx, fd):
    (workspace / "a").read_text()
    (ctx.root / "b").write_bytes(b"")
    open(workspace / "c")
    io.open(str(workspace / "d"))
    os.open(workspace / "e", os.O_RDONLY)
    (workspace / "f").open("rb")
    write_atomic(workspace / "g", "x")
    os.open("h", os.O_RDONLY, dir_fd=fd)  # relative to a held descriptor: the gateway's way
    trio.open_nursery()
"""
    assert [call for _, call in opens_by_name(source)] == [
        "read_text", "write_bytes", "open", "io.open", "os.open", "Path.open", "write_atomic",
    ]  # fmt: skip
