"""A goal's own copy of its workspace, never the user's checkout.

Every copy is a git clone, so it is the same on this machine and on a Ray node: a git URL is cloned where the goal
runs; a local directory is first packed into a git bundle here (:func:`pack_local`: the committed tree at ``ref`` or
``HEAD``; a directory that is no repository is snapshotted as one commit of its files, ``.gitignore`` honoured), and
the bundle is cloned (on Ray it travels through the object store). The seed commit is where the goal starts;
:func:`goal_diff` is what it changed since. Git runs without hooks, fsmonitor or the caller's ``GIT_*`` variables;
after the goal ran, never with its copy's ``.git`` (see :func:`goal_diff`).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import trio

from orchestrator.batch.spec import BatchError, GoalSpec
from orchestrator.checkpoints.git import (
    ALWAYS_EXCLUDED,
    ATTRIBUTES,
    SAFE_FLAGS,
    config_text,
    find_git,
    scratch_env,
    write_if_changed,
)
from orchestrator.checkpoints.stage import GitCall, stage_all

_FLAGS = ("-c", f"core.hooksPath={os.devnull}", "-c", "core.fsmonitor=false", "-c", "advice.detachedHead=false")
_IDENTITY = {
    "GIT_AUTHOR_NAME": "reasonix batch",
    "GIT_AUTHOR_EMAIL": "batch@reasonix.invalid",
    "GIT_COMMITTER_NAME": "reasonix batch",
    "GIT_COMMITTER_EMAIL": "batch@reasonix.invalid",
    "GIT_TERMINAL_PROMPT": "0",
}


def _env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(_IDENTITY)
    env.update(extra or {})
    return env


async def git(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None, what: str = "") -> str:
    """``git ARGS`` and its stdout; :class:`BatchError` with git's own words when it fails."""
    proc = await trio.run_process(
        ["git", *_FLAGS, *args],
        capture_stdout=True,
        capture_stderr=True,
        check=False,
        cwd=str(cwd) if cwd else None,
        env=_env(env),
        stdin=b"",
    )
    if proc.returncode != 0:
        words = proc.stderr.decode(errors="replace").strip().splitlines()
        raise BatchError(f"{what or 'git ' + args[0]} failed: {words[-1] if words else f'exit {proc.returncode}'}")
    return str(proc.stdout.decode(errors="replace"))


DIFF_ATTRIBUTES = "* -text -crlf -eol -filter !diff -merge -ident -working-tree-encoding\n"
"""The checkpoint store's attributes, but ``diff`` unspecified rather than unset (unset makes every file binary): a
``diff=driver`` from the goal's ``.gitattributes`` names nothing, since the config defines no driver."""


@dataclass(frozen=True)
class Seed:
    """What a goal's copy is made from: a bundle of a local directory (``bundle``) or a URL to clone, and the
    commit (``commit``; for a URL, the ref to check out, resolved in the clone)."""

    bundle: bytes | None
    url: str | None
    commit: str


async def pack_local(spec: GoalSpec) -> Seed:
    """The seed of a local workspace, as a bundle (see the module's docstring)."""
    root = _local_root(spec)
    with tempfile.TemporaryDirectory(prefix="reasonix-batch-") as tmp:
        bundle = Path(tmp) / "seed.bundle"
        top = (await git("rev-parse", "--show-toplevel", cwd=root)).strip() if _is_repo(root) else ""
        if top and _same(top, root):
            what = f"goal {spec.id}: reading {spec.ref or 'HEAD'} of {root}"
            commit = (
                await git("rev-parse", "--verify", f"{spec.ref or 'HEAD'}^{{commit}}", cwd=root, what=what)
            ).strip()
            await git(
                "bundle", "create", str(bundle), "HEAD", "--all", cwd=root, what=f"goal {spec.id}: packing {root}"
            )
        else:
            if spec.ref is not None:
                raise BatchError(
                    f"goal {spec.id}: {root} is not the top of a git repository, so it has no ref {spec.ref!r}"
                )
            commit = await _snapshot(root, Path(tmp), bundle, spec.id)
        return Seed(bundle=bundle.read_bytes(), url=None, commit=commit)


def _local_root(spec: GoalSpec) -> Path:
    root = Path(spec.workspace)
    if not root.is_dir():
        raise BatchError(f"goal {spec.id}: the workspace {root} is not a directory; give a directory or a git URL")
    return root


def _same(a: str | Path, b: str | Path) -> bool:
    return Path(a).resolve() == Path(b).resolve()


def _is_repo(root: Path) -> bool:
    return any((p / ".git").exists() for p in (root, *root.parents))


