"""Prometheus metrics of this API process at `/metrics`."""

from __future__ import annotations

from litestar import Response, get

from groundwork.platform.observability.gauges import metrics_text


@get("/metrics", opt={"auth": "public"}, summary="Prometheus metrics of this API process", include_in_schema=False)
async def prometheus_metrics() -> Response[bytes]:
    body, content_type = await metrics_text()
    # Set as a header: as a media type, Litestar would append a second charset to the one it carries.
    return Response(body, headers={"Content-Type": content_type})
