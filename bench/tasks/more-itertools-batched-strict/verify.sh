#!/usr/bin/env bash
# more-itertools' own recipe tests (10.2.0, which test batched(strict=True)).
set -eu
python -m pytest -q -p no:cacheprovider tests/test_recipes.py
