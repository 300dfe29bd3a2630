"""The accounting layer: render a request, look its prefix up in the model's store, remember what was sent and
generated. This is what ``bench/emulator_bench.py`` times."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from scenarios.emulator.cache import CacheBook, Lookup
from scenarios.emulator.render import Segment, SegmentCache, render_assistant, render_request


class Accountant:
    def __init__(self, unit: int = 128) -> None:
        self.segments = SegmentCache()
        self.book = CacheBook(unit)

    @property
    def unit(self) -> int:
        return self.book.unit

    def input_segments(self, body: Mapping[str, Any], *, thinking: bool) -> list[Segment]:
        return self.segments.segments(render_request(body, thinking=thinking))

    def account_input(
        self,
        model: str,
        body: Mapping[str, Any],
        *,
        thinking: bool,
        segments: list[Segment] | None = None,
    ) -> tuple[Lookup, list[Segment]]:
        """Hits of this request against what came before, then store its input as a prefix unit. ``segments``: the
        request's input segments when the caller already rendered them (the context-window check did)."""
        segs = self.input_segments(body, thinking=thinking) if segments is None else segments
        store = self.book.store_for(model)
        lookup = store.lookup(segs)
        store.store(segs)
        return lookup, segs

    def account_output(
        self,
        model: str,
        input_segments: Sequence[Segment],
        *,
        reasoning: str,
        content: str,
        calls: Sequence[tuple[str, str]],
    ) -> Segment:
        """Store input + output (the reply rendered as it will be re-sent); returns the output segment."""
        out = self.segments.segment(render_assistant(reasoning, content, calls))
        self.book.store_for(model).store([*input_segments, out])
        return out

    def clear(self) -> None:
        self.book.clear()
