#!/usr/bin/env bash
# more-itertools' own tests of classify_unique and the unique_* functions it mirrors.
set -eu
python -m pytest -q -p no:cacheprovider tests/test_more.py -k "Unique"
