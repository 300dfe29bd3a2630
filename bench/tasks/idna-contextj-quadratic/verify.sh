#!/usr/bin/env bash
# A check written for the task (the crafted input is rejected with InvalidCodepointContext after a bounded number
# of joining-type lookups, counted, not timed) and idna's own core tests.
set -eu
python - <<'PY'
import idna, idna.core, idna.idnadata as data

class Counting(dict):
    lookups = 0
    def get(self, *args):
        Counting.lookups += 1
        return dict.get(self, *args)

data.joining_types = Counting(data.joining_types)
assert idna.encode('\u0628\u200c\u0628') == b'xn--ngba799q'
for label in ('\u0628a\u200c\u0628', '\u0628' + 'a\u200c' * 3000 + '\u0628'):
    Counting.lookups = 0
    try:
        idna.encode(label)
    except idna.core.InvalidCodepointContext:
        pass
    else:
        raise AssertionError(f"{label[:12]!r}... was not rejected with InvalidCodepointContext")
    assert Counting.lookups < 100, f"{Counting.lookups} joining-type lookups for one label"
PY
python -m pytest -q -p no:cacheprovider tests/test_idna.py tests/test_idna_uts46.py
