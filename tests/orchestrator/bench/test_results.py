"""The figures per class and overall, what each fault cost against the clean run, and the HTML report's page."""

from __future__ import annotations

import re

import pytest

from orchestrator.bench.report import html_report
from orchestrator.bench.results import TaskResult, fault_costs, summarize


def r(task: str, cls: str, solved: bool, cost: float, *, fault: str | None = None, **more: object) -> TaskResult:
    return TaskResult.model_validate(
        {"task": task, "task_class": cls, "mode": "oracle", "status": "complete", "solved": solved,
         "cost_usd": cost, "fault": fault, **more}
    )  # fmt: skip


RESULTS = [
    r("a", "fix", True, 0.002, cache_hit_ratio=0.5, wall_s=2, requests=5, attempts=5),
    r("b", "fix", False, 0.004, cache_hit_ratio=0.7, wall_s=4, requests=6, attempts=6),
    r("c", "integrity", True, 0.001, cache_hit_ratio=0.4, wall_s=1, requests=4, attempts=4),
    r("a", "fix", True, 0.0021, fault="http_429", wall_s=3, requests=5, attempts=6, faults_injected={"http_429": 1}),
    r("b", "fix", False, 0.004, fault="http_429", wall_s=5, requests=6, attempts=7, faults_injected={"http_429": 1}),
]


def test_figures_per_class_and_overall_count_the_clean_runs_only() -> None:
    fix, integrity, overall = summarize(RESULTS)
    assert (fix.name, fix.tasks, fix.solved, fix.pass_rate) == ("fix", 2, 1, 0.5)
    assert fix.cost_per_task == pytest.approx(0.003) and fix.cost_per_solved == pytest.approx(0.006)
    assert fix.mean_hit_ratio == pytest.approx(0.6) and fix.seconds_per_task == 3
    assert (integrity.tasks, integrity.solved) == (1, 1)
    assert (overall.name, overall.tasks, overall.solved) == ("overall", 3, 2)
    assert overall.cost_per_solved == pytest.approx(0.007 / 2)


def test_a_class_with_nothing_solved_has_no_cost_per_solved_task() -> None:
    (fix, _overall) = summarize([r("b", "fix", False, 0.004)])
    assert fix.cost_per_solved is None and fix.pass_rate == 0


def test_each_fault_costs_the_difference_to_the_clean_run_of_the_same_tasks() -> None:
    (http,) = fault_costs(RESULTS)
    assert (http.fault, http.runs, http.solved, http.injected) == ("http_429", 2, 1, 2)
    assert (http.extra_requests, http.extra_attempts) == (0, 2)
    assert http.extra_cost_usd == pytest.approx(0.0001) and http.extra_seconds == pytest.approx(2)


def test_the_report_is_one_self_contained_page_with_three_charts_and_escaped_names() -> None:
    page = html_report([*RESULTS, r("<b>x</b>", "fix", True, 0.001, request_hit_ratios=(0.0, 0.9))])
    assert page.startswith("<!doctype html>")
    assert page.count("<svg") == 3
    assert "<b>x</b>" not in page and "&lt;b&gt;x&lt;/b&gt;" in page
    assert not re.search(r"(src|href)=|<script|<link|@import|url\(", page)
    assert "What each fault cost" in page and "http_429" in page
    assert "measure the harness, not a model" in page
