"""Where the recorded DeepSeek responses live for tests: real responses, provenance in the folder's README."""

from pathlib import Path

WIRE = Path(__file__).resolve().parent / "fixtures" / "deepseek-wire"