async def _snapshot(root: Path, tmp: Path, bundle: Path, goal_id: str) -> str:
    """``root`` (no repository) as one commit, taken with a git of Reasonix's own (see :func:`_private_git`)."""
    what = f"goal {goal_id}: snapshotting {root}"
    run = await _private_git(tmp, root, what)
    await stage_all(run, root)
    tree = (await run("write-tree")).decode().strip()
    commit = (await run("commit-tree", tree, "-m", "seed")).decode().strip()
    await run("update-ref", "HEAD", commit)
    await run("bundle", "create", str(bundle), "HEAD")
    return commit


async def _private_git(
    tmp: Path, work_tree: Path, what: str, *, alternates: Path | None = None, attributes: str = ATTRIBUTES
) -> GitCall:
    """Git on a fresh git directory and index under ``tmp`` with ``work_tree`` as its work tree: the checkpoint
    store's config, attributes, excludes, flags and scratch environment, so nothing in ``work_tree`` configures it.
    ``alternates``: an objects directory to read commits from."""
    exe = find_git()
    if exe is None:
        raise BatchError(f"{what}: git is not installed (or not on PATH)")
    git_dir = tmp / "git"
    env = scratch_env(git_dir, work_tree, tmp / "index", home=tmp)
    if alternates is not None:
        env["GIT_ALTERNATE_OBJECT_DIRECTORIES"] = str(alternates)

    async def run(*args: str, stdin: bytes = b"", ok_codes: Sequence[int] = (0,)) -> bytes:
        proc = await trio.run_process(
            [exe, *SAFE_FLAGS, *args],
            stdin=stdin,
            capture_stdout=True,
            capture_stderr=True,
            check=False,
            cwd=str(work_tree),
            env=env,
        )
        if proc.returncode not in ok_codes:
            words = proc.stderr.decode(errors="replace").strip().splitlines()
            raise BatchError(f"{what} failed: {words[-1] if words else f'exit {proc.returncode}'}")
        out: bytes = proc.stdout
        return out

    await run("init", "--quiet", "--template=")
    write_if_changed(git_dir / "config", config_text())
    write_if_changed(git_dir / "info" / "attributes", attributes)
    write_if_changed(git_dir / "info" / "exclude", "".join(line + "\n" for line in ALWAYS_EXCLUDED))
    return run


def remote_seed(spec: GoalSpec) -> Seed:
    return Seed(bundle=None, url=spec.workspace, commit=spec.ref or "HEAD")


async def seed_for(spec: GoalSpec) -> Seed:
    """The seed of any goal: its URL, or its local directory packed."""
    return remote_seed(spec) if spec.remote else await pack_local(spec)


async def clone(seed: Seed, dest: Path, goal_id: str) -> str:
    """Make ``dest`` a clone of the seed, checked out (detached) at its commit; the commit's id."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    what = f"goal {goal_id}: cloning its workspace"
    if seed.bundle is not None:
        with tempfile.NamedTemporaryFile(suffix=".bundle", dir=dest.parent, delete=False) as f:
            f.write(seed.bundle)
        try:
            await git("clone", "-q", "--no-checkout", f.name, str(dest), what=what)
        finally:
            os.unlink(f.name)
        await git("checkout", "-q", "--detach", seed.commit, cwd=dest, what=what)
    else:
        assert seed.url is not None
        await git("clone", "-q", "--no-checkout", seed.url, str(dest), what=what)
        for candidate in (seed.commit, f"origin/{seed.commit}"):
            try:
                await git("checkout", "-q", "--detach", candidate, cwd=dest, what=what)
                break
            except BatchError:
                if candidate != seed.commit:
                    raise
    return (await git("rev-parse", "HEAD", cwd=dest, what=what)).strip()


async def goal_diff(copy: Path, seed_commit: str) -> str:
    """What the goal changed in its copy since ``seed_commit`` (new files included, ``.reasonix/`` aside).

    The goal could write its copy's ``.git`` and ``.gitattributes`` and make repositories inside it, so none of that
    is read as configuration: the diff is taken with a git directory and index of Reasonix's own in a temporary
    directory (the checkpoint store's config, attributes and flags, no user or system config), the copy's objects
    only borrowed as alternates, and nested repositories stored as plain files (:mod:`orchestrator.checkpoints.stage`).
    """
    what = "reading the goal's diff"
    objects = copy / ".git" / "objects"
    if not (copy / ".git").is_dir() or (copy / ".git").is_symlink() or not objects.is_dir():
        raise BatchError(f"{what}: {copy / '.git'} is no longer the clone's git directory; the goal replaced it")
    with tempfile.TemporaryDirectory(prefix="reasonix-diff-") as tmp:
        run = await _private_git(Path(tmp), copy, what, alternates=objects, attributes=DIFF_ATTRIBUTES)
        await run("read-tree", seed_commit)
        await stage_all(run, copy)
        diff = await run(
            "diff",
            "--cached",
            "--binary",
            "--no-ext-diff",
            "--no-textconv",
            seed_commit,
            "--",
            ".",
            ":(exclude).reasonix",
        )
    return diff.decode(errors="replace")
