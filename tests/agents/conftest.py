"""The agents over a database of their own, served by a running Corpus (uvicorn on 127.0.0.1),
with a few documents to find. Graph tests call the entry point with a scripted model; door
tests swap the running app's models for one."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from app.access.principal import Principal
from app.agents.models import Models, NoModels
from app.agents.run import Budget, Run
from app.asking import service as asking_service
from app.asking.answering import Asking
from app.asking.schemas import AskRequest, Event
from app.config import Settings
from app.documents import service as documents_service
from app.documents.schemas import DocumentCreate
from tests import support
from tests.accounts import Account
from tests.running import Running, run_fresh_corpus

DOCUMENTS = {
    "Deploy rollback": (
        "# Rollback\n\nTo roll back a deploy, run `make rollback` from the release branch. "
        "Rollbacks take about four minutes and keep the database as it is.\n\n"
        "## Database\n\nA rollback never reverts migrations; write a new migration instead."
    ),
    "Retry policy": (
        "# Retries\n\nThe HTTP client retries transient 5xx errors three times with "
        "exponential backoff starting at 200 ms. Timeouts are not retried."
    ),
    "Caching": (
        "# Cache\n\nSearch results are cached for ten minutes in an LRU of 1000 entries; a "
        "write to a workspace invalidates its entries."
    ),
}


@dataclass
class World:
    corpus: Running
    viewer: Account
    editor: Account
    admin: Account
    documents: dict[str, str]

    @property
    def settings(self) -> Settings:
        return self.corpus.settings

    async def principal(self, account: Account) -> Principal:
        async with self.corpus.db.write() as conn:
            principal = await support.key_principal(conn, account.key)
        assert principal is not None
        return principal

    def run_for(self, principal: Principal) -> Run:
        """A run of no model, for calling the agents' tools directly."""
        return Run(
            question="",
            principal=principal,
            settings=self.settings,
            embedder=self.corpus.app.state.resources.embedder,
            models=NoModels(),
            transaction=self.corpus.db.write,
            emit=lambda _event: None,
            budget=Budget(
                deadline=time.monotonic() + 60,
                max_model_calls=10,
                max_tool_calls=10,
                max_context_chars=10_000,
            ),
            model_calls=self.corpus.app.state.resources.limits.model_calls,
        )

    def services(self, models: Models, **settings: object) -> Asking:
        """The running app's, with `models` and `settings` in place of its own."""
        asking: Asking = self.corpus.app.state.resources.asking()
        changed = self.settings.model_copy(update=settings) if settings else self.settings
        return dataclasses.replace(asking, models=models, settings=changed)


# One server and database for the package: each test makes what it changes its own.
@pytest.fixture(scope="package")
async def world(settings: Settings, server_url: str, data_dir: Path) -> AsyncIterator[World]:
    async with run_fresh_corpus(server_url, data_dir, "corpus_agents") as corpus:
        viewer = await corpus.account("viewer")
        editor = await corpus.account("editor")
        admin = await corpus.account("admin")
        world = World(corpus, viewer, editor, admin, {})
        writer = await world.principal(editor)
        resources = corpus.app.state.resources
        for title, content in DOCUMENTS.items():
            async with corpus.db.write() as conn:
                created = await documents_service.create(
                    conn,
                    writer,
                    resources.embedder,
                    corpus.settings,
                    DocumentCreate(title=title, content=content),
                )
            world.documents[title] = str(created.id)
        yield world


@pytest.fixture
def swap_models(world: World) -> Iterator[Callable[..., None]]:
    """Set the running app's models for one test: `swap_models(models)`, and settings changed
    with `swap_models(models, setting=value)`."""
    app = world.corpus.app
    original = app.state.resources

    def swap(models: Models, **settings: object) -> None:
        changed = original.settings.model_copy(update=settings)
        app.state.resources = dataclasses.replace(original, models=models, settings=changed)

    yield swap
    app.state.resources = original


async def run(
    world: World,
    services: Asking,
    principal: Principal,
    question: str,
    *,
    mode: str = "fast",
    document_ids: list[str] | None = None,
    writes: str = "off",
) -> list[Event]:
    """Every event of one run, in order."""
    request = AskRequest.model_validate(
        {"question": question, "mode": mode, "document_ids": document_ids, "writes": writes}
    )
    prepared = await asking_service.prepare(services, principal, request, in_chat=False)
    return [event async for event in asking_service.ask(services, principal, prepared, door="api")]
