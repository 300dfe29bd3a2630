"""``reasonix run`` end to end against a real ``reasonix emulate`` subprocess: real tools, files and processes."""

from __future__ import annotations

import signal
from pathlib import Path
from typing import Any

import pytest

from sessions.journal.jsonl import read_journal
from sessions.wire.messages import AssistantMessage

from .run_support import clean_env, emulator_process, emulator_stats, json_lines, reasonix, start_reasonix

FINAL = "Fixed add() in calc.py: it subtracted. python test_calc.py passes."


def _workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / ".git").mkdir()  # ends the upward search for standing memory here
    (ws / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (ws / "test_calc.py").write_text("from calc import add\n\nassert add(2, 3) == 5, add(2, 3)\nprint('1 passed')\n")
    return ws


def _fix_script(extra_replies: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """The model reads calc.py, fixes it with edit_file, runs the test with bash, and answers."""
    replies: list[dict[str, Any]] = [
        {
            "reasoning": "I should read calc.py first.",
            "tool_calls": [{"name": "read_file", "arguments": {"path": "calc.py"}}],
        },
        {
            "reasoning": "add() subtracts; replace the operator.",
            "tool_calls": [
                {
                    "name": "edit_file",
                    "arguments": {"path": "calc.py", "edits": [{"old": "return a - b", "new": "return a + b"}]},
                }
            ],
        },
        # python3 from PATH, not sys.executable: a clone under /tmp is hidden by the sandbox's private /tmp
        {"tool_calls": [{"name": "bash", "arguments": {"command": "python3 test_calc.py"}}]},
        {"reasoning": "The test printed 1 passed.", "content": FINAL},
    ]
    return {"sessions": [{"key": "executor", "replies": replies + (extra_replies or [])}]}


@pytest.mark.bwrap
def test_run_reads_edits_and_tests_a_file_against_the_emulator(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    env = clean_env(tmp_path)
    second_answer = {"content": "calc.py is already correct; nothing to change."}
    with emulator_process(_fix_script([second_answer]), tmp_path, env) as url:
        proc = reasonix("run", "Fix add() in calc.py", "--workspace", str(ws), "--base-url", url, "--json", env=env)
        assert proc.returncode == 0, proc.stderr
        stats = emulator_stats(url)["sessions"]["executor"]
        again = reasonix("run", "Fix add() in calc.py", "--workspace", str(ws), "--base-url", url, "--json", env=env)
        assert again.returncode == 0, again.stderr

    assert (ws / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"
    events = json_lines(proc.stdout)
    summary = events[-1]
    assert summary["kind"] == "summary"
    assert summary["status"] == "done"
    assert summary["text"] == FINAL
    assert summary["requests"] == 4 == stats["requests"]
    # Summed over every request as the server reported them.
    assert summary["prompt_tokens"] == stats["prompt_tokens"]
    assert summary["prompt_cache_hit_tokens"] == stats["hit_tokens"]
    assert summary["prompt_cache_miss_tokens"] == stats["miss_tokens"]
    assert summary["completion_tokens"] == stats["completion_tokens"]
    usage = [e for e in events if e.get("kind") == "usage"]
    assert [e["usage"]["prompt_tokens"] for e in usage] and len(usage) == 4
    assert summary["cost_usd"] == pytest.approx(sum(e["cost_usd"] for e in usage)) and summary["cost_usd"] > 0
    assert summary["cache_hit_ratio"] == pytest.approx(stats["hit_tokens"] / stats["prompt_tokens"])

    finished = [e for e in events if e.get("kind") == "tool_finished"]
    assert [e["name"] for e in finished] == ["read_file", "edit_file", "bash"]
    assert not any(e["is_error"] for e in finished)
    assert "1 passed" in finished[2]["preview"]
    streamed = [e["event"] for e in events if e.get("kind") == "stream"]
    assert "".join(e["text"] for e in streamed if e["kind"] == "content_delta") == FINAL

    # The journal is under .reasonix/runs/<run_id>/ and holds the whole conversation.
    journal = Path(summary["journal"])
    assert journal.parent.parent == ws / ".reasonix" / "runs" and journal.name == "executor.jsonl"
    assert len(read_journal(journal).messages) == 8  # user, 3 × (assistant + tool), final assistant

    # A second run in the same workspace sends the same prefix: its very first request hits the cache.
    second = json_lines(again.stdout)
    first_cache = next(e["diagnostics"] for e in second if e.get("kind") == "cache")
    assert first_cache["prompt_tokens"] > 1000
    assert first_cache["hit_tokens"] == first_cache["prompt_tokens"] // 128 * 128
    assert second[-1]["run_id"] != summary["run_id"]


@pytest.mark.bwrap
def test_run_on_the_terminal_shows_tools_and_the_cost_footer(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    env = clean_env(tmp_path)
    with emulator_process(_fix_script(), tmp_path, env) as url:
        proc = reasonix("run", "Fix add() in calc.py", "--workspace", str(ws), "--base-url", url, env=env)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("executor on deepseek-v4-flash · ") and " · journal " in lines[0]
    assert "▸ read_file calc.py · ok" in lines
    assert any(line.startswith("▸ edit_file ") and line.endswith(" · ok") for line in lines)
    assert any(line.startswith("▸ bash ") and line.endswith(" · ok") for line in lines)
    assert "I should read calc.py first." in lines
    assert FINAL in lines
    footers = [line for line in lines if line.startswith("turn $")]
    assert len(footers) == 4 and all(" · session $" in f and " · cache " in f for f in footers)
    assert lines[-1].startswith("done · 4 requests · session $")


def test_run_without_a_key_says_what_to_do(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    proc = reasonix("run", "anything", "--workspace", str(ws), env=clean_env(tmp_path))
    assert proc.returncode == 2
    assert "set DEEPSEEK_API_KEY" in proc.stderr and "--base-url" in proc.stderr
    assert not (ws / ".reasonix").exists()


def test_run_stops_at_max_requests_with_advice(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    env = clean_env(tmp_path)
    with emulator_process(_fix_script(), tmp_path, env) as url:
        proc = reasonix(
            "run", "Fix add()", "--workspace", str(ws), "--base-url", url, "--json", "--max-requests", "2", env=env
        )
    assert proc.returncode == 1
    summary = json_lines(proc.stdout)[-1]
    assert summary["status"] == "request_limit" and summary["requests"] == 2
    assert "--max-requests" in proc.stderr


def test_read_only_run_refuses_the_edit_and_leaves_the_file(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    env = clean_env(tmp_path)
    with emulator_process(_fix_script(), tmp_path, env) as url:
        proc = reasonix("run", "Fix add()", "--workspace", str(ws), "--base-url", url, "--json", "--read-only", env=env)
    assert proc.returncode == 0, proc.stderr
    assert (ws / "calc.py").read_text() == "def add(a, b):\n    return a - b\n"
    finished = {e["name"]: e for e in json_lines(proc.stdout) if e.get("kind") == "tool_finished"}
    assert not finished["read_file"]["is_error"]
    assert finished["edit_file"]["is_error"] and finished["bash"]["is_error"]
    assert "read-only" in finished["edit_file"]["preview"]


@pytest.mark.bwrap
def test_ctrl_c_cancels_cleanly_and_the_run_stays_journaled(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    env = clean_env(tmp_path)
    script = {
        "sessions": [
            {"key": "executor", "replies": [{"tool_calls": [{"name": "bash", "arguments": {"command": "sleep 600"}}]}]}
        ]
    }
    with emulator_process(script, tmp_path, env) as url:
        proc = start_reasonix("run", "wait", "--workspace", str(ws), "--base-url", url, "--json", env=env)
        try:
            assert proc.stdout is not None
            for line in proc.stdout:
                if '"kind": "tool_started"' in line:
                    break
            proc.send_signal(signal.SIGINT)
            out, err = proc.communicate(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    assert proc.returncode == 130, err
    assert "interrupted; the run is journaled in" in err
    summary = json_lines(out)[-1]
    # The message says how to go on with it: `reasonix -p --resume` takes the run's id.
    assert f"continue it with `reasonix -p 'go on' --resume {summary['run_id']}`" in err, err
    assert summary["status"] == "cancelled" and summary["requests"] == 1
    state = read_journal(Path(summary["journal"]))
    last = state.messages[-1][0]
    assert isinstance(last, AssistantMessage) and last.tool_calls[0].function.name == "bash"
