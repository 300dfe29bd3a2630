"""A goal through the API against the emulator: started, reviewed through the API, streamed over SSE."""

from __future__ import annotations

from pathlib import Path

import pytest

from .support import open_service, read_sse, simple_script, workspace


@pytest.mark.bwrap
async def test_a_goal_started_through_the_api_completes_with_its_review_approved_through_the_api(
    tmp_path: Path,
) -> None:
    ws = workspace(tmp_path)
    async with open_service(tmp_path, simple_script()) as svc:
        run_id = await svc.start(ws)
        waiting = await svc.wait_for(run_id, awaiting_review=True)
        assert waiting["state"] == "awaiting_review"
        assert [s["id"] for s in waiting["plan"]["steps"]] == ["S1"]
        assert (await svc.review(run_id, decision="approve")).json() == {"ok": True}
        done = await svc.wait_for(run_id)
        assert done["state"] == "complete", done
        assert (ws / "hello.txt").read_text() == "hello\n"
        assert done["summary"]["kind"] == "summary" and done["summary"]["status"] == "complete"
        assert done["steps_done"] == 1 and done["requests"] == 4
        events, ended = await read_sse(svc.client, run_id)
        assert ended
        assert [n for n, _, _ in events] == list(range(1, len(events) + 1))
        kinds = [kind for _, kind, _ in events]
        assert "review" in kinds and kinds[-2:] == ["goal_finished", "summary"]
        runs = (await svc.client.get("/api/runs")).json()["runs"]
        assert [r["run_id"] for r in runs] == [run_id]
