"""Fast pins of bubblewrap's arguments (:class:`BubblewrapSandbox`'s ``mounts`` and ``wrap``) and of the allowlisted
environment, for real files made here: each argument, in order (a later mount wins over an earlier one). Nothing is
started; the real-bubblewrap tests beside this one show what the arguments do."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

from sessions.sandbox import BubblewrapSandbox, SandboxPolicy, command_env, release
from sessions.sandbox import bounds as bounds_module
from sessions.sandbox import bwrap as bwrap_module
from sessions.sandbox.bounds import Bounds, pids_cgroup_parent, prlimit
from sessions.sandbox.bwrap import _expand, find_bwrap, under_tmp
from sessions.sandbox.hide import run_mounts
from sessions.sandbox.probe import reports_exec, userns_works
from sessions.sandbox.reaper import MARKER
from tests.support.bwrap import home_entry
from tests.support.sockets import listen

BWRAP = "/usr/bin/bwrap"  # only named in the arguments: nothing runs it here
ROOT = os.geteuid() == 0
ETC = ("/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-", "/etc/sudoers", "/etc/sudoers.d")


def box(home: Path | None = None, *, userns: bool = False, **policy: object) -> BubblewrapSandbox:
    env = {"PATH": "/usr/bin:/bin", "TMPDIR": "/elsewhere", "SECRET_TOKEN": "s"}
    if home is not None:
        env["HOME"] = str(home)
    return BubblewrapSandbox(bwrap=BWRAP, policy=SandboxPolicy(**policy), base_env=env, userns=userns)  # type: ignore[arg-type]


def head(tmp_bytes: str | None = "536870912") -> list[str]:
    """The arguments every launch starts with: the read-only root, /dev, /proc, the private /tmp, an empty /run."""
    size = ["--size", tmp_bytes] if tmp_bytes else []
    dev = [*size, "--tmpfs", "/dev/shm", "--remount-ro", "/dev"]  # /dev/shm bounded like /tmp, /dev read-only
    return ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", *size, "--tmpfs", "/tmp", *run_mounts(), *dev]


def kept(*readable: Path) -> list[str]:
    """The read-only binds that keep installed software readable behind the private /tmp, in path order: the policy's
    ``readable`` paths (all under /tmp here) and this venv when it lives under /tmp too (as a CI clone's does)."""
    venv = Path(sys.prefix).resolve()
    paths = {*readable, *([venv] if Path("/tmp") in venv.parents else [])}
    return [arg for path in sorted(paths) for arg in ("--ro-bind", str(path), str(path))]


def etc_masks() -> list[str]:
    out: list[str] = []
    for path in ETC:
        if os.path.isdir(path):
            out += ["--tmpfs", path]
        elif os.path.exists(path):
            out += ["--ro-bind", "/dev/null", path]
    return out


def no_sockets(args: list[str] | tuple[str, ...]) -> list[str]:
    """``args`` without the masks of host sockets (other tests on this machine make and remove theirs at any time):
    every ``--ro-bind /dev/null PATH`` whose PATH is not a plain file or directory."""
    out: list[str] = []
    i = 0
    while i < len(args):
        mask = tuple(args[i : i + 2]) == ("--ro-bind", "/dev/null") and i + 2 < len(args)
        if mask and not (os.path.isfile(args[i + 2]) or os.path.isdir(args[i + 2])):
            i += 3
            continue
        out.append(args[i])
        i += 1
    return out


def socket_masks(args: list[str]) -> list[str]:
    return [args[i + 2] for i in range(len(args) - 2) if args[i : i + 2] == ["--ro-bind", "/dev/null"]]


def _homes(*shown: str) -> list[str]:
    args = ["--tmpfs", "/home"] if os.path.isdir("/home") else []
    for home in shown:
        args += ["--ro-bind", home, home]
    return args + ([] if ROOT else ["--tmpfs", "/root"])


@pytest.fixture
def tree(tmp_path: Path) -> dict[str, Path]:
    """A workspace with the supervisor's records, a git directory, extra writable paths, hidden paths and a home."""
    assert str(tmp_path).startswith("/tmp/"), "these pins need pytest's tmp_path under /tmp"
    paths = {name: tmp_path / name for name in ("ws", "extra", "mcp", "home", "secret-dir")}
    for path in paths.values():
        path.mkdir()
    ws, home = paths["ws"], paths["home"]
    (ws / ".reasonix").mkdir()
    (ws / "reasonix.toml").write_text("")
    (ws / ".git").mkdir()
    (home / ".ssh").mkdir()
    (home / ".bash_history").write_text("")
    (home / ".local" / "share" / "fish").mkdir(parents=True)
    paths["secret-file"] = tmp_path / "secret-file"
    paths["secret-file"].write_text("")
    paths["absent"] = tmp_path / "absent"
    return paths


def _policy(tree: dict[str, Path], **more: object) -> dict[str, object]:
    forbid = (str(tree["secret-dir"]), str(tree["secret-file"]), str(tree["absent"]), "~/.ssh")
    return {"writable": (tree["extra"], tree["absent"]), "readable": (tree["mcp"],), "forbid_read": forbid, **more}


def test_workspace_write_mounts_in_order(tree: dict[str, Path]) -> None:
    ws, home, extra, mcp = tree["ws"], tree["home"], tree["extra"], tree["mcp"]
    args = box(home, **_policy(tree)).mounts(ws, str(home))
    assert no_sockets(args) == [
        *head(),
        *_homes(),
        *kept(mcp),  # under /tmp, kept readable behind the private /tmp
        *["--bind", str(ws), str(ws)],
        *["--bind", str(extra), str(extra)],  # an absent writable path is left out
        *["--ro-bind", str(ws / ".reasonix"), str(ws / ".reasonix")],  # after the workspace: they win over it
        *["--ro-bind", str(ws / "reasonix.toml"), str(ws / "reasonix.toml")],
        *["--ro-bind", str(ws / ".git"), str(ws / ".git")],
        *["--tmpfs", str(tree["secret-dir"]), "--ro-bind", "/dev/null", str(tree["secret-file"])],
        *["--tmpfs", str(home / ".ssh")],
        *etc_masks(),
        *["--ro-bind", "/dev/null", str(home / ".bash_history"), "--tmpfs", str(home / ".local/share/fish")],
    ]


def test_read_only_mounts_bind_nothing_writable(tree: dict[str, Path]) -> None:
    ws, home, mcp = tree["ws"], tree["home"], tree["mcp"]
    args = box(home, mode="read-only", tmp_mb=3, **_policy(tree)).mounts(ws, str(home))
    assert no_sockets(args) == [
        *head("3145728"),
        *_homes(),
        *kept(mcp),
        *["--ro-bind", str(ws), str(ws)],  # no writable path, no protected binds: all is read-only already
        *["--tmpfs", str(tree["secret-dir"]), "--ro-bind", "/dev/null", str(tree["secret-file"])],
        *["--tmpfs", str(home / ".ssh")],
        *etc_masks(),
        *["--ro-bind", "/dev/null", str(home / ".bash_history"), "--tmpfs", str(home / ".local/share/fish")],
    ]


def test_an_unbounded_tmp_has_no_size_and_no_home_hides_nothing_of_it(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    args = box(tmp_mb=0, forbid_read=()).mounts(ws, None)
    assert no_sockets(args)[: len(head(None)) + len(_homes())] == [*head(None), *_homes()]
    assert "--size" not in args


def test_a_git_dir_elsewhere_is_read_only_only_where_it_is_writable(tmp_path: Path) -> None:
    ws, extra, elsewhere, home = tmp_path / "ws", tmp_path / "extra", tmp_path / "elsewhere", tmp_path / "home"
    gitdir = extra / "repo.git"
    for path in (ws, gitdir, elsewhere, home):
        path.mkdir(parents=True)
    (ws / ".git").write_text(f"gitdir: {gitdir}\n")
    ro_git = ["--ro-bind", str(gitdir), str(gitdir)]
    start = [*head(), *_homes(), *kept(), "--bind", str(ws), str(ws)]
    args = box(writable=(extra,), forbid_read=()).mounts(ws, str(home))  # inside a writable path
    assert no_sockets(args) == [*start, "--bind", str(extra), str(extra), *ro_git, *etc_masks()]
    args = box(writable=(gitdir,), forbid_read=()).mounts(ws, str(home))  # that path itself
    assert no_sockets(args) == [*start, "--bind", str(gitdir), str(gitdir), *ro_git, *etc_masks()]
    (ws / ".git").write_text(f"gitdir: {elsewhere}\n")  # read-only already: nothing to bind
    args = box(writable=(extra,), forbid_read=()).mounts(ws, str(home))
    assert no_sockets(args) == [*start, "--bind", str(extra), str(extra), *etc_masks()]
    (ws / ".git").write_text(f"gitdir: {gitdir}\n")
    args = box(mode="read-only", writable=(extra,), forbid_read=()).mounts(ws, str(home))
    assert no_sockets(args) == [*head(), *_homes(), *kept(), "--ro-bind", str(ws), str(ws), *etc_masks()]


@pytest.mark.real_home
def test_the_homes_in_use_are_bound_back_before_the_workspace(a_home: Path, tmp_path: Path, outside_tmp: Path) -> None:
    ws = a_home / "ws"
    ws.mkdir()
    agent = listen(a_home / "agent.sock")  # in a home bound back: masked
    masked = outside_tmp / "masked"
    masked.mkdir()
    inside = listen(masked / "agent.sock")  # under a tmpfs mask: nothing to mask
    loose = listen(outside_tmp / "loose.sock")
    try:
        args = box(tmp_path, forbid_read=(str(masked),)).mounts(ws, str(tmp_path))
        shown = home_entry(a_home)
        assert no_sockets(args)[: len(head()) + len(_homes(shown)) + len(kept()) + 3] == [
            *head(),
            *_homes(shown),
            *kept(),
            *["--bind", str(ws), str(ws)],
        ]
        sockets = socket_masks(args)
        assert str(a_home / "agent.sock") in sockets and str(outside_tmp / "loose.sock") in sockets
        assert str(masked / "agent.sock") not in sockets
        # $HOME counts as a home in use; the workspace elsewhere then adds nothing under /home.
        home_args = no_sockets(box(a_home, forbid_read=()).mounts(tmp_path, str(a_home)))
        assert home_args[len(head()) : len(head()) + len(_homes(shown))] == _homes(shown)
        writable = a_home / "extra"
        writable.mkdir()
        extra_args = no_sockets(box(tmp_path, writable=(writable,), forbid_read=()).mounts(tmp_path, None))
        assert extra_args[len(head()) : len(head()) + len(_homes(shown))] == _homes(shown)
        ro_args = no_sockets(box(tmp_path, mode="read-only", writable=(writable,)).mounts(tmp_path, None))
        assert ro_args[len(head()) : len(head()) + len(_homes())] == _homes()
    finally:
        for server in (agent, inside, loose):
            server.close()


def test_under_tmp_keeps_each_outermost_existing_path(tmp_path: Path, outside_tmp: Path) -> None:
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "c").mkdir()
    paths = [tmp_path / "c", tmp_path / "a" / "b", tmp_path / "a", tmp_path / "absent", outside_tmp, Path("/tmp")]
    assert under_tmp([*paths, tmp_path / "a"]) == [str(tmp_path / "a"), str(tmp_path / "c")]
    (tmp_path / "link").symlink_to(outside_tmp)
    assert under_tmp([tmp_path / "link"]) == []  # resolved: it is not under /tmp at all


def test_a_venv_under_tmp_stays_readable_behind_the_private_tmp(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Wherever this clone lives: the running Python's prefix (read at each launch) is bound back when /tmp holds it."""
    venv, ws = tmp_path / "venv", tmp_path / "ws"
    venv.mkdir()
    ws.mkdir()
    monkeypatch.setattr(sys, "prefix", str(venv))
    # The policy's own hidden files (~/.bash_history and the like) are looked for in the test's home: an empty one,
    # so what this machine's real home holds does not change the arguments.
    monkeypatch.setenv("HOME", str(tmp_path / "empty-home"))
    args = no_sockets(box(forbid_read=()).mounts(ws, None))
    assert args[len(head()) :] == [
        *_homes(),
        "--ro-bind",
        str(venv),
        str(venv),
        "--bind",
        str(ws),
        str(ws),
        *etc_masks(),
    ]
    monkeypatch.setattr(sys, "prefix", "/usr")  # not under /tmp: the read-only root shows it already
    args = no_sockets(box(forbid_read=()).mounts(ws, None))
    assert args[len(head()) :] == [*_homes(), "--bind", str(ws), str(ws), *etc_masks()]


def test_expand_uses_the_commands_home() -> None:
    assert _expand("~", "/h") == Path("/h") and _expand("~/.ssh", "/h") == Path("/h/.ssh")
    assert _expand("/etc/x", "/h") == Path("/etc/x") and _expand("~other", "/h") == Path(os.path.expanduser("~other"))
    assert _expand("~/.ssh", None) == Path(os.path.expanduser("~/.ssh")) == _expand("~/.ssh", "")


def test_wrap_says_each_argument(tree: dict[str, Path]) -> None:
    ws, home = tree["ws"], tree["home"]
    for userns in (False, True):
        sandbox = box(home, userns=userns, **_policy(tree))
        launch = sandbox.wrap(["echo", "hi"], workspace=ws, cwd=ws / ".git", env={"FOO": "1"})
        try:
            assert launch.env == {"PATH": "/usr/bin:/bin", "HOME": str(home), "TMPDIR": "/tmp", "FOO": "1"}
            cgroup = launch.bounds.cgroup if launch.bounds else None
            assert (cgroup is not None) == (ROOT and pids_cgroup_parent() is not None)
            by_rlimit = userns and not ROOT and prlimit() is not None
            prefix: list[str] = []
            if cgroup is not None:
                script = 'echo $$ > "$0" && ulimit -d 4194304 && exec "$@"'
                prefix = ["/bin/sh", "-c", script, str(cgroup / "cgroup.procs")]
            nproc = ["--nproc=512"] if by_rlimit else []
            inner = [str(prlimit()), *nproc, "--data=4294967296", "--"] if cgroup is None and prlimit() else []
            assert no_sockets(launch.argv) == [
                *prefix,
                BWRAP,
                *no_sockets(sandbox.mounts(ws, str(home))),
                *["--cap-drop", "ALL"],
                *(["--unshare-user", "--disable-userns"] if userns else []),
                *["--unshare-pid", "--unshare-ipc", "--new-session", "--die-with-parent", "--unshare-net"],
                *["--setenv", MARKER, launch.marker],  # what a kill while bubblewrap starts is found by
                *["--chdir", str(ws / ".git"), "--", *inner, "echo", "hi"],
            ]
            assert launch.contained
            assert launch.status_at == (len(prefix) + 1 if reports_exec(BWRAP) else None)  # right after bwrap
            processes = 512 if cgroup is not None or by_rlimit else 0
            memory = 4096 if cgroup is not None or prlimit() else 0
            assert launch.bounds == Bounds(512, processes, memory, cgroup, by_rlimit)
        finally:
            release(launch.bounds)
        if cgroup is not None:
            assert not cgroup.exists()


@pytest.mark.parametrize("userns", [False, True])
def test_without_a_process_bound_memory_is_bounded_inside(tmp_path: Path, userns: bool) -> None:
    launch = box(tmp_path, userns=userns, max_processes=0).wrap(["true"], workspace=tmp_path, cwd=tmp_path, env={})
    assert launch.argv[0] == BWRAP
    tool = prlimit()
    inner = (str(tool), "--data=4294967296", "--") if tool else ()
    assert launch.argv[-6:] == (str(tmp_path), "--", *inner, "true")[-6:] and "--nproc" not in str(launch.argv)
    assert launch.bounds == Bounds(512, 0, 4096 if tool else 0, None, False)
    bare = box(tmp_path, userns=userns, max_processes=0, memory_mb=0, tmp_mb=0)
    launch = bare.wrap(["true"], workspace=tmp_path, cwd=tmp_path, env={})
    assert launch.argv[-4:] == ("--chdir", str(tmp_path), "--", "true")
    assert launch.bounds == Bounds(0, 0, 0, None, False)


def test_network_and_shared_network(tmp_path: Path) -> None:
    join = ("/usr/bin/nsenter", "--net=/proc/1/ns/net")
    shared = box(tmp_path, max_processes=0).with_network(join)
    launch = shared.wrap(["true"], workspace=tmp_path, cwd=tmp_path, env={})
    assert launch.argv[:3] == (*join, BWRAP) and "--unshare-net" not in launch.argv
    assert launch.status_at == (3 if reports_exec(BWRAP) else None)
    opened = BubblewrapSandbox(BWRAP, SandboxPolicy(network=True, max_processes=0), {}, False, join)
    launch = opened.wrap(["true"], workspace=tmp_path, cwd=tmp_path, env={})
    assert launch.argv[0] == BWRAP and "--unshare-net" not in launch.argv and "--die-with-parent" in launch.argv
    tail = list(launch.argv)[list(launch.argv).index("--cap-drop") :]
    assert tail[:6] == ["--cap-drop", "ALL", "--unshare-pid", "--unshare-ipc", "--new-session", "--die-with-parent"]
    assert launch.marker and tail[6:9] == ["--setenv", MARKER, launch.marker]
    assert box(tmp_path).wrap(["true"], workspace=tmp_path, cwd=tmp_path, env={}).marker != launch.marker


def test_full_access_is_refused_and_the_sandbox_names_itself(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"^full-access runs without a sandbox; use NoSandbox$"):
        box(mode="full-access").wrap(["true"], workspace=tmp_path, cwd=tmp_path, env={})
    sandbox = box()
    assert sandbox.name == "bubblewrap" and sandbox.confines
    assert sandbox.with_mode("read-only").policy.mode == "read-only" and sandbox.policy.mode == "workspace-write"
    assert sandbox.with_network(("x",)).join_net == ("x",) and sandbox.join_net == ()
    assert not box(userns=False).uses_userns() and box(userns=True).uses_userns()


def test_find_bwrap_is_the_one_on_path() -> None:
    expected = shutil.which("bwrap")
    if expected is None:
        pytest.skip("no bubblewrap here")
    assert find_bwrap() == expected


def test_the_probe_decides_when_userns_is_not_said(bwrap: str, tmp_path: Path) -> None:
    assert find_bwrap() == shutil.which("bwrap") == bwrap
    assert reports_exec(bwrap)  # bubblewrap 0.5 or later: every supported distribution's
    assert not reports_exec(str(tmp_path / "absent"))
    assert BubblewrapSandbox(bwrap=bwrap).uses_userns() == userns_works(bwrap)


def test_command_env_is_the_allowlist_plus_overrides_minus_secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    base = {"PATH": "/bin", "HOME": "/h", "LANG": "C", "AWS_SECRET": "x", "DEPLOY_PAT": "p", "EXTRA": "e", "KEY": "k"}
    policy = SandboxPolicy(env=("EXTRA", "KEY", "MISSING"), secret_env=("key",))
    assert command_env(policy, None, base) == {"PATH": "/bin", "HOME": "/h", "LANG": "C", "EXTRA": "e"}
    overrides = {"TERM": "dumb", "Key": "from-override", "OTHER": "o"}
    assert command_env(policy, overrides, base) == {
        "PATH": "/bin",
        "HOME": "/h",
        "LANG": "C",
        "EXTRA": "e",
        "TERM": "dumb",
        "OTHER": "o",
    }
    assert command_env(SandboxPolicy(), {"DEEPSEEK_API_KEY": "sk"}, {}) == {}  # an empty base is not os.environ
    monkeypatch.setenv("PATH", "/from/os")
    monkeypatch.setenv("DEEPSEEK_API_KEY", "sk-os")
    monkeypatch.setenv("NOT_LISTED", "n")
    env = command_env(SandboxPolicy(env=("DEEPSEEK_API_KEY",)))
    assert env["PATH"] == "/from/os" and "DEEPSEEK_API_KEY" not in env and "NOT_LISTED" not in env


def test_a_host_without_a_pids_cgroup_nor_prlimit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What such a host gets (a container's root; a system without util-linux's ``prlimit``): the host's view is
    stood in for, the rest runs as it is."""
    monkeypatch.setattr(bounds_module, "pids_cgroup_parent", lambda: None)
    launch = box(tmp_path, userns=False).wrap(["true"], workspace=tmp_path, cwd=tmp_path, env={})
    tool = prlimit()
    inner = (str(tool), "--data=4294967296", "--") if tool else ()
    assert launch.argv[0] == BWRAP and launch.argv[-len(inner) - 1 :] == (*inner, "true")
    assert launch.bounds == Bounds(512, 0, 4096 if tool else 0, None, False)  # no process bound holds here
    monkeypatch.setattr(bwrap_module, "prlimit", lambda: None)
    monkeypatch.setattr(bounds_module, "prlimit", lambda: None)
    launch = box(tmp_path, userns=True).wrap(["true"], workspace=tmp_path, cwd=tmp_path, env={})
    assert launch.argv[0] == BWRAP and launch.argv[-4:] == ("--chdir", str(tmp_path), "--", "true")
    assert launch.bounds == Bounds(512, 0, 0, None, False)  # nothing bounds memory nor processes


def test_without_prlimit_only_roots_cgroup_bounds_memory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """As root, the pids cgroup's prefix bounds memory (``ulimit -d``) and processes; as an ordinary user (or a root
    without a writable pids cgroup) nothing bounds either without ``prlimit``."""
    monkeypatch.setattr(bwrap_module, "prlimit", lambda: None)
    monkeypatch.setattr(bounds_module, "prlimit", lambda: None)
    launch = box(tmp_path).wrap(["true"], workspace=tmp_path, cwd=tmp_path, env={})
    try:
        if ROOT and pids_cgroup_parent() is not None:
            assert launch.bounds is not None and launch.bounds.cgroup is not None
            assert launch.bounds == Bounds(512, 512, 4096, launch.bounds.cgroup, False)
            assert launch.argv[:3] == ("/bin/sh", "-c", 'echo $$ > "$0" && ulimit -d 4194304 && exec "$@"')
        else:
            assert launch.bounds == Bounds(512, 0, 0, None, False)
            assert launch.argv[0] == BWRAP and launch.argv[-4:] == ("--chdir", str(tmp_path), "--", "true")
    finally:
        release(launch.bounds)


def test_an_ordinary_users_launch_bounds_processes_inside(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The arguments an ordinary user's launch gets, pinned as root too (the identity stood in for): no cgroup, and
    ``prlimit --nproc`` inside the sandbox's own user namespace; without one, no process bound."""
    tool = prlimit()
    if tool is None:
        pytest.skip("no prlimit here")
    monkeypatch.setattr(os, "geteuid", lambda: 4242)
    # And what that identity gets: no pids cgroup (the real answer stays cached for root's own tests), and none is
    # even tried for: the cgroup is root's, whatever the probe of the cgroups says.
    monkeypatch.setattr(bounds_module, "pids_cgroup_parent", lambda: None)
    monkeypatch.setattr(bwrap_module, "new_pids_cgroup", lambda _: pytest.fail("an ordinary user's launch made one"))
    launch = box(tmp_path, userns=True).wrap(["true"], workspace=tmp_path, cwd=tmp_path, env={})
    assert launch.argv[0] == BWRAP and "--unshare-user" in launch.argv
    assert launch.argv[-6:] == ("--", tool, "--nproc=512", "--data=4294967296", "--", "true")
    assert launch.bounds == Bounds(512, 512, 4096, None, True)
    launch = box(tmp_path, userns=False).wrap(["true"], workspace=tmp_path, cwd=tmp_path, env={})
    assert launch.argv[-5:] == ("--", tool, "--data=4294967296", "--", "true")
    assert launch.bounds == Bounds(512, 0, 4096, None, False)
