"""The supervisor's own verification: real bash processes in a real workspace directory."""

from __future__ import annotations

from pathlib import Path

import pytest
import trio

from orchestrator.events import VerifyOutcome
from orchestrator.policy.verify import VerifyError, run_verify, verify_feedback
from plans.schema import Step, VerifyCommand


def step(*commands: VerifyCommand | str) -> Step:
    verify = tuple(VerifyCommand(command=c) if isinstance(c, str) else c for c in commands)
    return Step(id="S1", title="t", instructions="i", verify=verify)


def gone(pid: int) -> bool:
    """The process no longer runs (absent, or a zombie waiting for its reaper)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] in {"Z", "X"}


async def wait_gone(pid: int) -> None:
    with trio.fail_after(120):  # a hang guard: a loaded machine may take long to reap
        while not gone(pid):  # noqa: ASYNC110 - another process's death has no trio event to wait on
            await trio.sleep(0.01)


async def test_passing_command_runs_in_the_workspace(tmp_path: Path) -> None:
    (tmp_path / "marker.txt").write_text("inside the workspace\n")
    (outcome,) = await run_verify(step("cat marker.txt"), tmp_path)
    assert outcome == VerifyOutcome(
        command="cat marker.txt", exit_code=0, expected=0, ok=True, output="inside the workspace\n"
    )


async def test_failing_command_merges_stderr_and_reports_exit(tmp_path: Path) -> None:
    (outcome,) = await run_verify(step("echo out; echo boom >&2; exit 3"), tmp_path)
    assert not outcome.ok
    assert outcome.exit_code == 3
    assert outcome.output == "out\nboom\n"
    assert not outcome.timed_out


async def test_expected_nonzero_exit_is_ok(tmp_path: Path) -> None:
    (fails, passes) = await run_verify(
        step(VerifyCommand(command="exit 1", expect_exit=1), VerifyCommand(command="true", expect_exit=2)), tmp_path
    )
    assert fails.ok and fails.exit_code == 1
    assert not passes.ok and passes.exit_code == 0 and passes.expected == 2


async def test_runs_all_commands_in_order_unless_told_to_stop(tmp_path: Path) -> None:
    s = step("echo one >> log", "echo two >> log; exit 1", "echo three >> log")
    outcomes = await run_verify(s, tmp_path)
    assert [o.ok for o in outcomes] == [True, False, True]
    assert (tmp_path / "log").read_text() == "one\ntwo\nthree\n"

    (tmp_path / "log").unlink()
    outcomes = await run_verify(s, tmp_path, stop_on_failure=True)
    assert [o.ok for o in outcomes] == [True, False]
    assert (tmp_path / "log").read_text() == "one\ntwo\n"


async def test_no_verify_commands_means_no_outcomes(tmp_path: Path) -> None:
    assert await run_verify(step(), tmp_path) == ()


async def test_timeout_kills_the_whole_process_group(tmp_path: Path) -> None:
    command = VerifyCommand(command="sleep 30 & echo $! > child.pid; echo started; wait", timeout_s=0.5)
    (outcome,) = await run_verify(step(command), tmp_path)
    assert outcome.timed_out
    assert outcome.exit_code is None
    assert not outcome.ok
    assert outcome.output == "started\n"
    await wait_gone(int((tmp_path / "child.pid").read_text()))


async def test_default_timeout_applies_when_the_command_has_none(tmp_path: Path) -> None:
    (outcome,) = await run_verify(step("sleep 30"), tmp_path, default_timeout_s=0.3)
    assert outcome.timed_out and not outcome.ok


async def test_cancellation_kills_the_group_and_propagates(tmp_path: Path) -> None:
    command = VerifyCommand(command="sleep 30 & echo $! > child.pid; wait", timeout_s=60)
    reached_end = False
    pid_file = tmp_path / "child.pid"

    async def verify() -> None:
        nonlocal reached_end
        await run_verify(step(command), tmp_path)
        reached_end = True

    with trio.fail_after(120):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(verify)
            while not pid_file.exists() or not pid_file.read_text().strip():  # noqa: ASYNC110 - a file, no event
                await trio.sleep(0.01)
            nursery.cancel_scope.cancel()  # once the command runs, however long a loaded machine took to start it
    assert not reached_end
    await wait_gone(int(pid_file.read_text()))


async def test_background_leftovers_do_not_hold_the_verdict(tmp_path: Path) -> None:
    # The command exits at once but a background child keeps the output pipe open.
    command = VerifyCommand(command="(sleep 30 & echo $! > child.pid); echo done", timeout_s=20)
    (outcome,) = await run_verify(step(command), tmp_path)
    assert outcome.ok and not outcome.timed_out
    assert outcome.output == "done\n"
    await wait_gone(int((tmp_path / "child.pid").read_text()))


async def test_the_environment_is_an_allowlist(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    secrets = {
        "DEEPSEEK_API_KEY": "sk-deepseek",
        "OPENAI_API_KEY": "sk-openai",
        "GITHUB_TOKEN": "ghp-token",
        "AWS_SECRET_ACCESS_KEY": "aws-secret",
        "MY_PAT": "pat-value",
        "SERVICE_PASSWORD": "hunter2",
    }
    for name, value in secrets.items():
        monkeypatch.setenv(name, value)
    (outcome,) = await run_verify(step("env"), tmp_path, env={"KEEP_ME": "visible"})
    assert "KEEP_ME=visible" in outcome.output and "PATH=" in outcome.output
    for name, value in secrets.items():
        assert name not in outcome.output and value not in outcome.output


async def test_stdin_is_empty(tmp_path: Path) -> None:
    (outcome,) = await run_verify(step("cat; echo end"), tmp_path)
    assert outcome.ok and outcome.output == "end\n"


async def test_output_is_bounded_keeping_head_and_tail(tmp_path: Path) -> None:
    (outcome,) = await run_verify(step("seq 1 100000; exit 1"), tmp_path, output_chars=200)
    text = outcome.output
    assert text.startswith("1\n2\n3\n")
    assert text.endswith("99999\n100000\n")
    assert "cut" in text
    assert len(text) < 200 + 80
    again = await run_verify(step("seq 1 100000; exit 1"), tmp_path, output_chars=200)
    assert again == (outcome,), "the same output gives the same text"


async def test_missing_workspace_is_the_supervisors_problem(tmp_path: Path) -> None:
    with pytest.raises(VerifyError, match="not a directory"):
        await run_verify(step("true"), tmp_path / "nowhere")


def test_feedback_names_each_failed_command_with_exit_and_output() -> None:
    outcomes = (
        VerifyOutcome(command="pytest -q", exit_code=0, ok=True, output="3 passed\n"),
        VerifyOutcome(command="ruff check .", exit_code=1, ok=False, output="E501 line too long\n"),
        VerifyOutcome(command="sleep 30", exit_code=None, ok=False, timed_out=True, output=""),
    )
    text = verify_feedback(outcomes)
    assert text == (
        "Verification failed: 2 of 3 command(s) did not pass.\n"
        "\n"
        "$ ruff check .\n"
        "[exit 1, expected 0]\n"
        "E501 line too long\n"
        "\n"
        "$ sleep 30\n"
        "[timed out and was killed (expected exit 0)]\n"
        "(no output)"
    )
    assert "pytest" not in text
    assert verify_feedback(outcomes[:1]) == ""
