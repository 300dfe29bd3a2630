"""Building a run: the client's key rules, model choice, and a prefix that carries nothing run-specific."""

from __future__ import annotations

from pathlib import Path

import pytest

from orchestrator.build import (
    LOCAL_PLACEHOLDER_KEY,
    MissingApiKeyError,
    ModelChoiceError,
    RunOptions,
    build_client,
    build_executor,
    run_dir,
)
from orchestrator.cli.main import main
from orchestrator.config.model import ResolvedConfig, load_config
from tests.support.tasks import task_conversation


def _resolved(ws: Path, env: dict[str, str] | None = None, base_url: str | None = None) -> ResolvedConfig:
    return load_config(
        workspace=ws, flags={"base_url": base_url}, env=env or {"HOME": str(ws)}, user_config_dir=ws / "cfg"
    )


def _project(root: Path) -> Path:
    ws = root / "project"
    ws.mkdir(parents=True)
    (ws / ".git").mkdir()
    (ws / "REASONIX.md").write_text("Run the tests with python -m pytest.\n")
    (ws / "app.py").write_text("print('hi')\n")
    return ws


def test_the_real_api_needs_a_key_and_a_local_server_gets_a_placeholder(tmp_path: Path) -> None:
    with pytest.raises(MissingApiKeyError, match=r"set DEEPSEEK_API_KEY.*or pass --base-url to a local emulator"):
        build_client(_resolved(tmp_path))
    local = build_client(_resolved(tmp_path, base_url="http://127.0.0.1:9"))
    assert local.url == "http://127.0.0.1:9/chat/completions"
    assert local._http.headers["Authorization"] == f"Bearer {LOCAL_PLACEHOLDER_KEY}"
    real = build_client(_resolved(tmp_path, env={"HOME": str(tmp_path), "DEEPSEEK_API_KEY": "sk-real"}))
    assert real._http.headers["Authorization"] == "Bearer sk-real"


def test_model_choice_and_settings_come_from_the_config(tmp_path: Path) -> None:
    ws = _project(tmp_path)
    (ws / "cfg").mkdir()
    (ws / "cfg" / "config.toml").write_text('thinking = false\n[models]\npro = "deepseek-pro-next"\n')
    resolved = _resolved(ws, base_url="http://127.0.0.1:9")
    client = build_client(resolved)
    with pytest.raises(ModelChoiceError, match=r"--model pro: no price for model 'deepseek-pro-next'"):
        build_executor(resolved, ws, client, journal_path=None, options=RunOptions(model="pro"))
    (ws / "cfg" / "config.toml").write_text(
        'thinking = false\n[models]\npro = "deepseek-pro-next"\n[prices.aliases]\n"deepseek-pro-next" = "pro"\n'
    )
    resolved = _resolved(ws, base_url="http://127.0.0.1:9")
    options = RunOptions(model="pro", read_only=True, max_requests=7)
    session = build_executor(resolved, ws, client, journal_path=None, options=options)
    assert session.settings.model == "deepseek-pro-next"
    assert session.settings.thinking is False and session.settings.read_only is True
    assert session.settings.max_requests_per_turn == 7
    assert "Run the tests with python -m pytest." in session.prefix.system.content


def test_two_runs_in_two_checkouts_send_the_same_prefix_bytes(tmp_path: Path) -> None:
    """No run id, clock or absolute path reaches the model: a second run hits the cache from its first request."""
    bodies = []
    journals = []
    for checkout in ("a", "b"):
        ws = _project(tmp_path / checkout)
        run = task_conversation(_resolved(ws, base_url="http://127.0.0.1:9"), ws, memory_config_dir=ws / "cfg")
        bodies.append(run.session.body())
        journals.append(run.journal_path)
        assert run.journal_path.parent.parent == run_dir(ws, "x").parent
        assert run.journal_path.exists()  # the header is written when the session starts
        assert str(ws).encode() not in bodies[-1] and run.run_id.encode() not in bodies[-1]
    assert bodies[0] == bodies[1]
    assert journals[0].parent.name != journals[1].parent.name


def test_command_line_errors_say_what_to_do(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "x", "--workspace", str(tmp_path / "missing"), "--base-url", "http://127.0.0.1:9"]) == 2
    assert "is not a directory; create it or pass --workspace DIR" in capsys.readouterr().err
    assert main(["run", "x", "--workspace", str(tmp_path), "--base-url", "http://127.0.0.1:9", "--model", "gpt"]) == 2
    assert "no price for model 'gpt'" in capsys.readouterr().err
    assert main(["run", "x", "--max-requests", "0"]) == 2
    assert "--max-requests must be at least 1" in capsys.readouterr().err
    assert main(["run", "  ", "--workspace", str(tmp_path)]) == 2
    assert "the task is empty" in capsys.readouterr().err


def test_context_tiers_come_from_the_config_and_only_then_bring_recall(tmp_path: Path) -> None:
    from orchestrator.build import goal_options
    from orchestrator.errors import ConfigError

    ws = _project(tmp_path)
    resolved = _resolved(ws, base_url="http://127.0.0.1:9")
    client = build_client(resolved)
    plain = build_executor(resolved, ws, client, journal_path=None)
    assert plain.tiers is None and "recall" not in plain.registry and b'"recall"' not in plain.body()
    (ws / "reasonix.toml").write_text("[context]\ntiers = true\nsnip_ratio = 0.5\ncompact_ratio = 0.7\n")
    resolved = _resolved(ws, base_url="http://127.0.0.1:9")
    journal = ws / ".reasonix" / "runs" / "r" / "executor.jsonl"
    tiered = build_executor(resolved, ws, client, journal_path=journal)
    assert tiered.settings.tiers and tiered.settings.snip_ratio == 0.5 and tiered.settings.compaction_ratio == 0.7
    assert tiered.tiers is not None and tiered.tiers.archive.folder == journal.parent / "executor.archive"
    assert "recall" in tiered.registry and b'"name":"recall"' in tiered.body()
    goal = goal_options(resolved.config)
    assert goal.context.tiers and goal.context.session_fields()["compaction_ratio"] == 0.7
    (ws / "reasonix.toml").write_text("[context]\ntiers = true\nsnip_ratio = 0.9\ncompact_ratio = 0.7\n")
    with pytest.raises(ConfigError, match="snip_ratio <= compact_ratio <= force_ratio"):
        _resolved(ws, base_url="http://127.0.0.1:9")
