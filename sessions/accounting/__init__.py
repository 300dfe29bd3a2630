"""What a session's requests cost and how much they carry: token counting with DeepSeek's own vocabulary,
dated prices, the cache diagnostics of every request, and the estimate of the tokens the next request will carry.
The session's ledger of totals uses these; none of them holds conversation state of its own.
"""

__all__: list[str] = []
