"""A long test run keeps its failures and summary and folds the passing progress into one line; the whole output is
kept beside the journal and the model reads it with ``read_file`` (DESIGN §5 "Re-reads"). Real pytest and unittest
runs through the bash tool, in a session against the emulator."""

from __future__ import annotations

import itertools
import re
import sys
from pathlib import Path

from scenarios.emulator import ReplySpec, Script, SessionSpec, ToolCallSpec
from sessions.tools.files.read_file import ReadFileArgs, ReadFileTool
from sessions.wire.messages import ToolMessage

from .session_support import BodyRecorder, emulated, make_session

PASSING = 200
GENERATED = "".join(f"def test_passes_{i}():\n    assert {i} == {i}\n\n\n" for i in range(PASSING)) + (
    "def test_the_one_that_fails():\n    numbers = [1, 2, 3]\n    assert sum(numbers) == 7, 'the sum is off'\n"
)
UNITTESTS = (
    "import unittest\n\n\nclass T(unittest.TestCase):\n"
    + "".join(f"    def test_ok_{i}(self):\n        self.assertEqual({i}, {i})\n\n" for i in range(PASSING))
    + "    def test_bad(self):\n        self.assertEqual(sum([1, 2, 3]), 7)\n"
)


def _script(command: str) -> Script:
    replies = (
        ReplySpec(tool_calls=(ToolCallSpec(name="bash", arguments={"command": command}),)),
        ReplySpec(content="One test fails."),
    )
    return Script(sessions=(SessionSpec(key="executor", replies=replies),))


async def _run(tmp_path: Path, name: str, text: str, command: str) -> tuple[str, str, list[bytes]]:
    """The bash result the model got, the text read_file returns for the path it names, the request bodies."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / name).write_text(text)
    recorder = BodyRecorder()
    async with emulated(_script(command)) as (_emu, client):
        session = make_session(client, ws, journal=tmp_path / "run" / "executor.jsonl", recorder=recorder)
        await session.send("Run the tests.")
    result = next(m.content for m in session.log.messages if isinstance(m, ToolMessage))
    path = re.search(r'read_file path="(~outputs/[^"]+)"', result)
    assert path is not None, result
    args = ReadFileArgs(path=path.group(1), start_line=1, end_line=400)
    whole = await ReadFileTool().run(args, session.tool_context)  # what the model's read_file returns
    return result, whole.content, recorder.bodies


def _extends(bodies: list[bytes]) -> None:
    for prev, new in itertools.pairwise(bodies):
        assert new.startswith(prev[:-2] + b","), "an earlier byte changed"


async def test_a_pytest_run_with_one_failure_among_200_keeps_the_failure_and_folds_the_rest(tmp_path: Path) -> None:
    command = f"{sys.executable} -m pytest -v -p no:cacheprovider -p no:randomly test_generated.py"
    result, whole, bodies = await _run(tmp_path, "test_generated.py", GENERATED, command)
    lines = result.splitlines()
    folded = [line for line in lines if "lines of test progress folded" in line]
    assert folded == [f"[{PASSING} lines of test progress folded ({PASSING} passed); failures and the summary "
                      "follow in full]"]  # fmt: skip
    assert not any("PASSED" in line for line in lines)
    failure = result[result.index("= FAILURES =") :]
    assert "def test_the_one_that_fails():" in failure and "AssertionError: the sum is off" in failure
    assert "FAILED test_generated.py::test_the_one_that_fails" in failure
    assert re.search(rf"=+ 1 failed, {PASSING} passed in [\d.]+s =+", failure)
    assert len(result) < 4_000
    assert whole.count("PASSED") == PASSING and "test_passes_199 PASSED" in whole
    _extends(bodies)


async def test_a_unittest_run_is_folded_the_same_way(tmp_path: Path) -> None:
    result, whole, _bodies = await _run(
        tmp_path, "gen_tests.py", UNITTESTS, f"{sys.executable} -m unittest -v gen_tests"
    )
    assert f"lines of test progress folded ({PASSING} passed)" in result and " ... ok" not in result
    assert "FAIL: test_bad (gen_tests.T" in result and "AssertionError: 6 != 7" in result
    assert f"Ran {PASSING + 1} tests in " in result and "FAILED (failures=1)" in result
    assert whole.count(" ... ok") == PASSING
