"""The supervisor, goal loop, plan review, escalation, budgets, events, terminal UI, config and CLI."""
