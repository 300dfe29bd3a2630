"""What a request cost, in USD, exact to the token.

DeepSeek's prices change every few months, so they live as dated data (``sessions/data/prices.json``), never in code.
Each table takes effect at 00:00 UTC on its ``effective_from`` date and lists the prices (USD per 1 M tokens) of the
model *families* it covers: cache-hit input, cache-miss input, output. A family a table does not list keeps its price
from the newest earlier table that does. A table may carry an off-peak discount: outside its peak windows (UTC, by
weekday) every price is multiplied by ``off_peak.multiplier``; a table without ``off_peak`` is flat.

Model ids map to families through the ``aliases`` of the data (``deepseek-chat`` → ``flash`` ...). Configuration may
add an override table (:meth:`PriceBook.with_overrides`) that always wins for the families it names; a family name may
also be a model id, which is how an unknown model gets a price.

All arithmetic is :class:`decimal.Decimal`; ``float(breakdown)`` is a convenience for display.
"""

from __future__ import annotations

import dataclasses
import functools
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time
from decimal import Decimal, localcontext
from importlib import resources
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from sessions.wire.messages import Usage

Weekday = Literal["mon", "tue", "wed", "thu", "fri", "sat", "sun"]
WEEKDAYS: tuple[Weekday, ...] = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
Period = Literal["peak", "off-peak", "flat"]

MILLION = Decimal(1_000_000)
UNPRICED = "unpriced"
"""The family of a model the configuration names without a price."""


class PriceError(Exception):
    """Base of the price errors."""


class UnknownModelPriceError(PriceError, LookupError):
    """A model id with no known price: the user's configuration must name one."""

    def __init__(self, model: str, known: list[str]) -> None:
        self.model = model
        super().__init__(
            f"no price for model {model!r}; known model ids: {', '.join(known)}. "
            f"Add a price override to reasonix.toml, either mapping it to a known family:\n"
            f'  [prices.aliases]\n  "{model}" = "flash"\n'
            f"or giving it its own prices in USD per 1M tokens:\n"
            f'  [prices.families."{model}"]\n  hit = 0.006\n  miss = 0.30\n  output = 1.20'
        )


class NoPriceTableError(PriceError, LookupError):
    """No table was in force for that family at that time (a clock before the first table)."""


class PriceDataError(PriceError):
    """The shipped price data is unreadable: the installation is broken."""


# ------------------------------------------------------------------------------------------------------ the data


