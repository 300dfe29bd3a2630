"""Bare ``reasonix`` takes ``reasonix code``'s flags (issue 23 item 1), and ``--help`` says how the read-only knobs
differ (item 30)."""

from __future__ import annotations

import pytest

from orchestrator.cli.main import main


def _help(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    with pytest.raises(SystemExit) as exit_:
        main([*argv, "--help"])
    assert exit_.value.code == 0
    return " ".join(capsys.readouterr().out.split())


def test_a_flag_before_any_command_is_a_flag_of_code(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["--base-url", "http://127.0.0.1:9", "--mode", "plan"])  # pytest's stdin is not a terminal
    err = capsys.readouterr().err
    assert code == 2 and "invalid choice" not in err
    assert "reasonix code is interactive and needs a terminal" in err
    assert "Without a command, reasonix is `reasonix code` and takes its flags" in _help(capsys)


def test_help_says_what_each_read_only_knob_does(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "400")  # argparse would break "read-only" at its hyphen
    code = _help(capsys, "code")
    assert "plan (read-only: the same as --permissions read-only)" in code
    assert "read-only (the session refuses every change: the same as `code --mode plan` and `run --read-only`)" in code
    assert "read-only (a command cannot write the workspace either; the file tools are --permissions' business)" in code
    run = _help(capsys, "run")
    assert "refuse every tool call that would change anything (the same as --permissions read-only)" in run
