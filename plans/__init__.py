"""Plan documents: schema, DAG validation and scheduling, revisions and diffs, rendering, storage.

Imports nothing else of ours (DESIGN §2).
"""