class _Strict(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class FamilyPrice(_Strict):
    """USD per 1 M tokens."""

    hit: Decimal = Field(ge=0)
    miss: Decimal = Field(ge=0)
    output: Decimal = Field(ge=0)


class PeakWindow(_Strict):
    """``start <= time-of-day < end`` in UTC, on the listed weekdays."""

    days: tuple[Weekday, ...]
    start: time
    end: time

    @model_validator(mode="after")
    def _ordered(self) -> PeakWindow:
        if not self.start < self.end:
            raise ValueError(f"a peak window must start before it ends ({self.start} >= {self.end})")
        return self

    def contains(self, at: datetime) -> bool:
        return WEEKDAYS[at.weekday()] in self.days and self.start <= at.time() < self.end


class OffPeak(_Strict):
    multiplier: Decimal = Field(gt=0, le=1)
    peak_windows_utc: tuple[PeakWindow, ...]

    def period(self, at: datetime) -> Period:
        return "peak" if any(w.contains(at) for w in self.peak_windows_utc) else "off-peak"


class PriceTable(_Strict):
    effective_from: date | None
    """``None`` only for a configuration override, which is in force at all times."""
    note: str = ""
    families: dict[str, FamilyPrice]
    off_peak: OffPeak | None = None

    def period(self, at: datetime) -> Period:
        return "flat" if self.off_peak is None else self.off_peak.period(at)


class PriceData(_Strict):
    format_version: Literal[1]
    currency: Literal["USD"]
    unit: str
    source: str = ""
    aliases: dict[str, str]
    tables: tuple[PriceTable, ...]


# ------------------------------------------------------------------------------------------------------ the cost


@dataclass(frozen=True)
class CostBreakdown:
    """The cost of one usage, per component. Amounts are exact Decimals in USD."""

    model: str
    family: str
    table_from: date | None
    """The ``effective_from`` of the table used; ``None`` for a configuration override."""
    period: Period
    hit_tokens: int
    miss_tokens: int
    output_tokens: int
    hit: Decimal
    miss: Decimal
    output: Decimal
    total: Decimal = field(init=False)

    def __post_init__(self) -> None:
        with localcontext() as ctx:
            ctx.prec = 60
            object.__setattr__(self, "total", self.hit + self.miss + self.output)

    def __float__(self) -> float:
        return float(self.total)


def _utc(at: datetime) -> datetime:
    if at.tzinfo is None or at.utcoffset() is None:
        raise ValueError(f"prices need an aware datetime (with a time zone), got naive {at.isoformat()}")
    return at.astimezone(UTC)


@dataclass(frozen=True)
class PriceBook:
    """Dated tables, the model-id aliases, and an optional override table that always wins."""

    tables: tuple[PriceTable, ...]
    aliases: Mapping[str, str]
    override: PriceTable | None = None
    unpriced: frozenset[str] = frozenset()
    """Model ids the configuration names without a price (a provider entry with none): their requests cost an
    unknown amount, counted as $0, and a dollar budget refuses to run on them (the front end checks first)."""

    def __post_init__(self) -> None:
        undated = [t for t in self.tables if t.effective_from is None]
        if undated:
            raise PriceDataError("every dated price table needs an effective_from date")
        object.__setattr__(self, "tables", tuple(sorted(self.tables, key=lambda t: t.effective_from or date.min)))

    def _families(self) -> set[str]:
        names = {f for t in self.tables for f in t.families}
        if self.override is not None:
            names |= set(self.override.families)
        return names

    def family_of(self, model: str) -> str:
        """The price family of a model id; a family name is its own family (that is how overrides price new ids)."""
        family = self.aliases.get(model)
        if family is not None:
            return family
        if model in self._families():
            return model
        raise UnknownModelPriceError(model, sorted(self.aliases))

    def knows(self, model: str) -> bool:
        """Whether ``model`` has a price (or is one of the :attr:`unpriced`)."""
        if model in self.unpriced:
            return True
        try:
            self.family_of(model)
        except UnknownModelPriceError:
            return False
        return True

    def is_unpriced(self, model: str) -> bool:
        """Whether ``model`` is one the configuration left without a price."""
        return model in self.unpriced and not (model in self.aliases or model in self._families())

    def with_unpriced(self, models: frozenset[str]) -> PriceBook:
        """This book, with ``models`` known as unpriced (their cost counted as $0, see :attr:`unpriced`)."""
        return dataclasses.replace(self, unpriced=self.unpriced | models)

    def table_for(self, model: str, at: datetime) -> tuple[str, PriceTable]:
        """The family of ``model`` and the table that prices it at ``at``."""
        family = self.family_of(model)
        if self.override is not None and family in self.override.families:
            return family, self.override
        day = _utc(at).date()
        in_force = [t for t in self.tables if family in t.families and (t.effective_from or date.max) <= day]
        if not in_force:
            if not any(family in t.families for t in self.tables):
                raise UnknownModelPriceError(model, sorted(self.aliases))
            first = min(t.effective_from or date.max for t in self.tables if family in t.families)
            raise NoPriceTableError(
                f"no {family} prices in force on {day.isoformat()}: the earliest table starts {first.isoformat()}; "
                "check the system clock, or add a price override to reasonix.toml ([prices.families.<family>])"
            )
        return family, in_force[-1]

    def cost(self, usage: Usage, model: str, at: datetime) -> CostBreakdown:
        """What ``usage`` on ``model`` cost at ``at`` (an aware datetime; the time the request was sent).

        Hit and miss input tokens are priced separately. A usage that reports prompt tokens but no hit/miss split
        is priced as all misses (the conservative reading). Output is ``completion_tokens``, reasoning included.
        """
        if self.is_unpriced(model):
            prompt = usage.prompt_tokens
            hit = usage.prompt_cache_hit_tokens
            return CostBreakdown(
                model=model,
                family=UNPRICED,
                table_from=None,
                period="flat",
                hit_tokens=hit,
                miss_tokens=usage.prompt_cache_miss_tokens or prompt - hit,
                output_tokens=usage.completion_tokens,
                hit=Decimal(0),
                miss=Decimal(0),
                output=Decimal(0),
            )
        family, table = self.table_for(model, at)
        price = table.families[family]
        period = table.period(_utc(at))
        hit_tokens = usage.prompt_cache_hit_tokens
        miss_tokens = usage.prompt_cache_miss_tokens
        if hit_tokens + miss_tokens == 0:
            miss_tokens = usage.prompt_tokens
        output_tokens = usage.completion_tokens
        with localcontext() as ctx:
            ctx.prec = 60
            factor = table.off_peak.multiplier if period == "off-peak" and table.off_peak is not None else Decimal(1)
            return CostBreakdown(
                model=model,
                family=family,
                table_from=table.effective_from,
                period=period,
                hit_tokens=hit_tokens,
                miss_tokens=miss_tokens,
                output_tokens=output_tokens,
                hit=hit_tokens * price.hit * factor / MILLION,
                miss=miss_tokens * price.miss * factor / MILLION,
                output=output_tokens * price.output * factor / MILLION,
            )

    def with_overrides(
        self,
        families: Mapping[str, FamilyPrice],
        aliases: Mapping[str, str] | None = None,
        off_peak_multiplier: Decimal | None = None,
    ) -> PriceBook:
        """A book whose override table wins for ``families`` at all times.

        Override prices are flat unless ``off_peak_multiplier`` is given; then the peak windows are those of the
        newest dated table that has any. ``aliases`` map further model ids to families (their own or the data's).
        """
        off_peak: OffPeak | None = None
        if off_peak_multiplier is not None:
            windowed = [t.off_peak for t in self.tables if t.off_peak is not None]
            if not windowed:
                raise PriceDataError("an off-peak multiplier was given but no price table defines peak windows")
            off_peak = OffPeak(multiplier=off_peak_multiplier, peak_windows_utc=windowed[-1].peak_windows_utc)
        merged_families = dict(self.override.families) if self.override is not None else {}
        merged_families.update(families)
        override = PriceTable(
            effective_from=None, note="configuration override", families=merged_families, off_peak=off_peak
        )
        merged_aliases = {**self.aliases, **(aliases or {})}
        book = PriceBook(tables=self.tables, aliases=merged_aliases, override=override, unpriced=self.unpriced)
        known = book._families()
        for alias, family in (aliases or {}).items():
            if family not in known:
                raise UnknownModelPriceError(alias, sorted(merged_aliases))
        return book


# ---------------------------------------------------------------------------------------------------- the default


def parse_price_data(text: str) -> PriceBook:
    try:
        data = PriceData.model_validate(json.loads(text))
    except (ValueError, ValidationError) as exc:
        raise PriceDataError(f"the price data is invalid: {exc}; reinstall reasonix") from exc
    known = {f for t in data.tables for f in t.families}
    bad = {m: f for m, f in data.aliases.items() if f not in known}
    if bad:
        raise PriceDataError(f"the price data maps model ids to families without prices: {bad}")
    return PriceBook(tables=data.tables, aliases=data.aliases)


@functools.cache
def default_price_book() -> PriceBook:
    """The tables shipped with this package (``sessions/data/prices.json``), read once."""
    try:
        text = resources.files("sessions").joinpath("data/prices.json").read_text(encoding="utf-8")
    except OSError as exc:
        raise PriceDataError(f"the price data is missing ({exc}); reinstall reasonix") from exc
    return parse_price_data(text)


def cost(usage: Usage, model: str, at: datetime, *, book: PriceBook | None = None) -> CostBreakdown:
    """What ``usage`` on ``model`` cost at ``at``, from ``book`` (default: the shipped tables)."""
    return (book or default_price_book()).cost(usage, model, at)
