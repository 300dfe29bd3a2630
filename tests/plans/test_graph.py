"""Validation names each problem; scheduling on random DAGs is checked against independent brute-force answers."""

from __future__ import annotations

import functools
import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from plans import IssueCode, Plan, PlanGraph, PlanValidationError, Step, StepStatus, find_issues, validate
from plans.graph import paths_overlap

from .strategies import STATUSES, dag_plans, digraph_plans, examples, step


def plan_of(*steps: Step) -> Plan:
    return Plan(objective="test", steps=steps)


def deps_of(plan: Plan) -> dict[str, tuple[str, ...]]:
    return {s.id: s.depends_on for s in plan.steps}


def reaches(plan: Plan, a: str, b: str) -> bool:
    """Whether a depends on b through depends_on links (plain DFS)."""
    deps, seen, stack = deps_of(plan), set(), list(deps_of(plan)[a])
    while stack:
        x = stack.pop()
        if x == b:
            return True
        if x not in seen:
            seen.add(x)
            stack.extend(deps[x])
    return False


def kahn_acyclic(plan: Plan) -> bool:
    deps = {sid: set(d) for sid, d in deps_of(plan).items()}
    done: set[str] = set()
    progress = True
    while progress:
        progress = False
        for sid, d in deps.items():
            if sid not in done and d <= done:
                done.add(sid)
                progress = True
    return len(done) == len(deps)


# ------------------------------------------------------------------------------------------------ named problems


def test_minimal_plan_is_valid() -> None:
    validate(plan_of(step("S1", []), step("S2", ["S1"])))


def test_cycle_is_named_as_a_path() -> None:
    plan = plan_of(step("S1", []), step("S2", ["S1", "S4"]), step("S3", ["S1"]), step("S4", ["S2"]))
    with pytest.raises(PlanValidationError) as info:
        validate(plan)
    (issue,) = info.value.issues
    assert issue.code is IssueCode.CYCLE
    assert issue.steps == ("S2", "S4", "S2")
    assert "S2 → S4 → S2" in str(info.value)


def test_unknown_duplicate_self_and_empty_are_each_named() -> None:
    plan = plan_of(step("S1", ["S1"]), step("S2", ["S7"]), step("S2", []))
    issues = find_issues(plan)
    codes = {i.code: i for i in issues}
    assert set(codes) == {IssueCode.SELF_DEPENDENCY, IssueCode.UNKNOWN_DEPENDENCY, IssueCode.DUPLICATE_ID}
    assert codes[IssueCode.UNKNOWN_DEPENDENCY].steps == ("S2", "S7")
    assert "S7" in codes[IssueCode.UNKNOWN_DEPENDENCY].message
    assert "positions 2, 3" in codes[IssueCode.DUPLICATE_ID].message
    assert "S1 depends on itself" in codes[IssueCode.SELF_DEPENDENCY].message
    empty = find_issues(Plan(objective="ship it", steps=()))
    assert [i.code for i in empty] == [IssueCode.NO_STEPS]
    assert "ship it" in empty[0].message


def test_write_conflict_only_when_neither_depends_on_the_other() -> None:
    a, b = step("A", [], writes=["src/app.py"]), step("B", [], writes=["./src/app.py"])
    (issue,) = find_issues(plan_of(a, b))
    assert issue.code is IssueCode.WRITE_CONFLICT and issue.steps == ("A", "B")
    assert "src/app.py" in issue.message
    ordered = step("B", ["C"], writes=["src/app.py"]), step("C", ["A"])
    assert find_issues(plan_of(a, *ordered)) == []  # B depends on A through C
    glob = step("G", [], writes=["src/*.py"])
    assert [i.steps for i in find_issues(plan_of(a, glob))] == [("A", "G")]
    directory = step("D", [], writes=["src/"])
    assert [i.steps for i in find_issues(plan_of(a, directory))] == [("A", "D")]
    assert find_issues(plan_of(a, step("E", [], writes=["docs/app.py"]))) == []


def test_paths_overlap() -> None:
    assert paths_overlap("a/b.py", "a//b.py")
    assert paths_overlap("a", "a/b.py")
    assert paths_overlap("a/**/*.py", "a/x/y.py")
    assert not paths_overlap("a/b.py", "a/bc.py")
    assert not paths_overlap("ab", "a/b")


