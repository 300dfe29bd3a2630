"""Every branch of the cache diagnostics pinned, field by field: what mutation testing (bench/mutation_score.py)
found unasserted (a changed prefix fingerprint, prefix_changed on a log rewrite, restore(), expected_hit() and the
hit < expected boundary)."""

from __future__ import annotations

from sessions.accounting.diagnostics import CACHE_UNIT_TOKENS, CacheTracker, RequestDiagnostics
from sessions.wire.messages import Usage


def _u(prompt: int, hit: int, completion: int = 0) -> Usage:
    return Usage(
        prompt_tokens=prompt,
        prompt_cache_hit_tokens=hit,
        prompt_cache_miss_tokens=prompt - hit,
        completion_tokens=completion,
    )


def _observe(
    t: CacheTracker, usage: Usage, *, model: str = "f", fp: str = "p", epoch: int = 0, why: str | None = None
) -> RequestDiagnostics:
    return t.observe(model=model, fingerprint=fp, epoch=epoch, rewrite_reason=why, usage=usage)


def test_every_field_of_a_first_and_an_append_only_request() -> None:
    t = CacheTracker()
    assert t.unit == CACHE_UNIT_TOKENS == 128 and t.hit_ratio == 0.0 and t.requests == 0
    first = _observe(t, _u(1000, 0, completion=7))
    assert first == RequestDiagnostics(
        request_index=1,
        model="f",
        prefix_fingerprint="p",
        log_epoch=0,
        prefix_changed=True,
        change_reason="first request of the session",
        prompt_tokens=1000,
        hit_tokens=0,
        miss_tokens=1000,
        completion_tokens=7,
        hit_ratio=0.0,
        cumulative_hit_ratio=0.0,
        expected_hit_tokens=0,
        unexplained_miss=False,
    )
    assert first.kind == "diagnostics"
    second = _observe(t, _u(1200, 896, completion=3))
    assert second.model_dump() == {
        "kind": "diagnostics",
        "request_index": 2,
        "model": "f",
        "prefix_fingerprint": "p",
        "log_epoch": 0,
        "prefix_changed": False,
        "change_reason": None,
        "prompt_tokens": 1200,
        "hit_tokens": 896,
        "miss_tokens": 304,
        "completion_tokens": 3,
        "hit_ratio": 896 / 1200,
        "cumulative_hit_ratio": 896 / 2200,
        "expected_hit_tokens": 896,
        "unexplained_miss": False,
    }
    assert (t.requests, t.prompt_tokens, t.hit_tokens) == (2, 2200, 896)


def test_a_hit_one_token_short_of_the_expected_is_an_unexplained_miss() -> None:
    t = CacheTracker()
    _observe(t, _u(1000, 0))  # expected next time: 896 (seven whole units of 128)
    short = _observe(t, _u(1100, 895))
    assert short.unexplained_miss and short.change_reason == "unexplained cache miss"
    assert short.expected_hit_tokens == 896 and not short.prefix_changed
    exact = _observe(t, _u(1200, 1024))  # the last request sent 1100: 1024 expected, exactly hit
    assert not exact.unexplained_miss and exact.change_reason is None and exact.expected_hit_tokens == 1024


def test_a_changed_prefix_fingerprint_is_a_changed_prefix() -> None:
    t = CacheTracker()
    _observe(t, _u(1000, 0))
    changed = _observe(t, _u(1000, 0), fp="q")
    assert changed.prefix_changed and changed.prefix_fingerprint == "q"
    assert changed.change_reason == "prefix changed (system prompt or tool schemas)"
    assert changed.expected_hit_tokens == 0 and not changed.unexplained_miss
    again = _observe(t, _u(1000, 0), fp="q")
    assert not again.prefix_changed and again.unexplained_miss  # "q" is the prefix now: a full miss is unexplained


def test_a_log_rewrite_changes_the_prefix_and_names_its_reason() -> None:
    t = CacheTracker()
    _observe(t, _u(1000, 0))
    named = _observe(t, _u(300, 0), epoch=1, why="compaction at 81% of the window")
    assert named.prefix_changed and named.log_epoch == 1
    assert named.change_reason == "log rewritten: compaction at 81% of the window"
    unnamed = _observe(t, _u(300, 0), epoch=2)
    assert unnamed.prefix_changed and unnamed.change_reason == "log rewritten: compaction"
    assert not unnamed.unexplained_miss
    settled = _observe(t, _u(400, 256), epoch=2)
    assert not settled.prefix_changed and settled.expected_hit_tokens == 256 and not settled.unexplained_miss


def test_a_models_first_request_is_explained_but_not_a_changed_prefix() -> None:
    t = CacheTracker()
    _observe(t, _u(1000, 0))
    other = _observe(t, _u(1000, 0), model="pro")
    assert not other.prefix_changed and not other.unexplained_miss and other.expected_hit_tokens == 0
    assert other.change_reason == "first request on pro (each model has its own cache)"
    back = _observe(t, _u(1100, 0))  # back on f: its last request (1000 tokens) is still expected
    assert back.unexplained_miss and back.expected_hit_tokens == 896


def test_expected_hit_is_the_last_requests_whole_units_on_that_model_prefix_and_epoch() -> None:
    t = CacheTracker(unit=100)
    assert t.expected_hit("f", "p", 0) == 0
    _observe(t, _u(1050, 0))
    assert t.expected_hit("f", "p", 0) == 1000
    assert t.expected_hit("pro", "p", 0) == 0
    assert t.expected_hit("f", "q", 0) == 0
    assert t.expected_hit("f", "p", 1) == 0
    assert _observe(t, _u(1100, 1000)).expected_hit_tokens == 1000


def test_request_index_numbers_a_request_and_the_count_goes_on_from_it() -> None:
    t = CacheTracker()
    assert _observe(t, _u(10, 0)).request_index == 1
    assert t.observe(model="f", fingerprint="p", epoch=0, rewrite_reason=None, usage=_u(10, 0), request_index=7)
    assert _observe(t, _u(10, 0)).request_index == 8


def test_restore_goes_on_from_the_journal_and_explains_the_first_request_after_it() -> None:
    earlier = CacheTracker()
    _observe(earlier, _u(1000, 0))
    journaled = _observe(earlier, _u(1000, 896))
    resumed = CacheTracker()
    resumed.restore(journaled)
    resumed.restore(_observe(CacheTracker(), _u(500, 0)))  # an older one: the numbering never goes back
    assert (resumed.requests, resumed.prompt_tokens, resumed.hit_tokens) == (2, 1500, 896)
    assert resumed.hit_ratio == 896 / 1500
    first = _observe(resumed, _u(1100, 0))
    assert first.request_index == 3 and first.prefix_changed and not first.unexplained_miss
    assert first.change_reason == "first request since the session was resumed (the server may have dropped its cache)"
    assert first.cumulative_hit_ratio == 896 / 2600


def test_a_request_without_prompt_tokens_has_a_zero_ratio() -> None:
    t = CacheTracker()
    empty = _observe(t, _u(0, 0))
    assert empty.hit_ratio == 0.0 and empty.cumulative_hit_ratio == 0.0
