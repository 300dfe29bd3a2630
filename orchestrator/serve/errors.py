"""The service's errors (DESIGN §8), named for who is at fault. Each carries the HTTP status it answers with and a
hint saying what to do next; the API sends them as ``{"error": ..., "hint": ...}``."""

from __future__ import annotations

from typing import ClassVar

from orchestrator.errors import ReasonixError


class ServeError(ReasonixError):
    """Base of the service's errors: the message says what happened, :attr:`hint` what to do next."""

    status: ClassVar[int] = 500

    def __init__(self, message: str, hint: str = "") -> None:
        super().__init__(message)
        self.hint = hint

    def body(self) -> dict[str, str]:
        return {"error": str(self), "hint": self.hint}


class InvalidRequestError(ServeError):
    """The client is at fault: a body that does not validate, a workspace that is not a directory."""

    status = 400


class UnauthorizedError(ServeError):
    """The client is at fault: no access token, or a wrong one."""

    status = 401


class ForeignOriginError(ServeError):
    """A page of another site is at fault: its ``Origin`` is not this server's (a cross-site request)."""

    status = 403


class MisdirectedHostError(ServeError):
    """The request is at fault: its ``Host`` is not a name this service answers to (a DNS-rebinding page, or a name
    the user did not allow with ``--allow-host``)."""

    status = 421


class BodyTooLargeError(ServeError):
    """The client is at fault: a request body over the service's bound (it is refused before it is read whole)."""

    status = 413


class UnknownRunError(ServeError):
    """The client named a run (or a file) the service does not know."""

    status = 404


class RunConflictError(ServeError):
    """The run's state is at fault: the workspace already runs a goal, the run is not awaiting review, or it is
    running and cannot be undone or resumed now."""

    status = 409


class InvalidPlanError(ServeError):
    """The client is at fault: an edited plan that does not validate (the message lists the problems)."""

    status = 422


class RemoteBindError(ServeError):
    """The user is at fault: a non-loopback address without ``--allow-remote``."""

    status = 500
