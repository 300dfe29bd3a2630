import pytest

from .wire_samples import SHARED_WIRE, WIRE


def test_wire_samples_match_shared() -> None:
    if not SHARED_WIRE.is_dir():
        pytest.skip(f"{SHARED_WIRE} is not beside this clone; the copies in {WIRE} are used")
    for original in SHARED_WIRE.iterdir():
        assert (WIRE / original.name).read_bytes() == original.read_bytes(), original.name
