"""Preparing a task's workspace: the seed as a fresh git repository whose first commit is the seed.

* ``sdist``: ``pip download --no-deps --no-binary :all: --no-build-isolation`` into a cache (default
  ``$XDG_CACHE_HOME/reasonix/sdists``; CI caches it), the archive's sha256 checked against the task's, then unpacked
  with tarfile's ``data`` filter (no absolute paths, no ``..``, no links out, no device files) or a checked zip;
* ``git``: cloned, the pinned commit checked out, its tree copied without the clone's history;
* ``files``: the task's ``files/`` copied.

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
from collections.abc import Mapping
from pathlib import Path

import trio

from orchestrator.bench.sandboxed import run_script
from orchestrator.bench.task import FILES_DIR, BenchError, FilesSource, GitSource, SdistSource, Task
from sessions.sandbox import Sandbox

SEED_AUTHOR = (
    "-c",
    "user.name=reasonix bench",
    "-c",
    "user.email=bench@reasonix.invalid",
    "-c",
    "commit.gpgsign=false",
)
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
            t.extractall(dest, filter="data")
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


async def git(ws: Path, *args: str) -> str:
    return await _run(["git", *SEED_AUTHOR, *args], ws, f"git {args[0]} in {ws}")


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
        await trio.to_thread.run_sync(lambda: shutil.copytree(tree, ws, symlinks=True))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    await git(ws, "init", "--quiet", "--initial-branch=seed")
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
    await git(ws, "add", "--all", "--force")
    await git(ws, "commit", "--quiet", "--no-verify", "--allow-empty", "-m", f"seed of {task.name}")
    return (await git(ws, "rev-parse", "HEAD")).strip()


async def apply_patch(task: Task, ws: Path, patch: Path) -> None:
    """``git apply`` the patch in the workspace; :class:`TaskSourceError` when it does not apply."""
    try:
        await git(ws, "apply", "--whitespace=nowarn", str(patch))
    except TaskSourceError as exc:
        raise TaskSourceError(f"task {task.name!r}: {patch.name} does not apply to the seed: {exc}") from exc
