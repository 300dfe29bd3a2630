"""Prefix-cache accounting, per model, the way DeepSeek describes its cache (DESIGN §4, §6).

What is stored: every request's input and every input + output (the reply rendered as it will be re-sent) become a
path of segments in a trie. Along each stored path the real server keeps prefix units at every ``unit`` tokens and
at the path's end. A new request hits the longest stored unit that is a prefix of it, and DeepSeek reports hits in
whole multiples of the unit, so:

* ``ideal`` = the longest token prefix the request shares with anything sent or generated before (no rounding);
* ``hit`` = ``ideal`` rounded down to a multiple of ``unit``. Every multiple of the unit up to a path's length is a
  stored unit of that path, and a path's end unit is never longer than ``ideal``, so rounding ``ideal`` down is
  exactly "the longest stored unit that is a prefix", rounded down.

Cost: a request is a walk over its segments with one dict lookup each (segments are memoized, so their digests are
too); only the first segment that
leaves the trie is compared token by token (memcmp on token bytes) with its stored siblings.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from scenarios.emulator.render import Segment

_TOKEN_BYTES = 4


def common_token_prefix(a: bytes, b: bytes) -> int:
    """Number of leading tokens two token byte strings share (binary search over memcmp'd slices)."""
    n = min(len(a), len(b))
    if a[:n] == b[:n]:
        return n // _TOKEN_BYTES
    lo, hi = 0, n  # a[:lo] == b[:lo], a[:hi] != b[:hi]
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid
    return lo // _TOKEN_BYTES


@dataclass(frozen=True, slots=True)
class Lookup:
    prompt_tokens: int
    hit_tokens: int
    ideal_hit_tokens: int

    @property
    def miss_tokens(self) -> int:
        return self.prompt_tokens - self.hit_tokens


class PrefixStore:
    """The stored prefixes of one model: a trie whose edges are segments (node 0 is the empty prefix)."""

    def __init__(self, unit: int) -> None:
        if unit < 1:
            raise ValueError(f"the cache unit must be at least one token, not {unit}")
        self.unit = unit
        self._edges: dict[tuple[int, bytes], int] = {}
        self._children: dict[int, list[Segment]] = {}
        self.paths = 0

    def lookup(self, segments: Sequence[Segment]) -> Lookup:
        total = sum(s.count for s in segments)
        node, matched = 0, 0
        edges = self._edges
        for seg in segments:
            child = edges.get((node, seg.digest))
            if child is not None:
                matched += seg.count
                node = child
                continue
            siblings = self._children.get(node, ())
            matched += max((common_token_prefix(seg.tokens, s.tokens) for s in siblings), default=0)
            break
        return Lookup(prompt_tokens=total, hit_tokens=matched - matched % self.unit, ideal_hit_tokens=matched)

    def store(self, segments: Sequence[Segment]) -> None:
        """Remember a path (a request's input, or input + output)."""
        node = 0
        edges = self._edges
        for seg in segments:
            key = (node, seg.digest)
            child = edges.get(key)
            if child is None:
                child = edges[key] = len(edges) + 1
                self._children.setdefault(node, []).append(seg)
            node = child
        self.paths += 1


class CacheBook:
    """One :class:`PrefixStore` per model (DeepSeek's cache is presumed per model)."""

    def __init__(self, unit: int) -> None:
        self.unit = unit
        self._stores: dict[str, PrefixStore] = {}

    def store_for(self, model: str) -> PrefixStore:
        store = self._stores.get(model)
        if store is None:
            store = self._stores[model] = PrefixStore(self.unit)
        return store

    def clear(self) -> None:
        self._stores.clear()
