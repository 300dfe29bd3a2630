"""Which output says bubblewrap stopped in its setup on a mount destination that went away (the command never ran),
and which does not (anything a command could have printed itself, a path still there, a path the launch does not
mount over)."""

from __future__ import annotations

from pathlib import Path

from hypothesis import assume, given
from hypothesis import strategies as st

from sessions.sandbox import Launch


def _launch(gone: Path, kept: Path) -> Launch:
    argv = ("bwrap", "--ro-bind", "/", "/", "--tmpfs", "/tmp", "--ro-bind", "/dev/null", str(gone))
    argv += ("--ro-bind", "/dev/null", str(kept), "--", "bash", "-c", f"--ro-bind /dev/null {gone.parent / 'cmd'}")
    return Launch(argv=argv, env={}, contained=True)


def test_only_bubblewraps_own_error_about_a_gone_destination_counts(tmp_path: Path) -> None:
    gone, kept = tmp_path / "gone" / "agent.sock", tmp_path / "kept.sock"
    kept.write_text("")
    launch = _launch(gone, kept)
    mkdir = f"bwrap: Can't mkdir parents for {gone}: Read-only file system\n"
    create = f"bwrap: Can't create file at {gone}: Read-only file system\n"
    assert launch.stopped_on_a_gone_mount(1, mkdir) and launch.stopped_on_a_gone_mount(1, create)
    assert not launch.stopped_on_a_gone_mount(2, mkdir)  # bubblewrap's setup errors exit 1
    assert not launch.stopped_on_a_gone_mount(None, mkdir)
    assert not launch.stopped_on_a_gone_mount(1, "hello\n" + mkdir)  # the command printed something first: it ran
    assert not launch.stopped_on_a_gone_mount(1, mkdir.replace(str(gone), str(kept)))  # still there
    cmd = gone.parent / "cmd"  # after "--": the command's own words, never a mount
    assert not launch.stopped_on_a_gone_mount(1, f"bwrap: Can't create file at {cmd}: Read-only file system")
    assert not Launch(argv=launch.argv, env={}, contained=False).stopped_on_a_gone_mount(1, mkdir)


@given(st.text())
def test_text_that_is_not_bubblewraps_setup_error_never_counts(text: str) -> None:
    launch = _launch(Path("/nonexistent-reasonix-test/agent.sock"), Path("/"))
    assume(not text.strip().startswith("bwrap: Can't "))
    assert not launch.stopped_on_a_gone_mount(1, text)


@given(st.text(alphabet=st.characters(blacklist_characters="\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"), min_size=1))
def test_bubblewraps_setup_error_counts_whatever_its_reason(reason: str) -> None:
    gone = Path("/nonexistent-reasonix-test/agent.sock")
    launch = _launch(gone, Path("/"))
    assume(reason.strip() == reason and ": " not in reason)
    assert launch.stopped_on_a_gone_mount(1, f"bwrap: Can't mkdir parents for {gone}: {reason}\n")
