"""Errors of the emulator, named for who is at fault."""

from __future__ import annotations


class EmulatorError(Exception):
    """Base of everything the emulator raises."""


class ScriptInvalid(EmulatorError):
    """The script file is unreadable or does not follow the format of scenarios/README.md: fix the script."""


class ApiError(EmulatorError):
    """An error answered on the wire in DeepSeek's shape ``{"error":{"message","type","param","code"}}``."""

    def __init__(
        self,
        status: int,
        message: str,
        *,
        type: str = "invalid_request_error",
        param: str | None = None,
        code: str | None = "invalid_request_error",
        headers: tuple[tuple[str, str], ...] = (),
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.type = type
        self.param = param
        self.code = code
        self.headers = headers

    def body(self) -> dict[str, object]:
        return {"error": {"message": self.message, "type": self.type, "param": self.param, "code": self.code}}


class ClientRequestError(ApiError):
    """The caller sent something DeepSeek would refuse (400, 401, 422): fix the request."""


class ScriptExhausted(ApiError):
    """The script has no reply left (or no session) for a request: the script is shorter than the run (500)."""

    def __init__(self, message: str) -> None:
        super().__init__(500, message, type="server_error", code="script_exhausted")


class InjectedFault(ApiError):
    """An HTTP error the script asked for (429, 500, 503)."""
