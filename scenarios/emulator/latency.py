"""An optional latency model for wall-time benchmarks, per model: time to first token grows with the miss tokens,
then the output streams at a fixed rate. Tests never need it (the default is no latency at all).

A spec is ``off``, a preset name, or ``;``-separated sections: one without a model name sets the numbers every model
starts from, and ``MODEL:ttft=S,miss_ms_per_ktok=MS,tps=RATE`` overrides some of them for one model, e.g.
``flash:ttft=0.4,tps=80;pro:ttft=1.2,tps=35``. A section's model matches a request's model by full name
(``deepseek-v4-pro``), without the ``deepseek-`` prefix (``v4-pro``) or as its last dash-separated part(s) (``pro``).

The per-model numbers of ``realistic-models`` are assumptions, not measurements: DeepSeek publishes no latency
figures. They follow what the two tiers are sold as: flash answers as fast as ``realistic`` assumes (0.4 s to first
token, 80 tokens/s, 60 ms per 1,000 miss tokens of prefill); pro thinks on a bigger model, so 1.2 s to first token,
35 tokens/s and twice the prefill time. ``realistic`` keeps one set of numbers for every model, as before.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

PRESETS = {
    "realistic": "ttft=0.4,miss_ms_per_ktok=60,tps=80",
    "realistic-models": "ttft=0.4,miss_ms_per_ktok=60,tps=80;flash:ttft=0.4,miss_ms_per_ktok=60,tps=80;"
    "pro:ttft=1.2,miss_ms_per_ktok=120,tps=35",
}
FIELDS = ("ttft", "miss_ms_per_ktok", "tps")
USAGE = "use off, realistic, realistic-models, or [MODEL:]ttft=S,miss_ms_per_ktok=MS,tps=RATE sections joined by ;"


@dataclass(frozen=True, slots=True)
class LatencyModel:
    ttft: float = 0.4
    """Seconds before the first token of a request with no miss tokens."""
    miss_ms_per_ktok: float = 60.0
    """Extra milliseconds of prefill per 1000 miss tokens."""
    tps: float = 80.0
    """Output chunks (about one token each) per second."""
    per_model: tuple[tuple[str, LatencyModel], ...] = field(default=())
    """Models with numbers of their own (name as written in the spec, and its numbers); others use the above."""

    def first_token_delay(self, miss_tokens: int) -> float:
        return self.ttft + miss_tokens / 1000 * self.miss_ms_per_ktok / 1000

    @property
    def chunk_delay(self) -> float:
        return 1.0 / self.tps if self.tps > 0 else 0.0

    def for_model(self, model: str) -> LatencyModel:
        """The numbers for requests to ``model`` (these ones when it has none of its own)."""
        short = model.removeprefix("deepseek-")
        for name, numbers in self.per_model:
            if name in (model, short) or model.endswith("-" + name):
                return numbers
        return self

    @classmethod
    def parse(cls, spec: str) -> LatencyModel | None:
        """``off``, a preset (``realistic``, ``realistic-models``), or sections as the module docstring says."""
        spec = PRESETS.get(spec.strip(), spec.strip())
        if spec in ("", "off", "none"):
            return None
        base = cls()
        models: dict[str, dict[str, float]] = {}
        for section in (s.strip() for s in spec.split(";")):
            if not section:
                continue
            name, colon, numbers = section.rpartition(":")
            fields = _fields(numbers)
            if not colon:
                base = _with(base, fields)
            elif not name.strip():
                raise ValueError(f"latency section {section!r} has an empty model name: {USAGE}")
            else:
                models.setdefault(name.strip(), {}).update(fields)
        own = tuple((name, _with(base, fields)) for name, fields in models.items())
        return replace(base, per_model=own)


def _with(base: LatencyModel, fields: dict[str, float]) -> LatencyModel:
    return LatencyModel(
        ttft=fields.get("ttft", base.ttft),
        miss_ms_per_ktok=fields.get("miss_ms_per_ktok", base.miss_ms_per_ktok),
        tps=fields.get("tps", base.tps),
    )


def _fields(text: str) -> dict[str, float]:
    fields: dict[str, float] = {}
    for part in text.split(","):
        name, sep, value = part.partition("=")
        name = name.strip()
        if not sep or name not in FIELDS:
            raise ValueError(f"bad latency setting {part!r}: {USAGE}")
        try:
            fields[name] = float(value)
        except ValueError:
            raise ValueError(f"latency setting {name} needs a number, not {value!r}") from None
        if fields[name] < 0:
            raise ValueError(f"latency setting {name} cannot be negative")
    return fields
