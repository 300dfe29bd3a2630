"""The dashboard in a real headless Chromium against the real ``reasonix serve`` running a scripted goal on the
emulator: the goal is started and its plan approved in the page, the steps turn green live, the figures shown match the
run's summary from the API, a hostile plan title stays text, and a page whose token the service no longer accepts says
which link to open."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from ...goal_support import PLANNER, call, reply
from . import demo
from .support import CuttableProxy, browser, clean_env, emulator, fmt_cost, fmt_ratio, require_browser, service

WAIT_MS = 60_000


@pytest.fixture
def chromium() -> str:
    return require_browser()


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return clean_env(tmp_path)


@pytest.fixture
def page(chromium: str) -> Iterator[Any]:
    with browser(chromium) as context:
        page = context.pages[0] if context.pages else context.new_page()
        page.set_default_timeout(WAIT_MS)
        yield page


def test_a_goal_started_and_approved_in_the_page_runs_live_to_complete(
    tmp_path: Path, env: dict[str, str], page: Any
) -> None:
    ws = demo.workspace(tmp_path)
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    console_errors: list[str] = []
    page.on("console", lambda m: console_errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda exc: console_errors.append(str(exc)))
    with emulator(demo.script(hostile=True), tmp_path, env) as emu, service(ws, emu, tmp_path, env) as svc:
        page.goto(svc.page_url)
        # the token leaves the address bar at once, and stays in the tab's session storage only
        page.wait_for_function("!location.search.includes('token')")
        assert svc.token not in page.url
        assert page.evaluate("sessionStorage.getItem('reasonix-serve-token')") == svc.token

        page.locator("#new-goal").wait_for(state="visible")
        page.fill("#f-workspace", str(ws))
        page.fill("#f-objective", demo.OBJECTIVE)
        assert page.is_checked("#f-review")
        page.click("#f-start")
        page.wait_for_function("location.hash.startsWith('#run=')")
        run_id = page.evaluate("decodeURIComponent(location.hash.slice(5))")

        # the plan waits for the review: drawn as a graph, every step pending, the hostile title as text
        page.locator("#review").wait_for(state="visible")
        page.wait_for_function("document.querySelectorAll('#plan-graph g.node').length === 4")
        statuses = page.eval_on_selector_all("#plan-graph g.node", "ns => ns.map(n => n.dataset.status)")
        assert statuses == ["pending"] * 4
        s2_title = page.eval_on_selector("#plan-graph g.node[data-step='S2'] title", "t => t.textContent")
        assert demo.HOSTILE_TITLE in s2_title
        assert "Add mul() <script>alert" in (page.text_content("#plan-graph g.node[data-step='S2'] text.title") or "")
        assert demo.HOSTILE_TITLE in page.input_value("#r-plan")
        assert page.evaluate("document.scripts.length") == 1  # the loader (its modules run from blob: URLs)
        assert svc.api(f"/api/runs/{run_id}")["awaiting_review"] is True

        page.click("#r-approve")
        page.locator("#review").wait_for(state="hidden")
        page.wait_for_function(
            "[...document.querySelectorAll('#plan-graph g.node')].map(n => n.dataset.status).join() === "
            "'done,done,done,done'"
        )
        page.wait_for_function("document.querySelector('#g-state').dataset.state === 'complete'")
        page.wait_for_function("document.querySelector('#conn').textContent === 'stream ended'")

        detail = svc.api(f"/api/runs/{run_id}")
        summary = detail["summary"]
        assert detail["state"] == "complete" and summary["status"] == "complete"
        # the figures shown are the summary's, and the per-request chart adds up to them
        assert page.inner_text("#g-cost") == fmt_cost(summary["cost_usd"])
        assert float(page.get_attribute("#g-cost", "data-value") or "nan") == pytest.approx(summary["cost_usd"])
        assert page.inner_text("#g-requests") == str(summary["requests"])
        assert page.inner_text("#g-cache") == fmt_ratio(summary["cache_hit_ratio"])
        assert page.inner_text("#g-steps") == "4 / 4"
        bars = page.eval_on_selector_all("#chart g.req", "gs => gs.map(g => [+g.dataset.hit, +g.dataset.miss])")
        assert len(bars) == summary["requests"]
        assert sum(h for h, _ in bars) == summary["prompt_cache_hit_tokens"]
        assert sum(m for _, m in bars) == summary["prompt_cache_miss_tokens"]
        # the escalation is highlighted with its reason and cost; the running steps' lines were shown
        escalation = page.inner_text("#escalations li.esc")
        assert "mul() must keep integer semantics" in escalation and "deepseek-v4-pro" in escalation
        assert re.search(r"\$\d+\.\d{4}", escalation)
        s2_pane = page.inner_text("[data-pane='step:S2']")
        assert demo.HOSTILE_TITLE in s2_pane
        assert "▸ write_file" in s2_pane and "✓ verify" in s2_pane
        # the runs list shows the run with the same figures
        row = page.locator(f"#runs li[data-run='{run_id}']")
        assert fmt_cost(summary["cost_usd"]) in row.inner_text()
        assert fmt_ratio(summary["cache_hit_ratio"]) in row.inner_text()

        shot = tmp_path / "dashboard.png"
        page.screenshot(path=str(shot), full_page=True)
        assert shot.read_bytes().startswith(b"\x89PNG") and shot.stat().st_size > 20_000
        assert dialogs == []
        assert page.evaluate("document.scripts.length") == 1  # the title made no element
        assert console_errors == []  # (once the service stops, the page's polls are refused: not checked)
    assert (ws / "README.md").read_text() == demo.DOC


def test_a_page_whose_token_the_service_no_longer_takes_says_which_link_to_open(
    tmp_path: Path, env: dict[str, str], page: Any
) -> None:
    ws = demo.workspace(tmp_path)
    with emulator(demo.script(), tmp_path, env) as emu:
        with service(ws, emu, tmp_path, env) as first:
            page.goto(first.page_url)
            page.locator("#new-goal").wait_for(state="visible")
            assert page.is_hidden("#error")
            port = first.url.rsplit(":", 1)[1]
        # the service restarts on the same port with another token: the open page's requests are refused
        with service(ws, emu, tmp_path, env, "--port", port, "--token", "another-token") as second:
            assert second.url == first.url
            # (while the port was closed the page said the service does not answer; now it says why it is refused)
            page.wait_for_function("document.querySelector('#error').textContent.includes('needs the link')")
            text = page.inner_text("#error")
    assert "This page needs the link with the token that `reasonix serve` printed" in text
    assert "does not answer" not in text


def test_the_plan_edited_in_the_page_is_validated_and_then_runs(tmp_path: Path, env: dict[str, str], page: Any) -> None:
    ws = demo.workspace(tmp_path)
    with emulator(demo.script(), tmp_path, env) as emu, service(ws, emu, tmp_path, env) as svc:
        created = httpx.post(
            svc.url + "/api/goals",
            headers={"Authorization": f"Bearer {svc.token}"},
            json={"workspace": str(ws), "objective": demo.OBJECTIVE},
            timeout=30,
        )
        assert created.status_code == 201, created.text
        run_id = created.json()["run_id"]
        page.goto(f"{svc.page_url}#run={run_id}")
        page.locator("#review").wait_for(state="visible")
        page.click("#r-edit-box summary")
        plan = json.loads(page.input_value("#r-plan"))
        assert [s["id"] for s in plan["steps"]] == ["S1", "S2", "S3", "S4"]

        page.fill("#r-plan", "{ not json")
        page.click("#r-edit")
        assert "not valid JSON" in page.inner_text("#r-error")

        broken = json.loads(json.dumps(plan))
        broken["steps"][1]["depends_on"] = ["S9"]
        page.fill("#r-plan", json.dumps(broken))
        page.click("#r-edit")
        page.wait_for_function("document.querySelector('#r-error').textContent.includes('S9')")
        assert page.is_visible("#review")  # refused: the plan still awaits its review
        assert svc.api(f"/api/runs/{run_id}")["awaiting_review"] is True

        page.fill("#r-feedback", "")
        page.click("#r-revise")
        assert "Write what the planner should change" in page.inner_text("#r-error")

        edited = json.loads(json.dumps(plan))
        edited["steps"][3]["title"] = "Write README.md <b>now</b>"
        page.fill("#r-plan", json.dumps(edited))
        page.click("#r-edit")
        # the edited plan is revision 2, drawn at once, and comes back for its review (as in the terminal)
        page.wait_for_function(
            "document.querySelector(\"#plan-graph g.node[data-step='S4'] text.title\").textContent === "
            "'Write README.md <b>now</b>'"
        )
        page.locator("#review").wait_for(state="visible")
        assert "Write README.md <b>now</b>" in page.input_value("#r-plan")
        page.click("#r-approve")
        page.locator("#review").wait_for(state="hidden")
        page.wait_for_function(
            "[...document.querySelectorAll('#plan-graph g.node')].map(n => n.dataset.status).join() === "
            "'done,done,done,done'"
        )
        assert page.evaluate("document.querySelectorAll('#plan-graph b').length") == 0
        assert svc.api(f"/api/runs/{run_id}")["plan"]["steps"][3]["title"] == "Write README.md <b>now</b>"


def test_revise_with_feedback_in_the_page_then_cancel(tmp_path: Path, env: dict[str, str], page: Any) -> None:
    ws = demo.workspace(tmp_path)
    steps = demo.steps(hostile=False)
    planner = [
        reply(call("submit_plan", objective=demo.OBJECTIVE, steps=steps)),
        reply(call("revise_plan", objective=demo.OBJECTIVE, steps=steps[:3])),
    ]
    script = {"sessions": [{"key": "planner", "system_contains": PLANNER, "replies": planner}]}
    with emulator(script, tmp_path, env) as emu, service(ws, emu, tmp_path, env) as svc:
        page.goto(svc.page_url)
        page.locator("#new-goal").wait_for(state="visible")
        page.fill("#f-workspace", str(ws))
        page.fill("#f-objective", demo.OBJECTIVE)
        page.click("#f-start")
        page.locator("#review").wait_for(state="visible")
        page.wait_for_function("document.querySelectorAll('#plan-graph g.node').length === 4")
        page.fill("#r-feedback", "Leave the README alone")
        page.click("#r-revise")
        # the planner's revised plan (three steps) comes back for review
        page.wait_for_function("document.querySelectorAll('#plan-graph g.node').length === 3")
        page.locator("#review").wait_for(state="visible")
        run_id = page.evaluate("decodeURIComponent(location.hash.slice(5))")
        assert svc.api(f"/api/runs/{run_id}")["plan"]["revision"] == 2
        assert "review: revise — Leave the README alone" in page.inner_text("#events")
        page.click("#r-cancel")
        page.wait_for_function("document.querySelector('#g-state').dataset.state === 'cancelled'")
        page.locator("#review").wait_for(state="hidden")
        assert page.is_hidden("#g-pause")
        assert svc.api(f"/api/runs/{run_id}")["state"] == "cancelled"
    assert not (ws / "calc" / "ops.py").exists()


def _stream_ids(svc: Any, run_id: str) -> list[int]:
    """The ids of every event of a finished run, read from its SSE stream with httpx until ``event: end``."""
    ids: list[int] = []
    with httpx.stream("GET", f"{svc.url}/api/runs/{run_id}/events?token={svc.token}", timeout=30) as response:
        for line in response.iter_lines():
            if line.startswith("id:"):
                ids.append(int(line.removeprefix("id:").strip()))
            elif line.startswith("event: end"):
                break
    return ids


def test_a_dropped_stream_resumes_where_it_left_off(tmp_path: Path, env: dict[str, str], page: Any) -> None:
    ws = demo.workspace(tmp_path)
    with (
        emulator(demo.script(), tmp_path, env, latency="ttft=0.2,tps=100") as emu,
        service(ws, emu, tmp_path, env) as svc,
    ):
        proxy = CuttableProxy(svc.url)  # the page talks to the service through a connection we can drop
        try:
            page.goto(f"{proxy.url}/?token={svc.token}")
            created = httpx.post(
                svc.url + "/api/goals",
                headers={"Authorization": f"Bearer {svc.token}"},
                json={"workspace": str(ws), "objective": demo.OBJECTIVE, "review": False},
                timeout=30,
            )
            run_id = created.json()["run_id"]
            page.evaluate(f"location.hash = '#run={run_id}'")
            page.wait_for_function(
                "document.querySelector(\"#plan-graph g.node[data-step='S1']\")?.dataset.status === 'done'"
            )
            proxy.cut()  # the stream drops mid-run; the goal goes on in the service
            page.wait_for_function("document.querySelector('#conn').dataset.state === 'lost'")
            seen_before = int(page.get_attribute("#events", "data-last") or "0")
            for _ in range(1200):  # until the service has done S3 while the page saw nothing (a minute at most)
                if svc.api(f"/api/runs/{run_id}")["steps_done"] >= 3:
                    break
                time.sleep(0.05)
            else:
                raise AssertionError("the goal did not get on while the page was cut off")
            proxy.restore()  # EventSource reconnects by itself, sending Last-Event-ID
            page.wait_for_function("document.querySelector('#conn').textContent === 'stream ended'")
        finally:
            proxy.close()
        ids = _stream_ids(svc, run_id)
        assert ids == list(range(1, len(ids) + 1))
        received = int(page.get_attribute("#events", "data-received") or "0")
        last = int(page.get_attribute("#events", "data-last") or "0")
        assert received == last == len(ids) > seen_before  # every event once: none missed, none twice
        assert int(page.get_attribute("#events", "data-reconnects") or "0") >= 1
        assert page.eval_on_selector_all("#plan-graph g.node", "ns => ns.map(n => n.dataset.status)") == ["done"] * 4


def test_a_newcomer_s_dashboard_reads_steps_undoes_and_shows_a_failed_run_once(
    tmp_path: Path, env: dict[str, str], page: Any
) -> None:
    """Issue 23 items 22, 23, 25, 26: the workspace field offers the service's workspace; an API error carries no
    command-line advice; a step node opens the step in full; the undo button takes back the last step; a new run
    opened after a finished one does not show the old one's figures; a run that failed before any plan says so (not
    "the planner is working"), shows its long error in full once, and its resume hint has the service's --base-url."""
    ws = demo.workspace(tmp_path)
    (ws / "reasonix.toml").write_text("[client]\nmax_attempts = 1\n")  # the second goal fails at once
    with emulator(demo.script(), tmp_path, env) as emu, service(ws, emu, tmp_path, env) as svc:
        page.goto(svc.page_url)
        page.locator("#new-goal").wait_for(state="visible")
        page.wait_for_function(f"document.querySelector('#f-workspace').value === {json.dumps(str(ws))}")

        page.fill("#f-workspace", str(tmp_path / "missing"))
        page.fill("#f-objective", demo.OBJECTIVE)
        page.click("#f-start")
        page.locator("#error").wait_for(state="visible")
        error = page.inner_text("#error")
        assert "does not exist" in error and "--workspace" not in error, error

        page.fill("#f-workspace", str(ws))
        page.uncheck("#f-review")
        page.click("#f-start")
        page.wait_for_function("location.hash.startsWith('#run=')")
        first = page.evaluate("decodeURIComponent(location.hash.slice(5))")
        page.wait_for_function("document.querySelector('#g-state').dataset.state === 'complete'")
        page.wait_for_function("document.querySelector('#g-steps').textContent === '4 / 4'")

        # tool lines as the terminal shows them (item 24), not the arguments' JSON: a new file's lines, an edit as a
        # diff, a command's output as its last lines (four, every one of a failure's eight), each on its own line
        s1 = "[data-pane='step:S1']"
        s1_pane = page.inner_text(s1)
        assert "▸ write_file calc/ops.py (2 lines)" in s1_pane and '"content"' not in s1_pane, s1_pane
        assert "\\n" not in s1_pane and '"edits"' not in s1_pane, s1_pane
        added = page.eval_on_selector_all(f"{s1} span.diff-add", "ss => ss.map(s => s.textContent.trimEnd())")
        assert '    +    """a + b"""' in added and "    +def add(a, b):" in added, added
        assert "▸ edit_file calc/ops.py\n" in s1_pane and "✓ edit_file calc/ops.py · ok" in s1_pane, s1_pane
        out = page.eval_on_selector_all(f"{s1} span.out", "ss => ss.map(s => s.textContent.trim())")
        assert [o for o in out if o.startswith("│ line")] == [f"│ line {i}" for i in (3, 4, 5, 6)], out
        assert "… 2 earlier lines" in s1_pane
        assert [o for o in out if o.startswith("│ fail")] == [f"│ fail {i}" for i in range(1, 9)], out
        assert "✗ bash python3 -c 'import sys · exit code 3" in s1_pane, s1_pane

        page.click("#plan-graph g.node[data-step='S4']")
        page.locator("#step-detail").wait_for(state="visible")
        s4 = next(s for s in svc.api(f"/api/runs/{first}")["plan"]["steps"] if s["id"] == "S4")
        detail = page.inner_text("#step-detail")
        assert s4["instructions"] in detail and "README.md" in detail
        assert all(v["command"] in detail for v in s4["verify"])
        page.click("#step-close")
        page.locator("#step-detail").wait_for(state="hidden")

        page.locator("#g-undo").wait_for(state="visible")
        page.click("#g-undo")
        page.wait_for_function("document.querySelector('#g-hint').textContent.startsWith('undone: ')")
        assert "README.md" in page.inner_text("#g-hint")
        assert not (ws / "README.md").exists()  # S4 wrote it: taken back

        page.click("#new-goal-btn")
        page.fill("#f-objective", "Grow calc further")
        page.click("#f-start")
        page.wait_for_function(f"location.hash !== '#run={first}' && location.hash.startsWith('#run=')")
        assert page.inner_text("#g-steps") != "4 / 4"  # not the previous run's figures
        second = page.evaluate("decodeURIComponent(location.hash.slice(5))")
        page.wait_for_function("document.querySelector('#g-state').dataset.state === 'paused'")
        page.wait_for_function("document.querySelector('#g-hint').textContent.includes('--base-url')")
        detail2 = svc.api(f"/api/runs/{second}")
        assert detail2["plan"] is None and "DeepSeek API error" in detail2["reason"]
        assert page.inner_text("#g-steps") == "–"
        assert "the planner is working" not in page.inner_text("#plan-graph")
        assert "ended before the planner submitted one" in page.inner_text("#plan-graph")
        assert f"--base-url {emu}" in page.inner_text("#g-hint")
        reason = detail2["reason"]
        assert len(reason) > 80
        page.wait_for_function("document.querySelector('#events').textContent.includes('goal paused')")
        assert page.inner_text("#goal").count(reason) == 1
