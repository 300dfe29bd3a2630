"""Regenerates ``docs/dashboard.png``: the dashboard's live goal view, as docs/serve.md shows it.

    .venv/bin/python bench/make_screenshot.py [--out docs/dashboard.png] [--chromium /usr/bin/chromium] [--smoke]

Starts the real ``reasonix emulate`` (with streaming latency, so there is something to watch) playing the scripted
goal of the browser tests (``tests/orchestrator/serve/browser/demo.py``: four steps in a diamond, an escalation to pro
on S2), the real ``reasonix serve``, and Debian's headless Chromium through Playwright. In the page it starts the goal,
approves the plan, and takes the screenshot during the parallel wave (S2 and S3 at once); then it waits for the goal
to complete and prints the figures shown next to the run's summary from the API. ``--smoke`` (CI, ``bench/smoke.py``,
with ``--out`` elsewhere than docs/): the same goal streamed ten times as fast (the time to the first token kept, so
the parallel wave still lasts long enough to be seen).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.orchestrator.serve.browser import demo  # noqa: E402
from tests.orchestrator.serve.browser.support import (  # noqa: E402
    browser,
    chromium_path,
    clean_env,
    emulator,
    service,
)

LATENCY = "ttft=0.25,tps=60"
SMOKE_LATENCY = "ttft=0.25,tps=600"
WAIT_MS = 120_000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "dashboard.png")
    parser.add_argument("--chromium", default=chromium_path(), help="the Chromium executable (default: on PATH)")
    parser.add_argument("--smoke", action="store_true", help="CI's smoke size: the goal streamed ten times as fast")
    args = parser.parse_args()
    if not args.chromium:
        print("no chromium found: apt-get install chromium (or pass --chromium PATH)", file=sys.stderr)
        return 2
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="reasonix-shot-") as tmp:
        root = Path(tmp)
        env = clean_env(root)
        ws = demo.workspace(root)
        with (
            emulator(demo.script(), root, env, latency=SMOKE_LATENCY if args.smoke else LATENCY) as emu,
            service(ws, emu, root, env) as svc,
            browser(args.chromium, width=1400, height=1000) as context,
        ):
            page = context.pages[0] if context.pages else context.new_page()
            page.set_default_timeout(WAIT_MS)
            page.goto(svc.page_url)
            page.locator("#new-goal").wait_for(state="visible")
            page.fill("#f-workspace", str(ws))
            page.fill("#f-objective", demo.OBJECTIVE)
            page.click("#f-start")
            page.locator("#review").wait_for(state="visible")
            page.click("#r-approve")
            # During the parallel wave: S2 and S3 both running in their branches, each pane streaming.
            page.wait_for_function(
                "['S2', 'S3'].every(s => document.querySelector(`#plan-graph g.node[data-step='${s}']`)?.dataset.status"
                " === 'running' && (document.querySelector(`[data-pane='step:${s}']`)?.textContent || '')"
                ".includes('write_file'))"
            )
            args.out.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(args.out), full_page=True)
            page.wait_for_function("document.querySelector('#conn').textContent === 'stream ended'")
            run_id = page.evaluate("decodeURIComponent(location.hash.slice(5))")
            summary = svc.api(f"/api/runs/{run_id}")["summary"]
            shown = {k: page.inner_text(f"#g-{k}") for k in ("cost", "requests", "cache", "steps")}
    print(f"wrote {args.out} ({args.out.stat().st_size:,} bytes) in {time.monotonic() - started:.1f} s")
    print(
        f"page shows: cost {shown['cost']}, requests {shown['requests']}, cache {shown['cache']}, "
        f"steps {shown['steps']}"
    )
    print(
        f"summary:    cost ${summary['cost_usd']:.6f}, requests {summary['requests']}, "
        f"cache {summary['cache_hit_ratio']:.4f}, steps {summary['steps_done']}/{summary['steps_total']}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
