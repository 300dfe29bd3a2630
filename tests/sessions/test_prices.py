"""Price arithmetic against the usages DeepSeek really reported (tests/fixtures/deepseek-wire/)."""

from __future__ import annotations

import dataclasses
import json
from datetime import UTC, date, datetime, timedelta, timezone
from decimal import Decimal
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sessions.accounting.prices import (
    FamilyPrice,
    NoPriceTableError,
    PriceDataError,
    UnknownModelPriceError,
    cost,
    default_price_book,
    parse_price_data,
)
from sessions.wire.messages import ChatCompletion, StreamChunk, Usage
from tests import wire_samples

WIRE = wire_samples.WIRE


def _stream_usage(name: str) -> Usage:
    usage = None
    for line in (WIRE / name).read_text(encoding="utf-8").splitlines():
        if line.startswith("data: {"):
            chunk = StreamChunk.model_validate_json(line[len("data: ") :])
            usage = chunk.usage or usage
    assert usage is not None
    return usage


@pytest.fixture(scope="module")
def flash_stream() -> Usage:
    usage = _stream_usage("v4flash_thinking_toolcall.sse")
    assert (usage.prompt_tokens, usage.prompt_cache_hit_tokens, usage.prompt_cache_miss_tokens) == (374, 256, 118)
    assert usage.completion_tokens == 61
    return usage


@pytest.fixture(scope="module")
def chat_stream() -> Usage:
    usage = _stream_usage("v32chat_parallel_toolcalls.sse")
    assert (usage.prompt_tokens, usage.prompt_cache_hit_tokens, usage.prompt_cache_miss_tokens) == (491, 448, 43)
    assert usage.completion_tokens == 129
    return usage


@pytest.fixture(scope="module")
def flash_nonstream() -> Usage:
    completion = ChatCompletion.model_validate_json((WIRE / "v4flash_toolcall_nonstream.json").read_bytes())
    assert completion.usage is not None
    assert (completion.usage.prompt_cache_hit_tokens, completion.usage.prompt_cache_miss_tokens) == (0, 374)
    return completion.usage


def utc(year: int, month: int, day: int, hour: int = 0, minute: int = 0, second: int = 0) -> datetime:
    return datetime(year, month, day, hour, minute, second, tzinfo=UTC)


# ----------------------------------------------------------------------------------------- dated tables, exact


def test_flash_2026_04_24_table(flash_stream: Usage) -> None:
    c = cost(flash_stream, "deepseek-v4-flash", utc(2026, 5, 1, 12))
    # 256 * 0.028 + 118 * 0.14 + 61 * 0.28, per million
    assert (c.hit, c.miss, c.output) == (Decimal("0.000007168"), Decimal("0.00001652"), Decimal("0.00001708"))
    assert c.total == Decimal("0.000040768")
    assert (c.family, c.table_from, c.period) == ("flash", date(2026, 4, 24), "flat")
    assert float(c) == pytest.approx(0.000040768)


def test_flash_mid_2026_table_starts_2026_07_01(flash_stream: Usage) -> None:
    before = cost(flash_stream, "deepseek-v4-flash", utc(2026, 6, 30, 23, 59, 59))
    after = cost(flash_stream, "deepseek-v4-flash", utc(2026, 7, 1, 0, 0, 0))
    assert before.table_from == date(2026, 4, 24)
    assert after.table_from == date(2026, 7, 1)
    assert after.hit == Decimal("0.0000007168")  # 256 * 0.0028 / 1M: the hit price fell tenfold
    assert after.miss == before.miss and after.output == before.output
    assert after.total == Decimal("0.0000343168")


def test_pro_keeps_april_prices_until_september(flash_stream: Usage) -> None:
    # The mid-2026 table lists flash only; pro stays on the 2026-04-24 prices.
    c = cost(flash_stream, "deepseek-v4-pro", utc(2026, 8, 1, 2))
    assert c.table_from == date(2026, 4, 24)
    assert c.total == Decimal("0.00045472")  # 256*0.145 + 118*1.74 + 61*3.48


