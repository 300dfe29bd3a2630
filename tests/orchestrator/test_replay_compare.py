"""``reasonix replay SCENARIO --compare SETTING=V1,V2,…``: one scenario replayed under each setting, side by side."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from orchestrator.cli.main import main
from orchestrator.replay.compare import CompareError, parse_compare
from scenarios.format import ScenarioSettings

from .replay_support import three_step_scenario, write


def test_compare_on_the_flagship_gives_one_json_object_per_setting(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["replay", "flagship", "--compare", "preset=flash,auto,pro", "--json"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["setting"] for r in rows] == [{"preset": "flash"}, {"preset": "auto"}, {"preset": "pro"}]
    flash, auto, pro = rows
    assert set(flash["requests_per_model"]) == {"v4-flash"} and flash["escalations"] == 0
    assert auto["ok"] and auto["escalations"] == 1 and auto["requests_per_model"]["v4-pro"] > 0
    assert set(pro["requests_per_model"]) == {"v4-pro"}
    assert flash["cost_usd"] < auto["cost_usd"] < pro["cost_usd"]
    assert all(r["model_seconds"] > 0 and r["origin"] == "scripted" for r in rows)


def test_compare_prints_a_table_side_by_side_and_says_a_script_is_not_a_model(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    loaded = write(tmp_path, three_step_scenario())
    assert main(["replay", str(loaded.source), "--compare", "failure_threshold=1,3"]) == 0
    out = capsys.readouterr().out
    assert "failure_threshold=1" in out and "failure_threshold=3" in out
    for label in ("outcome", "expectations", "per model", "escalations", "cost (peak)", "model time"):
        assert label in out
    assert "Scripted replies are not a model" in out


def test_bad_compare_settings_are_refused_with_what_to_write(capsys: pytest.CaptureFixture[str]) -> None:
    base = ScenarioSettings()
    with pytest.raises(CompareError, match=r"setting among: .*max_pro_turns.*preset"):
        parse_compare("speed=1,2", base)
    with pytest.raises(CompareError, match="at least two values"):
        parse_compare("preset=flash", base)
    key, variants = parse_compare("max-pro-turns=0,none", base)
    assert key == "max_pro_turns" and [v.max_pro_turns for v in variants] == [0, None]
    assert main(["replay", "flagship", "--compare", "preset=flash,turbo"]) == 2
    assert "--compare preset=turbo" in capsys.readouterr().err
    assert main(["replay", "--all", "--compare", "preset=flash,pro"]) == 2
