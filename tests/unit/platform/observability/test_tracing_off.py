"""Without an OTLP endpoint nothing traces: no tracer, no span, no interceptor on Temporal clients."""

from __future__ import annotations

import pytest
from opentelemetry import trace

from groundwork.config import OTLP_ENDPOINT_VARIABLES
from groundwork.platform.observability import tracing


def test_without_an_endpoint_no_tracer_span_or_interceptor_exists(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in OTLP_ENDPOINT_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    assert tracing.configure_from_env("groundwork-test") is False
    assert tracing.tracer() is None
    assert tracing.temporal_interceptors() == []
    # The global provider is still OpenTelemetry's no-op one: nothing was installed.
    assert not hasattr(trace.get_tracer_provider(), "add_span_processor")


def test_an_installed_provider_gives_clients_the_tracing_interceptor() -> None:
    from opentelemetry.sdk.trace import TracerProvider
    from temporalio.contrib.opentelemetry import TracingInterceptor

    tracing.use_provider(TracerProvider())
    try:
        [interceptor] = tracing.temporal_interceptors()
        assert isinstance(interceptor, TracingInterceptor)
    finally:
        tracing.use_provider(None)
    assert tracing.temporal_interceptors() == []
