#!/usr/bin/env bash
# sqlparse's own regression and parse tests (0.4.4, which has the issue 632 case).
set -eu
python -m pytest -q -p no:cacheprovider tests/test_regressions.py tests/test_parse.py
