"""An optional latency model for wall-time benchmarks: time to first token grows with the miss tokens, then the
output streams at a fixed rate. Tests never need it (the default is no latency at all)."""

from __future__ import annotations

from dataclasses import dataclass

PRESETS = {"realistic": "ttft=0.4,miss_ms_per_ktok=60,tps=80"}


@dataclass(frozen=True, slots=True)
class LatencyModel:
    ttft: float = 0.4
    """Seconds before the first token of a request with no miss tokens."""
    miss_ms_per_ktok: float = 60.0
    """Extra milliseconds of prefill per 1000 miss tokens."""
    tps: float = 80.0
    """Output chunks (about one token each) per second."""

    def first_token_delay(self, miss_tokens: int) -> float:
        return self.ttft + miss_tokens / 1000 * self.miss_ms_per_ktok / 1000

    @property
    def chunk_delay(self) -> float:
        return 1.0 / self.tps if self.tps > 0 else 0.0

    @classmethod
    def parse(cls, spec: str) -> LatencyModel | None:
        """``off``, ``realistic``, or ``ttft=SECONDS,miss_ms_per_ktok=MS,tps=RATE`` (any subset)."""
        spec = PRESETS.get(spec.strip(), spec.strip())
        if spec in ("", "off", "none"):
            return None
        fields: dict[str, float] = {}
        for part in spec.split(","):
            name, sep, value = part.partition("=")
            name = name.strip()
            if not sep or name not in ("ttft", "miss_ms_per_ktok", "tps"):
                raise ValueError(
                    f"bad latency setting {part!r}: use off, realistic, or ttft=S,miss_ms_per_ktok=MS,tps=RATE"
                )
            try:
                fields[name] = float(value)
            except ValueError:
                raise ValueError(f"latency setting {name} needs a number, not {value!r}") from None
            if fields[name] < 0:
                raise ValueError(f"latency setting {name} cannot be negative")
        return cls(**fields)
