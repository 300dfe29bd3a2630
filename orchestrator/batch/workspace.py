"""A goal's own copy of its workspace, never the user's checkout.

Every copy is a git clone, so it is the same on this machine and on a Ray node: a git URL is cloned where the goal
runs; a local directory is first packed into a git bundle here (:func:`pack_local`: the committed tree at ``ref`` or
``HEAD``; a directory that is no repository is snapshotted as one commit of its files, ``.gitignore`` honoured), and
the bundle is cloned (on Ray it travels through the object store). The seed commit is where the goal starts;
:func:`goal_diff` is what it changed since. Git runs without hooks, fsmonitor or the caller's ``GIT_*`` variables.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

import trio

from orchestrator.batch.spec import BatchError, GoalSpec

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
    env = {"GIT_DIR": str(tmp / "snap.git"), "GIT_WORK_TREE": str(root), "GIT_INDEX_FILE": str(tmp / "index")}
    what = f"goal {goal_id}: snapshotting {root}"
    await git("init", "-q", "--bare", str(tmp / "snap.git"), what=what)
    await git("add", "-A", "--", ".", ":(exclude).reasonix", cwd=root, env=env, what=what)
    await git("commit", "-q", "--allow-empty", "-m", "seed", cwd=root, env=env, what=what)
    await git("bundle", "create", str(bundle), "HEAD", cwd=root, env=env, what=what)
    return (await git("rev-parse", "HEAD", cwd=root, env=env, what=what)).strip()


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
    """What the goal changed in its copy since ``seed_commit`` (new files included, ``.reasonix/`` aside)."""
    what = "reading the goal's diff"
    await git("add", "-A", "--", ".", ":(exclude).reasonix", cwd=copy, what=what)
    return await git("diff", "--cached", "--binary", seed_commit, "--", ".", ":(exclude).reasonix", cwd=copy, what=what)
