"""The DeepSeek account balance: ``GET /user/balance``.

DeepSeek answers ``{"is_available": bool, "balance_infos": [{"currency", "total_balance", "granted_balance",
"topped_up_balance"}]}``, the amounts as decimal strings (one entry per currency the account holds). The request is
one bounded GET with no retries: it is a status figure (``reasonix doctor``, ``reasonix setup``, the status line),
and a caller that cannot get it says so and goes on.
"""

from __future__ import annotations

from decimal import Decimal

import httpx
import trio
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from sessions.wire.answers import ERROR_BODY_LIMIT, describe_body, server_message
from sessions.wire.errors import ConnectionFailedError, DeadlineExceededError, UnexpectedBodyError, error_for_status

BALANCE_PATH = "/user/balance"


class BalanceInfo(BaseModel):
    """One currency of the account."""

    model_config = ConfigDict(frozen=True, extra="ignore")
    currency: str = "USD"
    total_balance: Decimal = Decimal(0)
    granted_balance: Decimal = Decimal(0)
    topped_up_balance: Decimal = Decimal(0)

    def render(self) -> str:
        """``110.00 CNY (100.00 topped up, 10.00 granted)``."""
        return (
            f"{self.total_balance:.2f} {self.currency} "
            f"({self.topped_up_balance:.2f} topped up, {self.granted_balance:.2f} granted)"
        )


class Balance(BaseModel):
    """What ``GET /user/balance`` answers."""

    model_config = ConfigDict(frozen=True, extra="ignore")
    is_available: bool = False
    """Whether the account has balance the API may spend."""
    balance_infos: tuple[BalanceInfo, ...] = Field(default_factory=tuple)

    def render(self) -> str:
        """One line: every currency, and a warning when the API may not spend it."""
        shown = "; ".join(info.render() for info in self.balance_infos) or "no balance reported"
        if not self.is_available:
            shown += " — not available for API calls: top up at https://platform.deepseek.com/top_up"
        return shown

    def short(self) -> str:
        """For the status line: ``110.00 CNY`` (the first currency), or ``0 (top up)``."""
        if not self.balance_infos:
            return "no balance" if not self.is_available else "?"
        first = self.balance_infos[0]
        return f"{first.total_balance:.2f} {first.currency}" + ("" if self.is_available else " (top up)")


async def fetch_balance(
    http: httpx.AsyncClient, base_url: str, *, key_env: str, timeout_s: float, provider: str = "DeepSeek"
) -> Balance:
    """The balance, read with ``http`` (which carries the key). Raises a :class:`~sessions.wire.errors.DeepSeekError`:
    :class:`~sessions.wire.errors.AuthenticationError` for a refused key (401), ConnectionFailedError,
    DeadlineExceededError, UnexpectedBodyError for an answer that is no balance."""
    url = base_url.rstrip("/") + BALANCE_PATH
    with trio.move_on_after(timeout_s):
        try:
            response = await http.get(url, headers={"Accept": "application/json"})
        except httpx.TransportError as exc:
            raise ConnectionFailedError(
                f"could not reach {provider} at {base_url} ({type(exc).__name__}: {exc}). "
                "Check the network and base_url."
            ) from exc
        body = response.content[:ERROR_BODY_LIMIT]
        if response.status_code != 200:
            raise error_for_status(response.status_code, server_message(body), key_env=key_env, provider=provider)
        try:
            return Balance.model_validate_json(response.content)
        except ValidationError as exc:
            raise UnexpectedBodyError(
                f"the answer from {url} is not an account balance ({describe_body(body)}); check base_url."
            ) from exc
    raise DeadlineExceededError(f"{url} did not answer within {timeout_s:g}s; check the network and base_url.")
