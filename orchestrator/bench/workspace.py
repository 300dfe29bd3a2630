"""Preparing a task's workspace: the seed as a fresh git repository whose first commit is the seed.

* ``sdist``: ``pip download --no-deps --no-binary :all: --no-build-isolation`` into a cache (default
  ``$XDG_CACHE_HOME/reasonix/sdists``; CI caches it), the archive's sha256 checked against the task's, then unpacked
  with tarfile's ``data`` filter (no absolute paths, no ``..``, no links out, no device files) or a checked zip;
* ``git``: cloned, the pinned commit checked out, its tree copied without the clone's history;
* ``files``: the task's ``files/`` copied.

Any ``.git`` in the source is left out, and the seed is a fresh repository made by :class:`SeedGit`, whose config
and attributes are Reasonix's own before every call.

Then ``break.patch`` is applied with ``git apply``, the setup commands run in the sandbox (network off), and the seed
is committed. Downloads and clones run on the host (they need the network); nothing the task says runs there.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sys
import tarfile
import zipfile
from collections.abc import Mapping, Sequence
from pathlib import Path

import trio

from orchestrator.batch.archive import extract_tar
from orchestrator.bench.sandboxed import run_script
from orchestrator.bench.task import FILES_DIR, BenchError, FilesSource, GitSource, SdistSource, Task
from orchestrator.checkpoints.git import ATTRIBUTES, SAFE_FLAGS, config_text, find_git, scratch_env, write_if_changed
from orchestrator.checkpoints.stage import drop_gitlinks, is_dot_git, stage_all
from sessions.sandbox import Sandbox

SEED_IDENTITY = {
    "GIT_AUTHOR_NAME": "reasonix bench",
    "GIT_AUTHOR_EMAIL": "bench@reasonix.invalid",
    "GIT_COMMITTER_NAME": "reasonix bench",
    "GIT_COMMITTER_EMAIL": "bench@reasonix.invalid",
}
_ARCHIVES = (".tar.gz", ".tgz", ".tar.bz2", ".tar.xz", ".tar", ".zip")


class TaskSourceError(BenchError):
    """A task's source could not be made into a workspace: a download, checksum, clone, patch or setup command
    failed. The message names the task and what to check."""


def default_cache(env: Mapping[str, str] | None = None) -> Path:
    """Where downloaded sdists are kept: ``$XDG_CACHE_HOME/reasonix/sdists`` (``~/.cache`` without it)."""
    env = os.environ if env is None else env
    base = env.get("XDG_CACHE_HOME") or str(Path(env.get("HOME", "~")).expanduser() / ".cache")
    return Path(base) / "reasonix" / "sdists"


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


async def _run(argv: list[str], cwd: Path | None, what: str) -> str:
    result = await trio.run_process(argv, cwd=cwd, capture_stdout=True, capture_stderr=True, check=False)
    if result.returncode != 0:
        tail = (result.stderr or result.stdout).decode("utf-8", "replace").strip()[-1500:]
        raise TaskSourceError(f"{what} failed (exit {result.returncode}): {tail}")
    return result.stdout.decode("utf-8", "replace")


def _cached(kept: Path, sha256: str) -> Path | None:
    found = [p for p in kept.iterdir() if p.is_file()] if kept.is_dir() else []
    return found[0] if found and sha256_of(found[0]) == sha256 else None


def _fresh(folder: Path) -> None:
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)


def _keep(task: Task, incoming: Path, kept: Path, sha256: str) -> Path:
    """The one archive pip downloaded into ``incoming``, checked, moved into ``kept``."""
    archives = [p for p in incoming.iterdir() if p.name.endswith(_ARCHIVES)]
    if len(archives) != 1:
        raise TaskSourceError(f"task {task.name!r}: pip download gave {len(archives)} archives, expected one")
    got = sha256_of(archives[0])
    if got != sha256:
        raise TaskSourceError(
            f"task {task.name!r}: {archives[0].name} has sha256 {got}, but task.toml says {sha256}; "
            "the archive changed upstream or the task is wrong: check the release and fix source.sha256"
        )
    kept.mkdir(parents=True, exist_ok=True)
    return Path(shutil.move(archives[0], kept / archives[0].name))


async def fetch_sdist(task: Task, source: SdistSource, cache: Path) -> Path:
    """The task's sdist from the cache, or downloaded into it; its sha256 checked either way."""
    kept = cache / source.sha256
    found = await trio.to_thread.run_sync(_cached, kept, source.sha256)
    if found is not None:
        return found
    incoming = cache / f".incoming-{source.sha256[:12]}-{os.getpid()}"
    await trio.to_thread.run_sync(_fresh, incoming)
    try:
        argv = [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:", "--no-build-isolation"]
        argv += ["--quiet", "-d", str(incoming), source.requirement]
        try:
            await _run(argv, None, f"task {task.name!r}: pip download {source.requirement}")
        except TaskSourceError as exc:
            if "metadata" not in str(exc):
                raise
            raise TaskSourceError(
                f"{exc}\npip prepares the sdist's metadata without build isolation, so its build backend must be "
                f"installed in {sys.executable} (setuptools sdists need `wheel`; others hatchling, flit_core, …)"
            ) from exc
        return await trio.to_thread.run_sync(_keep, task, incoming, kept, source.sha256)
    finally:
        shutil.rmtree(incoming, ignore_errors=True)


def unpack(archive: Path, dest: Path) -> None:
    """Unpack ``archive`` into ``dest`` safely: tarfile's ``data`` filter, and for a zip every member checked to
    stay inside ``dest``. Raises :class:`TaskSourceError` for a member that would escape."""
    dest.mkdir(parents=True, exist_ok=True)
    if archive.name.endswith(".zip"):
        with zipfile.ZipFile(archive) as z:
            root = dest.resolve()
            for name in z.namelist():
                target = (dest / name).resolve()
                if not target.is_relative_to(root):
                    raise TaskSourceError(f"{archive.name}: the member {name!r} would be written outside {dest}")
            z.extractall(dest)
        return
    try:
        with tarfile.open(archive) as t:
            extract_tar(t, dest)
    except (tarfile.TarError, OSError) as exc:
        raise TaskSourceError(f"{archive.name} cannot be unpacked safely: {exc}") from exc


def archive_root(unpacked: Path, subdir: str) -> Path:
    """The folder that becomes the workspace: ``subdir`` of the archive, else its single top folder."""
    if subdir:
        root = (unpacked / subdir).resolve()
        if not root.is_relative_to(unpacked.resolve()) or not root.is_dir():
            raise TaskSourceError(f"source.subdir {subdir!r} is not a folder inside the archive")
        return root
    tops = list(unpacked.iterdir())
    if len(tops) == 1 and tops[0].is_dir():
        return tops[0]
    return unpacked


async def _git_tree(task: Task, source: GitSource, scratch: Path) -> Path:
    clone = scratch / "clone"
    await _run(
        ["git", "clone", "--quiet", "--no-checkout", source.url, str(clone)], None, f"task {task.name!r}: git clone"
    )
    await _run(["git", "-c", "advice.detachedHead=false", "checkout", "--quiet", source.commit], clone, "git checkout")
    shutil.rmtree(clone / ".git")
    return archive_root(clone, source.subdir) if source.subdir else clone


class SeedGit:
    """Git on a seed workspace's own ``.git``, made by :meth:`init` and never a suite's: before every call its
    ``config`` and ``info/attributes`` are made the checkpoint store's again (no filter, driver or conversion; no
    hooks or fsmonitor by flag), the environment is built from scratch (no system or global config), and a ``.git``
    that is not a plain directory, or that points at another git directory, is refused. What a suite's files, its
    setup commands or the goal wrote there configures nothing the host runs."""

    def __init__(self, ws: Path) -> None:
        self.ws = ws
        self.git_dir = ws / ".git"

    def _env(self) -> dict[str, str]:
        env = scratch_env(self.git_dir, self.ws, self.git_dir / "index", home=self.git_dir)
        env.update(SEED_IDENTITY)
        return env

    def _own(self) -> None:
        what = f"the seed's git directory {self.git_dir}"
        info = self.git_dir / "info"
        if self.git_dir.is_symlink() or not self.git_dir.is_dir() or info.is_symlink():
            raise TaskSourceError(f"{what} (or its info/) is not a plain directory any more; prepare the task again")
        for planted in ("commondir", "config.worktree", "gitdir"):
            if os.path.lexists(self.git_dir / planted):
                raise TaskSourceError(f"{what} has a {planted!r} nobody should have written; prepare the task again")
        write_if_changed(self.git_dir / "config", config_text())
        write_if_changed(self.git_dir / "info" / "attributes", ATTRIBUTES)

    async def init(self) -> None:
        await self._run("init", "--quiet", "--template=", "--initial-branch=seed", fresh=True)

    async def __call__(self, *args: str, stdin: bytes = b"", ok_codes: Sequence[int] = (0,)) -> bytes:
        return await self._run(*args, stdin=stdin, ok_codes=ok_codes)

    async def _run(self, *args: str, stdin: bytes = b"", ok_codes: Sequence[int] = (0,), fresh: bool = False) -> bytes:
        exe = find_git()
        if exe is None:
            raise TaskSourceError("git is not installed (or not on PATH): the bench seeds every task as a repository")
        if not fresh:
            await trio.to_thread.run_sync(self._own)
        proc = await trio.run_process(
            [exe, *SAFE_FLAGS, *args],
            stdin=stdin,
            cwd=self.ws,
            env=self._env(),
            capture_stdout=True,
            capture_stderr=True,
            check=False,
        )
        if proc.returncode not in ok_codes:
            tail = (proc.stderr or proc.stdout).decode("utf-8", "replace").strip()[-1500:]
            raise TaskSourceError(f"git {args[0]} in {self.ws} failed (exit {proc.returncode}): {tail}")
        if fresh:
            await trio.to_thread.run_sync(self._own)
        out: bytes = proc.stdout
        return out


async def git(ws: Path, *args: str) -> str:
    """``git ARGS`` on the seed workspace ``ws`` (see :class:`SeedGit`): its stdout."""
    return (await SeedGit(ws)(*args)).decode("utf-8", "replace")


def _copy_source(tree: Path, ws: Path) -> None:
    """The source's files into ``ws``, without any ``.git`` at any depth: a suite's repository (its config, hooks,
    fsmonitor) is never copied where a git could enter it."""
    shutil.copytree(tree, ws, symlinks=True, ignore=lambda _dir, names: [n for n in names if is_dot_git(n)])


async def prepare_workspace(task: Task, ws: Path, *, cache: Path, sandbox: Sandbox, env: Mapping[str, str]) -> str:
    """Make ``ws`` (which must not exist) the task's seed and return the seed commit's id."""
    scratch = ws.parent / f".{ws.name}-source"
    await trio.to_thread.run_sync(_fresh, scratch)
    try:
        source = task.spec.source
        if isinstance(source, FilesSource):
            tree = task.folder / FILES_DIR
        elif isinstance(source, SdistSource):
            archive = await fetch_sdist(task, source, cache)
            await trio.to_thread.run_sync(unpack, archive, scratch / "unpacked")
            tree = archive_root(scratch / "unpacked", source.subdir)
        else:
            tree = await _git_tree(task, source, scratch)
        await trio.to_thread.run_sync(_copy_source, tree, ws)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    seed = SeedGit(ws)
    await seed.init()
    if task.break_patch is not None:
        try:
            await git(ws, "apply", "--whitespace=nowarn", str(task.break_patch))
        except TaskSourceError as exc:
            raise TaskSourceError(f"task {task.name!r}: break.patch does not apply to the source: {exc}") from exc
    for command in task.spec.setup.commands:
        outcome = await run_script(command, ws, sandbox=sandbox, env=env, timeout_s=task.spec.verify.timeout_s)
        if not outcome.ok:
            raise TaskSourceError(
                f"task {task.name!r}: the setup command {command!r} exited {outcome.exit_code}: {outcome.output[-800:]}"
            )
    await stage_all(seed, ws)
    await seed("add", "--all", "--force")  # what the setup built, ignored or not
    await drop_gitlinks(seed)  # an ignored nested repository is left out, never recorded as one
    await seed("commit", "--quiet", "--no-verify", "--allow-empty", "-m", f"seed of {task.name}")
    return (await git(ws, "rev-parse", "HEAD")).strip()


async def apply_patch(task: Task, ws: Path, patch: Path) -> None:
    """``git apply`` the patch in the workspace; :class:`TaskSourceError` when it does not apply."""
    try:
        await git(ws, "apply", "--whitespace=nowarn", str(patch))
    except TaskSourceError as exc:
        raise TaskSourceError(f"task {task.name!r}: {patch.name} does not apply to the seed: {exc}") from exc
