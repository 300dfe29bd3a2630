"""The suite never reads or writes the real user's home: every test runs with a home, configuration, state, cache and
data directory of its own (tests/conftest.py sets them), and this module is the guard that proves it.

The guard is a :func:`sys.addaudithook` in every pytest process: an ``open``, a listing, a ``mkdir``, a rename or a
removal of a path inside the real home is recorded against the running test, which then fails with the paths it
touched. The home's parts that the suite itself runs from are not the home in this sense: the checkout and its
virtual environment (``.ci/sandbox-as-user`` puts both under the test user's home) and the Python installation (pyenv
keeps it under ``~/.pyenv``). Processes a test starts inherit the private home, so they cannot reach the real one by
``$HOME``; what Reasonix itself keeps there (``~/.config/reasonix`` and its state, cache and data siblings) is also
compared before and after the whole run, which catches a subprocess that found it another way.

A test that means to use the real home (the sandbox tests that need a home under ``/home`` as an ordinary user) says
so with ``@pytest.mark.real_home`` and takes the path from :data:`REAL_HOME`, never from ``Path.home()``.
"""

from __future__ import annotations

import os
import pwd
import sys
import sysconfig
from pathlib import Path

REAL_HOME_VARIABLE = "REASONIX_TESTS_REAL_HOME"
"""Set by the first pytest process (the xdist controller), so that workers, which inherit the private home, still
know the real one."""


def _real_home() -> Path:
    told = os.environ.get(REAL_HOME_VARIABLE)
    if told:
        return Path(told)
    return Path(os.environ.get("HOME") or pwd.getpwuid(os.getuid()).pw_dir)


REAL_HOME = _real_home()
"""The home of the user running the suite, as it was before the suite replaced ``$HOME``."""

REASONIX_DIRS = (".config/reasonix", ".local/state/reasonix", ".cache/reasonix", ".local/share/reasonix")
"""What Reasonix keeps under a home by default: compared before and after the run."""

_WATCHED = frozenset(
    {
        "open",
        "os.listdir",
        "os.scandir",
        "os.mkdir",
        "os.rename",
        "os.remove",
        "os.rmdir",
        "os.symlink",
        "os.link",
        "os.truncate",
        "os.chmod",
        "os.utime",
        "shutil.rmtree",
        "shutil.copyfile",
    }
)


_TWO_PATHS = frozenset({"os.rename", "os.link", "shutil.copyfile"})
"""Events whose first two arguments are both paths touched (``os.symlink``'s first is only the link's text)."""


class HomeGuard:
    """Records every touch of the real home by this process while :attr:`active`."""

    def __init__(self, home: Path, allowed: list[Path]) -> None:
        self.home = os.path.realpath(home)
        self.allowed = tuple(os.path.realpath(p) for p in allowed)
        self.touched: list[str] = []
        self.active = False

    def _inside_home(self, raw: object) -> str | None:
        if isinstance(raw, bytes):
            raw = os.fsdecode(raw)
        if not isinstance(raw, str | os.PathLike):
            return None  # a file descriptor
        path = os.path.abspath(os.fspath(raw))
        home = self.home
        if path != home and not path.startswith(home + os.sep):
            # The lexical path is outside; a symlink could still lead in, but the suite makes none into the home.
            return None
        for allowed in self.allowed:
            if path == allowed or path.startswith(allowed + os.sep):
                return None
        return path

    def __call__(self, event: str, args: tuple[object, ...]) -> None:
        if not self.active or event not in _WATCHED or not args:
            return
        try:
            watched = args[1:2] if event == "os.symlink" else args[:2] if event in _TWO_PATHS else args[:1]
            for raw in watched:
                hit = self._inside_home(raw)
                if hit is not None:
                    self.touched.append(f"{event} {hit}")
        except Exception:  # noqa: BLE001 - a guard must never break the code it watches
            return

    def take(self) -> list[str]:
        touched, self.touched = self.touched, []
        return touched


def suite_roots(rootdir: Path) -> list[Path]:
    """What the suite runs from, which may lie inside the home: the checkout, the venv, the Python installation and
    the folders of ``PATH`` (pyenv's shims, ``~/.local/bin``: programs, not the user's configuration or state)."""
    roots = [rootdir, Path(sys.prefix), Path(sys.base_prefix), Path(sys.exec_prefix)]
    roots += [Path(folder) for folder in os.environ.get("PATH", "").split(os.pathsep) if os.path.isabs(folder)]
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        path = sysconfig.get_paths().get(key)
        if path:
            roots.append(Path(path))
    return roots


def reasonix_state(home: Path) -> dict[str, tuple[int, int]]:
    """Every entry under Reasonix's own directories in ``home``: path → (size, mtime in ns)."""
    found: dict[str, tuple[int, int]] = {}
    for rel in REASONIX_DIRS:
        top = home / rel
        if not top.is_dir():
            continue
        for folder, _dirs, files in os.walk(top):
            # files only: a folder's mtime moves with its entries, whose own changes are seen (a new store would
            # otherwise show as a change of the folder of stores, which nobody can attribute)
            for name in files:
                path = os.path.join(folder, name)
                try:
                    st = os.lstat(path)
                except OSError:
                    continue
                found[path] = (st.st_size, st.st_mtime_ns)
    return found


CHECKPOINTS = ".local/state/reasonix/checkpoints"
"""Where the checkpoint stores live: one folder a workspace, named by a hash, whose ``workspace`` file says which."""


def store_workspaces(home: Path) -> dict[str, Path]:
    """Each checkpoint store in ``home`` and the workspace its ``workspace`` file names."""
    named: dict[str, Path] = {}
    stores = home / CHECKPOINTS
    try:
        entries = list(os.scandir(stores))
    except OSError:
        return named
    for entry in entries:
        try:
            text = (Path(entry.path) / "workspace").read_text(encoding="utf-8", errors="replace").strip()
        except OSError:
            continue
        if text:
            named[entry.name] = Path(text)
    return named


def split_foreign(
    home: Path, changed: list[str], ours: list[Path], workspaces: dict[str, Path]
) -> tuple[list[str], list[str]]:
    """The changed paths a process of this run may have made, and those of a Reasonix the user ran meanwhile.

    Only a checkpoint store can be told apart: its ``workspace`` file names the workspace it keeps (``workspaces``:
    read before and after the run, so a store removed meanwhile is still known). A store for a workspace outside every
    folder of this run (``ours``: its temporary folders and private homes) was made by a ``reasonix`` in another
    terminal, which is no fault of the suite. Anything else counts as the suite's.
    """
    stores = home / CHECKPOINTS
    mine: list[str] = []
    foreign: list[str] = []
    for raw in changed:
        try:
            store = Path(raw).relative_to(stores).parts[0]
        except (ValueError, IndexError):
            mine.append(raw)
            continue
        named = workspaces.get(store)
        inside = named is None or any(named.is_relative_to(root) for root in ours)
        (mine if inside else foreign).append(raw)
    return mine, foreign
