#!/usr/bin/env bash
# packaging's own specifier tests (the 24.0 suite, which has the epoch cases).
# tests/test_version.py imports `pretend` (a test-only dependency) for one stub; a minimal stand-in keeps this offline.
set -eu
stub=$(mktemp -d)
printf 'class stub:\n    def __init__(self, **kw):\n        self.__dict__.update(kw)\n' > "$stub/pretend.py"
PYTHONPATH="src:$stub" python -m pytest -q -p no:cacheprovider -W ignore::DeprecationWarning \
  tests/test_specifiers.py::TestSpecifier tests/test_specifiers.py::TestSpecifierSet
