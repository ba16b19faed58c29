"""Liveness and readiness probes (public)."""

from __future__ import annotations

from fastapi import APIRouter

from app.deps import AppResources
from app.errors import Unavailable
from app.system import service as system_service
from app.system.schemas import Health, Readiness

router = APIRouter(tags=["health"])


@router.get("/healthz", response_model=Health, operation_id="getHealth")
async def healthz() -> Health:
    """The process is up."""
    return Health()


@router.get(
    "/readyz",
    response_model=Readiness,
    operation_id="getReadiness",
    responses={503: Unavailable.openapi()},
)
async def readyz(resources: AppResources) -> Readiness:
    """The database is reachable, migrated to head, its vectors match the embedding model, and
    the model is loaded."""
    readiness = await system_service.readiness(
        resources.db,
        resources.settings,
        resources.head_revision,
        model_loaded=resources.embedder.ready,
    )
    if readiness.status != "ready":
        failing = ", ".join(name for name, check in readiness.checks.items() if not check.ok)
        raise Unavailable(f"not ready: {failing}", details=readiness.model_dump()["checks"])
    return readiness
