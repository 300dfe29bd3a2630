#!/usr/bin/env bash
# ANSWER.md must give 63 (label), 253 and 254 (name without / with trailing dot) and the exception IDNAError.
set -eu
test -f ANSWER.md || { echo "ANSWER.md is missing" >&2; exit 1; }
for n in 63 253 254; do
  grep -Eqw "$n" ANSWER.md || { echo "ANSWER.md does not give the limit $n" >&2; exit 1; }
done
grep -qi 'IDNAError' ANSWER.md || { echo "ANSWER.md does not name the exception" >&2; exit 1; }
grep -qiE 'valid_label_length|valid_string_length' ANSWER.md || { echo "ANSWER.md does not name the checks" >&2; exit 1; }
