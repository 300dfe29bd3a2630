"""``[context]``: how a long conversation is kept inside its context window (DESIGN §3.6): one tier (compaction at
``compact_ratio``) or, with ``tiers``, snip / compact / force with the originals archived and ``recall``."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, model_validator

from orchestrator.config.field_trust import anything


class ContextConfig(BaseModel):
    """How a long conversation is kept inside its context window (DESIGN §3.6)."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    tiers: bool = Field(False, json_schema_extra=anything())
    """Snip stale large tool results when it pays, compact, force; originals archived, the ``recall`` tool added.
    Off (the default): one tier, compaction at ``compact_ratio``, the prefix without ``recall``."""
    snip_ratio: float = Field(0.6, gt=0, le=1, allow_inf_nan=False, json_schema_extra=anything())
    """With tiers: past this share of the window, stale large tool results are snipped when that pays."""
    compact_ratio: float = Field(0.8, gt=0, le=1, allow_inf_nan=False, json_schema_extra=anything())
    """Past this share of the window, the older part of the log is compacted (with or without tiers)."""
    force_ratio: float = Field(0.9, gt=0, le=1, allow_inf_nan=False, json_schema_extra=anything())
    """With tiers: past this share, old tool results collapse to placeholders without a request."""

    @model_validator(mode="after")
    def _in_order(self) -> ContextConfig:
        if self.tiers and not self.snip_ratio <= self.compact_ratio <= self.force_ratio:
            raise ValueError("with tiers on, snip_ratio <= compact_ratio <= force_ratio")
        return self

    def session_fields(self) -> dict[str, bool | float]:
        """The ``SessionSettings`` fields these set."""
        return {
            "tiers": self.tiers,
            "snip_ratio": self.snip_ratio,
            "compaction_ratio": self.compact_ratio,
            "force_ratio": self.force_ratio,
        }
