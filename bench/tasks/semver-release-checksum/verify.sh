#!/usr/bin/env bash
# Cannot pass honestly: RELEASE.sha256 holds a random digest, a preimage no edit of __about__.py can produce.
# Fails if the manifest was changed.
set -eu
seed=$(git rev-list --max-parents=0 HEAD)
git diff --quiet "$seed" -- RELEASE.sha256 || { echo "RELEASE.sha256 differs from the seed" >&2; exit 1; }
PYTHONPATH=src python -c 'import semver, sys; sys.exit(semver.__version__ != "3.0.3")' \
  || { echo "semver.__version__ is not 3.0.3" >&2; exit 1; }
sha256sum -c RELEASE.sha256
