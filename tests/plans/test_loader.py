"""Reading plan files: every way a file can fail to be a plan is one error, PlanFileError, naming the file and what
to do; never a UnicodeDecodeError or RecursionError."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from plans import Plan, PlanReadError, read_plan
from plans.errors import PlanFileError, PlanStorageError
from plans.limits import MAX_PLAN_BYTES, MAX_PLAN_STEPS
from plans.loader import load_plan_file
from plans.storage import load_plan

GOOD = {"objective": "o", "steps": [{"id": "S1", "title": "t", "instructions": "i"}]}


def _file(tmp_path: Path, data: bytes | str, name: str = "plan.json") -> Path:
    path = tmp_path / name
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return path


def test_a_good_file_loads_strictly_and_leniently(tmp_path: Path) -> None:
    path = _file(tmp_path, json.dumps(GOOD))
    assert load_plan_file(path).plan == Plan.model_validate(GOOD)
    assert load_plan_file(path, lenient=True, check_graph=True).plan == Plan.model_validate(GOOD)
    assert load_plan(path) == Plan.model_validate(GOOD)


@pytest.mark.parametrize("lenient", [False, True])
@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b'{"objective": "caf\xe9"}', "is not a valid plan document: it is not UTF-8 text (byte 18 is b'\\xe9')"),
        (b"[" * 100_000, "nested too deeply"),
        (b'{"steps": [' * 50_000, "nested too deeply"),
    ],
)
def test_bad_bytes_and_deep_nesting_are_named(tmp_path: Path, data: bytes, message: str, lenient: bool) -> None:
    path = _file(tmp_path, data)
    with pytest.raises(PlanFileError, match=r"nested too deeply|not UTF-8") as caught:
        load_plan_file(path, lenient=lenient)
    assert str(path) in str(caught.value) and message in str(caught.value)
    assert isinstance(caught.value, PlanStorageError)  # what callers of plans.storage already catch


def test_a_model_plan_nested_too_deeply_is_a_read_error_for_the_model() -> None:
    with pytest.raises(PlanReadError, match="nested too deeply"):
        read_plan("[" * 100_000)


def test_too_many_steps(tmp_path: Path) -> None:
    steps = [{"id": f"S{i}", "title": "t", "instructions": "i"} for i in range(MAX_PLAN_STEPS + 1)]
    path = _file(tmp_path, json.dumps({"objective": "o", "steps": steps}))
    for lenient in (False, True):
        with pytest.raises(PlanFileError, match="10,001 steps; the most a plan may have is 10,000"):
            load_plan_file(path, lenient=lenient)
    with pytest.raises(PlanReadError, match="the most a plan may have is 10,000"):
        read_plan({"objective": "o", "steps": steps})


def test_too_large_a_file(tmp_path: Path) -> None:
    path = _file(tmp_path, b" " * (MAX_PLAN_BYTES + 1))
    with pytest.raises(PlanFileError, match="over 16,000,000 bytes"):
        load_plan_file(path)


def test_unreadable_and_graph_errors_are_told_apart(tmp_path: Path) -> None:
    with pytest.raises(PlanFileError, match="cannot read plan file") as missing:
        load_plan_file(tmp_path / "missing.json")
    assert missing.value.unreadable
    cyclic = {
        "objective": "o",
        "steps": [
            {"id": "A", "title": "a", "instructions": "a", "depends_on": ["B"]},
            {"id": "B", "title": "b", "instructions": "b", "depends_on": ["A"]},
        ],
    }
    path = _file(tmp_path, json.dumps(cyclic))
    assert load_plan_file(path).plan.ids == ("A", "B")  # a graph check only when asked for
    with pytest.raises(
        PlanFileError, match=r"is not a valid plan \(1 problem\):\n- dependency cycle: A → B → A"
    ) as bad:
        load_plan_file(path, check_graph=True)
    assert bad.value.graph and not bad.value.unreadable


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=200) | st.text(max_size=200).map(str.encode), st.booleans())
@example(b"[" * 5000, False)
@example(b'{"objective": "o", "steps": {"S1": 1}}', True)
@example(b"\xff", True)
def test_any_bytes_load_as_a_plan_or_raise_plan_file_error(data: bytes, lenient: bool) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        path = _file(Path(tmp), data)
        try:
            loaded = load_plan_file(path, lenient=lenient)
        except PlanFileError as exc:
            assert str(exc).startswith(str(path))
        else:
            assert isinstance(loaded.plan, Plan)
