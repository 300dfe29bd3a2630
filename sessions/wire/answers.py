"""Reading what the server answered besides a reply: ``Retry-After``, error bodies, bodies that are no API answer."""

from __future__ import annotations

import email.utils
import math
import re
import time

import httpx
from pydantic import ValidationError

from sessions.wire.messages import ErrorBody

ERROR_BODY_LIMIT = 64 * 1024
"""The most of an error body (or of a body that is no API answer) that is read to describe it."""


def parse_retry_after(value: str | None) -> float | None:
    """``Retry-After`` as seconds: delta-seconds or an HTTP date. None when absent or unreadable."""
    if value is None:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        seconds = when.timestamp() - time.time()  # an HTTP date is wall-clock by definition
    if math.isnan(seconds):
        return None
    return max(0.0, seconds)


def server_message(body: bytes) -> str | None:
    if not body.strip():
        return None
    try:
        return ErrorBody.model_validate_json(body).error.message
    except ValidationError:
        return body[:500].decode("utf-8", "replace").strip() or None


def media_type(response: httpx.Response) -> str:
    """The response's media type, lower case, without parameters; "" when it gave none."""
    value: str = response.headers.get("content-type", "")
    return value.split(";", 1)[0].strip().lower()


def one_line(text: str, limit: int) -> str:
    shown = " ".join("".join(c if c.isprintable() else " " for c in text).split())
    return shown if len(shown) <= limit else shown[: limit - 1] + "…"


def describe_body(body: bytes) -> str:
    """What a body that is not an API answer looks like, in a few words a user recognises (a page's title)."""
    text = body.decode("utf-8", "replace")
    if not text.strip():
        return "an empty body"
    title = re.search(r"<title[^>]*>(.*?)</title>", text, re.IGNORECASE | re.DOTALL)
    if title is not None and title.group(1).strip():
        return f'an HTML page titled "{one_line(title.group(1), 120)}"'
    if re.search(r"<!doctype html|<html", text, re.IGNORECASE):
        return "an HTML page"
    try:
        return f'an error saying "{one_line(ErrorBody.model_validate_json(body).error.message, 200)}"'
    except ValidationError:
        return f'a body that begins "{one_line(text, 160)}"'
