#!/usr/bin/env bash
# The new structure (uncompiled keywords.SQL_REGEX, configuration on a Lexer instance) and sqlparse's own test
# suite (0.4.4, which tests Lexer.get_default_instance and custom keywords/regexes), with the tests as seeded.
set -eu
seed=$(git rev-list --max-parents=0 HEAD)
git diff --quiet "$seed" -- tests || { echo "tests/ differs from the seed" >&2; exit 1; }
python - <<'PY'
from sqlparse import keywords, tokens
from sqlparse.lexer import Lexer
assert not hasattr(keywords, "is_keyword"), "keywords.is_keyword should be gone"
assert isinstance(keywords.SQL_REGEX, list) and all(isinstance(rx, str) for rx, _ in keywords.SQL_REGEX)
assert sum(1 for _, tt in keywords.SQL_REGEX if tt is keywords.PROCESS_AS_KEYWORD) == 1
lex = Lexer.get_default_instance()
assert lex is Lexer.get_default_instance()
for name in ("default_initialization", "clear", "set_SQL_REGEX", "add_keywords", "is_keyword", "get_tokens"):
    assert callable(getattr(lex, name)), name
assert lex.is_keyword("select") == (tokens.Keyword.DML, "select")
assert lex.is_keyword("frobnicate") == (tokens.Name, "frobnicate")
assert len(lex._SQL_REGEX) == len(keywords.SQL_REGEX)
PY
python -m pytest -q -p no:cacheprovider tests
