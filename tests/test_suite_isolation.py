"""The suite is at nobody's mercy: every test runs with a home of its own and none of the user's Reasonix, DeepSeek or
XDG settings; a test that touches the real home fails; a test that needs a real part skips without it, saying what to
install (fails in CI), and must carry that part's marker (tests/support/parts.py, tests/support/real_home.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import parts
from tests.support.parts import PARTS, Part, require
from tests.support.real_home import CHECKPOINTS, REAL_HOME, HomeGuard, split_foreign, store_workspaces

ROOT = Path(__file__).resolve().parents[1]


def test_a_test_sees_a_private_home_and_none_of_the_users_settings(tmp_path: Path) -> None:
    home = Path(os.environ["HOME"])
    # not the real home nor inside it, but for the checkout's own folder of private homes when the checkout lies in it
    # (a sandboxed command must reach its home, and the sandbox empties every home but the ones in use)
    assert home != REAL_HOME and (not home.is_relative_to(REAL_HOME) or home.is_relative_to(ROOT / ".pytest-homes"))
    for name in ("XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME"):
        assert Path(os.environ[name]).is_relative_to(home), name
    assert not [name for name in os.environ if name.startswith(("DEEPSEEK_", "HISTFILE", "ZDOTDIR"))]
    # and so does every process it starts
    seen = subprocess.run(
        [sys.executable, "-c", "import os, pathlib; print(pathlib.Path.home())"], capture_output=True, text=True
    )
    assert seen.stdout.strip() == str(home)


def test_each_test_has_a_home_of_its_own(tmp_path: Path) -> None:
    """Two tests on one worker never share one: the home is under this test's own temporary base, made for it."""
    home = Path(os.environ["HOME"])
    assert home.parent.name.startswith("home") and home.parent.parent.name.startswith("reasonix-tests-home-")
    assert sorted(p.name for p in home.iterdir()) == [".cache", ".config", ".local"]
    assert not any((home / ".config").iterdir())


def test_the_guard_records_touches_of_the_home_and_nothing_else(tmp_path: Path) -> None:
    home, venv = tmp_path / "home", tmp_path / "home" / "project" / ".venv"
    venv.mkdir(parents=True)
    (home / ".config").mkdir()
    guard = HomeGuard(home, [home / "project"])
    guard.active = True
    guard("open", (str(home / ".config" / "reasonix.toml"), "r", 0))
    guard("os.listdir", (home,))
    guard("os.rename", (str(tmp_path / "elsewhere"), str(home / ".bashrc"), None, None))
    guard("open", (str(venv / "lib" / "x.py"), "r", 0))  # the checkout and its venv are the suite's, not the home
    guard("open", (str(tmp_path / "outside"), "r", 0))
    guard("open", (7, "r", 0))  # a descriptor
    guard("os.getcwd", ())
    assert guard.take() == [
        f"open {home}/.config/reasonix.toml",
        f"os.listdir {home}",
        f"os.rename {home}/.bashrc",
    ]
    guard.active = False
    guard("open", (str(home / ".netrc"), "r", 0))
    assert guard.take() == []


def test_a_test_that_reads_the_real_home_fails_and_says_how_to_mean_it(tmp_path: Path) -> None:
    probe = tmp_path / "test_probe.py"
    probe.write_text(
        "from tests.support.real_home import REAL_HOME\n\n"
        "def test_reads_the_users_config():\n"
        "    try:\n"
        "        open(REAL_HOME / '.config' / 'reasonix-suite-probe-absent.toml')\n"
        "    except OSError:\n"
        "        pass\n"
    )
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-n", "0", "-p", "tests.conftest", "--rootdir", str(tmp_path), str(probe)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=600,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert f"this test touched the real home {REAL_HOME}" in done.stdout
    assert "reasonix-suite-probe-absent.toml" in done.stdout and "mark the test real_home" in done.stdout


@pytest.fixture
def absent_part(monkeypatch: pytest.MonkeyPatch) -> str:
    part = Part("bwrap", "the real bubblewrap sandbox", lambda: "bwrap is not installed: apt-get install bubblewrap")
    monkeypatch.setitem(PARTS, "bwrap", part)
    parts.missing.cache_clear()
    yield "bwrap"  # type: ignore[misc]
    parts.missing.cache_clear()


@pytest.mark.bwrap
def test_a_missing_part_skips_with_what_to_install_outside_ci(
    absent_part: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match=r"needs the real bubblewrap sandbox: .*apt-get install bubblewrap"):
        require(absent_part)


@pytest.mark.bwrap
def test_a_missing_part_fails_in_ci(absent_part: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="CI must run the tests that need the real bubblewrap sandbox"):
        require(absent_part)


def test_a_test_that_needs_a_part_without_its_marker_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.fail.Exception, match=r"needs a local Ray cluster: mark it @pytest.mark.ray"):
        require("ray")


def test_every_part_is_a_registered_marker(pytestconfig: pytest.Config) -> None:
    registered = {line.split(":")[0] for line in pytestconfig.getini("markers")}
    assert set(PARTS) | {"real_home"} <= registered


def test_a_reasonix_run_in_another_terminal_is_not_the_suites_fault(tmp_path: Path) -> None:
    """The end-of-run comparison tells a checkpoint store of a workspace outside the run (a user's own ``reasonix``
    meanwhile) from one a test's process made; a change it cannot attribute still counts."""
    home, run = tmp_path / "home", tmp_path / "run"
    stores = home / CHECKPOINTS
    for name, workspace in (("workspace-a", run / "ws"), ("workspace-b", tmp_path / "elsewhere" / "ws")):
        (stores / name).mkdir(parents=True)
        (stores / name / "workspace").write_text(f"{workspace}\n")
        (stores / name / "index").write_bytes(b"x")
    (stores / "workspace-c").mkdir()  # no workspace file: cannot be told apart
    config = home / ".config/reasonix/config.toml"
    changed = [str(stores / n / "index") for n in ("workspace-a", "workspace-b")] + [
        str(stores / "workspace-c"),
        str(config),
    ]
    before = store_workspaces(home)
    (stores / "workspace-b" / "workspace").unlink()  # removed meanwhile: still known from before
    mine, foreign = split_foreign(home, changed, [run], before)
    assert foreign == [str(stores / "workspace-b" / "index")]
    assert mine == [str(stores / "workspace-a" / "index"), str(stores / "workspace-c"), str(config)]
