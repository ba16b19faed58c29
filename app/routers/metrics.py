"""`GET /metrics`: Prometheus text, to scrapers presenting CORPUS_METRICS_TOKEN (API.md).

Not in the OpenAPI document: it is for the operator's scraper, not for the API's callers."""

from __future__ import annotations

import hmac

from fastapi import APIRouter, Request
from fastapi.responses import Response

from app.deps import AppSettings
from app.errors import NotFound, Unauthorized
from app.observe import metrics

router = APIRouter()


@router.get("/metrics", include_in_schema=False)
async def get_metrics(request: Request, settings: AppSettings) -> Response:
    """The process's metrics, in Prometheus' text format."""
    if settings.metrics_token is None:
        raise NotFound("no /metrics: CORPUS_METRICS_TOKEN is not set")
    scheme, _, presented = request.headers.get("authorization", "").partition(" ")
    wanted = settings.metrics_token.get_secret_value()
    # Compared in constant time: the token is a secret a scraper presents on every scrape.
    if scheme.lower() != "bearer" or not hmac.compare_digest(
        presented.strip().encode(), wanted.encode()
    ):
        raise Unauthorized("send the metrics token as `Authorization: Bearer <token>`")
    return Response(metrics.scrape(), media_type=metrics.CONTENT_TYPE)
