"""What a conversation says besides its turns: the frozen prefix (system prompt, tool schemas and standing
memory, encoded once, DESIGN §3.1), the standing-memory files it folds in, and the tail blocks that carry state which
changes mid-session in front of the newest user message (DESIGN §3.3).
"""

__all__: list[str] = []
