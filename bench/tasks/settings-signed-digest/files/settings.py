"""The service's settings."""

TIMEOUT = 10
RETRIES = 3
