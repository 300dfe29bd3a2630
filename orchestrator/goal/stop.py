"""How a run of the goal loop can be stopped from outside the machine: a cancellation (Ctrl-C), or a DeepSeek API
error escaping a turn. Either may arrive bare or wrapped in an exception group (it passed through a nursery: the
client's, a verify command's)."""

from __future__ import annotations

import trio

from sessions.errors import DeepSeekError


def _leaves(exc: BaseException) -> list[BaseException]:
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for inner in exc.exceptions for leaf in _leaves(inner)]
    return [exc]


def is_cancellation(exc: BaseException) -> bool:
    """Whether ``exc`` is a cancellation: ``trio.Cancelled``, or a group of nothing else."""
    leaves = _leaves(exc)
    return bool(leaves) and all(isinstance(leaf, trio.Cancelled) for leaf in leaves)


def api_error_of(exc: BaseException) -> DeepSeekError | None:
    """The DeepSeek error that ``exc`` is (or the first one of a group holding nothing else), or ``None``."""
    leaves = _leaves(exc)
    if leaves and all(isinstance(leaf, DeepSeekError) for leaf in leaves):
        first = leaves[0]
        assert isinstance(first, DeepSeekError)
        return first
    return None
