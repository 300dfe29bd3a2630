"""Documented details of plans/graph.py that mutation testing (bench/mutation_score.py) found no test pinning: the
"earlier in the document first" tie-break, a glob's literal prefix up to its first wildcard, the status overrides of
``ready`` and ``schedule``, and the words of each issue."""

from __future__ import annotations

from plans import IssueCode, Plan, PlanGraph, StepStatus, find_issues
from plans.graph import normalize_path, paths_overlap

from .strategies import step


def plan_of(*steps: object) -> Plan:
    return Plan(objective="test", steps=steps)  # type: ignore[arg-type]


def test_ties_go_to_the_step_earlier_in_the_document_not_the_smaller_id() -> None:
    plan = plan_of(step("S9", []), step("S1", []), step("S5", ["S9"]), step("S3", ["S9"]))
    graph = PlanGraph(plan)
    assert graph.order() == ("S9", "S1", "S5", "S3")
    assert graph.generations() == (("S9", "S1"), ("S5", "S3"))
    assert graph.ready() == ("S9", "S1")
    schedule = graph.schedule()
    assert schedule.next() == "S9"
    assert schedule.ready() == ("S9", "S1")
    schedule.set_status("S9", StepStatus.DONE)
    schedule.set_status("S1", StepStatus.RUNNING)
    assert schedule.ready() == ("S5", "S3")
    assert schedule.next() == "S5"
    assert graph.parallel_pairs() == (("S9", "S1"), ("S1", "S5"), ("S1", "S3"), ("S5", "S3"))


def test_a_glob_is_compared_from_its_first_wildcard() -> None:
    """``src/*/*.py`` names ``src/a/b.py``: a prefix cut at the last wildcard (``src/*/``) would miss it."""
    glob, literal = step("G", [], writes=["src/*/*.py"]), step("L", [], writes=["src/a/b.py"])
    assert [(i.code, i.steps) for i in find_issues(plan_of(glob, literal))] == [(IssueCode.WRITE_CONFLICT, ("G", "L"))]
    assert [i.steps for i in find_issues(plan_of(literal, step("Q", [], writes=["src/?/b.py"])))] == [("L", "Q")]
    assert [i.steps for i in find_issues(plan_of(glob, step("D", [], writes=["src/a/"])))] == [("G", "D")]
    assert [i.steps for i in find_issues(plan_of(glob, step("D", [], writes=["src"])))] == [("G", "D")]
    assert [i.steps for i in find_issues(plan_of(glob, step("H", [], writes=["src/a*/b.py"])))] == [("G", "H")]
    assert paths_overlap("src/*/*.py", "src/a/b.py")
    assert paths_overlap("src/[ab]/*.py", "src/a/")
    assert not paths_overlap("src/*/*.py", "docs/a/b.py")
    assert find_issues(plan_of(glob, step("M", [], writes=["src/a/b.md"]))) == []


def test_ready_and_schedule_take_statuses_over_the_plans_own() -> None:
    plan = plan_of(step("A", []), step("B", ["A"]), step("C", ["B"]), step("D", [], status="done"))
    graph = PlanGraph(plan)
    overrides = {"A": StepStatus.DONE, "D": StepStatus.PENDING}
    assert graph.ready(overrides) == ("B", "D")
    schedule = graph.schedule(overrides)
    assert schedule.ready() == ("B", "D")
    assert schedule.status("A") is StepStatus.DONE and schedule.status("C") is StepStatus.PENDING
    assert graph.schedule().ready() == ("A",)
    skipped = graph.schedule({"A": StepStatus.SKIPPED, "B": StepStatus.FAILED})
    assert skipped.ready() == ()
    assert skipped.next() is None
    skipped.set_status("B", StepStatus.PENDING)
    assert skipped.ready() == ("B",)
    skipped.set_status("B", StepStatus.SKIPPED)
    assert skipped.ready() == ("C",)
    skipped.set_status("A", StepStatus.PENDING)  # undone: B's dependency is open again, but B stays skipped
    assert skipped.ready() == ("A", "C")


