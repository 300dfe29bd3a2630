"""What the tests of the Claude Agent SDKs driving ``reasonix -p`` share: the scripted replies, the workspace, the CLI
wrapper that copies every line ``reasonix`` writes, and the validation of those lines against the JSON Schemas
generated from the npm SDK's TypeScript types (tests/fixtures/claude_sdk_schema/README.md)."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import jsonschema

ROOT = Path(__file__).resolve().parents[2]

SCHEMAS = ROOT / "tests" / "fixtures" / "claude_sdk_schema"
_DEFINITIONS = "#/definitions/"


def _pointers(node: Any) -> Any:
    """The schema with each ``$ref`` to a definition as a JSON Pointer names it: the generator percent-encodes the
    name (a URI fragment), and a name with ``/`` in it (an MCP ``_meta`` key) must then be escaped as ``~1``."""
    if isinstance(node, dict):
        ref = node.get("$ref")
        out = {k: _pointers(v) for k, v in node.items()}
        if isinstance(ref, str) and ref.startswith(_DEFINITIONS):
            name = unquote(ref.removeprefix(_DEFINITIONS))
            out["$ref"] = _DEFINITIONS + name.replace("~", "~0").replace("/", "~1")
        return out
    return [_pointers(v) for v in node] if isinstance(node, list) else node


SCHEMA = {
    name: _pointers(json.loads((SCHEMAS / f"sdk-{name}.schema.json").read_text()))
    for name in ("message", "control-request", "control-response", "control-initialize-response")
}

READ = {"reasoning": "Read it first.", "tool_calls": [{"name": "read_file", "arguments": {"path": "calc.py"}}]}
EDIT = {
    "tool_calls": [{"name": "edit_file", "arguments": {"path": "calc.py", "edits": [{"old": "a - b", "new": "a + b"}]}}]
}
COMMAND = {"tool_calls": [{"name": "bash", "arguments": {"command": "cat calc.py"}}]}
ANSWER = {"content": "add() adds now."}


def sdk_script(*replies: dict[str, Any]) -> dict[str, Any]:
    return {"sessions": [{"key": "executor", "replies": list(replies)}]}


def sdk_workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / ".git").mkdir()
    (ws / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    return ws


def tee_cli(tmp_path: Path, ws: Path, url: str) -> tuple[Path, Path]:
    """An executable that runs ``reasonix`` with the SDK's arguments as they are, its standard output copied to a
    file (to validate every line): the SDK still talks to ``reasonix`` itself, through a pipe."""
    log = tmp_path / "stdout.jsonl"
    cli = tmp_path / "reasonix-cli"
    command = shlex.join([sys.executable, "-m", "orchestrator"])
    where = shlex.join(["--workspace", str(ws), "--base-url", url])
    cli.write_text(f'#!/bin/bash\nset -o pipefail\n{command} "$@" {where} | tee -a {shlex.quote(str(log))}\n')
    cli.chmod(0o755)
    return cli, log


def lines_of(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text().splitlines() if line.strip()]


def validate_lines(lines: list[dict[str, Any]]) -> None:
    """Every line against the SDK's type for it; the answer to ``initialize`` (one per run) against its own."""
    assert lines
    for line in lines:
        kind = line["type"]
        jsonschema.validate(line, SCHEMA[kind.replace("_", "-") if kind.startswith("control_") else "message"])
    initialized = [x["response"]["response"] for x in lines if x["type"] == "control_response" and "pid" in str(x)]
    assert len(initialized) == sum(line.get("subtype") == "init" for line in lines)
    for answer in initialized:
        jsonschema.validate(answer, SCHEMA["control-initialize-response"])
