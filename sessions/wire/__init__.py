"""The wire: how a session talks to DeepSeek's chat API. The wire types and their deterministic encoding
(``messages``), the streaming client with its retries, deadlines and stall timers, the SSE parser, stream assembly
into a reply, the API's typed errors, and the seam through which a session's request becomes a reply (``reply``).
Nothing here knows what a conversation is; DESIGN §3 says which bytes it must never move.
"""

__all__: list[str] = []
