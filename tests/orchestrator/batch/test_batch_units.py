"""The goals file, the batch's ledger and how a goal's own ledger shares it."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from orchestrator.batch.ledger import BatchLedger, LocalShare
from orchestrator.batch.spec import BatchError, load_goals
from orchestrator.policy.budget import Budget, BudgetReachedError, BudgetTracker
from sessions.wire import RequestEstimate


def _estimate(prompt_usd: float = 0.001) -> RequestEstimate:
    return RequestEstimate(
        session="planner", model="deepseek-v4-flash", prompt_tokens=1000, prompt_usd=prompt_usd,
        output_usd_per_token=1e-6, max_output_tokens=1000,
    )  # fmt: skip


def test_goals_come_from_json_lines_or_toml_with_stable_ids_and_absolute_workspaces(tmp_path: Path) -> None:
    (tmp_path / "repo").mkdir()
    jsonl = tmp_path / "goals.jsonl"
    jsonl.write_text(
        '{"workspace": "repo", "objective": "add a test"}\n\n# a comment\n'
        '{"id": "two", "workspace": "https://example.invalid/x.git", "ref": "v1", "objective": "fix",'
        ' "preset": "flash"}\n'
    )
    first, second = load_goals(jsonl)
    assert first.workspace == str(tmp_path / "repo") and first.id.startswith("g-") and not first.remote
    assert load_goals(jsonl)[0].id == first.id  # stable while the line is unchanged
    assert second.id == "two" and second.remote and second.ref == "v1" and second.preset == "flash"
    toml = tmp_path / "goals.toml"
    toml.write_text('[[goals]]\nworkspace = "repo"\nobjective = "add a test"\nbudget_usd = 0.5\n')
    (only,) = load_goals(toml)
    assert only.budget_usd == 0.5 and only.id == first.id


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"workspace": "r", "objective": "x"}\nnot json\n', "goals.jsonl:2 is not a JSON object"),
        ('{"workspace": "r"}\n', "goals.jsonl:1: objective: Field required"),
        ('{"workspace": "r", "objective": "x", "review": "on"}\n', "review: Input should be 'off'"),
        ('{"workspace": "r", "objective": "x", "budget": 1}\n', "budget: Extra inputs are not permitted"),
        (
            '{"id": "a", "workspace": "r", "objective": "x"}\n{"id": "a", "workspace": "s", "objective": "y"}\n',
            "repeated: a",
        ),
        ("\n", "holds no goals"),
    ],
)
def test_a_goals_file_that_cannot_run_is_refused_naming_the_line(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "goals.jsonl"
    path.write_text(text)
    with pytest.raises(BatchError, match=None) as caught:
        load_goals(path)
    assert message in str(caught.value)


def test_the_goal_ledger_asks_the_shared_one_after_its_own_and_charges_it() -> None:
    batch = BatchLedger(0.0025)
    goal = BudgetTracker(Budget(usd=1.0))
    goal.share(LocalShare(batch, "g1"))
    release = goal.admit(_estimate())  # bound 0.002
    assert batch.in_flight_usd == pytest.approx(0.002)
    goal.charge(usd=0.0015, requests=1)
    release()
    assert batch.in_flight_usd == 0 and batch.spent_usd == pytest.approx(0.0015) and batch.requests == 1
    with pytest.raises(BudgetReachedError, match=r"of \$0.0025 batch budget"):
        goal.admit(_estimate())  # 0.0015 + 0.002 > 0.0025
    assert batch.closed
    other = BudgetTracker(Budget())
    other.share(LocalShare(batch, "g2"))
    with pytest.raises(BudgetReachedError):
        other.admit(_estimate(prompt_usd=0.0))  # closed for every goal once reached, however small the request
    tight = BudgetTracker(Budget(requests=1), already_used=None)
    fresh = BatchLedger(None)
    tight.share(LocalShare(fresh, "g3"))
    tight.charge(requests=1)
    with pytest.raises(BudgetReachedError, match="allowed requests"):
        tight.admit(_estimate())  # the goal's own limit refuses first: the batch holds nothing for it
    assert fresh.in_flight_usd == 0


@given(st.lists(st.tuples(st.floats(0.0001, 0.01), st.floats(0, 1), st.booleans()), max_size=40))
def test_what_a_batch_spends_never_passes_its_limit(requests: list[tuple[float, float, bool]]) -> None:
    """Whatever the order of requests (each costing at most its bound) and whether each ends before the next,
    what was spent plus what is still in flight never passes the limit."""
    ledger = BatchLedger(0.02)
    open_: list[tuple[int, float]] = []
    for bound, share, ends_now in requests:
        token, refusal = ledger.reserve(bound, "g")
        if refusal is None:
            open_.append((token, bound * share))
        if ends_now or refusal is not None:
            for t, cost in open_:
                ledger.charge(cost, 1)
                ledger.release(t)
            open_.clear()
        assert ledger.spent_usd + ledger.in_flight_usd <= 0.02 * (1 + 1e-9)
