"""Checkpoints: the workspace snapshotted into a shadow git store under ``.reasonix/checkpoints/`` (DESIGN §5,
Safety), never the user's ``.git``; undo and restore from them; and the history of runs.

- :mod:`~orchestrator.checkpoints.git`: the shadow repository and the one way ``git`` is called;
- :mod:`~orchestrator.checkpoints.ledger`: what each checkpoint records (run, step, what changed);
- :mod:`~orchestrator.checkpoints.snapshot`: taking one;
- :mod:`~orchestrator.checkpoints.undo`: planning and applying an undo, with hand edits detected;
- :mod:`~orchestrator.checkpoints.hook`: what the goal loop calls (before each step, on a retry);
- :mod:`~orchestrator.checkpoints.history`: past runs, read from their run directories.
"""