def test_each_issue_says_what_is_wrong_and_what_to_do() -> None:
    (empty,) = find_issues(Plan(objective="ship it", steps=()))
    assert empty.message == "the plan has no steps for the objective 'ship it'; add steps"
    issues = find_issues(plan_of(step("A", ["A", "Z", "Z"]), step("A", []), step("B", ["C"]), step("C", ["B"])))
    assert [(i.code, i.steps, i.message) for i in issues] == [
        (
            IssueCode.DUPLICATE_ID,
            ("A",),
            "step id A is used by 2 steps (positions 1, 2); give each step its own id",
        ),
        (IssueCode.SELF_DEPENDENCY, ("A",), "step A depends on itself; remove A from its depends_on"),
        (
            IssueCode.UNKNOWN_DEPENDENCY,
            ("A", "Z"),
            "step A depends on Z, which is not a step in this plan; use one of the plan's step ids or drop it",
        ),
        (
            IssueCode.CYCLE,
            ("B", "C", "B"),
            "dependency cycle: B → C → B (each step depends on the next); remove one of these dependencies",
        ),
    ]
    (conflict,) = find_issues(plan_of(step("A", [], writes=["x.py"]), step("B", [], writes=["x.py"])))
    assert conflict.message == (
        "steps A and B both write x.py but neither depends on the other; "
        "make one depend on the other or split the file between them"
    )


def test_normalized_paths() -> None:
    assert normalize_path(" ./src//a.py ") == "src/a.py"
    assert normalize_path("src\\b\\") == "src/b/"
    assert normalize_path("./") == ""
    assert normalize_path(".") == ""
    assert normalize_path("") == ""
    assert normalize_path("a/../b/") == "b/"


def test_depends_on_is_transitive_and_one_way() -> None:
    graph = PlanGraph(plan_of(step("A", []), step("B", ["A"]), step("C", ["B"]), step("D", [])))
    assert graph.depends_on("C", "A") and graph.depends_on("B", "A")
    assert not graph.depends_on("A", "C") and not graph.depends_on("C", "D")
    assert graph.may_run_in_parallel("C", "D") and not graph.may_run_in_parallel("A", "C")
    assert not graph.may_run_in_parallel("D", "D")
    assert graph.critical_path() == ("A", "B", "C")


def test_of_equally_long_chains_the_critical_path_is_the_one_that_ends_first_in_execution_order() -> None:
    """A → D and B → C are both two steps long: C comes before D in ``order()``, so B → C is the critical path."""
    graph = PlanGraph(plan_of(step("A", []), step("B", []), step("C", ["B"]), step("D", ["A"])))
    assert graph.order() == ("A", "B", "C", "D")
    assert graph.critical_path() == ("B", "C")
    swapped = PlanGraph(plan_of(step("A", []), step("B", []), step("D", ["A"]), step("C", ["B"])))
    assert swapped.critical_path() == ("A", "D")


def test_overlap_of_directories_and_files_either_way_round() -> None:
    assert paths_overlap("src/", "src/a.py") and paths_overlap("src/a.py", "src/")
    assert paths_overlap("src/a.py", "src")
    assert not paths_overlap("srcX/", "src/a.py") and not paths_overlap("src/a.py", "srcX/")
    assert paths_overlap("src/X", "src/X/a.py")  # a plain path with an X in it is no glob


def test_an_empty_path_overlaps_nothing_not_even_a_bare_star() -> None:
    assert not paths_overlap("", "*")
    assert not paths_overlap("./", "src/a.py")
    assert not paths_overlap("src/a.py", "")


def test_a_globs_literal_prefix_and_suffix_are_cut_only_at_wildcards() -> None:
    assert not paths_overlap("src/X*.py", "src/Y/")  # prefix src/X: the directory src/Y/ holds none of its files
    assert not paths_overlap("src/*X.py", "src/*Y.py")  # suffixes X.py and Y.py: no file ends with both
    assert paths_overlap("src/*X.py", "src/*.py")
    assert paths_overlap("srcX/*.py", "srcX")  # inside the directory srcX
    assert not paths_overlap("src/?", "src/aX")  # ? is one character
    assert not paths_overlap("src/*", "/src/a.py")  # an absolute path is not under the relative src/


def test_a_cycle_is_reported_from_its_own_earliest_step() -> None:
    """S, Y, X form one component, but the cycle found is Y → X → Y: it starts at Y, the earlier of its two steps."""
    issues = find_issues(plan_of(step("S", ["X"]), step("Y", ["X", "S"]), step("X", ["Y"])))
    assert [(i.code, i.steps) for i in issues] == [(IssueCode.CYCLE, ("Y", "X", "Y"))]


