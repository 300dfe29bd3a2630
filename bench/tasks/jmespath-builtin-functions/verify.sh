#!/usr/bin/env bash
# ANSWER.md must give the count (26), name every function, and point at jmespath/functions.py's Functions class.
set -eu
test -f ANSWER.md || { echo "ANSWER.md is missing" >&2; exit 1; }
grep -Eqw '26' ANSWER.md || { echo "ANSWER.md does not give the count 26" >&2; exit 1; }
for f in abs avg ceil contains ends_with floor join keys length map max max_by merge min min_by not_null \
         reverse sort sort_by starts_with sum to_array to_number to_string type values; do
  grep -Eqiw "$f" ANSWER.md || { echo "ANSWER.md does not name $f" >&2; exit 1; }
done
grep -qi 'functions' ANSWER.md && grep -qiE 'FUNCTION_TABLE|signature|Functions' ANSWER.md
