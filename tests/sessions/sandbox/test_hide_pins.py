"""Fast pins of :mod:`sessions.sandbox.hide`: what it hides, for real files, directories and unix sockets made here
(no bubblewrap is started: the real-bubblewrap tests beside this one show the mounts take effect)."""

from __future__ import annotations

import os
import shutil
import socket
from pathlib import Path

import pytest

from sessions.sandbox import hide
from sessions.sandbox.hide import HomeMounts, _depth, _under, git_dirs, home_mounts, host_sockets, run_mounts
from tests.support.bwrap import home_entry
from tests.support.sockets import listen

ROOT = os.geteuid() == 0


def test_under_and_depth_compare_whole_path_components() -> None:
    assert _under("/run", ["/run"]) and _under("/run/user/1", ["/x", "/run"]) and _under("/a/b", ["/a/"])
    assert not _under("/running", ["/run"]) and not _under("/ru", ["/run"]) and not _under("/run", [])
    assert _under("/anything", ["/"]) and _under("/a/X/b", ["/a/X"]) and not _under("/a/Y", ["/a/X"])
    assert _depth("/a/b/c", ["/x", "/a", "/a/b"]) == 4 and _depth("/a/bc", ["/a/b", "/a"]) == 2
    assert _depth("/a", ["/b"]) == -1 and _depth("/a", []) == -1