def test_cycles_come_in_document_order_each_within_its_own_component() -> None:
    later_depends = plan_of(step("A", ["B"]), step("B", ["A"]), step("C", ["D", "A"]), step("D", ["C"]))
    earlier_depends = plan_of(step("A", ["C", "B"]), step("B", ["A"]), step("C", ["D"]), step("D", ["C"]))
    for plan in (later_depends, earlier_depends):
        assert [(i.code, i.steps) for i in find_issues(plan)] == [
            (IssueCode.CYCLE, ("A", "B", "A")),
            (IssueCode.CYCLE, ("C", "D", "C")),
        ]


def test_a_path_and_the_same_path_as_a_directory_conflict() -> None:
    for first, second in (("libX", "libX/"), ("libX/", "libX")):
        issues = find_issues(plan_of(step("L", [], writes=[first]), step("M", [], writes=[second])))
        assert [(i.code, i.steps) for i in issues] == [(IssueCode.WRITE_CONFLICT, ("L", "M"))]


def conflicts(*writes: str) -> list[str]:
    """The write-conflict messages, up to "but", of one step per write target (A, B, ...) with no dependencies."""
    plan = plan_of(*(step(chr(ord("A") + n), [], writes=[w]) for n, w in enumerate(writes)))
    return [i.message.split(" but")[0] for i in find_issues(plan) if i.code is IssueCode.WRITE_CONFLICT]


def test_a_write_conflict_names_the_path_both_steps_write() -> None:
    assert conflicts("lib", "lib/") == ["steps A and B both write lib/"]
    assert conflicts("lib", "lib/a.py") == ["steps A and B both write lib/a.py"]
    assert conflicts("src/*.py", "src/a.py") == ["steps A and B both write src/a.py"]
    assert conflicts("src/*.py", "src/") == ["steps A and B both write src/"]
    assert conflicts("src/a/*.py", "src") == ["steps A and B both write src"]
    assert conflicts("src/*.py", "src/a*") == ["steps A and B both write src/*.py"]
    assert conflicts("src/a*", "src/*.py") == ["steps A and B both write src/a*"]


def test_write_conflicts_of_nested_absolute_and_x_named_paths() -> None:
    assert conflicts("a/b", "a/b/c.py") == ["steps A and B both write a/b/c.py"]
    assert conflicts("/lib", "/lib/a.py") == ["steps A and B both write /lib/a.py"]
    assert conflicts("a", "a/X") == ["steps A and B both write a/X"]
    assert conflicts("sr", "src/a*.py") == []  # sr is no directory src/a*.py lies in
    assert conflicts("src/*.py", "src/*.md") == []  # the prefixes agree, the suffixes do not


def test_a_glob_that_names_a_directory_overlaps_the_files_inside_it() -> None:
    """``src/?`` names the directory ``src/a``, so a step writing it and one writing ``src/a/b.py`` conflict."""
    assert paths_overlap("src/?", "src/a/b.py")
    assert paths_overlap("src/[ab]", "src/b/c/d.py") and not paths_overlap("src/[ab]", "src/c/d.py")
    assert paths_overlap("src/a?", "src/ab/c.py") and not paths_overlap("src/a?", "src/abc/d.py")
    glob, inside = step("G", [], writes=["src/?"]), step("F", [], writes=["src/a/b.py"])
    assert [(i.code, i.steps) for i in find_issues(plan_of(glob, inside))] == [(IssueCode.WRITE_CONFLICT, ("G", "F"))]


def test_a_cycle_is_searched_from_its_components_earliest_step_whatever_the_ids_and_the_other_steps() -> None:
    """From C (first in the document) the search finds C → D → C; from A (the smallest id) or B it would find
    A → B → A. Each component is well under half the plan, where networkx iterates a subgraph in set order: the
    start must be chosen, not left to the search (ten components, so a start left to chance shows)."""
    steps = []
    for k in range(10):
        c, d, a, b = (f"{name}{k}" for name in "CDAB")
        steps += [step(c, [d, b]), step(d, [c, b, a]), step(a, [b, c]), step(b, [a])]
    issues = find_issues(plan_of(*steps))
    assert [(i.code, i.steps) for i in issues] == [(IssueCode.CYCLE, (f"C{k}", f"D{k}", f"C{k}")) for k in range(10)]
