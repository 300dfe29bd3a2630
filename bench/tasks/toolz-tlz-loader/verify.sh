#!/usr/bin/env bash
# ANSWER.md must name the loader class, the file, the meta_path hook and the function always taken from toolz (pipe).
set -eu
test -f ANSWER.md || { echo "ANSWER.md is missing" >&2; exit 1; }
grep -qi 'TlzLoader' ANSWER.md || { echo "ANSWER.md does not name the loader class" >&2; exit 1; }
grep -qi '_build_tlz' ANSWER.md || { echo "ANSWER.md does not name the file" >&2; exit 1; }
grep -qi 'meta_path' ANSWER.md || { echo "ANSWER.md does not say how it hooks into imports" >&2; exit 1; }
grep -Eqi '\bpipe\b' ANSWER.md || { echo "ANSWER.md does not name the function always taken from toolz" >&2; exit 1; }
