"""Dependency aliases, named for what they guarantee. An endpoint without an auth alias is public
by construction (tests list the public ones)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Annotated, cast

from fastapi import Depends, Request

from app.auth.principal import LOCAL_ADMIN, Principal
from app.config import Settings
from app.db.engine import ReadConnection, WriteConnection
from app.rag.embeddings.base import Embedder
from app.resources import Resources


def get_resources(request: Request) -> Resources:
    return cast(Resources, request.app.state.resources)


def get_settings_dep(request: Request) -> Settings:
    return get_resources(request).settings


def get_embedder(request: Request) -> Embedder:
    return get_resources(request).embedder


def current_principal() -> Principal:
    # Until people and sessions exist, every route acts as the local admin; the people issue
    # replaces this one function, so no route changes when real authentication arrives.
    return LOCAL_ADMIN


async def write_connection(request: Request) -> AsyncIterator[WriteConnection]:
    # One request, one transaction. scope="function" commits when the endpoint returns and
    # before the response is sent, so a failing commit becomes a 5xx instead of following a 200.
    async with get_resources(request).db.write() as conn:
        yield conn


async def read_connection(request: Request) -> AsyncIterator[ReadConnection]:
    async with get_resources(request).db.read() as conn:
        yield conn


AppResources = Annotated[Resources, Depends(get_resources)]
AppSettings = Annotated[Settings, Depends(get_settings_dep)]
WriteConn = Annotated[WriteConnection, Depends(write_connection, scope="function")]
AppEmbedder = Annotated[Embedder, Depends(get_embedder)]
CurrentPrincipal = Annotated[Principal, Depends(current_principal)]
ReadConn = Annotated[ReadConnection, Depends(read_connection, scope="function")]
