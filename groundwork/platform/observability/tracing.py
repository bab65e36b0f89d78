"""OpenTelemetry traces: exported over OTLP/HTTP when `OTEL_EXPORTER_OTLP_ENDPOINT` is set, else none at all.

With no endpoint, no tracer is installed: the HTTP layer creates no span and Temporal clients get no
tracing interceptor, so an untraced process pays nothing. With one, every API request opens a server
span (continuing an incoming W3C `traceparent`), and `temporalio.contrib.opentelemetry.TracingInterceptor`
on the clients and workers carries that trace into the workflows and activities it starts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from groundwork.config import otel_service_name, otlp_export_configured

if TYPE_CHECKING:  # OpenTelemetry is imported only by processes that trace
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.trace import Tracer

_tracer: Tracer | None = None


def configure_from_env(service_name: str) -> bool:
    """Install an OTLP-exporting tracer provider if an endpoint is configured; True when tracing is on.

    The standard `OTEL_*` variables (endpoint, headers, `OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`)
    configure the exporter and resource.
    """
    if _tracer is not None:
        return True
    if not otlp_export_configured():
        return False
    from opentelemetry import trace
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    resource = Resource.create({"service.name": otel_service_name() or service_name})
    provider = TracerProvider(resource=resource)
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    trace.set_tracer_provider(provider)
    use_provider(provider)
    return True


def use_provider(provider: TracerProvider | None) -> None:
    """Trace with `provider` from now on (None: stop tracing); tests pass one with an in-memory exporter."""
    global _tracer
    _tracer = provider.get_tracer("groundwork") if provider is not None else None


def tracer() -> Tracer | None:
    """The tracer of this process, or None when tracing is off."""
    return _tracer


def temporal_interceptors() -> list[Any]:
    """The interceptors a Temporal client (and the workers built on it) carries traces with."""
    if _tracer is None:
        return []
    from temporalio.contrib.opentelemetry import TracingInterceptor

    return [TracingInterceptor(_tracer)]
