"""The emulator's cache accounting, unit by unit, on hand-made segments: what mutation testing
(bench/mutation_score.py) found no test pinning in scenarios/emulator/cache.py and accounting.py."""

from __future__ import annotations

from array import array

import pytest

from scenarios.emulator.accounting import Accountant
from scenarios.emulator.cache import CacheBook, Lookup, PrefixStore, common_token_prefix
from scenarios.emulator.render import Segment


def tok(*ids: int) -> bytes:
    return array("I", ids).tobytes()


def seg(name: str, *ids: int) -> Segment:
    return Segment(digest=name.encode(), tokens=tok(*ids), count=len(ids))


def test_common_token_prefix_counts_whole_shared_tokens() -> None:
    assert common_token_prefix(tok(1, 2, 3), tok(1, 2, 3)) == 3
    assert common_token_prefix(tok(1, 2, 3), tok(1, 2)) == 2
    assert common_token_prefix(tok(1, 2), tok(1, 2, 3)) == 2
    assert common_token_prefix(tok(1, 2, 3, 4, 5), tok(1, 2, 3, 9, 5)) == 3
    assert common_token_prefix(tok(7, 2), tok(8, 2)) == 0
    assert common_token_prefix(tok(1, 2, 0x0101), tok(1, 2, 0x0201)) == 2  # a token that differs in its 2nd byte
    assert common_token_prefix(b"", tok(1)) == 0
    many = list(range(1, 1000))
    assert common_token_prefix(tok(*many), tok(*many[:777], 0, *many[778:])) == 777


def test_a_store_needs_a_unit_of_at_least_one_token() -> None:
    with pytest.raises(ValueError) as raised:
        PrefixStore(0)
    assert str(raised.value) == "the cache unit must be at least one token, not 0"
    assert PrefixStore(1).unit == 1


def test_a_lookup_hits_the_longest_stored_prefix_rounded_down_to_the_unit() -> None:
    store = PrefixStore(4)
    a, b, c = seg("a", *range(1, 6)), seg("b", *range(10, 17)), seg("c", 99, 98)
    assert store.lookup([a, b]) == Lookup(prompt_tokens=12, hit_tokens=0, ideal_hit_tokens=0)
    store.store([a, b])
    assert store.paths == 1
    assert store.lookup([a, b, c]) == Lookup(prompt_tokens=14, hit_tokens=12, ideal_hit_tokens=12)
    assert store.lookup([a]) == Lookup(prompt_tokens=5, hit_tokens=4, ideal_hit_tokens=5)
    b_changed = seg("b2", 10, 11, 12, 0, 14)  # shares three tokens with b
    assert store.lookup([a, b_changed]) == Lookup(prompt_tokens=10, hit_tokens=8, ideal_hit_tokens=8)
    assert store.lookup([a, b_changed]).miss_tokens == 2
    assert store.lookup([c, a]) == Lookup(prompt_tokens=7, hit_tokens=0, ideal_hit_tokens=0)


def test_the_best_of_the_stored_siblings_counts_and_the_walk_stops_at_the_first_miss() -> None:
    store = PrefixStore(1)
    root, x, y = seg("r", 1, 2), seg("x", 5, 6, 7), seg("y", 5, 6, 8, 9)
    store.store([root, x])
    store.store([root, y])
    assert store.paths == 2
    probe = seg("p", 5, 6, 8, 0)
    assert store.lookup([root, probe]).ideal_hit_tokens == 2 + 3
    assert store.lookup([root, probe, x]).ideal_hit_tokens == 2 + 3  # nothing after the segment that left the trie


def test_each_stored_segment_is_a_node_of_its_own() -> None:
    store = PrefixStore(1)
    a = seg("a", 1, 2, 3)
    store.store([a])
    assert store.lookup([a, a]).ideal_hit_tokens == 3  # only [a] was stored, not [a, a]
    store.store([a])
    assert store.paths == 2 and store.lookup([a, a]).ideal_hit_tokens == 3
    store.store([a, a])
    assert store.lookup([a, a, a]).ideal_hit_tokens == 6


def test_each_model_has_its_own_store_and_clear_forgets_them_all() -> None:
    book = CacheBook(8)
    flash = book.store_for("flash")
    assert book.store_for("flash") is flash and book.store_for("pro") is not flash
    assert flash.unit == 8 and book.unit == 8
    a = seg("a", *range(16))
    flash.store([a])
    assert book.store_for("pro").lookup([a]).hit_tokens == 0
    assert book.store_for("flash").lookup([a]).hit_tokens == 16
    book.clear()
    assert book.store_for("flash").lookup([a]).hit_tokens == 0


def test_the_accountant_stores_each_input_and_each_input_with_its_reply() -> None:
    accountant = Accountant(unit=1)
    assert accountant.unit == 1
    body = {"model": "m", "messages": [{"role": "user", "content": "hello there, how are you"}]}
    first, segments = accountant.account_input("m", body, thinking=False)
    assert first.hit_tokens == 0 and first.prompt_tokens == sum(s.count for s in segments) > 0
    again, _ = accountant.account_input("m", body, thinking=False)
    assert again.hit_tokens == again.prompt_tokens
    other, _ = accountant.account_input("other", body, thinking=False)
    assert other.hit_tokens == 0
    out = accountant.account_output("m", segments, reasoning="think", content="fine", calls=[])
    assert out.count > 0
    follow = {
        "model": "m",
        "messages": [*body["messages"], {"role": "assistant", "content": "fine"}, {"role": "user", "content": "ok"}],
    }
    then, _ = accountant.account_input("m", follow, thinking=False)
    assert then.hit_tokens > again.hit_tokens
    accountant.clear()
    assert accountant.account_input("m", body, thinking=False)[0].hit_tokens == 0
    assert Accountant().unit == 128
