"""What ``[conversation]`` sets for ``reasonix code`` and ``reasonix chat``: the reply language (a tail block), the
output style (folded into the system prompt at session start) and the price thresholds that colour the status line.
The conversation imports the modules here; nothing here imports the conversation."""

from __future__ import annotations

__all__: list[str] = []
