"""JSON input nested past the bound, through the real CLI (issue 43 item 18): a line of deeply nested brackets on
``reasonix acp`` or ``reasonix -p --input-format stream-json`` gave a RecursionError traceback. Now ACP answers it
with a parse error and goes on with the next request, and ``-p`` says which line is wrong, both without a traceback."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from orchestrator.text.json_nesting import MAX_DEPTH, TooDeep, depth, loads

from .run_support import ROOT, clean_env

DEEP = "[" * 100_000 + "]" * 100_000
PRINT = (sys.executable, "-m", "orchestrator", "-p")


def test_depth_counts_brackets_outside_strings_only() -> None:
    assert depth(b'{"a": [1, {"b": []}]}') == 4 and depth(b"[]") == 1 and depth(b'"[[["') == 0
    assert depth(rb'["\"[[", "\\", [[]]]') == 3  # an escaped quote, then an escaped backslash before a real quote
    assert depth(b"[" * 70) == 70  # unbalanced input is counted all the same (json.loads then says what is wrong)
    assert loads("[" * MAX_DEPTH + "]" * MAX_DEPTH) is not None
    assert loads('{"text": "' + "[" * 500 + '"}') == {"text": "[" * 500}  # brackets in a string do not count
    with pytest.raises(TooDeep, match=f"JSON nested deeper than {MAX_DEPTH} levels"):
        loads("[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1))


def test_acp_answers_a_deeply_nested_line_with_a_parse_error_and_goes_on(tmp_path: Path) -> None:
    initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}
    nested = '{"jsonrpc": "2.0", "id": 9, "method": "initialize", "params": ' + DEEP + "}"
    done = subprocess.run(
        [sys.executable, "-m", "orchestrator", "acp", "--base-url", "http://127.0.0.1:9"],
        input=(nested + "\n" + json.dumps(initialize) + "\n").encode(),
        capture_output=True,
        env=clean_env(tmp_path),
        cwd=ROOT,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0 and b"Traceback" not in done.stderr, done.stderr.decode()[-2000:]
    first, second = (json.loads(line) for line in done.stdout.decode().splitlines())
    assert first["id"] is None and first["error"]["code"] == -32700
    assert first["error"]["message"] == f"not JSON: JSON nested deeper than {MAX_DEPTH} levels; send a flatter message"
    assert second["id"] == 1 and "result" in second


def test_print_refuses_a_deeply_nested_stream_json_line_without_a_traceback(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / ".git").mkdir(parents=True)
    line = '{"type": "user", "message": {"role": "user", "content": ' + DEEP + "}}\n"
    done = subprocess.run(
        [*PRINT, "--input-format", "stream-json", "--workspace", str(ws), "--base-url", "http://127.0.0.1:9"],
        input=line,
        capture_output=True,
        text=True,
        env=clean_env(tmp_path),
        cwd=ROOT,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr[-2000:]
    assert "line 1 of standard input is not a stream-json user message" in done.stderr
    assert f"JSON nested deeper than {MAX_DEPTH} levels" in done.stderr
