#!/usr/bin/env bash
# Python-Markdown's own raw-HTML tests (3.5.2, which has the bogus comment cases).
set -eu
python -m pytest -q -p no:cacheprovider tests/test_syntax/blocks/test_html_blocks.py tests/test_syntax/extensions/test_md_in_html.py
