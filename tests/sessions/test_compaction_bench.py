"""``bench/compaction_bench.py`` in short (60 turns, a 40,000-token window, a jump every 40 turns): with the tiers,
every fact the session was told is still in what the next request sends or recallable through ``recall`` after every
rewrite and at the end, and every tier fired; with one tier, the user's turns survive and the rest does not."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench" / "compaction_bench.py"


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("compaction_bench", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["compaction_bench"] = module
    spec.loader.exec_module(module)
    return module


async def test_the_tiers_keep_every_fact_recallable_and_one_tier_keeps_the_users_turns(bench: ModuleType) -> None:
    one, tiers = await bench.run_all(60, 40_000, ("one tier", "tiers"), 40)
    kept, planted = tiers.kept()
    assert planted == one.kept()[1] > 100
    assert kept == planted  # the harness guarantee: nothing the model once saw is out of reach
    assert all(k == n for _, n, k in tiers.checks) and tiers.checks
    assert {"snip", "compact", "force"} <= set(tiers.tiers)
    assert tiers.recallable  # some of it only through recall: the tiers did take text out
    assert one.kept("user") == (len(one.planted["user"]), len(one.planted["user"]))  # verbatim through compaction
    assert one.kept()[0] < planted and one.tiers.get("compact", 0) >= 2
    assert not one.recallable