def test_a_glob_overlaps_the_directories_it_lies_in_and_globs_that_share_a_file() -> None:
    """Each of these pairs names one file (src/x.py) twice; a miss lets two steps write it at once."""
    assert paths_overlap("src/", "src/*.py")
    assert paths_overlap("src", "src/*.py")
    assert paths_overlap("src/b/", "src/*.py")  # * crosses /
    assert paths_overlap("src/*", "*.py")
    assert paths_overlap("*_test.py", "src/*")
    assert paths_overlap("src", "src/")
    assert not paths_overlap("src/a.md", "src/*.py")
    assert not paths_overlap("src/*.py", "src/*.md")
    assert not paths_overlap("src/a*.py", "src/b*.py")
    assert not paths_overlap("src/*.py", "tests/*.py")


# ------------------------------------------------------------------------------------------------ properties


@settings(max_examples=examples(150), deadline=None)
@given(dag_plans())
def test_orders_respect_dependencies(plan: Plan) -> None:
    graph = PlanGraph(plan)
    order = graph.order()
    assert sorted(order) == sorted(plan.ids)
    position = {sid: i for i, sid in enumerate(order)}
    wave = {sid: i for i, gen in enumerate(graph.generations()) for sid in gen}
    assert sorted(wave) == sorted(plan.ids)
    for s in plan.steps:
        for dep in s.depends_on:
            assert position[dep] < position[s.id]
            assert wave[dep] < wave[s.id]


@settings(max_examples=examples(150), deadline=None)
@given(dag_plans(), st.data())
def test_ready_set_is_exactly_the_pending_steps_with_finished_dependencies(plan: Plan, data: st.DataObject) -> None:
    statuses = {sid: data.draw(st.sampled_from(STATUSES)) for sid in plan.ids}
    ready = PlanGraph(plan).ready(statuses)
    finished = {StepStatus.DONE, StepStatus.SKIPPED}
    for sid in ready:
        assert statuses[sid] is StepStatus.PENDING
        assert all(statuses[d] in finished for d in plan.step(sid).depends_on)
    expected = {
        s.id
        for s in plan.steps
        if statuses[s.id] is StepStatus.PENDING and all(statuses[d] in finished for d in s.depends_on)
    }
    assert set(ready) == expected
    # the steps' own statuses are used when none are given
    assert PlanGraph(plan.with_statuses(statuses)).ready() == ready


@settings(max_examples=examples(150), deadline=None)
@given(dag_plans())
def test_critical_path_is_a_longest_chain(plan: Plan) -> None:
    deps = deps_of(plan)

    @functools.cache
    def longest_ending_at(sid: str) -> int:
        return 1 + max((longest_ending_at(d) for d in deps[sid]), default=0)

    path = PlanGraph(plan).critical_path()
    assert len(path) == max(longest_ending_at(sid) for sid in plan.ids)
    for earlier, later in itertools.pairwise(path):
        assert earlier in deps[later]


@settings(max_examples=examples(100), deadline=None)
@given(dag_plans(max_steps=10))
def test_parallel_pairs_are_exactly_the_unrelated_pairs(plan: Plan) -> None:
    graph = PlanGraph(plan)
    ids = plan.ids
    expected = {
        (a, b) for i, a in enumerate(ids) for b in ids[i + 1 :] if not reaches(plan, a, b) and not reaches(plan, b, a)
    }
    assert set(graph.parallel_pairs()) == expected
    for a in ids:
        for b in ids:
            assert graph.may_run_in_parallel(a, b) == ((a, b) in expected or (b, a) in expected)


@settings(max_examples=examples(150), deadline=None)
@given(digraph_plans(force_cycle=True))
def test_cyclic_graphs_are_rejected_with_a_real_cycle(plan: Plan) -> None:
    with pytest.raises(PlanValidationError):
        PlanGraph(plan)
    cycles = [i for i in find_issues(plan) if i.code is IssueCode.CYCLE]
    assert cycles
    deps = deps_of(plan)
    for issue in cycles:
        path = issue.steps
        assert len(path) >= 3 and path[0] == path[-1]
        assert len(set(path[:-1])) == len(path) - 1  # a simple cycle
        for a, b in itertools.pairwise(path):
            assert b in deps[a], f"{a} does not depend on {b}"
        assert " → ".join(path) in issue.message


@settings(max_examples=examples(150), deadline=None)
@given(digraph_plans())
def test_a_cycle_is_reported_exactly_when_one_exists(plan: Plan) -> None:
    has_cycle_issue = any(i.code is IssueCode.CYCLE for i in find_issues(plan))
    assert has_cycle_issue == (not kahn_acyclic(plan))


