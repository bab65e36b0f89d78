"""Observability: Prometheus metrics, OpenTelemetry traces and JSON logs for every Groundwork process.

A leaf package like `domain`: it imports only its libraries (prometheus-client, OpenTelemetry,
temporalio) and nothing of the project, so the API, services, activities and the worker may all use it.
"""
