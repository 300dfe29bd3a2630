"""Scavenging tool calls the model wrote into reasoning or leaked as markup into content."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from sessions.repair import scavenge_calls
from sessions.repair.scavenge import find_calls
from tests.sessions.repair.examples import examples

KNOWN = ("read_file", "write_file", "bash", "list_dir")


def only(content: str | None = None, reasoning: str | None = None) -> tuple[str, dict[str, Any], str]:
    calls = scavenge_calls(content=content, reasoning=reasoning, known_tools=KNOWN)
    assert len(calls) == 1, calls
    return calls[0].name, calls[0].args, calls[0].shape


def test_deepseek_v3_special_tokens_in_content() -> None:
    content = (
        "I'll read the file first.\n"
        "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>read_file\n"
        '```json\n{"path": "src/app.py"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>'
    )
    assert only(content) == ("read_file", {"path": "src/app.py"}, "special_tokens")


def test_deepseek_v31_special_tokens_and_several_calls_in_order() -> None:
    content = (
        "<｜tool▁calls▁begin｜>"
        '<｜tool▁call▁begin｜>list_dir<｜tool▁sep｜>{"path": "."}<｜tool▁call▁end｜>'
        '<｜tool▁call▁begin｜>bash<｜tool▁sep｜>{"command": "pytest -q"}<｜tool▁call▁end｜>'
        "<｜tool▁calls▁end｜>"
    )
    calls = scavenge_calls(content=content, reasoning=None, known_tools=KNOWN)
    assert [(c.name, c.args) for c in calls] == [("list_dir", {"path": "."}), ("bash", {"command": "pytest -q"})]
    assert calls[0].id != calls[1].id


def test_ascii_variant_of_the_special_tokens() -> None:
    content = '<|tool_call_begin|>function<|tool_sep|>bash\n{"command": "ls"}<|tool_call_end|>'
    assert only(content)[:2] == ("bash", {"command": "ls"})


def test_v32_dsml_invoke_with_parameter_tags_in_reasoning() -> None:
    reasoning = (
        "The test fails, let me look at the file.\n\n"
        "<｜DSML｜function_calls>\n"
        '<｜DSML｜invoke name="read_file">\n'
        '<｜DSML｜parameter name="path" string="true">tests/test_calc.py</｜DSML｜parameter>\n'
        '<｜DSML｜parameter name="start_line" string="false">10</｜DSML｜parameter>\n'
        "</｜DSML｜invoke>\n"
        "</｜DSML｜function_calls>"
    )
    assert only(reasoning=reasoning) == ("read_file", {"path": "tests/test_calc.py", "start_line": 10}, "dsml")


def test_invoke_with_a_json_body_without_the_dsml_marker() -> None:
    content = '<function_calls>\n<invoke name="bash">\n{"command": "make test"}\n</invoke>\n</function_calls>'
    assert only(content) == ("bash", {"command": "make test"}, "dsml")


def test_tool_call_tag() -> None:
    content = (
        'Sure.\n<tool_call>\n{"name": "write_file", "arguments": {"path": "a.txt", "content": "hi\\n"}}\n</tool_call>'
    )
    assert only(content) == ("write_file", {"path": "a.txt", "content": "hi\n"}, "tool_call_tag")


def test_tool_call_tag_with_arguments_as_a_json_string() -> None:
    content = '<tool_call>{"name": "bash", "arguments": "{\\"command\\": \\"ls -la\\"}"}</tool_call>'
    assert only(content)[:2] == ("bash", {"command": "ls -la"})


def test_function_tag_with_json_and_with_parameter_tags() -> None:
    assert only('<function=list_dir>{"path": "src"}</function>') == ("list_dir", {"path": "src"}, "function_tag")
    content = (
        "<function=write_file>\n<parameter=path>\nx.py\n</parameter>\n"
        "<parameter=content>\nprint(1)\n\n</parameter>\n</function>"
    )
    assert only(content)[:2] == ("write_file", {"path": "x.py", "content": "print(1)\n"})


def test_fenced_json_with_name_and_parameters() -> None:
    reasoning = (
        "I need to run the tests. I would call:\n"
        '```json\n{"name": "bash", "parameters": {"command": "pytest tests/ -x"}}\n```\n'
        "and then check the output."
    )
    assert only(reasoning=reasoning) == ("bash", {"command": "pytest tests/ -x"}, "fenced_json")


def test_openai_shaped_object_and_a_whole_json_content() -> None:
    content = '{"type": "function", "function": {"name": "read_file", "arguments": "{\\"path\\": \\"README.md\\"}"}}'
    assert only(content) == ("read_file", {"path": "README.md"}, "bare_json")


def test_unknown_names_and_ordinary_code_do_not_count() -> None:
    content = (
        '<tool_call>{"name": "delete_everything", "arguments": {}}</tool_call>\n'
        '```json\n{"name": "my-package", "version": "1.0.0"}\n```\n'
        '```python\nprint({"name": "bash"})\n```'
    )
    assert scavenge_calls(content=content, reasoning=None, known_tools=KNOWN) == ()


def test_content_wins_over_reasoning_and_duplicates_count_once() -> None:
    reasoning = '<tool_call>{"name": "bash", "arguments": {"command": "ls"}}</tool_call>'
    content = (
        '<tool_call>{"name": "read_file", "arguments": {"path": "a"}}</tool_call>'
        '<tool_call>{"name": "read_file", "arguments": {"path": "a"}}</tool_call>'
    )
    calls = scavenge_calls(content=content, reasoning=reasoning, known_tools=KNOWN)
    assert [(c.name, c.source) for c in calls] == [("read_file", "content")]


def test_truncated_markup_at_the_output_limit_is_closed() -> None:
    content = '<｜tool▁call▁begin｜>write_file<｜tool▁sep｜>{"path": "a.py", "content": "import os\\nprint('
    calls = scavenge_calls(content=content, reasoning=None, known_tools=KNOWN)
    assert [(c.name, c.args, c.repaired) for c in calls] == [
        ("write_file", {"path": "a.py", "content": "import os\nprint("}, True)
    ]


def test_ids_are_derived_from_content() -> None:
    content = '<tool_call>{"name": "bash", "arguments": {"command": "ls"}}</tool_call>'
    a = scavenge_calls(content=content, reasoning=None, known_tools=KNOWN)
    b = scavenge_calls(content="blah " + content + " blah", reasoning=None, known_tools=KNOWN)
    c = scavenge_calls(content=content.replace("ls", "pwd"), reasoning=None, known_tools=KNOWN)
    assert a[0].id == b[0].id
    assert a[0].id.startswith("scv_")
    assert a[0].id != c[0].id


# ------------------------------------------------------------------------------------------------- hypothesis

json_scalars = st.none() | st.booleans() | st.integers() | st.text(max_size=12)
args_strategy = st.dictionaries(st.text(alphabet="abcdefgh_", min_size=1, max_size=6), json_scalars, max_size=4)
noise_fragments = st.sampled_from(
    [
        "<",
        ">",
        "{",
        "}",
        "```",
        "```json\n",
        '"',
        "\n",
        "<tool_call>",
        "</tool_call>",
        "<function=bash>",
        "</function>",
        "<｜tool▁call▁begin｜>",
        "<｜tool▁call▁end｜>",
        '<invoke name="x">',
        "</invoke>",
        "name",
        ":",
    ]
)
OPENERS = ("<tool_call>", "<function=", "<invoke", "<｜tool▁call▁begin｜>", "<｜DSML｜invoke")
CLOSERS = ("</tool_call>", "</function>", "</invoke>", "<｜tool▁call▁end｜>", "</｜DSML｜invoke>")
noise = st.lists(st.text(max_size=20) | noise_fragments, max_size=8).map("".join)


def render(shape: str, name: str, args: dict[str, Any]) -> str:
    body = json.dumps(args, ensure_ascii=False)
    if shape == "special_tokens":
        return f"<｜tool▁call▁begin｜>function<｜tool▁sep｜>{name}\n```json\n{body}\n```<｜tool▁call▁end｜>"
    if shape == "special_tokens_v31":
        return f"<｜tool▁call▁begin｜>{name}<｜tool▁sep｜>{body}<｜tool▁call▁end｜>"
    if shape == "dsml":
        return f'<｜DSML｜invoke name="{name}">\n{body}\n</｜DSML｜invoke>'
    if shape == "tool_call_tag":
        return "<tool_call>" + json.dumps({"name": name, "arguments": args}, ensure_ascii=False) + "</tool_call>"
    if shape == "function_tag":
        return f"<function={name}>{body}</function>"
    return "```json\n" + json.dumps({"name": name, "arguments": args}, ensure_ascii=False) + "\n```"


SHAPES = ["special_tokens", "special_tokens_v31", "dsml", "tool_call_tag", "function_tag", "fenced_json"]


@settings(max_examples=examples(400), deadline=None)
@given(text=st.text() | noise, other=st.text() | noise)
def test_scavenger_never_raises_on_arbitrary_text(text: str, other: str) -> None:
    calls = scavenge_calls(content=text, reasoning=other, known_tools=KNOWN)
    assert all(c.name in KNOWN and isinstance(c.args, dict) for c in calls)


@settings(max_examples=examples(400), deadline=None)
@given(
    before=noise,
    after=noise,
    name=st.sampled_from(KNOWN),
    args=args_strategy,
    shape=st.sampled_from(SHAPES),
    sep=st.sampled_from(["", " ", "\n", "\n\n"]),
)
def test_scavenger_finds_a_call_embedded_in_arbitrary_text(
    before: str, after: str, name: str, args: dict[str, Any], shape: str, sep: str
) -> None:
    # Noise that closes a tag the noise before it opened would wrap the call in another call's markup: then the
    # text really is another call (with ours as its body), so that case is not this property's.
    assume(not any(closer in after for closer in CLOSERS))
    # A body ends at the next opening tag (so a looping model's unclosed markup stays linear): arguments that quote
    # call markup themselves are the known price of that bound.
    assume(not any(tag in json.dumps(args, ensure_ascii=False) for tag in (*OPENERS, *CLOSERS)))
    text = before + sep + render(shape, name, args) + sep + after
    found = find_calls(text, KNOWN)
    assert (name, args) in [(f.name, f.args) for f in found]


def test_a_looping_model_with_many_unclosed_tags_still_yields_the_real_call() -> None:
    junk = '<tool_call>{"name": "bash", "arguments": {"command": "ls' * 300
    tokens = '<｜tool▁call▁begin｜>bash<｜tool▁sep｜>{"command": "l' * 300
    real = '<tool_call>{"name": "read_file", "arguments": {"path": "a"}}</tool_call>'
    calls = scavenge_calls(content=junk + tokens + real, reasoning=None, known_tools=KNOWN)
    assert [(c.name, c.args) for c in calls] == [("read_file", {"path": "a"})]


def test_a_stray_backtick_before_a_fence_still_yields_the_call() -> None:
    # Found by hypothesis: "````json" (four backticks) hid the fenced call.
    text = "`" + render("fenced_json", "read_file", {})
    assert [(f.name, f.args) for f in find_calls(text, KNOWN)] == [("read_file", {})]