def test_chat_alias_is_flash_on_the_september_table(chat_stream: Usage) -> None:
    # Monday 2026-09-14 02:00 UTC is peak: 448*0.006 + 43*0.30 + 129*1.20 = 2.688 + 12.9 + 154.8
    c = cost(chat_stream, "deepseek-chat", utc(2026, 9, 14, 2))
    assert (c.family, c.table_from, c.period) == ("flash", date(2026, 9, 10), "peak")
    assert c.total == Decimal("0.000170388")


def test_all_miss_nonstream_reply(flash_nonstream: Usage) -> None:
    c = cost(flash_nonstream, "deepseek-v4-flash", utc(2026, 9, 14, 7))
    assert c.hit == 0
    assert c.miss == Decimal("0.0001122")  # 374 * 0.30 / 1M
    assert c.output == Decimal("0.000072")  # 60 * 1.20 / 1M


# ----------------------------------------------------------------------------------------- peak and off-peak


@pytest.mark.parametrize(
    ("at", "period"),
    [
        (utc(2026, 9, 14, 0, 59, 59), "off-peak"),  # Monday
        (utc(2026, 9, 14, 1, 0, 0), "peak"),
        (utc(2026, 9, 14, 3, 59, 59), "peak"),
        (utc(2026, 9, 14, 4, 0, 0), "off-peak"),
        (utc(2026, 9, 14, 5, 59, 59), "off-peak"),
        (utc(2026, 9, 14, 6, 0, 0), "peak"),
        (utc(2026, 9, 14, 9, 59, 59), "peak"),
        (utc(2026, 9, 14, 10, 0, 0), "off-peak"),
        (utc(2026, 9, 18, 3, 0, 0), "peak"),  # Friday
        (utc(2026, 9, 19, 3, 0, 0), "off-peak"),  # Saturday
        (utc(2026, 9, 20, 7, 0, 0), "off-peak"),  # Sunday
    ],
)
def test_peak_windows(flash_stream: Usage, at: datetime, period: str) -> None:
    assert cost(flash_stream, "deepseek-v4-flash", at).period == period


def test_off_peak_is_half_price_across_the_boundary(flash_stream: Usage) -> None:
    peak = cost(flash_stream, "deepseek-v4-pro", utc(2026, 9, 14, 3, 59, 59))
    off = cost(flash_stream, "deepseek-v4-pro", utc(2026, 9, 14, 4, 0, 0))
    weekend = cost(flash_stream, "deepseek-v4-pro", utc(2026, 9, 19, 3, 0, 0))
    assert peak.total == Decimal("0.000408584")  # 256*0.044 + 118*1.32 + 61*3.96
    assert off.total == Decimal("0.000204292")
    assert weekend.total == off.total
    assert (peak.hit / 2, peak.miss / 2, peak.output / 2) == (off.hit, off.miss, off.output)


def test_earlier_tables_have_no_off_peak(flash_stream: Usage) -> None:
    weekday_night = cost(flash_stream, "deepseek-v4-flash", utc(2026, 8, 3, 22))
    weekday_peak = cost(flash_stream, "deepseek-v4-flash", utc(2026, 8, 3, 2))
    assert weekday_night.period == weekday_peak.period == "flat"
    assert weekday_night.total == weekday_peak.total


def test_time_zone_is_converted_to_utc(flash_stream: Usage) -> None:
    # 09:30 in UTC+8 on Monday is 01:30 UTC: peak.
    at = datetime(2026, 9, 14, 9, 30, tzinfo=timezone(timedelta(hours=8)))
    assert cost(flash_stream, "deepseek-v4-flash", at).period == "peak"
    with pytest.raises(ValueError, match="aware datetime"):
        cost(flash_stream, "deepseek-v4-flash", datetime(2026, 9, 14, 2))


# ------------------------------------------------------------------------------------------- errors, overrides


def test_unknown_model_says_how_to_add_a_price(flash_stream: Usage) -> None:
    with pytest.raises(UnknownModelPriceError) as info:
        cost(flash_stream, "deepseek-v5-ultra", utc(2026, 9, 14, 2))
    message = str(info.value)
    assert "'deepseek-v5-ultra'" in message
    assert "[prices.aliases]" in message and '[prices.families."deepseek-v5-ultra"]' in message
    assert "reasonix.toml" in message


def test_before_the_first_table(flash_stream: Usage) -> None:
    with pytest.raises(NoPriceTableError, match="2026-04-24"):
        cost(flash_stream, "deepseek-v4-flash", utc(2025, 1, 1))