@settings(max_examples=examples(100), deadline=None)
@given(dag_plans(max_steps=8), st.data())
def test_write_conflicts_are_exactly_the_unordered_pairs_sharing_a_file(plan: Plan, data: st.DataObject) -> None:
    files = {sid: set(data.draw(st.lists(st.sampled_from(["a.py", "b.py", "c.py"]), max_size=2))) for sid in plan.ids}
    plan = plan.model_copy(
        update={"steps": tuple(s.model_copy(update={"writes": tuple(sorted(files[s.id]))}) for s in plan.steps)}
    )
    ids = plan.ids
    expected = {
        frozenset((a, b))
        for i, a in enumerate(ids)
        for b in ids[i + 1 :]
        if files[a] & files[b] and not reaches(plan, a, b) and not reaches(plan, b, a)
    }
    found = {frozenset(i.steps) for i in find_issues(plan) if i.code is IssueCode.WRITE_CONFLICT}
    assert found == expected


@settings(max_examples=examples(150), deadline=None)
@given(dag_plans(statuses=True), st.data())
def test_a_schedule_agrees_with_ready_after_every_change(plan: Plan, data: st.DataObject) -> None:
    """The incremental schedule, after any sequence of status changes, is what ``ready`` computes from scratch."""
    graph = PlanGraph(plan)
    schedule = graph.schedule()
    statuses = {s.id: s.status for s in plan.steps}
    assert schedule.ready() == graph.ready(statuses)
    for _ in range(data.draw(st.integers(0, 30))):
        sid = data.draw(st.sampled_from(plan.ids))
        statuses[sid] = data.draw(st.sampled_from(STATUSES))
        schedule.set_status(sid, statuses[sid])
        expected = graph.ready(statuses)
        assert schedule.ready() == expected
        assert schedule.next() == (expected[0] if expected else None)


@settings(max_examples=examples(100), deadline=None)
@given(dag_plans())
def test_following_a_schedule_runs_every_step_once_in_a_topological_order(plan: Plan) -> None:
    schedule = PlanGraph(plan).schedule()
    ran: list[str] = []
    while (sid := schedule.next()) is not None:
        assert all(dep in ran for dep in plan.step(sid).depends_on)
        schedule.set_status(sid, StepStatus.DONE)
        ran.append(sid)
    assert sorted(ran) == sorted(plan.ids)


def test_a_10000_step_chain_is_scheduled_to_the_end() -> None:
    """The largest plan allowed; rebuilding the graph per step made this take minutes (bench/plans_scale_bench.py)."""
    plan = Plan(objective="chain", steps=tuple(step(f"S{i}", [f"S{i - 1}"] if i else []) for i in range(10_000)))
    graph = PlanGraph(plan)
    assert graph.depends_on("S9999", "S0") and not graph.depends_on("S0", "S9999")
    schedule = graph.schedule()
    count = 0
    while (sid := schedule.next()) is not None:
        assert sid == f"S{count}"
        schedule.set_status(sid, StepStatus.DONE)
        count += 1
    assert count == 10_000


WRITES = [
    "src/a.py",
    "src/b/c.py",
    "src/b/",
    "src",
    "src/*.py",
    "src/b/*",
    "docs/x.md",
    "d*",
    "src/b/[cd].py",
    "?rc/a.py",
    "src/",
    "*.py",
    "src/b/x*",
]


@settings(max_examples=examples(200), deadline=None)
@given(dag_plans(max_steps=8), st.data())
def test_write_conflicts_with_globs_and_directories_are_exactly_the_overlapping_unordered_pairs(
    plan: Plan, data: st.DataObject
) -> None:
    """Globs are compared only with the paths under their literal prefix; that must miss no overlap."""
    files = {sid: data.draw(st.lists(st.sampled_from(WRITES), max_size=2, unique=True)) for sid in plan.ids}
    plan = plan.model_copy(
        update={"steps": tuple(s.model_copy(update={"writes": tuple(files[s.id])}) for s in plan.steps)}
    )
    ids = plan.ids
    expected = {
        frozenset((a, b))
        for i, a in enumerate(ids)
        for b in ids[i + 1 :]
        if any(paths_overlap(x, y) for x in files[a] for y in files[b])
        and not reaches(plan, a, b)
        and not reaches(plan, b, a)
    }
    found = {frozenset(i.steps) for i in find_issues(plan) if i.code is IssueCode.WRITE_CONFLICT}
    assert found == expected
