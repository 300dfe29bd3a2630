"""The file tools a session can call: read_file, write_file and edit_file, with what they share:
reading workspace files as text (binary refused, undecodable bytes kept) and replacing a file atomically. Each tool is
registered by ``sessions.tools.registry``; its result is deterministic text because it is re-sent in later requests.
"""

__all__: list[str] = []
