"""What a session's requests cost and how much they carry: token counting with DeepSeek's own vocabulary,
dated prices, the cache diagnostics of every request, and the estimate of the tokens the next request will carry.
The session's ledger of totals uses these; none of them holds conversation state of its own.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sessions.lazy import lazy_names

if TYPE_CHECKING:
    from sessions.accounting import tokens
    from sessions.accounting.diagnostics import CACHE_UNIT_TOKENS, CacheTracker, RequestDiagnostics
    from sessions.accounting.prices import FamilyPrice, PriceBook, PriceError, default_price_book

__all__ = [
    "CACHE_UNIT_TOKENS",
    "CacheTracker",
    "FamilyPrice",
    "PriceBook",
    "PriceError",
    "RequestDiagnostics",
    "default_price_book",
    "tokens",
]

_HOME = {
    "CACHE_UNIT_TOKENS": "diagnostics",
    "CacheTracker": "diagnostics",
    "FamilyPrice": "prices",
    "PriceBook": "prices",
    "PriceError": "prices",
    "RequestDiagnostics": "diagnostics",
    "default_price_book": "prices",
    "tokens": "tokens",
}
"""The module that defines each public name, relative to this package."""

if not TYPE_CHECKING:
    __getattr__ = lazy_names(__name__, _HOME)
