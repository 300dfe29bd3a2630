"""Every script under ``bench/`` runs in CI in its smoke size (``bench/smoke.py``, a step of ``.ci/run``), so a bench
cannot rot unnoticed: each file of ``bench/`` is either run by the smoke or declared a module that a script imports,
the runner names only files that exist, and the runner reports what went wrong (an exit, a missing sentence, a script
that outlived its bound, killed with what it started)."""

from __future__ import annotations

import importlib.util
import os
import re
import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import trio
import trio.lowlevel

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "bench"


@pytest.fixture(scope="module")
def smoke() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_smoke", BENCH / "smoke.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_smoke"] = module
    spec.loader.exec_module(module)
    return module


def test_every_file_of_bench_is_run_by_the_smoke_or_declared_a_module(smoke: ModuleType) -> None:
    files = {p.name for p in BENCH.glob("*.py")}
    unlisted = files - set(smoke.SCRIPTS) - set(smoke.MODULES)
    assert not unlisted, f"add these to SCRIPTS (with their smoke size) or MODULES in bench/smoke.py: {unlisted}"
    assert not set(smoke.SCRIPTS) & set(smoke.MODULES), "a file is either run or a module, not both"


def test_the_runner_names_only_files_that_exist(smoke: ModuleType) -> None:
    missing = [name for name in [*smoke.SCRIPTS, *smoke.MODULES] if not (BENCH / name).is_file()]
    assert not missing, f"bench/smoke.py names files bench/ does not hold: {missing}"


def test_a_module_is_imported_by_a_script_of_bench(smoke: ModuleType) -> None:
    """Declaring a bench a module is no way around the smoke run: some other file of bench/ must import it."""
    for name in smoke.MODULES:
        stem = Path(name).stem
        imports = re.compile(rf"^\s*(from ({stem}|bench\.{stem}) import|import ({stem}|bench\.{stem})\b)", re.M)
        importers = [p.name for p in BENCH.glob("*.py") if p.name != name and imports.search(p.read_text())]
        assert importers, f"bench/{name} is declared a module, but no script of bench/ imports it"


def _script(tmp_path: Path, name: str, body: str) -> str:
    path = tmp_path / name
    path.write_text(textwrap.dedent(body))
    return str(path)  # an absolute path: the runner's bench/ joined with it is the path itself


async def test_a_script_that_fails_is_reported_with_the_end_of_its_output(smoke: ModuleType, tmp_path: Path) -> None:
    script = _script(tmp_path, "broken.py", "print('figures so far')\nraise SystemExit('the API moved')\n")
    with trio.fail_after(60):
        outcome = await smoke.run_one(script, smoke.Smoke(("--smoke",)), 60)
    assert outcome.problem == "exit 1"
    assert "figures so far" in outcome.output and "the API moved" in outcome.output
    assert outcome.command.endswith("broken.py --smoke")


async def test_a_script_that_must_end_in_its_own_error_is_held_to_its_exit_and_its_words(
    smoke: ModuleType, tmp_path: Path
) -> None:
    script = _script(tmp_path, "refuses.py", "import sys\nprint('error: no model; run provision')\nsys.exit(2)\n")
    with trio.fail_after(60):
        ok = await smoke.run_one(script, smoke.Smoke((), exit=2, says="run provision"), 60)
        other_words = await smoke.run_one(script, smoke.Smoke((), exit=2, says="provisioned"), 60)
        other_exit = await smoke.run_one(script, smoke.Smoke((), exit=3), 60)
    assert ok.problem == ""
    assert other_words.problem == "its output does not say 'provisioned'"
    assert other_exit.problem == "exit 2 (expected 3)"


async def test_a_smoke_gets_a_scratch_folder_and_no_deepseek_key(
    smoke: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DEEPSEEK_API_KEY", "sk-must-not-reach-a-bench")
    script = _script(
        tmp_path,
        "env.py",
        """
        import os, sys
        print("key", os.environ.get("DEEPSEEK_API_KEY"), "cache", os.environ["XDG_CACHE_HOME"], "arg", sys.argv[1])
        """,
    )
    with trio.fail_after(60):
        outcome = await smoke.run_one(script, smoke.Smoke(("{tmp}/out",), env={"XDG_CACHE_HOME": "{tmp}/c"}), 60)
    assert outcome.problem == ""
    key, cache, arg = re.fullmatch(r"key (\S+) cache (\S+) arg (\S+)\n", outcome.output).groups()  # type: ignore[union-attr]
    assert key == "None"
    assert Path(cache).parent == Path(arg).parent and Path(cache).name == "c" and Path(arg).name == "out"
    assert not Path(cache).parent.exists()  # the scratch folder is gone afterwards


async def test_a_script_past_its_bound_is_killed_and_reported(smoke: ModuleType, tmp_path: Path) -> None:
    script = _script(tmp_path, "hangs.py", "import time\ntime.sleep(300)\n")
    with trio.fail_after(60):
        outcome = await smoke.run_one(script, smoke.Smoke(()), 1)
    assert outcome.problem == "ran out of its 1 s and was stopped"


async def _exited(pid: int) -> None:
    """Until the process ``pid`` (anyone's child) has exited."""
    try:
        pidfd = os.pidfd_open(pid)
    except ProcessLookupError:
        return
    try:
        await trio.lowlevel.wait_readable(pidfd)
    finally:
        os.close(pidfd)


async def _started(tmp_path: Path, smoke: ModuleType, name: str, body: str) -> tuple[Any, int]:
    """The script started by the runner, and the pid of the ``sleep 300`` it started (sent through a FIFO)."""
    fifo = tmp_path / f"{name}.pid"
    os.mkfifo(fifo)
    script = _script(
        tmp_path,
        name,
        f"""
        import signal, subprocess, time
        child = subprocess.Popen(["sleep", "300"])
        {body}
        with open({str(fifo)!r}, "w") as out:
            out.write(str(child.pid))
        time.sleep(300)
        """,
    )
    running = smoke.Running(script, smoke.Smoke(()), str(tmp_path))
    try:
        with trio.fail_after(60):
            child = int(await trio.to_thread.run_sync(fifo.read_text, abandon_on_cancel=True))
    except BaseException:
        await running.stop()
        raise
    return running, child


async def test_a_script_stopped_gets_ctrl_c_and_so_does_what_it_started(smoke: ModuleType, tmp_path: Path) -> None:
    running, child = await _started(tmp_path, smoke, "starts.py", "")
    with trio.fail_after(60):
        await running.stop()
        await _exited(child)
    assert running.code == -signal.SIGINT  # ended by its Ctrl-C (KeyboardInterrupt), not by the SIGKILL after it


async def test_a_script_that_ignores_ctrl_c_is_killed_with_what_it_started(
    smoke: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(smoke, "STOP_GRACE_S", 0.5)
    ignore = "signal.signal(signal.SIGINT, signal.SIG_IGN)"
    running, child = await _started(tmp_path, smoke, "stubborn.py", ignore)
    with trio.fail_after(60):
        await running.stop()
        await _exited(child)  # the sleep took its Ctrl-C; the script only the SIGKILL
    assert running.code == -signal.SIGKILL


def test_the_list_piped_into_head_ends_quietly() -> None:
    """``bench/smoke.py --list | head -1``: the reader has gone (here before the first write, so every write meets a
    closed pipe); no traceback, exit 141 as a shell's."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        proc = subprocess.run(
            [sys.executable, str(BENCH / "smoke.py"), "--list"], stdout=write_end, stderr=subprocess.PIPE, timeout=60
        )
    finally:
        os.close(write_end)
    assert (proc.returncode, proc.stderr) == (141, b"")
