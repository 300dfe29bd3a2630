"""The streaming marker detector: split-independent, bounded hold-back, eager release, never leaks a marker."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from orchestrator.policy.marker import MarkerDetector, find_marker

HOLD = 256


def _run(parts: list[str], hold: int = HOLD) -> tuple[MarkerDetector, list[str], int]:
    """Feed ``parts``; return the detector, what was released, and the most it ever held after a feed."""
    det = MarkerDetector(hold)
    released: list[str] = []
    most_held = 0
    for part in parts:
        released.append(det.feed(part))
        most_held = max(most_held, len(det.held))
        if det.decision == "marker":
            break
    released.append(det.finish())
    return det, released, most_held


@st.composite
def split(draw: st.DrawFn, text: str) -> list[str]:
    cuts = sorted(draw(st.sets(st.integers(min_value=1, max_value=max(1, len(text) - 1)), max_size=12)))
    bounds = [0, *[c for c in cuts if c < len(text)], len(text)]
    return [text[a:b] for a, b in itertools.pairwise(bounds) if b > a]


_blank = st.text(alphabet=" \n\t", max_size=4)
_reason = st.text(alphabet=st.characters(exclude_characters=">"), max_size=300)
_markers = st.one_of(
    st.builds(lambda ws, sp: f"{ws}<<<NEEDS_PRO{sp}>>>", _blank, st.sampled_from(["", " "])),
    st.builds(lambda ws, r: f"{ws}<<<NEEDS_PRO: {r}>>>", _blank, _reason),
)
_near_misses = st.sampled_from(
    ["<<<NEEDS_PR", "<<<NEEDS_PRO", "<<<NEEDS_PRO:", "<<<NEEDS_PRO>>", "<<<NEEDS_PROFESSIONAL>>>", "<<NEEDS_PRO>>>"]
)
_contents = st.one_of(
    st.builds(lambda m, rest: m + rest, _markers, st.text(max_size=60)),
    st.builds(lambda m, rest: m + rest, _near_misses, st.text(max_size=60)),
    st.text(max_size=400),
    st.builds(lambda ws, t: ws + t, _blank, st.text(alphabet="<>:NEDS_PRO ", max_size=40)),
)


@settings(max_examples=400, deadline=None)
@given(data=st.data(), content=_contents)
def test_any_split_gives_the_same_decision_and_never_leaks_a_marker(data: st.DataObject, content: str) -> None:
    parts = data.draw(split(content))
    det, released, most_held = _run(parts)
    whole, whole_released, _ = _run([content])
    expected = find_marker(content, HOLD)
    assert det.decision == whole.decision == ("marker" if expected else "none")
    assert det.reason == whole.reason
    assert most_held < HOLD
    if expected is not None:
        assert "".join(released) == ""  # nothing of the marker (or after it) was shown
        assert det.received_chars <= len(content)
    else:
        assert "".join(released) == content == "".join(whole_released)  # everything shown, in order, once


@settings(max_examples=200, deadline=None)
@given(text=st.text(min_size=1, max_size=50).filter(lambda t: not t.lstrip().startswith("<") and t.strip() != ""))
def test_text_that_cannot_start_a_marker_is_released_at_once(text: str) -> None:
    det = MarkerDetector()
    # The first non-blank character settles it: everything fed so far comes straight back.
    first = len(text) - len(text.lstrip()) + 1
    assert det.feed(text[:first]) == text[:first]
    assert det.decision == "none"
    assert det.feed(text[first:]) == text[first:]


def test_a_diverging_prefix_is_released_as_soon_as_it_diverges() -> None:
    det = MarkerDetector()
    assert det.feed("<<<NEE") == ""
    assert det.feed("D") == ""
    assert det.feed("LESS") == "<<<NEEDLESS"
    assert det.decision == "none"


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        ("<<<NEEDS_PRO>>>", ""),
        ("  \n<<<NEEDS_PRO: the proof needs  care\n>>> then more", "the proof needs care"),
        ("<<<NEEDS_PRO :x>>>>", "x"),
    ],
)
def test_markers_and_their_reasons(content: str, reason: str) -> None:
    det, released, _ = _run(list(content))
    assert det.decision == "marker" and det.reason == reason and released == [""] * len(released)


def test_a_marker_mentioned_later_is_ordinary_text() -> None:
    det, released, _ = _run(["Done. If stuck, say <<<NEEDS_PRO>>>."])
    assert det.decision == "none" and "".join(released) == "Done. If stuck, say <<<NEEDS_PRO>>>."


def test_a_reason_that_runs_past_the_limit_is_no_marker_and_is_shown() -> None:
    content = "<<<NEEDS_PRO: " + "x" * 300 + ">>>"
    det = MarkerDetector()
    out = [det.feed(c) for c in content]
    assert det.decision == "none"
    assert "".join(out) == content
    first = next(i for i, o in enumerate(out) if o)
    assert first == 255  # released on the character that reached the limit, not before, not after


def test_an_unfinished_marker_at_the_end_of_the_content_is_shown() -> None:
    det = MarkerDetector()
    assert det.feed("<<<NEEDS_PRO: hm") == ""
    assert det.finish() == "<<<NEEDS_PRO: hm"
    assert det.decision == "none"
