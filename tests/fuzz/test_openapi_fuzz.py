"""The OpenAPI schema, fuzzed over real HTTP as each kind of caller: no request may get a 5xx,
and every response must match what the schema says of it.

schemathesis generates requests from `/openapi.json` (valid ones, and invalid ones the API must
refuse) against a `corpus serve` child process over a database of its own. The suite runs a few
cases per operation and caller; `make fuzz` runs thousands (CORPUS_FUZZ_EXAMPLES).
"""

from __future__ import annotations

import asyncio
import logging
import os
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode
from schemathesis.checks import (
    content_type_conformance,
    not_a_server_error,
    response_schema_conformance,
    status_code_conformance,
)
from schemathesis.core.failures import FailureGroup
from schemathesis.core.result import Err
from schemathesis.schemas import APIOperation
from sqlalchemy.ext.asyncio import create_async_engine

from app.access.capabilities import Role
from tests.accounts import make_account
from tests.support import (
    child_env,
    create_migrated_database,
    free_port,
    start_corpus,
    wait_until_ready,
)

logger = logging.getLogger(__name__)

# Cases per operation and caller: a handful in `make test`, thousands in all under `make fuzz`.
EXAMPLES = int(os.environ.get("CORPUS_FUZZ_EXAMPLES", "4"))
ROLES: tuple[Role, ...] = ("viewer", "editor", "admin")
CALLERS = ("anonymous", *ROLES)
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
]


@dataclass(frozen=True)
class FuzzTarget:
    url: str
    headers: dict[str, dict[str, str]]


async def _keys(database_url: str) -> dict[str, dict[str, str]]:
    engine = create_async_engine(database_url)
    headers: dict[str, dict[str, str]] = {"anonymous": {}}
    async with engine.begin() as conn:
        for role in ROLES:
            account = await make_account(conn, role)
            headers[role] = account.bearer
    await engine.dispose()
    return headers


@pytest.fixture(scope="module")
def fuzz_target(
    server_url: str, data_dir: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[FuzzTarget]:
    database_url = create_migrated_database(server_url, data_dir, "corpus_fuzz")
    headers = asyncio.run(_keys(database_url))
    port = free_port()
    log = tmp_path_factory.mktemp("fuzz") / "serve.log"
    env = child_env(
        DATABASE_URL=database_url,
        CORPUS_DATA_DIR=str(data_dir),
        EMBEDDINGS_PROVIDER="hash",
        CORPUS_LOG_LEVEL="WARNING",
    )
    process = start_corpus(["serve", "--port", str(port)], env, log)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_ready(f"{url}/readyz", process, log)
        yield FuzzTarget(url=url, headers=headers)
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.fixture(scope="module")
def fuzz_schema(fuzz_target: FuzzTarget) -> schemathesis.BaseSchema:
    return schemathesis.openapi.from_url(f"{fuzz_target.url}/openapi.json")


def _fuzz(
    operation: APIOperation[Any, Any, Any, Any],
    mode: GenerationMode,
    target: FuzzTarget,
    caller: str,
) -> int:
    """Fuzz one operation; returns how many requests were sent."""
    sent = 0

    @given(case=operation.as_strategy(generation_mode=mode))
    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        derandomize=EXAMPLES <= 10,  # the suite's short run is the same every time
        suppress_health_check=list(HealthCheck),
        database=None,
    )
    def run(case: schemathesis.Case[Any]) -> None:
        nonlocal sent
        sent += 1
        response = case.call(base_url=target.url, headers=target.headers[caller], timeout=30)
        case.validate_response(response, checks=CHECKS)

    run()
    return sent


@pytest.mark.parametrize("caller", CALLERS)
def test_no_request_gets_a_server_error_or_breaks_the_schema(
    caller: str, fuzz_schema: schemathesis.BaseSchema, fuzz_target: FuzzTarget
) -> None:
    failures: list[str] = []
    sent = operations = 0
    for result in fuzz_schema.get_all_operations():
        if isinstance(result, Err):
            failures.append(f"the schema has an operation schemathesis cannot read: {result.err()}")
            continue
        operation = result.ok()
        operations += 1
        # Valid input the API must take, and invalid input it must refuse with a 4xx.
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):
            try:
                sent += _fuzz(operation, mode, fuzz_target, caller)
            except Unsatisfiable:
                continue  # an operation without input has no invalid input to send
            except (AssertionError, FailureGroup) as exc:
                # Every operation is fuzzed and every failure reported, not just the first.
                found = exc.exceptions if isinstance(exc, FailureGroup) else (exc,)
                failures += [f"{operation.label} ({mode.value}): {failure}" for failure in found]
    logger.info("fuzzed as %s: %d requests over %d operations", caller, sent, operations)
    assert sent >= EXAMPLES, "the fuzzer sent (almost) nothing: is the schema empty?"
    assert not failures, f"{len(failures)} operations failed:\n\n" + "\n\n".join(failures)
