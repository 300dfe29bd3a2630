"""Where the recorded DeepSeek responses live for tests.

They are copied from ``../shared/deepseek-wire/`` (provenance in its README, also copied) so the suite runs in any
clone; ``test_wire_samples_match_shared`` checks the copies against the shared originals whenever those are present.
"""

from pathlib import Path

WIRE = Path(__file__).resolve().parent / "fixtures" / "deepseek-wire"
SHARED_WIRE = Path(__file__).resolve().parents[2] / "shared" / "deepseek-wire"
