"""What an executor turn shows besides its verify commands (issue 44, DESIGN §5 "Evidence from the host"): a failed
edit of a declared file never made good, a marker nobody acted on, or no change to the declared writes keeps a step
from being done."""

from __future__ import annotations

from pathlib import Path

from orchestrator.policy.turn_evidence import CallSeen, TurnWatch, failed_edits, files_fingerprint, turn_problems
from sessions.events import ToolFinished, ToolStarted

MISSING = "old text not found in calc.py; no edits were applied"


def test_a_failed_edit_counts_until_a_later_write_of_the_same_path_works() -> None:
    failed = CallSeen("edit_file", "calc.py", True, MISSING)
    assert failed_edits([failed]) == [failed]
    assert failed_edits([failed, CallSeen("write_file", "calc.py", False, "ok")]) == []
    assert failed_edits([failed, CallSeen("edit_file", "other.py", False, "ok")]) == [failed]
    assert failed_edits([CallSeen("bash", "", True, "exit 1")]) == []  # a failed command is the verify's business


def test_only_a_declared_path_counts_when_the_step_declares_writes() -> None:
    outside = CallSeen("write_file", "/home/u/.cache/store/config", True, "refused: outside the workspace")
    inside = CallSeen("edit_file", "./src/calc.py", True, MISSING)
    assert failed_edits([outside, inside], ("src/",)) == [inside]
    assert failed_edits([outside], ("notes.md",)) == []
    assert failed_edits([inside], ("src/*.py",)) == [inside]


def test_each_problem_is_named_for_the_executor() -> None:
    calls = [CallSeen("edit_file", "calc.py", True, MISSING + "\nClosest matches …")]
    problems = turn_problems(calls, "<<<NEEDS_PRO: the edit did not apply>>>", writes=("calc.py",), changed=False)
    assert problems == [
        f"edit_file on calc.py failed ({MISSING}) and no later call made it good",
        "the turn ended with an escalation marker that could not be acted on (the edit did not apply): the step was "
        "not done",
        "none of the files the step writes (calc.py) changed",
    ]
    assert turn_problems([], "Done: add() adds.", writes=("calc.py",), changed=True) == []
    assert turn_problems([], "", writes=(), changed=False) == []  # a read-only step changes nothing by design


def test_the_watch_sees_each_lanes_calls_with_their_paths() -> None:
    watch = TurnWatch()
    watch.begin(("executor", None))
    watch.begin(("executor", "S2"))
    args = {"path": "calc.py", "edits": []}
    watch.observe(ToolStarted(session="executor", call_id="c1", name="edit_file", args_preview="", args=args))
    watch.observe(ToolStarted(session="executor", step_id="S2", call_id="c1", name="bash", args_preview=""))
    watch.observe(ToolFinished(session="executor", call_id="c1", name="edit_file", is_error=True, preview="x", chars=1))
    watch.observe(
        ToolFinished(session="executor", step_id="S2", call_id="c1", name="bash", is_error=False, preview="", chars=0)
    )
    assert watch.calls(("executor", None)) == (CallSeen("edit_file", "calc.py", True, "x"),)
    assert watch.calls(("executor", "S2")) == (CallSeen("bash", "", False, ""),)


def test_a_fingerprint_sees_a_change_of_a_declared_file_or_glob_and_gives_up_on_a_folder(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.py").write_text("a\n")
    assert files_fingerprint(tmp_path, ("src",)) is None  # a folder's change is not judged: never "unchanged"
    before = files_fingerprint(tmp_path, ("src/*.py", "*.md"))
    (tmp_path / "src" / "a.py").write_text("b\n")
    after = files_fingerprint(tmp_path, ("src/*.py", "*.md"))
    assert after is not None and after != before
    assert files_fingerprint(tmp_path, ("src/*.py", "*.md")) == after
    (tmp_path / "NOTES.md").write_text("n\n")
    assert files_fingerprint(tmp_path, ("src/*.py", "*.md")) != after
