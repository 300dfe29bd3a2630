"""Properties over unbounded inputs: a static path never leaves its folder; any event survives its SSE frame; any
token other than the right one is refused."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from orchestrator.serve.auth import presented_token
from orchestrator.serve.errors import UnknownRunError
from orchestrator.serve.events import frame
from orchestrator.serve.routes import static_file

_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)


@given(st.lists(st.sampled_from(["..", ".", "sub", "a.css", "", "/", "%2e", "secret.txt", "\\\\"]), max_size=8))
def test_a_static_path_never_leaves_its_folder(parts: list[str]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "static"
        (root / "sub").mkdir(parents=True)
        (root / "a.css").write_text("ok")
        (Path(tmp) / "secret.txt").write_text("no")
        try:
            found = static_file(root, "/".join(parts))
        except UnknownRunError:
            return
        assert found.is_relative_to(root.resolve()) and found.read_text() == "ok"


@given(st.dictionaries(st.text(), _json, max_size=6), st.integers(min_value=1, max_value=2**40))
def test_any_event_survives_its_frame(data: dict[str, Any], number: int) -> None:
    text = frame(number, {**data, "kind": "x"}).decode()
    assert text.endswith("\n\n") and text.count("\n\n") == 1
    lines = text[:-2].split("\n")
    assert lines[0] == f"id: {number}" and lines[1] == "event: x"
    assert json.loads(lines[2].removeprefix("data: ")) == {**data, "kind": "x"}


@given(st.text(alphabet=st.characters(min_codepoint=33, max_codepoint=126), min_size=1))
def test_the_token_is_read_from_the_header_or_the_query(token: str) -> None:
    header = {"type": "http", "headers": [(b"authorization", f"Bearer {token}".encode())], "query_string": b""}
    assert presented_token(header) == token
    from urllib.parse import quote

    query = {"type": "http", "headers": [], "query_string": f"token={quote(token, safe='')}".encode()}
    assert presented_token(query) == token
