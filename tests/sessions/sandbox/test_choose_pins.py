"""Pins of picking a sandbox (:mod:`sessions.sandbox.choose`), probing bubblewrap (:mod:`sessions.sandbox.probe`),
the one-line description (:func:`~sessions.sandbox.base.describe`), :class:`NoSandbox` and the package's lazy names.

Stand-in ``bwrap`` programs are real executables in ``tmp_path``: each probe runs one and reads what it said."""

from __future__ import annotations

from pathlib import Path

import pytest

import sessions.sandbox
from sessions.sandbox import (
    INSTALL_HINT,
    BubblewrapSandbox,
    NoSandbox,
    SandboxPolicy,
    describe,
    sandbox_for,
    sandbox_unavailable_reason,
)
from sessions.sandbox.probe import bwrap_works, reports_exec, userns_works
from sessions.sandbox.spawn import Spawned, spawn_server

PROBE = "--ro-bind / / --cap-drop ALL --unshare-pid --unshare-net --die-with-parent true"


def program(folder: Path, body: str, name: str = "bwrap") -> str:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text("#!/bin/sh\n" + body + "\n")
    path.chmod(0o755)
    return str(path)


def test_the_probe_runs_exactly_the_sandbox_it_asks_about(tmp_path: Path) -> None:
    strict = program(
        tmp_path / "strict", f'[ "$*" = "{PROBE}" ] || [ "$*" = "--unshare-user --disable-userns {PROBE}" ]'
    )
    assert bwrap_works(strict) is None and userns_works(strict)
    plain = program(tmp_path / "plain", f'[ "$*" = "{PROBE}" ]')
    assert bwrap_works(plain) is None and not userns_works(plain)


def test_a_failing_probe_says_why(tmp_path: Path) -> None:
    said = program(tmp_path / "said", "echo '  bwrap: No permissions to create a new namespace  ' >&2; exit 1")
    assert bwrap_works(said) == "bwrap: No permissions to create a new namespace"
    silent = program(tmp_path / "silent", "exit 3")
    assert bwrap_works(silent) == "exit code 3"
    absent = str(tmp_path / "absent")
    assert bwrap_works(absent) == f"[Errno 2] No such file or directory: '{absent}'"
    assert not userns_works(absent) and not userns_works(said)


def test_reports_exec_reads_the_help_on_either_stream(tmp_path: Path) -> None:
    out = program(tmp_path / "out", '[ "$*" = "--help" ] && echo "  --json-status-fd FD"')
    err = program(tmp_path / "err", '[ "$*" = "--help" ] && echo "  --json-status-fd FD" >&2; exit 1')
    old = program(tmp_path / "old", 'echo "  --info-fd FD"')
    assert reports_exec(out) and reports_exec(err) and not reports_exec(old)


def test_without_bwrap_no_sandbox_and_the_reason_says_how_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    assert sandbox_unavailable_reason() == f"bwrap is not installed; {INSTALL_HINT}"
    assert INSTALL_HINT.startswith("install bubblewrap (Debian/Ubuntu: sudo apt-get install bubblewrap;")
    policy = SandboxPolicy(network=True)
    box = sandbox_for(policy, {"A": "1"})
    assert box == NoSandbox(policy=policy, base_env={"A": "1"})
    assert describe(box) == "no sandbox available"


def test_a_bwrap_that_cannot_start_a_sandbox_is_not_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    program(tmp_path / "broken", "echo 'bwrap: setting up uid map: Permission denied' >&2; exit 1")
    monkeypatch.setenv("PATH", str(tmp_path / "broken"))
    assert sandbox_unavailable_reason() == (
        "bwrap cannot start a sandbox here (bwrap: setting up uid map: Permission denied);"
        " unprivileged user namespaces may be disabled"
    )
    assert sandbox_for(SandboxPolicy()) == NoSandbox(policy=SandboxPolicy())


def test_a_working_bwrap_is_used_unless_full_access(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bwrap = program(tmp_path / "works", f'[ "$*" = "{PROBE}" ]')
    monkeypatch.setenv("PATH", str(tmp_path / "works"))
    assert sandbox_unavailable_reason() is None
    policy = SandboxPolicy(mode="read-only")
    chosen = sandbox_for(policy, {"B": "2"})
    assert chosen == BubblewrapSandbox(bwrap=bwrap, policy=policy, base_env={"B": "2"}, userns=False)
    assert describe(chosen) == "bubblewrap · read-only · no network"
    assert describe(BubblewrapSandbox(bwrap, SandboxPolicy(network=True))) == "bubblewrap · workspace-write · network"
    full = SandboxPolicy(mode="full-access")
    assert sandbox_for(full) == NoSandbox(policy=full)
    assert describe(sandbox_for(full)) == "no sandbox (full-access)"


def test_no_sandbox_runs_the_command_as_it_is(tmp_path: Path) -> None:
    box = NoSandbox(SandboxPolicy(env=("EXTRA",)), base_env={"PATH": "/bin", "EXTRA": "x", "OTHER": "y"})
    assert box.name == "none" and not box.confines
    launch = box.wrap(["echo", "hi"], workspace=tmp_path, cwd=tmp_path, env={"OVER": "z"})
    assert launch.argv == ("echo", "hi") and not launch.contained
    assert launch.env == {"PATH": "/bin", "EXTRA": "x", "OVER": "z"}
    assert launch.bounds is None and launch.marker == "" and launch.status_at is None
    ro = box.with_mode("read-only")
    assert ro.policy == SandboxPolicy(mode="read-only", env=("EXTRA",)) and ro.base_env == box.base_env
    assert box.policy.mode == "workspace-write"


def test_the_package_loads_spawn_on_first_use_only() -> None:
    assert sessions.sandbox.Spawned is Spawned and sessions.sandbox.spawn_server is spawn_server
    with pytest.raises(AttributeError, match=r"^module 'sessions.sandbox' has no attribute 'nothing'$"):
        _ = sessions.sandbox.nothing  # type: ignore[attr-defined]


def test_a_bwrap_without_a_status_fd_gives_no_status_place(tmp_path: Path) -> None:
    old = program(tmp_path / "old", 'echo "  --info-fd FD"')
    new = program(tmp_path / "new", 'echo "  --json-status-fd FD"')
    policy = SandboxPolicy(max_processes=0)
    unsaid = BubblewrapSandbox(old, policy, userns=False).wrap(["true"], workspace=tmp_path, cwd=tmp_path, env={})
    assert unsaid.status_at is None
    said = BubblewrapSandbox(new, policy, userns=False).wrap(["true"], workspace=tmp_path, cwd=tmp_path, env={})
    assert said.status_at == said.argv.index(new) + 1  # right after bubblewrap, whatever prefix goes before it
