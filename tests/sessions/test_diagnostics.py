from sessions.accounting.diagnostics import CacheTracker
from sessions.prompt.tail import TailBlock, compose_user_turn
from sessions.wire.messages import Usage


def _u(prompt: int, hit: int) -> Usage:
    return Usage(prompt_tokens=prompt, prompt_cache_hit_tokens=hit, prompt_cache_miss_tokens=prompt - hit)


def test_first_request_and_appends_are_explained() -> None:
    t = CacheTracker()
    d1 = t.observe(model="f", fingerprint="p", epoch=0, rewrite_reason=None, usage=_u(1000, 0))
    assert d1.prefix_changed and d1.change_reason == "first request of the session"
    d2 = t.observe(model="f", fingerprint="p", epoch=0, rewrite_reason=None, usage=_u(1300, 1024))
    assert not d2.prefix_changed and not d2.unexplained_miss and d2.expected_hit_tokens == 896
    assert abs(t.hit_ratio - 1024 / 2300) < 1e-12


def test_an_unexplained_miss_is_flagged() -> None:
    t = CacheTracker()
    t.observe(model="f", fingerprint="p", epoch=0, rewrite_reason=None, usage=_u(1000, 0))
    d = t.observe(model="f", fingerprint="p", epoch=0, rewrite_reason=None, usage=_u(1100, 0))
    assert d.unexplained_miss and d.change_reason == "unexplained cache miss"


def test_compaction_and_model_switch_explain_misses() -> None:
    t = CacheTracker()
    t.observe(model="f", fingerprint="p", epoch=0, rewrite_reason=None, usage=_u(1000, 0))
    d = t.observe(
        model="f", fingerprint="p", epoch=1, rewrite_reason="compaction at 81% of the window", usage=_u(300, 0)
    )
    assert d.change_reason == "log rewritten: compaction at 81% of the window" and not d.unexplained_miss
    d = t.observe(model="pro", fingerprint="p", epoch=1, rewrite_reason=None, usage=_u(400, 0))
    assert d.change_reason is not None and "first request on pro" in d.change_reason


def test_tail_blocks_go_in_front_of_the_user_text() -> None:
    text = compose_user_turn(
        "do step S2", [TailBlock(tag="active-goal", body="ship it "), TailBlock(tag="plan-mode", body="on")]
    )
    assert text == "<active-goal>\nship it\n</active-goal>\n\n<plan-mode>\non\n</plan-mode>\n\ndo step S2"
