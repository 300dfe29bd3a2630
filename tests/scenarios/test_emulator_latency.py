"""The emulator's latency model is per model: the spec's forms parse (the old single form included), and a request
is delayed by the numbers of the model it names."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
import trio
from hypothesis import given
from hypothesis import strategies as st

from scenarios.emulator import LatencyModel, open_emulator

AUTH = {"Authorization": "Bearer test-key"}


def test_the_single_form_and_the_realistic_preset_parse_as_before() -> None:
    assert LatencyModel.parse("ttft=1,tps=5") == LatencyModel(ttft=1.0, tps=5.0)
    assert LatencyModel.parse("realistic") == LatencyModel(ttft=0.4, miss_ms_per_ktok=60.0, tps=80.0)
    assert LatencyModel.parse("off") is None and LatencyModel.parse("") is None


def test_per_model_sections_override_the_common_numbers() -> None:
    m = LatencyModel.parse("miss_ms_per_ktok=10;flash:ttft=0.4,tps=80;pro:ttft=1.2,tps=35")
    assert m is not None
    assert m.for_model("deepseek-v4-pro") == LatencyModel(ttft=1.2, miss_ms_per_ktok=10.0, tps=35.0)
    assert m.for_model("deepseek-v4-flash") == LatencyModel(ttft=0.4, miss_ms_per_ktok=10.0, tps=80.0)
    assert m.for_model("deepseek-flash").tps == 80.0  # last dash-separated part
    assert m.for_model("v4-pro").ttft == 1.2  # without the deepseek- prefix
    other = m.for_model("deepseek-chat")
    assert (other.ttft, other.miss_ms_per_ktok, other.tps) == (0.4, 10.0, 80.0)  # the common numbers


def test_the_realistic_models_preset_makes_pro_slower_than_flash() -> None:
    m = LatencyModel.parse("realistic-models")
    assert m is not None
    pro, flash = m.for_model("deepseek-v4-pro"), m.for_model("deepseek-v4-flash")
    assert pro.ttft > flash.ttft and pro.tps < flash.tps and pro.miss_ms_per_ktok > flash.miss_ms_per_ktok


@pytest.mark.parametrize(
    ("spec", "words"),
    [
        ("ttft=fast", "needs a number"),
        ("pro:tps=-1", "cannot be negative"),
        (":ttft=1", "empty model name"),
        ("pro:speed=3", "bad latency setting"),
        ("pro", "bad latency setting"),
    ],
)
def test_bad_specs_say_what_is_wrong(spec: str, words: str) -> None:
    with pytest.raises(ValueError, match=words):
        LatencyModel.parse(spec)


NUM = st.floats(0, 100, allow_nan=False).map(lambda x: round(x, 3))


@given(st.dictionaries(st.sampled_from(["flash", "pro", "v4-pro", "chat"]), st.tuples(NUM, NUM, NUM), max_size=4))
def test_every_model_section_gets_its_own_numbers(sections: dict[str, tuple[float, float, float]]) -> None:
    spec = ";".join(f"{name}:ttft={a},miss_ms_per_ktok={b},tps={c}" for name, (a, b, c) in sections.items())
    m = LatencyModel.parse(spec or "ttft=0.4")
    assert m is not None
    for name, (a, b, c) in sections.items():
        got = dict(m.per_model)[name]
        assert (got.ttft, got.miss_ms_per_ktok, got.tps) == (a, b, c)


def body(model: str) -> dict[str, Any]:
    return {"model": model, "messages": [{"role": "user", "content": f"hello {model}"}], "stream": False}


async def test_the_emulator_delays_each_request_by_its_own_models_numbers(autojump_clock: trio.abc.Clock) -> None:
    latency = LatencyModel.parse("ttft=1;flash:ttft=2,tps=1000;pro:ttft=30,tps=1000")
    async with open_emulator(latency=latency) as emu, httpx.AsyncClient(base_url=emu.base_url, timeout=600) as client:
        took = {}
        for model in ("deepseek-v4-flash", "deepseek-v4-pro"):
            start = trio.current_time()
            r = await client.post("/chat/completions", json=body(model), headers=AUTH)
            assert r.status_code == 200
            took[model] = trio.current_time() - start
    assert 2.0 <= took["deepseek-v4-flash"] < 10.0
    assert took["deepseek-v4-pro"] >= 30.0
