"""``reasonix plans validate|show|diff`` on real files, through ``orchestrator.cli.main.main`` and once as a
subprocess."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from orchestrator.cli.main import main

MINIMAL: dict[str, Any] = {
    "objective": "Add a --json flag",
    "steps": [
        {"id": "S1", "title": "Read the parser", "instructions": "Read cli.py", "depends_on": []},
        {"id": "S2", "title": "Add the flag", "instructions": "Edit cli.py", "depends_on": ["S1"]},
        {"id": "S3", "title": "Document it", "instructions": "Edit README", "depends_on": ["S1"]},
    ],
}


def write(tmp_path: Path, name: str, data: Any) -> Path:
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return path


def with_deps(**deps: list[str]) -> dict[str, Any]:
    steps = [{**s, "depends_on": deps.get(s["id"], s["depends_on"])} for s in MINIMAL["steps"]]
    return {**MINIMAL, "steps": steps}


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["plans", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_validate_a_minimal_plan(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "validate", str(write(tmp_path, "plan.json", MINIMAL)))
    assert code == 0
    assert "valid plan: 3 steps in 2 waves, critical path S1 → S2 (2 steps)" in out


def test_validate_names_the_cycle(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "validate", str(write(tmp_path, "cyclic.json", with_deps(S1=["S3"]))))
    assert code == 1
    assert "dependency cycle: S1 → S3 → S1" in out


def test_validate_names_the_unknown_dependency_and_every_other_problem(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "validate", str(write(tmp_path, "bad.json", with_deps(S2=["S1", "S9"], S3=["S3"]))))
    assert code == 1
    assert "invalid plan (2 problems)" in out
    assert "step S2 depends on S9, which is not a step in this plan" in out
    assert "step S3 depends on itself" in out


def test_validate_reports_unreadable_and_malformed_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "validate", str(tmp_path / "missing.json"))
    assert code == 2 and "cannot read" in err
    code, _, err = run(capsys, "validate", str(write(tmp_path, "broken.json", "{not json")))
    assert code == 1 and "not JSON: line 1 column 2" in err
    code, _, err = run(capsys, "validate", str(write(tmp_path, "shape.json", {"objective": "o", "steps": [{}]})))
    assert code == 1 and "step 1: 'id' field required" in err


def test_validate_lenient_reads_model_slips(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sloppy = write(
        tmp_path, "sloppy.json", {"goal": "g", "steps": [{"id": 1, "title": "a"}, {"id": 2, "title": "b", "deps": [1]}]}
    )
    code, _, err = run(capsys, "validate", str(sloppy))
    assert code == 1 and "not a valid plan document" in err
    code, out, err = run(capsys, "validate", "--lenient", str(sloppy))
    assert code == 0 and "valid plan" in out
    assert "normalized: read 'deps' as 'depends_on' (step 2)" in err


@pytest.mark.parametrize(
    ("fmt", "expected"),
    [
        ("tree", "○ S2 Add the flag"),
        ("table", "Document it"),
        ("md", "## S3: Document it"),
        ("mermaid", "    n0 --> n2"),
        ("prompt", "## S2: Add the flag\nafter: S1\nEdit cli.py\n"),
    ],
)
def test_show_formats(tmp_path: Path, capsys: pytest.CaptureFixture[str], fmt: str, expected: str) -> None:
    code, out, _ = run(capsys, "show", str(write(tmp_path, "plan.json", MINIMAL)), "--format", fmt)
    assert code == 0
    assert expected in out


def test_show_json_is_the_normalized_document(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "show", str(write(tmp_path, "plan.json", MINIMAL)), "--format", "json")
    assert code == 0
    shown = json.loads(out)
    assert shown["revision"] == 1 and shown["steps"][0]["status"] == "pending"
    assert [s["id"] for s in shown["steps"]] == ["S1", "S2", "S3"]


def test_show_warns_about_an_invalid_plan(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "show", str(write(tmp_path, "cyclic.json", with_deps(S1=["S3"]))))
    assert code == 0 and "S3" in out and "warning: the plan is invalid" in err


def test_diff(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    old = write(tmp_path, "old.json", MINIMAL)
    new_data = with_deps(S3=["S2"])
    new_data["steps"] = [*new_data["steps"][1:], {"id": "S4", "title": "Test", "instructions": "pytest"}]
    new = write(tmp_path, "new.json", new_data)
    code, out, _ = run(capsys, "diff", str(old), str(new))
    assert code == 0
    assert out.splitlines() == [
        "+ S4 Test",
        "- S1 Read the parser",
        "~ S3 Document it",
        "    after: S1 → S2",
    ]
    code, out, _ = run(capsys, "diff", str(old), str(new), "--format", "json")
    assert code == 0 and [r["id"] for r in json.loads(out)["added"]] == ["S4"]
    code, out, _ = run(capsys, "diff", str(old), str(old))
    assert (code, out) == (0, "no changes\n")


def test_real_subprocess(tmp_path: Path) -> None:
    script = Path(sys.executable).parent / "reasonix"
    command = [str(script)] if script.exists() else [sys.executable, "-m", "orchestrator"]
    ok = write(tmp_path, "plan.json", MINIMAL)
    cyclic = write(tmp_path, "cyclic.json", with_deps(S1=["S2"]))
    done = subprocess.run([*command, "plans", "validate", str(ok)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    done = subprocess.run([*command, "plans", "validate", str(cyclic)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    assert "dependency cycle: S1 → S2 → S1" in done.stdout
