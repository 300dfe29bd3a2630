"""``web_fetch`` against a loopback page the test serves: its text, bounded; each host asks unless a ``web(HOST)``
rule allows it; refused under read-only permissions and where the sandbox's network rule forbids the network; and
off by default, so an unconfigured session's tool list is byte for byte what it was."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from orchestrator.config.model import Config
from sessions.permissions import Answer, PermissionGate, Question, Rules
from sessions.sandbox import NoSandbox, SandboxPolicy
from sessions.session import Session
from sessions.tools.base import ToolContext
from sessions.tools.errors import ToolInputError
from sessions.tools.registry import default_registry
from sessions.tools.web import WebFetchArgs, WebFetchTool
from sessions.wire.messages import encode_tools

PAGE = b"""<!doctype html><html><head><title>Trio guide</title><style>p{color:red}</style>
<script>alert("no")</script></head><body><nav>Home | About</nav>
<h1>Nurseries</h1><p>A <a href="/nursery.html">nursery</a> runs tasks; <code>start_soon</code> starts one.</p>
<ul><li>first</li><li>second</li></ul><pre>async with trio.open_nursery() as n:
    n.start_soon(work)</pre></body></html>"""


class _Pages(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        if self.path == "/big":
            body, media = b"x" * 3_000_000, "text/plain"
        elif self.path.startswith("/charset/"):  # a page declaring a charset that is no text encoding, or none
            body, media = "Caf\u00e9 ok".encode(), f"text/plain; charset={self.path.removeprefix('/charset/')}"
        elif self.path == "/away":
            self.send_response(302)
            self.send_header("Location", "http://localhost.invalid/elsewhere")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        else:
            body, media = PAGE, "text/html; charset=utf-8"
        self.send_response(200)
        self.send_header("Content-Type", media)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def site() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Pages)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


NETWORK = NoSandbox(policy=SandboxPolicy(network=True))


def _ctx(tmp_path: Path, gate: PermissionGate | None = None, sandbox: NoSandbox = NETWORK) -> ToolContext:
    return ToolContext(root=tmp_path, sandbox=sandbox, gate=gate)


async def _call(url: str, ctx: ToolContext) -> str:
    """What dispatch does: the gate first, then the tool (a refusal is the text the model reads)."""
    tool, args = WebFetchTool(), WebFetchArgs(url=url)
    if ctx.gate is not None:
        refusal = await ctx.gate.check(tool, args, ctx)
        if refusal is not None:
            return refusal
    return (await tool.run(args, ctx)).content


async def test_an_allowed_host_is_fetched_as_text(tmp_path: Path, site: str) -> None:
    gate = PermissionGate(Rules.parse(allow=["web(127.0.0.1)"]), mode="ask")
    text = await _call(site + "/guide", _ctx(tmp_path, gate))
    assert text.startswith(f"{site}/guide (text/html)\n\n# Trio guide\n\n# Nurseries")
    assert f"A [nursery]({site}/nursery.html) runs tasks; `start_soon` starts one." in text
    assert "- first\n- second" in text
    assert "```\nasync with trio.open_nursery() as n:\n    n.start_soon(work)\n```" in text
    assert "alert" not in text and "color:red" not in text and "Home | About" not in text


LOOPBACK_ALLOWED = PermissionGate(Rules.parse(allow=["web(127.0.0.1)"]), mode="ask")


async def test_a_large_page_is_cut_to_the_result_bound(tmp_path: Path, site: str) -> None:
    ctx = _ctx(tmp_path, LOOPBACK_ALLOWED)
    text = await _call(site + "/big", ctx)
    assert len(text) <= ctx.limits.read_max_chars
    assert text.endswith("shown the first]")


async def test_a_host_no_rule_allows_asks_and_a_no_refuses(tmp_path: Path, site: str) -> None:
    asked: list[Question] = []

    async def asker(question: Question) -> Answer:
        asked.append(question)
        return Answer(allow=False)

    for mode in ("ask", "auto"):
        gate = PermissionGate(Rules.parse(allow=["web(docs.python.org)"]), mode=mode, asker=asker)  # type: ignore[arg-type]
        text = await _call(site + "/guide", _ctx(tmp_path, gate))
        assert text == "refused: the user declined web_fetch `127.0.0.1`."
    assert [(q.tool, q.subject, q.rule) for q in asked] == [("web_fetch", "127.0.0.1", "web(127.0.0.1)")] * 2


async def test_read_only_permissions_and_deny_rules_refuse(tmp_path: Path, site: str) -> None:
    allowed = PermissionGate(Rules.parse(allow=["web(127.0.0.1)"]), mode="read-only")
    assert await _call(site, _ctx(tmp_path, allowed)) == (
        "refused: web_fetch reaches the network and approvals are read-only (--permissions read-only)"
    )
    denied = PermissionGate(Rules.parse(allow=["web"], deny=["web(*.0.0.1)"]), mode="auto")
    assert (await _call(site, _ctx(tmp_path, denied))).startswith("refused by the rule 'web(*.0.0.1)'")


async def test_the_sandboxs_network_rule_forbids_it(tmp_path: Path, site: str) -> None:
    with pytest.raises(ToolInputError, match=r"network rule forbids the network \(\[sandbox\] network = false\)"):
        await _call(site, _ctx(tmp_path, sandbox=NoSandbox()))


async def test_a_redirect_to_another_host_is_not_followed(tmp_path: Path, site: str) -> None:
    text = await _call(site + "/away", _ctx(tmp_path, LOOPBACK_ALLOWED))
    assert text.startswith(f"{site}/away redirects to another host: http://localhost.invalid/elsewhere")


@pytest.mark.parametrize("charset", ["rot13", "base64", "zlib_codec", "no-such-charset", "utf-8"])
async def test_a_page_declaring_a_charset_that_is_no_text_encoding_is_read_as_utf8(
    tmp_path: Path, site: str, charset: str
) -> None:
    text = await _call(f"{site}/charset/{charset}", _ctx(tmp_path, LOOPBACK_ALLOWED))
    assert text.endswith("\n\nCaf\u00e9 ok")


def test_web_fetch_is_off_by_default_and_the_tool_list_bytes_do_not_move() -> None:
    plain = encode_tools(Session.schemas_for(default_registry()))
    assert encode_tools(Session.schemas_for(default_registry(web_fetch=Config().tools.web_fetch))) == plain
    on = default_registry(web_fetch=Config.model_validate({"tools": {"web_fetch": True}}).tools.web_fetch)
    assert "web_fetch" in on and encode_tools(Session.schemas_for(on)) != plain


@pytest.mark.parametrize("rule", ["web", "web(*.0.0.1)", "web(127.0.0.*)"])
async def test_a_private_address_needs_a_rule_that_names_it(tmp_path: Path, site: str, rule: str) -> None:
    """A bare ``web`` or a glob lets public hosts run unasked, never the machine's own services."""
    gate = PermissionGate(Rules.parse(allow=[rule]), mode="auto")
    with pytest.raises(ToolInputError, match=r"refused: 127\.0\.0\.1 is a non-public address \(127\.0\.0\.1\)"):
        await _call(site + "/guide", _ctx(tmp_path, gate))


@pytest.mark.parametrize(
    ("url", "address"),
    [
        ("http://169.254.169.254/latest/meta-data/", "169.254.169.254"),
        ("http://10.1.2.3/", "10.1.2.3"),
        ("http://[::1]:8080/", "::1"),
        ("http://localhost:9/", None),
    ],
)
async def test_metadata_private_and_loopback_hosts_are_refused_without_a_network_call(
    tmp_path: Path, url: str, address: str | None
) -> None:
    gate = PermissionGate(Rules.parse(allow=["web"]), mode="auto")
    with pytest.raises(ToolInputError, match=r"is a non-public address") as caught:
        await _call(url, _ctx(tmp_path, gate))
    if address is not None:
        assert f"({address})" in str(caught.value)
