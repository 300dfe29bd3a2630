#!/usr/bin/env bash
# The new structure (class Version, VersionInfo an alias of it) and semver's own test suite, with the tests as seeded.
set -eu
seed=$(git rev-list --max-parents=0 HEAD)
git diff --quiet "$seed" -- tests || { echo "tests/ differs from the seed" >&2; exit 1; }
PYTHONPATH=src python - <<'PY'
import ast, pathlib
import semver, semver.version as v
tree = ast.parse(pathlib.Path("src/semver/version.py").read_text())
classes = [n.name for n in tree.body if isinstance(n, ast.ClassDef)]
assert "Version" in classes and "VersionInfo" not in classes, classes
assert v.Version.__name__ == "Version"
assert semver.Version is v.Version and semver.VersionInfo is v.Version and v.VersionInfo is v.Version
assert "Version" in semver.__all__ and "VersionInfo" in semver.__all__
assert semver.Version.parse("1.2.3").bump_minor() == semver.Version(1, 3, 0)
PY
python -m pytest -q -p no:cacheprovider -o addopts="" --import-mode=importlib -W ignore::DeprecationWarning tests
