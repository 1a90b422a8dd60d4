"""Keep API token secrets out of logs, whoever writes the log line (a library included)."""

from __future__ import annotations

import logging
import re

TOKEN_PREFIX = "cht_"  # every API token secret starts with it (accounts/tokens.py)
SECRET_PATTERN = re.compile(re.escape(TOKEN_PREFIX) + r"[0-9a-f]{8}_[A-Za-z0-9_\-]+")


def redact(text: str) -> str:
    """Return `text` with every token secret in it replaced."""
    return SECRET_PATTERN.sub(TOKEN_PREFIX + "[redacted]", text)


class RedactSecrets(logging.Filter):
    """A logging filter that redacts token secrets from the formatted message."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if TOKEN_PREFIX in message:
            record.msg, record.args = redact(message), ()
        return True
