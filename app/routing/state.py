"""What persona routing keeps for the process's life, built once by the lifespan: the policy
file's layer (read at start-up), the search cache and the policy snapshot (both dropped by
change notifications), the HTTP client for remote workspaces, and the session messages."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

import httpx

from app.config import Settings
from app.db.engine import Database
from app.kit import outbound
from app.kit.addresses import AddressRules
from app.kit.secrets import SecretBox
from app.rag.embeddings.base import QueryEmbedder
from app.routing.cache import SearchCache
from app.routing.context import Passage
from app.routing.messages import SessionMessages, session_messages
from app.routing.policy import FilePolicy
from app.routing.snapshot import Snapshots


@dataclass
class RoutingState:
    settings: Settings
    db: Database
    embedder: QueryEmbedder
    box: SecretBox
    file: FilePolicy
    # Where remote workspaces may be (checked again by `http` at every connection).
    addresses: AddressRules
    http: httpx.AsyncClient
    cache: SearchCache[list[Passage]]
    # The admins' personas and every workspace row, so that a cache hit reads no table.
    snapshots: Snapshots
    messages: SessionMessages = field(default_factory=session_messages)
    # Set while this process listens for workspace changes (tests wait on it).
    listening: asyncio.Event = field(default_factory=asyncio.Event)

    @classmethod
    def open(
        cls,
        settings: Settings,
        db: Database,
        embedder: QueryEmbedder,
        box: SecretBox,
        file: FilePolicy,
        *,
        addresses: AddressRules | None = None,
    ) -> RoutingState:
        addresses = addresses or AddressRules(allow_private=settings.remote_allow_private)
        return cls(
            settings=settings,
            db=db,
            embedder=embedder,
            box=box,
            file=file,
            addresses=addresses,
            # Remote workspaces are other servers: no redirects, no proxies from the
            # environment deciding where a bearer goes, and only the addresses allowed.
            http=outbound.client(addresses),
            cache=SearchCache(settings.cache_max_entries, settings.cache_ttl_s),
            snapshots=Snapshots(settings.cache_ttl_s),
        )

    def invalidate(self, workspace: str) -> None:
        """A workspace changed, or with an empty name the admins' policy did (the notification
        arrived): drop what the cache holds of it, and the policy snapshot."""
        self.snapshots.drop()
        if workspace:
            self.cache.invalidate(workspace)

    def forget_everything(self) -> None:
        """The notifications were (re)connected: changes may have been missed meanwhile."""
        self.snapshots.drop()
        self.cache.clear()

    async def aclose(self) -> None:
        await self.http.aclose()
