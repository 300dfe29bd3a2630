"""A session's record on disk: the JSONL journal of exact message bytes (``jsonl``), reading a journal back
to resume a session with the same prefix bytes (``resume``), and the full text of tool results that were cut for the
model, kept once beside the journal (``kept_output``).
"""

__all__: list[str] = []