def test_override_table_wins_and_prices_new_models(flash_stream: Usage) -> None:
    book = default_price_book().with_overrides(
        {
            "pro": FamilyPrice(hit=Decimal("0.01"), miss=Decimal("1"), output=Decimal("2")),
            "my-finetune": FamilyPrice(hit=Decimal("0"), miss=Decimal("0.5"), output=Decimal("0.5")),
        },
        aliases={"my-alias": "flash"},
    )
    at = utc(2026, 9, 14, 2)
    pro = book.cost(flash_stream, "deepseek-v4-pro", at)
    assert (pro.table_from, pro.period) == (None, "flat")
    assert pro.total == Decimal("0.00024256")  # 256*0.01 + 118*1 + 61*2
    assert book.cost(flash_stream, "my-finetune", at).total == Decimal("0.0000895")  # (118 + 61) * 0.5 / 1M
    # flash is not overridden: the dated table still prices it, also under a new alias
    flash = book.cost(flash_stream, "deepseek-v4-flash", at)
    assert (flash.table_from, flash.period) == (date(2026, 9, 10), "peak")
    assert book.cost(flash_stream, "my-alias", at) == dataclasses.replace(flash, model="my-alias")


def test_override_with_off_peak_uses_the_published_windows(flash_stream: Usage) -> None:
    book = default_price_book().with_overrides(
        {"flash": FamilyPrice(hit=Decimal("1"), miss=Decimal("1"), output=Decimal("1"))},
        off_peak_multiplier=Decimal("0.25"),
    )
    assert book.cost(flash_stream, "deepseek-flash", utc(2026, 9, 14, 2)).total == Decimal("0.000435")
    assert book.cost(flash_stream, "deepseek-flash", utc(2026, 9, 14, 4)).total == Decimal("0.00010875")


def test_override_alias_to_unknown_family_is_refused() -> None:
    with pytest.raises(UnknownModelPriceError, match="my-alias"):
        default_price_book().with_overrides({}, aliases={"my-alias": "nonexistent"})


def test_broken_price_data_is_reported() -> None:
    with pytest.raises(PriceDataError, match="invalid"):
        parse_price_data('{"format_version": 1}')
    good = json.loads(Path(__file__).resolve().parents[2].joinpath("sessions/data/prices.json").read_text())
    good["aliases"]["deepseek-x"] = "ultra"
    with pytest.raises(PriceDataError, match="deepseek-x"):
        parse_price_data(json.dumps(good))


def test_shipped_data_keeps_the_full_history_and_aliases() -> None:
    book = default_price_book()
    assert [t.effective_from for t in book.tables] == [date(2026, 4, 24), date(2026, 7, 1), date(2026, 9, 10)]
    assert "2026-07-01" in book.tables[1].note
    assert [t.off_peak is not None for t in book.tables] == [False, False, True]
    assert {m: book.family_of(m) for m in book.aliases} == {
        "deepseek-v4-flash": "flash",
        "deepseek-flash": "flash",
        "deepseek-chat": "flash",
        "deepseek-v4-pro": "pro",
        "deepseek-pro": "pro",
        "deepseek-reasoner": "pro",
    }


# ------------------------------------------------------------------------------------------------- properties


@given(
    hit=st.integers(0, 10**9),
    miss=st.integers(0, 10**9),
    out=st.integers(0, 10**9),
    minute=st.integers(0, 7 * 24 * 60 - 1),
)
def test_cost_is_exact_and_additive(hit: int, miss: int, out: int, minute: int) -> None:
    at = utc(2026, 9, 14) + timedelta(minutes=minute)
    usage = Usage(
        prompt_tokens=hit + miss,
        completion_tokens=out,
        prompt_cache_hit_tokens=hit,
        prompt_cache_miss_tokens=miss,
    )
    c = cost(usage, "deepseek-v4-flash", at)
    factor = Decimal(1) if c.period == "peak" else Decimal("0.5")
    assert c.hit * 10**6 == hit * Decimal("0.006") * factor
    assert c.miss * 10**6 == miss * Decimal("0.30") * factor
    assert c.output * 10**6 == out * Decimal("1.20") * factor
    assert c.total == c.hit + c.miss + c.output
