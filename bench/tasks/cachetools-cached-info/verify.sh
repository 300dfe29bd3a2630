#!/usr/bin/env bash
# cachetools' own decorator tests (5.3.3, which test cached(info=True) and the func.py decorators).
set -eu
PYTHONPATH=src python -m pytest -q -p no:cacheprovider tests/test_cached.py tests/test_func.py
