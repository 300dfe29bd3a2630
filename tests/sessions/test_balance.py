"""The account balance, ``GET /user/balance``: the client's typed model and errors, against the emulator and against
loopback servers that answer badly."""

from __future__ import annotations

import functools
from decimal import Decimal

import pytest
import trio

from scenarios.emulator import open_emulator
from sessions.wire.balance import Balance
from sessions.wire.client import DeepSeekClient
from sessions.wire.errors import AuthenticationError, ConnectionFailedError, DeadlineExceededError, UnexpectedBodyError


async def test_the_emulator_answers_the_balance_in_deepseeks_shape() -> None:
    async with open_emulator() as emu, DeepSeekClient(base_url=emu.base_url, api_key="sk-good") as client:
        balance = await client.balance()
    assert balance.is_available
    (usd,) = balance.balance_infos
    assert (usd.currency, usd.total_balance, usd.topped_up_balance, usd.granted_balance) == (
        "USD",
        Decimal("42.00"),
        Decimal("40.00"),
        Decimal("2.00"),
    )
    assert balance.render() == "42.00 USD (40.00 topped up, 2.00 granted)"
    assert balance.short() == "42.00 USD"


async def test_a_key_the_emulator_rejects_is_a_401_on_the_balance_too() -> None:
    async with open_emulator() as emu:
        emu.emulator.reject_keys = ("sk-bad",)
        async with DeepSeekClient(base_url=emu.base_url, api_key="sk-bad") as client:
            with pytest.raises(AuthenticationError, match="rejected the API key"):
                await client.balance()


def test_an_unavailable_balance_says_to_top_up() -> None:
    raw = (
        b'{"is_available": false, "balance_infos": [{"currency": "CNY", "total_balance": "0.00", '
        b'"granted_balance": "0.00", "topped_up_balance": "0.00"}]}'
    )
    balance = Balance.model_validate_json(raw)
    assert "top up" in balance.render()
    assert balance.short() == "0.00 CNY (top up)"


async def _answering(nursery: trio.Nursery, raw: bytes | None) -> str:
    """A loopback server that answers every connection with ``raw`` (``None``: never answers); its base URL."""

    async def handler(stream: trio.SocketStream) -> None:
        if raw is None:
            await trio.sleep_forever()
        await stream.receive_some(65536)
        await stream.send_all(raw)

    (listener,) = await nursery.start(functools.partial(trio.serve_tcp, handler, 0, host="127.0.0.1"))
    return f"http://127.0.0.1:{listener.socket.getsockname()[1]}"


async def test_an_html_page_is_no_balance() -> None:
    page = b"<html><title>Portal</title></html>"
    raw = b"HTTP/1.1 200 OK\r\ncontent-type: text/html\r\ncontent-length: %d\r\nconnection: close\r\n\r\n" % len(page)
    async with trio.open_nursery() as nursery:
        async with DeepSeekClient(base_url=await _answering(nursery, raw + page), api_key="k") as client:
            with pytest.raises(UnexpectedBodyError, match=r'not an account balance .*titled "Portal"'):
                await client.balance()
        nursery.cancel_scope.cancel()


async def test_an_unreachable_server_is_a_connection_error() -> None:
    async with DeepSeekClient(base_url="http://127.0.0.1:9", api_key="k") as client:
        with pytest.raises(ConnectionFailedError, match="could not reach"):
            await client.balance(timeout_s=5)


async def test_a_server_that_never_answers_is_bounded(autojump_clock: trio.abc.Clock) -> None:
    async with trio.open_nursery() as nursery:
        async with DeepSeekClient(base_url=await _answering(nursery, None), api_key="k") as client:
            with pytest.raises(DeadlineExceededError, match="did not answer within 3s"):
                await client.balance(timeout_s=3)
        nursery.cancel_scope.cancel()
