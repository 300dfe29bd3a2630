#!/usr/bin/env bash
# The new structure (private _comparator/_cmp, no public comparator/cmp) and semver's own tests, as seeded.
set -eu
seed=$(git rev-list --max-parents=0 HEAD)
git diff --quiet "$seed" -- tests || { echo "tests/ differs from the seed" >&2; exit 1; }
PYTHONPATH=src python - <<'PY'
import semver.version as v
assert callable(v._comparator) and callable(v._cmp)
assert not hasattr(v, "comparator") and not hasattr(v, "cmp"), "the public names are still there"
assert v._cmp(1, 2) == -1 and v._cmp(2, 2) == 0 and v._cmp(3, 2) == 1
assert v.Version.parse("1.2.3") < v.Version.parse("1.2.4") and v.Version(1, 2, 3) == "1.2.3"
PY
python -m pytest -q -p no:cacheprovider -o addopts="" --import-mode=importlib -W ignore::DeprecationWarning tests
