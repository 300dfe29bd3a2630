#!/usr/bin/env bash
# The new structure (key functions in cachetools/keys.py only) and cachetools' own test suite, with the tests as seeded.
set -eu
seed=$(git rev-list --max-parents=0 HEAD)
git diff --quiet "$seed" -- tests || { echo "tests/ differs from the seed" >&2; exit 1; }
PYTHONPATH=src python - <<'PY'
import ast, pathlib
def defs(path):
    tree = ast.parse(pathlib.Path(path).read_text())
    return {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
keys = {"hashkey", "methodkey", "typedkey", "_HashedTuple"}
assert keys <= defs("src/cachetools/keys.py"), defs("src/cachetools/keys.py")
assert not keys & defs("src/cachetools/__init__.py"), keys & defs("src/cachetools/__init__.py")
import cachetools, cachetools.keys, cachetools.func
assert set(cachetools.keys.__all__) == {"hashkey", "methodkey", "typedkey"}
assert cachetools.cached.__defaults__[0] is cachetools.keys.hashkey
assert cachetools.cachedmethod.__defaults__[0] is cachetools.keys.methodkey
PY
PYTHONPATH=src python -m pytest -q -p no:cacheprovider tests