def test_run_mounts_empty_each_real_run_dir_and_skip_a_link(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = tmp_path / "run"
    real.mkdir()
    (tmp_path / "var-run").symlink_to(real)
    (tmp_path / "a-file").write_text("")
    dirs = (str(real), str(tmp_path / "var-run"), str(tmp_path / "absent"), str(tmp_path / "a-file"))
    monkeypatch.setattr(hide, "RUN_DIRS", dirs)
    assert run_mounts() == ["--tmpfs", str(real)]  # /etc/resolv.conf is not under these


def test_run_mounts_empty_both_when_var_run_is_its_own(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "run").mkdir()
    (tmp_path / "var-run").mkdir()
    monkeypatch.setattr(hide, "RUN_DIRS", (str(tmp_path / "run"), str(tmp_path / "var-run")))
    assert run_mounts() == ["--tmpfs", str(tmp_path / "run"), "--tmpfs", str(tmp_path / "var-run")]


def test_run_mounts_bind_the_resolver_back_when_it_lives_under_run(monkeypatch: pytest.MonkeyPatch) -> None:
    resolv = os.path.realpath("/etc/resolv.conf")
    if not os.path.isfile(resolv) or os.path.islink(os.path.dirname(resolv)):
        pytest.skip("no resolver file here")
    folder = os.path.dirname(resolv)
    monkeypatch.setattr(hide, "RUN_DIRS", (folder,))  # as if it were /run (systemd-resolved's stub)
    assert run_mounts() == ["--tmpfs", folder, "--ro-bind", resolv, resolv]


def test_run_mounts_of_this_host() -> None:
    expected = []
    for run in ("/run", "/var/run"):
        if os.path.isdir(run) and not os.path.islink(run):
            expected += ["--tmpfs", run]
    resolv = os.path.realpath("/etc/resolv.conf")
    if resolv.startswith(("/run/", "/var/run/")) and os.path.isfile(resolv):
        expected += ["--ro-bind", resolv, resolv]
    assert run_mounts() == expected


def test_host_sockets_are_the_visible_bound_ones(outside_tmp: Path, tmp_path: Path) -> None:
    masked, shown = outside_tmp / "masked", outside_tmp / "masked" / "shown"
    shown.mkdir(parents=True)
    in_tmp = tmp_path / "in-tmp.sock"
    first = listen(outside_tmp / "agent.sock")  # then a second socket bound at its path: the path is listed twice
    (outside_tmp / "agent.sock").unlink()
    visible = [
        outside_tmp / "agent.sock",
        outside_tmp / "with space.sock",
        outside_tmp / "endsX",
        outside_tmp / "trailing ",
        shown / "deep.sock",
    ]
    hidden = [masked / "hidden.sock", in_tmp]
    servers = [first, *(listen(path) for path in (*visible, *hidden))]
    gone = listen(outside_tmp / "gone.sock")  # still listed in /proc/net/unix, but its file was removed
    (outside_tmp / "gone.sock").unlink()
    replaced = listen(outside_tmp / "replaced.sock")  # its path now holds a plain file
    (outside_tmp / "replaced.sock").unlink()
    (outside_tmp / "replaced.sock").write_text("")
    try:
        found = host_sockets([str(masked)], [str(shown)])
        assert sorted(map(str, visible)) == sorted(path for path in found if path.startswith(str(outside_tmp)))
        assert found.count(str(outside_tmp / "agent.sock")) == 1
        assert not any(path.startswith(("/tmp/", "/run/", "/var/run/", "/dev/", "/proc/")) for path in found)
        # The deepest root decides: a socket under a bound-back folder of a masked root is still visible, and one
        # under /tmp (private) shows again when its folder is bound back; without the bound-back roots neither does.
        assert str(in_tmp) in host_sockets([], [str(tmp_path)])
        assert str(shown / "deep.sock") not in host_sockets([str(masked)])
        assert str(shown / "deep.sock") not in host_sockets([str(shown)], [str(masked)])
        assert str(shown / "deep.sock") in host_sockets([str(shown)], [str(shown)])  # a tie: bound back wins
        assert str(outside_tmp / "agent.sock") in host_sockets([])
    finally:
        for server in (*servers, gone, replaced):
            server.close()


def test_a_socket_name_that_is_not_utf8_is_found_by_its_own_bytes(outside_tmp: Path) -> None:
    """Decoded as the file system decodes it, so lstat and bubblewrap's arguments give its bytes back: a name with
    a replacement character in it would name no file, and the socket would stay reachable in the sandbox."""
    odd = socket.socket(socket.AF_UNIX)
    odd.bind(os.fsencode(outside_tmp) + b"/\xff\xfe.sock")
    plain = listen(outside_tmp / "plain.sock")
    try:
        found = sorted(path for path in host_sockets([]) if path.startswith(str(outside_tmp)))
        assert found == sorted(
            [str(outside_tmp / "plain.sock"), os.fsdecode(os.fsencode(outside_tmp) + b"/\xff\xfe.sock")]
        )
        assert os.fsencode(found[0] if "plain" not in found[0] else found[1]).endswith(b"/\xff\xfe.sock")
    finally:
        odd.close()
        plain.close()


def test_host_sockets_ignore_abstract_and_relative_names(outside_tmp: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(outside_tmp)
    relative = listen(Path("@relative.sock"))  # listed as "@relative.sock", like an abstract name
    try:
        assert "@relative.sock" not in host_sockets([])
        assert not [path for path in host_sockets([]) if not path.startswith("/")]
    finally:
        relative.close()


def test_abstract_sockets_do_not_end_the_scan(outside_tmp: Path) -> None:
    abstract = []
    for i in range(8):
        server = socket.socket(socket.AF_UNIX)
        server.bind(f"\0reasonix-pins-{os.getpid()}-{i}")
        abstract.append(server)
    named = [listen(outside_tmp / f"s{i}.sock") for i in range(8)]
    try:
        found = sorted(path for path in host_sockets([]) if path.startswith(str(outside_tmp)))
        assert found == sorted(str(outside_tmp / f"s{i}.sock") for i in range(8))
    finally:
        for server in (*abstract, *named):
            server.close()


def test_a_huge_git_pointer_file_is_not_read_whole(tmp_path: Path) -> None:
    """Follow-up part c: on 05d9218 ``.git`` was read whole (an 8 GiB sparse file: a MemoryError at sandbox launch)."""
    ws = tmp_path / "ws"
    ws.mkdir()
    real = tmp_path / "real-git"
    real.mkdir()
    with (ws / ".git").open("wb") as handle:
        handle.write(f"gitdir: {real}\n".encode())
        handle.truncate(8 << 30)
    assert git_dirs(ws) == []  # longer than a pointer: not one
    with (ws / ".git").open("r+b") as handle:
        handle.truncate(len(f"gitdir: {real}\n"))
    assert git_dirs(ws) == [real]


def test_git_dirs(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / ".git").mkdir(parents=True)
    assert git_dirs(ws) == [ws / ".git"]
    shutil.rmtree(ws / ".git")
    assert git_dirs(ws) == []
    real = tmp_path / "real-git"
    real.mkdir()
    (ws / ".git").write_text("gitdir:  ../real-git  \n")
    assert git_dirs(ws) == [real.resolve()]
    (ws / ".git").write_text(f"\n  gitdir: {real}")
    assert git_dirs(ws) == [real]
    (ws / ".git").write_text("gitdir: ../absent")
    assert git_dirs(ws) == []
    (ws / ".git").write_text(f"not a gitdir line: {real}")
    assert git_dirs(ws) == []
    (ws / ".git").write_bytes(b"gitdir: \xff\xfe")
    assert git_dirs(ws) == []
    (ws / ".git").unlink()
    (ws / ".git").symlink_to("/proc/self/mem")  # a file that cannot be read (EIO), as root too: no git dir
    assert git_dirs(ws) == []
    (ws / ".git").unlink()
    pointer = tmp_path / "outside-pointer"
    pointer.write_text(f"gitdir: {real}\n")
    (ws / ".git").symlink_to(pointer)  # a pointer outside the workspace is not read (the gateway's rule)
    assert git_dirs(ws) == []
    (ws / ".git").unlink()
    os.mkfifo(ws / ".git")  # nothing waits on a FIFO
    assert git_dirs(ws) == []
    (ws / ".git").unlink()
    (ws / ".git").symlink_to(real)  # a link is not bound (bubblewrap would follow it)
    assert git_dirs(ws) == []


@pytest.mark.real_home
def test_home_mounts_keep_only_the_homes_in_use(a_home: Path, tmp_path: Path) -> None:
    shown = home_entry(a_home)
    deep = a_home / "sub" / "deeper"
    deep.mkdir(parents=True)
    keep = [deep, a_home, Path("/home"), tmp_path, Path("/home/reasonix-pins-absent/x"), Path(shown)]
    mounts = home_mounts(keep)
    root_args = [] if ROOT else ["--tmpfs", "/root"]
    assert mounts == HomeMounts(
        ["--tmpfs", "/home", "--ro-bind", shown, shown, *root_args],
        ["/home", *([] if ROOT else ["/root"])],
        [shown],
    )
    assert home_mounts([]) == HomeMounts(["--tmpfs", "/home", *root_args], ["/home", *([] if ROOT else ["/root"])], [])


@pytest.mark.real_home
def test_home_mounts_of_an_ordinary_user_empty_root(a_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if not os.path.isdir("/root"):
        pytest.skip("no /root here")
    monkeypatch.setattr(os, "geteuid", lambda: 4242)  # as root too: the identity stood in for
    shown = home_entry(a_home)
    assert home_mounts([a_home]) == HomeMounts(
        ["--tmpfs", "/home", "--ro-bind", shown, shown, "--tmpfs", "/root"], ["/home", "/root"], [shown]
    )


def test_home_mounts_of_a_host_without_homes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root_args, root_hidden = ([], []) if ROOT else (["--tmpfs", "/root"], ["/root"])
    monkeypatch.setattr(hide, "HOMES", str(tmp_path / "absent"))
    assert home_mounts([tmp_path / "absent" / "me"]) == HomeMounts(root_args, root_hidden, [])
    (tmp_path / "slash").symlink_to("/")  # /home a link to /: an empty tmpfs there would hide everything
    monkeypatch.setattr(hide, "HOMES", str(tmp_path / "slash"))
    assert home_mounts([Path("/usr")]) == HomeMounts(root_args, root_hidden, [])


@pytest.mark.real_home
def test_home_mounts_resolve_links_to_a_home(a_home: Path, tmp_path: Path) -> None:
    link = tmp_path / "link"
    link.symlink_to(a_home)
    shown = home_entry(a_home)
    assert home_mounts([link]).args[:5] == ["--tmpfs", "/home", "--ro-bind", shown, shown]
    assert home_mounts([link]).kept == [shown]
