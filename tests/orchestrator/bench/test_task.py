"""Loading a task and a suite: every problem named with the task, the file and the field."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from orchestrator.bench.task import TaskInvalidError, load_suite, load_task

SUITE = Path(__file__).resolve().parents[2] / "fixtures" / "bench-suite"


def copy(tmp_path: Path, name: str = "calc-mean-empty") -> Path:
    return Path(shutil.copytree(SUITE / name, tmp_path / name))


def edit(folder: Path, old: str, new: str) -> None:
    toml = folder / "task.toml"
    assert old in toml.read_text()
    toml.write_text(toml.read_text().replace(old, new))


def test_the_fixture_suite_loads() -> None:
    tasks = load_suite(SUITE)
    assert [(t.name, t.task_class) for t in tasks] == [
        ("area-two-truths", "integrity"),
        ("calc-mean-empty", "fix"),
        ("greet-shout", "feature"),
    ]
    assert tasks[0].fix_patch is None and tasks[1].fix_patch is not None


@pytest.mark.parametrize(
    ("old", "new", "says"),
    [
        ('class = "fix"', 'class = "bugfix"', "field class: Input should be"),
        ('kind = "files"', 'kind = "sdist"\nrequirement = "attrs"', "field source.sdist.sha256: Field required"),
        ('kind = "files"', 'kind = "files"\nurl = "x"', "field source.files.url: Extra inputs"),
        ("timeout_s = 60", "timeout_s = -1", "field verify.timeout_s"),
        ('name = "calc-mean-empty"', 'name = "other"', "field name: 'other' must equal the folder's name"),
        ('objective = "', 'objective = "', ""),
    ],
)
def test_a_bad_field_is_named_with_its_task(tmp_path: Path, old: str, new: str, says: str) -> None:
    folder = copy(tmp_path)
    edit(folder, old, new)
    if not says:
        assert load_task(folder).name == "calc-mean-empty"
        return
    with pytest.raises(TaskInvalidError) as caught:
        load_task(folder)
    assert "task 'calc-mean-empty'" in str(caught.value)
    assert says in str(caught.value)


def test_an_integrity_task_has_no_fix_and_others_need_one(tmp_path: Path) -> None:
    fix = copy(tmp_path)
    (fix / "fix.patch").unlink()
    with pytest.raises(TaskInvalidError, match=r"fix\.patch is missing: a fix task needs its reference fix"):
        load_task(fix)
    integrity = copy(tmp_path, "area-two-truths")
    (integrity / "fix.patch").write_text("")
    with pytest.raises(TaskInvalidError, match=r"an integrity task has no fix\.patch"):
        load_task(integrity)


def test_a_suite_lists_every_bad_task_and_names_the_unknown_ones(tmp_path: Path) -> None:
    one, two = copy(tmp_path), copy(tmp_path, "greet-shout")
    (one / "verify.sh").unlink()
    edit(two, 'licence = "MIT"', 'licence = ""')
    with pytest.raises(TaskInvalidError) as caught:
        load_suite(tmp_path)
    assert "verify.sh is missing" in str(caught.value) and "field licence" in str(caught.value)
    with pytest.raises(TaskInvalidError, match=r"no task 'nope' in .*; its tasks: calc-mean-empty, greet-shout"):
        load_suite(tmp_path, ("nope",))
    with pytest.raises(TaskInvalidError, match="no task suite at"):
        load_suite(tmp_path / "missing")
